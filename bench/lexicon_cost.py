#!/usr/bin/env python
"""What the WordNet category terms (memoryhub/lexicon.py) cost: the first call's load, in fresh
processes, and the memory it keeps; then per stored turn (`lexicon.chunk_terms`, write path) and per
query (`lexicon.query_weights`, read path), medians over alternating rounds, beside what the same
texts cost in `analyze` (the words' own BM25 terms) for scale.

    .venv/bin/python bench/lexicon_cost.py [--rounds 21] [--loads 5]

Texts: every turn and question of shared/eval/locomo_dev.json and the dialogue queries of
madial_dev_en.json. No database, no Django.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
EVAL = ROOT.parent / "shared" / "eval"

_LOAD = """
import gc, time
from memoryhub import text  # imported first: its own start-up is not the lexicon's
def rss():
    return int(open('/proc/self/statm').read().split()[1]) * 4096
gc.collect(); before = rss(); t = time.perf_counter()
from memoryhub import lexicon
lexicon.stats()
seconds = time.perf_counter() - t
gc.collect()
print(seconds, (rss() - before) / 1e6)
"""


def per_item_us(fn: Callable[[str], object], texts: Sequence[str]) -> float:
    started = time.perf_counter()
    for t in texts:
        fn(t)
    return (time.perf_counter() - started) / len(texts) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--loads", type=int, default=5)
    args = parser.parse_args()

    loads = []
    for _ in range(args.loads):
        out = subprocess.run([sys.executable, "-c", _LOAD], cwd=ROOT, capture_output=True, text=True, check=True,
                             env={**os.environ, "PYTHONPATH": str(ROOT)})
        seconds, megabytes = (float(x) for x in out.stdout.split())
        loads.append((seconds, megabytes))
    seconds = statistics.median(s for s, _ in loads)
    kept = statistics.median(m for _, m in loads)
    print(f"first call (load, fresh process, {args.loads} runs): median {seconds:.2f} s, memory kept {kept:.0f} MB")

    from memoryhub import lexicon
    from memoryhub.text import analyze

    locomo = json.loads((EVAL / "locomo_dev.json").read_text())
    turns = [t["text"] for c in locomo["conversations"] for s in c["sessions"] for t in s["turns"] if t["text"].strip()]
    questions = [q["question"] for q in locomo["queries"]]
    dialogues = [q["question"] for q in json.loads((EVAL / "madial_dev_en.json").read_text())["queries"]]
    lexicon.stats()  # loaded: the rounds measure the steady state
    stages: dict[str, list[float]] = {}
    # Cold caches each round: the per-word lru_cache would otherwise answer every repeat of the corpus.
    for _ in range(args.rounds):
        for name, fn, texts in (
            ("turn: analyze", analyze, turns),
            ("turn: lexicon.chunk_terms", lexicon.chunk_terms, turns),
            ("question: analyze", analyze, questions),
            ("question: lexicon.query_weights", lexicon.query_weights, questions),
            ("dialogue query: analyze", analyze, dialogues),
            ("dialogue query: lexicon.query_weights", lexicon.query_weights, dialogues),
        ):
            lexicon._word_categories.cache_clear()
            stages.setdefault(name, []).append(per_item_us(fn, texts))
    print(f"per text, median of {args.rounds} rounds (word caches cleared each round): "
          f"{len(turns)} turns, {len(questions)} questions, {len(dialogues)} dialogue queries")
    for name, values in stages.items():
        print(f"  {name:<40} {statistics.median(values):8.1f} µs")
    with_terms = sum(len(lexicon.chunk_terms(t)) for t in turns) / len(turns)
    asking = sum(1 for q in questions if lexicon.query_weights(q))
    print(f"category terms per turn: {with_terms:.1f}; questions asking for a category: {asking} of {len(questions)}")
    print(f"load average: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
