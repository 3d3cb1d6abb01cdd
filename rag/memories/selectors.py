"""Reads of typed memories."""

from __future__ import annotations

from django.db.models import F, QuerySet

from rag.models import Chunk


def memories_list(
    *,
    tenant_id: int,
    conf_uid: str,
    user_id: str | None = None,
    kind: str | None = None,
    category: str | None = None,
    emotion: str | None = None,
    history_uid: str | None = None,
    tag: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> QuerySet[Chunk]:
    """A character's memories, most important first, then newest. Served by chunk_memory_idx."""
    rows = Chunk.objects.filter(tenant_id=tenant_id, type=Chunk.Type.MEMORY, conf_uid=conf_uid).defer(
        "embedding", "terms")
    for column, value in (("user_id", user_id), ("kind", kind), ("category", category), ("emotion", emotion),
                          ("history_uid", history_uid)):
        if value:
            rows = rows.filter(**{column: value})
    if tag:
        rows = rows.filter(tags__contains=[tag])
    return rows.order_by(F("importance").desc(), F("created_ts").desc(), "-id")[offset:offset + limit]
