#!/usr/bin/env python
"""Search latency and ingest throughput, offline providers (hashing embeddings, LLM off).

    .venv/bin/python bench/search_latency.py --chunks 100000

Runs against its own database (`memoryhub_bench` on the embedded server, or the server of
DATABASE_URL) so the dev data is untouched. Chunks are built from real conversation turns
(shared/eval/locomo_dev.json), varied so that no two are identical, and bulk-loaded with COPY;
the HNSW index is rebuilt once after the load. Prints p50/p95 of server-side search time
(`chunks_search`) for hybrid, bm25 and vector, in one namespace of N chunks and with the same
N spread over many users, then search right after a write, then ingest throughput through
the archival pipeline.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Q  # noqa: E402
from pgvector.psycopg import register_vector  # noqa: E402
from psycopg.types.json import Jsonb  # noqa: E402
from tqdm import tqdm  # noqa: E402

from memoryhub import lexicon  # noqa: E402
from memoryhub import services as kernel_services  # noqa: E402
from memoryhub.celery import app as celery_app  # noqa: E402
from memoryhub.embeddings import get_embedder  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402
from memoryhub.search import vectors  # noqa: E402
from memoryhub.search.vectors import EXACT_SCAN_MAX_ROWS  # noqa: E402
from memoryhub.text import analyze_many, count_tokens  # noqa: E402
from rag import chunk_cache  # noqa: E402
from rag import index as bm25_index  # noqa: E402
from rag import services as rag_services  # noqa: E402
from rag.models import Chunk, user_namespace  # noqa: E402
from rag.selectors import chunks_search  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval" / "locomo_dev.json"
COLUMNS = ("tenant_id", "namespace", "user_id", "type", "kind", "source_id", "session_id", "role", "speaker", "text",
           "tokens", "terms", "embedding", "importance", "tags", "meta", "created_ts", "in_hnsw")
TYPES = ["bigint", "varchar", "varchar", "varchar", "varchar", "varchar", "varchar", "varchar", "varchar", "text",
         "integer", "varchar[]", "vector", "float8", "varchar[]", "jsonb", "timestamptz", "bool"]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def fmt(values: list[float]) -> str:
    return f"p50 {statistics.median(values):7.2f} ms   p95 {percentile(values, 0.95):7.2f} ms   (n={len(values)})"


def load_corpus(path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    data = json.loads(path.read_text())
    turns = [(t["speaker"], t["text"]) for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    return turns, [q["question"] for q in data["queries"]]


def synth_texts(turns: list[tuple[str, str]], n: int, rng: random.Random) -> list[tuple[str, str]]:
    """Real turns, each varied by splicing in words of another turn: realistic vocabulary and
    lengths, no exact duplicates."""
    out = []
    for i in range(n):
        speaker, text = turns[i % len(turns)]
        if i >= len(turns):
            donor = rng.choice(turns)[1].split()
            words = text.split()
            cut = rng.randint(0, len(words))
            text = " ".join(words[:cut] + donor[: rng.randint(2, 8)] + words[cut:])
        out.append((speaker, text))
    return out


def copy_chunks(tenant: Tenant, rows: list[tuple[str, str, str]], start: datetime) -> None:
    """rows: (user_id, speaker, text). COPY in binary: ~100x faster than the ORM for vectors.
    Sets `in_hnsw` as chunks_create would: for every chunk of a namespace past the exact-scan limit."""
    texts = [f"{speaker}: {text}" for _, speaker, text in rows]
    sizes = Counter(user_id for user_id, _, _ in rows)
    batch = 5000
    connection.ensure_connection()
    pg = connection.connection
    register_vector(pg)
    with tqdm(total=len(rows), desc="load chunks", unit="chunk", file=sys.stderr) as bar:
        for offset in range(0, len(rows), batch):
            part = rows[offset:offset + batch]
            # A turn's words plus its nouns' categories (memoryhub/lexicon.py), which the real index
            # holds and a list question searches; date terms and preceding turns stay left out.
            terms = [own + lexicon.chunk_terms(text)
                     for own, text in zip(analyze_many(texts[offset:offset + batch]), texts[offset:offset + batch],
                                            strict=True)]
            vectors = get_embedder().embed(texts[offset:offset + batch])
            with pg.cursor() as cur, cur.copy(
                f"COPY rag_chunk ({', '.join(COLUMNS)}) FROM STDIN WITH (FORMAT BINARY)"
            ) as copy:
                copy.set_types(TYPES)
                for j, ((user_id, speaker, text), term_list, vector) in enumerate(zip(part, terms, vectors,
                                                                                       strict=True)):
                    n = offset + j
                    copy.write_row((
                        tenant.pk, user_namespace(user_id), user_id, "dialog", "", f"bench:{n}", f"s{n // 20}",
                        "user", speaker, text, count_tokens(text), term_list, vector, 0.5, [], Jsonb({}),
                        start + timedelta(minutes=n), sizes[user_id] > EXACT_SCAN_MAX_ROWS,
                    ))
            pg.commit()
            bar.update(len(part))
    rag_services.namespaces_recount(tenant=tenant)


def drop_hnsw() -> str:
    """Drop the HNSW index for the bulk load (kept up to date row by row, it would make the load
    several times slower); returns its definition for build_hnsw."""
    with connection.cursor() as cur:
        cur.execute("SELECT indexdef FROM pg_indexes WHERE indexname = 'chunk_embedding_hnsw'")
        definition = cur.fetchone()[0]
        cur.execute("DROP INDEX chunk_embedding_hnsw")
    return definition


def build_hnsw(definition: str) -> float:
    started = time.perf_counter()
    with connection.cursor() as cur:
        cur.execute("SET maintenance_work_mem = '1GB'")
        cur.execute(definition)
        cur.execute("ANALYZE rag_chunk")
    return time.perf_counter() - started


def hnsw_recall(tenant: Tenant, queries: list[str], rng: random.Random, n: int = 100) -> float:
    """Share of the exact top 10 that the approximate search of the large namespace returns."""
    chunks = Chunk.objects.filter(tenant=tenant, namespace=user_namespace("u0"))
    size = chunks.count()
    found = 0
    for query in rng.sample(queries, min(n, len(queries))):
        vector = get_embedder().embed_one(query)
        approximate = vectors.nearest(chunks, vector, 10, namespace_size=size,
                                      hnsw_filter=Q(in_hnsw=True), hnsw_halfvec=True)
        exact = vectors.nearest(chunks, vector, 10, namespace_size=0)
        found += len({pk for pk, _ in approximate} & {pk for pk, _ in exact})
    return found / (10 * min(n, len(queries)))


INGEST_BATCH = 20


def ingest_rate(tenant: Tenant, user_of: Callable[[int], str], texts: list[tuple[str, str]]) -> float:
    started = time.perf_counter()
    with tqdm(total=len(texts), desc="ingest", unit="msg", file=sys.stderr) as bar:
        for offset in range(0, len(texts), INGEST_BATCH):
            part = texts[offset:offset + INGEST_BATCH]
            kernel_services.messages_append(
                tenant=tenant, user_id=user_of(offset), session_id=f"ingest-s{offset // 100}",
                messages=[kernel_services.IncomingMessage(role="user", speaker=s, text=txt) for s, txt in part],
            )
            bar.update(len(part))
    return len(texts) / (time.perf_counter() - started)


def measure(
    tenant: Tenant, users: list[str], queries: list[str], rng: random.Random, n: int
) -> dict[str, tuple[list[float], dict[str, float]]]:
    """Per mode: the total server-side times and the median of each stage."""
    results = {}
    for mode in ("hybrid", "bm25", "vector"):
        times, stages = [], defaultdict(list)
        for i in range(n):
            user = users[i % len(users)]
            result = chunks_search(tenant_id=tenant.pk, user_id=user, query=rng.choice(queries), k=10, mode=mode,
                                   include_tenant_documents=False)
            times.append(result.took_ms)
            for stage, ms in result.timings_ms.items():
                stages[stage].append(ms)
        results[mode] = (times, {stage: statistics.median(v) for stage, v in stages.items()})
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--users", type=int, default=1000, help="users for the spread-out run")
    parser.add_argument("--queries", type=int, default=300, help="searches per mode")
    parser.add_argument("--ingest-messages", type=int, default=3000)
    parser.add_argument("--eval", type=Path, default=EVAL, help="conversations to draw text and queries from")
    parser.add_argument("--ingest-only", action="store_true",
                        help="only the ingest into new users (no load, no search): quick before/after comparisons")
    args = parser.parse_args()
    rng = random.Random(7)
    celery_app.conf.task_always_eager = True

    print(f"database {connection.settings_dict['NAME']}: migrating", file=sys.stderr)
    call_command("migrate", verbosity=0)
    Tenant.objects.filter(name__startswith="bench-").delete()
    turns, queries = load_corpus(args.eval)
    texts = synth_texts(turns, args.chunks, rng)
    start = datetime(2024, 1, 1, tzinfo=UTC)
    if args.ingest_only:
        ingest = Tenant.objects.create(name="bench-ingest")
        rate = ingest_rate(ingest, lambda offset: f"u{offset // 400}", texts[:args.ingest_messages])
        print(f"ingest: {args.ingest_messages} messages in batches of {INGEST_BATCH} into new users: "
              f"{rate:.0f} messages/s")
        Tenant.objects.filter(name__startswith="bench-").delete()
        return

    print(f"MemoryHub search bench: {args.chunks:,} chunks, {args.queries} queries per mode, k=10, "
          f"offline providers ({get_embedder().name}, {get_embedder().dimensions} dims)")
    hnsw = drop_hnsw()
    try:
        one = Tenant.objects.create(name="bench-one")
        copy_chunks(one, [("u0", s, t) for s, t in texts], start)
        spread = Tenant.objects.create(name="bench-spread")
        copy_chunks(spread, [(f"u{i % args.users}", s, t) for i, (s, t) in enumerate(texts)], start)
    finally:
        print(f"HNSW index built in {build_hnsw(hnsw):.1f} s")

    for tenant, users, label in ((one, ["u0"], f"one namespace ({args.chunks:,} chunks)"),
                                 (spread, [f"u{i}" for i in range(args.users)],
                                  f"{args.users} users (~{args.chunks // args.users} chunks each)")):
        t = time.perf_counter()
        for user in users:
            bm25_index.namespace_index(tenant.pk, user_namespace(user))
        print(f"\n[{label}] BM25 cache load: {time.perf_counter() - t:.2f} s")
        # What a process that has served these users holds: their small namespaces' chunks too
        # (rag.chunk_cache; a large namespace is not cached). Its cost is a user's first search.
        t = time.perf_counter()
        for user in users:
            namespace = user_namespace(user)
            [index], marks, _ = bm25_index.namespace_indexes_and_watermarks(tenant.pk, [namespace])
            chunk_cache.namespace_store(tenant.pk, namespace, marks.get(namespace), len(index))
        print(f"  chunk cache load: {time.perf_counter() - t:.2f} s ({len(chunk_cache.cache())} namespaces cached)")
        measure(tenant, users, queries, rng, 20)  # warm-up
        for mode, (times, stages) in measure(tenant, users, queries, rng, args.queries).items():
            breakdown = ", ".join(f"{stage} {ms:.1f}" for stage, ms in stages.items())
            print(f"  {mode:<7} {fmt(times)}   stages (median ms): {breakdown}")
        if tenant is one:
            print(f"  HNSW (halfvec, iterative scan) recall@10 against an exact scan: "
                  f"{hnsw_recall(one, queries, rng):.3f}")

    # Search right after a write: each search is preceded by one new chunk in the namespace.
    times, write_times = [], []
    for i in range(args.queries):
        t = time.perf_counter()
        rag_services.chunks_create(tenant=one, namespace=user_namespace("u0"), drafts=[rag_services.ChunkDraft(
            type="dialog", text=f"{rng.choice(turns)[1]} (fresh {i})", source_id=f"fresh:{i}", user_id="u0")])
        write_times.append((time.perf_counter() - t) * 1000)
        times.append(chunks_search(tenant_id=one.pk, user_id="u0", query=rng.choice(queries), k=10,
                                   include_tenant_documents=False).took_ms)
    print(f"\n[one namespace] hybrid right after adding one chunk: {fmt(times)}")
    print(f"  the write itself (analyse + embed + insert + HNSW insert): {fmt(write_times)}")

    # Ingest through the archival pipeline: API-equivalent service call, job run in-process.
    # New users first (small namespaces, exact vector scans, no HNSW insert), then the same
    # turns appended to the large namespace, where each chunk is also inserted into the HNSW graph.
    ingest = Tenant.objects.create(name="bench-ingest")
    rate = ingest_rate(ingest, lambda offset: f"u{offset // 400}", texts[:args.ingest_messages])
    print(f"\ningest: {args.ingest_messages} messages in batches of {INGEST_BATCH} through the archival pipeline:")
    print(f"  into new users (400 messages each):         {rate:.0f} messages/s")
    rate = ingest_rate(one, lambda offset: "u0", texts[:args.ingest_messages])
    print(f"  into the namespace of {args.chunks:,} chunks (HNSW): {rate:.0f} messages/s")
    Tenant.objects.filter(name__startswith="bench-").delete()


if __name__ == "__main__":
    main()
