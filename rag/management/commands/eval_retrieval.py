"""`manage.py eval_retrieval FILE --k 1,5,10,25,50 --mode hybrid|bm25|vector [--json OUT] [--plot OUT.png]`"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memoryhub.embeddings import get_embedder
from memoryhub.management.base import require_migrated
from rag.evaluation import Report, evaluate, split_half


class Command(BaseCommand):
    help = "Measure retrieval quality (recall@k, hit@k, MRR, nDCG@10) and latency on an eval file."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", type=Path)
        parser.add_argument("--k", default="1,5,10,25,50", help="comma-separated cut-offs")
        parser.add_argument("--mode", choices=["hybrid", "bm25", "vector"], default="hybrid")
        parser.add_argument("--fusion", choices=["rrf", "weighted"])
        parser.add_argument("--weights", help="fusion weights, e.g. bm25=1,vector=0.5")
        parser.add_argument("--half", choices=["tune", "test"],
                            help="only one half of the dev split (choose settings on tune, report on test)")
        parser.add_argument("--context", default="",
                            help="budgets (tokens), e.g. 200,500,1000: the share of evidence turns the "
                                 "assembled context contains at each")
        parser.add_argument("--consolidate", action="store_true",
                            help="consolidate every session after the ingest, as the idle sweep does: search and "
                                 "context then meet the typed memories and insights a deployed service holds")
        parser.add_argument("--json", type=Path, help="write the figures as JSON here")
        parser.add_argument("--plot", type=Path, help="draw recall@k per category into this PNG")

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        try:
            data = json.loads(options["file"].read_text())
            ks = [int(k) for k in options["k"].split(",") if k.strip()]
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        if options["half"]:
            data = split_half(data, options["half"])
        if not ks or min(ks) < 1:
            raise CommandError("--k needs positive integers")
        if options["plot"] and importlib.util.find_spec("matplotlib") is None:
            # A development tool: the runtime lock (and the Docker image) lacks it.
            raise CommandError("--plot needs matplotlib: pip install -r requirements-dev.txt")

        def bar(total: int, desc: str) -> tqdm:
            return tqdm(total=total, desc=desc, unit="it", file=self.stderr._out, leave=False)

        search_options: dict[str, Any] = {"fusion": options["fusion"]} if options["fusion"] else {}
        if options["weights"]:
            try:
                search_options["weights"] = {
                    name.strip(): float(value) for name, value in (p.split("=") for p in options["weights"].split(","))
                }
            except ValueError as exc:
                raise CommandError(f"--weights: {exc}") from exc
        try:
            context_budgets = [int(b) for b in options["context"].split(",") if b.strip()]
        except ValueError as exc:
            raise CommandError(f"--context: {exc}") from exc
        if context_budgets and (search_options or options["mode"] != "hybrid"):
            # The context searches as configured (config/knowledge.yaml): its figures would silently be the
            # configured search's while the lines above them are not.
            raise CommandError("--context measures the context as configured: run it without --mode, --fusion "
                               "and --weights (set those in config/knowledge.yaml to measure them there)")
        report = evaluate(data, ks=ks, mode=options["mode"], progress_factory=bar, search_options=search_options,
                          context_budgets=context_budgets, consolidated=options["consolidate"])
        self._print(report, data.get("name", str(options["file"])), options["mode"])
        if options["json"]:
            options["json"].write_text(json.dumps(report.as_dict(), indent=2))
        if options["plot"]:
            self._plot(report, options["plot"], options["mode"])

    def _print(self, report: Report, name: str, mode: str) -> None:
        columns = [f"recall@{k}" for k in report.ks] + [f"hit@{k}" for k in report.ks if k in (1, 5, 10)]
        columns += ["mrr", "ndcg@10"]
        # The providers the figures are of: the same file gives other figures with another embedder or reranker.
        self.stdout.write(f"{name}  mode={mode}  embedder={get_embedder().name}  "
                          f"semantic_rerank={settings.SEMANTIC_RERANK}  "
                          f"{'consolidated  ' if report.consolidated else ''}queries={report.counts['all']}  "
                          f"ingest={report.ingest['messages']} msgs at {report.ingest['messages_per_s']}/s")
        header = f"{'category':<14}{'n':>5} " + " ".join(f"{c:>10}" for c in columns)
        self.stdout.write(header)
        rows = [*report.per_category.items(), ("overall", report.overall)]
        for category, figures in rows:
            n = report.counts.get(category, report.counts["all"])
            self.stdout.write(f"{category:<14}{n:>5} " + " ".join(f"{figures[c]:>10.3f}" for c in columns))
        self.stdout.write(f"search latency: p50 {report.latency_ms['p50']} ms, p95 {report.latency_ms['p95']} ms")
        if report.context:
            self.stdout.write("evidence in context: " + ", ".join(
                f"{share:.3f} at {budget} tokens" for budget, share in report.context.items()))

    def _plot(self, report: Report, path: Path, mode: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4.5))
        for category, figures in [*report.per_category.items(), ("overall", report.overall)]:
            ax.plot(report.ks, [figures[f"recall@{k}"] for k in report.ks], marker="o", label=category,
                    linewidth=2.5 if category == "overall" else 1.2)
        ax.set_xscale("log")
        ax.set_xticks(report.ks, [str(k) for k in report.ks])
        ax.set_xlabel("k")
        ax.set_ylabel("recall@k")
        ax.set_ylim(0, 1)
        ax.set_title(f"Retrieval recall@k per category ({mode})")
        ax.grid(alpha=0.3)
        ax.legend()
        fig.tight_layout()
        fig.savefig(path, dpi=120)
        self.stdout.write(f"plot written to {path}")
