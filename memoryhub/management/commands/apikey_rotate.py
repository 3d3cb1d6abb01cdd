"""Replace a tenant's API key on purpose. The old one is revoked at once; a running server that
accepted it in the last `API_KEY_CACHE_SECONDS` (10 s) keeps accepting it until that runs out."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import services
from memoryhub.management.commands.demo_bootstrap import DEMO_KEY_NAME, DEMO_TENANT, demo_key_store
from memoryhub.models import Tenant


class Command(BaseCommand):
    help = "Revoke a tenant's active keys of one name and print a new key (shown once)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("tenant", help="Tenant name.")
        parser.add_argument("--name", help="Key name (default: the key `tenant_create` made, or the demo key "
                                           "for the demo tenant).")

    def handle(self, *args: object, **options: object) -> None:
        tenant = Tenant.objects.filter(name=options["tenant"]).first()
        if tenant is None:
            raise CommandError(f"No tenant named {options['tenant']!r}.")
        is_demo = tenant.name == DEMO_TENANT
        name = options["name"] or (DEMO_KEY_NAME if is_demo else "default")
        _, raw, revoked = services.api_key_rotate(tenant=tenant, name=name)
        if is_demo and name == DEMO_KEY_NAME:
            demo_key_store(raw)  # `make run` prints this one from now on
        self.stdout.write(f"tenant {tenant.name}: {revoked} key(s) named {name!r} revoked (running servers refuse "
                          f"them within API_KEY_CACHE_SECONDS, {settings.API_KEY_CACHE_SECONDS} s)")
        self.stdout.write(f"new API key (shown once): {raw}")
