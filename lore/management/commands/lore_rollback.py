"""manage.py lore_rollback WORLD DOMAIN: move `latest` back to the version it held before."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lore import services
from lore.management.commands._common import add_tenant_argument, cli_actor, tenant_named, world_named
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Roll `latest` back to the version that was live before the current one was published."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("domain", choices=["srd", "lore"])
        add_tenant_argument(parser)
        parser.add_argument("--reason", default="")

    def handle(self, *args: object, **options: object) -> None:
        world = world_named(tenant_named(str(options["tenant"])), str(options["world"]))
        try:
            change = services.lore_version_rollback(world=world, domain=str(options["domain"]), actor=cli_actor(),
                                                    reason=str(options["reason"]))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{world.slug}/{change.domain} latest: {change.from_version.version} -> "  # type: ignore[union-attr]
                          f"{change.to_version.version} (rollback, {change.took_ms:.1f} ms)")
