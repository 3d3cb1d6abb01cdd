"""Read-path costs that must not creep back: connection reuse, queries per request."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime

import numpy as np
import pytest
from django.conf import settings
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from memoryhub import auth, embeddings, events, services
from memoryhub.models import ApiKey, Tenant
from tests.factories import append_messages


def test_database_connections_are_kept_between_requests_with_a_health_check() -> None:
    # A fresh PostgreSQL backend per request doubled a search's cost (bench/request_cost.py).
    db = settings.DATABASES["default"]
    assert db["CONN_MAX_AGE"] > 0
    assert db["CONN_HEALTH_CHECKS"] is True


# --- API key cache ------------------------------------------------------------------------------
SEARCH = {"query": "anything", "user_id": "alice"}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[float]]:
    now = [1000.0]
    monkeypatch.setattr(auth, "_clock", lambda: now[0])
    auth.key_cache.clear()
    yield now
    auth.key_cache.clear()


def test_a_known_key_costs_no_query_while_cached(client_a, clock) -> None:
    client, _ = client_a
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200
    with CaptureQueriesContext(connection) as captured:
        assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200
    assert not [q for q in captured.captured_queries if "memoryhub_apikey" in q["sql"]]


@pytest.mark.parametrize("how", ["revoke_elsewhere", "deactivate_tenant"])
def test_revocation_elsewhere_takes_effect_within_the_cache_time(client_a, clock, settings, how: str) -> None:
    settings.API_KEY_CACHE_SECONDS = 10
    client, tenant = client_a
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200
    if how == "revoke_elsewhere":  # the admin, another process: this process's cache is not told
        ApiKey.objects.filter(tenant=tenant).update(revoked_at=timezone.now())
    else:
        Tenant.objects.filter(pk=tenant.pk).update(is_active=False)
    clock[0] += 9.9
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200  # the documented bound
    clock[0] += 0.2
    response = client.post("/api/v1/search", SEARCH, format="json")
    assert response.status_code == 401 and response.json()["error"]["message"] == auth.INVALID_KEY_MESSAGE


def test_revocation_through_the_service_takes_effect_at_once_in_this_process(client_a, clock) -> None:
    client, tenant = client_a
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200
    services.api_key_revoke(api_key=ApiKey.objects.get(tenant=tenant))
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 401


def test_unknown_keys_are_not_cached(client_a, clock, django_assert_num_queries) -> None:
    client, _ = client_a
    client.credentials(HTTP_AUTHORIZATION="Bearer mh_0000_unknown")
    for _ in range(2):
        with django_assert_num_queries(1):
            assert client.post("/api/v1/search", SEARCH, format="json").status_code == 401


def test_cache_time_zero_looks_the_key_up_every_time(client_a, clock, settings, django_assert_num_queries) -> None:
    settings.API_KEY_CACHE_SECONDS = 0
    client, tenant = client_a
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 200
    ApiKey.objects.filter(tenant=tenant).update(revoked_at=timezone.now())
    assert client.post("/api/v1/search", SEARCH, format="json").status_code == 401


# --- queries per request ------------------------------------------------------------------------
START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
TURNS = ["I moved to Lisbon last spring.", "My dog is called Pixel.", "Pixel loves the beach in Cascais."]


def test_a_search_costs_two_queries(client_a, clock, django_assert_num_queries) -> None:
    """Namespace watermarks (user + tenant, one query); the namespace's chunks are cached in
    process (rag.chunk_cache), so the feedback vectors, the exact scan and the result rows cost
    none. The key is cached. The second: which of the turns found stated a fact the user has
    changed since (`with_current_values`; one indexed read, none more when none did)."""
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", TURNS, start=START)
    body = {"query": "where does Pixel like to go?", "user_id": "alice", "k": 2}
    assert client.post("/api/v1/search", body, format="json").status_code == 200  # builds the caches
    with django_assert_num_queries(2):
        response = client.post("/api/v1/search", body, format="json")
    assert response.status_code == 200 and len(response.json()["items"]) == 2


def test_without_the_chunk_cache_a_search_costs_five_queries(client_a, clock, settings,
                                                              django_assert_num_queries) -> None:
    """Watermarks, the feedback hits' vectors, the vector scan (one statement, no transaction),
    the rows of the results, the facts the turns found stated."""
    settings.CHUNK_CACHE_MB = 0
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", TURNS, start=START)
    body = {"query": "where does Pixel like to go?", "user_id": "alice", "k": 2}
    assert client.post("/api/v1/search", body, format="json").status_code == 200  # builds the BM25 index
    with django_assert_num_queries(5):
        response = client.post("/api/v1/search", body, format="json")
    assert response.status_code == 200 and len(response.json()["items"]) == 2


# --- query embeddings ---------------------------------------------------------------------------
def test_a_query_is_embedded_once_per_embedder_and_the_shared_vector_is_read_only(monkeypatch) -> None:
    embeddings.reset_providers()
    embedder = embeddings.get_embedder()
    calls: list[str] = []
    original = embedder.embed_one
    monkeypatch.setattr(embedder, "embed_one", lambda text: calls.append(text) or original(text))
    first = embeddings.embed_query("where does Pixel like to go?", tenant_id=1)
    again = embeddings.embed_query("where does Pixel like to go?", tenant_id=1)
    assert calls == ["where does Pixel like to go?"] and again is first
    assert not first.flags.writeable
    np.testing.assert_allclose(first, original("where does Pixel like to go?"))
    embeddings.reset_providers()  # another embedder (settings changed): its own vectors
    assert embeddings.embed_query("where does Pixel like to go?", tenant_id=1) is not first


# --- events -------------------------------------------------------------------------------------
def test_events_are_not_published_while_nobody_subscribes(monkeypatch, settings) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    now = [500.0]
    monkeypatch.setattr(events, "_clock", lambda: now[0])
    monkeypatch.setattr(events, "_idle_until", 0.0)
    subscribers = [0]
    published: list[str] = []

    def run(operation):  # stands in for Redis: PUBLISH answers the number of subscribers
        published.append("x")
        return subscribers[0]

    monkeypatch.setattr(events.redis_client, "run", run)
    events.emit("RAG.QueryRequested", {"query": "q"})
    events.emit("RAG.QueryRequested", {"query": "q"})
    assert len(published) == 1  # nobody listened: the second one was not sent
    subscribers[0] = 1
    now[0] += events.IDLE_RECHECK_SECONDS
    events.emit("RAG.QueryRequested", {"query": "q"})
    events.emit("RAG.QueryRequested", {"query": "q"})
    assert len(published) == 3  # checked again after the interval; a subscriber now gets every event


def test_in_process_receivers_get_events_without_redis(settings) -> None:
    settings.REDIS_URL = ""
    got: list[str] = []

    def listener(sender, name, payload, **kwargs) -> None:
        got.append(name)

    events.event_emitted.connect(listener)
    try:
        events.emit("RAG.ResultsReady", {"items": []})
    finally:
        events.event_emitted.disconnect(listener)
    assert got == ["RAG.ResultsReady"]


@pytest.mark.django_db
def test_chunk_vectors_are_stored_inline() -> None:
    # Out of line (pgvector's EXTERNAL default), each distance of an exact scan read the TOAST table.
    with connection.cursor() as cursor:
        cursor.execute("SELECT attstorage FROM pg_attribute WHERE attrelid = 'rag_chunk'::regclass "
                       "AND attname = 'embedding'")
        assert cursor.fetchone() == ("m",)


# --- search output ------------------------------------------------------------------------------
@pytest.mark.django_db
def test_search_output_is_what_the_documented_serializer_gives(tenant) -> None:
    from rag.api import SearchApi
    from rag.memories.services import MemoryInput, memories_create
    from rag.output import search_response
    from rag.selectors import chunks_search

    append_messages(tenant, "alice", "s1", TURNS, start=START)
    memories_create(tenant=tenant, user_id="alice", conf_uid="neiri", items=[MemoryInput(
        text="Pixel likes to go to the park", kind="user", category="FactsAboutUser", emotion="joy")])
    result = chunks_search(tenant_id=tenant.pk, user_id="alice", query="where does Pixel like to go?", k=3)
    assert len(result.items) == 3 and {i.chunk["type"] for i in result.items} == {"dialog", "memory"}
    result.items[0].chunk.update(speaker=None, meta={"message_id": 7, "nested": {"a": [1, None]}, "n": None})
    result.items[1].chunk.update(tags=["x", "y"])
    result.items[1].changed_since = {"key": "location", "now": "Seattle", "said_at": START}
    result.items[2].corrects = result.items[1].chunk["id"]
    query = "where does Pixel like to go?"
    body = {"query": query, "mode": result.mode, "fusion": result.fusion, "took_ms": result.took_ms,
            "timings_ms": result.timings_ms, "candidates": result.candidates, "llm_steps": result.llm_steps,
            "skipped_steps": [{"step": "rerank", "reason": "llm_off"}], "items": result.items}
    expected = json.loads(json.dumps(SearchApi.OutputSerializer(body).data))
    built = search_response(query, result, body["skipped_steps"])
    assert json.loads(json.dumps(built)) == expected
    assert built == SearchApi.OutputSerializer(body).data
    memories = {item["type"]: item["memory"] for item in built["items"]}
    assert memories["dialog"] is None
    assert memories["memory"]["category"] == "FactsAboutUser" and memories["memory"]["emotion"] == "joy"
    assert memories["memory"]["conf_uid"] == "neiri" and len(memories["memory"]["id"]) == 36


def test_a_context_costs_six_queries(client_a, clock, django_assert_num_queries) -> None:
    """Profile facts, inner circle, the session's recent turns (one join), the search's one, the
    typed-memories block's own search of memory chunks (one: its watermarks), and people search,
    which stops after counting when the user has nobody (the LLM is off here)."""
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", TURNS, start=START)
    body = {"query": "where does Pixel like to go?", "user_id": "alice", "session_id": "s1", "k": 5}
    assert client.post("/api/v1/context", body, format="json").status_code == 200  # builds the BM25 index
    with django_assert_num_queries(6):
        response = client.post("/api/v1/context", body, format="json")
    assert response.status_code == 200
    blocks = {b["name"]: b for b in response.json()["blocks"]}
    assert len(blocks["recent_turns"]["items"]) == 3
