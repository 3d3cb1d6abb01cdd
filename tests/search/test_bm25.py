"""SegmentedBM25Index and IndexCache: exact scores, segmentation invariance, writes, merges, LRU."""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import Any

import bm25s
import numpy as np
import pytest

from memoryhub.search import bm25
from memoryhub.search.bm25 import IndexCache, SegmentedBM25Index

Corpus = dict[int, list[str]]


def zipf_corpus(n_docs: int, vocab: int = 3_000, seed: int = 0, first_id: int = 1) -> Corpus:
    rng = np.random.default_rng(seed)
    p = 1.0 / np.arange(1, vocab + 1) ** 1.1
    p /= p.sum()
    return {
        first_id + i: [f"t{t}" for t in rng.choice(vocab, size=int(rng.integers(3, 25)), p=p)]
        for i in range(n_docs)
    }


def build(corpus: Corpus, chunks: Sequence[int] = (), **kw: Any) -> SegmentedBM25Index:
    """Index ``corpus`` as one segment, or as consecutive batches of the given sizes (the first
    becomes the large segment, the rest fresh segments, the remainder one more fresh one)."""
    index = SegmentedBM25Index(**kw)
    items = list(corpus.items())
    start = 0
    for size in [*chunks, len(items)]:
        batch = items[start : start + size]
        start += size
        if batch:
            index.add([d for d, _ in batch], [t for _, t in batch])
    return index


QUERIES = [
    ["t0", "t5"],
    ["t17", "t230", "t999"],
    ["t1", "t2", "t3", "t40", "t41", "t2000"],
    ["t7", "t7", "t80"],
]


def bm25_score(terms: list[str], query: list[str], docs: list[list[str]], k1: float, b: float) -> float:
    """The formula, spelled out: Lucene idf, tf / (tf + k1 * (1 - b + b * dl / avgdl))."""
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n
    total = 0.0
    for q in query:
        df = sum(q in d for d in docs)
        tf = terms.count(q)
        if tf:
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            total += idf * tf / (tf + k1 * (1 - b + b * len(terms) / avgdl))
    return total


def test_hand_computed_score() -> None:
    docs = {1: ["cat", "sat", "mat"], 2: ["cat", "cat", "dog"], 3: ["dog", "barked"], 4: ["bird"]}
    index = build(docs, k1=1.2, b=0.75)
    got = dict(index.search(["cat", "dog"], 10))
    assert set(got) == {1, 2, 3}
    for doc_id, score in got.items():
        expected = bm25_score(docs[doc_id], ["cat", "dog"], list(docs.values()), 1.2, 0.75)
        assert score == pytest.approx(expected, rel=1e-12)
    # d2 by hand: N=4, avgdl=9/4, df(cat)=df(dog)=2 so idf=ln 2, |d2|=3.
    norm = 1.2 * (1 - 0.75 + 0.75 * 3 / 2.25)
    assert got[2] == pytest.approx(math.log(2) * (2 / (2 + norm) + 1 / (1 + norm)), rel=1e-12)
    assert index.search(["unicorn"], 10) == []
    assert index.search([], 10) == []
    assert index.search(["cat"], 0) == []


def test_lengthless_terms_match_but_leave_document_lengths_alone() -> None:
    plain = {1: ["cat", "sat", "mat"], 2: ["cat", "cat", "dog"], 3: ["dog", "barked"], 4: ["bird"]}
    extra = {1: ["^animal"] * 3 + ["^feline"], 3: ["^animal", "^canine"]}
    with_extra = {d: terms + extra.get(d, []) for d, terms in plain.items()}
    for chunks in ((), (2,)):  # one segment, and a fresh segment merged into the large one
        index = build(with_extra, chunks, lengthless_prefix="^")
        index.merge()
        # Word queries score as if the extra terms were not there: no document looks longer.
        assert index.search(["cat", "dog"], 10) == build(plain).search(["cat", "dog"], 10)
        got = dict(index.search(["^animal"], 10))
        assert set(got) == {1, 3} and got[1] > got[3]  # tf 3 against 1, same length
    # Counted as usual, the same terms make documents 1 and 3 longer and change the word scores.
    assert build(with_extra).search(["cat", "dog"], 10) != build(plain).search(["cat", "dog"], 10)


def test_a_secondary_term_adds_to_a_match_but_makes_none() -> None:
    """"When is my sister coming?" asks for a time (@t): a turn that names a time and no word of the question
    is no answer, one that says "sister" and a time is the better one."""
    docs = {1: ["sister", "come", "@t"], 2: ["sister", "visit"], 3: ["pasta", "tonight", "@t"], 4: ["cat"]}
    for chunks in ((), (2,)):  # one segment, and two
        index = build(docs, chunks)
        got = dict(index.search(["sister", "come", "@t"], 10, secondary={"@t"}))
        assert set(got) == {1, 2}
        plain = dict(index.search(["sister", "come", "@t"], 10))
        assert set(plain) == {1, 2, 3} and got[1] == plain[1] and got[2] == plain[2]
        # Nothing else in the query: the secondary term is all there is. A word no text says: no match.
        assert {d for d, _ in index.search(["@t"], 10, secondary={"@t"})} == {1, 3}
        assert index.search(["unicorn", "@t"], 10, secondary={"@t"}) == []
        # With a filter, the same.
        assert [d for d, _ in index.search(["sister", "@t"], 10, allowed=[1, 3], secondary={"@t"})] == [1]


def test_matches_bm25s_reference() -> None:
    corpus = zipf_corpus(2_000)
    index = build(corpus, k1=1.5, b=0.75)
    ref = bm25s.BM25(k1=1.5, b=0.75, method="lucene")
    ref.index(list(corpus.values()), show_progress=False)
    ids = np.array(list(corpus))
    for query in QUERIES:
        expected = ref.get_scores(query)
        got = index.search(query, 20)
        assert got
        for doc_id, score in got:
            assert score == pytest.approx(float(expected[ids == doc_id][0]), rel=1e-5)
        assert got[-1][1] >= np.sort(expected)[-20] - 1e-5


def assert_same_results(a: SegmentedBM25Index, b: SegmentedBM25Index, k: int = 50, tol: float = 1e-6) -> None:
    for query in QUERIES:
        ra, rb = a.search(query, k), b.search(query, k)
        assert [d for d, _ in ra] == [d for d, _ in rb], query
        assert np.allclose([s for _, s in ra], [s for _, s in rb], rtol=0, atol=tol), query


def test_segmentation_invariance() -> None:
    corpus = zipf_corpus(3_000)
    one = build(corpus)
    many = build(corpus, chunks=[2_000, 1, 7, 150, 300, 42])
    assert many.describe()["fresh_segments"] == 6
    assert len(one) == len(many) == 3_000
    for query in QUERIES:
        ra, rb = one.search(query, 3_000), many.search(query, 3_000)
        assert ra == rb  # same float64 operations in the same order: bit-identical, not just close


def test_doc_added_after_large_index_is_found_at_once() -> None:
    index = build(zipf_corpus(5_000))
    assert index.max_doc_id == 5_000
    index.add([9_001], [["t0", "freshterm", "freshterm"]])
    assert index.describe()["fresh_segments"] == 1
    assert index.search(["freshterm"], 5)[0][0] == 9_001
    assert 9_001 in dict(index.search(["freshterm", "t0"], 10))
    assert index.max_doc_id == 9_001 and len(index) == 5_001


def test_replace_and_remove() -> None:
    corpus = zipf_corpus(500)
    index = build(corpus)
    index.add([7], [["brandnew", "words"]])  # replaces doc 7
    assert len(index) == 500
    assert [d for d, _ in index.search(["brandnew"], 5)] == [7]
    for term in set(corpus[7]):
        assert 7 not in dict(index.search([term], 500))
    index.add([7], [["again"]])  # replace the fresh copy too
    assert index.search(["brandnew"], 5) == [] and index.search(["again"], 5)[0][0] == 7
    index.remove([7, 8, 123_456])  # unknown ids are ignored
    assert len(index) == 498
    assert index.search(["again"], 5) == []
    assert all(d not in (7, 8) for q in QUERIES for d, _ in index.search(q, 500))
    # A batch repeating an id keeps its last occurrence.
    index.add([9, 9], [["first"], ["second"]])
    assert index.search(["first"], 5) == [] and index.search(["second"], 5)[0][0] == 9


def test_stats_exact_after_removal() -> None:
    corpus = zipf_corpus(2_000)
    removed = set(range(1, 2_001, 7)) | {1_999, 2_000}
    index = build(corpus, chunks=[1_800, 100])
    index.add([5_000, 5_001], [["t0", "t1"], ["t5"]])
    index.remove([*removed, 5_000, 5_001])
    rest = {d: t for d, t in corpus.items() if d not in removed}
    clean = build(rest)
    assert len(index) == len(clean)
    assert index.describe()["avgdl"] == clean.describe()["avgdl"]
    for query in QUERIES:
        assert index.search(query, 2_000) == clean.search(query, 2_000)


@pytest.mark.parametrize("form", ["set", "sorted_array", "unsorted_array", "sparse_list", "callable"])
def test_allowed_filter_returns_k_results(form: str) -> None:
    corpus = zipf_corpus(3_000)
    index = build(corpus, chunks=[2_500])
    full = index.search(["t0"], 3_000)
    assert len(full) > 100
    # The weakest matches: without filtering before the cut they would never reach the top 10.
    wanted = [d for d, _ in full[-15:]]
    allowed: object = {
        "set": set(wanted),
        "sorted_array": np.array(sorted(wanted), dtype=np.int64),
        "unsorted_array": np.array(wanted[::-1]),  # dense id range: bitmap lookup
        "sparse_list": [*reversed(wanted), 10**12],  # wide id range: sorted lookup
        "callable": lambda ids: np.isin(ids, wanted),
    }[form]
    got = index.search(["t0"], 10, allowed=allowed)  # type: ignore[arg-type]
    assert [d for d, _ in got] == wanted[:10]
    assert index.search(["t0"], 10, allowed=set()) == []
    with pytest.raises(TypeError):
        index.search(["t0"], 10, allowed=np.ones(3, dtype=bool))


def test_ties_break_by_higher_doc_id() -> None:
    index = build({i: ["same", "words"] for i in range(1, 40)}, chunks=[20, 5])
    got = index.search(["same"], 10)
    assert [d for d, _ in got] == list(range(39, 29, -1))
    assert len({s for _, s in got}) == 1


def test_merge_policy_and_identical_results() -> None:
    corpus = zipf_corpus(4_000)
    index = build(corpus, chunks=[3_000, *[10] * 8])
    assert index.describe()["fresh_segments"] == 9 and index.needs_merge()
    index.remove(range(100, 400))
    before = {tuple(q): index.search(q, 100) for q in map(tuple, QUERIES)}
    index.merge()
    info = index.describe()
    assert info["fresh_segments"] == 0 and info["large_dead"] == 0 and info["large_docs"] == 3_700
    assert not index.needs_merge() and index.merge_if_needed() is None
    for q, expected in before.items():
        assert index.search(list(q), 100) == expected


def test_merge_tiers() -> None:
    index = build(zipf_corpus(3_000), chunks=[2_000, *[20] * 9])
    index.remove([2_005, 2_100])  # tombstones inside fresh segments
    before = [index.search(q, 100) for q in QUERIES]
    assert index.needs_merge()  # only because of the segment count: 800 fresh docs is not many
    assert index.merge_if_needed() == "fresh"
    info = index.describe()
    assert info["fresh_segments"] == 1 and info["large_docs"] == 2_000 and info["fresh_docs"] == 998
    assert [index.search(q, 100) for q in QUERIES] == before
    assert not index.needs_merge() and index.merge_if_needed() is None

    index.add(range(10_000, 10_100), [["x"]] * 100)  # 1,098 fresh docs > MERGE_MIN_FRESH_DOCS
    assert index.merge_if_needed() == "full"
    info = index.describe()
    assert info["fresh_segments"] == 0 and info["large_docs"] == 3_098

    index.remove(range(1, 700))  # > 20% of the large segment dead
    assert index.needs_merge() and index.merge_if_needed() == "full"
    assert index.describe()["large_dead"] == 0 and len(index) == 2_399

    index.add([20_000], [["y"]])
    index.remove([20_000])
    index.merge(full=False)  # a fresh tier of only dead docs leaves no empty segment behind
    assert index.describe()["fresh_segments"] == 0 and len(index) == 2_399


def test_merge_keeps_writes_made_while_it_builds(monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = zipf_corpus(2_000)
    index = build(corpus, chunks=[1_500, 300])
    original = bm25._merge_parts

    def slow_merge(parts: object) -> object:
        seg = original(parts)  # type: ignore[arg-type]
        # Writes landing between the merge's snapshot and its swap.
        index.remove([3, 1_700])  # one from the large segment, one from a merged fresh one
        index.add([1_800, 9_000], [["replaced"], ["late", "t0"]])
        return seg

    monkeypatch.setattr(bm25, "_merge_parts", slow_merge)
    index.merge()
    monkeypatch.setattr(bm25, "_merge_parts", original)
    expected = {d: t for d, t in corpus.items() if d not in (3, 1_700)}
    expected.update({1_800: ["replaced"], 9_000: ["late", "t0"]})
    info = index.describe()
    assert info["fresh_segments"] == 1 and info["large_dead"] == 3
    clean = build(expected)
    assert_same_results(index, clean, k=2_000, tol=0)
    for term in ("replaced", "late"):
        assert index.search([term], 5) == clean.search([term], 5) != []
    index.merge()
    assert_same_results(index, clean, k=2_000, tol=0)


def test_concurrent_search_during_merge() -> None:
    index = build(zipf_corpus(20_000), chunks=[15_000, *[100] * 20])
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher(expected: list[tuple[int, float]], seen: list[int]) -> None:
        try:
            while not stop.is_set():
                got = index.search(QUERIES[1], 10)
                assert got == expected
                seen.append(len(got))
        except BaseException as exc:  # surface any failure to the main thread
            errors.append(exc)

    for round_ in range(4):
        index.add(range(50_000 + 10 * round_, 50_010 + 10 * round_), [["t17", "t999"]] * 10)
        index.remove(range(1_000 * round_, 1_000 * round_ + 50))
        expected = index.search(QUERIES[1], 10)
        seen: list[int] = []
        stop.clear()
        threads = [threading.Thread(target=searcher, args=(expected, seen)) for _ in range(2)]
        for t in threads:
            t.start()
        index.merge()
        stop.set()
        for t in threads:
            t.join()
        assert not errors, errors
        assert seen and all(n == 10 for n in seen)
        assert index.describe()["fresh_segments"] == 0


def test_concurrent_writes_search_and_merges_stay_consistent() -> None:
    corpus = zipf_corpus(6_000)
    index = build(corpus, chunks=[5_000])
    errors: list[BaseException] = []
    done = threading.Event()

    def run(fn: Callable[[], None]) -> threading.Thread:
        def loop() -> None:
            try:
                while not done.is_set():
                    fn()
            except BaseException as exc:
                errors.append(exc)

        thread = threading.Thread(target=loop)
        thread.start()
        return thread

    threads = [run(lambda: assert_nonempty(index.search(QUERIES[0], 10))), run(index.merge)]
    extra = zipf_corpus(600, seed=1, first_id=100_000)
    for i, (doc_id, terms) in enumerate(extra.items()):
        index.add([doc_id], [terms])
        if i % 3 == 0:
            index.remove([i + 1])
    done.set()
    for t in threads:
        t.join()
    assert not errors, errors
    index.merge()
    expected = {d: t for d, t in corpus.items() if not (d <= 600 and (d - 1) % 3 == 0)} | extra
    assert_same_results(index, build(expected), k=7_000, tol=1e-9)


def assert_nonempty(results: list[tuple[int, float]]) -> None:
    assert results


def test_memory_bytes_grows_and_shrinks() -> None:
    index = SegmentedBM25Index()
    assert index.memory_bytes() > 0 and index.max_doc_id is None and len(index) == 0
    index.add(*zip(*zipf_corpus(1_000).items(), strict=True))
    size = index.memory_bytes()
    index.add(*zip(*zipf_corpus(1_000, first_id=2_000).items(), strict=True))
    assert index.memory_bytes() > size
    index.remove(range(2_000, 3_000))
    index.merge()
    assert index.memory_bytes() < size * 1.5


def test_cache_evicts_least_recently_used() -> None:
    indexes = {name: build(zipf_corpus(300, seed=i)) for i, name in enumerate("abc")}
    size = max(ix.memory_bytes() for ix in indexes.values())
    cache = IndexCache(max_bytes=int(size * 2.5))
    cache.put("a", indexes["a"])
    cache.put("b", indexes["b"])
    assert cache.get("a") is indexes["a"]  # a becomes most recent, b is now LRU
    cache.put("c", indexes["c"])
    assert cache.get("b") is None
    assert cache.get("a") is indexes["a"] and cache.get("c") is indexes["c"]
    stats = cache.stats()
    assert stats["entries"] == 2 and stats["evictions"] == 1 and stats["misses"] == 1
    assert stats["bytes"] <= cache.max_bytes
    assert cache.pop("a") is indexes["a"] and cache.pop("a") is None
    tiny = IndexCache(max_bytes=1)  # the most recent entry stays even if it alone is too big
    tiny.put("a", indexes["a"])
    tiny.put("b", indexes["b"])
    assert tiny.get("a") is None and tiny.get("b") is indexes["b"]


def test_a_closed_cache_lets_its_indexes_and_its_merge_worker_go() -> None:
    """A cache replaced by another (rag.index.clear) kept every index alive through its merge
    worker, whose target is the cache."""
    import gc
    import weakref

    cache = IndexCache(max_bytes=10**9)
    index = build(zipf_corpus(50, seed=1))
    cache.put("a", index)
    assert cache.schedule_merge("a", index) and cache.wait_for_merges(10)
    worker = cache._worker
    assert worker is not None and worker.is_alive()
    gone = weakref.ref(cache)
    cache.close()
    worker.join(10)
    assert not worker.is_alive() and cache.stats()["entries"] == 0
    index_gone = weakref.ref(index)
    del cache, index
    gc.collect()
    assert gone() is None and index_gone() is None


class _BlockingIndex(SegmentedBM25Index):
    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.started = threading.Event()

    def merge_if_needed(self) -> str | None:
        self.started.set()
        self.release.wait(10)
        return None


def test_cache_schedules_merges_in_background_and_coalesces() -> None:
    cache = IndexCache(max_bytes=10**9)
    blocker = _BlockingIndex()
    assert cache.schedule_merge("blocker", blocker)
    assert blocker.started.wait(5)  # the worker is busy now
    index = build(zipf_corpus(3_000), chunks=[1_000, *[50] * 10])  # 2,000 fresh docs in 11 segments
    cache.put("ns", index)
    assert index.needs_merge()
    assert cache.schedule_merge("ns", index)
    assert not cache.schedule_merge("ns", index)  # still queued: coalesced
    assert index.describe()["fresh_segments"] == 11  # the request did not pay for the merge
    blocker.release.set()
    assert cache.wait_for_merges(10)
    assert index.describe()["fresh_segments"] == 0 and not index.needs_merge()
    stats = cache.stats()
    assert stats["merges_scheduled"] == 2 and stats["merges_pending"] == 0
    assert stats["merges_done"] == 1 and stats["merges_full"] == 1  # the blocker had nothing to merge
    assert stats["bytes"] == index.memory_bytes()  # size refreshed after the merge
