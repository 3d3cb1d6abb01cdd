"""Writes of typed memories: create (API and consolidation), near-duplicate reinforcement,
review decisions, erasure.

A typed memory is a `rag.Chunk` of type `memory`, written through `rag.services.chunks_insert`
with its typed columns (so BM25 and vectors see it at once), embedded before the transaction.
Every memory has its own `memory_uid` (a UUID): seed 004's store keyed memories by a derived id,
so two memories could collide and one silently overwrite the other.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest, Least, Round
from django.utils import timezone

from memoryhub import vector_io
from memoryhub.embeddings import get_embedder
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Tenant
from memoryhub.sensitive import mask_bounded, mask_tags, mask_text
from rag.memories.classify import calculate_importance
from rag.memories.vocab import CATEGORIES, KINDS, canonical_emotion
from rag.models import Character, Chunk, MemoryReview, Namespace, user_namespace
from rag.services import (
    ChunkDraft,
    PreparedChunks,
    chunks_delete,
    chunks_insert,
    chunks_prepare,
    namespace_write_lock,
)

logger = logging.getLogger(__name__)

CONTEXT_WINDOW_MAX_LENGTH = Chunk._meta.get_field("context_window").max_length or 200
TAG_MAX_LENGTH = 64  # Chunk.tags and MemoryReview.tags: varchar(64)[]


@dataclass
class MemoryInput:
    text: str
    kind: str
    category: str = "KeyFacts"
    history_uid: str = ""
    importance: float | None = None  # None: calculate_importance(text)
    occurred_at: datetime | None = None  # seed 004's timestamp; None when unknown (never 1970)
    tags: list[str] = field(default_factory=list)
    emotion: str = ""
    context_window: str = ""
    session_id: str = ""
    source_id: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def checked(self) -> MemoryInput:
        """Refuse what the API would refuse, so a consolidator's bad output cannot slip in."""
        if not self.text.strip():
            raise ApplicationError("Memory text must not be empty.", field="text")
        if self.kind not in KINDS:
            raise ApplicationError(f"Unknown kind {self.kind!r}; allowed: {', '.join(KINDS)}.", field="kind")
        if self.category not in CATEGORIES:
            raise ApplicationError(f"Unknown category {self.category!r}; allowed: {', '.join(CATEGORIES)}.",
                                   field="category")
        if self.importance is not None and not 0.0 <= self.importance <= 1.0:
            raise ApplicationError("Importance must be between 0 and 1.", field="importance")
        if self.emotion:
            emotion = canonical_emotion(self.emotion)
            if emotion is None:
                raise ApplicationError(f"Unknown emotion {self.emotion!r}.", field="emotion")
            self.emotion = emotion
        return self

    def masked(self) -> tuple[MemoryInput, Counter[str]]:
        """The item with its sensitive numbers masked, and the count per kind. A typed memory is a
        chunk, and it is stored nowhere else: it is masked whatever SENSITIVE_POLICY is, as chunks
        and documents are. The text, tags and context window are what search, context and the
        tools show. Masking twice changes nothing."""
        text, counts = mask_text(self.text, where="memory")
        tags, found_tags = mask_tags(self.tags, max_length=TAG_MAX_LENGTH, where="memory")
        context_window, found_window = mask_bounded(self.context_window, max_length=CONTEXT_WINDOW_MAX_LENGTH,
                                                    where="memory")
        counts.update(found_tags)
        counts.update(found_window)
        if not counts:
            return self, counts
        return replace(self, text=text, tags=tags, context_window=context_window), counts


def character_ensure(*, tenant: Tenant, conf_uid: str) -> Character:
    character, _ = Character.objects.get_or_create(tenant=tenant, conf_uid=conf_uid)
    return character


def character_get(*, tenant: Tenant | int, conf_uid: str) -> Character:
    tenant_id = tenant if isinstance(tenant, int) else tenant.pk
    character = Character.objects.filter(tenant_id=tenant_id, conf_uid=conf_uid).first()
    if character is None:
        raise NotFound(f"No character {conf_uid!r}.", field="conf_uid")
    return character


def _draft(user_id: str, conf_uid: str, item: MemoryInput, now: datetime) -> ChunkDraft:
    importance = item.importance if item.importance is not None else calculate_importance(item.text)
    uid = uuid.uuid4()
    return ChunkDraft(
        type=Chunk.Type.MEMORY,
        text=item.text.strip(),
        source_id=item.source_id or f"memory:{uid.hex}",
        user_id=user_id,
        session_id=item.session_id or item.history_uid,
        kind=item.kind,
        # No timestamp given: the memory dates from now, never from the epoch.
        created_ts=item.occurred_at or now,
        importance=importance,
        tags=list(item.tags),
        meta={**item.meta, "timestamp_given": item.occurred_at is not None},
        memory_uid=uid, category=item.category, conf_uid=conf_uid, history_uid=item.history_uid,
        emotion=item.emotion, context_window=item.context_window,
    )


def memories_prepare(*, user_id: str, conf_uid: str, items: Sequence[MemoryInput],
                     embeddings: np.ndarray | None = None) -> PreparedChunks:
    """Check the items and compute their chunks' terms and vectors: no write, no lock, so call it
    before the transaction (the embedder may be a remote call). `embeddings`, when the caller
    already has the items' vectors (consolidation's duplicate search), saves embedding them again:
    a memory's chunk vector is its text's."""
    items = [item.checked().masked()[0] for item in items]
    now = timezone.now()
    drafts = [_draft(user_id, conf_uid, item, now) for item in items]
    return chunks_prepare(drafts, embeddings=embeddings)


@transaction.atomic
def memories_insert(*, tenant: Tenant, user_id: str, conf_uid: str, prepared: PreparedChunks) -> list[Chunk]:
    """Write prepared typed memories of one user and character (each a new memory with its own uid)."""
    character_ensure(tenant=tenant, conf_uid=conf_uid)
    return chunks_insert(tenant=tenant, namespace=user_namespace(user_id), prepared=prepared)


def memories_create(*, tenant: Tenant, user_id: str, conf_uid: str, items: Sequence[MemoryInput]) -> list[Chunk]:
    """`memories_prepare` then `memories_insert`, embedding before the transaction opens."""
    prepared = memories_prepare(user_id=user_id, conf_uid=conf_uid, items=items)
    return memories_insert(tenant=tenant, user_id=user_id, conf_uid=conf_uid, prepared=prepared)


def memory_create(*, tenant: Tenant, user_id: str, conf_uid: str, item: MemoryInput, reinforce: bool = False
                  ) -> tuple[Chunk, Counter[str], Reinforcement | None]:
    """One memory (the API's write), with the sensitive numbers masked in it by kind (the
    response's `masked`).

    A client that writes a memory gets a new one, the same text twice included (its own id each). With
    `reinforce`, a near-duplicate of one the user's character holds (`find_duplicates`, as consolidation
    finds them) reinforces that one instead (`memories_reinforce`): the held memory is returned with the
    `Reinforcement`, else None and the new memory."""
    item, masked = item.checked().masked()
    if not reinforce:
        [chunk] = memories_create(tenant=tenant, user_id=user_id, conf_uid=conf_uid, items=[item])
        return chunk, masked, None
    [duplicate], vectors = find_duplicates(tenant_id=tenant.pk, user_id=user_id, conf_uid=conf_uid, texts=[item.text])
    if duplicate is not None:
        duplicate.importance = item.importance
        with transaction.atomic():
            reinforced = memories_reinforce(tenant=tenant, reinforcements=[duplicate], now=timezone.now())
        if reinforced:  # else forgotten meanwhile: written anew below
            return Chunk.objects.get(pk=duplicate.chunk_id), masked, duplicate
    prepared = memories_prepare(user_id=user_id, conf_uid=conf_uid, items=[item], embeddings=vectors)
    [chunk] = memories_insert(tenant=tenant, user_id=user_id, conf_uid=conf_uid, prepared=prepared)
    return chunk, masked, None


# --- Near-duplicates ------------------------------------------------------------------------
@dataclass
class Reinforcement:
    chunk_id: int
    similarity: float
    importance: float | None  # the new item's importance, if it is higher than the held one's


def find_duplicates(*, tenant_id: int, user_id: str, conf_uid: str, texts: Sequence[str]
                    ) -> tuple[list[Reinforcement | None], np.ndarray]:
    """For each text, the memory of this user and character it nearly repeats (cosine at or above
    MEMORY_DUPLICATE_SIMILARITY), or None. Reads and embeds only: call it outside transactions.
    Also returns the texts' vectors.

    One statement for all the texts (an exact scan of the user's memories of that character per
    text, which are few); it was a query per text, each with its vector spelled out as text."""
    if not texts:
        return [], np.zeros((0, settings.EMBEDDING_DIMENSIONS))
    embedded = get_embedder().embed(list(texts))
    out: list[Reinforcement | None] = [None] * len(texts)
    # A text without features embeds to the zero vector, which has no direction (its cosine
    # distance is NaN): it repeats nothing.
    asked = [i for i, vector in enumerate(embedded) if np.any(vector)]
    if not asked:
        return out, embedded
    values = ", ".join(["(%s::integer, %s::vector)"] * len(asked))
    with vector_io.server_cursor() as cursor:
        cursor.execute(
            f"""SELECT q.n, best.id, best.distance FROM (VALUES {values}) AS q(n, v)
                CROSS JOIN LATERAL (
                    SELECT c.id, (c.embedding <=> q.v) + 0 AS distance FROM rag_chunk c
                    WHERE c.tenant_id = %s AND c.namespace = %s AND c.type = %s AND c.conf_uid = %s
                    ORDER BY distance, c.id DESC LIMIT 1) AS best""",
            [*(x for i in asked for x in (i, embedded[i])), tenant_id, user_namespace(user_id), Chunk.Type.MEMORY,
             conf_uid])
        for i, chunk_id, distance in cursor.fetchall():
            similarity = 1.0 - float(distance)
            if similarity >= settings.MEMORY_DUPLICATE_SIMILARITY:
                out[i] = Reinforcement(int(chunk_id), similarity, None)
    return out, embedded


def memories_reinforce(*, tenant: Tenant, reinforcements: Sequence[Reinforcement], now: datetime) -> int:
    """A memory seen again gets more important (by MEMORY_DUPLICATE_IMPORTANCE_STEP, at most 1, or
    up to the repeat's own importance when that is higher) and its last-seen time moves to now.
    Runs inside the caller's transaction."""
    step = settings.MEMORY_DUPLICATE_IMPORTANCE_STEP
    if not reinforcements:
        return 0
    # The namespaces' write locks first, as every chunk writer takes them before their row: the
    # revision bump below tells processes that cache these chunks (rag.chunk_cache) to re-read them.
    namespaces = sorted(set(Chunk.objects.filter(tenant=tenant, pk__in=[r.chunk_id for r in reinforcements],
                                                 type=Chunk.Type.MEMORY).values_list("namespace", flat=True)))
    for namespace in namespaces:
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    done = 0
    for r in reinforcements:
        raised = Greatest(F("importance") + Value(step), Value(r.importance if r.importance is not None else 0.0))
        # Rounded: 0.7 + 0.1 is 0.7999999999999999 in floating point, which shows as 0.8 but is
        # below MEMORY_PROTECTED_IMPORTANCE, so a memory said twice would still be forgotten.
        done += Chunk.objects.filter(tenant=tenant, pk=r.chunk_id, type=Chunk.Type.MEMORY).update(
            importance=Round(Least(Value(1.0), raised), 6), last_seen_at=now)
    Namespace.objects.filter(tenant=tenant, name__in=namespaces).update(memory_revision=F("memory_revision") + 1)
    return done


def memory_edit(*, tenant: Tenant, chunk_id: int, kind: str, category: str, importance: float,
                tags: Sequence[str], editor: str) -> tuple[int, Counter[str]]:
    """An editor's correction of a memory's kind, category, importance and tags (its text is what
    was said, and changing it would need a new vector). Taken under the namespace's write lock with
    the revision bump that memories_reinforce does: processes caching the chunk (rag.chunk_cache)
    re-read these fields, or a filtered search would match the old kind and category.

    Returns the rows updated (0 or 1) and the sensitive numbers masked in the tags, by kind."""
    checked, masked = MemoryInput(text="-", kind=kind, category=category, importance=importance,
                                  tags=list(tags)).checked().masked()
    with transaction.atomic():
        namespace = (Chunk.objects.filter(tenant=tenant, pk=chunk_id, type=Chunk.Type.MEMORY)
                     .values_list("namespace", flat=True).first())
        if namespace is None:
            return 0, Counter()
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
        updated = Chunk.objects.filter(tenant=tenant, pk=chunk_id, type=Chunk.Type.MEMORY).update(
            kind=checked.kind, category=checked.category, importance=importance, tags=checked.tags)
        Namespace.objects.filter(tenant=tenant, name=namespace).update(memory_revision=F("memory_revision") + 1)
    logger.info("typed memory chunk %s edited by %s", chunk_id, editor)
    return updated, masked


def memory_get(*, tenant: Tenant, conf_uid: str, memory_uid: Any) -> Chunk:
    """One typed memory of a character, by its own id; 404 naming `memory_id` otherwise."""
    memory = Chunk.objects.filter(tenant=tenant, type=Chunk.Type.MEMORY, conf_uid=conf_uid,
                                  memory_uid=memory_uid).first()
    if memory is None:
        character_get(tenant=tenant, conf_uid=conf_uid)  # the character, when it is the part at fault
        raise ApplicationError(f"Character {conf_uid!r} has no memory {memory_uid}.", code="not_found",
                               field="memory_id", status_code=404)
    return memory


def memory_forget(*, tenant: Tenant, conf_uid: str, memory_uid: Any) -> int:
    """Delete one typed memory ("forget that"): logged as every chunk deletion is, so cached indexes
    drop it at their next search. Returns 1, or 0 if a concurrent forget took it first."""
    memory = memory_get(tenant=tenant, conf_uid=conf_uid, memory_uid=memory_uid)
    with transaction.atomic():
        return chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk=memory.pk))


# --- Review ---------------------------------------------------------------------------------
def _decided_by(reviewer: Any, actor_label: str | None) -> str:
    if actor_label is not None:
        return actor_label[:200]
    return f"admin:{reviewer.get_username()}" if reviewer is not None else ""


def memory_review_approve(
    *, review: MemoryReview, reviewer: Any, actor_label: str | None = None, reason: str = ""
) -> Chunk | None:
    """Write the reviewed memory (with the editor's kind, importance and tags) and record who did.
    None when the item is no longer pending (another editor decided it first).

    The memory is embedded before the review row is locked (the embedder may be a remote call);
    whether the item is still pending is decided under the lock, so a decision taken meanwhile
    wins and the vector is thrown away."""
    review = MemoryReview.objects.get(pk=review.pk)
    if review.status != MemoryReview.Status.PENDING:
        return None
    prepared = memories_prepare(user_id=review.user_id, conf_uid=review.conf_uid, items=[
        MemoryInput(text=review.text, kind=review.kind, category=review.category, history_uid=review.history_uid,
                    importance=review.importance, occurred_at=review.occurred_at, tags=list(review.tags),
                    emotion=review.emotion, context_window=review.context_window,
                    meta={"review_id": review.pk, "confidence": review.confidence}),
    ])
    with transaction.atomic():
        review = MemoryReview.objects.select_for_update(of=("self",)).select_related("tenant").get(pk=review.pk)
        if review.status != MemoryReview.Status.PENDING:
            return None
        [chunk] = memories_insert(tenant=review.tenant, user_id=review.user_id, conf_uid=review.conf_uid,
                                  prepared=prepared)
        review.status, review.chunk_id = MemoryReview.Status.APPROVED, chunk.pk
        review.reviewer, review.decided_at = reviewer, timezone.now()
        review.decided_by, review.decision_reason = _decided_by(reviewer, actor_label), reason.strip()
        review.save(update_fields=["status", "chunk_id", "reviewer", "decided_at", "decided_by",
                                   "decision_reason"])
    logger.info("memory review %s approved by %s -> chunk %s", review.pk, review.decided_by, chunk.pk)
    return chunk


@transaction.atomic
def memory_review_reject(
    *, review: MemoryReview, reviewer: Any, actor_label: str | None = None, reason: str = ""
) -> bool:
    """False when the item is no longer pending."""
    updated = MemoryReview.objects.filter(pk=review.pk, status=MemoryReview.Status.PENDING).update(
        status=MemoryReview.Status.REJECTED, reviewer=reviewer, decided_at=timezone.now(),
        decided_by=_decided_by(reviewer, actor_label), decision_reason=reason.strip())
    if updated:
        logger.info("memory review %s rejected by %s", review.pk, _decided_by(reviewer, actor_label))
    return bool(updated)


def user_erase(tenant: Tenant, user_id: str) -> dict[str, int]:
    """Eraser: review items, moods and consolidation runs of the user (their memory chunks go with
    the user's namespace in rag's eraser)."""
    from rag.models import CharacterMood, MemoryConsolidation

    reviews, _ = MemoryReview.objects.filter(tenant=tenant, user_id=user_id).delete()
    moods, _ = CharacterMood.objects.filter(tenant=tenant, user_id=user_id).delete()
    runs, _ = MemoryConsolidation.objects.filter(tenant=tenant, user_id=user_id).delete()
    return {"memory_reviews": reviews, "character_moods": moods, "memory_consolidations": runs}
