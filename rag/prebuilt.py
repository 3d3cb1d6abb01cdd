"""A rag hook for callers that embed before writing (lore): insert chunks whose vectors and BM25
terms are already computed, under the same namespace lock and bookkeeping as `chunks_create`.

Kept apart from rag.services so the two can change independently; it exists because lore re-uses
an earlier version's vectors for unchanged text, and embeds the rest before its transaction opens
(no embedding call while the namespace lock is held).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import transaction
from django.utils import timezone

from memoryhub.models import Tenant
from memoryhub.text import count_tokens
from rag.models import Chunk
from rag.services import ChunkDraft, _hnsw_promote, _namespace_state, namespace_write_lock


@transaction.atomic
def chunks_insert_prebuilt(
    *, tenant: Tenant, namespace: str, drafts: Sequence[ChunkDraft], embeddings: np.ndarray,
    terms: Sequence[list[str]],
) -> list[Chunk]:
    """`drafts[i]` gets `embeddings[i]` (unit length, EMBEDDING_DIMENSIONS wide) and `terms[i]`."""
    if not drafts:
        return []
    if len(drafts) != len(embeddings) or len(drafts) != len(terms):
        raise ValueError("drafts, embeddings and terms must have the same length")
    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
    state = _namespace_state(tenant, namespace)
    _hnsw_promote(state, len(drafts))
    now = timezone.now()
    rows = [
        Chunk(tenant=tenant, namespace=namespace, user_id=d.user_id, type=d.type, kind=d.kind,
              source_id=d.source_id, session_id=d.session_id, role=d.role, speaker=d.speaker, text=d.text,
              tokens=count_tokens(d.text), terms=list(term_list), embedding=vector, importance=d.importance,
              tags=d.tags, meta=d.meta, created_ts=d.created_ts or now, expires_at=d.expires_at,
              in_hnsw=state.in_hnsw)
        for d, term_list, vector in zip(drafts, terms, embeddings, strict=True)
    ]
    created = Chunk.objects.bulk_create(rows, batch_size=1000)
    state.chunk_count += len(created)
    state.last_chunk_id = max(c.pk for c in created)
    state.save(update_fields=["chunk_count", "last_chunk_id", "in_hnsw"])
    return created
