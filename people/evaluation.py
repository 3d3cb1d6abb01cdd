"""Precision and recall of the rule-based archivist on a table of messages (per language).

A case is one user message and the people a careful reader would extract (dictionary-form names,
@usernames as the username), with the circle where the message states it. Names are compared by
their normalised key; the circle is scored on the people found that have an annotated circle.
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
from people.names import name_key

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
    errors: list[str] = field(default_factory=list)


    @property
    def circle_accuracy(self) -> float:
        return self.circle_right / self.circle_checked if self.circle_checked else 1.0

    def as_dict(self) -> dict[str, Any]:
        return {"language": self.language, "messages": self.messages, "tp": self.tp, "fp": self.fp, "fn": self.fn,
                "precision": round(self.precision, 4), "recall": round(self.recall, 4), "f1": round(self.f1, 4),
                "circle_accuracy": round(self.circle_accuracy, 4), "circle_checked": self.circle_checked}


def load(path: Path = DEFAULT_FILE) -> dict[str, list[dict[str, Any]]]:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def evaluate_case(text: str, expected: Sequence[Mapping[str, Any]], report: LanguageReport) -> None:
    extraction = rules.extract([_Message(text=text)])
    # A person found answers to their display name and to their @username.
    found = [({name_key(p.display_name), name_key(p.username or "")} - {""}, p.circle or "Other")
             for p in (op.person for op in extraction.ops)]  # type: ignore[union-attr]
    wanted = {name_key(str(e["name"])): e for e in expected}
    report.messages += 1
    used: set[int] = set()
    for key, item in wanted.items():
        index = next((i for i, (keys, _) in enumerate(found) if key in keys and i not in used), None)
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


def evaluate(data: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[LanguageReport]:
    reports = []
    for language, cases in data.items():
        report = LanguageReport(language)
        for case in cases:
            evaluate_case(str(case["text"]), case.get("people") or [], report)
        reports.append(report)
    return reports


def format_table(reports: Sequence[LanguageReport]) -> str:
    lines = [f"{'lang':<6}{'msgs':>6}{'tp':>5}{'fp':>5}{'fn':>5}{'precision':>11}{'recall':>8}{'f1':>7}{'circle':>8}"]
    for r in reports:
        lines.append(f"{r.language:<6}{r.messages:>6}{r.tp:>5}{r.fp:>5}{r.fn:>5}{r.precision:>11.3f}{r.recall:>8.3f}"
                     f"{r.f1:>7.3f}{r.circle_accuracy:>8.3f}")
    return "\n".join(lines)
