"""Writes of rag: chunks (from dialogs, documents, memories), their deletion, re-indexing."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count, F, Max, QuerySet
from django.db.models.functions import Greatest
from django.utils import timezone

from memoryhub.embeddings import get_embedder, l2_normalize
from memoryhub.exceptions import ApplicationError
from memoryhub.models import ArchivalJob, Message, Tenant
from memoryhub.search import vectors
from memoryhub.sensitive import redact
from memoryhub.text import analyze_many, count_tokens
from rag.chunking import split_document
from rag.models import TENANT_NAMESPACE, Chunk, ChunkDeletion, Document, Namespace, user_namespace

logger = logging.getLogger(__name__)

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


@transaction.atomic
def chunks_create(*, tenant: Tenant, namespace: str, drafts: Sequence[ChunkDraft]) -> list[Chunk]:
    if not drafts:
        return []
    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    state = _namespace_state(tenant, namespace)
    _hnsw_promote(state, len(drafts))
    own_terms = analyze_many([f"{d.search_prefix} {d.text}" for d in drafts])
    context_terms = analyze_many([d.context_text for d in drafts])
    terms = [own * OWN_TERM_WEIGHT + ctx for own, ctx in zip(own_terms, context_terms, strict=True)]
    embeddings = _embed(drafts)
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
            tags=d.tags,
            meta=d.meta,
            created_ts=d.created_ts or now,
            expires_at=d.expires_at,
            in_hnsw=state.in_hnsw,
        )
        for d, term_list, vector in zip(drafts, terms, embeddings, strict=True)
    ]
    created = Chunk.objects.bulk_create(rows, batch_size=1000)
    state.chunk_count += len(created)
    state.last_chunk_id = max(c.pk for c in created)
    state.save(update_fields=["chunk_count", "last_chunk_id", "in_hnsw"])
    return created


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
def _speaker(message: Message) -> str:
    return message.speaker or message.role


def dialog_drafts(messages: Sequence[Message], history: Sequence[Message], context_turns: int) -> list[ChunkDraft]:
    """One chunk per user/assistant turn. `history` holds the turns just before the batch, so the
    first turns of a batch get their context too. The chunk's text is the turn alone (what a
    prompt shows); its search text prefixes `context_turns` preceding turns, which lets a reply
    like "Yes, last Friday!" be found by what it answers."""
    turns = [m for m in (*history, *messages) if m.role != Message.Role.SYSTEM]
    first_new = len([m for m in history if m.role != Message.Role.SYSTEM])
    drafts = []
    for i in range(first_new, len(turns)):
        message = turns[i]
        context = turns[max(0, i - context_turns):i] if context_turns else []
        drafts.append(ChunkDraft(
            type=Chunk.Type.DIALOG,
            text=redact(message.text, where="chunk"),
            search_prefix=_speaker(message),
            context_text=redact("\n".join(f"{_speaker(m)}: {m.text}" for m in context), where=""),
            source_id=f"message:{message.pk}",
            user_id=message.user_id,
            session_id=message.conversation.session_id,
            role=message.role,
            speaker=message.speaker,
            created_ts=message.created_at,
            meta={
                "message_id": message.pk,
                "external_id": message.external_id,
                "context_message_ids": [m.pk for m in context],
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


def dialog_index_messages(job: ArchivalJob, messages: Sequence[Message]) -> dict[str, int]:
    """Archival step: every stored batch becomes searchable dialog chunks at once."""
    already = set(
        Chunk.objects.filter(tenant_id=job.tenant_id, source_id__in=[f"message:{m.pk}" for m in messages])
        .values_list("source_id", flat=True)
    )
    fresh = [m for m in messages if f"message:{m.pk}" not in already]
    for m in fresh:
        m.conversation = job.conversation
    context_turns = settings.DIALOG_CONTEXT_TURNS
    drafts = dialog_drafts(fresh, _history_before(fresh, context_turns), context_turns)
    chunks = chunks_create(tenant=job.tenant, namespace=user_namespace(job.user_id), drafts=drafts)
    return {"chunks": len(chunks)}


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


def _document_drafts(document: Document) -> list[ChunkDraft]:
    pieces = split_document(document.text) if document.format == "markdown" else split_document(
        document.text.replace("#", "\\#")
    )
    drafts = []
    for n, piece in enumerate(pieces):
        heading = " / ".join(p for p in (document.title, *piece.heading_path) if p)
        drafts.append(ChunkDraft(
            type=Chunk.Type.DOCUMENT,
            text=f"{heading}\n{piece.text}" if heading else piece.text,
            source_id=f"document:{document.pk}",
            user_id=document.user_id,
            created_ts=document.created_at,
            importance=document.importance,
            tags=list(document.tags),
            meta={"document_id": document.pk, "part": n, "headings": list(piece.heading_path)},
        ))
    return drafts


@transaction.atomic
def document_ingest(*, tenant: Tenant, user_id: str | None, document: DocumentInput) -> tuple[Document, int]:
    """Store a document (replacing the one with the same external id) and index its chunks."""
    if not document.text.strip():
        raise ApplicationError("Document text must not be empty.", field="text")
    namespace = user_namespace(user_id) if user_id else TENANT_NAMESPACE
    if document.external_id:
        for old in Document.objects.filter(tenant=tenant, namespace=namespace, external_id=document.external_id):
            chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(source_id=f"document:{old.pk}"))
            old.delete()
    stored = Document.objects.create(
        tenant=tenant, namespace=namespace, user_id=user_id or "", title=document.title,
        text=redact(document.text, where="document"),
        format=document.format, external_id=document.external_id, tags=document.tags, meta=document.meta,
        importance=document.importance,
    )
    chunks = chunks_create(tenant=tenant, namespace=namespace, drafts=_document_drafts(stored))
    return stored, len(chunks)


# --- Re-indexing from raw inputs -------------------------------------------------------------
def _namespace_rebuild(*, tenant: Tenant, namespace: str, messages: Sequence[Message]) -> tuple[int, int]:
    """Replace a namespace's dialog and document chunks with ones rebuilt from the raw inputs.
    Returns (chunks, documents)."""
    derived = Chunk.objects.filter(tenant=tenant, namespace=namespace, type__in=[Chunk.Type.DIALOG,
                                                                                 Chunk.Type.DOCUMENT])
    chunks_delete(tenant=tenant, chunks=derived)
    by_conversation: dict[int, list[Message]] = {}
    for m in messages:
        by_conversation.setdefault(m.conversation_id, []).append(m)
    drafts = [d for turns in by_conversation.values()
              for d in dialog_drafts(turns, [], settings.DIALOG_CONTEXT_TURNS)]
    documents = list(Document.objects.filter(tenant=tenant, namespace=namespace))
    for document in documents:
        drafts.extend(_document_drafts(document))
    return len(chunks_create(tenant=tenant, namespace=namespace, drafts=drafts)), len(documents)


def reindex(
    *,
    tenant: Tenant,
    user_ids: Iterable[str],
    include_tenant_documents: bool,
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, int]:
    """Rebuild dialog and document chunks (terms and vectors) from the stored raw inputs, one user
    at a time, each in its own transaction so a long re-index never holds one huge lock."""
    from rag import index

    totals = {"users": 0, "chunks": 0, "messages": 0, "documents": 0}
    work = [(user_namespace(u), u) for u in user_ids]
    if include_tenant_documents:
        work.append((TENANT_NAMESPACE, None))
    for namespace, user_id in work:
        with transaction.atomic():
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
