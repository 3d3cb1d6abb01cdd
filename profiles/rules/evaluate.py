"""Precision and recall of the rule-based extractors on a table of labelled utterances.

A case is a dict: `text`, optional `role` (user unless "assistant"/"system": the bot's own words
are never passed to the extractor, as in production), `facts` ([key, value] pairs) and optional
`set` ("dev", "heldout", "challenge", "blind", "blind2", "blind3", "blind4" or "blind5"). Facts compare on
(key, normalised value).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from memoryhub.evaluation import PrecisionRecall
from profiles.keys import key_normalize, value_norm
from profiles.rules import extract


@dataclass
class Score(PrecisionRecall):
    cases: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    negatives: int = 0
    negatives_with_output: int = 0
    errors: list[dict[str, Any]] = field(default_factory=list)



def load_cases(path: Path) -> dict[str, list[dict[str, Any]]]:
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {lang: list(cases) for lang, cases in data.items()}


def expected_facts(case: Mapping[str, Any]) -> set[tuple[str, str]]:
    return {(key_normalize(k), value_norm(str(v))) for k, v in case.get("facts") or []}


def predicted_facts(case: Mapping[str, Any]) -> set[tuple[str, str]]:
    if case.get("role", "user") != "user":
        return set()
    # A value the user says ended ("I quit Google") is no fact they hold.
    return {(f.key, value_norm(f.value)) for f in extract(case["text"]) if not f.ended}


def score(cases: Iterable[Mapping[str, Any]]) -> Score:
    result = Score()
    for case in cases:
        expected, predicted = expected_facts(case), predicted_facts(case)
        result.cases += 1
        result.tp += len(expected & predicted)
        result.fp += len(predicted - expected)
        result.fn += len(expected - predicted)
        if not expected:
            result.negatives += 1
            result.negatives_with_output += bool(predicted)
        if expected != predicted:
            result.errors.append({"text": case["text"], "missed": sorted(expected - predicted),
                                  "spurious": sorted(predicted - expected), "gap": case.get("gap", "")})
    return result


def evaluate(table: Mapping[str, list[Mapping[str, Any]]]) -> dict[tuple[str, str], Score]:
    """Scores per (language, set), with "all" for both sets together."""
    out: dict[tuple[str, str], Score] = {}
    for lang, cases in table.items():
        for subset in ("dev", "heldout", "challenge", "blind", "blind2", "blind3", "blind4", "blind5", "all"):
            chosen = [c for c in cases if subset == "all" or c.get("set", "dev") == subset]
            out[(lang, subset)] = score(chosen)
    return out
