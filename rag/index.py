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
import weakref
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from memoryhub import events, lexicon
from memoryhub.search.bm25 import IndexCache, SegmentedBM25Index
from rag.models import Chunk, ChunkDeletion, Namespace

_cache: IndexCache | None = None
_cache_lock = threading.Lock()


@dataclass
class _State:
    # The id of the namespace row the index was built against: an erasure deletes the row and
    # its deletion log, so a row with another id means "rebuild", never "catch up".
    generation: int = 0
    last_deletion_id: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)


# Catch-up bookkeeping per cached index object. Weak keys: once the cache evicts an index and
# the last search using it returns, index and state are freed together (BM25_CACHE_MB holds).
_states: weakref.WeakKeyDictionary[SegmentedBM25Index, _State] = weakref.WeakKeyDictionary()
_states_lock = threading.Lock()

# Single flight for cold builds: the first search of a namespace builds its index while the
# others wait for it and then use it. Striped, so the locks never grow with the namespaces.
_BUILD_LOCKS = tuple(threading.Lock() for _ in range(64))


def cache() -> IndexCache:
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = IndexCache(max_bytes=settings.BM25_CACHE_MB * 1024 * 1024)
        return _cache


def _key(tenant_id: int, namespace: str) -> Hashable:
    return (tenant_id, namespace)


Watermarks = tuple[int, int, int]  # (namespace row id, last chunk id, last deletion id)
_READ = object()  # "read the watermarks now" (versus ones a caller read for several namespaces)


def _cached(key: Hashable, tenant_id: int, namespace: str, watermarks: Any = _READ) -> SegmentedBM25Index | None:
    """The cached index brought up to date, or None when there is none or it must be rebuilt.
    `watermarks`: the namespace's row as read just before (None: no row), or read here."""
    index = cache().get(key)
    if index is None:
        return None
    with _states_lock:
        state = _states.get(index)
    if state is None:
        return None
    with state.lock:
        if watermarks is _READ:
            watermarks = _watermarks(tenant_id, namespace)
        current = _catch_up(index, state, tenant_id, namespace, watermarks)
    if not current:
        return None
    if index.needs_merge():
        cache().schedule_merge(key, index)
    return index


def namespace_index(tenant_id: int, namespace: str) -> SegmentedBM25Index:
    """The namespace's BM25 index, current with every committed chunk and deletion."""
    return namespace_indexes(tenant_id, [namespace])[0]


def namespace_indexes(tenant_id: int, namespaces: list[str]) -> list[SegmentedBM25Index]:
    """The BM25 indexes of several namespaces (a search's user and tenant ones), current with every
    committed chunk and deletion. Their watermarks are read in one query: it is the one query a
    search pays here when nothing changed."""
    return namespace_indexes_and_watermarks(tenant_id, namespaces)[0]


# Every search reads this row and nothing else from the database when its chunks are cached, so it is read
# in SQL: building the same statement through the ORM cost ~1.0 ms of a search's ~12 (the query itself ~0.3 ms;
# bench/search_latency.py, stage `catch_up`).
_WATERMARKS_SQL = (
    'SELECT "name", "id", "last_chunk_id", "last_deletion_id", "memory_revision", "vector_space" '
    f'FROM "{Namespace._meta.db_table}" WHERE "tenant_id" = %s AND "name" = ANY(%s)'
)


def namespace_indexes_and_watermarks(
    tenant_id: int, namespaces: list[str]
) -> tuple[list[SegmentedBM25Index], dict[str, tuple[int, int, int, int]], dict[str, str]]:
    """As `namespace_indexes`, with the watermarks they were caught up to and the namespace's
    memory revision (a namespace without a row is absent), so that rag.chunk_cache catches up to
    the same ones without reading them again, and each namespace's vector space."""
    with connection.cursor() as cursor:
        cursor.execute(_WATERMARKS_SQL, [tenant_id, list(namespaces)])
        rows = cursor.fetchall()
    marks: dict[str, tuple[int, int, int, int]] = {}
    spaces: dict[str, str] = {}
    for name, pk, last_chunk, last_deletion, revision, space in rows:
        marks[name] = (pk, last_chunk, last_deletion, revision)
        spaces[name] = space
    indexes = [_current(tenant_id, namespace, marks[namespace][:3] if namespace in marks else None)
               for namespace in namespaces]
    return indexes, marks, spaces


def _current(tenant_id: int, namespace: str, watermarks: Watermarks | None) -> SegmentedBM25Index:
    key = _key(tenant_id, namespace)
    index = _cached(key, tenant_id, namespace, watermarks)
    if index is not None:
        return index
    with _BUILD_LOCKS[hash(key) % len(_BUILD_LOCKS)]:
        index = _cached(key, tenant_id, namespace)  # built by the search we waited for
        if index is not None:
            return index
        index, state = _build(tenant_id, namespace)
        with _states_lock:
            _states[index] = state
        cache().put(key, index)
        return index


def _watermarks(tenant_id: int, namespace: str) -> Watermarks | None:
    """(row id, last chunk id, last deletion id) of the namespace, None if it has no row."""
    return (
        Namespace.objects.filter(tenant_id=tenant_id, name=namespace)
        .values_list("id", "last_chunk_id", "last_deletion_id").first()
    )


def _build(tenant_id: int, namespace: str) -> tuple[SegmentedBM25Index, _State]:
    started = time.monotonic()
    index = SegmentedBM25Index(lengthless_prefix=lexicon.CATEGORY_PREFIX)
    # Read before the chunks: a deletion committed in between is applied again at the next
    # catch-up, which is harmless.
    generation, _, last_deletion_id = _watermarks(tenant_id, namespace) or (0, 0, 0)
    state = _State(generation=generation, last_deletion_id=last_deletion_id)
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


def _catch_up(index: SegmentedBM25Index, state: _State, tenant_id: int, namespace: str,
              watermarks: Watermarks | None) -> bool:
    """Apply what was committed up to `watermarks` (the namespace's row, read just before) since
    the index last looked; False if it must be rebuilt instead: the namespace's row is gone while
    the index still holds chunks, or the row is a new one (the namespace was erased, and perhaps
    written again, since the index was built)."""
    if watermarks is None:
        return len(index) == 0 and state.generation == 0
    generation, last_chunk_id, last_deletion_id = watermarks
    if generation != state.generation:
        return False
    # Most searches find nothing new: no queryset is even built then (two cost ~3% of a search).
    if (index.max_doc_id or 0) < last_chunk_id:
        chunks = Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace)
        for rows in _pages(chunks, index.max_doc_id or 0, last_chunk_id, "id", "terms"):
            index.add([pk for pk, _ in rows], [terms for _, terms in rows])
    if state.last_deletion_id < last_deletion_id:
        deletions = ChunkDeletion.objects.filter(tenant_id=tenant_id, namespace=namespace)
        for rows in _pages(deletions, state.last_deletion_id, last_deletion_id, "id", "chunk_id"):
            index.remove([chunk_id for _, chunk_id in rows])
        state.last_deletion_id = last_deletion_id
    return True


def forget(tenant_id: int, namespace: str) -> None:
    """Drop a cached index and chunk store (after a bulk rebuild, say); the next search loads them afresh."""
    from rag import chunk_cache

    cache().pop(_key(tenant_id, namespace))
    chunk_cache.forget(tenant_id, namespace)


def clear() -> None:
    global _cache
    from rag import chunk_cache

    with _cache_lock:
        if _cache is not None:
            _cache.close()
        _cache = None
    with _states_lock:
        _states.clear()
    chunk_cache.clear()
