"""Writes of rag: chunks (from dialogs, documents, memories), their deletion, re-indexing."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, Q, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone
from psycopg.types.json import Jsonb

from memoryhub import deferred, lexicon, timeexpr, vector_io, wordvectors
from memoryhub.embeddings import english_rerank_vectors, get_embedder, l2_normalize, rerank_vectors
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.locks import advisory_lock
from memoryhub.models import ArchivalJob, Message, Tenant
from memoryhub.search import vectors
from memoryhub.sensitive import mask_bounded, mask_json, mask_tags, mask_text, redact
from memoryhub.text import analyze_many, count_tokens
from rag.chunking import HEADING, DocumentPiece, split_bounded, split_document
from rag.models import (
    MIXED_VECTOR_SPACE,
    TENANT_NAMESPACE,
    Chunk,
    ChunkDeletion,
    Document,
    Namespace,
    user_namespace,
)

logger = logging.getLogger(__name__)

SPEAKER_MAX_LENGTH = Chunk._meta.get_field("speaker").max_length or 128
TITLE_MAX_LENGTH = Document._meta.get_field("title").max_length or 300

OWN_TERM_WEIGHT = 2
CONTEXT_VECTOR_WEIGHT = 0.5


def namespace_write_lock(*, tenant_id: int, namespace: str) -> None:
    """Serialise chunk writers of one namespace until commit.

    Cached BM25 indexes catch up by reading ids above the highest one they hold; that is only
    complete if ids commit in increasing order within a namespace, which this lock guarantees.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 1))", [f"ns:{tenant_id}:{namespace}"])


@dataclass
class ChunkDraft:
    type: str
    text: str
    source_id: str
    # What BM25 and the embedding see besides `text` (a dialog turn's speaker and preceding turns).
    # The chunk's own words count OWN_TERM_WEIGHT times in BM25, so a turn outranks its neighbour
    # that merely quotes it as context.
    search_prefix: str = ""
    context_text: str = ""
    user_id: str = ""
    session_id: str = ""
    role: str = ""
    speaker: str = ""
    kind: str = ""
    created_ts: datetime | None = None
    importance: float = 0.5
    tags: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    expires_at: datetime | None = None
    # Typed memories' columns (rag.memories), written with the row: no second write per chunk.
    memory_uid: uuid.UUID | None = None
    category: str = ""
    conf_uid: str = ""
    history_uid: str = ""
    emotion: str = ""
    context_window: str = ""


def _embed(drafts: Sequence[ChunkDraft]) -> np.ndarray:
    """A chunk's vector is its own text's plus CONTEXT_VECTOR_WEIGHT times its context's,
    re-normalised: the context helps a short reply be found by what it answers, without letting
    a turn that merely follows a topic outrank the turn that states it. Embedding the two parts
    apart costs the same tokens as embedding them joined."""
    embedder = get_embedder()
    own = embedder.embed([f"{d.search_prefix}: {d.text}" if d.search_prefix else d.text for d in drafts])
    with_context = [i for i, d in enumerate(drafts) if d.context_text]
    if with_context:
        context = embedder.embed([drafts[i].context_text for i in with_context])
        own[with_context] += CONTEXT_VECTOR_WEIGHT * context
        own = l2_normalize(own)
    return own


def _hnsw_promote(namespace: Namespace, adding: int) -> None:
    """Put the namespace into the HNSW index when this write takes it past the exact-scan limit.

    A one-off cost per namespace (its existing chunks are inserted into the graph now); from then
    on all its chunks are in the index, so a vector search of it can use the partial index alone."""
    if namespace.in_hnsw or namespace.chunk_count + adding <= vectors.EXACT_SCAN_MAX_ROWS:
        return
    moved = Chunk.objects.filter(tenant_id=namespace.tenant_id, namespace=namespace.name, in_hnsw=False).update(
        in_hnsw=True)
    namespace.in_hnsw = True
    logger.info("namespace %s of tenant %s moved into the HNSW index (%s chunks)",
                namespace.name, namespace.tenant_id, moved)


def _namespace_state(tenant: Tenant, namespace: str) -> Namespace:
    """The namespace's row, created on its first write. Runs under the namespace write lock, so
    no other writer can create it meanwhile. A row created anew (after an erasure removed the
    old one) starts from the deletions already logged, so a cached index that still holds the
    erased chunks sees their deletions."""
    state = Namespace.objects.filter(tenant=tenant, name=namespace).first()
    if state is None:
        logged = (ChunkDeletion.objects.filter(tenant=tenant, namespace=namespace)
                  .order_by("-id").values_list("id", flat=True).first())
        state = Namespace.objects.create(tenant=tenant, name=namespace, last_deletion_id=logged or 0)
    return state


# Chunk.terms holds varchar(128): a longer "word" (a hash, a run without spaces) is noise to BM25.
MAX_TERM_CHARS = 128


@dataclass
class PreparedChunks:
    """Drafts with their BM25 terms and vectors: all a chunk write needs besides the database.
    Built by `chunks_prepare` outside any transaction, since embedding may be a network call."""

    drafts: list[ChunkDraft]
    terms: list[list[str]]
    embeddings: np.ndarray
    # The embedder whose vectors these are (rag.models.Namespace.vector_space).
    vector_space: str = field(default_factory=lambda: get_embedder().name)
    # The semantic reranker's vector of each draft (Chunk.rerank_embedding): None for a draft it does
    # not re-score, and None altogether while SEMANTIC_RERANK is off.
    rerank: list[np.ndarray | None] | None = None
    # The English dialogue reranker's (Chunk.english_rerank_embedding; ENGLISH_RERANK), likewise.
    english_rerank: list[np.ndarray | None] | None = None
    # Drafts whose reranker vectors are left to `chunks_rerank_fill` (Chunk.rerank_pending): None when
    # they were computed here.
    rerank_pending: list[bool] | None = None

    def __len__(self) -> int:
        return len(self.drafts)

    def rerank_vector(self, i: int) -> np.ndarray | None:
        return None if self.rerank is None else self.rerank[i]

    def english_rerank_vector(self, i: int) -> np.ndarray | None:
        return None if self.english_rerank is None else self.english_rerank[i]

    def pending(self, i: int) -> bool:
        return self.rerank_pending is not None and self.rerank_pending[i]

    def subset(self, keep: Sequence[int]) -> PreparedChunks:
        def pick(values: list[Any] | None) -> list[Any] | None:
            return None if values is None else [values[i] for i in keep]

        return PreparedChunks([self.drafts[i] for i in keep], [self.terms[i] for i in keep],
                              self.embeddings[list(keep)], self.vector_space, pick(self.rerank),
                              pick(self.english_rerank), pick(self.rerank_pending))


# What was said in a conversation happened on a day: its turns and typed memories carry the date
# terms of that day and of the dates they mention ("last Friday"), so "what did she do in July
# 2022" and "when ..." questions match them (memoryhub/timeexpr.py). A document's upload day says
# nothing about its content.
DATED_TYPES = frozenset({Chunk.Type.DIALOG, Chunk.Type.MEMORY})


def _date_terms(draft: ChunkDraft) -> list[str]:
    if draft.type not in DATED_TYPES or draft.created_ts is None:
        return []
    return timeexpr.chunk_terms(draft.text, draft.created_ts)


def _category_terms(draft: ChunkDraft) -> list[str]:
    """The categories of the nouns a turn or memory says ("Rome" → city), so that a question asking
    for a category ("Which cities has Jon visited?") finds them (memoryhub/lexicon.py). Measured on
    conversations only; documents and lore keep their words."""
    return lexicon.chunk_terms(draft.text) if draft.type in DATED_TYPES else []


def storable_terms(terms: list[str]) -> list[str]:
    """The terms a chunk can store: the column holds at most MAX_TERM_CHARS a term, and a longer
    "word" (a data URI, a hash, a run of letters) is no word anyone searches for."""
    return [t for t in terms if len(t) <= MAX_TERM_CHARS]


def chunks_prepare(drafts: Sequence[ChunkDraft], *, embeddings: np.ndarray | None = None,
                   rerank_later: bool = False) -> PreparedChunks:
    """BM25 terms and embeddings of the drafts. Writes nothing and takes no lock: call it before
    opening the transaction that inserts them. `embeddings`: the drafts' vectors when the caller
    already computed them (drafts without prefix or context, whose vector is their text's).
    `rerank_later`: the semantic rerankers' vectors are not computed here; the chunks are stored pending
    and `chunks_rerank_fill` computes them after the commit (the index job of a client's messages)."""
    if not drafts:
        return PreparedChunks([], [], np.zeros((0, settings.EMBEDDING_DIMENSIONS), dtype=np.float32))
    own_terms = analyze_many([f"{d.search_prefix} {d.text}" for d in drafts])
    context_terms = analyze_many([d.context_text for d in drafts])
    terms = [storable_terms(own * OWN_TERM_WEIGHT + ctx + _date_terms(d) + _category_terms(d))
             for d, own, ctx in zip(drafts, own_terms, context_terms, strict=True)]
    if embeddings is None:
        embeddings = _embed(drafts)
    elif any(d.search_prefix or d.context_text for d in drafts) or len(embeddings) != len(drafts):
        raise ValueError("given embeddings are only valid for drafts without prefix or context, one each")
    if rerank_later:
        pending = [_reranked(d) for d in drafts]
        return PreparedChunks(list(drafts), terms, np.asarray(embeddings, dtype=np.float32),
                              rerank_pending=pending if any(pending) else None)
    return PreparedChunks(list(drafts), terms, np.asarray(embeddings, dtype=np.float32),
                          rerank=_rerank_vectors(drafts, english=False),
                          english_rerank=_rerank_vectors(drafts, english=True))


def _reranked(draft: ChunkDraft) -> bool:
    """Whether a reranker that is on stores a vector of the draft (see `_rerank_vectors`)."""
    if draft.type not in DATED_TYPES or draft.meta.get("part"):
        return False
    return (settings.ENGLISH_RERANK if wordvectors.serves(draft.text) else settings.SEMANTIC_RERANK) != "off"


def _rerank_vectors(drafts: Sequence[ChunkDraft], *, english: bool) -> list[np.ndarray | None] | None:
    """A semantic reranker's vectors of the conversation chunks among the drafts (their own text, without
    the preceding turns: a reranker judges what the turn says), or None when it is off. E5's
    (SEMANTIC_RERANK) for the turns the English word vectors do not serve, MiniLM's (ENGLISH_RERANK) for
    those they do: each re-scores the conversation searches of its language, so documents and knowledge
    entries get none, and a turn pays for one model (33–46 ms of CPU for E5, ~12 ms for MiniLM)."""
    if (settings.ENGLISH_RERANK if english else settings.SEMANTIC_RERANK) == "off":
        return None
    # A turn split in parts (longer than CHUNK_MAX_CHARS) is re-scored by its first part's vector alone: the
    # others get the candidates' mean, and a pasted text costs one window, not one a part.
    chosen = [i for i, d in enumerate(drafts) if _reranked(d) and wordvectors.serves(d.text) == english]
    if not chosen:
        return None
    texts = [drafts[i].text for i in chosen]
    matrix = english_rerank_vectors(texts) if english else rerank_vectors(texts)
    if matrix is None:
        return None
    out: list[np.ndarray | None] = [None] * len(drafts)
    for i, row in zip(chosen, matrix, strict=True):
        out[i] = row
    return out


# Columns a chunk write fills, with their types for COPY's binary format ("vector": its oid is
# looked up, see memoryhub.vector_io). Arrays name their element type: the binary array format
# carries it, and PostgreSQL refuses text[] for a varchar[] column.
_COPY_COLUMNS = (
    ("id", "bigint"), ("tenant_id", "bigint"), ("namespace", "varchar"), ("user_id", "varchar"),
    ("type", "varchar"), ("kind", "varchar"), ("source_id", "varchar"), ("session_id", "varchar"),
    ("role", "varchar"), ("speaker", "varchar"), ("text", "text"), ("tokens", "integer"),
    ("terms", "varchar[]"), ("embedding", "vector"), ("importance", "float8"), ("tags", "varchar[]"),
    ("meta", "jsonb"), ("created_ts", "timestamptz"), ("expires_at", "timestamptz"), ("in_hnsw", "bool"),
    ("memory_uid", "uuid"), ("category", "varchar"), ("conf_uid", "varchar"), ("history_uid", "varchar"),
    ("emotion", "varchar"), ("context_window", "varchar"), ("rerank_embedding", "vector"),
    ("english_rerank_embedding", "vector"), ("rerank_pending", "bool"),
)
_COPY_SQL = f"COPY rag_chunk ({', '.join(name for name, _ in _COPY_COLUMNS)}) FROM STDIN (FORMAT BINARY)"


def _chunks_copy(rows: list[Chunk]) -> None:
    """Write new chunk rows with COPY (binary), giving each its id from the table's sequence first.

    Measured on 20 dialog chunks: ~1.4 ms against ~15 ms for the ORM's INSERT, whose client-side
    parameter binding spelled every vector out as text for the server to parse back. The ids are
    drawn in one statement, in increasing order, by the caller holding the namespace lock, so they
    still commit in order within a namespace (see namespace_write_lock)."""
    with connection.cursor() as wrapper:
        wrapper.execute(f"SELECT nextval(pg_get_serial_sequence('rag_chunk', 'id')), {vector_io.VECTOR_OID_SQL} "
                        "FROM generate_series(1, %s)", [len(rows)])
        drawn = sorted(wrapper.fetchall())
    for row, (pk, _) in zip(rows, drawn, strict=True):
        row.pk = pk
    oid = drawn[0][1]
    with connection.cursor() as wrapper, connection.wrap_database_errors:
        cursor = wrapper.cursor  # psycopg's own: Django's wrapper has no COPY
        vector_io.adapt_vectors(cursor, oid)
        with cursor.copy(_COPY_SQL) as copy:
            copy.set_types([oid if kind == "vector" else kind for _, kind in _COPY_COLUMNS])
            for row in rows:
                copy.write_row([Jsonb(row.meta) if name == "meta" else getattr(row, name) for name, _ in _COPY_COLUMNS])
    for row in rows:
        row._state.adding, row._state.db = False, connection.alias


def _indexed_sources(tenant_id: int, sources: Iterable[str]) -> set[str]:
    return set(Chunk.objects.filter(tenant_id=tenant_id, source_id__in=list(sources))
               .values_list("source_id", flat=True).distinct())


# No savepoint when called inside a transaction (the index step, a lore version): a failure rolls
# back the caller's whole transaction anyway, and a savepoint costs two round trips per batch.
@transaction.atomic(savepoint=False)
def chunks_insert(*, tenant: Tenant, namespace: str, prepared: PreparedChunks,
                  skip_indexed_sources: bool = False) -> list[Chunk]:
    """Insert prepared chunks: the namespace lock (held to commit, see namespace_write_lock), the
    namespace's bookkeeping and one COPY. Database work only, so the lock is short.

    `skip_indexed_sources` drops the drafts whose source already has chunks, checked under the
    lock: a retried job, or a re-index meanwhile, must not double them."""
    if not prepared.drafts:
        return []
    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    if skip_indexed_sources:
        already = _indexed_sources(tenant.pk, {d.source_id for d in prepared.drafts})
        if already:
            prepared = prepared.subset([i for i, d in enumerate(prepared.drafts) if d.source_id not in already])
            if not prepared.drafts:
                return []
    state = _namespace_state(tenant, namespace)
    _hnsw_promote(state, len(prepared))
    _vector_space_note(state, prepared.vector_space)
    now = timezone.now()
    rows = [
        Chunk(
            tenant=tenant,
            namespace=namespace,
            user_id=d.user_id,
            type=d.type,
            kind=d.kind,
            source_id=d.source_id,
            session_id=d.session_id,
            role=d.role,
            speaker=d.speaker,
            text=d.text,
            tokens=count_tokens(d.text),
            terms=term_list,
            embedding=vector,
            importance=d.importance,
            tags=list(d.tags),
            meta=d.meta,
            created_ts=d.created_ts or now,
            expires_at=d.expires_at,
            in_hnsw=state.in_hnsw,
            memory_uid=d.memory_uid,
            category=d.category,
            conf_uid=d.conf_uid,
            history_uid=d.history_uid,
            emotion=d.emotion,
            context_window=d.context_window,
            rerank_embedding=prepared.rerank_vector(i),
            english_rerank_embedding=prepared.english_rerank_vector(i),
            rerank_pending=prepared.pending(i),
        )
        for i, (d, term_list, vector) in enumerate(zip(prepared.drafts, prepared.terms, prepared.embeddings,
                                                       strict=True))
    ]
    _chunks_copy(rows)
    state.chunk_count += len(rows)
    state.last_chunk_id = max(c.pk for c in rows)
    state.save(update_fields=["chunk_count", "last_chunk_id", "in_hnsw", "vector_space"])
    if prepared.rerank_pending is not None:
        tenant_id = tenant.pk
        # robust: the chunks are committed and searchable; should the hand-off fail, the sweep finds them.
        transaction.on_commit(lambda: chunks_rerank_fill_enqueue(tenant_id=tenant_id), robust=True)
    return rows


def _vector_space_note(namespace: Namespace, space: str) -> None:
    """Keep `Namespace.vector_space` true for a write of vectors from `space`: an empty namespace
    takes the writer's space; one holding another space's vectors becomes mixed, which searches
    treat as foreign until `reindex` re-embeds it (a process still running the old embedder wrote
    after the switch). A blank (bulk-loaded, unknown) space stays blank."""
    if namespace.chunk_count == 0:
        namespace.vector_space = space
    elif namespace.vector_space and namespace.vector_space != space:
        namespace.vector_space = MIXED_VECTOR_SPACE


def chunks_create(*, tenant: Tenant, namespace: str, drafts: Sequence[ChunkDraft]) -> list[Chunk]:
    """`chunks_prepare` then `chunks_insert`. For callers outside a transaction: inside one that
    holds a lock, the embedding would run under that lock."""
    return chunks_insert(tenant=tenant, namespace=namespace, prepared=chunks_prepare(drafts))


# --- Reranker vectors after the commit ---------------------------------------------------------
# Chunks a fill computes between two writes (LoCoMo turns through MiniLM: 10.3 ms each in batches of 16, 11.6 in
# batches of 64), and how long one fill runs before it hands the rest to a fresh task, so that in the embedded mode
# other deferred work (consolidation, extraction) gets its turn.
RERANK_FILL_BATCH = 16
RERANK_FILL_SECONDS = 10.0


def chunks_rerank_fill_enqueue(*, tenant_id: int) -> bool:
    """Hand the tenant's pending chunks to `chunks_rerank_fill`: a Celery task, or in the embedded mode
    the process's background thread (memoryhub.deferred), where a beat runs to sweep up after a crash;
    without one (tests, management commands) the fill runs here and now, as it did inside the write."""
    from rag.tasks import chunks_rerank_fill_task

    # Every stored batch asks; the fill takes whatever of the tenant is pending when it runs, so one queued
    # fill a tenant is enough (under a sustained intake the others found nothing, a few ms each).
    return deferred.dispatch(chunks_rerank_fill_task, tenant_id, what=f"reranker vectors of tenant {tenant_id}",
                             coalesce=True)


def chunks_rerank_fill(*, tenant_id: int, seconds: float | None = RERANK_FILL_SECONDS) -> int:
    """Compute the semantic rerankers' vectors of the tenant's pending chunks (Chunk.rerank_pending), oldest
    first; returns how many chunks it settled. Call it outside any transaction: the models run between the
    short writes, which hold no lock but the rows' own.

    One runner a tenant (an advisory lock): a second returns at once, and the runner looks again once it let
    go, so a chunk committed meanwhile is not left to the sweep. A chunk erased while its vectors were being
    computed is not found by the write; one whose text changed meanwhile (a sensitive rescan) is not written
    and stays pending, so the next batch computes its new text. `seconds`: after that long it stops and
    enqueues the rest (None: it runs until nothing is pending)."""
    started = time.monotonic()
    settled = 0
    while True:
        with advisory_lock(f"rerank-fill:{tenant_id}", 3) as acquired:
            if not acquired:
                return settled
            while True:
                if seconds is not None and time.monotonic() - started >= seconds:
                    if _rerank_pending(tenant_id).exists():
                        chunks_rerank_fill_enqueue(tenant_id=tenant_id)
                    return settled
                done = _rerank_fill_batch(tenant_id)
                if done is None:
                    break
                settled += done
        if not _rerank_pending(tenant_id).exists():
            return settled


def _rerank_pending(tenant_id: int) -> QuerySet[Chunk]:
    return Chunk.objects.filter(tenant_id=tenant_id, rerank_pending=True)  # chunk_rerank_pending_idx


def _rerank_fill_batch(tenant_id: int) -> int | None:
    """One batch of `chunks_rerank_fill`: the number of chunks settled, None when none was pending."""
    rows = list(_rerank_pending(tenant_id).order_by("id").values_list("id", "type", "text", "meta")
                [:RERANK_FILL_BATCH])
    if not rows:
        return None
    drafts = [ChunkDraft(type=kind, text=text, source_id="", meta=meta) for _, kind, text, meta in rows]
    unset: list[np.ndarray | None] = [None] * len(drafts)  # a reranker that is off stores nothing
    rerank = _rerank_vectors(drafts, english=False) or unset
    english = _rerank_vectors(drafts, english=True) or unset
    # One statement a row, pipelined in one round trip, the vectors sent in binary (memoryhub.vector_io).
    with transaction.atomic(), vector_io.server_cursor() as cursor:
        cursor.executemany(
            "UPDATE rag_chunk SET rerank_embedding = %s::vector, english_rerank_embedding = %s::vector, "
            "rerank_pending = false WHERE id = %s AND rerank_pending AND text = %s",
            [(vector, english_vector, pk, text)
             for vector, english_vector, (pk, _, text, _) in zip(rerank, english, rows, strict=True)])
        return max(cursor.rowcount, 0)


def chunks_rerank_sweep() -> int:
    """Beat: a fill for every tenant with pending chunks (the process that should have run it died, or the
    broker was away). A fill under way holds its tenant's lock, so this starts nothing twice. Returns the
    number of tenants."""
    tenants = list(Chunk.objects.filter(rerank_pending=True).values_list("tenant_id", flat=True)
                   .distinct().order_by())
    for tenant_id in tenants:
        chunks_rerank_fill_enqueue(tenant_id=tenant_id)
    return len(tenants)


@transaction.atomic
def chunks_delete(*, tenant: Tenant, chunks: QuerySet[Chunk]) -> int:
    """Delete chunks and log their ids, so cached BM25 indexes drop them at their next search."""
    victims = list(chunks.filter(tenant=tenant).values_list("id", "namespace"))
    if not victims:
        return 0
    namespaces = sorted({ns for _, ns in victims})  # one lock order for every deleter
    for namespace in namespaces:
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    # Read again under the locks: a concurrent deleter may have taken some, and counting them
    # twice would skew the namespace's chunk count.
    victims = list(Chunk.objects.filter(pk__in=[pk for pk, _ in victims]).values_list("id", "namespace"))
    if not victims:
        return 0
    logged = ChunkDeletion.objects.bulk_create(
        [ChunkDeletion(tenant=tenant, namespace=ns, chunk_id=pk) for pk, ns in victims], batch_size=5000
    )
    Chunk.objects.filter(pk__in=[pk for pk, _ in victims]).delete()
    for namespace in {ns for _, ns in victims}:
        mine = [entry.pk for entry in logged if entry.namespace == namespace]
        Namespace.objects.filter(tenant=tenant, name=namespace).update(
            chunk_count=Greatest(F("chunk_count") - len(mine), 0), last_deletion_id=max(mine))
    return len(victims)


def namespaces_recount(*, tenant: Tenant) -> int:
    """Recompute a tenant's namespace rows from its chunks and deletion log, moving namespaces
    past the exact-scan limit into the HNSW index. For chunks loaded other than through
    chunks_create (a bulk COPY); run it while nothing else writes to the tenant.
    Returns the number of namespaces."""
    chunks = {row["namespace"]: row for row in Chunk.objects.filter(tenant=tenant).values("namespace")
              .annotate(n=Count("id"), last=Max("id")).order_by()}
    deletions = dict(ChunkDeletion.objects.filter(tenant=tenant).values("namespace").annotate(last=Max("id"))
                     .order_by().values_list("namespace", "last"))
    rows = []
    for name in chunks.keys() | deletions.keys():
        count, last = (chunks[name]["n"], chunks[name]["last"]) if name in chunks else (0, 0)
        rows.append(Namespace(tenant=tenant, name=name, chunk_count=count, last_chunk_id=last,
                              last_deletion_id=deletions.get(name, 0), in_hnsw=count > vectors.EXACT_SCAN_MAX_ROWS))
    with transaction.atomic():
        Namespace.objects.bulk_create(rows, batch_size=1000, update_conflicts=True, unique_fields=["tenant", "name"],
                                      update_fields=["chunk_count", "last_chunk_id", "last_deletion_id", "in_hnsw"])
        large = [row.name for row in rows if row.in_hnsw]
        Chunk.objects.filter(tenant=tenant, namespace__in=large, in_hnsw=False).update(in_hnsw=True)
    return len(rows)


# --- Dialogs --------------------------------------------------------------------------------
def _masked_speaker(message: Message) -> str:
    """The turn's speaker as chunks show it: masked whatever SENSITIVE_POLICY is (under `keep` the
    message holds it raw), within the chunk's column."""
    return mask_bounded(message.speaker, max_length=SPEAKER_MAX_LENGTH)[0] if message.speaker else ""


def _speaker(message: Message) -> str:
    return _masked_speaker(message) or message.role


def dialog_drafts(messages: Sequence[Message], history: Sequence[Message], context_turns: int) -> list[ChunkDraft]:
    """One chunk per user/assistant turn. `history` holds the turns just before the batch, so the
    first turns of a batch get their context too. The chunk's text is the turn alone (what a
    prompt shows); its search text prefixes `context_turns` preceding turns, which lets a reply
    like "Yes, last Friday!" be found by what it answers.

    A turn longer than CHUNK_MAX_CHARS becomes several chunks (`meta.part`), each with the same
    context; the context keeps its last CHUNK_MAX_CHARS characters, the words nearest the turn."""
    max_chars = settings.CHUNK_MAX_CHARS
    gap = timedelta(hours=settings.DIALOG_CONTEXT_GAP_HOURS)
    turns = [m for m in (*history, *messages) if m.role != Message.Role.SYSTEM]
    first_new = len([m for m in history if m.role != Message.Role.SYSTEM])
    drafts = []
    for i in range(first_new, len(turns)):
        message = turns[i]
        # Only the turns of the same exchange: in a chat kept as one long session, a turn said days after
        # the one before it does not answer it, and borrowing its words let an unrelated turn match a query.
        context = [m for m in turns[max(0, i - context_turns):i]
                   if message.created_at - m.created_at <= gap] if context_turns else []
        # Masked whatever SENSITIVE_POLICY is: a message kept raw must not leak through search.
        context_text = redact("\n".join(f"{_speaker(m)}: {m.text}" for m in context), where="")[-max_chars:]
        text = redact(message.text, where="chunk")
        pieces = [text] if len(text) <= max_chars else split_bounded(text, max_chars)
        for part, piece in enumerate(pieces):
            drafts.append(ChunkDraft(
                type=Chunk.Type.DIALOG,
                text=piece,
                search_prefix=_speaker(message),
                context_text=context_text,
                source_id=f"message:{message.pk}",
                user_id=message.user_id,
                session_id=message.conversation.session_id,
                role=message.role,
                speaker=_masked_speaker(message),
                created_ts=message.created_at,
                meta={
                    "message_id": message.pk,
                    "external_id": message.external_id,
                    "context_message_ids": [m.pk for m in context],
                    **({"part": part, "parts": len(pieces)} if len(pieces) > 1 else {}),
                    **({"emotion_hint": message.emotion} if message.emotion else {}),
                },
            ))
    return drafts


def _history_before(messages: Sequence[Message], count: int) -> list[Message]:
    if not messages or count <= 0:
        return []
    first = messages[0]
    earlier = (
        Message.objects.filter(conversation_id=first.conversation_id, tenant_id=first.tenant_id)
        .exclude(role=Message.Role.SYSTEM)
        .exclude(pk__in=[m.pk for m in messages])
        .filter(created_at__lte=first.created_at)
        .select_related("conversation")
        .order_by("-created_at", "-id")[:count]
    )
    return list(earlier)[::-1]


def dialog_index_prepare(job: ArchivalJob, messages: Sequence[Message]) -> PreparedChunks:
    """Index step, outside any transaction: the chunks of the batch's turns not yet indexed, with
    their terms and vectors (the embedding may be a remote call).

    A job's first attempt skips the look-up: its chunks commit with its `done`, so only a re-index
    can have indexed its turns, and the check under the lock in `dialog_index_apply` (the one that
    counts) drops those; a retry looks, so as not to embed a large batch again."""
    already = _indexed_sources(job.tenant_id, [f"message:{m.pk}" for m in messages]) if job.attempts else set()
    fresh = [m for m in messages if f"message:{m.pk}" not in already]
    for m in fresh:
        m.conversation = job.conversation
    context_turns = settings.DIALOG_CONTEXT_TURNS
    # The rerankers' vectors come after the commit: a turn is searchable at once, and a chat's messages
    # are not held up by 12-46 ms of model time a turn (chunks_rerank_fill).
    return chunks_prepare(dialog_drafts(fresh, _history_before(fresh, context_turns), context_turns),
                          rerank_later=True)


def dialog_index_apply(job: ArchivalJob, prepared: PreparedChunks) -> dict[str, int]:
    """Index step, in the kernel's write transaction: insert what `dialog_index_prepare` built.

    Checked again under the namespace lock (`skip_indexed_sources`): a job retried after its first
    run committed (a worker killed before recording the step), or a re-index, may have indexed
    some turns meanwhile, and inserting them again would double them."""
    chunks = chunks_insert(tenant=job.tenant, namespace=user_namespace(job.user_id), prepared=prepared,
                           skip_indexed_sources=True)
    return {"chunks": len(chunks)}


def dialog_index_messages(job: ArchivalJob, messages: Sequence[Message]) -> dict[str, int]:
    """Both phases of the index step at once, for callers outside a transaction."""
    return dialog_index_apply(job, dialog_index_prepare(job, messages))


# --- Documents ------------------------------------------------------------------------------
@dataclass
class DocumentInput:
    text: str
    title: str = ""
    format: str = "markdown"
    external_id: str = ""
    tags: list[str] = field(default_factory=list)
    meta: dict[str, Any] = field(default_factory=dict)
    importance: float = 0.5


def _plain_text_pieces(text: str, max_chars: int) -> list[DocumentPiece]:
    """A plain-text document cut as Markdown is, by paragraphs, but with no headings: a line such as
    "# 3 of 5 done" is text. Escaping every "#" kept such lines from being read as headings, and the
    backslashes came back in search and context ("Use \\#hashtags and C\\# code"). Instead a character the
    text does not hold is put before the "#" of each line that would read as a heading, and taken out
    of the pieces: the text comes back exactly as written."""
    guard = next(chr(code) for code in range(0xE000, 0xF900) if chr(code) not in text)  # private use
    guarded = "\n".join(_HEADING_HASH.sub(lambda m: m.group(1) + guard, line) if HEADING.match(line.strip())
                         else line for line in text.splitlines())
    return [DocumentPiece(piece.text.replace(guard, ""), piece.heading_path)
            for piece in split_document(guarded, max_chars=max_chars, bare_headings=True)]


# A line's leading whitespace: the guard goes after it, so stripping a paragraph strips the same as before.
_HEADING_HASH = re.compile(r"^(\s*)(?=#)")


def _document_drafts(document: Document) -> list[ChunkDraft]:
    """The document's chunks, none longer than CHUNK_MAX_CHARS with its heading line included."""
    max_chars = settings.CHUNK_MAX_CHARS
    pieces = (split_document(document.text, max_chars=max_chars, bare_headings=True)
              if document.format == "markdown" else _plain_text_pieces(document.text, max_chars))
    drafts: list[ChunkDraft] = []
    for piece in pieces:
        # Clipped: a title or heading path near the limit would leave no room for the text.
        heading = " / ".join(p for p in (document.title, *piece.heading_path) if p)[:max_chars // 4]
        room = max_chars - len(heading) - 1 if heading else max_chars
        for part_text in [piece.text] if len(piece.text) <= room else split_bounded(piece.text, room):
            drafts.append(ChunkDraft(
                type=Chunk.Type.DOCUMENT,
                text=f"{heading}\n{part_text}" if heading and part_text else heading or part_text,
                source_id=f"document:{document.pk}",
                user_id=document.user_id,
                created_ts=document.created_at,
                importance=document.importance,
                tags=list(document.tags),
                meta={"document_id": document.pk, "part": len(drafts), "headings": list(piece.heading_path)},
            ))
    return drafts


def _document_replace(tenant: Tenant, namespace: str, external_id: str) -> None:
    """Delete the namespace's documents with this external id and their chunks. A job still
    indexing one of them finds its row gone at its next insert and stops.

    Under the namespace lock, held by the caller's transaction until its new row commits: two
    uploads of one id at once (a client retrying after a timeout) otherwise both found nothing
    to replace and both stayed, each with its chunks."""
    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    for old in Document.objects.filter(tenant=tenant, namespace=namespace, external_id=external_id):
        chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(source_id=f"document:{old.pk}"))
        old.delete()


@transaction.atomic
def document_delete(*, tenant: Tenant, document_id: int) -> dict[str, int]:
    """Delete one document of the tenant and its chunks; returns the counts. Its chunks are out of
    search at once (the deletion log tells cached indexes), and a job still indexing it finds its
    row gone at its next insert and stops. Lock order as in the job and in replacement: the
    namespace, then the row."""
    namespace = Document.objects.filter(tenant=tenant, pk=document_id).values_list("namespace", flat=True).first()
    if namespace is None:
        raise NotFound(f"No document {document_id}.", field="document_id")
    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    document = Document.objects.select_for_update(of=("self",)).filter(tenant=tenant, pk=document_id).first()
    if document is None:  # deleted by another request meanwhile
        raise NotFound(f"No document {document_id}.", field="document_id")
    chunks = chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(source_id=f"document:{document.pk}"))
    document.delete()
    logger.info("deleted document %s of tenant %s (%s chunks)", document_id, tenant.pk, chunks)
    return {"documents": 1, "chunks": chunks}


def document_ingest(*, tenant: Tenant, user_id: str | None,
                    document: DocumentInput) -> tuple[Document, int | None, Counter[str]]:
    """Store a document (replacing the one with the same external id) and index its chunks.

    Up to DOCUMENT_SYNC_MAX_CHARS it is chunked and embedded before any transaction opens, then
    stored `ready` with its chunks in one short transaction; returns the chunk count. A longer
    one is stored `pending` and handed to `document_index_task` after commit; the count is then
    None, and the document's status shows the job's progress. Also returns the sensitive numbers
    masked, by kind, as a batch of messages does."""
    if not document.text.strip():
        raise ApplicationError("Document text must not be empty.", field="text")
    namespace = user_namespace(user_id) if user_id else TENANT_NAMESPACE
    # Masked whatever SENSITIVE_POLICY is: a document's only stored form is what its chunks are cut
    # from. The title is every chunk's heading line and the tags are on every chunk and search item,
    # so they are masked like the text. The external id is the client's key for replacing the
    # document: it is kept as sent, as a message's is (memoryhub.services._masked).
    title, in_title = mask_bounded(document.title, max_length=TITLE_MAX_LENGTH, where="document")
    text, in_text = mask_text(document.text, where="document")
    tags, in_tags = mask_tags(document.tags, where="document")
    meta, in_meta = mask_json(document.meta, where="document")
    masked = in_title + in_text + in_tags + in_meta
    stored = Document(
        tenant=tenant, namespace=namespace, user_id=user_id or "", title=title, text=text,
        format=document.format, external_id=document.external_id, tags=tags, meta=meta,
        importance=document.importance,
    )
    if len(document.text) > settings.DOCUMENT_SYNC_MAX_CHARS:
        stored.status = Document.Status.PENDING
        with transaction.atomic():
            if document.external_id:
                _document_replace(tenant, namespace, document.external_id)
            stored.save()
            transaction.on_commit(lambda: document_index_enqueue(document_id=stored.pk))
        return stored, None, masked
    prepared = chunks_prepare(_document_drafts(stored))
    with transaction.atomic():
        if document.external_id:
            _document_replace(tenant, namespace, document.external_id)
        stored.chunks_total = stored.chunks_done = len(prepared)
        stored.save()
        # The drafts were made before the row had an id.
        for draft in prepared.drafts:
            draft.source_id = f"document:{stored.pk}"
            draft.meta["document_id"] = stored.pk
        chunks = chunks_insert(tenant=tenant, namespace=namespace, prepared=prepared)
    return stored, len(chunks), masked


# --- Document jobs (large documents) ----------------------------------------------------------
# Chunks embedded and inserted per round: the progress moves in steps of this size, and each
# insert transaction stays short.
DOCUMENT_INDEX_BATCH = 128


def document_index_enqueue(*, document_id: int) -> bool:
    """Hand a document job to the broker. A broker outage is logged, not raised: the row is
    committed and `documents_sweep` enqueues it again.

    Without a broker the task would run right here, inside the client's `POST` (a 202 sent only
    once the whole document was embedded, still saying `pending`); where the embedded beat runs in
    this process the job goes to its background thread instead (memoryhub.deferred), and the row,
    not ready until done, is the sweep's to run again should the process die first."""
    from rag.tasks import document_index_task

    Document.objects.filter(pk=document_id).update(enqueued_at=timezone.now())
    sent = deferred.dispatch(document_index_task, document_id, what=f"document {document_id}")
    if not sent:  # not sent: the next sweep's to send, not one 5 minutes on (memoryhub.services.archival_job_enqueue)
        Document.objects.filter(pk=document_id).update(enqueued_at=None)
    return sent


def _document_runner(document_id: int) -> AbstractContextManager[bool]:
    """One runner per document across processes (`memoryhub.locks`)."""
    return advisory_lock(f"document-job:{document_id}", 3)


def _document_parts_done(document: Document) -> set[int]:
    return set(Chunk.objects.filter(tenant_id=document.tenant_id, source_id=f"document:{document.pk}")
               .values_list("meta__part", flat=True))


@transaction.atomic
def _document_chunks_insert(document_id: int, prepared: PreparedChunks) -> Document | None:
    """One round of a document job: under the namespace lock and the document's row, insert the
    parts not there yet. None if the document is gone (erased, replaced): nothing is written.
    Lock order as in erasure and replacement: namespace first, then the row."""
    head = Document.objects.filter(pk=document_id).values_list("tenant_id", "namespace").first()
    if head is None:
        return None
    namespace_write_lock(tenant_id=head[0], namespace=head[1])
    document = Document.objects.select_for_update(of=("self",)).select_related("tenant").filter(pk=document_id).first()
    if document is None:
        return None
    done = _document_parts_done(document)
    keep = [i for i, d in enumerate(prepared.drafts) if d.meta["part"] not in done]
    chunks_insert(tenant=document.tenant, namespace=document.namespace, prepared=prepared.subset(keep))
    document.chunks_done = len(done) + len(keep)
    document.save(update_fields=["chunks_done"])
    return document


def _document_update(document_id: int, **fields: Any) -> bool:
    return bool(Document.objects.filter(pk=document_id).update(**fields))


def document_index(*, document_id: int) -> Document | None:
    """The job of a large document: chunk it, then embed and insert its chunks in rounds of
    DOCUMENT_INDEX_BATCH, each embedded outside any transaction and inserted in a short one.
    Resumes after the parts already inserted (a worker killed midway), so running it twice
    indexes nothing twice. A failure is recorded on the row (`failed`, the error, the next
    attempt after a growing delay) for `documents_sweep` to retry."""
    from memoryhub.services import archival_retry_delay

    with _document_runner(document_id) as acquired:
        document = Document.objects.filter(pk=document_id).first()
        if not acquired or document is None or document.status == Document.Status.READY:
            return document
        try:
            drafts = _document_drafts(document)
            done = _document_parts_done(document)
            if not _document_update(document_id, status=Document.Status.INDEXING, chunks_total=len(drafts),
                                    chunks_done=len(done)):
                return None
            todo = [d for d in drafts if d.meta["part"] not in done]
            for offset in range(0, len(todo), DOCUMENT_INDEX_BATCH):
                prepared = chunks_prepare(todo[offset:offset + DOCUMENT_INDEX_BATCH])
                if _document_chunks_insert(document_id, prepared) is None:
                    return None  # erased or replaced meanwhile: what was embedded is dropped
            _document_update(document_id, status=Document.Status.READY, error="")
        except Exception as exc:
            # Every failure is retried (an embedding endpoint away, a bug fixed by a deploy):
            # the raw text is stored, so nothing accepted is lost.
            attempts = document.attempts + 1
            _document_update(document_id, status=Document.Status.FAILED, attempts=attempts,
                             error=f"{type(exc).__name__}: {exc}"[:2000],
                             next_attempt_at=timezone.now() + archival_retry_delay(attempts))
            logger.warning("document %s failed to index (attempt %s): %s", document_id, attempts, exc)
        return Document.objects.filter(pk=document_id).first()


def documents_sweep(*, older_than: timedelta | None = None) -> int:
    """Beat: enqueue every document not yet indexed that is due and not enqueued since: one the
    broker never got, one whose worker died (still `pending` / `indexing` long after its
    enqueue), a failed one whose retry delay has passed. Returns the count."""
    older_than = older_than if older_than is not None else timedelta(seconds=settings.ARCHIVAL_SWEEP_AFTER_SECONDS)
    now = timezone.now()
    stale = list(
        Document.objects.exclude(status=Document.Status.READY).filter(next_attempt_at__lte=now)
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=F("next_attempt_at"))
                | Q(enqueued_at__lt=now - older_than))
        .order_by("id").values_list("id", flat=True)
    )
    for document_id in stale:
        document_index_enqueue(document_id=document_id)
    return len(stale)


# --- Re-indexing from raw inputs -------------------------------------------------------------
def _namespace_rebuild(*, tenant: Tenant, namespace: str, messages: Sequence[Message]) -> tuple[int, int]:
    """Replace a namespace's dialog and document chunks with ones rebuilt from the raw inputs.
    Returns (chunks, documents).

    Embeds first, outside any transaction; then, under the namespace lock, replaces the chunks
    of exactly the sources it rebuilt and drops drafts whose source went meanwhile (erased,
    replaced). Turns that arrived after the read keep the chunks their index job writes, and
    a document still being indexed is left to its job."""
    by_conversation: dict[int, list[Message]] = {}
    for m in messages:
        by_conversation.setdefault(m.conversation_id, []).append(m)
    drafts = [d for turns in by_conversation.values()
              for d in dialog_drafts(turns, [], settings.DIALOG_CONTEXT_TURNS)]
    documents = list(Document.objects.filter(tenant=tenant, namespace=namespace, status=Document.Status.READY))
    for document in documents:
        drafts.extend(_document_drafts(document))
    prepared = chunks_prepare(drafts)
    # Typed memories and insights have no raw input to rebuild from, and other rows refer to their
    # ids (reviews, consolidation): their own text is re-embedded and their terms recomputed in place.
    kept = list(Chunk.objects.filter(tenant=tenant, namespace=namespace,
                                     type__in=[Chunk.Type.MEMORY, Chunk.Type.INSIGHT])
                .order_by("id").values_list("id", "type", "text", "created_ts"))
    kept_prepared = chunks_prepare([ChunkDraft(type=kind, text=text, source_id="", created_ts=ts)
                                    for _, kind, text, ts in kept])
    sources = {d.source_id for d in drafts}
    with transaction.atomic():
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
        chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(
            tenant=tenant, namespace=namespace, type__in=[Chunk.Type.DIALOG, Chunk.Type.DOCUMENT],
            source_id__in=sources))
        live = {f"message:{pk}" for pk in Message.objects.filter(pk__in=[m.pk for m in messages])
                .values_list("pk", flat=True)}
        live |= {f"document:{pk}" for pk in Document.objects.filter(pk__in=[d.pk for d in documents])
                 .values_list("pk", flat=True)}
        keep = [i for i, d in enumerate(prepared.drafts) if d.source_id in live]
        chunks = chunks_insert(tenant=tenant, namespace=namespace, prepared=prepared.subset(keep))
        _chunks_update_in_place([pk for pk, *_ in kept], kept_prepared)
        _namespace_renew(tenant, namespace, prepared.vector_space)
    return len(chunks), len(documents)


def _chunks_update_in_place(ids: list[int], prepared: PreparedChunks) -> None:
    """New terms and vectors for existing chunks whose text is still the one prepared (a chunk
    deleted meanwhile is simply not found)."""
    current = dict(Chunk.objects.filter(pk__in=ids).values_list("pk", "text"))
    rows = [Chunk(pk=pk, terms=terms, embedding=vector, rerank_embedding=prepared.rerank_vector(i),
                  english_rerank_embedding=prepared.english_rerank_vector(i), rerank_pending=False)
            for i, (pk, draft, terms, vector) in enumerate(zip(ids, prepared.drafts, prepared.terms,
                                                               prepared.embeddings, strict=True))
            if current.get(pk) == draft.text]
    Chunk.objects.bulk_update(rows, ["terms", "embedding", "rerank_embedding", "english_rerank_embedding",
                                     "rerank_pending"], batch_size=500)


def _namespace_renew(tenant: Tenant, namespace: str, vector_space: str) -> None:
    """Give the namespace's row a new id, under the namespace lock, once its chunks were changed in
    place: every process's cached BM25 index and chunk store sees a new row id as a new namespace
    and rebuilds it (rag.index, rag.chunk_cache) instead of catching up, which only sees new ids.
    Every vector in it is now `vector_space`'s."""
    old = Namespace.objects.filter(tenant=tenant, name=namespace).first()
    if old is None:
        return
    old.delete()
    old.pk = None
    old.vector_space = vector_space
    old.save(force_insert=True)


def reindex(
    *,
    tenant: Tenant,
    user_ids: Iterable[str],
    include_tenant_documents: bool,
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, int]:
    """Rebuild dialog and document chunks (terms and vectors) from the stored raw inputs, one user
    at a time, each written in its own short transaction after its embedding, so a long re-index
    never holds a lock while it embeds. `progress(1)` after each namespace: every user's, then the
    tenant-wide documents'."""
    from rag import index

    totals = {"users": 0, "chunks": 0, "messages": 0, "documents": 0}
    work = [(user_namespace(u), u) for u in user_ids]
    if include_tenant_documents:
        work.append((TENANT_NAMESPACE, None))
    for namespace, user_id in work:
        messages = list(
            Message.objects.filter(tenant=tenant, user_id=user_id).select_related("conversation")
            .order_by("conversation_id", "created_at", "id")
        ) if user_id is not None else []
        chunks, documents = _namespace_rebuild(tenant=tenant, namespace=namespace, messages=messages)
        index.forget(tenant.pk, namespace)
        totals["chunks"] += chunks
        totals["documents"] += documents
        totals["messages"] += len(messages)
        if user_id is not None:
            totals["users"] += 1
        progress(1)
    return totals


def user_erase(tenant: Tenant, user_id: str) -> dict[str, int]:
    """Eraser: every chunk, document and bookkeeping row of the user.

    Runs after the kernel took the user's write lock (no archival job of the user is mid-write);
    the namespace lock then waits for any other writer of the namespace (a document upload). The
    chunks go without a deletion log: the log would name the erased namespace, and a cached BM25
    index in another process notices the erasure by the namespace row's new id instead
    (rag.index), so it is rebuilt, never caught up with the erased terms."""
    namespace = user_namespace(user_id)
    with transaction.atomic():
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
        chunks, _ = Chunk.objects.filter(tenant=tenant, namespace=namespace).delete()
        deletions, _ = ChunkDeletion.objects.filter(tenant=tenant, namespace=namespace).delete()
        namespaces, _ = Namespace.objects.filter(tenant=tenant, name=namespace).delete()
        documents, _ = Document.objects.filter(tenant=tenant, user_id=user_id).delete()
    # Chunks of the user outside the user's namespace (none are written today; kept for safety).
    chunks += chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(tenant=tenant, user_id=user_id))
    from rag import index

    index.forget(tenant.pk, namespace)
    return {"chunks": chunks, "documents": documents, "chunk_deletions": deletions, "namespaces": namespaces}


def chunks_expire(*, now: datetime | None = None) -> int:
    """Beat: delete chunks past their `expires_at`, tenant by tenant (deletions are logged)."""
    now = now or timezone.now()
    deleted = 0
    for tenant_id in Chunk.objects.filter(expires_at__lte=now).values_list("tenant_id", flat=True).distinct():
        tenant = Tenant.objects.get(pk=tenant_id)
        deleted += chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(tenant=tenant, expires_at__lte=now))
    return deleted
