"""manage.py lore_publish WORLD DOMAIN VERSION: move `latest` to a version that passed its smoke run."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lore import services
from lore.management.commands._common import (
    add_tenant_argument,
    cli_actor,
    tenant_named,
    version_named,
    world_named,
)
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Publish a version (SemVer or `stage`): `latest` moves to it in one transaction."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("domain", choices=["srd", "lore"])
        parser.add_argument("version", help="SemVer or the alias stage")
        add_tenant_argument(parser)
        parser.add_argument("--force", action="store_true", help="Publish despite a failed smoke run.")
        parser.add_argument("--reason", default="", help="Required with --force; kept in the changelog.")

    def handle(self, *args: object, **options: object) -> None:
        world = world_named(tenant_named(str(options["tenant"])), str(options["world"]))
        version = version_named(world, str(options["domain"]), str(options["version"]))
        try:
            change = services.lore_version_publish(version=version, actor=cli_actor(), force=bool(options["force"]),
                                                   reason=str(options["reason"]))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        before = change.from_version.version if change.from_version else "none"
        self.stdout.write(f"{world.slug}/{version.domain} latest: {before} -> {version.version} "
                          f"({change.action}, {change.took_ms:.1f} ms)")
