"""Give a tenant another API key: a client of its own, with only the scopes it needs (a game master's
LLM a `tools` key, say). Each key is revoked, rotated and shown in the admin by itself."""

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import services
from memoryhub.exceptions import ApplicationError
from memoryhub.models import ApiKey, Tenant


class Command(BaseCommand):
    help = "Create another API key for a tenant and print it (shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tenant", help="Tenant name.")
        parser.add_argument("--name", required=True,
                            help="What the key is for (the audit names it: api-key:mh_… (NAME)).")
        parser.add_argument("--scopes", default="memory",
                            help="Comma-separated scopes: memory, editor, engine, tools (default: memory).")

    def handle(self, *args: object, **options: object) -> None:
        tenant = Tenant.objects.filter(name=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"No tenant named {options['tenant']!r}.")
        name = str(options["name"]).strip()
        longest = ApiKey._meta.get_field("name").max_length
        if not name or len(name) > longest:
            raise CommandError(f"--name must be 1 to {longest} characters.")
        scopes = [s.strip() for s in str(options["scopes"]).split(",") if s.strip()]
        try:
            key, raw = services.api_key_create(tenant=tenant, name=name, scopes=scopes)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"tenant {tenant.name}: key {key.prefix} ({key.name}), scopes {', '.join(key.scopes)}")
        self.stdout.write(f"new API key (shown once): {raw}")
