#!/usr/bin/env python
"""What a semantic reranker costs: ingest and search, off against on.

    .venv/bin/python bench/semantic_rerank.py [--eval ../shared/eval/madial_dev_zh.json] [--rounds 3]
    .venv/bin/python bench/semantic_rerank.py --model minilm --eval ../shared/eval/madial_dev_en.json

`--model e5` (the default) turns SEMANTIC_RERANK off and on, `--model minilm` ENGLISH_RERANK (the English
dialogue reranker; a question in English pays nothing, so its `question` figures are the control).

Runs against its own database (`memoryhub_bench`). Each round stores the file's conversations through the
real pipeline (the archival job in process, as `eval_retrieval` does) once with the reranker off and once
on, then searches every query of the file as it is (a whole dialogue for MADial) and as its last user turn
alone (a question), and prints ingest messages/s and the p50 / p95 of the search and of its `semantic`
stage. Rounds alternate off and on, so a busy machine weighs on both alike; the medians over rounds are
printed last.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.test import override_settings  # noqa: E402
from tqdm import tqdm  # noqa: E402

from memoryhub.celery import app as celery_app  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402
from rag import index as bm25_index  # noqa: E402
from rag.evaluation import ingest, percentile  # noqa: E402
from rag.query import dialogue_turns  # noqa: E402
from rag.selectors import chunks_search  # noqa: E402

EVAL = ROOT.parent / "shared" / "eval" / "madial_dev_zh.json"


def last_user_turn(query: str) -> str:
    turns = dialogue_turns(query)
    return turns[-1][1] if turns else query


SETTING = {"e5": "SEMANTIC_RERANK", "minilm": "ENGLISH_RERANK"}


def one_round(data: dict, model: str, rerank: str) -> dict[str, float]:
    figures: dict[str, float] = {}
    with override_settings(**{SETTING[model]: rerank}):
        tenant = Tenant.objects.create(name=f"bench-semantic-{uuid.uuid4().hex[:8]}")
        try:
            total = sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])
            started = time.perf_counter()
            with tqdm(total=total, desc=f"ingest ({rerank})", leave=False) as bar:
                stored = ingest(tenant, data["conversations"], bar.update)
            figures["ingest_msgs_per_s"] = stored / (time.perf_counter() - started)
            for shape, pick in (("dialogue", lambda q: q), ("question", last_user_turn)):
                took, stage = [], []
                for q in tqdm(data["queries"], desc=f"search {shape} ({rerank})", leave=False):
                    result = chunks_search(tenant_id=tenant.pk, user_id=q["user_id"], query=pick(q["question"]), k=10,
                                           include_tenant_documents=False)
                    took.append(result.took_ms)
                    stage.append(result.timings_ms.get("semantic", 0.0))
                figures[f"{shape}_p50_ms"] = percentile(took, 0.5)
                figures[f"{shape}_p95_ms"] = percentile(took, 0.95)
                figures[f"{shape}_semantic_p50_ms"] = percentile(stage, 0.5)
        finally:
            for conversation in data["conversations"]:
                bm25_index.forget(tenant.pk, f"user:{conversation['user_id']}")
            tenant.delete()
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--eval", type=Path, default=EVAL, help="conversations and queries (shared/eval/FORMAT.md)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--model", choices=sorted(SETTING), default="e5", help="the reranker turned off and on")
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    celery_app.conf.task_always_eager = True
    data = json.loads(args.eval.read_text())
    # A first search loads the word vectors and the model: not what a running process pays.
    one_round({**data, "queries": data["queries"][:2]}, args.model, args.model)
    runs: dict[str, list[dict[str, float]]] = {"off": [], args.model: []}
    for n in range(args.rounds):
        for rerank in ("off", args.model):
            runs[rerank].append(one_round(data, args.model, rerank))
            print(f"round {n + 1} {rerank:>6}: " + ", ".join(f"{k} {v:.1f}" for k, v in runs[rerank][-1].items()),
                  flush=True)
    print(f"\n{data.get('name', args.eval.name)} ({SETTING[args.model]}): medians of {args.rounds} rounds, "
          f"{sum(len(s['turns']) for c in data['conversations'] for s in c['sessions'])} messages, "
          f"{len(data['queries'])} queries")
    for key in runs["off"][0]:
        off = statistics.median(r[key] for r in runs["off"])
        on = statistics.median(r[key] for r in runs[args.model])
        print(f"  {key:<28} off {off:8.1f}   on {on:8.1f}")


if __name__ == "__main__":
    main()
