"""Indexing and hybrid search over the real PostgreSQL + pgvector."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from memoryhub import events
from memoryhub.search import vectors
from rag import index as bm25_index
from rag import selectors, services
from rag.models import Chunk, ChunkDeletion, user_namespace
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def search(tenant, query: str, user: str = "u1", **kw) -> selectors.SearchResult:
    return selectors.chunks_search(tenant_id=tenant.pk, user_id=user, query=query, **kw)


def texts(result: selectors.SearchResult) -> list[str]:
    return [item.chunk["text"] for item in result.items]


def test_archived_turns_become_chunks_with_terms_vectors_and_sources(tenant) -> None:
    result = append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", ("assistant", "How old is Miso?")],
                             start=START)
    chunks = list(Chunk.objects.filter(tenant=tenant).order_by("id"))
    assert [c.text for c in chunks] == ["I adopted a cat named Miso.", "How old is Miso?"]
    first, second = chunks
    assert first.namespace == user_namespace("u1") and first.type == Chunk.Type.DIALOG
    assert first.source_id == f"message:{result.created[0].pk}" and first.meta["message_id"] == result.created[0].pk
    assert "miso" in first.terms and "cat" in first.terms
    assert len(first.embedding) == 384 and first.created_ts == START
    # The reply carries the turn it answers as search context, but its own words weigh more.
    assert second.meta["context_message_ids"] == [result.created[0].pk]
    assert second.terms.count("old") == 2 and second.terms.count("cat") == 1


def test_a_new_turn_is_searchable_at_once_without_rebuilding(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["We hiked the Dolomites in July."], start=START)
    assert texts(search(tenant, "Dolomites hike"))[:1] == ["We hiked the Dolomites in July."]
    cached = bm25_index.namespace_index(tenant.pk, user_namespace("u1"))
    append_messages(tenant, "u1", "s2", ["My sister Lena lives in Porto."], start=START + timedelta(days=1))
    assert bm25_index.namespace_index(tenant.pk, user_namespace("u1")) is cached  # caught up, not rebuilt
    assert texts(search(tenant, "where does Lena live", mode="bm25"))[0] == "My sister Lena lives in Porto."


def test_deleted_chunks_leave_the_cached_index(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["The wifi password is on the fridge."], start=START)
    append_messages(tenant, "u1", "s2", ["I like green tea."], start=START)
    assert "The wifi password is on the fridge." in texts(search(tenant, "wifi password", mode="bm25"))
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(text__contains="wifi"))
    assert ChunkDeletion.objects.filter(tenant=tenant).count() == 1
    index = bm25_index.namespace_index(tenant.pk, user_namespace("u1"))
    assert len(index) == 1
    assert texts(search(tenant, "wifi password", mode="bm25")) == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("what is my cat called", "I adopted a cat named Miso."),
        ("где живёт сестра", "Моя сестра Маша живёт в Казани."),
        ("喜欢喝什么茶", "我最喜欢喝乌龙茶。"),
    ],
)
def test_hybrid_finds_the_turn_in_three_languages(tenant, query: str, expected: str) -> None:
    append_messages(tenant, "u1", "s1", [
        "I adopted a cat named Miso.", ("assistant", "What a lovely name."),
        "Моя сестра Маша живёт в Казани.", ("assistant", "Казань красивый город."),
        "我最喜欢喝乌龙茶。", ("assistant", "乌龙茶很香。"),
        "Tomorrow I fly to Oslo for work.",
    ], start=START)
    result = search(tenant, query, k=3)
    assert texts(result)[0] == expected
    top = result.items[0]
    assert set(top.components) == {"bm25", "vector"} and top.ranks["bm25"] >= 1
    assert result.fusion == "weighted"  # the dialog domain's setting in config/knowledge.yaml


def test_every_result_explains_its_scores_in_each_mode(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["Paris in spring", "Berlin in winter", "Rome in summer"], start=START)
    for mode in ("bm25", "vector", "hybrid"):
        result = search(tenant, "Paris spring", mode=mode, k=2)
        assert result.items, mode
        assert result.items[0].chunk["text"] == "Paris in spring"
        assert set(result.items[0].components) <= {"bm25", "vector"} and result.items[0].ranks
    weighted = search(tenant, "Paris spring", fusion="weighted", weights={"bm25": 0.5, "vector": 0.5})
    assert weighted.fusion == "weighted" and 0 < weighted.items[0].fused <= 1.0


def test_filters_restrict_by_type_session_time_and_tags(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["Running shoes review: great grip."], start=START)
    append_messages(tenant, "u1", "s2", ["Running plan for the marathon."], start=START + timedelta(days=30))
    services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="# Running\nRunning technique: land mid-foot.", title="Guide", tags=["sport"]))
    run = lambda **f: texts(search(tenant, "running", k=10, filters=selectors.SearchFilters(**f)))  # noqa: E731
    assert run(session_id="s2") == ["Running plan for the marathon."]
    assert run(types=("document",)) == ["Guide / Running\nRunning technique: land mid-foot."]
    assert run(tags=("sport",)) == ["Guide / Running\nRunning technique: land mid-foot."]
    assert run(created_before=START + timedelta(days=1), types=("dialog",)) == ["Running shoes review: great grip."]


def test_expired_chunks_are_never_returned_and_get_cleaned(tenant) -> None:
    [chunk] = services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=[services.ChunkDraft(
        type="memory", text="Temporary note about the dentist", source_id="memory:1", user_id="u1",
        expires_at=timezone.now() - timedelta(minutes=1))])
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=[services.ChunkDraft(
        type="memory", text="Dentist appointment on Monday", source_id="memory:2", user_id="u1")])
    assert texts(search(tenant, "dentist")) == ["Dentist appointment on Monday"]
    assert services.chunks_expire() == 1
    assert not Chunk.objects.filter(pk=chunk.pk).exists()


def test_near_identical_results_are_deduplicated(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["Remember to buy oat milk", "Remember to buy oat milk!",
                                         "Remember to buy bread"], start=START)
    result = search(tenant, "buy oat milk", k=3)
    assert [t.rstrip("!") for t in texts(result)].count("Remember to buy oat milk") == 1


def test_hnsw_path_returns_k_rows_under_a_selective_filter(tenant, monkeypatch) -> None:
    other = [services.ChunkDraft(type="memory", text=f"noise {i} about gardening", source_id=f"memory:{i}")
             for i in range(400)]
    services.chunks_create(tenant=tenant, namespace="user:crowd", drafts=other)
    mine = [services.ChunkDraft(type="memory", text=f"note {i} about sailing", source_id=f"memory:m{i}",
                                user_id="u1") for i in range(12)]
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=mine)
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 0)  # force the HNSW path on a tiny namespace
    queryset = Chunk.objects.filter(tenant=tenant, namespace=user_namespace("u1"))
    rows = vectors.nearest(queryset, Chunk.objects.filter(text="noise 3 about gardening").get().embedding, 10,
                           namespace_size=10**6)
    assert len(rows) == 10
    assert all(sim <= 1.0 for _, sim in rows) and rows == sorted(rows, key=lambda r: -r[1])


def test_search_events_are_emitted(tenant) -> None:
    seen: list[tuple[str, dict]] = []

    def listener(sender, name, payload, **kw) -> None:
        seen.append((name, payload))

    events.event_emitted.connect(listener)
    try:
        append_messages(tenant, "u1", "s1", ["Kayaking on Sunday"], start=START)
        search(tenant, "kayaking", k=5)
    finally:
        events.event_emitted.disconnect(listener)
    names = [name for name, _ in seen]
    assert "RAG.QueryRequested" in names and "RAG.ResultsReady" in names
    ready = next(p for n, p in seen if n == "RAG.ResultsReady")
    assert ready["query"] == "kayaking" and ready["top_k"] == 5 and len(ready["items"]) == 1


def test_tenants_and_users_do_not_see_each_others_memories(tenant, api_client_for) -> None:
    _, other = api_client_for("tenant-other")
    append_messages(tenant, "u1", "s1", ["My PIN hint is the dog's birthday"], start=START)
    assert texts(search(other, "PIN hint dog birthday")) == []
    assert texts(search(tenant, "PIN hint dog birthday", user="u2")) == []
    assert texts(search(tenant, "PIN hint dog birthday")) == ["My PIN hint is the dog's birthday"]
