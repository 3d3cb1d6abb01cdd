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
        if options["tenant"]:
            tenant = Tenant.objects.filter(name=options["tenant"], is_active=True).first()
            if tenant is None:
                raise CommandError(f"No active tenant {options['tenant']!r}.")
            anyio.run(serve_stdio, tenant)
            return
        # A key is checked on every call as well: revoked or narrowed later, it is refused then. A key
        # refused now is said on stderr and in every call's answer, where the MCP client shows it: a
        # server that exits at start reaches the client's user as "Connection closed" alone.
        raw = options["api_key"] or os.environ.get("MEMORYHUB_API_KEY", "")
        if not raw:
            refusal = "No API key: give --tenant NAME, --api-key or MEMORYHUB_API_KEY (a key with the 'tools' scope)."
            self.stderr.write(refusal)
            anyio.run(serve_stdio, None, None, refusal)
            return
        try:
            tenant = tenant_for_key(raw)
        except KeyRefused as exc:
            self.stderr.write(f"{exc} Serving anyway: every call is refused with this reason until the key is fixed.")
            anyio.run(serve_stdio, None, raw, str(exc))
            return
        anyio.run(serve_stdio, tenant, raw)
