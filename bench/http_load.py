#!/usr/bin/env python
"""HTTP load on loopback: req/s and p50/p95/p99 per endpoint and concurrency, through gunicorn.

    .venv/bin/python bench/http_load.py                      # search and context, 4 and 16 clients
    .venv/bin/python bench/http_load.py --seconds 20 --clients 1,4,16 --workers 2
    .venv/bin/python bench/http_load.py --app-dir /tmp/base --app-dir .   # before/after, alternating
    .venv/bin/python bench/http_load.py --variant old=/tmp/base --variant 'new=.:--workers 3' --rounds 3

`--app-dir` (repeatable) serves from another checkout of the code (its own gunicorn.conf.py) on the
same database, so a before/after comparison runs in one session under the same machine load; the
steps alternate between the checkouts, and each line says which one it measured. `--variant` does
the same with gunicorn arguments of its own (a worker class, a worker count); `--rounds` repeats
the alternation and prints the medians.

Seeds its own database (`memoryhub_load` on the embedded server, or DATABASE_URL's server) with
conversation turns from the shared LoCoMo dev file (~9k chunks over 10 users) the first time,
starts `gunicorn -w N` on 127.0.0.1 with the offline providers, and drives it with client
threads on persistent HTTP/1.1 connections for a bounded time per step. The client, the server
and the database share the machine, so compare figures from one run only.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
DB_NAME = "memoryhub_load"
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", DB_NAME)
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["EMBEDDED_BEAT"] = "0"
EVAL = ROOT.parent / "shared" / "eval" / "locomo_dev.json"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def seed(users: int, reseed: bool) -> tuple[str, list[str], list[str]]:
    """The load tenant's key, its users and some questions; messages are ingested once."""
    import django

    django.setup()
    from django.core.management import call_command

    from memoryhub import services
    from memoryhub.models import Tenant

    call_command("migrate", verbosity=0)
    data = json.loads(EVAL.read_text())
    questions = [q["question"] for q in data["queries"]]
    user_ids = [f"user{i}" for i in range(users)]
    existing = Tenant.objects.filter(name="load").first()
    if existing is not None and not reseed and existing.conversations.count() > 0:
        _, key = services.api_key_create(tenant=existing, name="http_load")
        return key, user_ids, questions
    Tenant.objects.filter(name="load").delete()
    tenant, key = services.tenant_create(name="load")
    turns = [(t["speaker"], t["text"]) for c in data["conversations"] for s in c["sessions"] for t in s["turns"]]
    per_user = max(1, 9000 // users)
    from tqdm import tqdm

    with tqdm(total=per_user * users, desc="seeding", unit="msg") as bar:
        for n, user in enumerate(user_ids):
            rng = random.Random(n)
            picked = [turns[rng.randrange(len(turns))] for _ in range(per_user)]
            for start in range(0, per_user, 100):
                batch = [services.IncomingMessage(role="user" if i % 2 == 0 else "assistant", speaker=speaker,
                                                  text=text)
                         for i, (speaker, text) in enumerate(picked[start:start + 100])]
                services.messages_append(tenant=tenant, user_id=user, session_id=f"s{start // 1000}",
                                         messages=batch)
                bar.update(len(batch))
    return key, user_ids, questions


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(port: int, workers: int, app_dir: Path = ROOT, extra: Sequence[str] = ()) -> subprocess.Popen:
    env = os.environ | {"API_THROTTLE_RATE": "100000000/min", "DEBUG": "0", "ALLOWED_HOSTS": "127.0.0.1",
                        # Another checkout uses this one's embedded server and database.
                        "MEMORYHUB_VAR_DIR": os.environ.get("MEMORYHUB_VAR_DIR") or str(ROOT / "var")}
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", str(workers), "--log-level", "warning", *extra],
        cwd=app_dir, env=env, start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/healthz")
            if conn.getresponse().status == 200:
                return server
        except OSError:
            time.sleep(0.3)
    server.kill()
    raise SystemExit("gunicorn did not come up")


def drive(port: int, key: str, path: str, bodies: list[dict], clients: int, seconds: float) -> dict[str, float]:
    latencies: list[float] = []
    errors: dict[int, int] = {}
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def client(n: int) -> None:
        rng = random.Random(n)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
        mine: list[float] = []
        while time.monotonic() < stop_at:
            body = json.dumps(bodies[rng.randrange(len(bodies))])
            started = time.perf_counter()
            try:
                conn.request("POST", path, body, headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except OSError:
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                status = 599
            elapsed = (time.perf_counter() - started) * 1000
            if status == 200:
                mine.append(elapsed)
            else:
                with lock:
                    errors[status] = errors.get(status, 0) + 1
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    took = time.monotonic() - started
    if not latencies:
        return {"rps": 0.0, "p50": 0.0, "p95": 0.0, "p99": 0.0, "errors": sum(errors.values())}
    return {"rps": len(latencies) / took, "p50": statistics.median(latencies), "p95": percentile(latencies, 0.95),
            "p99": percentile(latencies, 0.99), "errors": sum(errors.values()), "by_status": errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", default="4,16", help="comma-separated concurrency levels")
    parser.add_argument("--seconds", type=float, default=10.0, help="per endpoint and concurrency")
    parser.add_argument("--workers", type=int, default=2, help="gunicorn workers")
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--app-dir", action="append", type=Path,
                        help="serve from this checkout (repeat to compare; default: this one)")
    parser.add_argument("--variant", action="append", default=[],
                        help="LABEL=DIR[:GUNICORN ARGS], e.g. 'gthread=.:--worker-class gthread --threads 1' "
                             "(repeat; alternates with the --app-dir ones)")
    parser.add_argument("--endpoints", default="search,context", help="comma-separated: search, context")
    parser.add_argument("--rounds", type=int, default=1, help="repeat every step, alternating; medians at the end")
    parser.add_argument("--reseed", action="store_true", help="ingest the messages again")
    args = parser.parse_args()
    key, users, questions = seed(args.users, args.reseed)
    rng = random.Random(7)
    searches = [{"user_id": rng.choice(users), "query": q, "k": 10} for q in questions[:300]]
    contexts = [{"user_id": rng.choice(users), "query": q} for q in questions[:300]]
    variants: list[tuple[str, Path, list[str]]] = [(d.resolve().name, d.resolve(), []) for d in args.app_dir or []]
    for spec in args.variant:
        label, _, rest = spec.partition("=")
        directory, _, extra = rest.partition(":")
        variants.append((label, Path(directory).resolve(), extra.split()))
    variants = variants or [(ROOT.name, ROOT, [])]
    endpoints = {"search": ("/api/v1/search", searches), "context": ("/api/v1/context", contexts)}
    print(f"gunicorn -w {args.workers}, {args.seconds:.0f} s per step, {len(users)} users, {args.rounds} round(s)")
    results: dict[tuple[str, int, str], list[dict[str, float]]] = {}
    for _ in range(args.rounds):
        for clients in [int(c) for c in args.clients.split(",")]:
            for name in args.endpoints.split(","):
                path, bodies = endpoints[name]
                for label, app_dir, extra in variants:
                    port = free_port()
                    server = start_server(port, args.workers, app_dir, extra)
                    try:
                        # Warm every worker's BM25 caches so a step does not measure cold builds.
                        drive(port, key, "/api/v1/search", searches, 4, 3.0)
                        r = drive(port, key, path, bodies, clients, args.seconds)
                    finally:
                        os.killpg(server.pid, signal.SIGTERM)
                        server.wait(20)
                    results.setdefault((name, clients, label), []).append(r)
                    print(f"  {name:<8} {clients:>3} clients  {r['rps']:7.1f} req/s  p50 {r['p50']:7.1f} ms  "
                          f"p95 {r['p95']:7.1f} ms  p99 {r['p99']:7.1f} ms  errors {r['errors']}"
                          + (f" {r['by_status']}" if r["errors"] else "")
                          + (f"  [{label}]" if len(variants) > 1 else ""), flush=True)
    if args.rounds > 1 or len(variants) > 1:
        print("medians (ratio of req/s to the first variant):")
        for (name, clients, label), runs in results.items():
            med = {k: statistics.median(r[k] for r in runs) for k in ("rps", "p50", "p95", "p99")}
            first = statistics.median(r["rps"] for r in results[(name, clients, variants[0][0])])
            print(f"  {name:<8} {clients:>3} clients  {med['rps']:7.1f} req/s (x{med['rps'] / first:.2f})  "
                  f"p50 {med['p50']:7.1f} ms  p95 {med['p95']:7.1f} ms  p99 {med['p99']:7.1f} ms  "
                  f"errors {sum(r['errors'] for r in runs)}  [{label}]")


if __name__ == "__main__":
    main()
