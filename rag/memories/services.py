"""Writes of typed memories: create (API and consolidation), near-duplicate reinforcement,
review decisions, erasure.

A typed memory is a `rag.Chunk` of type `memory`, written through `rag.services.chunks_create`
(so BM25 and vectors see it at once) and then given its typed columns in the same transaction.
Every memory has its own `memory_uid` (a UUID): seed 004's store keyed memories by a derived id,
so two memories could collide and one silently overwrite the other.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import F, Value
from django.db.models.functions import Greatest, Least
from django.utils import timezone

from memoryhub.embeddings import get_embedder
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Tenant
from memoryhub.search import vectors
from rag.memories.classify import calculate_importance
from rag.memories.vocab import CATEGORIES, KINDS, canonical_emotion
from rag.models import Character, Chunk, MemoryReview, user_namespace
from rag.services import ChunkDraft, chunks_create

logger = logging.getLogger(__name__)

TYPED_FIELDS = ("memory_uid", "category", "conf_uid", "history_uid", "emotion", "context_window", "last_seen_at")


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


def character_ensure(*, tenant: Tenant, conf_uid: str) -> Character:
    character, _ = Character.objects.get_or_create(tenant=tenant, conf_uid=conf_uid)
    return character


def character_get(*, tenant: Tenant | int, conf_uid: str) -> Character:
    tenant_id = tenant if isinstance(tenant, int) else tenant.pk
    character = Character.objects.filter(tenant_id=tenant_id, conf_uid=conf_uid).first()
    if character is None:
        raise NotFound("No such character.")
    return character


def _draft(user_id: str, conf_uid: str, item: MemoryInput, now: datetime) -> ChunkDraft:
    uid = uuid.uuid4()
    importance = item.importance if item.importance is not None else calculate_importance(item.text)
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
        meta={**item.meta, "timestamp_given": item.occurred_at is not None,
              "_typed": {"memory_uid": str(uid), "category": item.category, "conf_uid": conf_uid,
                         "history_uid": item.history_uid, "emotion": item.emotion,
                         "context_window": item.context_window}},
    )


@transaction.atomic
def memories_create(*, tenant: Tenant, user_id: str, conf_uid: str, items: Sequence[MemoryInput]) -> list[Chunk]:
    """Write typed memories of one user and character (each a new memory with its own uid)."""
    items = [item.checked() for item in items]
    character_ensure(tenant=tenant, conf_uid=conf_uid)
    now = timezone.now()
    created = chunks_create(tenant=tenant, namespace=user_namespace(user_id),
                            drafts=[_draft(user_id, conf_uid, item, now) for item in items])
    for chunk in created:
        typed = chunk.meta.pop("_typed")
        for name, value in typed.items():
            setattr(chunk, name, uuid.UUID(value) if name == "memory_uid" else value)
    Chunk.objects.bulk_update(created, ["meta", *TYPED_FIELDS[:-1]])
    return created


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
    Also returns the texts' vectors."""
    if not texts:
        return [], np.zeros((0, settings.EMBEDDING_DIMENSIONS))
    embedded = get_embedder().embed(list(texts))
    held = Chunk.objects.filter(tenant_id=tenant_id, namespace=user_namespace(user_id), type=Chunk.Type.MEMORY,
                                conf_uid=conf_uid)
    out: list[Reinforcement | None] = []
    for vector in embedded:
        # A user's memories of one character are few: the exact scan is the right plan.
        best = vectors.nearest(held, vector, 1, namespace_size=0)
        if best and best[0][1] >= settings.MEMORY_DUPLICATE_SIMILARITY:
            out.append(Reinforcement(best[0][0], best[0][1], None))
        else:
            out.append(None)
    return out, embedded


def memories_reinforce(*, tenant: Tenant, reinforcements: Sequence[Reinforcement], now: datetime) -> int:
    """A memory seen again gets more important (by MEMORY_DUPLICATE_IMPORTANCE_STEP, at most 1, or
    up to the repeat's own importance when that is higher) and its last-seen time moves to now.
    Runs inside the caller's transaction."""
    step = settings.MEMORY_DUPLICATE_IMPORTANCE_STEP
    done = 0
    for r in reinforcements:
        raised = Greatest(F("importance") + Value(step), Value(r.importance if r.importance is not None else 0.0))
        done += Chunk.objects.filter(tenant=tenant, pk=r.chunk_id, type=Chunk.Type.MEMORY).update(
            importance=Least(Value(1.0), raised), last_seen_at=now)
    return done


# --- Review ---------------------------------------------------------------------------------
def _decided_by(reviewer: Any, actor_label: str | None) -> str:
    if actor_label is not None:
        return actor_label[:200]
    return f"admin:{reviewer.get_username()}" if reviewer is not None else ""


@transaction.atomic
def memory_review_approve(
    *, review: MemoryReview, reviewer: Any, actor_label: str | None = None, reason: str = ""
) -> Chunk | None:
    """Write the reviewed memory (with the editor's kind, importance and tags) and record who did.
    None when the item is no longer pending (another editor decided it first)."""
    review = MemoryReview.objects.select_for_update().get(pk=review.pk)
    if review.status != MemoryReview.Status.PENDING:
        return None
    [chunk] = memories_create(tenant=review.tenant, user_id=review.user_id, conf_uid=review.conf_uid, items=[
        MemoryInput(text=review.text, kind=review.kind, category=review.category, history_uid=review.history_uid,
                    importance=review.importance, occurred_at=review.occurred_at, tags=list(review.tags),
                    emotion=review.emotion, context_window=review.context_window,
                    meta={"review_id": review.pk, "confidence": review.confidence}),
    ])
    review.status, review.chunk_id = MemoryReview.Status.APPROVED, chunk.pk
    review.reviewer, review.decided_at = reviewer, timezone.now()
    review.decided_by, review.decision_reason = _decided_by(reviewer, actor_label), reason.strip()
    review.save(update_fields=["status", "chunk_id", "reviewer", "decided_at", "decided_by", "decision_reason"])
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
