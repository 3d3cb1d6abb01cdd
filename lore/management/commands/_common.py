"""What the lore commands share: finding the tenant, world and version named on the command line."""

from __future__ import annotations

import getpass

from django.core.management.base import CommandError, CommandParser

from lore.models import Alias, KnowledgeVersion, World
from memoryhub.models import Tenant


def add_tenant_argument(parser: CommandParser) -> None:
    parser.add_argument("--tenant", default="demo", help="Tenant name (default: demo).")


def tenant_named(name: str) -> Tenant:
    tenant = Tenant.objects.filter(name=name).first()
    if tenant is None:
        raise CommandError(f"No tenant {name!r} (create one with: manage.py tenant_create NAME).")
    return tenant


def world_named(tenant: Tenant, slug: str) -> World:
    world = World.objects.filter(tenant=tenant, slug=slug).first()
    if world is None:
        raise CommandError(f"Tenant {tenant.name!r} has no world {slug!r}.")
    return world


def version_named(world: World, domain: str, name: str) -> KnowledgeVersion:
    """A SemVer number or an alias (latest, stage)."""
    if name in Alias.Name.values:
        alias = Alias.objects.filter(world=world, domain=domain, name=name).select_related("version").first()
        if alias is None:
            raise CommandError(f"{world.slug}/{domain} has no alias {name!r}.")
        return alias.version
    version = KnowledgeVersion.objects.filter(world=world, domain=domain, version=name).first()
    if version is None:
        raise CommandError(f"{world.slug}/{domain} has no version {name!r}.")
    return version


def cli_actor() -> str:
    try:
        return f"cli:{getpass.getuser()}"
    except (KeyError, OSError):
        return "cli"
