"""Precision and recall of the rule-based archivist on a table of messages (per language).

A case is one user message and the people a careful reader would extract (dictionary-form names,
@usernames as the username), with the circle where the message states it, and the relations it
states between two people (`[subject, kind, object]`; none when the case lists none). Names are
compared by their normalised key, and the user's unnamed kin by the kin ("Mom" is "mother"). The
circle is scored on the people found that have an annotated circle ("circle"), and on every person
with an annotated circle, a missed one counting as wrong ("circ.all"). Relations compare with their
inverse ("A parent B" is "B child A"), and either way round for symmetric kinds (spouse, sibling …).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

from memoryhub.evaluation import PrecisionRecall
from people.archivist import rules
from people.names import kin_key, name_key

DEFAULT_FILE = Path(__file__).resolve().parent.parent / "tests" / "people" / "data" / "archivist_eval.yaml"


@dataclass
class _Message:
    text: str
    pk: int = 1
    role: str = "user"
    created_at: datetime = field(default_factory=lambda: datetime(2025, 1, 1, tzinfo=UTC))
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class LanguageReport(PrecisionRecall):
    language: str
    messages: int = 0
    tp: int = 0
    fp: int = 0
    fn: int = 0
    circle_checked: int = 0
    circle_right: int = 0
    circle_stated: int = 0  # people with an annotated circle, found or not
    relations_tp: int = 0
    relations_fp: int = 0
    relations_fn: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def circle_accuracy(self) -> float:
        """Right circles among the people found that have an annotated circle."""
        return self.circle_right / self.circle_checked if self.circle_checked else 1.0

    @property
    def circle_overall(self) -> float:
        """Right circles among every person with an annotated circle: a missed person counts as wrong."""
        return self.circle_right / self.circle_stated if self.circle_stated else 1.0

    @property
    def relations(self) -> PrecisionRecall:
        return _Counts(self.relations_tp, self.relations_fp, self.relations_fn)

    def as_dict(self) -> dict[str, Any]:
        relations = self.relations
        return {"language": self.language, "messages": self.messages, "tp": self.tp, "fp": self.fp, "fn": self.fn,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4),
                "circle_accuracy": round(self.circle_accuracy, 4), "circle_checked": self.circle_checked,
                "circle_overall": round(self.circle_overall, 4), "circle_stated": self.circle_stated,
                "relations_precision": round(relations.precision, 4), "relations_recall": round(relations.recall, 4),
                "relations_expected": self.relations_tp + self.relations_fn}


@dataclass
class _Counts(PrecisionRecall):
    tp: int
    fp: int
    fn: int


_INVERSE = {"child": "parent", "report": "manager"}
_SYMMETRIC = frozenset({"spouse", "partner", "sibling", "colleague", "friend", "relative"})


def _keys(name: str) -> set[str]:
    return {name_key(name), kin_key(name)} - {""}


def _edge(subject: str, kind: str, obj: str) -> tuple[str, str, str]:
    """One spelling per edge: inverse kinds turned round, symmetric ones in name order. Names are
    reduced to their kin key when they are kin words, so "Mom" and "mother" are one end."""
    a, b = kin_key(subject) or name_key(subject), kin_key(obj) or name_key(obj)
    if kind in _INVERSE:
        a, b, kind = b, a, _INVERSE[kind]
    if kind in _SYMMETRIC and b < a:
        a, b = b, a
    return a, kind, b


def load(path: Path = DEFAULT_FILE) -> dict[str, list[dict[str, Any]]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def evaluate_case(text: str, expected: Sequence[Mapping[str, Any]], report: LanguageReport,
                  relations: Sequence[Sequence[str]] = ()) -> None:
    extraction = rules.extract([_Message(text=text)])
    # A person found answers to their display name, their @username and, for kin, the kin.
    found = [(_keys(p.display_name) | _keys(p.username or ""), p.circle or "Other")
             for p in (op.person for op in extraction.ops)]  # type: ignore[union-attr]
    wanted = {name_key(str(e["name"])): e for e in expected}
    report.messages += 1
    used: set[int] = set()
    for item in wanted.values():
        report.circle_stated += bool(item.get("circle"))
        index = next((i for i, (keys, _) in enumerate(found) if _keys(str(item["name"])) & keys and i not in used),
                     None)
        if index is None:
            report.fn += 1
            report.errors.append(f"missed {item['name']!r}: {text}")
            continue
        used.add(index)
        report.tp += 1
        circle = found[index][1]
        if item.get("circle"):
            report.circle_checked += 1
            if circle == item["circle"]:
                report.circle_right += 1
            else:
                report.errors.append(f"circle {circle} ≠ {item['circle']} for {item['name']!r}: {text}")
    for i, (keys, _) in enumerate(found):
        if i not in used:
            report.fp += 1
            report.errors.append(f"spurious {sorted(keys)[0]!r}: {text}")
    stated = {_edge(*map(str, r)) for r in relations}
    got = {_edge(r.subject, r.kind, r.object) for r in extraction.relations
           if isinstance(r.subject, str) and isinstance(r.object, str)}
    report.relations_tp += len(stated & got)
    report.relations_fn += len(stated - got)
    report.relations_fp += len(got - stated)
    report.errors.extend(f"missed relation {' '.join(e)}: {text}" for e in sorted(stated - got))
    report.errors.extend(f"spurious relation {' '.join(e)}: {text}" for e in sorted(got - stated))


def evaluate(data: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[LanguageReport]:
    reports = []
    for language, cases in data.items():
        report = LanguageReport(language)
        for case in cases:
            evaluate_case(str(case["text"]), case.get("people") or [], report, case.get("relations") or [])
        reports.append(report)
    return reports


def format_table(reports: Sequence[LanguageReport]) -> str:
    lines = [f"{'lang':<6}{'msgs':>6}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}{'f1':>7}{'circle':>8}"
             f"{'circ.all':>9}{'rel.p':>7}{'rel.r':>7}"]
    for r in reports:
        rel = r.relations
        lines.append(f"{r.language:<6}{r.messages:>6}{r.tp:>5}{r.fp:>5}{r.fn:>5}{r.precision:>11.3f}{r.recall:>8.3f}"
                     f"{r.f1:>7.3f}{r.circle_accuracy:>8.3f}{r.circle_overall:>9.3f}{rel.precision:>7.3f}"
                     f"{rel.recall:>7.3f}")
    return "\n".join(lines)
