"""Hybrid retrieval over chunks: BM25 + pgvector, fused, boosted, de-duplicated, explained."""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from functools import lru_cache
from typing import Any, Literal

import numpy as np
from django.db import connection
from django.db.models import Q, QuerySet
from django.utils import timezone

from memoryhub import events, metrics, timeexpr, verbforms, wordvectors
from memoryhub.embeddings import (
    embed_query,
    embed_query_if_available,
    english_rerank_query_vector,
    get_embedder,
    rerank_query_vector,
)
from memoryhub.models import Message
from memoryhub.search import vectors
from memoryhub.search.bm25 import SegmentedBM25Index
from memoryhub.search.bm25 import idf as bm25_idf
from memoryhub.search.config import RetrievalConfig, retrieval_config
from memoryhub.search.fusion import FusedScore, fuse, ranked
from memoryhub.selectors import previous_conversation_day
from memoryhub.text import HAN_CHAR, analyze, pronoun_terms, term, words
from people.selectors import relation_name_terms
from profiles.selectors import corrections_of, own_name_terms
from rag import chunk_cache, llm_steps
from rag import index as bm25_index
from rag import query as query_terms
from rag.filler import is_filler
from rag.memories.ranking import memory_boosts
from rag.memories.selectors import memory_subject_terms
from rag.models import TENANT_NAMESPACE, Chunk, user_namespace

logger = logging.getLogger(__name__)

Mode = Literal["hybrid", "bm25", "vector"]

# A name the query brought through the people graph ("my sister" → Emma) weighs as a word the query says.
RELATION_NAME_WEIGHT = 1.0

ITEM_FIELDS = (
    "id", "namespace", "type", "kind", "source_id", "session_id", "role", "speaker", "text", "tokens",
    "importance", "tags", "meta", "created_ts", "expires_at",
    # typed memories (rag.memories)
    "memory_uid", "category", "conf_uid", "history_uid", "emotion", "context_window", "last_seen_at",
)


@dataclass(frozen=True)
class SearchFilters:
    types: tuple[str, ...] = ()
    kinds: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()  # any of them
    session_id: str | None = None
    created_after: datetime | None = None
    created_before: datetime | None = None
    # Typed memories: category, emotion, character (conf_uid), history.
    categories: tuple[str, ...] = ()
    emotions: tuple[str, ...] = ()
    conf_uids: tuple[str, ...] = ()
    history_uids: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.types or self.kinds or self.tags or self.session_id or self.created_after
                    or self.created_before or self.categories or self.emotions or self.conf_uids
                    or self.history_uids)

    def memories_only(self) -> bool:
        """Only typed memories can match: only they have a kind, category, emotion, character or history."""
        return self.types == ("memory",) or bool(self.kinds or self.categories or self.emotions or self.conf_uids
                                                  or self.history_uids)

    def q(self) -> Q:
        q = Q()
        if self.types:
            q &= Q(type__in=self.types)
        if self.kinds:
            q &= Q(kind__in=self.kinds)
        if self.tags:
            q &= Q(tags__overlap=list(self.tags))
        if self.session_id:
            q &= Q(session_id=self.session_id)
        if self.created_after:
            q &= Q(created_ts__gte=self.created_after)
        if self.created_before:
            q &= Q(created_ts__lte=self.created_before)
        for column, values in (("category", self.categories), ("emotion", self.emotions),
                               ("conf_uid", self.conf_uids), ("history_uid", self.history_uids)):
            if values:
                q &= Q(**{f"{column}__in": values})
        return q


@dataclass
class SearchItem:
    chunk: dict[str, Any]
    score: float
    fused: float
    components: dict[str, float]
    ranks: dict[str, int]
    boosts: dict[str, float] = field(default_factory=dict)
    # Set on a result found by meaning alone when vector feedback moved the query (`_with_query_cosines`).
    query_cosine: float | None = None
    # Set by `with_current_values`: the fact this turn stated that the user has changed since, and on
    # the turn placed after it, the id of the chunk it corrects.
    changed_since: dict[str, Any] | None = None
    corrects: int | None = None


@dataclass
class SearchResult:
    items: list[SearchItem]
    mode: Mode
    fusion: str
    took_ms: float
    timings_ms: dict[str, float]
    candidates: dict[str, int]
    llm_steps: list[str] = field(default_factory=list)
    # Per namespace, the BM25 score of a document answering the whole query (SegmentedBM25Index.ceiling):
    # a result's `bm25` over it is the share of the query it answers (the context's relevance floor).
    bm25_ceiling: dict[str, float] = field(default_factory=dict)
    # Components that could not run, and why: {"vector": "embedder_unavailable" | "reindex_needed"}.
    skipped: dict[str, str] = field(default_factory=dict)


def with_current_values(result: SearchResult, *, tenant_id: int, user_id: str, k: int) -> SearchResult:
    """The result with, on each turn that stated a profile fact the user has changed since ("I live in
    Boston", the best match for "where do I live?"), `changed_since` (the key, its value now and when
    the user said it), and right after it the turn that says so ("I moved to Seattle last week!"), which
    shares no word with the question and was not found. Still at most `k` items: a correction takes
    the place of the last item that is neither. The search itself stays as it ranked (the evaluation
    and the context call it directly); this is the answer a client reads."""
    def message_of(item: SearchItem) -> int | None:
        return item.chunk["meta"].get("message_id") if item.chunk["type"] == Chunk.Type.DIALOG else None

    said = {message_of(item) for item in result.items} - {None}
    found = corrections_of(tenant_id=tenant_id, user_id=user_id, message_ids=sorted(said))
    if not found:
        return result
    news = {c.message_id for c in found.values()}
    when = dict(Message.objects.filter(tenant_id=tenant_id, pk__in=news).values_list("pk", "created_at"))
    rows: dict[int, dict[str, Any]] = {}
    if news - said:
        live = _live(Chunk.objects.filter(tenant_id=tenant_id, namespace=user_namespace(user_id),
                                          type=Chunk.Type.DIALOG,
                                          source_id__in=[f"message:{pk}" for pk in news - said]), timezone.now())
        for row in live.order_by("-id").values(*ITEM_FIELDS):
            rows[int(row["source_id"].partition(":")[2])] = row  # a split turn's first part last, so kept
    items: list[SearchItem] = []
    pending = list(result.items)
    while pending:
        item = pending.pop(0)
        items.append(item)
        correction = found.get(message_of(item))
        if correction is None:
            continue
        item.changed_since = {"key": correction.key, "now": correction.value,
                              "said_at": when.get(correction.message_id)}
        if any(message_of(shown) == correction.message_id for shown in items):
            continue  # ranked above it: read first
        later = next((n for n, other in enumerate(pending) if message_of(other) == correction.message_id), None)
        if later is not None:
            items.append(replace(pending.pop(later), corrects=item.chunk["id"]))
        elif correction.message_id in rows:
            items.append(SearchItem(chunk=rows.pop(correction.message_id), score=item.score, fused=item.fused,
                                    components={}, ranks={}, corrects=item.chunk["id"]))
    while len(items) > k:
        # The last item that neither states a changed fact nor corrects one.
        drop = next((i for i in range(len(items) - 1, -1, -1)
                     if items[i].changed_since is None and items[i].corrects is None), len(items) - 1)
        items.pop(drop)
    result.items = items
    return result


def _namespaces(user_id: str, include_tenant_documents: bool) -> list[str]:
    return [user_namespace(user_id), *([TENANT_NAMESPACE] if include_tenant_documents else [])]


def _live(queryset: QuerySet[Chunk], now: datetime) -> QuerySet[Chunk]:
    return queryset.filter(Q(expires_at__isnull=True) | Q(expires_at__gt=now))


def turn_chunks(*, tenant_id: int, user_id: str, message_ids: set[int]) -> dict[int, Chunk]:
    """The live dialog chunk of each of the user's messages (a split turn's first part)."""
    if not message_ids:
        return {}
    chunks = _live(Chunk.objects.filter(tenant_id=tenant_id, namespace=user_namespace(user_id),
                                        type=Chunk.Type.DIALOG,
                                        source_id__in=[f"message:{pk}" for pk in message_ids]), timezone.now())
    chunks = chunks.only("id", "source_id", "role", "speaker", "text", "created_ts")
    first: dict[int, Chunk] = {}
    for chunk in chunks.order_by("-id"):
        first[int(chunk.source_id.partition(":")[2])] = chunk
    return first


def chunks_search(
    *,
    tenant_id: int,
    user_id: str,
    query: str,
    k: int = 10,
    mode: Mode = "hybrid",
    filters: SearchFilters | None = None,
    include_tenant_documents: bool = True,
    domain: str = "dialog",
    fusion: str | None = None,
    rrf_k: int | None = None,
    weights: dict[str, float] | None = None,
    namespaces: list[str] | None = None,
    expand: bool | None = None,
    rerank: bool | None = None,
) -> SearchResult:
    started = time.perf_counter()
    config = retrieval_config(domain)
    filters = filters or SearchFilters()
    namespaces = namespaces or _namespaces(user_id, include_tenant_documents)
    now = timezone.now()
    events.emit("RAG.QueryRequested", {"query": query, "user_id": user_id, "tenant_id": tenant_id})
    timings: dict[str, float] = {}
    n_candidates = max(config.candidates, k * 3)
    scores: dict[str, dict[int, float]] = {}
    ceilings: dict[str, float] = {}
    skipped: dict[str, str] = {}

    def candidates() -> QuerySet[Chunk]:
        """What the search may return, for the database's side of it: built only when a namespace
        is not cached in process (building a queryset costs ~0.4 ms)."""
        queryset = _live(Chunk.objects.filter(tenant_id=tenant_id, namespace__in=namespaces), now)
        return queryset.filter(filters.q()) if filters else queryset

    # The cached BM25 indexes are caught up even in vector mode: their sizes choose between an
    # exact and an HNSW vector search without a COUNT query. Small namespaces' chunks are caught
    # up in process too (rag.chunk_cache), to the same watermarks.
    t = time.perf_counter()
    indexes, marks, spaces = bm25_index.namespace_indexes_and_watermarks(tenant_id, namespaces)
    sizes = {namespace: len(ix) for namespace, ix in zip(namespaces, indexes, strict=True)}
    foreign = foreign_vector_spaces(tenant_id, spaces) if mode != "bm25" else set()
    stores = {namespace: chunk_cache.namespace_store(tenant_id, namespace, marks.get(namespace), sizes[namespace])
              for namespace in namespaces}
    in_process = all(store is not None for store in stores.values())
    timings["catch_up"] = _ms(t)
    t = time.perf_counter()
    steps: list[str] = []
    # What the indexes are asked; an LLM step reads the question as asked.
    own_namespace = domain == "dialog" and user_namespace(user_id) in namespaces
    own = own_name_terms(tenant_id=tenant_id, user_id=user_id) if own_namespace else frozenset()
    if own_namespace and filters.memories_only():
        # Typed memories name their subject in nearly every text ("Alex loves rock music"): likewise no search word.
        own |= memory_subject_terms(tenant_id=tenant_id, user_id=user_id, kinds=filters.kinds,
                                    conf_uids=filters.conf_uids)
    searched = _without_own_name(query, own)
    dropped = own if searched != query else frozenset()  # the name's terms, when they left the query
    if mode in ("hybrid", "bm25"):
        # Words, the dates the query names, a conversation's user turns over the assistant's.
        question = own_namespace and query_terms.dialogue_turns(searched) is None
        # "What did I tell you last time?": the previous conversation's day, looked up only then (~0.3 ms).
        previous_day = previous_conversation_day(tenant_id=tenant_id, user_id=user_id, now=now) \
            if question and timeexpr.asks_last_conversation(searched) else None
        term_weights = query_terms.weighted_terms(searched, now, previous_day=previous_day)
        if question:
            # "my sister" asks about Emma: her name is what the turns say (people.selectors). A question,
            # not a whole conversation given as the query: reading one's cue words cost ~3 ms (MADial zh).
            for term in relation_name_terms(tenant_id=tenant_id, user_id=user_id, query=searched):
                term_weights.setdefault(term, RELATION_NAME_WEIGHT)
            # "How did my run go?" asks for "Ran my first 10k": a memory is told in the past, a question
            # asks in the base form, and Snowball leaves an irregular past a word of its own.
            for term in verbforms.past_terms(searched):
                term_weights.setdefault(term, verbforms.PAST_FORM_WEIGHT)
        terms = list(term_weights)
        if expand if expand is not None else config.expand:
            expansions = llm_steps.expand_query(query)
            if expansions is not None:
                terms += [t for q in expansions for t in analyze(q) if t not in dropped]
                steps.append("expand")
        allowed = None
        if filters and in_process:
            allowed = np.sort(np.concatenate([
                np.zeros(0, dtype=np.int64),
                *(store.ids(store.allowed(filters, now)) for store in stores.values() if store is not None)]))
        elif filters:
            allowed = np.fromiter(candidates().order_by("id").values_list("id", flat=True), dtype=np.int64)
        bm25: dict[int, float] = {}
        for ix in indexes if terms else []:
            bm25.update(ix.search(terms, n_candidates, allowed=allowed, term_weights=term_weights,
                                  secondary=query_terms.ASKS))
        ceilings = {namespace: ix.ceiling(terms, term_weights)
                    for namespace, ix in zip(namespaces, indexes, strict=True)} if terms else {}
        scores["bm25"] = dict(sorted(bm25.items(), key=lambda kv: (-kv[1], -kv[0]))[:n_candidates])
    timings["bm25"] = _ms(t)

    # A remote embedder away: a hybrid search answers by words alone (a vector search cannot: 503).
    # Cached: the context embeds the same query for people search.
    t = time.perf_counter()
    asked_vector = None  # the query's own vector, when feedback moves the one searched with
    vector = embed_query(searched, tenant_id=tenant_id) if mode == "vector" else (
        embed_query_if_available(searched, tenant_id=tenant_id, where="search") if mode == "hybrid" else None)
    if mode == "hybrid" and vector is None:
        skipped["vector"] = "embedder_unavailable"
    elif foreign:
        # Said in the answer, not only in the server's log: after an embedder change a hybrid search
        # of such a namespace answers by words alone and a vector search finds nothing there.
        skipped["vector"] = "reindex_needed"
    if vector is not None:
        # Feedback vectors come from the BM25 hits, which a foreign namespace may hold.
        if mode == "hybrid" and config.feedback_docs and scores.get("bm25") and not foreign \
                and _answers_enough(scores["bm25"], ceilings, config.feedback_min_share, searched):
            asked_vector = vector
            vector = _with_feedback(vector, list(scores["bm25"])[: config.feedback_docs], config.feedback_weight,
                                    stores)
        timings["embed"] = _ms(t)
        t = time.perf_counter()
        comparable = {namespace: size for namespace, size in sizes.items() if namespace not in foreign}
        scores["vector"] = dict(_nearest(candidates, vector, n_candidates, comparable, stores, filters, now))
        timings["vector"] = _ms(t)

    t = time.perf_counter()
    fusion_method = fusion or config.fusion
    rows: dict[int, dict[str, Any]] = {}
    if mode == "hybrid":
        fused = fuse(scores, method=fusion_method, weights=weights or config.weights, rrf_k=rrf_k or config.rrf_k)
    else:
        only = scores[mode]
        fused = {pk: FusedScore(s, {mode: s}, {mode: r}) for r, (pk, s) in
                 enumerate(sorted(only.items(), key=lambda kv: (-kv[1], -kv[0])), start=1)}
    want_rerank = rerank if rerank is not None else config.rerank
    hydrated = max(k, llm_steps.RERANK_TOP) if want_rerank else k
    if config.reply_candidates and config.reply_share and fused:
        t_replies = time.perf_counter()
        fused, rows = _replies_lifted(fused, config.reply_candidates, config.reply_share, tenant_id, stores)
        timings["replies"] = _ms(t_replies)
    # A "when" question (its terms hold `@t`; a conversation given as the query asks for no time: rag.query.ASKS).
    if config.dated_candidates and config.dated_share and fused and mode != "vector" \
            and timeexpr.TIME_REFERENCE in term_weights:
        t_dated = time.perf_counter()
        fused, rows = _dated_turns_lifted(fused, config.dated_candidates, config.dated_share, tenant_id, stores,
                                          rows)
        timings["dated"] = _ms(t_dated)
    if (config.speaker_boost or config.assistant_factor != 1.0 or config.filler_factor != 1.0) and fused:
        t_speaker = time.perf_counter()
        places = max(config.soft_candidates, _window(hydrated))  # the places a factor can change
        fused, rows = _said_by_named(fused, query, bool(dropped), 1 + config.speaker_boost, places, tenant_id,
                                     stores, assistant=config.assistant_factor, filler=config.filler_factor,
                                     read=rows)
        timings["speaker"] = _ms(t_speaker)
    if mode == "hybrid" and config.soft_candidates and fused:
        t_soft = time.perf_counter()
        fused, rows = _soft_rerank(fused, searched, term_weights, indexes, config, tenant_id, stores, rows)
        timings["soft"] = _ms(t_soft)
    # A question in English is the soft match's (above): there neither E5 nor MiniLM changed anything that
    # held on both halves of the dev data, for 10-20 ms a question; an English conversation given as the
    # query (a companion app's last turns) is MiniLM's (docs/retrieval.md "MiniLM as the English dialogue
    # reranker"). Each model compares the query with the vectors it stored for turns of its language.
    if mode == "hybrid" and config.semantic_candidates and fused:
        t_semantic = time.perf_counter()
        english = wordvectors.serves(searched)
        if not english:
            query_vector = rerank_query_vector(_without_speakers(searched, rows), tenant_id=tenant_id)
        elif query_terms.dialogue_turns(searched) is not None:
            query_vector = english_rerank_query_vector(searched, tenant_id=tenant_id)
        else:
            query_vector = None
        if query_vector is not None:
            fused = _semantic_rerank(fused, query_vector, config, tenant_id,
                                     column="english_rerank_embedding" if english else "rerank_embedding")
            timings["semantic"] = _ms(t_semantic)
    items = _hydrate_boost_dedupe(fused, hydrated, config, now, tenant_id, stores, rows)
    timings["fuse_hydrate"] = round(
        _ms(t) - sum(timings.get(stage, 0.0) for stage in ("replies", "dated", "soft", "speaker", "semantic")), 3)
    if want_rerank:
        t = time.perf_counter()
        # The model's judgement orders the top; the fused order breaks its ties.
        if llm_steps.rerank_top(query, items, top=llm_steps.RERANK_TOP, ident=lambda i: i.chunk["id"],
                                text=lambda i: i.chunk["text"], components=lambda i: i.components):
            steps.append("rerank")
        timings["rerank"] = _ms(t)
    items = items[:k]
    if asked_vector is not None:
        t = time.perf_counter()
        _with_query_cosines(items, asked_vector, stores)
        timings["query_cosine"] = _ms(t)
    took = _ms(started)
    metrics.RETRIEVAL_LATENCY.labels(mode).observe(took / 1000)
    events.emit("RAG.ResultsReady", {
        "query": query, "top_k": k, "user_id": user_id, "tenant_id": tenant_id,
        "items": [{"id": i.chunk["id"], "score": round(i.score, 6)} for i in items],
    })
    return SearchResult(items=items, mode=mode, fusion=fusion_method if mode == "hybrid" else mode,
                        took_ms=took, timings_ms=timings, candidates={n: len(s) for n, s in scores.items()},
                        llm_steps=steps, bm25_ceiling=ceilings, skipped=skipped)


def _answers_enough(bm25: dict[int, float], ceilings: dict[str, float], min_share: float, query: str) -> bool:
    """Whether the best BM25 hit answers `min_share` of the question (its score over the highest of
    the namespaces' ceilings): pseudo-relevance feedback assumes the top hits are relevant, and a
    hit that shares one common word with the question is not. A conversation as the query names
    many words, so its best hit answers a small share of them: it is not held to this."""
    if min_share <= 0 or query_terms.dialogue_turns(query) is not None:
        return True
    ceiling = max(ceilings.values(), default=0.0)
    return ceiling <= 0 or max(bm25.values()) / ceiling >= min_share


_warned_foreign: set[tuple[int, str, str]] = set()


def foreign_vector_spaces(tenant_id: int, spaces: dict[str, str]) -> set[str]:
    """Namespaces whose vectors another embedder made (rag.models.Namespace.vector_space): the
    query vector does not compare with them, so their search is BM25 alone until `reindex`.
    Logged once a process and namespace, since every search of it would say the same."""
    current = get_embedder().name
    foreign = {namespace for namespace, space in spaces.items() if space and space != current}
    for namespace in foreign:
        key = (tenant_id, namespace, spaces[namespace])
        if key not in _warned_foreign:
            _warned_foreign.add(key)
            # A knowledge version is rebuilt by lore_reindex (a new version to publish), not by reindex.
            remedy = ("`manage.py lore_reindex WORLD DOMAIN` builds a version with it" if namespace.startswith("lore:")
                      else "`manage.py reindex`")
            logger.warning("namespace %s of tenant %s holds vectors of %r, not of the configured embedder %r: "
                           "its searches use BM25 alone until %s", namespace, tenant_id,
                           spaces[namespace], current, remedy)
    return foreign


def _nearest(queryset: Callable[[], QuerySet[Chunk]], vector: np.ndarray, n: int, sizes: dict[str, int],
             stores: dict[str, chunk_cache.ChunkStore | None], filters: SearchFilters,
             now: datetime) -> list[tuple[int, float]]:
    """Small namespaces are scanned exactly, together: in process when their chunks are cached,
    else by PostgreSQL; large ones, whose chunks are all in the partial HNSW index
    (Chunk.in_hnsw), go through it. The lists merge by similarity."""
    limit = vectors.EXACT_SCAN_MAX_ROWS
    cached = [ns for ns, size in sizes.items() if 0 < size <= limit and stores.get(ns) is not None]
    small = [ns for ns, size in sizes.items() if 0 < size <= limit and stores.get(ns) is None]
    large = [ns for ns, size in sizes.items() if size > limit]
    rows: list[tuple[int, float]] = []
    for ns in cached:
        store = stores[ns]
        assert store is not None
        rows += store.nearest(vector, n, store.allowed(filters, now))
    if small:
        # Each is small, so scan them exactly even when together they pass the limit.
        rows += vectors.nearest(queryset().filter(namespace__in=small), vector, n, namespace_size=0)
    if large:
        rows += vectors.nearest(queryset().filter(namespace__in=large), vector, n,
                                namespace_size=sum(sizes[ns] for ns in large), hnsw_filter=Q(in_hnsw=True),
                                hnsw_halfvec=True)
    return sorted(rows, key=lambda r: (-r[1], -r[0]))[:n]


def _with_feedback(vector: np.ndarray, top_ids: list[int], weight: float,
                   stores: dict[str, chunk_cache.ChunkStore | None]) -> np.ndarray:
    """Pseudo-relevance feedback (Rocchio): move the query vector towards the best BM25 hits, so
    the vector side looks for what is *near the lexical matches* rather than repeating them.
    On LoCoMo dev this is what lets hybrid beat BM25 alone (recall@10 0.756 -> 0.776)."""
    found = _chunk_vectors(top_ids, stores)
    hits = [found[pk] for pk in top_ids if pk in found]
    if not hits:
        return vector
    moved = vector + weight * np.mean(hits, axis=0)
    return moved / (np.linalg.norm(moved) or 1.0)


def _chunk_vectors(ids: list[int], stores: dict[str, chunk_cache.ChunkStore | None]) -> dict[int, np.ndarray]:
    """The stored vectors of these chunks: from the in-process stores, the rest from the database."""
    found: dict[int, np.ndarray] = {}
    for store in stores.values():
        if store is not None:
            found.update(store.vectors(ids))
    missing = [pk for pk in ids if pk not in found]
    if missing:
        found.update((pk, np.asarray(e)) for pk, e in
                     Chunk.objects.filter(id__in=missing).values_list("id", "embedding"))
    return found


def _with_query_cosines(items: list[SearchItem], asked: np.ndarray,
                        stores: dict[str, chunk_cache.ChunkStore | None]) -> None:
    """Sets `query_cosine` on the results found by meaning alone: their cosine to the query as asked, not
    to the vector feedback moved towards the best word matches. Feedback brings those matches' neighbours
    along (their vectors embed the turns before them), and "How is my boss?" found "We should cook pasta
    tonight." at 0.37 beside "My boss Olga is strict but fair."; as asked, 0.1. The context's floor reads it."""
    alone = [item.chunk["id"] for item in items if "bm25" not in item.components and "vector" in item.components]
    if not alone:
        return
    vectors = _chunk_vectors(alone, stores)
    asked = asked / (np.linalg.norm(asked) or 1.0)
    for item in items:
        if (found := vectors.get(item.chunk["id"])) is not None and (norm := float(np.linalg.norm(found))):
            item.query_cosine = float(np.dot(found, asked)) / norm


def _ms(since: float) -> float:
    return round((time.perf_counter() - since) * 1000, 3)


def _boosts(chunk: dict[str, Any], config: RetrievalConfig, now: datetime) -> dict[str, float]:
    if chunk["type"] == Chunk.Type.MEMORY:
        return memory_boosts(chunk, now)
    boosts = {}
    if config.importance_boost:
        boosts["importance"] = 1 + config.importance_boost * (chunk["importance"] - 0.5)
    if config.recency_boost:
        age_days = max(0.0, (now - chunk["created_ts"]).total_seconds() / 86400)
        boosts["recency"] = 1 + config.recency_boost * 0.5 ** (age_days / config.half_life_days)
    return boosts


# A consolidated memory says who said it ("User: I really love ramen."), the turn it restates does not.
_LABEL = re.compile(r"^[^\s:：|]{1,40}[:：]\s*")


@lru_cache(maxsize=8192)
def _shingles(text: str) -> frozenset[str]:
    # The same chunks come back search after search (a third of the dedupe step's time was this).
    # Without a leading speaker's label, so a typed memory that restates a turn word for word is a near
    # duplicate of it: "Radiohead ramen" returned each fact twice, as the turn and as its memory.
    tokens = words(_LABEL.sub("", text, count=1))
    return frozenset(" ".join(tokens[i:i + 2]) for i in range(max(1, len(tokens) - 1)))


def _window(k: int) -> int:
    # Boosts are multiplicative and small, so a window a little wider than k holds the final top k.
    return max(k * 3, k + 20)


def _hydrate_boost_dedupe(
    fused: dict[int, FusedScore], k: int, config: RetrievalConfig, now: datetime, tenant_id: int,
    stores: dict[str, chunk_cache.ChunkStore | None] | None = None, read: dict[int, dict[str, Any]] | None = None,
) -> list[SearchItem]:
    """`read`: rows this search has already read (the soft match's), not read again."""
    window = list(fused)[: _window(k)]
    read = read or {}
    rows = {pk: read[pk] for pk in window if pk in read}
    if len(rows) < len(window):
        rows.update(_rows([pk for pk in window if pk not in rows], tenant_id, stores or {}))
    items = []
    for pk in window:
        chunk = rows.get(pk)
        if chunk is None or (chunk["expires_at"] is not None and chunk["expires_at"] <= now):
            continue  # deleted or expired since the index saw it
        score = fused[pk]
        boosts = _boosts(chunk, config, now)
        final = score.score
        for factor in boosts.values():
            final *= factor
        items.append(SearchItem(chunk=chunk, score=final, fused=score.score, components=score.components,
                                ranks=score.ranks, boosts=boosts))
    # Equal fused scores (RRF ties are common) go to the item with the better best rank.
    items.sort(key=lambda item: (-item.score, min(item.ranks.values(), default=0), -item.chunk["id"]))

    kept: list[SearchItem] = []
    kept_shingles: list[frozenset[str]] = []
    kept_sizes: list[int] = []
    threshold = config.dedupe_similarity
    for item in items:
        shingles = _shingles(item.chunk["text"])
        size = len(shingles)
        # |a & b| / |a | b| <= min(|a|, |b|) / max(|a|, |b|): sets of too different sizes cannot
        # reach the threshold, and the quotient of their sizes costs less than the intersection
        # (with k=50, the pairwise comparisons were most of a search's Python time).
        held = zip(kept_shingles, kept_sizes, strict=True)
        if size and any(_jaccard(shingles, other) >= threshold for other, n in held
                        if (size / n if size <= n else n / size) >= threshold):
            continue
        kept.append(item)
        kept_shingles.append(shingles)
        kept_sizes.append(size)
        if len(kept) == k:
            break
    return kept


_NOT_HAN = rf"(?:(?!{HAN_CHAR.pattern})\w)"


def _without_own_name(query: str, own: frozenset[str]) -> str:
    """The query without the user's own name (`own`, its terms): "what sport does Kate do?" → "what
    sport does do?". In the user's memories the name is said mostly by the other side, in greetings
    ("Nice to meet you, Kate!"), so as a search word it finds small talk rather than what the question
    asks. Kept when nothing else would be left."""
    said = {word for word in words(query) if term(word) in own} if own else set()
    if not said:
        return query
    # A whole word, not a piece of one ("Li" is not the start of "like"); Chinese has no spaces to bound it,
    # nor a Latin name written into it ("Alex喜欢吃什么？").
    pattern = "|".join(re.escape(word) if HAN_CHAR.search(word) else rf"(?<!{_NOT_HAN}){re.escape(word)}(?!{_NOT_HAN})"
                       for word in sorted(said, key=len, reverse=True))
    rest = re.sub(pattern, " ", query, flags=re.IGNORECASE)
    return rest if analyze(rest) else query


def _without_speakers(query: str, rows: dict[int, dict[str, Any]]) -> str:
    """The question without the names of the candidates' speakers, for the semantic reranker: who said a
    turn is the speaker factor's to judge (`_said_by_named`), and a model reading "Какое хобби у Маши?"
    finds "Маша, вязание — классное хобби!", said *to* her, nearest, as the words alone did. A
    conversation as the query names its participants, and keeps them (it favours no one either)."""
    if query_terms.dialogue_turns(query) is not None:
        return query
    asked = frozenset(analyze(query))
    names = frozenset(label[0] for row in rows.values()
                      if row.get("speaker") and (label := _label_terms(row["speaker"])) and label[0] in asked)
    return _without_own_name(query, names) if names else query


@lru_cache(maxsize=4096)
def _label_terms(label: str) -> tuple[str, ...]:
    return tuple(analyze(label))


# How far past a question a search looks for the chunk of the turn that answers it: the next turn's chunk
# is the question's next id unless a long turn was split in parts or another session wrote in between.
REPLY_LOOKAHEAD = 6
_ASKS = re.compile(r"[?？]")


def _replies_lifted(fused: dict[int, FusedScore], candidates: int, share: float, tenant_id: int,
                    stores: dict[str, chunk_cache.ChunkStore | None],
                    ) -> tuple[dict[int, FusedScore], dict[int, dict[str, Any]]]:
    """A question among the fused top `candidates` lifts the turn that answers it: its fused score gains
    `share` × the question's (the `reply` component). "How often do you all work out together?" is found
    by the words of "How often does John work out with his family?", its answer "Three times a week; it
    keeps us on track." by none of them: the answer carries the question among its preceding turns' terms,
    but diluted by its own, and ranked 44th on the LoCoMo tune half. Only a turn that is already a
    candidate is lifted (the search's filters and expiry held for it), only the next turn of the same
    conversation, said by someone else, and never an assistant's reply (a memory is what the user said;
    the assistant's questions answered by the user are what this finds). Returns the rows read too."""
    top = list(fused)[:candidates]
    rows = _rows(top, tenant_id, stores)
    # A question the query's words found: one placed by its vector alone, near nothing, lifted noise.
    questions = {pk: row for pk, row in rows.items()
                 if fused[pk].components.get("bm25") and row["type"] == Chunk.Type.DIALOG
                 and not row["meta"].get("part") and _ASKS.search(row["text"])}
    if not questions:
        return fused, rows
    lifted: dict[int, float] = {}
    for pk, reply in _replies(questions, tenant_id, stores).items():
        if reply in fused and fused[pk].score > 0:
            lifted[reply] = lifted.get(reply, 0.0) + share * fused[pk].score
    return _lifted(fused, lifted, "reply"), rows


# How far down the fused list `_dated_turns_lifted` looks for the turn that dates a hit: LoCoMo's tune half
# gave the same figures from 20 to 200, and the replies step has read the top 20's rows already (reading 50
# from the database cost a namespace outside the chunk stores ~6 ms of 20,000 chunks).
DATED_LOOKUP = 20


def _dated_turns_lifted(fused: dict[int, FusedScore], candidates: int, share: float, tenant_id: int,
                        stores: dict[str, chunk_cache.ChunkStore | None], read: dict[int, dict[str, Any]],
                        ) -> tuple[dict[int, FusedScore], dict[int, dict[str, Any]]]:
    """For a "when" question: a dialog turn among the fused top `candidates` that names no time lifts the turn
    before it (one of the two its search text carries) said by the same speaker that does, by `share` × its
    fused score (the `dated` component). People say when first and what after: "Last weekend I took part in a
    community event." / "Oh, which one?" / "I set up a 5K charity run in our neighborhood." — "When did John
    take part in a 5K charity run?" finds the last by its words, and its date is in the first, which shares
    only "take part" with the question. Only a turn already among the fused top `DATED_LOOKUP` is lifted (the
    search's filters and expiry held for it), as `_replies_lifted` does. Returns the rows read too."""
    order = list(fused)[:DATED_LOOKUP]
    rows = {**read, **_rows([pk for pk in order if pk not in read], tenant_id, stores)}
    turn_of = {row["meta"]["message_id"]: pk for pk in order if (row := rows.get(pk)) is not None
               and row["type"] == Chunk.Type.DIALOG and row["meta"].get("message_id") is not None}
    lifted: dict[int, float] = {}
    for pk in order[:candidates]:
        row = rows.get(pk)
        # A turn the query's words found: one placed by its vector alone, near nothing, would date noise.
        if row is None or row["type"] != Chunk.Type.DIALOG or not fused[pk].components.get("bm25"):
            continue
        # The speaker's own turns before it first: reading a text for times costs ~0.1 ms.
        said_before = [before for message_id in reversed(row["meta"].get("context_message_ids") or [])
                       if (before := rows.get(turn_of.get(message_id, 0))) is not None
                       and (before["role"], before["speaker"]) == (row["role"], row["speaker"])]
        if not said_before or _names_time(row):
            continue
        dating = next((before for before in said_before if _names_time(before)), None)
        if dating is not None:
            lifted[dating["id"]] = lifted.get(dating["id"], 0.0) + share * fused[pk].score
    return _lifted(fused, lifted, "dated"), rows


def _lifted(fused: dict[int, FusedScore], lifted: dict[int, float], component: str) -> dict[int, FusedScore]:
    """The fused scores with each of `lifted` raised by its lift, named as `component`, ranked again."""
    if not lifted:
        return fused
    return dict(ranked({pk: FusedScore(score.score + lifted[pk], {**score.components, component: round(lifted[pk], 6)},
                                       score.ranks) if pk in lifted else score for pk, score in fused.items()}))


def _names_time(row: dict[str, Any]) -> bool:
    """Whether a turn names a time ("yesterday", "last May", "в прошлую пятницу", "上周五"), as of the day said."""
    return row["created_ts"] is not None and _mentions_time(row["text"], row["created_ts"].date())


@lru_cache(maxsize=8192)
def _mentions_time(text: str, said: date) -> bool:
    return bool(timeexpr.mentions(text, said))


def _replies(questions: dict[int, dict[str, Any]], tenant_id: int,
             stores: dict[str, chunk_cache.ChunkStore | None]) -> dict[int, int]:
    """Question chunk id → the id of the chunk that answers it: the first chunk after it whose preceding
    turns end with the question's turn, of the same conversation and not the assistant's."""
    following: dict[int, list[dict[str, Any]]] = {}
    from_database: dict[str, list[int]] = {}
    for pk, row in questions.items():
        store = stores.get(row["namespace"])
        if store is not None:
            following[pk] = [{"id": r["id"], "type": r["type"], "session_id": r["session_id"], "role": r["role"],
                              "speaker": r["speaker"], "after": _last_id(r["meta"].get("context_message_ids"))}
                             for r in store.following(pk, REPLY_LOOKAHEAD)]
        else:
            from_database.setdefault(row["namespace"], []).append(pk)
    for namespace, ids in from_database.items():
        # The (tenant, namespace, id) index walked a few rows forward from each question, in one statement
        # that reads only what decides (reading whole rows after it cost ~3 ms a search at 20,000 chunks).
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT q.question_id, next.id, next.type, next.session_id, next.role, next.speaker, next.after"
                " FROM unnest(%s::bigint[]) AS q(question_id) CROSS JOIN LATERAL ("
                " SELECT id, type, session_id, role, speaker, meta->'context_message_ids'->>-1 AS after"
                " FROM rag_chunk WHERE tenant_id = %s AND namespace = %s AND id > q.question_id"
                " ORDER BY id LIMIT %s) AS next",
                [ids, tenant_id, namespace, REPLY_LOOKAHEAD])
            for question_id, *fields in cursor.fetchall():
                following.setdefault(question_id, []).append(
                    dict(zip(("id", "type", "session_id", "role", "speaker", "after"), fields, strict=True)))
    replies = {}
    for pk, rows in following.items():
        question = questions[pk]
        message_id = _last_id([question["meta"].get("message_id")])
        for row in sorted(rows, key=lambda r: r["id"]):
            if (row["type"] == Chunk.Type.DIALOG and row["after"] is not None and row["after"] == message_id
                    and row["session_id"] == question["session_id"]):
                said_by_another = (row["role"], row["speaker"]) != (question["role"], question["speaker"])
                if row["role"] != Message.Role.ASSISTANT and said_by_another:
                    replies[pk] = row["id"]
                break
    return replies


def _last_id(ids: list[Any] | None) -> str | None:
    """The last of a chunk's preceding message ids as text, as SQL's `->>` gives it."""
    return None if not ids or ids[-1] is None else str(ids[-1])


def _said_by_named(fused: dict[int, FusedScore], query: str, own_name_asked: bool, factor: float, places: int,
                   tenant_id: int, stores: dict[str, chunk_cache.ChunkStore | None], assistant: float = 1.0,
                   read: dict[int, dict[str, Any]] | None = None, filler: float = 1.0,
                   ) -> tuple[dict[int, FusedScore], dict[int, dict[str, Any]]]:
    """The dialog turns said by someone the question names, their fused score × `factor`: "What
    does Melanie do?" is answered by what Melanie said far more often than by what was said to her
    (on the LoCoMo tune half, 474 of 574 evidence turns of a question naming one speaker). Every
    turn already carries its speaker as a BM25 term, but in a two-person chat that term is on half
    the turns and its idf is next to nothing. A speaker counts as named when the first word of
    their label is a word of the question ("Jake" names "Jake Miller"). When the question named the
    user by their own name (`own_name_asked`: it left the query, see `_without_own_name`), the
    user's own turns are the ones named. A conversation given as the query names its participants,
    not what it asks about, so it favours no one. The factor shows as the `speaker` component.

    The assistant's own turns, × `assistant` (the `assistant` component), whatever the query: a memory
    is what the user said, and a reply echoing it ("That sounds fun, how is the violin going?") is short
    and carries the user's turn before it as context, so it outranked the statement it echoes.

    A turn of greetings and thanks only ("Thanks!", "谢谢！"), × `filler` (the `filler` component), unless the
    query is one too: it carries the turns before it as search text and so matched their words, while
    saying nothing itself (a QA pass: "Thanks!" second for "what did I start half a year ago?"). So is a
    question at least half of whose words the query says (the `echo` component): "where do I live now?", asked of
    a chat app once, came first for "where do I live?" above the turns that answer it. The turn that
    answers such a question was lifted by its score before (`_replies_lifted`).

    Only what reaches the first `places` (the soft match's and hydration's reach) matters, and a
    candidate scoring below the `places`-th score / `factor` cannot reach them: the rows read are
    those that can, which covers what the soft match and hydration read next (returned, so that a
    namespace outside the chunk stores costs one read of rows, not two)."""
    asked = frozenset() if query_terms.dialogue_turns(query) is not None else frozenset(analyze(query))
    if filler != 1.0 and is_filler(query):
        filler = 1.0
    if not asked and assistant == 1.0 and filler == 1.0:
        return fused, {}
    order = list(fused)
    if len(order) > places:
        floor = fused[order[places - 1]].score / factor
        order = [pk for pk in order if fused[pk].score >= floor]  # a prefix: `fused` is best first
    read = read or {}
    rows = {**read, **_rows([pk for pk in order if pk not in read], tenant_id, stores)}
    out = dict(fused)
    changed = False
    # Only a candidate whose row was read can change: the rest have no speaker, role or text here.
    for pk, row in rows.items():
        score = fused.get(pk)
        if score is None:
            continue
        dialog = row["type"] == Chunk.Type.DIALOG
        speaker = row["speaker"]
        label = _label_terms(speaker) if speaker else ()
        applied: dict[str, float] = {}
        if dialog and asked and ((label and label[0] in asked)
                                 or (own_name_asked and not speaker and row["role"] == Message.Role.USER)):
            applied["speaker"] = factor
        elif dialog and assistant != 1.0 and row["role"] == Message.Role.ASSISTANT:
            applied["assistant"] = assistant
        if dialog and filler != 1.0 and is_filler(row["text"]):
            applied["filler"] = filler
        elif dialog and filler != 1.0 and asked and _asks_again(row["text"], asked):
            applied["echo"] = filler
        if applied:
            out[pk] = FusedScore(score.score * math.prod(applied.values()), {**score.components, **applied},
                                 score.ranks)
            changed = True
    return (dict(ranked(out)) if changed else fused), rows


def _asks_again(text: str, asked: frozenset[str]) -> bool:
    """A question at least half of whose words the query says ("where do I live now?" for "where do I
    live?"): asked before, not remembered."""
    said = _question_words(text)
    return bool(said) and 2 * len(said & asked) >= len(said)


@lru_cache(maxsize=8192)
def _question_words(text: str) -> frozenset[str]:
    """The words of a turn that asks something (none for one that does not). Cached: the speaker step
    asks this of every candidate that can reach the top, the same turns search after search, and
    analysing them again was most of that step's time (~3.5 ms of a LoCoMo question's ~14)."""
    if not _ASKS.search(text):
        return frozenset()
    said = set(analyze(text)) - pronoun_terms()
    # A Chinese word is also indexed by its characters (现在 → 现): counted once, as the word.
    said -= {t for t in said if len(t) == 1 and HAN_CHAR.match(t) and any(t in w and w != t for w in said)}
    return frozenset(said)


def _soft_rerank(fused: dict[int, FusedScore], query: str, term_weights: dict[str, float],
                 indexes: list[SegmentedBM25Index], config: RetrievalConfig, tenant_id: int,
                 stores: dict[str, chunk_cache.ChunkStore | None], read: dict[int, dict[str, Any]] | None = None,
                 ) -> tuple[dict[int, FusedScore], dict[int, dict]]:
    """The fused top `soft_candidates` reordered by how well their words answer the query's words in
    meaning (memoryhub.wordvectors): each score over the top one, plus `soft_weight` × the soft score
    min-max scaled among them. The rest keep their order below: their scores over the top one are at
    most what any of the top ones gets. Also returns the rows read, for hydration, with `read` (rows
    the speaker step read, not read again).

    A query word weighs its BM25 idf (over the searched namespaces) × its weight in the query, so a
    rare word of the question counts more than "do" or "like", as on the lexical side."""
    order = list(fused)
    top = order[: config.soft_candidates]
    read = read or {}
    rows = {**read, **_rows([pk for pk in top if pk not in read], tenant_id, stores)}
    docs = sum(len(ix) for ix in indexes)
    asked: list[tuple[str, float]] = []
    seen: set[str] = set()
    for word in words(query):
        word_term = term(word)
        if word in seen or word_term not in term_weights:
            continue
        seen.add(word)
        df = sum(ix.document_frequency(word_term) for ix in indexes)
        asked.append((word, float(bm25_idf(df, docs)) * term_weights[word_term]))
    soft = wordvectors.soft_scores(asked, [rows[pk]["text"] if pk in rows else "" for pk in top])
    low, high = (float(soft.min()), float(soft.max())) if soft.size else (0.0, 0.0)
    if high <= low:
        return fused, rows  # nothing told apart: the fused order stands
    soft = (soft - low) / (high - low)
    return _lift_top(fused, dict(zip(top, soft.tolist(), strict=True)), config.soft_weight, "soft"), rows


def _lift_top(fused: dict[int, FusedScore], values: dict[int, float], weight: float,
              component: str) -> dict[int, FusedScore]:
    """The soft match's and the reranker's form: the fused top (`values`' keys, a prefix of `fused`'s order)
    gets each score over the top one plus `weight` × its value (0-1), shown as `component`; the rest keep
    their order below, their scores over the top one being at most what any of the top gets. A turn
    that says nothing new (the `filler` and `echo` factors) is lifted by that factor of `weight`: its
    meaning is the query's own, and the reranker put the question asked before back on top."""
    scale = max(fused[pk].score for pk in values) or 1.0
    out = {pk: FusedScore(fused[pk].score / scale + weight * value * _damping(fused[pk]),
                          {**fused[pk].components, component: round(value, 6)}, fused[pk].ranks)
           for pk, value in values.items()}
    for pk, score in fused.items():
        if pk not in values:
            out[pk] = FusedScore(score.score / scale, score.components, score.ranks)
    return dict(ranked(out))


def _damping(score: FusedScore) -> float:
    return score.components.get("filler", 1.0) * score.components.get("echo", 1.0)


def _semantic_rerank(fused: dict[int, FusedScore], query_vector: np.ndarray, config: RetrievalConfig,
                     tenant_id: int, *, column: str = "rerank_embedding") -> dict[int, FusedScore]:
    """The fused top `semantic_candidates` re-scored by a semantic reranker (SEMANTIC_RERANK's E5, whose
    vectors are `rerank_embedding`, or ENGLISH_RERANK's MiniLM, `english_rerank_embedding`): each score
    over the top one, plus `semantic_weight` × the cosine between the query's and the chunk's own text's
    reranker vectors, min-max scaled among them; the rest keep their order below, as in the soft match.

    The lexical side and the offline vectors find what shares words or spellings with the query; a model
    that knows meaning across languages tells apart which of those is about the same thing ("我发现了一个超级
    好吃的披萨店" and a memory of a restaurant with good food). A candidate without a vector (stored while the
    reranker was off, an English turn, a document) gets the others' mean: neither lifted nor pushed down.
    The vectors are read from the database (one read by primary key): kept in the chunk stores they would
    double their size for a stage most searches skip."""
    top = list(fused)[: config.semantic_candidates]
    stored = dict(Chunk.objects.filter(tenant_id=tenant_id, id__in=top, **{f"{column}__isnull": False})
                  .values_list("id", column))
    if not stored:
        return fused
    ids = list(stored)
    cosines = np.asarray([np.asarray(stored[pk], dtype=np.float32) for pk in ids]) @ query_vector
    low, high = float(cosines.min()), float(cosines.max())
    if high <= low:
        return fused  # nothing told apart: the fused order stands
    scaled = dict(zip(ids, ((cosines - low) / (high - low)).tolist(), strict=True))
    neutral = sum(scaled.values()) / len(scaled)
    return _lift_top(fused, {pk: scaled.get(pk, neutral) for pk in top}, config.semantic_weight, "semantic")


def _rows(ids: list[int], tenant_id: int, stores: dict[str, chunk_cache.ChunkStore | None]) -> dict[int, dict]:
    """The result fields of `ids` (those that still exist): from the chunk stores, caught up at
    the start of this search, and from the database for namespaces not cached."""
    rows: dict[int, dict[str, Any]] = {}
    for store in stores.values():
        if store is None:
            continue
        for pk in ids:
            row = store.row(pk)
            if row is not None:
                rows[pk] = dict(row)  # the cached dict is shared: a caller may change its copy
    missing = [pk for pk in ids if pk not in rows]
    if missing:
        rows.update((row["id"], row) for row in
                    Chunk.objects.filter(tenant_id=tenant_id, id__in=missing).values(*ITEM_FIELDS))
    return rows


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)
