#!/usr/bin/env python
"""Per-request cost of the read endpoints, in process: ms and SQL queries per request.

    .venv/bin/python bench/request_cost.py                  # search and context, 200 requests each
    .venv/bin/python bench/request_cost.py -n 300 --profile context   # + cProfile top functions

Runs the whole Django stack (middleware, DRF auth, throttle, serializers) through the test client
against the database `bench/http_load.py` seeds (`memoryhub_load`; run that once first), one
request after another. No HTTP server, no concurrency: the figure is the CPU and database time a
request costs, which is what bounds req/s on a small machine and is far less noisy than a load run.
On a shared machine the wall-clock median still moves with the neighbours' load: compare the
`min` (the undisturbed cost) and this process's CPU time (the Python side alone; the database's
share runs in its own process) from runs made one after the other.
Database connections are handled as in production (closed or kept per `CONN_MAX_AGE` at the end
of each request).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_load")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["EMBEDDED_BEAT"] = "0"
os.environ.setdefault("API_THROTTLE_RATE", "100000000/min")
EVAL = ROOT.parent / "shared" / "eval" / "locomo_dev.json"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=200, help="requests per endpoint")
    parser.add_argument("--profile", choices=["search", "context"], help="cProfile this endpoint's loop")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()

    import django

    django.setup()
    from django.db import close_old_connections, connection, reset_queries
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from memoryhub import services
    from memoryhub.models import Tenant

    tenant = Tenant.objects.filter(name="load").first()
    if tenant is None:
        raise SystemExit("no 'load' tenant: run bench/http_load.py once to seed memoryhub_load")
    _, key = services.api_key_create(tenant=tenant, name="request_cost")
    questions = [q["question"] for q in json.loads(EVAL.read_text())["queries"]][:300]
    users = [f"user{i}" for i in range(10)]
    rng = random.Random(7)
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def body(path: str) -> str:
        b = {"user_id": rng.choice(users), "query": rng.choice(questions)}
        if path.endswith("search"):
            b["k"] = 10
        return json.dumps(b)

    for path in ("/api/v1/search", "/api/v1/context"):  # warm BM25 caches and imports
        for _ in range(30):
            assert client.post(path, body(path), content_type="application/json").status_code == 200

    print(f"{args.n} requests per endpoint, in process, one at a time")
    for name in ("search", "context"):
        path = f"/api/v1/{name}"
        times: list[float] = []
        cpu: list[float] = []
        queries: list[int] = []
        profiler = cProfile.Profile() if args.profile == name else None
        for _ in range(args.n):
            payload = body(path)
            reset_queries()
            with CaptureQueriesContext(connection) as captured:
                if profiler:
                    profiler.enable()
                started, cpu_started = time.perf_counter(), time.process_time()
                response = client.post(path, payload, content_type="application/json")
                # The test client keeps Django from closing connections at the end of a request;
                # do what the request_finished signal does under gunicorn, inside the timing.
                close_old_connections()
                times.append((time.perf_counter() - started) * 1000)
                cpu.append((time.process_time() - cpu_started) * 1000)
                if profiler:
                    profiler.disable()
            assert response.status_code == 200, response.content[:300]
            queries.append(len(captured.captured_queries))
        times.sort()
        print(f"  {name:<8} median {statistics.median(times):6.2f} ms  min {times[0]:6.2f} ms  "
              f"p90 {times[int(0.9 * len(times))]:6.2f} ms  CPU here {statistics.median(cpu):6.2f} ms  "
              f"queries/request median {statistics.median(queries):.0f} (min {min(queries)}, max {max(queries)})")
        if profiler:
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("cumulative").print_stats(args.top)
            print(out.getvalue())
            out = io.StringIO()
            pstats.Stats(profiler, stream=out).sort_stats("tottime").print_stats(args.top)
            print(out.getvalue())


if __name__ == "__main__":
    main()
