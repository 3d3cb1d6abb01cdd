"""The MCP server, tested with the SDK's own client over stdio (a `manage.py mcp_serve` subprocess)
and over streamable HTTP (the app under uvicorn): list the tools, call each, refuse bad keys."""

from __future__ import annotations

import json
import os
import socket
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
import uvicorn
from asgiref.sync import SyncToAsync
from django.db import connection, connections
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from lore.campaigns.demo import demo_campaign_create
from lore.models import World
from memoryhub.auth import hash_key
from memoryhub.models import ApiKey, Tenant
from profiles.services import fact_upsert
from tests.factories import append_messages
from tests.tools.conftest import publish_small_world
from tools.mcp_server import _call_sync, http_app
from tools.models import ToolCall

pytestmark = pytest.mark.django_db(transaction=True)
ROOT = Path(__file__).resolve().parents[2]

CALLS: dict[str, dict[str, Any]] = {
    "rules_lookup": {"rule_id": "Spells/fireball"},
    "lore_search": {"query": "explosion of flame", "k": 2},
    "lore_assert": {"fact": "Fireball has a range of 60 feet."},
    "memory_search": {"user_id": "u1", "query": "cat Pixel"},
    "memory_context": {"user_id": "u1", "query": "my cat", "budget_tokens": 400},
    "profile_get": {"user_id": "u1"},
    "session_fetch": {"campaign_id": "demo_moon", "party_id": "pty_demo"},
    "episode_search": {"campaign_id": "demo_moon", "party_id": "pty_demo", "query": "the amulet at the bridge"},
    "npc_profile": {"campaign_id": "demo_moon", "party_id": "pty_demo", "npc_id": "npc_LiShen"},
    "art_suggest": {"campaign_id": "demo_moon", "npcs": ["npc_LiShen"],
                    "query": "misty bridge at night with the ronin"},
}


@pytest.fixture
def world_key(key_for: Callable[..., tuple[str, Tenant]]) -> tuple[str, Tenant]:
    raw, tenant = key_for()
    publish_small_world(tenant)
    append_messages(tenant, "u1", "s1", ["I adopted a grey cat named Pixel last spring."])
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Dana", confidence=0.95, source="test")
    demo_campaign_create(world=World.objects.get(tenant=tenant, slug="dnd5e"))
    return raw, tenant


async def exercise(client: Client) -> dict[str, Any]:
    listed = await client.list_tools()
    out: dict[str, Any] = {"tools": {t.name: t for t in listed.tools}}
    for name, args in CALLS.items():
        result = await client.call_tool(name, args)
        assert not result.is_error, (name, result.content)
        assert json.loads(result.content[0].text) == result.structured_content
        out[name] = result.structured_content
    bad = await client.call_tool("lore_search", {"query": "x", "k": 0})
    assert bad.is_error
    out["bad"] = json.loads(bad.content[0].text)
    unknown = await client.call_tool("no_such_tool", {})
    assert unknown.is_error
    return out


def check(out: dict[str, Any], tenant: Tenant, transport: str) -> None:
    assert set(out["tools"]) == set(CALLS)
    assert out["tools"]["lore_assert"].input_schema["required"] == ["fact"]
    assert out["tools"]["lore_search"].annotations.read_only_hint is True
    assert out["rules_lookup"]["rules"][0]["rule_id"] == "Spells/fireball"
    assert out["lore_search"]["items"][0]["entry_id"] == "Spells/fireball"
    assert out["lore_assert"]["verdict"] == "contradicted"
    assert "Pixel" in out["memory_search"]["items"][0]["text"]
    assert "Pixel" in out["memory_context"]["text"]
    assert out["profile_get"]["facts"][0]["value"] == "Dana"
    assert out["npc_profile"]["dynamic"]["disposition"] == {"party_id:pty_demo": 1, "hero_id:p_A": 1}
    assert "hero_id" in out["tools"]["npc_profile"].input_schema["properties"]
    # The art cards' query: in the tool's schema, as one way to ask; its cards come with their scores.
    art_schema = out["tools"]["art_suggest"].input_schema
    assert art_schema["properties"]["query"]["type"] == "string" and {"required": ["query"]} in art_schema["anyOf"]
    assert out["tools"]["art_suggest"].annotations.read_only_hint is True
    assert out["art_suggest"]["cards"][0]["score"] > 0 and "bm25" in out["art_suggest"]["cards"][0]["components"]
    assert out["bad"]["error"]["field"] == "k"
    logged = list(ToolCall.objects.filter(tenant=tenant, transport=transport).order_by("id")
                  .values_list("tool", "outcome"))
    assert logged == [*[(name, "ok") for name in CALLS], ("lore_search", "invalid")]


def test_stdio(world_key: tuple[str, Tenant]) -> None:
    raw, tenant = world_key
    env = {**os.environ, "MEMORYHUB_DB_NAME": connection.settings_dict["NAME"]}
    params = StdioServerParameters(command=sys.executable, args=["manage.py", "mcp_serve", "--api-key", raw],
                                   cwd=str(ROOT), env=env)

    async def run() -> dict[str, Any]:
        async with Client(params, read_timeout_seconds=60) as client:
            return await exercise(client)

    check(anyio.run(run), tenant, "mcp-stdio")
    # An operator deciding which keys to revoke sees one used over MCP only as in use.
    assert ApiKey.objects.get(key_hash=hash_key(raw)).last_used_at is not None


@pytest.mark.parametrize("given", ["memory-only key", "no key"])
def test_stdio_with_a_refused_key_tells_the_client_why_instead_of_closing(
        key_for: Callable[..., tuple[str, Tenant]], given: str) -> None:
    """A server that exited at start showed the client's user only "Connection closed"; the reason
    was on stderr, which clients hide."""
    raw, _ = key_for(scopes=("memory",))
    env = {k: v for k, v in os.environ.items() if k != "MEMORYHUB_API_KEY"}
    env["MEMORYHUB_DB_NAME"] = connection.settings_dict["NAME"]
    args = ["manage.py", "mcp_serve", *(["--api-key", raw] if given == "memory-only key" else [])]
    params = StdioServerParameters(command=sys.executable, args=args, cwd=str(ROOT), env=env)
    reason = "lacks the 'tools' scope" if given == "memory-only key" else "MEMORYHUB_API_KEY"

    async def run() -> tuple[str, Any, int]:
        async with Client(params, read_timeout_seconds=60) as client:
            listed = await client.list_tools()
            called = await client.call_tool("lore_search", {"query": "fireball"})
            return client.instructions or "", called, len(listed.tools)

    instructions, called, listed = anyio.run(run)
    assert reason in instructions and listed == len(CALLS)
    assert called.is_error and reason in json.loads(called.content[0].text)["error"]["message"]
    assert not ToolCall.objects.exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def http_server() -> Iterator[str]:
    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(http_app(), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started
    yield f"http://127.0.0.1:{port}/mcp"
    server.should_exit = True
    thread.join(10)
    # The tool calls ran in asgiref's one sync thread; its connection would keep the test database open.
    SyncToAsync.single_thread_executor.submit(connections.close_all).result()


def test_streamable_http(world_key: tuple[str, Tenant], http_server: str) -> None:
    raw, tenant = world_key

    async def run() -> dict[str, Any]:
        async with (httpx2.AsyncClient(headers={"Authorization": f"Bearer {raw}"}, timeout=60) as http,
                    Client(streamable_http_client(http_server, http_client=http)) as client):
            return await exercise(client)

    check(anyio.run(run), tenant, "mcp-http")
    assert ApiKey.objects.get(key_hash=hash_key(raw)).last_used_at is not None


def _status(url: str, key: str | None) -> tuple[int, dict]:
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    try:
        with urllib.request.urlopen(urllib.request.Request(url, body, headers)) as response:
            return response.status, {}
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_http_refuses_missing_bad_and_scopeless_keys(key_for: Callable[..., tuple[str, Tenant]],
                                                     http_server: str) -> None:
    memory_only, _ = key_for(scopes=("memory",))
    assert _status(http_server, None)[0] == 401
    assert _status(http_server, "mh_nope")[0] == 401
    status, body = _status(http_server, memory_only)
    assert status == 403 and "'tools'" in body["error"]["message"]
    assert body["error"]["data"] == {"code": "missing_scope", "status": 403}
    assert not ToolCall.objects.exists()


def _refusal_seen_by_the_sdk(url: str, key: str | None) -> str:
    async def run() -> str:
        headers = {"Authorization": f"Bearer {key}"} if key else {}
        try:
            async with (httpx2.AsyncClient(headers=headers, timeout=30) as http,
                        Client(streamable_http_client(url, http_client=http)) as client):
                await client.list_tools()
        except BaseException as exc:  # the SDK raises from its task group: an ExceptionGroup around MCPError
            while isinstance(exc, BaseExceptionGroup):
                exc = exc.exceptions[0]
            return str(exc)
        raise AssertionError("the key was not refused")

    return anyio.run(run)


def test_the_sdk_client_is_told_why_its_key_was_refused(key_for: Callable[..., tuple[str, Tenant]],
                                                        http_server: str) -> None:
    """A chat app wiring MemoryHub into its model's tools got "Server returned an error response"
    for a key without the tools scope, a wrong key and none: the body was no JSON-RPC error."""
    memory_only, _ = key_for(scopes=("memory",))
    assert "lacks the 'tools' scope" in _refusal_seen_by_the_sdk(http_server, memory_only)
    assert "Invalid API key" in _refusal_seen_by_the_sdk(http_server, "mh_nope")
    assert "Authorization: Bearer" in _refusal_seen_by_the_sdk(http_server, None)


def test_a_refused_call_quotes_russian_and_chinese_as_they_are(key_for: Callable[..., tuple[str, Tenant]]) -> None:
    """The error text is read by a model: escaped, 'нет-мира' came as six characters a letter."""
    _, tenant = key_for()
    for args, quoted in (({"query": "захват", "world": "нет-мира"}, "нет-мира"),
                         ({"query": "抓住", "k": "三"}, "三")):
        result = _call_sync(tenant, "lore_search", args, ToolCall.Transport.MCP_STDIO)
        assert result.is_error
        text = result.content[0].text
        assert quoted in text and "\\u" not in text, text
        assert json.loads(text)["error"]["field"] in {"world", "k"}


def test_http_counts_a_key_in_the_budget_its_api_calls_share(key_for: Callable[..., tuple[str, Tenant]],
                                                             http_server: str, settings,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """MCP over HTTP had no rate limit: a key throttled on the API went on reading over MCP."""
    from rest_framework.test import APIClient

    from memoryhub import throttling
    from memoryhub.auth import ApiKeyRateThrottle

    settings.REDIS_URL = ""  # counted in this process, which the server's thread shares
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "3/hour"})
    throttling.local_counter.clear()
    raw, _ = key_for()
    other, _ = key_for(name="tenant-b")
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert api.get("/api/v1/tools").status_code == 200
    assert [_status(http_server, raw)[0] != 429 for _ in range(2)] == [True, True]
    status, body = _status(http_server, raw)
    assert status == 429 and body["error"]["data"] == {"code": "throttled", "status": 429}
    assert "throttled" in body["error"]["message"]
    assert api.get("/api/v1/tools").status_code == 429  # one budget for both
    assert _status(http_server, other)[0] != 429  # another key's budget is its own


def test_http_throttled_answer_says_when_to_retry(key_for: Callable[..., tuple[str, Tenant]], http_server: str,
                                                  settings, monkeypatch: pytest.MonkeyPatch) -> None:
    from memoryhub import throttling
    from memoryhub.auth import ApiKeyRateThrottle

    settings.REDIS_URL = ""
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": "1/min"})
    throttling.local_counter.clear()
    raw, _ = key_for()
    _status(http_server, raw)
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}).encode()
    request = urllib.request.Request(http_server, body, {"Content-Type": "application/json",
                                                         "Accept": "application/json, text/event-stream",
                                                         "Authorization": f"Bearer {raw}"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert refused.value.code == 429 and 0 < int(refused.value.headers["Retry-After"]) <= 60
