#!/usr/bin/env python
"""Ingest throughput of two or more checkouts (or settings) in one run, alternating.

    .venv/bin/python bench/ingest_compare.py --case old=/tmp/old --case new=. --rounds 5
    .venv/bin/python bench/ingest_compare.py --case new=. \
        --case consolidating=.,MEMORY_CONSOLIDATION_EVERY=30 --messages 1200

A case is `LABEL=DIR[,VAR=VALUE...]`: a checkout of the code and environment variables for it.
Every round runs each case once, in turn, in a fresh process whose code comes from DIR (its own
database, `memoryhub_ingest_<label>`, migrated by that code, on this checkout's embedded server),
so the machine's load falls on all cases alike; the figures are the medians over the rounds and
their ratio to the first case.

Each run stores the same LoCoMo turns through `messages_append` in batches of 20 (users of 400
messages, sessions of 100) with tasks in-process, as `bench/search_latency.py --ingest-only` does,
after a short warm-up; each batch is framed by Django's request signals, as in a web process
(the connection's health check, and the request activity in-process deferred work waits out),
unless `--direct`. Two rates are printed: `accepted`, messages over the time until the last
`messages_append` returned (what a client sees), and `settled`, over the time until every job and
consolidation run the batches asked for is done and every turn has its reranker vectors, so work moved off
the request path still counts.
Unless a case sets them, MEMORY_CONSOLIDATION_EVERY is 1000000 (index only: the old code had no
consolidation) and EMBEDDED_BEAT is 0; with EMBEDDED_BEAT=1 the run starts the embedded beat as a
web process does, which lets in-process work such as consolidation leave the request path.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EVAL = ROOT.parent / "shared" / "eval" / "locomo_dev.json"
BATCH = 20
WARMUP = 200


def run_worker(app_dir: Path, messages: int, eval_path: Path, as_requests: bool) -> dict[str, float]:
    """In the child process: ingest with the code of `app_dir` and return the figures."""
    sys.path.insert(0, str(app_dir))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
    import django

    django.setup()
    from django.apps import apps
    from django.core.management import call_command
    from django.core.signals import request_finished, request_started

    from memoryhub import services
    from memoryhub.models import ArchivalJob, Tenant

    call_command("migrate", verbosity=0)
    if os.environ.get("EMBEDDED_BEAT") == "1":
        # As a web process of the embedded mode does (wsgi.py): in-process work may be deferred.
        from memoryhub.beat import start_if_embedded

        start_if_embedded()
    Tenant.objects.filter(name__startswith="ingest-bench").delete()
    data = json.loads(eval_path.read_text())
    turns = [(t["speaker"], t["text"]) for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    texts = [turns[i % len(turns)] for i in range(WARMUP + messages)]
    consolidation = (apps.get_model("rag", "MemoryConsolidation")
                     if any(m.__name__ == "MemoryConsolidation" for m in apps.get_app_config("rag").get_models())
                     else None)

    def ingest(tenant: Tenant, part: list[tuple[str, str]], prefix: str) -> None:
        for offset in range(0, len(part), BATCH):
            batch = [services.IncomingMessage(role="user", speaker=s, text=t) for s, t in part[offset:offset + BATCH]]
            if as_requests:
                request_started.send(sender=None, environ={})
            services.messages_append(tenant=tenant, user_id=f"{prefix}u{offset // 400}",
                                     session_id=f"s{offset // 100}", messages=batch)
            if as_requests:
                request_finished.send(sender=None)

    chunk = apps.get_model("rag", "Chunk")
    # Turns waiting for their reranker vectors (rag.services.chunks_rerank_fill), in code that has the flag.
    pending_vectors = any(f.name == "rerank_pending" for f in chunk._meta.get_fields())

    def settled(tenant: Tenant) -> bool:
        if ArchivalJob.objects.filter(tenant=tenant).exclude(status="done").exists():
            return False
        if pending_vectors and chunk.objects.filter(tenant=tenant, rerank_pending=True).exists():
            return False
        return consolidation is None or not consolidation.objects.filter(tenant=tenant).exclude(
            status="done").exists()

    def wait_settled(tenant: Tenant) -> None:
        deadline = time.monotonic() + 600
        while not settled(tenant) and time.monotonic() < deadline:
            time.sleep(0.1)  # not oftener: the polling's queries would take the GIL from the background work

    warm = Tenant.objects.create(name="ingest-bench-warmup")
    ingest(warm, texts[:WARMUP], "w")
    wait_settled(warm)  # the warm-up's deferred work must not run inside the timed part
    tenant = Tenant.objects.create(name="ingest-bench")
    started = time.perf_counter()
    ingest(tenant, texts[WARMUP:], "")
    accepted = time.perf_counter() - started
    wait_settled(tenant)
    done = time.perf_counter() - started
    runs = consolidation.objects.filter(tenant=tenant).count() if consolidation is not None else 0
    unsettled = not settled(tenant)
    Tenant.objects.filter(name__startswith="ingest-bench").delete()
    return {"accepted": messages / accepted, "settled": messages / done, "consolidations": runs,
            "unsettled": unsettled}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--case", action="append", required=True, help="LABEL=DIR[,VAR=VALUE...] (repeat)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=1200, help="messages per run (after the warm-up)")
    parser.add_argument("--eval", type=Path, default=EVAL, help="conversations to draw the turns from")
    parser.add_argument("--direct", action="store_true",
                        help="call messages_append without Django's request signals around each batch")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(run_worker(args.worker, args.messages, args.eval, not args.direct)))
        return

    cases = []
    for spec in args.case:
        label, _, rest = spec.partition("=")
        app_dir, *assignments = rest.split(",")
        env = dict(a.split("=", 1) for a in assignments)
        cases.append((label, Path(app_dir).resolve(), env))
    results: dict[str, list[dict[str, float]]] = {label: [] for label, _, _ in cases}
    print(f"{args.messages} messages per run in batches of {BATCH}, {args.rounds} rounds, tasks in-process",
          flush=True)
    for n in range(args.rounds):
        for label, app_dir, extra in cases:
            env = {k: v for k, v in os.environ.items() if k not in ("REDIS_URL", "DATABASE_URL")}
            env |= {"MEMORYHUB_DB_NAME": f"memoryhub_ingest_{label.replace('-', '_')}", "LOG_LEVEL": "ERROR",
                    "EMBEDDED_BEAT": "0", "MEMORYHUB_VAR_DIR": os.environ.get("MEMORYHUB_VAR_DIR") or str(ROOT / "var"),
                    "MEMORY_CONSOLIDATION_EVERY": "1000000"} | extra
            out = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--worker", str(app_dir), "--messages",
                 str(args.messages), "--eval", str(args.eval), "--case", "-", *(["--direct"] if args.direct else [])],
                cwd=app_dir, env=env, capture_output=True, text=True, check=False,
            )
            if out.returncode != 0:
                raise SystemExit(f"{label} failed:\n{out.stderr[-3000:]}")
            r = json.loads(out.stdout.strip().splitlines()[-1])
            results[label].append(r)
            print(f"  round {n + 1} {label:<16} accepted {r['accepted']:6.0f} msg/s  settled {r['settled']:6.0f} msg/s"
                  f"  consolidations {r['consolidations']}" + ("  NOT SETTLED" if r["unsettled"] else ""), flush=True)
    first = cases[0][0]
    base = {k: statistics.median(r[k] for r in results[first]) for k in ("accepted", "settled")}
    print("medians:")
    for label, _, _ in cases:
        med = {k: statistics.median(r[k] for r in results[label]) for k in ("accepted", "settled")}
        spread = {k: (min(r[k] for r in results[label]), max(r[k] for r in results[label])) for k in med}
        line = "   ".join(f"{k} {med[k]:6.0f} msg/s ({spread[k][0]:.0f}-{spread[k][1]:.0f}, x{med[k] / base[k]:.2f})"
                           for k in med)
        print(f"  {label:<16} {line}")


if __name__ == "__main__":
    main()
