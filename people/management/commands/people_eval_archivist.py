"""`manage.py people_eval_archivist [FILE] [--errors] [--json OUT]`: the rule-based archivist's
precision and recall per language on the evaluation table (default: tests/people/data/)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from people import evaluation


class Command(BaseCommand):
    help = "Measure the rule-based archivist's precision, recall and circle accuracy per language."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file", nargs="?", type=Path, default=evaluation.DEFAULT_FILE)
        parser.add_argument("--errors", action="store_true", help="list every miss and spurious name")
        parser.add_argument("--json", type=Path, help="write the figures as JSON here")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            data = evaluation.load(options["file"])
        except (OSError, ValueError) as exc:
            raise CommandError(str(exc)) from exc
        reports = evaluation.evaluate(data)
        self.stdout.write(evaluation.format_table(reports))
        if options["errors"]:
            for report in reports:
                for error in report.errors:
                    self.stdout.write(f"[{report.language}] {error}")
        if options["json"]:
            options["json"].write_text(json.dumps([r.as_dict() for r in reports], indent=2, ensure_ascii=False))
