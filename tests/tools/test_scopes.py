"""A game master's `tools`-only key reads rules, lore and campaigns, not the chat memory of the tenant's
users: the memory tools need the `memory` scope too, as the REST memory endpoints do (a QA pass read a
user's whole profile with a key that GET /users/{id}/profile refused with 403)."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import Any

import anyio
import httpx2
import pytest
from django.db import connection
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from rest_framework.test import APIClient

from memoryhub.models import Tenant
from profiles.services import fact_upsert
from tests.factories import append_messages
from tests.tools.test_mcp import ROOT, http_server  # noqa: F401 (a fixture)
from tools.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)

MEMORY_TOOLS = {"memory_search", "memory_context", "profile_get"}
ARGS = {"memory_search": {"user_id": "u1", "query": "cat"}, "memory_context": {"user_id": "u1", "query": "cat"},
        "profile_get": {"user_id": "u1"}}


@pytest.fixture
def gm_key(key_for: Callable[..., tuple[str, Tenant]]) -> tuple[str, Tenant]:
    raw, tenant = key_for(scopes=("tools",))
    append_messages(tenant, "u1", "s1", ["I adopted a grey cat named Pixel last spring."])
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Dana", confidence=0.95, source="test")
    return raw, tenant


def test_rest_lists_and_calls_no_memory_tool_for_a_tools_only_key(gm_key: tuple[str, Tenant],
                                                                   key_for: Callable[..., tuple[str, Tenant]]) -> None:
    raw, _ = gm_key
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    listed = {t["name"] for t in client.get("/api/v1/tools").json()["tools"]}
    assert listed and not listed & MEMORY_TOOLS and "rules_lookup" in listed
    for name, args in ARGS.items():
        response = client.post(f"/api/v1/tools/{name}", args, format="json")
        assert response.status_code == 403, (name, response.content)
        error = response.json()["error"]
        assert error["code"] == "missing_scope" and "'memory'" in error["message"]
        assert "Pixel" not in response.content.decode() and "Dana" not in response.content.decode()
    assert not ToolCall.objects.exists()
    # A key holding both reads them.
    both, _ = key_for(scopes=("tools", "memory"))
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {both}")
    assert {t["name"] for t in client.get("/api/v1/tools").json()["tools"]} >= MEMORY_TOOLS
    assert client.post("/api/v1/tools/profile_get", ARGS["profile_get"], format="json").json()["facts"]


async def _listed_and_called(client: Client) -> tuple[set[str], dict[str, Any]]:
    listed = {t.name for t in (await client.list_tools()).tools}
    called = {}
    for name, args in ARGS.items():
        result = await client.call_tool(name, args)
        called[name] = (result.is_error, json.loads(result.content[0].text))
    return listed, called


def _check(listed: set[str], called: dict[str, Any]) -> None:
    assert listed and not listed & MEMORY_TOOLS and "lore_search" in listed
    for name, (is_error, body) in called.items():
        assert is_error and body["error"]["code"] == "missing_scope", (name, body)
        assert "Pixel" not in json.dumps(body) and "Dana" not in json.dumps(body)


def test_mcp_over_http_neither_lists_nor_calls_a_memory_tool_for_a_tools_only_key(
        gm_key: tuple[str, Tenant], http_server: str) -> None:  # noqa: F811
    raw, _ = gm_key

    async def run() -> tuple[set[str], dict[str, Any]]:
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http,
                    Client(streamable_http_client(http_server, http_client=http)) as client):
            return await _listed_and_called(client)

    _check(*anyio.run(run))
    assert not ToolCall.objects.exists()


def test_mcp_over_stdio_neither_lists_nor_calls_a_memory_tool_for_a_tools_only_key(
        gm_key: tuple[str, Tenant]) -> None:
    raw, _ = gm_key
    env = {**os.environ, "MEMORYHUB_DB_NAME": connection.settings_dict["NAME"]}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_serve", "--api-key", raw],
                                   cwd=str(ROOT), env=env)

    async def run() -> tuple[set[str], dict[str, Any]]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await _listed_and_called(client)

    _check(*anyio.run(run))
