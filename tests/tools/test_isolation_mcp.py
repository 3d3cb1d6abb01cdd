"""MCP over stdio serves the tenant of its key for as long as the key holds: a key revoked, or its
`tools` scope taken away, while a chat client keeps the server running (for days) is refused on the
next call, as the HTTP API and MCP over HTTP refuse it."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import anyio
import pytest
from django.db import connection
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from memoryhub import services as kernel_services
from memoryhub.auth import hash_key
from memoryhub.models import ApiKey, Tenant
from tools.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]


def _serve_and_call(raw: str, between: list[Callable[[], Any]]) -> list[Any]:
    """Start `mcp_serve --api-key`, call profile_get once, then again after each of `between`."""
    env = {**os.environ, "MEMORYHUB_DB_NAME": connection.settings_dict["NAME"]}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_serve", "--api-key", raw],
                                   cwd=str(ROOT), env=env)

    async def run() -> list[Any]:
        results = []
        async with Client(params, read_timeout_seconds=60) as client:
            results.append(await client.call_tool("profile_get", {"user_id": "u1"}))
            for step in between:
                await anyio.to_thread.run_sync(step)
                results.append(await client.call_tool("profile_get", {"user_id": "u1"}))
        return results

    return anyio.run(run)


@pytest.mark.parametrize("change", ["revoke", "narrow"])
def test_a_key_revoked_or_narrowed_while_stdio_serves_is_refused(key_for: Callable[..., tuple[str, Tenant]],
                                                                  change: str) -> None:
    raw, tenant = key_for()
    key = ApiKey.objects.get(key_hash=hash_key(raw))

    def take_away() -> None:
        if change == "revoke":
            kernel_services.api_key_revoke(api_key=ApiKey.objects.get(pk=key.pk))
        else:
            ApiKey.objects.filter(pk=key.pk).update(scopes=["memory"])
        connection.close()  # this worker thread's own connection

    before, after = _serve_and_call(raw, [take_away])
    assert not before.is_error
    assert after.is_error
    error = json.loads(after.content[0].text)["error"]
    assert error["code"] == ("not_authenticated" if change == "revoke" else "missing_scope")
    assert ToolCall.objects.filter(tenant=tenant).count() == 1  # the refused call read nothing


def test_a_tenant_deactivated_while_stdio_serves_it_by_name_is_refused(key_for: Callable[..., tuple[str, Tenant]]
                                                                        ) -> None:
    """`mcp_serve --tenant NAME` (operator mode, no key) resolved the tenant once, at start."""
    from tools.mcp_server import _call_sync

    _, tenant = key_for()
    served = Tenant.objects.get(pk=tenant.pk)  # the object the server holds from its start
    assert not _call_sync(served, "profile_get", {"user_id": "u1"}, ToolCall.Transport.MCP_STDIO).is_error
    Tenant.objects.filter(pk=tenant.pk).update(is_active=False)  # as the admin's tenant page saves it
    refused = _call_sync(served, "profile_get", {"user_id": "u1"}, ToolCall.Transport.MCP_STDIO)
    assert refused.is_error and json.loads(refused.content[0].text)["error"]["code"] == "not_authenticated"
    assert ToolCall.objects.filter(tenant=tenant).count() == 1  # the refused call read and logged nothing
