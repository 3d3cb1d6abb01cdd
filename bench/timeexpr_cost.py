"""Cost of the date terms (memoryhub/timeexpr.py) on the dev data, optionally against another copy.

Times `query_weights` over every question of the LoCoMo dev file and over MADial's dialogue
queries, and `chunk_terms` over every LoCoMo turn with its session day; prints the median per call
over rounds. With `--against OLD.py` (e.g. `git show HEAD~1:memoryhub/timeexpr.py > /tmp/old.py`)
the two modules run in alternating rounds, so a shared machine's load falls on both alike.

    .venv/bin/python bench/timeexpr_cost.py --rounds 21 [--against /tmp/old.py]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time
from datetime import date, datetime
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

EVAL = ROOT.parent / "shared" / "eval"


def load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module


def workloads(eval_dir: Path) -> dict[str, Any]:
    locomo = json.loads((eval_dir / "locomo_dev.json").read_text())
    questions = [q["question"] for q in locomo["queries"]]
    turns = [(t["text"], date.fromisoformat(s["started_at"][:10]))
             for c in locomo["conversations"] for s in c["sessions"] for t in s["turns"]]
    dialogues = [q["question"] for name in ("madial_dev_en.json", "madial_dev_zh.json")
                 for q in json.loads((eval_dir / name).read_text())["queries"]]
    return {"questions": questions, "dialogues": dialogues, "turns": turns}


def one_round(module: ModuleType, work: dict[str, Any], now: datetime) -> dict[str, float]:
    """µs per call of each workload in one pass."""
    out = {}
    for name in ("questions", "dialogues"):
        started = time.perf_counter()
        for query in work[name]:
            module.query_weights(query, now)
        out[f"query_weights {name}"] = (time.perf_counter() - started) / len(work[name]) * 1e6
    started = time.perf_counter()
    for text, day in work["turns"]:
        module.chunk_terms(text, day)
    out["chunk_terms turns"] = (time.perf_counter() - started) / len(work["turns"]) * 1e6
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--against", type=Path, help="another timeexpr.py to alternate with")
    parser.add_argument("--eval-dir", type=Path, default=EVAL)
    args = parser.parse_args()
    work = workloads(args.eval_dir)
    modules = {"this": load(ROOT / "memoryhub" / "timeexpr.py", "timeexpr_this")}
    if args.against:
        modules["against"] = load(args.against, "timeexpr_against")
    now = datetime(2024, 1, 1, 12, 0)
    for module in modules.values():
        one_round(module, work, now)  # warm the regex cache
    rows: dict[str, dict[str, list[float]]] = {name: {} for name in modules}
    for _ in range(args.rounds):
        for name, module in modules.items():
            for key, value in one_round(module, work, now).items():
                rows[name].setdefault(key, []).append(value)
    load1, load5, _ = os.getloadavg()
    print(f"{len(work['questions'])} questions, {len(work['dialogues'])} dialogues, {len(work['turns'])} turns; "
          f"{args.rounds} rounds; load average {load1:.2f} / {load5:.2f}")
    for name, figures in rows.items():
        print(name + ": " + ", ".join(f"{key} median {statistics.median(values):.1f} µs"
                                      for key, values in figures.items()))


if __name__ == "__main__":
    main()
