"""`manage.py verbforms_build INFL_LU [--out PATH]`: write the irregular-verb table that
`memoryhub.verbforms` reads (`data/english/irregular_verbs.tsv`) from LemmInflect's inflection lookup.

Needed only to change the table; it ships with the code. The lookup is in the LemmInflect wheel:
`pip download --no-deps lemminflect==0.2.3`, unzip, and pass its `lemminflect/resources/infl_lu.csv.gz`
(the `infl_overrides.csv` beside it is read too).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import verbforms


class Command(BaseCommand):
    help = "Build the English irregular-verb table memoryhub.verbforms reads, from LemmInflect's infl_lu.csv.gz."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("lookup", type=Path, help="LemmInflect's resources/infl_lu.csv.gz")
        parser.add_argument("--out", type=Path, default=verbforms.TABLE, help="default: the shipped table")

    def handle(self, *args: Any, **options: Any) -> None:
        lookup: Path = options["lookup"]
        if not lookup.is_file():
            raise CommandError(f"{lookup} is no file: pass LemmInflect's resources/infl_lu.csv.gz")
        rows = verbforms.build_table(lookup)
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        verbforms.write_table(rows, out)
        self.stdout.write(f"{len(rows)} verbs with irregular past forms; wrote {out} ({out.stat().st_size} bytes)")
