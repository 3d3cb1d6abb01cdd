"""Benchmark of the segmented BM25 index on a synthetic Zipfian corpus.

Measures the large-segment build, top-10 search latency, search latency right after a
one-document write (merges scheduled in the background per the index's policy, as in
production), search latency while a merge is running, merge time and memory. For reference it
also times bm25s on the same corpus (its index bakes idf/avgdl in, so it cannot take writes).

    .venv/bin/python bench/bm25_segments.py --docs 100000
"""

from __future__ import annotations

import argparse
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memoryhub.search.bm25 import IndexCache, SegmentedBM25Index


def zipf_probs(vocab: int, exponent: float) -> np.ndarray:
    p = 1.0 / np.arange(1, vocab + 1) ** exponent
    return p / p.sum()


def make_docs(rng: np.random.Generator, n: int, words: list[str], p: np.ndarray) -> list[list[str]]:
    lengths = rng.integers(8, 41, size=n)
    flat = rng.choice(len(words), size=int(lengths.sum()), p=p)
    out, start = [], 0
    for length in lengths:
        out.append([words[i] for i in flat[start : start + length]])
        start += length
    return out


def percentiles(samples_ns: list[int]) -> str:
    ms = np.array(samples_ns) / 1e6
    return f"p50 {np.percentile(ms, 50):.3f} ms  p95 {np.percentile(ms, 95):.3f} ms  max {ms.max():.3f} ms"


def timed(fn: Callable[[], object]) -> tuple[int, object]:
    start = time.perf_counter_ns()
    result = fn()
    return time.perf_counter_ns() - start, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=100_000)
    parser.add_argument("--vocab", type=int, default=50_000)
    parser.add_argument("--zipf", type=float, default=1.07, help="Zipf exponent of term frequencies")
    parser.add_argument("--queries", type=int, default=500)
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--seed", type=int, default=42)
    parser.add_argument("--no-bm25s", action="store_true", help="skip the bm25s reference timings")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    words = [f"w{i}" for i in range(args.vocab)]
    p = zipf_probs(args.vocab, args.zipf)
    corpus = make_docs(rng, args.docs, words, p)
    ids = list(range(1, args.docs + 1))
    # Queries draw from the same Zipf law, so many include very frequent terms (long postings):
    # a pessimistic mix compared with real, stopword-filtered queries.
    queries = [
        [words[i] for i in rng.choice(args.vocab, size=int(rng.integers(2, 7)), p=p)]
        for _ in range(args.queries)
    ]
    n_tokens = sum(map(len, corpus))
    print(
        f"corpus: {args.docs:,} docs, {n_tokens:,} tokens, vocab {args.vocab:,} (zipf {args.zipf}), "
        f"{args.queries} queries of 2-6 terms, k={args.k}"
    )

    index = SegmentedBM25Index()
    build_ns, _ = timed(lambda: index.add(ids, corpus))
    info = index.describe()
    print(
        f"build large segment: {build_ns / 1e9:.2f} s  (distinct terms {info['vocab']:,}, "
        f"memory_bytes {index.memory_bytes() / 2**20:.1f} MiB)"
    )

    for q in queries[:20]:  # warm caches
        index.search(q, args.k)
    lat = [timed(lambda q=q: index.search(q, args.k))[0] for q in queries]
    print(f"search (1 segment):            {percentiles(lat)}")

    # Each query right after a 1-doc add; merges are scheduled in the background when the
    # policy asks, exactly as the request path does, so some searches overlap a merge.
    cache = IndexCache(max_bytes=2**34)
    cache.put("ns", index)
    fresh_docs = make_docs(rng, args.queries, words, p)
    next_id = args.docs + 1
    add_lat, after_add_lat, segs = [], [], []
    for q, doc in zip(queries, fresh_docs, strict=True):
        add_ns, _ = timed(lambda doc=doc, i=next_id: index.add([i], [doc]))
        next_id += 1
        add_lat.append(add_ns)
        after_add_lat.append(timed(lambda q=q: index.search(q, args.k))[0])
        segs.append(index.describe()["fresh_segments"])
        if index.needs_merge():
            cache.schedule_merge("ns", index)
    cache.wait_for_merges(120)
    print(f"add() of 1 doc:                {percentiles(add_lat)}")
    print(
        f"search right after add():      {percentiles(after_add_lat)}  "
        f"(fresh segments {min(segs)}-{max(segs)}, merges run {cache.stats()['merges_done']})"
    )

    # Worst case of the policy: 8 fresh segments holding ~1% of the docs, plus tombstones.
    index.merge()
    batch = max(1, args.docs // 800)
    for _ in range(8):
        docs = make_docs(rng, batch, words, p)
        index.add(list(range(next_id, next_id + batch)), docs)
        next_id += batch
    index.remove(rng.choice(np.arange(1, args.docs + 1), size=args.docs // 100, replace=False).tolist())
    print(f"shape before merge: {index.describe()}")
    assert index.describe()["fresh_segments"] == 8
    lat = [timed(lambda q=q: index.search(q, args.k))[0] for q in queries]
    print(f"search (1 large + 8 fresh, 1% dead): {percentiles(lat)}")
    before = [index.search(q, args.k) for q in queries[:50]]

    # Search latency while a merge runs on another thread (GIL and memory-bandwidth contention).
    merge_ns: list[int] = []
    merger = threading.Thread(target=lambda: merge_ns.append(timed(index.merge)[0]))
    during: list[int] = []
    merger.start()
    qi = 0
    while merger.is_alive():
        during.append(timed(lambda q=queries[qi % len(queries)]: index.search(q, args.k))[0])
        qi += 1
    merger.join()
    print(f"merge (background thread):     {merge_ns[0] / 1e9:.2f} s")
    print(f"search during that merge:      {percentiles(during)}  ({len(during)} searches)")
    after = [index.search(q, args.k) for q in queries[:50]]
    print(f"results identical before/after merge: {before == after}")
    solo_ns, _ = timed(lambda: (index.add([next_id], [fresh_docs[0]]), index.merge()))
    print(f"merge (alone, 1 fresh doc):    {solo_ns / 1e9:.2f} s")
    lat = [timed(lambda q=q: index.search(q, args.k))[0] for q in queries]
    print(f"search after merge:            {percentiles(lat)}")
    print(f"memory_bytes: {index.memory_bytes() / 2**20:.1f} MiB  {index.describe()}")

    if not args.no_bm25s:
        import bm25s

        ref = bm25s.BM25(k1=1.2, b=0.75, method="lucene")
        ref_ns, _ = timed(lambda: ref.index(corpus, show_progress=False))
        print(f"bm25s reference: index {ref_ns / 1e9:.2f} s", end="")
        lat = []
        for q in queries:
            lat.append(timed(lambda q=q: np.argpartition(ref.get_scores(q), -args.k)[-args.k :])[0])
        print(f", get_scores+top-{args.k} {percentiles(lat)} (numpy backend, static corpus)")


if __name__ == "__main__":
    main()
