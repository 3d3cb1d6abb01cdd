"""The tools over MCP (the official `mcp` SDK's low-level Server): the same registry and the same
`tool_call` (so the same validation and call log) as the DRF endpoints.

Two transports: stdio, where the process serves one tenant fixed at start (`manage.py mcp_serve
--tenant NAME` or `--api-key`, checked again on every call: a key revoked or narrowed while a client
keeps the server running is refused on its next call), and streamable HTTP (`mcp_serve --transport http`), where every
request carries `Authorization: Bearer <api key>` with the `tools` scope and is answered for that
key's tenant.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from typing import Any

import mcp_types as types
from asgiref.sync import sync_to_async
from django.db import close_old_connections
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from memoryhub.auth import api_key_throttle_wait, hash_key, key_touch
from memoryhub.exceptions import ApplicationError
from memoryhub.models import ApiKey, Tenant
from tools import registry, services
from tools.models import ToolCall

SERVER_NAME = "memoryhub-tools"
# JSON-RPC's range for server-defined errors: a request refused for its API key (401, 403 or 429).
REFUSED_CODE = -32001
TenantResolver = Callable[[ServerRequestContext[Any]], Tenant]


class KeyRefused(Exception):
    def __init__(self, message: str, status: int, retry_after: int | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


def tools_key(raw_key: str) -> ApiKey:
    """An active key holding the `tools` scope, with its tenant; the same single answer as the DRF
    authentication for unknown, revoked and deactivated keys."""
    key = ApiKey.objects.select_related("tenant").filter(key_hash=hash_key(raw_key.strip())).first()
    if key is None or not key.is_active or not key.tenant.is_active:
        raise KeyRefused("Invalid API key.", 401)
    if ApiKey.Scope.TOOLS not in key.scopes:
        raise KeyRefused("This API key lacks the 'tools' scope.", 403)
    key_touch(key)
    return key


def tenant_for_key(raw_key: str) -> Tenant:
    return tools_key(raw_key).tenant


def _admitted_key(raw_key: str) -> ApiKey:
    """The key, its request counted in the key's `API_THROTTLE_RATE` budget, which its REST calls
    share: MCP over HTTP had no limit at all, so a key throttled on the API went on over MCP."""
    key = tools_key(raw_key)
    wait = api_key_throttle_wait(key.pk)
    if wait is not None:
        raise KeyRefused(f"Request was throttled. Expected available in {math.ceil(wait)} seconds.", 429,
                         retry_after=math.ceil(wait))
    return key


def _error_result(detail: dict[str, Any]) -> types.CallToolResult:
    # As the results are: a Russian or Chinese value quoted in the message stays readable, not \uXXXX.
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(detail, ensure_ascii=False))],
                                is_error=True)


def _call_sync(tenant: Tenant, name: str, arguments: dict[str, Any], transport: str,
               raw_key: str | None = None, scopes: list[str] | None = None) -> types.CallToolResult:
    """`raw_key`: the key a stdio server was started with, checked again before the call. `scopes`: the
    key's (None: a server started for a tenant, with no key)."""
    close_old_connections()  # a long-lived server thread must not keep a connection the database dropped
    if raw_key is not None:
        try:
            key = tools_key(raw_key)
            tenant, scopes = key.tenant, key.scopes
        except KeyRefused as exc:
            code = "not_authenticated" if exc.status == 401 else "missing_scope"
            return _error_result({"error": {"code": code, "message": str(exc), "field": None}})
    elif transport == ToolCall.Transport.MCP_STDIO and not Tenant.objects.filter(pk=tenant.pk, is_active=True).exists():
        # No key to check (`mcp_serve --tenant NAME`; over HTTP the middleware has just checked the key and its
        # tenant): a tenant deactivated while the client runs reads nothing more.
        return _error_result({"error": {"code": "not_authenticated", "message": "The tenant is deactivated.",
                                        "field": None}})
    try:
        result = services.tool_call(tenant=tenant, name=name, arguments=arguments, transport=transport,
                                    scopes=scopes)
    except ApplicationError as exc:
        # A refused call is a tool result with isError, which the model can read and correct.
        return _error_result({"error": {"code": exc.code, "message": exc.message, "field": exc.field}})
    return types.CallToolResult(content=[types.TextContent(type="text", text=json.dumps(result, ensure_ascii=False))],
                                structured_content=result)


def build_server(resolve_tenant: TenantResolver, transport: str, raw_key: str | None = None,
                 refusal: str = "") -> Server[Any]:
    """`refusal`: why a stdio server's key was refused at start (empty: it was not). The server runs
    anyway and answers every call with that reason, because a client whose server exits at start
    shows its user only "Connection closed"; a key fixed meanwhile (a scope added) works at once."""

    async def list_tools(ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
                         ) -> types.ListToolsResult:
        # Only those the key may call: a game master's `tools`-only key is not shown the chat memory tools.
        scopes = _request_scopes(ctx)
        if raw_key is not None:
            scopes = await sync_to_async(_key_scopes, thread_sensitive=True)(raw_key)
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description, input_schema=t.input_schema,
                       annotations=types.ToolAnnotations(read_only_hint=t.read_only, destructive_hint=False,
                                                         idempotent_hint=True, open_world_hint=False))
            for t in registry.tools_all(scopes)
        ])

    async def call_tool(ctx: ServerRequestContext[Any], params: types.CallToolRequestParams) -> types.CallToolResult:
        if refusal and not raw_key:
            return _error_result({"error": {"code": "not_authenticated", "message": refusal, "field": None}})
        tenant = resolve_tenant(ctx)
        return await sync_to_async(_call_sync, thread_sensitive=True)(tenant, params.name, params.arguments or {},
                                                                      transport, raw_key, _request_scopes(ctx))

    instructions = ("Read-only MemoryHub tools: rules and lore of a world, fact checks against them, and a user's "
                    "chat memory.")
    if refusal:
        instructions = f"{instructions} Every call fails now: {refusal}"
    return Server(SERVER_NAME, version="1", instructions=instructions, on_list_tools=list_tools,
                  on_call_tool=call_tool)


def _request_scopes(ctx: ServerRequestContext[Any]) -> list[str] | None:
    """The scopes of the key an HTTP request came with (None over stdio: its key, if any, is read
    on each call)."""
    return getattr(getattr(ctx.request, "state", None), "scopes", None)


def _key_scopes(raw_key: str) -> list[str] | None:
    """A stdio server's key's scopes; None for a refused key, whose server lists every tool and answers
    each call with the reason (`build_server`)."""
    try:
        return list(tools_key(raw_key).scopes)
    except KeyRefused:
        return None


# --- stdio ----------------------------------------------------------------------------------------
async def serve_stdio(tenant: Tenant | None, raw_key: str | None = None, refusal: str = "") -> None:
    """`raw_key`: the key the tenant came from (none for `--tenant`), checked again on every call.
    `tenant` None: the key was refused at start, for `refusal` (see `build_server`)."""
    from mcp.server.stdio import stdio_server

    server = build_server(lambda ctx: tenant, ToolCall.Transport.MCP_STDIO, raw_key, refusal)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


# --- streamable HTTP ------------------------------------------------------------------------------
class ApiKeyMiddleware:
    """Authenticates every HTTP request by its bearer key before the SDK sees it, and leaves the
    tenant in the request state for the tool handler."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode("latin-1")
        scheme, _, raw = header.partition(" ")
        try:
            if scheme.lower() != "bearer" or not raw.strip():
                raise KeyRefused("Use 'Authorization: Bearer <api key>'.", 401)
            key = await sync_to_async(_admitted_key, thread_sensitive=True)(raw)
        except KeyRefused as exc:
            # A JSON-RPC error at the HTTP status: MCP clients read the body of a refused request only in
            # this form (the official SDK's said "Server returned an error response" and nothing of why).
            # No request id: the body is not read before the key is checked.
            code = {401: "not_authenticated", 429: "throttled"}.get(exc.status, "missing_scope")
            body = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                "code": REFUSED_CODE, "message": str(exc), "data": {"code": code, "status": exc.status}}}).encode()
            headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
            if exc.status == 401:
                headers.append((b"www-authenticate", b"Bearer"))
            if exc.retry_after is not None:
                headers.append((b"retry-after", str(exc.retry_after).encode()))
            await send({"type": "http.response.start", "status": exc.status, "headers": headers})
            await send({"type": "http.response.body", "body": body})
            return
        scope.setdefault("state", {}).update(tenant=key.tenant, scopes=list(key.scopes))
        await self.app(scope, receive, send)


def _http_tenant(ctx: ServerRequestContext[Any]) -> Tenant:
    tenant = getattr(getattr(ctx.request, "state", None), "tenant", None)
    if not isinstance(tenant, Tenant):  # the middleware lets no unauthenticated request through
        raise RuntimeError("MCP HTTP request without an authenticated tenant")
    return tenant


def http_app(*, host: str = "127.0.0.1", path: str = "/mcp") -> Starlette:
    """The streamable HTTP app (`path`, default /mcp) behind API key authentication. For 127.0.0.1
    and localhost the SDK also turns on its DNS-rebinding protection (Host and Origin checks)."""
    server = build_server(_http_tenant, ToolCall.Transport.MCP_HTTP)
    app = server.streamable_http_app(streamable_http_path=path, host=host)
    app.add_middleware(ApiKeyMiddleware)
    return app
