"""Per-namespace BM25 indexes, cached in process and kept in step with the database.

Each search first catches up: it reads the namespace's row (rag.models.Namespace: its last chunk
id and last deletion id, one unique-key lookup) and only when those moved past what the index
holds, the chunks and deletions in between, applied as a small fresh segment / tombstones. A
search therefore sees a chunk the moment its transaction commits and never pays for a rebuild;
compaction runs on a background thread (`IndexCache.schedule_merge`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from memoryhub import events
from memoryhub.search.bm25 import IndexCache, SegmentedBM25Index
from rag.models import Chunk, ChunkDeletion, Namespace

_cache: IndexCache | None = None
_cache_lock = threading.Lock()


@dataclass
class _State:
    last_deletion_id: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


# Catch-up bookkeeping per namespace, tied to the index object it describes: when the cache
# evicted that index, the pair no longer matches and the namespace is loaded afresh.
_states: dict[Hashable, tuple[SegmentedBM25Index, _State]] = {}


def cache() -> IndexCache:
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = IndexCache(max_bytes=settings.BM25_CACHE_MB * 1024 * 1024)
        return _cache


def _key(tenant_id: int, namespace: str) -> Hashable:
    return (tenant_id, namespace)


def namespace_index(tenant_id: int, namespace: str) -> SegmentedBM25Index:
    """The namespace's BM25 index, current with every committed chunk and deletion."""
    key = _key(tenant_id, namespace)
    index = cache().get(key)
    entry = _states.get(key)
    if index is not None and entry is not None and entry[0] is index:
        state = entry[1]
        with state.lock:
            current = _catch_up(index, state, tenant_id, namespace)
        if current:
            if index.needs_merge():
                cache().schedule_merge(key, index)
            return index
    index, state = _build(tenant_id, namespace)
    _states[key] = (index, state)
    cache().put(key, index)
    return index


def _watermarks(tenant_id: int, namespace: str) -> tuple[int, int] | None:
    """(last chunk id, last deletion id) of the namespace, None if it has no row."""
    return (
        Namespace.objects.filter(tenant_id=tenant_id, name=namespace)
        .values_list("last_chunk_id", "last_deletion_id").first()
    )


def _build(tenant_id: int, namespace: str) -> tuple[SegmentedBM25Index, _State]:
    started = time.monotonic()
    index = SegmentedBM25Index()
    # Read before the chunks: a deletion committed in between is applied again at the next
    # catch-up, which is harmless.
    _, last_deletion_id = _watermarks(tenant_id, namespace) or (0, 0)
    state = _State(last_deletion_id=last_deletion_id)
    rows = Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace).order_by("id").values_list("id", "terms")
    ids: list[int] = []
    terms: list[list[str]] = []
    for pk, chunk_terms in rows.iterator(chunk_size=5000):
        ids.append(pk)
        terms.append(chunk_terms)
    if ids:
        index.add(ids, terms)
        index.merge()  # one large segment from the start
    events.emit("RAG.IndexRebuilt", {
        "namespace": namespace, "count": len(ids), "duration_ms": round((time.monotonic() - started) * 1000, 1),
    })
    return index, state


CATCH_UP_PAGE = 5000


def _pages(queryset: QuerySet, after: int, upto: int, *fields: str) -> Iterator[list[tuple[Any, ...]]]:
    """Rows with `after` < id <= `upto`, in id order, a page at a time (the first field must be
    the id). Bounding both ends keeps any plan cheap, including a walk of the primary key."""
    while after < upto:
        page = list(queryset.filter(id__gt=after, id__lte=upto).order_by("id").values_list(*fields)[:CATCH_UP_PAGE])
        if page:
            yield page
        if len(page) < CATCH_UP_PAGE:
            return
        after = page[-1][0]


def _catch_up(index: SegmentedBM25Index, state: _State, tenant_id: int, namespace: str) -> bool:
    """Apply what was committed since the index last looked; False if it must be rebuilt instead
    (the namespace's row is gone, as after an erasure, while the index still holds chunks)."""
    watermarks = _watermarks(tenant_id, namespace)
    if watermarks is None:
        return len(index) == 0
    last_chunk_id, last_deletion_id = watermarks
    chunks = Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace)
    for rows in _pages(chunks, index.max_doc_id or 0, last_chunk_id, "id", "terms"):
        index.add([pk for pk, _ in rows], [terms for _, terms in rows])
    deletions = ChunkDeletion.objects.filter(tenant_id=tenant_id, namespace=namespace)
    for rows in _pages(deletions, state.last_deletion_id, last_deletion_id, "id", "chunk_id"):
        index.remove([chunk_id for _, chunk_id in rows])
    state.last_deletion_id = max(state.last_deletion_id, last_deletion_id)
    return True


def forget(tenant_id: int, namespace: str) -> None:
    """Drop a cached index (after a bulk rebuild, say); the next search loads it afresh."""
    cache().pop(_key(tenant_id, namespace))
    _states.pop(_key(tenant_id, namespace), None)


def clear() -> None:
    global _cache
    with _cache_lock:
        _cache = None
    _states.clear()
