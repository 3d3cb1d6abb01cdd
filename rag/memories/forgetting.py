"""Forgetting (beat): typed memories that no longer earn their place are pruned.

- Session memories (categories chat, SessionEvent) go after MEMORY_SESSION_TTL_DAYS, unless their
  history (the session they came from) had a message within that time: an ongoing story keeps them.
- Long-term memories older than MEMORY_PRUNE_AFTER_DAYS and below MEMORY_PRUNE_IMPORTANCE_FLOOR go.
- Nothing at or above MEMORY_PROTECTED_IMPORTANCE is pruned automatically, whatever its age.
Age counts from the last time a memory was seen again, else its timestamp; a memory written
without a timestamp got the time it was stored, never the epoch, so it cannot look 50 years old.
Every prune is counted (metric `memoryhub_memories_pruned_total{reason}`) and logged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Exists, OuterRef, Q, QuerySet
from django.db.models.functions import Coalesce
from django.utils import timezone
from prometheus_client import Counter

from memoryhub.models import Conversation, Tenant
from rag.memories.vocab import SESSION_CATEGORIES
from rag.models import Chunk
from rag.services import chunks_delete

logger = logging.getLogger(__name__)

PRUNED = Counter("memoryhub_memories_pruned_total", "Typed memories pruned by the forgetting beat", ["reason"])


def _prune(candidates: QuerySet[Chunk], reason: str) -> int:
    total = 0
    for tenant_id in candidates.values_list("tenant_id", flat=True).distinct():
        tenant = Tenant.objects.get(pk=tenant_id)
        ids = list(candidates.filter(tenant_id=tenant_id).values_list("id", flat=True))
        deleted = chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk__in=ids))
        total += deleted
        if deleted:
            logger.info("forgetting: %s %s memories of tenant %s pruned", deleted, reason, tenant_id)
    PRUNED.labels(reason).inc(total)
    return total


def memories_forget(*, now: datetime | None = None) -> dict[str, int]:
    now = now or timezone.now()
    memories = (Chunk.objects.filter(type=Chunk.Type.MEMORY)
                .exclude(importance__gte=settings.MEMORY_PROTECTED_IMPORTANCE)
                .annotate(seen=Coalesce("last_seen_at", "created_ts")))
    session_cutoff = now - timedelta(days=settings.MEMORY_SESSION_TTL_DAYS)
    active_history = Conversation.objects.filter(
        tenant_id=OuterRef("tenant_id"), user_id=OuterRef("user_id"), session_id=OuterRef("history_uid"),
        last_message_at__gte=session_cutoff)
    session = (memories.filter(category__in=SESSION_CATEGORIES, seen__lt=session_cutoff)
               .exclude(Exists(active_history)))
    long_cutoff = now - timedelta(days=settings.MEMORY_PRUNE_AFTER_DAYS)
    long_term = (memories.exclude(category__in=SESSION_CATEGORIES)
                 .filter(Q(seen__lt=long_cutoff) & Q(importance__lt=settings.MEMORY_PRUNE_IMPORTANCE_FLOOR)))
    return {"session": _prune(session, "session_ttl"), "long_term": _prune(long_term, "low_importance")}
