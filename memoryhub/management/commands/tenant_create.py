from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import services
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = "Create a tenant and print its first API key (shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("name")
        parser.add_argument("--scopes", default="memory",
                            help="Comma-separated scopes of its first key: memory, editor, engine, tools.")

    def handle(self, *args: object, **options: object) -> None:
        try:
            tenant, raw = services.tenant_create(
                name=str(options["name"]), scopes=[s.strip() for s in str(options["scopes"]).split(",") if s.strip()])
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"tenant {tenant.name} (id {tenant.pk})")
        self.stdout.write(f"API key (shown once): {raw}")
