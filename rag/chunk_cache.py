"""The chunks of small namespaces in process: their vectors as one matrix and the fields a search
result shows, kept in step with the database exactly like the BM25 indexes (rag.index).

A namespace of up to `vectors.EXACT_SCAN_MAX_ROWS` chunks was scanned exactly by PostgreSQL on
every search, and its results then read back by id: under load those two queries (and the
feedback step's read of the best BM25 hits' vectors, and a filtered search's read of the ids it
may return) were about a third of a search's time. Here the scan is a matrix product over at
most 2,000 rows, and the rows are at hand.

Correctness: a store is caught up against the same namespace row (`rag.models.Namespace`) the
BM25 index of the search was caught up against, read once for both: chunks committed up to its
`last_chunk_id` are added, deletions up to its `last_deletion_id` removed (erasure, TTL expiry,
re-index: every chunk deletion is logged, see rag.services.chunks_delete), and a namespace row
with another id (the namespace was erased, perhaps written again) means "rebuild". Expiry is
checked against the search's own clock. A chunk's fields do not change after it is written, with
one exception: typed memories. One seen again gets a new `importance` and `last_seen_at`
(rag.memories.services.memories_reinforce), and an editor may correct its `kind`, `category`,
`importance` and `tags` (memory_edit); both move the row's `memory_revision` in the same
transaction, and a store that sees it move re-reads those fields of its memories.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np
from django.conf import settings

from memoryhub import vector_io
from memoryhub.search import vectors
from rag.models import Chunk, ChunkDeletion

# Changed after a chunk is written (memories_reinforce, memory_edit), for typed memories only.
MUTABLE_FIELDS = ("importance", "last_seen_at", "kind", "category", "tags")
Watermarks = tuple[int, int, int, int]  # namespace row id, last chunk id, last deletion id, memory revision

# A row dict with its ~25 fields costs about this much besides its text and meta (measured with
# sys.getsizeof over the dict and its values); an estimate is enough to bound the cache.
_ROW_OVERHEAD_BYTES = 2_000

@dataclass(frozen=True)
class _Snapshot:
    """What a search reads, replaced whole by a catch-up, so a reader never sees ids of one
    version with vectors of another."""

    ids: np.ndarray  # int64, sorted
    matrix: np.ndarray  # float32, a row per id, as stored
    inverse_norms: np.ndarray  # float32, 0 for a zero vector (no direction: never a neighbour)
    expires: np.ndarray  # float64 timestamps, inf for none
    rows: dict[int, dict[str, Any]]
    # Filter masks by SearchFilters (frozen, hashable), filled as searches ask; expiry is applied per search.
    masks: dict[Any, np.ndarray] = field(default_factory=dict)


def _empty() -> _Snapshot:
    dims = int(settings.EMBEDDING_DIMENSIONS)
    return _Snapshot(np.zeros(0, dtype=np.int64), np.zeros((0, dims), dtype=np.float32),
                     np.zeros(0, dtype=np.float32), np.zeros(0, dtype=np.float64), {})


@dataclass
class ChunkStore:
    """One namespace's chunks as of its namespace row `generation` / `last_deletion_id`."""

    generation: int
    last_deletion_id: int
    memory_revision: int = 0
    max_id: int = 0
    snap: _Snapshot = field(default_factory=_empty)
    lock: threading.Lock = field(default_factory=threading.Lock)
    nbytes: int = 0

    def __len__(self) -> int:
        return int(self.snap.ids.size)

    def add(self, rows: list[dict[str, Any]]) -> None:
        if not rows:
            return
        snap = self.snap
        new = np.zeros((len(rows), snap.matrix.shape[1]), dtype=np.float32)
        added: dict[int, dict[str, Any]] = {}
        for i, row in enumerate(rows):
            vector = row.pop("embedding")
            if vector is not None:
                new[i] = vector
            added[row["id"]] = row
        norms = np.linalg.norm(new, axis=1)
        inverse = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0).astype(np.float32)
        ids = np.concatenate([snap.ids, np.fromiter(added, dtype=np.int64, count=len(rows))])
        expires = np.concatenate([snap.expires, np.fromiter((_timestamp(row["expires_at"]) for row in rows),
                                                            dtype=np.float64, count=len(rows))])
        matrix = np.concatenate([snap.matrix, new])
        inverse = np.concatenate([snap.inverse_norms, inverse])
        order = np.argsort(ids, kind="stable")
        self.snap = _Snapshot(ids[order], matrix[order], inverse[order], expires[order], {**snap.rows, **added})
        self.max_id = max(self.max_id, int(self.snap.ids[-1]))
        self._measure()

    def remove(self, chunk_ids: Iterable[int]) -> None:
        snap = self.snap
        gone = {int(pk) for pk in chunk_ids} & snap.rows.keys()
        if not gone:
            return
        keep = ~np.isin(snap.ids, np.fromiter(gone, dtype=np.int64, count=len(gone)))
        rows = {pk: row for pk, row in snap.rows.items() if pk not in gone}
        self.snap = _Snapshot(snap.ids[keep], snap.matrix[keep], snap.inverse_norms[keep], snap.expires[keep], rows)
        self._measure()

    def refresh(self, current: dict[int, tuple[Any, ...]]) -> None:
        """New MUTABLE_FIELDS values by id (those of rows it holds): changed rows are replaced, not
        changed in place, since a search may be reading the old ones."""
        snap = self.snap
        changed = {}
        for pk, values in current.items():
            row = snap.rows.get(pk)
            if row is not None and tuple(row[f] for f in MUTABLE_FIELDS) != tuple(values):
                changed[pk] = {**row, **dict(zip(MUTABLE_FIELDS, values, strict=True))}
        if changed:
            self.snap = _Snapshot(snap.ids, snap.matrix, snap.inverse_norms, snap.expires, {**snap.rows, **changed})

    def _measure(self) -> None:
        snap = self.snap
        self.nbytes = (snap.ids.nbytes + snap.expires.nbytes + snap.matrix.nbytes + snap.inverse_norms.nbytes
                       + sum(_ROW_OVERHEAD_BYTES + len(r["text"]) * 2 for r in snap.rows.values()))

    def allowed(self, filters: Any, now: datetime) -> np.ndarray:
        """A mask of the rows a search may return: not expired, and when `filters`
        (rag.selectors.SearchFilters) say so, matching them with SQL's semantics (a NULL column
        matches no condition on it)."""
        snap = self.snap
        live = snap.expires > now.timestamp()
        if not filters:
            return live
        found = snap.masks.get(filters)
        if found is None:
            found = np.fromiter((chunk_matches(snap.rows[int(pk)], filters) for pk in snap.ids), dtype=bool,
                                count=snap.ids.size)
            if len(snap.masks) > 64:  # a client may vary its filters: bound what is kept
                snap.masks.clear()
            snap.masks[filters] = found
        return found & live

    def ids(self, allowed: np.ndarray | None = None) -> np.ndarray:
        return self.snap.ids if allowed is None else self.snap.ids[allowed]

    def nearest(self, vector: np.ndarray, n: int, allowed: np.ndarray | None) -> list[tuple[int, float]]:
        """Top-n (id, cosine similarity) among the allowed rows, as the exact scan in PostgreSQL
        orders them (similarity, then the newer id on a tie)."""
        snap = self.snap
        if not snap.ids.size or n <= 0:
            return []
        q = np.asarray(vector, dtype=np.float32)
        norm = float(np.linalg.norm(q))
        if not norm:
            return []
        # einsum, not `@`: a matrix-vector product of this size goes to a multi-threaded BLAS,
        # whose threads wait for a core on a busy machine (p99 12 ms against 4 measured here, and
        # their spinning doubled a search's CPU time); einsum's own loop stays on this thread.
        sims = np.einsum("ij,j->i", snap.matrix, q / norm) * snap.inverse_norms
        # A zero vector has no direction (PostgreSQL's cosine distance to it is NaN): never a neighbour.
        usable = snap.inverse_norms > 0
        if allowed is not None:
            usable &= allowed
        sims, ids = sims[usable], snap.ids[usable]
        if sims.size > n:
            part = np.argpartition(-sims, n - 1)[:n]
            # Rows tied with the n-th are all kept, so the tie-break below sees them all.
            part = np.flatnonzero(sims >= sims[part].min())
            sims, ids = sims[part], ids[part]
        order = np.lexsort((-ids, -sims))[:n]
        return [(int(ids[i]), float(sims[i])) for i in order]

    def vectors(self, chunk_ids: list[int]) -> dict[int, np.ndarray]:
        snap = self.snap
        positions = np.searchsorted(snap.ids, chunk_ids)
        return {pk: snap.matrix[p] for pk, p in zip(chunk_ids, positions, strict=True)
                if p < snap.ids.size and snap.ids[p] == pk}

    def row(self, chunk_id: int) -> dict[str, Any] | None:
        return self.snap.rows.get(chunk_id)

    def following(self, chunk_id: int, n: int) -> list[dict[str, Any]]:
        """The rows of the `n` chunks after `chunk_id` by id (a namespace's chunks are written in order)."""
        snap = self.snap
        start = int(np.searchsorted(snap.ids, chunk_id, side="right"))
        return [snap.rows[int(pk)] for pk in snap.ids[start:start + n]]


def _timestamp(value: datetime | None) -> float:
    return np.inf if value is None else value.timestamp()


def chunk_matches(row: dict[str, Any], filters: Any) -> bool:
    """Whether a chunk (a search item's fields) passes `filters` (rag.selectors.SearchFilters), with
    SQL's semantics: a NULL column matches no condition on it."""
    if filters.types and row["type"] not in filters.types:
        return False
    if filters.kinds and row["kind"] not in filters.kinds:
        return False
    if filters.tags and not set(filters.tags) & set(row["tags"] or ()):
        return False
    if filters.session_id and row["session_id"] != filters.session_id:
        return False
    created = row["created_ts"]
    if filters.created_after and (created is None or created < filters.created_after):
        return False
    if filters.created_before and (created is None or created > filters.created_before):
        return False
    for column, values in (("category", filters.categories), ("emotion", filters.emotions),
                           ("conf_uid", filters.conf_uids), ("history_uid", filters.history_uids)):
        if values and (row[column] is None or row[column] not in values):
            return False
    return True


class StoreCache:
    """LRU of stores by (tenant, namespace), bounded by CHUNK_CACHE_MB. The most recently used
    store is never evicted (as in the BM25 cache): dropping it would rebuild it on every search."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._entries: OrderedDict[Hashable, ChunkStore] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: Hashable) -> ChunkStore | None:
        with self._lock:
            store = self._entries.get(key)
            if store is not None:
                self._entries.move_to_end(key)
            return store

    def put(self, key: Hashable, store: ChunkStore) -> None:
        with self._lock:
            self._entries[key] = store
            self._entries.move_to_end(key)
            self._evict()

    def pop(self, key: Hashable) -> None:
        with self._lock:
            self._entries.pop(key, None)

    def touch(self) -> None:
        """Sizes change as stores catch up: evict again after one did."""
        with self._lock:
            self._evict()

    def _evict(self) -> None:
        total = sum(s.nbytes for s in self._entries.values())
        while total > self.max_bytes and len(self._entries) > 1:
            _, store = self._entries.popitem(last=False)
            total -= store.nbytes

    def __len__(self) -> int:
        return len(self._entries)


_cache: StoreCache | None = None
_cache_lock = threading.Lock()
_BUILD_LOCKS = tuple(threading.Lock() for _ in range(64))


def cache() -> StoreCache:
    global _cache
    with _cache_lock:
        if _cache is None:
            _cache = StoreCache(max_bytes=settings.CHUNK_CACHE_MB * 1024 * 1024)
        return _cache


def clear() -> None:
    global _cache
    with _cache_lock:
        _cache = None


def forget(tenant_id: int, namespace: str) -> None:
    cache().pop((tenant_id, namespace))


def namespace_store(tenant_id: int, namespace: str, watermarks: Watermarks | None, size: int) -> ChunkStore | None:
    """The namespace's store, current with `watermarks` (its row as the search read it; None: no
    row), or None when the namespace is too large to be scanned exactly (`size`: its chunk count
    as the BM25 index caught up to the same watermarks counts it)."""
    key = (tenant_id, namespace)
    if settings.CHUNK_CACHE_MB <= 0:
        return None
    if size > vectors.EXACT_SCAN_MAX_ROWS:
        cache().pop(key)  # grew past it: PostgreSQL's HNSW search takes over
        return None
    store = cache().get(key)
    if store is not None and _caught_up(store, tenant_id, namespace, watermarks):
        return store
    with _BUILD_LOCKS[hash(key) % len(_BUILD_LOCKS)]:
        store = cache().get(key)  # built by the search we waited for
        if store is not None and _caught_up(store, tenant_id, namespace, watermarks):
            return store
        store = _build(tenant_id, namespace, watermarks)
        cache().put(key, store)
        return store


def _build(tenant_id: int, namespace: str, watermarks: Watermarks | None) -> ChunkStore:
    # The rows are read after the watermarks: at least as new as they say.
    generation, last_chunk_id, last_deletion_id, revision = watermarks or (0, 0, 0, 0)
    store = ChunkStore(generation=generation, last_deletion_id=last_deletion_id, memory_revision=revision)
    if watermarks is not None:
        store.add(_rows(tenant_id, namespace, 0, last_chunk_id))
        store.max_id = max(store.max_id, last_chunk_id)
    return store


def _rows(tenant_id: int, namespace: str, after: int, upto: int) -> list[dict[str, Any]]:
    """Chunks with `after` < id <= `upto` (bounded both ends, as rag.index reads them), their
    vectors read in binary (vector_io.read_vectors) by a second statement over the same ids."""
    from rag.selectors import ITEM_FIELDS

    rows = list(Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace, id__gt=after, id__lte=upto)
                .order_by("id").values(*ITEM_FIELDS))
    if not rows:
        return []
    embeddings = dict(vector_io.read_vectors(
        f"SELECT id, embedding FROM {Chunk._meta.db_table} WHERE tenant_id = %s AND namespace = %s"
        " AND id >= %s AND id <= %s", [tenant_id, namespace, rows[0]["id"], rows[-1]["id"]]))
    for row in rows:
        row["embedding"] = embeddings.get(row["id"])
    return rows


def _caught_up(store: ChunkStore, tenant_id: int, namespace: str, watermarks: Watermarks | None) -> bool:
    """Apply what was committed up to `watermarks`; False if the store must be rebuilt (see
    rag.index._catch_up, whose rules these are)."""
    if watermarks is None:
        return not store.snap.rows and store.generation == 0
    generation, last_chunk_id, last_deletion_id, revision = watermarks
    if generation != store.generation:
        return False
    if (store.max_id >= last_chunk_id and store.last_deletion_id >= last_deletion_id
            and store.memory_revision >= revision):
        return True
    with store.lock:
        if store.max_id < last_chunk_id:
            store.add(_rows(tenant_id, namespace, store.max_id, last_chunk_id))
            store.max_id = max(store.max_id, last_chunk_id)
        if store.last_deletion_id < last_deletion_id:
            deleted = (ChunkDeletion.objects.filter(tenant_id=tenant_id, namespace=namespace,
                                                    id__gt=store.last_deletion_id, id__lte=last_deletion_id)
                       .values_list("chunk_id", flat=True))
            store.remove(deleted)
            store.last_deletion_id = last_deletion_id
        if store.memory_revision < revision:
            current = (Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace, type=Chunk.Type.MEMORY,
                                            id__lte=store.max_id).values_list("id", *MUTABLE_FIELDS))
            store.refresh({pk: tuple(values) for pk, *values in current})
            store.memory_revision = revision
    cache().touch()
    return True
