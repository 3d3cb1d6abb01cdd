"""Indexing and hybrid search over the real PostgreSQL + pgvector."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import numpy as np
import pytest
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub import events
from memoryhub.search import vectors
from rag import index as bm25_index
from rag import selectors, services
from rag.models import Chunk, ChunkDeletion, Namespace, user_namespace
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
    # "soft" (English word vectors) where a query word has a vector: not for the Russian and Chinese ones,
    # which the multilingual reranker re-scores instead ("semantic").
    assert {"bm25", "vector"} <= set(top.components) <= {"bm25", "vector", "soft", "semantic"}
    assert top.ranks["bm25"] >= 1
    assert ("soft" in top.components) == query.startswith("what") != ("semantic" in top.components)
    assert result.fusion == "weighted"  # the dialog domain's setting in config/knowledge.yaml


def test_every_result_explains_its_scores_in_each_mode(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["Paris in spring", "Berlin in winter", "Rome in summer"], start=START)
    for mode in ("bm25", "vector", "hybrid"):
        result = search(tenant, "Paris spring", mode=mode, k=2)
        assert result.items, mode
        assert result.items[0].chunk["text"] == "Paris in spring"
        assert set(result.items[0].components) <= {"bm25", "vector", "soft"} and result.items[0].ranks
    weighted = search(tenant, "Paris spring", fusion="weighted", weights={"bm25": 0.5, "vector": 0.5})
    # Fused scores over the top one, plus the soft match's share (its weight in config/knowledge.yaml).
    assert weighted.fusion == "weighted" and 0 < weighted.items[0].fused <= 1.0 + 0.2


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
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 0)  # every namespace counts as large
    other = [services.ChunkDraft(type="memory", text=f"noise {i} about gardening", source_id=f"memory:{i}")
             for i in range(400)]
    services.chunks_create(tenant=tenant, namespace="user:crowd", drafts=other)
    mine = [services.ChunkDraft(type="memory", text=f"note {i} about sailing", source_id=f"memory:m{i}",
                                user_id="u1") for i in range(12)]
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=mine)
    queryset = Chunk.objects.filter(tenant=tenant, namespace=user_namespace("u1"))
    rows = vectors.nearest(queryset, Chunk.objects.filter(text="noise 3 about gardening").get().embedding, 10,
                           namespace_size=10**6, hnsw_filter=Q(in_hnsw=True), hnsw_halfvec=True)
    assert len(rows) == 10
    assert all(sim <= 1.0 for _, sim in rows) and rows == sorted(rows, key=lambda r: -r[1])


def test_the_approximate_query_uses_the_partial_hnsw_index(tenant) -> None:
    services.chunks_create(tenant=tenant, namespace="user:big", drafts=[
        services.ChunkDraft(type="memory", text=f"note {i}", source_id=f"memory:{i}") for i in range(50)])
    Chunk.objects.filter(tenant=tenant).update(in_hnsw=True)
    vector = np.asarray(Chunk.objects.filter(tenant=tenant).first().embedding, dtype=np.float32)
    ordered = Chunk.objects.filter(tenant=tenant, namespace="user:big", in_hnsw=True).annotate(
        d=vectors.cosine_distance("embedding", vector, halfvec=True)).order_by("d")[:10]
    with transaction.atomic(), connection.cursor() as cursor:
        # Too few rows for the planner to want it; make sorting dear to see that it *can* use it.
        cursor.execute("SET LOCAL enable_sort = off")
        plan = ordered.explain()
    assert "chunk_embedding_hnsw" in plan


def test_a_namespace_enters_the_hnsw_index_whole_when_it_outgrows_an_exact_scan(tenant, monkeypatch) -> None:
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 5)

    def write(namespace: str, n: int, start: int) -> None:
        services.chunks_create(tenant=tenant, namespace=namespace, drafts=[
            services.ChunkDraft(type="memory", text=f"sailing note {i}", source_id=f"memory:{i}")
            for i in range(start, start + n)])

    def flags(namespace: str) -> list[bool]:
        return list(Chunk.objects.filter(tenant=tenant, namespace=namespace).order_by("id")
                    .values_list("in_hnsw", flat=True))

    write("user:a", 3, 0)
    assert flags("user:a") == [False] * 3  # small: scanned exactly, no HNSW insert paid
    write("user:a", 3, 3)
    assert flags("user:a") == [True] * 6  # crossed the limit: the earlier chunks moved in too
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(source_id__in=["memory:0", "memory:1"]))
    write("user:a", 1, 6)
    assert flags("user:a") == [True] * 5  # stays in once promoted
    write("user:b", 2, 0)
    assert flags("user:b") == [False] * 2  # other namespaces are unaffected


def test_the_namespace_row_tracks_count_and_last_ids_of_chunks_and_deletions(tenant) -> None:
    first = services.chunks_create(tenant=tenant, namespace="user:a", drafts=[
        services.ChunkDraft(type="memory", text=f"note {i}", source_id=f"memory:{i}") for i in range(4)])
    services.chunks_create(tenant=tenant, namespace="user:b", drafts=[
        services.ChunkDraft(type="memory", text="other", source_id="memory:b")])
    state = Namespace.objects.get(tenant=tenant, name="user:a")
    assert (state.chunk_count, state.last_chunk_id, state.last_deletion_id) == (4, first[-1].pk, 0)
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk__in=[first[0].pk, first[2].pk]))
    state.refresh_from_db()
    last_logged = ChunkDeletion.objects.filter(namespace="user:a").latest("id").pk
    assert (state.chunk_count, state.last_deletion_id) == (2, last_logged)
    # Deleting what is already gone changes nothing.
    assert services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk=first[0].pk)) == 0
    assert Namespace.objects.get(tenant=tenant, name="user:b").chunk_count == 1


def test_catch_up_reads_only_between_the_watermarks(tenant, django_assert_max_num_queries) -> None:
    append_messages(tenant, "u1", "s1", ["We hiked the Dolomites in July."], start=START)
    search(tenant, "Dolomites")
    with django_assert_max_num_queries(1):  # nothing changed: the namespace row alone
        bm25_index.namespace_index(tenant.pk, user_namespace("u1"))


def test_erasing_a_user_removes_chunks_documents_and_namespace_and_the_cache_follows(tenant, api_client_for) -> None:
    client, tenant = api_client_for("tenant-erase")
    append_messages(tenant, "u1", "s1", ["My locker code is 4711"], start=START)
    append_messages(tenant, "u2", "s1", ["My locker is on the left"], start=START)
    services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="Locker rules for u1.", title="Lockers"))
    assert texts(search(tenant, "locker code", include_tenant_documents=False))  # caches the index
    key = (tenant.pk, user_namespace("u1"))
    stale = bm25_index.cache().get(key)
    response = client.delete("/api/v1/users/u1")
    assert response.status_code == 200, response.content
    assert response.json()["deleted"]["chunk_deletions"] == 0 and response.json()["deleted"]["namespaces"] == 1
    assert not Chunk.objects.filter(tenant=tenant, user_id="u1").exists()
    assert not Namespace.objects.filter(tenant=tenant, name=user_namespace("u1")).exists()
    assert not ChunkDeletion.objects.filter(tenant=tenant, namespace=user_namespace("u1")).exists()
    # Another process still holds the index built before the erasure: it must rebuild.
    bm25_index.cache().put(key, stale)
    assert len(bm25_index.namespace_index(tenant.pk, user_namespace("u1"))) == 0  # rebuilt, not stale
    assert texts(search(tenant, "locker code")) == []
    assert texts(search(tenant, "locker", user="u2")) == ["My locker is on the left"]
    # The user comes back while that stale index is cached again: the new namespace row tells it
    # to rebuild, so the erased turn never reappears.
    bm25_index.cache().put(key, stale)
    append_messages(tenant, "u1", "s2", ["New locker, code 1234"], start=START + timedelta(days=1))
    state = Namespace.objects.get(tenant=tenant, name=user_namespace("u1"))
    assert state.chunk_count == 1
    assert texts(search(tenant, "locker code", include_tenant_documents=False)) == ["New locker, code 1234"]


def test_vector_search_spans_a_large_namespace_and_a_small_one(tenant, monkeypatch) -> None:
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 20)
    services.chunks_create(tenant=tenant, namespace=user_namespace("u1"), drafts=[
        services.ChunkDraft(type="memory", text=f"diary entry {i} about the garden", source_id=f"memory:{i}",
                            user_id="u1") for i in range(150)])
    services.document_ingest(tenant=tenant, user_id=None, document=services.DocumentInput(
        text="Garden entry rules: the community garden opens at dawn.", title="Garden rules"))
    assert set(Chunk.objects.filter(tenant=tenant).values_list("namespace", "in_hnsw").distinct()) == {
        (user_namespace("u1"), True), ("tenant", False)}
    # More chunks than the search's candidate list: the HNSW search of the large namespace alone
    # could fill it, so the tenant document must come from the exact scan of the small one.
    found = texts(search(tenant, "garden entry rules dawn", mode="vector", k=10))
    assert len(found) == 10 and "the community garden opens at dawn" in found[0]


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


def test_namespaces_recount_rebuilds_the_rows_of_bulk_loaded_chunks(tenant, monkeypatch) -> None:
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 3)
    made = services.chunks_create(tenant=tenant, namespace="user:a", drafts=[
        services.ChunkDraft(type="memory", text=f"note {i}", source_id=f"memory:{i}") for i in range(3)])
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk=made[0].pk))
    # A bulk load that bypasses chunks_create: rows copied, bookkeeping left behind.
    copies = [Chunk(tenant=tenant, namespace="user:a", type="memory", source_id=f"copy:{i}", text=c.text,
                    tokens=c.tokens, terms=c.terms, embedding=c.embedding) for i, c in enumerate(made * 2)]
    Chunk.objects.bulk_create(copies)
    Namespace.objects.filter(tenant=tenant).delete()
    assert services.namespaces_recount(tenant=tenant) == 1
    state = Namespace.objects.get(tenant=tenant, name="user:a")
    assert state.chunk_count == 8 and state.in_hnsw
    assert state.last_chunk_id == copies[-1].pk
    assert state.last_deletion_id == ChunkDeletion.objects.get(tenant=tenant).pk
    assert set(Chunk.objects.filter(tenant=tenant).values_list("in_hnsw", flat=True)) == {True}


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("What movie did I watch on 1 May 2022?", "Watched the whole trilogy last night, wow."),
        ("Какой фильм я смотрел 1 мая 2022?", "Watched the whole trilogy last night, wow."),
        ("2022年5月1日我看了什么电影？", "Watched the whole trilogy last night, wow."),
        ("When did I go to the film festival?", "The film festival was two weeks ago, such fun."),
    ],
)
def test_dates_the_query_names_find_turns_said_or_dated_then(tenant, query: str, expected: str) -> None:
    # Three sessions on different days, each mentioning films: the words alone do not decide.
    append_messages(tenant, "u1", "s1", ["I love a good film, any film really.", "Films, films, films."],
                    start=datetime(2022, 3, 10, 9, tzinfo=UTC))
    append_messages(tenant, "u1", "s2", ["Watched the whole trilogy last night, wow.", "Great film weekend."],
                    start=datetime(2022, 5, 2, 9, tzinfo=UTC))
    append_messages(tenant, "u1", "s3", ["The film festival was two weeks ago, such fun.",
                                         "Another film festival is a film marathon, they say."],
                    start=datetime(2022, 8, 20, 9, tzinfo=UTC))
    assert texts(search(tenant, query, k=3, mode="bm25"))[0] == expected


def test_a_question_asking_for_a_category_finds_turns_naming_its_members(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["Last summer we finally saw Paris and Berlin.", "I baked bread all morning.",
                                         "My sister called about the wedding."], start=START)
    # No word in common: only the category terms (memoryhub/lexicon.py) connect them.
    assert texts(search(tenant, "Which cities has he visited?", k=3, mode="bm25")) == [
        "Last summer we finally saw Paris and Berlin."]
    # A category named in the singular is a place, not a list: the words decide alone.
    assert texts(search(tenant, "Which city has he visited?", k=3, mode="bm25")) == []
    stored = Chunk.objects.get(tenant=tenant, text__startswith="Last summer")
    assert "^city.1" in stored.terms


@pytest.mark.parametrize("exact_limit", [0, 50])
def test_a_vector_search_returns_k_whenever_k_exist_next_to_a_large_repetitive_document(
        tenant, monkeypatch, exact_limit: int) -> None:
    # The reported case: a tenant document of thousands of near-identical sections, then a vector
    # search for a word the user's turns hold. Every namespace large (0), or only the document (50).
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", exact_limit)
    # The count is the point; which three come first is the graph walk's recall. A test run never vacuums, so
    # the HNSW index holds the rows of every test rolled back before this one, and at the default ef_search (200)
    # a full run once missed a Seattle turn for a section. A wider walk keeps the path and the assertion firm.
    monkeypatch.setattr(vectors, "HNSW_EF_SEARCH", 1000)
    services.chunks_create(tenant=tenant, namespace="tenant", drafts=[
        services.ChunkDraft(type="document", text=f"Section {i}. The policy applies as stated above.",
                            source_id=f"document:1:{i}") for i in range(400)])
    Chunk.objects.filter(tenant=tenant, namespace="tenant").update(in_hnsw=True)
    append_messages(tenant, "u1", "s1", ["I moved to Seattle last week.", "Seattle rain is no joke.",
                                         "My sister visits Seattle in May."], start=START)
    for k in (3, 10):
        result = search(tenant, "Seattle", k=k, mode="vector")
        assert len(result.items) == k
        assert set(texts(result)[:3]) == {"I moved to Seattle last week.", "Seattle rain is no joke.",
                                          "My sister visits Seattle in May."}


@pytest.mark.parametrize(("query", "answer", "chatter"), [
    ("What should I cook for dinner tonight?", "I love cooking pasta with lots of garlic.",
     ["The meeting ran long again.", "My train was late this morning.", "Work is busy this week.",
      "The weather turned cold.", "I finished the quarterly report.", "Talked to the landlord about the heating."]),
    ("Что мне приготовить на ужин сегодня?", "Обожаю готовить пасту с чесноком.",
     ["Совещание опять затянулось.", "Поезд утром опоздал.", "На работе завал на этой неделе.",
      "Резко похолодало.", "Доделала квартальный отчёт.", "Говорила с хозяином квартиры про отопление."]),
    ("今晚做什么菜好？", "我最喜欢做菜，尤其是蒜香意面。",
     ["会议又开晚了。", "早上火车晚点了。", "这周工作很忙。", "天气突然变冷了。", "季度报告写完了。",
      "跟房东说了暖气的事。"]),
])
def test_today_in_a_question_asks_for_today_not_for_the_whole_week_and_month(
        tenant, monkeypatch, query: str, answer: str, chatter: list[str]) -> None:
    """"…tonight?" put every turn said this week and month above the one about cooking: the day's
    date terms widened to its week, month and year, which the user's recent chatter all carries.
    A date at or after today asks for itself (and for turns that mention it), not for its month."""
    now = datetime(2026, 3, 12, 19, 0, tzinfo=UTC)  # a Thursday: Tuesday is the same week and month
    monkeypatch.setattr(selectors, "timezone", SimpleNamespace(now=lambda: now))
    append_messages(tenant, "u1", "s-old", [answer], start=now - timedelta(days=75))
    append_messages(tenant, "u1", "s-new", chatter, start=now - timedelta(days=2))
    assert texts(search(tenant, query, k=3))[0] == answer


@pytest.mark.parametrize(
    ("said", "right", "wrong", "query"),
    [
        # "Half a year ago" is six months back, not the "a year ago" inside it.
        (datetime(2023, 5, 10, 9, tzinfo=UTC), "Half a year ago we saw a concert in the park.",
         "A year ago we saw a concert in the park.", "Which concert did we see in November 2022?"),
        # "Неделю назад": the count left unsaid is one.
        (datetime(2022, 5, 16, 9, tzinfo=UTC), "Неделю назад мы ездили на концерт в Казань.",
         "Мы ездили на концерт в Казань.", "На какой концерт мы ездили 10 мая 2022?"),
        # "去年夏天" is last year's summer, not the whole of last year.
        (datetime(2023, 3, 10, 9, tzinfo=UTC), "去年夏天我们去海边听了音乐会。",
         "去年我们去海边听了音乐会。", "2022年7月我们去哪儿听了音乐会？"),
    ],
)
def test_a_relative_date_in_a_turn_names_the_days_it_means(tenant, said, right: str, wrong: str, query: str) -> None:
    # Same words but the date: the wrong turn is the shorter, said last, and wins unless the dates decide.
    append_messages(tenant, "u1", "s1", [right, wrong], start=said)
    assert texts(search(tenant, query, k=2, mode="bm25"))[0] == right


@pytest.mark.parametrize(("query", "answer", "other"), [
    ("what did I do with the kids last fall?", "We picked apples at the orchard with the kids.",
     "We went to the aquarium with the kids."),
    ("что мы делали с детьми прошлой осенью?", "Мы собирали яблоки в саду с детьми.", "Мы ходили в аквариум с детьми."),
])
def test_last_fall_asked_in_december_is_the_fall_just_over(tenant, monkeypatch, query: str, answer: str,
                                                           other: str) -> None:
    """QA: asked on 3 December, "last fall" meant the autumn a year before, and that year's turn came first."""
    now = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)
    monkeypatch.setattr(selectors, "timezone", SimpleNamespace(now=lambda: now))
    append_messages(tenant, "u1", "s-2025", [other], start=datetime(2025, 10, 10, 10, tzinfo=UTC))
    append_messages(tenant, "u1", "s-2026", [answer], start=datetime(2026, 10, 10, 10, tzinfo=UTC))
    assert texts(search(tenant, query, k=2, mode="bm25"))[0] == answer


def test_a_typed_memory_restating_a_turn_word_for_word_is_a_duplicate_of_it(tenant) -> None:
    """QA: "Radiohead ramen" returned each fact as the turn and again as the memory consolidated from it
    ("User: I really love ramen."): the speaker's label kept them apart for the near-duplicate check."""
    from rag.memories.services import MemoryInput, memories_create

    append_messages(tenant, "alex", "s1", ["I really love ramen.", "My favourite band is Radiohead."])
    memories_create(tenant=tenant, user_id="alex", conf_uid="neiri", items=[
        MemoryInput(text="User: I really love ramen.", kind="user"),
        MemoryInput(text="User: My favourite band is Radiohead.", kind="user"),
        MemoryInput(text="Alex loves ramen more than any other food.", kind="user")])
    texts = [i.chunk["text"] for i in search(tenant, "Radiohead ramen", user="alex", k=10).items]
    assert sum(t.endswith("I really love ramen.") for t in texts) == 1, texts
    assert sum(t.endswith("My favourite band is Radiohead.") for t in texts) == 1, texts
    assert "Alex loves ramen more than any other food." in texts
