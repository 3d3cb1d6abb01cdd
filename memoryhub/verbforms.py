"""English irregular past forms as query terms, so that a question in the base form finds the turn that
told it in the past: "How did my run go?" finds "Ran my first 10k today!", "What did Melanie buy?"
"Just bought some new shoes", "When did Caroline begin…?" "I began…". Snowball stems "ran", "bought"
and "began" as words of their own, and a memory is nearly always told in the past while a question
about it asks with "did" and the base form.

Query side only (`past_terms`): a question's verb also asks for its irregular past and past participle
at ``PAST_FORM_WEIGHT``; stored text is indexed as before. Folding the forms to their lemma on both
sides was measured first and not taken: MADial's memories say "felt", "made", "went" in every line, and
folded they matched its dialogues' own light verbs (docs/retrieval.md). For the same reason the light
verbs (``LIGHT_VERBS``: "go", "do", "make", "feel"…) ask for nothing more: "How did it go?" and "What
did she say?" are frames, and with them the LoCoMo tune half moved down.

The table (`data/english/irregular_verbs.tsv`: a lemma, a tab, its irregular past forms) is derived
from LemmInflect's inflection lookup (MIT; its data from Kevin Atkinson's AGID, see
`data/english/NOTICE.md`) by `manage.py verbforms_build`, and ships with the code: ~350 lines, read
once per process. Pure Python, no Django.
"""

from __future__ import annotations

import csv
import functools
import gzip
from collections.abc import Iterable
from pathlib import Path

from memoryhub.text import analyze, words

__all__ = ["LIGHT_VERBS", "PAST_FORM_WEIGHT", "TABLE", "build_table", "past_forms", "past_terms", "write_table"]

TABLE = Path(__file__).resolve().parents[1] / "data" / "english" / "irregular_verbs.tsv"

# A past form weighs like a word of the question. Chosen on the LoCoMo tune half (0.5: recall@10
# 0.857 → 0.855 with the light verbs; without them 0.860 at both 0.5 and 1.0, MRR higher at 1.0).
PAST_FORM_WEIGHT = 1.0

# Verbs that frame a question rather than say what happened; their past forms are in every other turn.
LIGHT_VERBS = frozenset({
    "be", "become", "come", "do", "feel", "find", "get", "give", "go", "have", "keep", "know", "leave",
    "let", "make", "mean", "put", "say", "see", "take", "tell", "think",
})


@functools.cache
def _table() -> dict[str, tuple[str, ...]]:
    with TABLE.open(encoding="utf-8") as fh:
        return {lemma: tuple(forms.split()) for lemma, forms in (line.rstrip("\n").split("\t") for line in fh)}


def past_forms(verb: str) -> tuple[str, ...]:
    """The irregular past forms of an English verb in its base form ("run" → ran), else ()."""
    return _table().get(verb.lower(), ())


def past_terms(query: str) -> list[str]:
    """The BM25 terms of the irregular past forms of the query's verbs (not the light verbs), each once. A
    term the query says itself keeps the query's weight: the caller adds these with `setdefault`."""
    out: list[str] = []
    for word in words(query):
        word = word.lower()
        if word in LIGHT_VERBS:
            continue
        for form in past_forms(word):
            out.extend(term for term in analyze(form) if term not in out)
    return out


def _regular(lemma: str, form: str) -> bool:
    """A regular -ed spelling ("aliased", "bobsledded", "carried"), which the table leaves out: Snowball
    reads some of them as another stem than the lemma's, and they are no irregular forms."""
    return form.endswith("ed") and form.startswith(lemma.rstrip("ey") or lemma)


def build_table(lookup: Path) -> list[tuple[str, tuple[str, ...]]]:
    """The table's rows from LemmInflect's `infl_lu.csv.gz` (`lemma,verb,VBD,VBN,VBG,VBZ`, alternatives
    separated by "/", an empty VBN being the VBD) and, beside it, `infl_overrides.csv` (`lemma,TAG,form`):
    each lowercase one-word verb with the past forms whose BM25 term is not its own."""
    overrides: dict[tuple[str, str], list[str]] = {}
    override_file = lookup.parent / "infl_overrides.csv"
    if override_file.is_file():
        with override_file.open(encoding="utf-8") as fh:
            for row in csv.reader(fh):
                if len(row) == 3:
                    overrides.setdefault((row[0], row[1]), []).append(row[2])
    rows: list[tuple[str, tuple[str, ...]]] = []
    with gzip.open(lookup, "rt", encoding="utf-8") as fh:
        for row in csv.reader(fh):
            if len(row) < 4 or row[1] != "verb" or not (row[0].isalpha() and row[0].islower()):
                continue
            lemma = row[0]
            stem = analyze(lemma)
            if len(stem) != 1:  # a stopword ("be", "have") or no word
                continue
            past = overrides.get((lemma, "VBD")) or row[2].split("/")
            participle = overrides.get((lemma, "VBN")) or (row[3].split("/") if row[3] else past)
            forms = sorted({f for f in (*past, *participle)
                            if f.isalpha() and not _regular(lemma, f) and analyze(f) != stem})
            if forms:
                rows.append((lemma, tuple(forms)))
    return sorted(rows)


def write_table(rows: Iterable[tuple[str, tuple[str, ...]]], path: Path) -> None:
    path.write_text("".join(f"{lemma}\t{' '.join(forms)}\n" for lemma, forms in rows), encoding="utf-8")
