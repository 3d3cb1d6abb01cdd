"""`manage.py mcp_serve`: the read-only tools as an MCP server, over stdio (default) or streamable HTTP."""

from __future__ import annotations

import os
from typing import Any

import anyio
from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub.models import Tenant
from tools.mcp_server import KeyRefused, http_app, serve_stdio, tenant_for_key


class Command(BaseCommand):
    help = ("Serve the read-only tools over MCP. stdio: one tenant, by --tenant NAME or an API key with the "
            "'tools' scope (--api-key or MEMORYHUB_API_KEY). http: streamable HTTP at http://HOST:PORT/mcp, "
            "each request authenticated by its bearer key.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--transport", choices=["stdio", "http"], default="stdio")
        parser.add_argument("--tenant", help="stdio: serve this tenant (an operator on the host).")
        parser.add_argument("--api-key", help="stdio: serve the tenant of this key (default MEMORYHUB_API_KEY).")
        parser.add_argument("--host", default="127.0.0.1")
        parser.add_argument("--port", type=int, default=8790)

    def handle(self, *args: Any, **options: Any) -> None:
        if options["transport"] == "http":
            import uvicorn

            uvicorn.run(http_app(host=options["host"]), host=options["host"], port=options["port"],
                        log_level="warning")
            return
        tenant = self._stdio_tenant(options)
        # A key is checked on every call as well: revoked or narrowed later, it is refused then.
        raw = None if options["tenant"] else (options["api_key"] or os.environ.get("MEMORYHUB_API_KEY", ""))
        anyio.run(serve_stdio, tenant, raw)

    def _stdio_tenant(self, options: dict[str, Any]) -> Tenant:
        if options["tenant"]:
            tenant = Tenant.objects.filter(name=options["tenant"], is_active=True).first()
            if tenant is None:
                raise CommandError(f"No active tenant {options['tenant']!r}.")
            return tenant
        raw = options["api_key"] or os.environ.get("MEMORYHUB_API_KEY", "")
        if not raw:
            raise CommandError("Give --tenant NAME, --api-key or MEMORYHUB_API_KEY.")
        try:
            return tenant_for_key(raw)
        except KeyRefused as exc:
            raise CommandError(str(exc)) from exc
