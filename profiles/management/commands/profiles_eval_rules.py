"""Print the rule-based fact extractors' precision and recall per language on a labelled table."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from profiles.rules.evaluate import evaluate, load_cases


class Command(BaseCommand):
    help = "Precision and recall of the rule-based fact extractors (en, ru, zh) on a labelled table."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--cases", type=Path, default=Path(settings.BASE_DIR) / "tests" / "profiles" / "rule_cases.yaml",
            help="YAML table of cases (default: tests/profiles/rule_cases.yaml).",
        )
        parser.add_argument("--errors", action="store_true", help="Also list every case the rules get wrong.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["cases"].is_file():
            raise CommandError(f"No case table at {options['cases']}; pass one with --cases.")
        scores = evaluate(load_cases(options["cases"]))
        self.stdout.write(f"{'lang':<5}{'set':<9}{'cases':>6}{'TP':>5}{'FP':>5}{'FN':>5}{'precision':>11}{'recall':>8}"
                          f"{'neg. with output':>18}")
        for (lang, subset), s in scores.items():
            self.stdout.write(f"{lang:<5}{subset:<9}{s.cases:>6}{s.tp:>5}{s.fp:>5}{s.fn:>5}{s.precision:>11.3f}"
                              f"{s.recall:>8.3f}{f'{s.negatives_with_output}/{s.negatives}':>18}")
        if options["errors"]:
            for (lang, subset), s in scores.items():
                if subset == "all":
                    continue
                for error in s.errors:
                    gap = f"  gap: {error['gap']}" if error["gap"] else ""
                    self.stdout.write(f"[{lang}/{subset}] {error['text']}  missed={error['missed']} "
                                      f"spurious={error['spurious']}{gap}")
