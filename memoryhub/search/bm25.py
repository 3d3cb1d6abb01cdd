"""Segmented in-process BM25 over a namespace's analysed chunk terms.

A namespace's index is one large segment plus a few small fresh ones. Writes append a tiny
fresh segment (well under a millisecond), so a new chunk is searchable at once and no search
ever pays for rebuilding the large segment. Merges run in the background and swap their result
in atomically, in two tiers: many small fresh segments are folded into one fresh segment
(cheap), and only once enough fresh docs or tombstones pile up is the large segment rebuilt.

Scoring is BM25 with Lucene's idf, ``ln(1 + (N - df + 0.5) / (df + 0.5))``, and Lucene's
term-frequency component without the constant ``(k1 + 1)`` factor (bm25s' ``method="lucene"``):

    score(d, q) = sum_t qtf(t) * idf(t) * tf / (tf + k1 * (1 - b + b * |d| / avgdl))

N, df and avgdl are summed over every live document of every segment, and segments keep raw
term frequencies and document lengths, so a document's score does not depend on how the
corpus happens to be split into segments (bit-for-bit: the same float64 operations run in the
same order whatever the segmentation).

Why not bm25s' index: ``bm25s.BM25`` precomputes ``idf * tfc`` per (doc, term) at build time
with that index's own N, df and avgdl. With several segments those statistics are global and
move on every write, so baked-in scores would drift from the true ones (and re-weighting idf
per term cannot fix the avgdl baked into tfc). We therefore keep bm25s' storage layout -- a
term-major CSC posting matrix, built by sorting packed (term, doc) keys -- and its top-k idea
(partition then sort the few survivors), but store raw tf and normalise at query time for the
query terms' postings only, which costs a few vector operations per query term. bm25s itself is
the reference oracle in the tests (same scores on a single segment) and the baseline in
``bench/bm25_segments.py``.

Concurrency: all searchable state is an immutable ``_Snapshot`` behind a single attribute, so
a search reads one consistent snapshot without locking. Writers build new arrays off to the
side and take ``_write_lock`` only to reconcile and swap the reference. The term vocabulary is
an append-only dict shared by all snapshots; a snapshot ignores term ids beyond its df array.
"""

from __future__ import annotations

import logging
import queue
import sys
import threading
from collections import OrderedDict
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

logger = logging.getLogger(__name__)

# Merge policy: compact once fresh segments hold more than max(MERGE_MIN_FRESH_DOCS,
# MERGE_FRESH_RATIO * large) docs, or there are more than MERGE_MAX_FRESH_SEGMENTS of them
# (each costs a fixed per-query overhead), or tombstones fill MERGE_MAX_DEAD_RATIO of the
# large segment (dead postings are still scanned and still occupy memory).
MERGE_MIN_FRESH_DOCS = 1_000
MERGE_FRESH_RATIO = 0.10
MERGE_MAX_FRESH_SEGMENTS = 8
MERGE_MAX_DEAD_RATIO = 0.20

# Rough per-entry cost of the vocabulary dict beyond its table: the str key (~49 bytes of
# header plus short ASCII text) and the int value object.
_VOCAB_ENTRY_BYTES = 90

# Filter on candidate doc ids. Accepted forms, all applied only to documents that matched the
# query (so their cost scales with the matches, not with the namespace):
# * a callable taking an int64 array of doc ids and returning a same-length bool array -- the
#   cheapest for range-like filters, e.g. ``lambda ids: ids >= first_id_of_session``;
# * a numpy array of doc ids -- sorted int64 is used as is; unsorted ids become a bitmap over
#   their range when it is dense enough, else are sorted (per search);
# * any other collection of ints (set, list, ...), converted the same way.
Allowed = Callable[[np.ndarray], np.ndarray] | np.ndarray | Collection[int]


@dataclass(frozen=True, slots=True, eq=False)
class _Segment:
    """Immutable doc x term postings in CSC (term-major) layout over a segment's own terms.

    ``terms`` lists the global term ids present (sorted) so that tiny fresh segments do not
    carry an indptr as long as the whole vocabulary.
    """

    doc_ids: np.ndarray  # int64, sorted, unique; local doc index = position
    doc_len: np.ndarray  # int32 term count (with repeats) per local doc
    terms: np.ndarray  # int32 global term ids, sorted
    indptr: np.ndarray  # int64, len(terms) + 1; postings of terms[i] are [indptr[i], indptr[i+1])
    docs: np.ndarray  # int32 local doc index per posting, ascending within a term
    tf: np.ndarray  # float32 raw term frequency per posting

    @property
    def n_docs(self) -> int:
        return int(self.doc_ids.size)

    @property
    def nbytes(self) -> int:
        arrays = (self.doc_ids, self.doc_len, self.terms, self.indptr, self.docs, self.tf)
        return sum(a.nbytes for a in arrays)

    def df(self) -> np.ndarray:
        """Per-term document count, aligned with ``terms``."""
        return np.diff(self.indptr)

    def locate(self, ids: np.ndarray) -> np.ndarray:
        """Local indices of those ``ids`` present in this segment."""
        if not self.doc_ids.size or not ids.size:
            return np.empty(0, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.doc_ids, ids), self.doc_ids.size - 1)
        return pos[self.doc_ids[pos] == ids]


@dataclass(frozen=True, slots=True, eq=False)
class _Part:
    """A segment as seen by one snapshot: its tombstones live here so segments stay immutable."""

    seg: _Segment
    alive: np.ndarray | None  # bool per local doc; None means all alive
    n_live: int


@dataclass(frozen=True, slots=True, eq=False)
class _Snapshot:
    large: _Part | None
    fresh: tuple[_Part, ...]
    df: np.ndarray  # int64 live document frequency per global term id (ids < len(df))
    n_docs: int  # live documents
    total_len: int  # sum of live document lengths
    max_doc_id: int | None

    @property
    def parts(self) -> tuple[_Part, ...]:
        return self.fresh if self.large is None else (self.large, *self.fresh)


_EMPTY = _Snapshot(None, (), np.zeros(0, dtype=np.int64), 0, 0, None)


def _build_segment(
    doc_ids: np.ndarray, doc_len: np.ndarray, post_terms: np.ndarray, post_docs: np.ndarray, tf: np.ndarray
) -> _Segment:
    """Assemble a segment from postings already sorted by (term, local doc)."""
    if post_terms.size:
        starts = np.flatnonzero(post_terms[1:] != post_terms[:-1]) + 1
        terms = post_terms[np.concatenate(([0], starts))]
        indptr = np.concatenate(([0], starts, [post_terms.size]))
    else:
        terms, indptr = np.empty(0), np.zeros(1)
    return _Segment(
        doc_ids=np.ascontiguousarray(doc_ids, dtype=np.int64),
        doc_len=np.ascontiguousarray(doc_len, dtype=np.int32),
        terms=terms.astype(np.int32),
        indptr=indptr.astype(np.int64),
        docs=post_docs.astype(np.int32),
        tf=tf.astype(np.float32),
    )


def _merge_parts(parts: Iterable[_Part]) -> _Segment:
    """One segment holding the live documents of ``parts``, docs renumbered in id order."""
    parts = [p for p in parts if p.n_live]
    lives = [np.arange(p.seg.n_docs) if p.alive is None else np.flatnonzero(p.alive) for p in parts]
    if not parts:
        empty = np.empty(0, dtype=np.int64)
        return _build_segment(empty, empty, empty, empty, empty)
    all_ids = np.concatenate([p.seg.doc_ids[live] for p, live in zip(parts, lives, strict=True)])
    all_len = np.concatenate([p.seg.doc_len[live] for p, live in zip(parts, lives, strict=True)])
    order = np.argsort(all_ids, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    n = int(order.size)
    keys, tfs, offset = [], [], 0
    for part, live in zip(parts, lives, strict=True):
        seg = part.seg
        new_local = np.full(seg.n_docs, -1, dtype=np.int64)
        new_local[live] = rank[offset : offset + live.size]
        offset += live.size
        docs = new_local[seg.docs]
        keep = docs >= 0
        post_terms = np.repeat(seg.terms.astype(np.int64), np.diff(seg.indptr))
        keys.append(post_terms[keep] * n + docs[keep])
        tfs.append(seg.tf[keep])
    key = np.concatenate(keys)
    tf = np.concatenate(tfs)
    # The large segment's keys come out already sorted and fresh ones are short runs, which
    # timsort ("stable") merges in near-linear time.
    sort = np.argsort(key, kind="stable")
    key, tf = key[sort], tf[sort]
    post_terms = key // n
    return _build_segment(all_ids[order], all_len[order], post_terms, key - post_terms * n, tf)


def _compile_allowed(allowed: Allowed | None) -> Callable[[np.ndarray], np.ndarray] | None:
    if allowed is None:
        return None
    if callable(allowed):
        fn = allowed
        return lambda ids: np.asarray(fn(ids), dtype=bool)
    if isinstance(allowed, np.ndarray):
        if allowed.dtype == bool:
            raise TypeError("allowed must hold doc ids, not a boolean mask (doc ids are not positions)")
        arr = allowed.astype(np.int64, copy=False).ravel()
    else:
        arr = np.fromiter(allowed, dtype=np.int64, count=len(allowed))
    if not arr.size:
        return lambda ids: np.zeros(ids.shape, dtype=bool)
    if arr.size > 1 and not bool(np.all(arr[1:] >= arr[:-1])):
        low, high = int(arr.min()), int(arr.max())
        if high - low < 16 * arr.size + 65_536:
            # Ids from a DB filter come unordered; sorting 100k of them costs tens of ms, while a
            # bitmap over their (dense enough) id range is built in well under one.
            table = np.zeros(high - low + 1, dtype=bool)
            table[arr - low] = True

            def in_table(ids: np.ndarray) -> np.ndarray:
                off = ids - low
                inside = (off >= 0) & (off < table.size)
                out = np.zeros(ids.shape, dtype=bool)
                out[inside] = table[off[inside]]
                return out

            return in_table
        arr = np.sort(arr)
    last = arr.size - 1
    return lambda ids: arr[np.minimum(np.searchsorted(arr, ids), last)] == ids


def _score_part(
    part: _Part,
    qids: np.ndarray,
    weights: np.ndarray,
    len_coef: np.float64,
    const_coef: np.float64,
    k: int,
    keep: Callable[[np.ndarray], np.ndarray] | None,
    primary: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """This part's best ``k`` live, allowed matches as (doc ids, scores), ties at the cut kept.
    ``primary``: per query term, whether matching it alone makes a match (None: every term does)."""
    seg = part.seg
    if not part.n_live or not seg.terms.size:
        return None
    pos = np.minimum(np.searchsorted(seg.terms, qids), seg.terms.size - 1)
    hit = np.flatnonzero(seg.terms[pos] == qids)
    if not hit.size:
        return None
    n = seg.n_docs
    all_docs: list[np.ndarray] = []
    all_contrib: list[np.ndarray] = []
    for i in hit:
        lo, hi = seg.indptr[pos[i]], seg.indptr[pos[i] + 1]
        docs = seg.docs[lo:hi]
        tf = seg.tf[lo:hi]
        contrib = seg.doc_len[docs] * len_coef
        contrib += const_coef
        contrib += tf
        np.divide(tf, contrib, out=contrib)
        contrib *= weights[i]
        all_docs.append(docs)
        all_contrib.append(contrib)
    # bincount adds in input order, i.e. term by term from 0.0 like a plain loop would, so the
    # sums do not depend on segmentation; it is ~20% faster than scores[docs] += contrib.
    if len(all_docs) == 1:
        scores = np.zeros(n, dtype=np.float64)
        scores[all_docs[0]] = all_contrib[0]
    else:
        scores = np.bincount(np.concatenate(all_docs), weights=np.concatenate(all_contrib), minlength=n)
    if primary is not None:
        matched = np.zeros(n, dtype=bool)
        for docs, i in zip(all_docs, hit, strict=True):
            if primary[i]:
                matched[docs] = True
        scores[~matched] = 0.0
    if part.alive is not None:
        scores[~part.alive] = 0.0
    # Everything tied with the k-th best survives the cut, so the final id tie-break is exact.
    if keep is None:
        if n > k:
            kth = np.partition(scores, n - k)[n - k]
            cand = np.flatnonzero(scores >= kth) if kth > 0.0 else np.flatnonzero(scores)
        else:
            cand = np.flatnonzero(scores)
        return seg.doc_ids[cand], scores[cand]
    cand = np.flatnonzero(scores)
    ids, sc = seg.doc_ids[cand], scores[cand]
    mask = keep(ids)
    ids, sc = ids[mask], sc[mask]
    if sc.size > k:
        kth = np.partition(sc, sc.size - k)[sc.size - k]
        mask = sc >= kth
        ids, sc = ids[mask], sc[mask]
    return ids, sc


def idf(df: np.ndarray | float, n: float) -> np.ndarray | float:
    """BM25's (Lucene's) inverse document frequency of terms in `df` of `n` documents."""
    return np.log1p((n - df + 0.5) / (df + 0.5))


class SegmentedBM25Index:
    """BM25 over one namespace: one large segment plus small fresh ones, global statistics.

    Doc ids are ints (chunk primary keys). ``add``/``remove`` are cheap and visible to the very
    next ``search``; merges are meant for a background thread (see ``merge_if_needed`` and
    ``IndexCache.schedule_merge``). All methods are thread-safe.
    """

    def __init__(self, *, k1: float = 1.2, b: float = 0.75, lengthless_prefix: str | None = None) -> None:
        """`lengthless_prefix`: terms that start with it are matched and scored like any other but
        add nothing to their document's length (derived terms, such as a noun's categories in
        `memoryhub.lexicon`, that would otherwise make a document with many of them look long)."""
        self.k1 = float(k1)
        self.b = float(b)
        self.lengthless_prefix = lengthless_prefix
        self._vocab: dict[str, int] = {}
        self._snap: _Snapshot = _EMPTY
        self._write_lock = threading.Lock()
        self._merge_lock = threading.Lock()

    # -- writes ---------------------------------------------------------------------------

    def add(self, doc_ids: Sequence[int], term_lists: Sequence[Sequence[str]]) -> None:
        """Index documents as a new fresh segment; an id already indexed is replaced.

        Into an empty index the batch becomes the large segment directly, so the initial bulk
        load from the DB does not need a merge.
        """
        if len(doc_ids) != len(term_lists):
            raise ValueError("doc_ids and term_lists differ in length")
        if not len(doc_ids):
            return
        latest = {int(d): i for i, d in enumerate(doc_ids)}  # a repeated id: last one wins
        ids = np.fromiter(latest, dtype=np.int64, count=len(latest))
        order = np.argsort(ids, kind="stable")
        ids = ids[order]
        rows = [term_lists[latest[int(d)]] for d in ids]
        seg = self._segment_from_terms(ids, rows)
        with self._write_lock:
            snap = self._without(self._snap, ids)
            part = _Part(seg, None, seg.n_docs)
            df = snap.df
            if df.size < len(self._vocab):
                df = np.concatenate((df, np.zeros(len(self._vocab) - df.size, dtype=np.int64)))
            else:
                df = df.copy()
            df[seg.terms] += seg.df()
            top = int(ids[-1]) if snap.max_doc_id is None else max(snap.max_doc_id, int(ids[-1]))
            if snap.large is None and not snap.fresh:
                large, fresh = part, ()
            else:
                large, fresh = snap.large, (*snap.fresh, part)
            self._snap = _Snapshot(
                large, fresh, df, snap.n_docs + seg.n_docs, snap.total_len + int(seg.doc_len.sum()), top
            )

    def remove(self, doc_ids: Iterable[int]) -> None:
        """Tombstone documents; unknown ids are ignored. N, df and avgdl drop them at once."""
        ids = np.unique(np.fromiter((int(d) for d in doc_ids), dtype=np.int64))
        if not ids.size:
            return
        with self._write_lock:
            self._snap = self._without(self._snap, ids)

    def _segment_from_terms(self, ids: np.ndarray, rows: Sequence[Sequence[str]]) -> _Segment:
        vocab = self._vocab
        lengths = np.fromiter((len(r) for r in rows), dtype=np.int64, count=len(rows))
        total = int(lengths.sum())
        # setdefault is one atomic dict operation, so concurrent writers can share the
        # append-only vocabulary without a lock; readers ignore ids their snapshot predates.
        ids_iter = (vocab.setdefault(t, len(vocab)) for r in rows for t in r)
        flat = np.fromiter(ids_iter, dtype=np.int64, count=total)
        n = int(ids.size)
        key = flat * n + np.repeat(np.arange(n, dtype=np.int64), lengths)
        key, tf = np.unique(key, return_counts=True)  # sorted by (term, doc); counts are tf
        post_terms = key // n
        doc_len = lengths
        if self.lengthless_prefix:
            # Counted in each row's joined text: 2.7x faster than a startswith per term (38 against
            # 103 ms for 20k turns), and exact since no term holds a NUL (PostgreSQL's text cannot).
            marker = "\0" + self.lengthless_prefix
            doc_len = lengths - np.fromiter((("\0" + "\0".join(r)).count(marker) for r in rows),
                                            dtype=np.int64, count=len(rows))
        return _build_segment(ids, doc_len, post_terms, key - post_terms * n, tf)

    def _without(self, snap: _Snapshot, ids: np.ndarray) -> _Snapshot:
        """``snap`` with the live documents among ``ids`` tombstoned and subtracted from stats.

        Finding a removed doc's terms scans the segment's postings (O(nnz), a few ms on a 100k
        segment); removals are rare enough that a forward index is not worth its memory.
        """
        df: np.ndarray | None = None
        n_docs, total_len = snap.n_docs, snap.total_len
        new_parts: list[_Part] = []
        for part in snap.parts:
            seg = part.seg
            loc = seg.locate(ids)
            if part.alive is not None and loc.size:
                loc = loc[part.alive[loc]]
            if not loc.size:
                new_parts.append(part)
                continue
            alive = np.ones(seg.n_docs, dtype=bool) if part.alive is None else part.alive.copy()
            alive[loc] = False
            new_parts.append(_Part(seg, alive, part.n_live - int(loc.size)))
            dead = np.zeros(seg.n_docs, dtype=bool)
            dead[loc] = True
            term_rows = np.searchsorted(seg.indptr, np.flatnonzero(dead[seg.docs]), side="right") - 1
            if df is None:
                df = snap.df.copy()
            df[seg.terms] -= np.bincount(term_rows, minlength=seg.terms.size)
            n_docs -= int(loc.size)
            total_len -= int(seg.doc_len[loc].sum())
        if df is None:
            return snap
        large = new_parts[0] if snap.large is not None else None
        fresh = tuple(new_parts[1:] if snap.large is not None else new_parts)
        return _Snapshot(large, fresh, df, n_docs, total_len, snap.max_doc_id)

    # -- merging --------------------------------------------------------------------------

    def needs_merge(self) -> bool:
        snap = self._snap
        return self._full_merge_due(snap) or len(snap.fresh) > MERGE_MAX_FRESH_SEGMENTS

    @staticmethod
    def _full_merge_due(snap: _Snapshot) -> bool:
        large_live = snap.large.n_live if snap.large is not None else 0
        fresh_docs = sum(p.seg.n_docs for p in snap.fresh)
        if fresh_docs > max(MERGE_MIN_FRESH_DOCS, MERGE_FRESH_RATIO * large_live):
            return True
        if snap.large is not None and snap.large.alive is not None:
            return snap.large.seg.n_docs - snap.large.n_live > MERGE_MAX_DEAD_RATIO * snap.large.seg.n_docs
        return False

    def merge_if_needed(self) -> str | None:
        """Run the merge tier the policy calls for: "full", "fresh" or None (nothing due).

        Too many fresh segments alone only compacts the fresh ones into a single fresh segment
        (cost proportional to the fresh docs, milliseconds); the large segment is rebuilt only
        when enough fresh docs or tombstones have piled up. This keeps the segment count low
        under a steady trickle of writes without rebuilding 100k docs every few writes.
        """
        snap = self._snap
        if self._full_merge_due(snap):
            self.merge(full=True)
            return "full"
        if len(snap.fresh) > MERGE_MAX_FRESH_SEGMENTS:
            self.merge(full=False)
            return "fresh"
        return None

    def merge(self, *, full: bool = True) -> None:
        """Compact all segments and tombstones into a new large segment (``full=False``: only
        the fresh segments, into one fresh segment, leaving the large one alone).

        The new segment is built without the write lock (searches and writes carry on against
        the old snapshot); the lock is held only to fold in what changed meanwhile and swap.
        """
        with self._merge_lock:  # one merge at a time; a second caller waits, then finds less to do
            base = self._snap
            if base.large is None:
                return
            start = 0 if full else 1
            merged = base.parts[start:]
            if len(merged) == 0 or (len(merged) == 1 and merged[0].alive is None):
                return
            seg = _merge_parts(merged)
            with self._write_lock:
                cur = self._snap
                # Only merge() drops parts and it is serialised, so the merged parts are still
                # in place; removals since the snapshot show up as replaced alive masks.
                newly_dead = [
                    old.seg.doc_ids[(True if old.alive is None else old.alive) & ~now.alive]
                    for old, now in zip(merged, cur.parts[start : start + len(merged)], strict=True)
                    if now.alive is not old.alive and now.alive is not None
                ]
                alive = None
                n_live = seg.n_docs
                if newly_dead:
                    loc = seg.locate(np.concatenate(newly_dead))
                    if loc.size:
                        alive = np.ones(seg.n_docs, dtype=bool)
                        alive[loc] = False
                        n_live -= int(np.count_nonzero(~alive))
                part = _Part(seg, alive, n_live)
                later = cur.fresh[len(base.fresh) :]
                if full:
                    self._snap = replace(cur, large=part, fresh=later)
                else:
                    self._snap = replace(cur, fresh=(part, *later) if seg.n_docs else later)

    # -- reads ----------------------------------------------------------------------------

    def search(
        self, query_terms: Sequence[str], k: int, allowed: Allowed | None = None,
        term_weights: Mapping[str, float] | None = None, secondary: Collection[str] = (),
    ) -> list[tuple[int, float]]:
        """Top-``k`` ``(doc_id, score)``, best first, ties broken by higher (newer) doc id.

        Only documents with score > 0 are returned. A repeated query term counts once per
        occurrence, as in bm25s; ``term_weights`` scales an occurrence (1.0 for terms it does not
        name), e.g. to let the seven day terms of "the week before ..." weigh like one word.
        ``allowed`` restricts results to a subset of doc ids (see ``Allowed``); it is applied
        before the top-k cut, so k matching docs give k results. A ``secondary`` term adds to the
        score of a document that matches another query term and makes no match on its own (unless
        the query has no other terms).
        """
        snap = self._snap
        if k <= 0 or snap.n_docs <= 0:
            return []
        qtf: dict[int, float] = {}
        n_known = snap.df.size
        for term in query_terms:
            tid = self._vocab.get(term)
            if tid is not None and tid < n_known and snap.df[tid] > 0:
                qtf[tid] = qtf.get(tid, 0.0) + (term_weights.get(term, 1.0) if term_weights else 1.0)
        if not qtf:
            return []
        qids = np.fromiter(qtf, dtype=np.int64, count=len(qtf))
        df = snap.df[qids].astype(np.float64)
        n = float(snap.n_docs)
        weights = idf(df, n) * np.fromiter(qtf.values(), np.float64, len(qtf))
        avgdl = snap.total_len / snap.n_docs
        # k1 * (1 - b + b * dl / avgdl) == dl * len_coef + const_coef, computed identically for
        # every segment of a snapshot so that segmentation cannot change a score.
        len_coef = np.float64(self.k1 * self.b / avgdl)
        const_coef = np.float64(self.k1 * (1.0 - self.b))
        keep = _compile_allowed(allowed)
        primary = None
        if secondary and any(term not in secondary for term in query_terms):
            by_tid = {tid: term for term in query_terms if (tid := self._vocab.get(term)) is not None}
            flags = np.fromiter((by_tid[tid] not in secondary for tid in qtf), dtype=bool, count=len(qtf))
            if not flags.any():
                return []  # "When did I see the unicorn?", and no text says "unicorn"
            primary = None if flags.all() else flags

        found_ids: list[np.ndarray] = []
        found_scores: list[np.ndarray] = []
        for part in snap.parts:
            found = _score_part(part, qids, weights, len_coef, const_coef, k, keep, primary)
            if found is not None:
                found_ids.append(found[0])
                found_scores.append(found[1])
        if not found_ids:
            return []
        ids = np.concatenate(found_ids)
        sc = np.concatenate(found_scores)
        top = np.lexsort((-ids, -sc))[:k]
        return list(zip(ids[top].tolist(), sc[top].tolist(), strict=True))

    def ceiling(self, query_terms: Sequence[str], term_weights: Mapping[str, float] | None = None) -> float:
        """What a document holding every query term, each often enough to saturate, would score:
        sum(weight x idf x (k1 + 1)). A term no document holds counts at its highest idf, since it
        is part of what the query asks. A score over it is the share of the query a document
        answers, comparable across queries, where a score alone is not."""
        snap = self._snap
        n = float(snap.n_docs)
        if n <= 0:
            return 0.0
        total = 0.0
        for term in query_terms:
            tid = self._vocab.get(term)
            df = float(snap.df[tid]) if tid is not None and tid < snap.df.size else 0.0
            total += (term_weights.get(term, 1.0) if term_weights else 1.0) * float(idf(df, n))
        return total * (self.k1 + 1.0)

    def __len__(self) -> int:
        return self._snap.n_docs

    def document_frequency(self, term: str) -> int:
        """How many live documents hold `term` (the df of its idf)."""
        snap = self._snap
        tid = self._vocab.get(term)
        return int(snap.df[tid]) if tid is not None and tid < snap.df.size else 0

    @property
    def max_doc_id(self) -> int | None:
        """Highest doc id ever added (None if none): callers fetch only chunks with a higher id.

        It does not go down on removal, so a deleted newest chunk is not fetched again.
        """
        return self._snap.max_doc_id

    def memory_bytes(self) -> int:
        """Estimate of the memory held: segment arrays, tombstones, df and the vocabulary."""
        snap = self._snap
        arrays = sum(p.seg.nbytes + (p.alive.nbytes if p.alive is not None else 0) for p in snap.parts)
        return arrays + snap.df.nbytes + sys.getsizeof(self._vocab) + len(self._vocab) * _VOCAB_ENTRY_BYTES

    def describe(self) -> dict[str, Any]:
        """Shape of the index, for stats endpoints and tests."""
        snap = self._snap
        return {
            "docs": snap.n_docs,
            "avgdl": snap.total_len / snap.n_docs if snap.n_docs else 0.0,
            "large_docs": snap.large.seg.n_docs if snap.large is not None else 0,
            "large_dead": snap.large.seg.n_docs - snap.large.n_live if snap.large is not None else 0,
            "fresh_segments": len(snap.fresh),
            "fresh_docs": sum(p.seg.n_docs for p in snap.fresh),
            "vocab": len(self._vocab),
            "memory_bytes": self.memory_bytes(),
        }


class IndexCache:
    """Thread-safe LRU of ``SegmentedBM25Index`` per namespace key, bounded by memory.

    Sizes are re-read from ``memory_bytes()`` whenever an entry is touched (indexes grow as
    chunks are added). The most recently used entry is never evicted, even if it alone exceeds
    ``max_bytes``: dropping it would make every request on that namespace rebuild from the DB.
    Merges run on one lazily started daemon worker, so requests never wait for them.
    """

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = int(max_bytes)
        self._entries: OrderedDict[Hashable, tuple[SegmentedBM25Index, int]] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        names = "hits misses evictions merges_scheduled merges_done merges_full merges_fresh merge_errors"
        self._counters = dict.fromkeys(names.split(), 0)
        self._queue: queue.Queue[tuple[Hashable, SegmentedBM25Index] | None] = queue.Queue()
        self._pending: set[tuple[Hashable, int]] = set()
        self._worker: threading.Thread | None = None

    def get(self, key: Hashable) -> SegmentedBM25Index | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                self._counters["misses"] += 1
                return None
            self._counters["hits"] += 1
            self._store(key, entry[0])
            return entry[0]

    def put(self, key: Hashable, index: SegmentedBM25Index) -> None:
        with self._lock:
            self._store(key, index)

    def pop(self, key: Hashable) -> SegmentedBM25Index | None:
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is None:
                return None
            self._bytes -= entry[1]
            return entry[0]

    def stats(self) -> dict[str, int]:
        with self._lock:
            return {
                "entries": len(self._entries),
                "bytes": self._bytes,
                "max_bytes": self.max_bytes,
                "merges_pending": len(self._pending),
                **self._counters,
            }

    def _store(self, key: Hashable, index: SegmentedBM25Index) -> None:
        """(Re)insert as most recent with a fresh size, then evict from the LRU end. Holds _lock."""
        old = self._entries.pop(key, None)
        if old is not None:
            self._bytes -= old[1]
        size = index.memory_bytes()
        self._entries[key] = (index, size)
        self._bytes += size
        while self._bytes > self.max_bytes and len(self._entries) > 1:
            _, (_, evicted) = self._entries.popitem(last=False)
            self._bytes -= evicted
            self._counters["evictions"] += 1

    def schedule_merge(self, key: Hashable, index: SegmentedBM25Index) -> bool:
        """Queue ``index.merge_if_needed()`` on the background worker; False if already queued.

        The due tier is decided when the worker gets to it, so a request can schedule after
        every write (typically when ``index.needs_merge()``) without causing extra work.
        """
        token = (key, id(index))
        with self._lock:
            if token in self._pending:
                return False
            self._pending.add(token)
            self._counters["merges_scheduled"] += 1
            if self._worker is None or not self._worker.is_alive():
                self._worker = threading.Thread(target=self._run_merges, name="bm25-merge", daemon=True)
                self._worker.start()
        self._queue.put((key, index))
        return True

    def close(self) -> None:
        """Drop every entry and stop the merge worker once the merges queued so far are done. A
        cache being replaced (rag.index.clear) must let its indexes go: its worker's target is
        this cache, so a worker left waiting on the queue kept the cache and every index in it alive."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            if self._worker is not None and self._worker.is_alive():
                self._queue.put(None)

    def wait_for_merges(self, timeout: float | None = None) -> bool:
        """Block until queued merges are done (tests, graceful shutdown); False on timeout."""
        done = threading.Event()

        def join() -> None:
            self._queue.join()
            done.set()

        threading.Thread(target=join, daemon=True).start()
        return done.wait(timeout)

    def _run_merges(self) -> None:
        while True:
            item = self._queue.get()
            if item is None:  # close(): nothing is left to merge into this cache
                self._queue.task_done()
                return
            key, index = item
            del item
            # Clear the pending mark first: writes arriving during this merge may need another.
            with self._lock:
                self._pending.discard((key, id(index)))
            try:
                tier = index.merge_if_needed()
                with self._lock:
                    if tier is not None:
                        self._counters["merges_done"] += 1
                        self._counters[f"merges_{tier}"] += 1
                    entry = self._entries.get(key)
                    if entry is not None and entry[0] is index:
                        # Refresh the size without promoting the entry in the LRU order.
                        size = index.memory_bytes()
                        self._bytes += size - entry[1]
                        self._entries[key] = (index, size)
            except Exception:
                logger.exception("BM25 merge failed for %r", key)
                with self._lock:
                    self._counters["merge_errors"] += 1
            finally:
                self._queue.task_done()
            del index  # waiting for the next one, the worker holds no index the cache has let go
