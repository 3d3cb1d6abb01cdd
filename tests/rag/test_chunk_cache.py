"""Small namespaces' chunks in process (rag.chunk_cache): the same results as PostgreSQL's scan,
and never a chunk that was deleted, expired, erased or belongs to someone else."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from unittest import mock

import numpy as np
import pytest
from django.utils import timezone
from pgvector import Vector

from memoryhub import vector_io
from rag import chunk_cache, selectors, services
from rag import index as bm25_index
from rag.memories.services import MemoryInput, Reinforcement, memories_create, memories_reinforce
from rag.models import Chunk, Namespace, user_namespace
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
TURNS = [
    "I adopted a cat named Miso last spring.", "Miso sleeps on the piano all afternoon.",
    "My sister Lena lives in Porto and teaches maths.", "We hiked the Dolomites in July with Lena.",
    "The wifi password is on the fridge.", "I am learning to bake sourdough bread.",
    "Running plan for the marathon in October.", "My dentist appointment is on Monday.",
]
QUERIES = ["what is my cat called", "where does Lena live", "wifi password", "bread", "marathon",
           "hiking trip in summer", "piano", "dentist"]


def search(tenant, query: str, user: str = "u1", **kw) -> selectors.SearchResult:
    return selectors.chunks_search(tenant_id=tenant.pk, user_id=user, query=query, **kw)


def ranked(result: selectors.SearchResult) -> list[tuple[int, float]]:
    return [(item.chunk["id"], round(item.score, 5)) for item in result.items]


def store(tenant, user: str = "u1") -> chunk_cache.ChunkStore | None:
    return chunk_cache.cache().get((tenant.pk, user_namespace(user)))


@pytest.fixture
def fresh_cache():
    bm25_index.clear()
    yield
    bm25_index.clear()


def _seed(tenant) -> None:
    for n, turn in enumerate(TURNS):
        append_messages(tenant, "u1", f"s{n % 2}", [turn], start=START + timedelta(days=n))
    services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="# Cats\nA cat sleeps most of the afternoon.", title="Guide", tags=["pets"]))
    memories_create(tenant=tenant, user_id="u1", conf_uid="c1", items=[
        MemoryInput(text="The user's cat is called Miso", kind="user", category="FactsAboutUser", tags=["pets"]),
        MemoryInput(text="The user bakes sourdough bread", kind="user", category="Objectives")])


@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
def test_results_are_those_of_the_database_scan(tenant, settings, fresh_cache, mode) -> None:
    _seed(tenant)
    filters = [None, selectors.SearchFilters(types=("memory",)), selectors.SearchFilters(tags=("pets",)),
               selectors.SearchFilters(session_id="s1", created_after=START + timedelta(days=2)),
               selectors.SearchFilters(categories=("Objectives",), kinds=("user",))]
    asked = [(q, f) for q in QUERIES for f in filters]
    settings.CHUNK_CACHE_MB = 0
    expected = [ranked(search(tenant, q, k=5, mode=mode, filters=f)) for q, f in asked]
    assert store(tenant) is None
    settings.CHUNK_CACHE_MB = 64
    chunk_cache.clear()
    got = [ranked(search(tenant, q, k=5, mode=mode, filters=f)) for q, f in asked]
    assert store(tenant) is not None and len(store(tenant)) == len(TURNS) + 3  # and a document, two memories
    assert got == expected
    assert any(got) and any(r for (q, f), r in zip(asked, got, strict=True) if f is not None)


def test_a_deleted_chunk_leaves_the_store_before_the_next_search(tenant, fresh_cache) -> None:
    _seed(tenant)
    found = search(tenant, "wifi", mode="vector").items
    assert "The wifi password is on the fridge." in [i.chunk["text"] for i in found]
    held = store(tenant)
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(text__contains="wifi"))
    for mode in ("vector", "hybrid"):
        assert "The wifi password is on the fridge." not in [i.chunk["text"] for i in
                                                             search(tenant, "wifi password", mode=mode).items]
    assert store(tenant) is held and len(held) == len(TURNS) + 2  # caught up, not rebuilt


def test_an_expired_chunk_is_never_served_from_the_store(tenant, fresh_cache) -> None:
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=[services.ChunkDraft(
        type="memory", text="Dentist on Monday at nine", source_id="memory:1", user_id="u1",
        expires_at=timezone.now() + timedelta(minutes=5))])
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=[services.ChunkDraft(
        type="memory", text="Dentist moved to Tuesday", source_id="memory:2", user_id="u1")])
    assert len(search(tenant, "dentist", mode="vector").items) == 2
    later = timezone.now() + timedelta(minutes=10)  # past the expiry, before the beat deletes it
    with mock.patch("rag.selectors.timezone.now", return_value=later):
        for mode in ("vector", "hybrid", "bm25"):
            assert [i.chunk["text"] for i in search(tenant, "dentist", mode=mode).items] == ["Dentist moved to Tuesday"]
            assert [i.chunk["text"] for i in search(tenant, "dentist", mode=mode, filters=selectors.SearchFilters(
                types=("memory",))).items] == ["Dentist moved to Tuesday"]


def test_an_erased_user_is_never_served_from_a_stale_store(tenant, api_client_for, fresh_cache) -> None:
    client, tenant = api_client_for("tenant-erase")
    append_messages(tenant, "u1", "s1", ["My locker code is 4711"], start=START)
    assert search(tenant, "locker code", mode="vector").items
    stale = store(tenant)
    assert client.delete("/api/v1/users/u1").status_code == 200
    # Another process still holds the store built before the erasure.
    chunk_cache.cache().put((tenant.pk, user_namespace("u1")), stale)
    assert search(tenant, "locker code", mode="vector").items == []
    # The user comes back (a new namespace row) while the stale store is cached again.
    chunk_cache.cache().put((tenant.pk, user_namespace("u1")), stale)
    append_messages(tenant, "u1", "s2", ["New locker, code 1234"], start=START + timedelta(days=1))
    assert [i.chunk["text"] for i in search(tenant, "locker code", mode="vector").items] == ["New locker, code 1234"]
    assert store(tenant) is not stale


def test_tenants_and_users_get_their_own_stores(api_client_for, fresh_cache) -> None:
    _, a = api_client_for("tenant-a")
    _, b = api_client_for("tenant-b")
    append_messages(a, "u1", "s1", ["My passport number is in the blue folder"], start=START)
    append_messages(b, "u1", "s1", ["I keep my bike in the garage"], start=START)
    append_messages(a, "u2", "s1", ["The spare key is under the mat"], start=START)
    for tenant, user, text in ((a, "u1", "My passport number is in the blue folder"),
                               (b, "u1", "I keep my bike in the garage"),
                               (a, "u2", "The spare key is under the mat")):
        for query in ("passport folder", "bike garage", "spare key"):
            assert [i.chunk["text"] for i in search(tenant, query, user=user, mode="vector").items] == [text]


def test_a_reinforced_memory_is_ranked_by_its_new_importance(tenant, fresh_cache) -> None:
    [memory] = memories_create(tenant=tenant, user_id="u1", conf_uid="c1", items=[
        MemoryInput(text="The user's cat is called Miso", kind="user", importance=0.2)])
    wanted = selectors.SearchFilters(types=("memory",))
    [before] = search(tenant, "cat Miso", filters=wanted).items
    assert before.chunk["importance"] == pytest.approx(0.2)
    memories_reinforce(tenant=tenant, reinforcements=[Reinforcement(memory.pk, 0.99, 0.9)], now=timezone.now())
    [after] = search(tenant, "cat Miso", filters=wanted).items
    assert after.chunk["importance"] == pytest.approx(0.9) and after.chunk["last_seen_at"] is not None
    assert after.score > before.score
    held = store(tenant)
    assert held.row(memory.pk)["importance"] == pytest.approx(0.9)
    # Seen again within the same process's store: re-read, not rebuilt.
    memories_reinforce(tenant=tenant, reinforcements=[Reinforcement(memory.pk, 0.99, 1.0)], now=timezone.now())
    [again] = search(tenant, "cat Miso", filters=wanted).items
    assert again.chunk["importance"] == pytest.approx(1.0) and store(tenant) is held


def test_reinforcing_moves_the_namespace_memory_revision(tenant) -> None:
    [memory] = memories_create(tenant=tenant, user_id="u1", conf_uid="c1", items=[
        MemoryInput(text="The user's cat is called Miso", kind="user", importance=0.2)])
    state = Namespace.objects.get(tenant=tenant, name=user_namespace("u1"))
    memories_reinforce(tenant=tenant, reinforcements=[Reinforcement(memory.pk, 0.99, None)], now=timezone.now())
    state.refresh_from_db()
    assert state.memory_revision == 1
    assert memories_reinforce(tenant=tenant, reinforcements=[], now=timezone.now()) == 0


def test_a_namespace_past_the_exact_scan_limit_is_not_cached(tenant, monkeypatch, fresh_cache) -> None:
    monkeypatch.setattr("memoryhub.search.vectors.EXACT_SCAN_MAX_ROWS", 3)
    monkeypatch.setattr("rag.services.vectors.EXACT_SCAN_MAX_ROWS", 3)
    append_messages(tenant, "u1", "s1", TURNS[:3], start=START)
    search(tenant, "cat", mode="vector")
    assert store(tenant) is not None
    append_messages(tenant, "u1", "s1", TURNS[3:5], start=START + timedelta(days=1))
    assert [i.chunk["text"] for i in search(tenant, "Dolomites", k=1, mode="vector").items] == [TURNS[3]]
    assert store(tenant) is None


def test_the_cache_limit_evicts_the_least_recently_used_store(tenant, settings, fresh_cache) -> None:
    settings.CHUNK_CACHE_MB = 1
    chunk_cache.clear()
    for n in range(3):
        append_messages(tenant, f"u{n}", "s1", [f"Note number {n} about apples"], start=START)
        search(tenant, "apples", user=f"u{n}", include_tenant_documents=False)
    chunk_cache.cache().max_bytes = 0  # every store passes it: only the most recent is kept
    chunk_cache.cache().touch()
    assert len(chunk_cache.cache()) == 1 and store(tenant, "u2") is not None


def test_vectors_are_read_whether_or_not_pgvector_registered_its_loader(tenant) -> None:
    append_messages(tenant, "u1", "s1", TURNS[:2], start=START)
    stored = {pk: np.asarray(v, dtype=np.float32).tolist()
              for pk, v in Chunk.objects.filter(tenant=tenant).values_list("id", "embedding")}
    read = vector_io.read_vectors("SELECT id, embedding FROM rag_chunk WHERE tenant_id = %s", [tenant.pk])
    assert {pk: v.tolist() for pk, v in read} == stored
    # With pgvector's loader registered on the connection (bench/search_latency.py does), the
    # driver hands over Vector objects instead of bytes.
    for pk, vector in stored.items():
        assert vector_io._vector(Vector(vector)).tolist() == vector, pk
