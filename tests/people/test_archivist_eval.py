"""Precision and recall of the rule-based archivist on the evaluation tables (≥ 30 messages a language).

`archivist_eval.yaml` is the table the rules were tuned on; `archivist_eval_holdout.yaml` was written
afterwards and never tuned against. The same figures: `manage.py people_eval_archivist [FILE]`.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from django.core.management import call_command

from people import evaluation

DATA = Path(__file__).parent / "data"
# Floors a little under the measured figures, so a regression fails and noise does not.
FLOORS = {
    "archivist_eval.yaml": {"precision": 0.95, "recall": 0.9, "circle": 0.9},
    "archivist_eval_holdout.yaml": {"precision": 0.9, "recall": 0.85, "circle": 0.85},
}


@pytest.mark.parametrize("table", sorted(FLOORS))
def test_archivist_precision_and_recall_hold_in_every_language(table: str, capsys: pytest.CaptureFixture) -> None:
    data = evaluation.load(DATA / table)
    assert set(data) == {"en", "ru", "zh"} and all(len(cases) >= 30 for cases in data.values())
    reports = evaluation.evaluate(data)
    with capsys.disabled():
        print(f"\n{table}\n{evaluation.format_table(reports)}")
    floors = FLOORS[table]
    for report in reports:
        assert report.precision >= floors["precision"], (report.language, report.errors)
        assert report.recall >= floors["recall"], (report.language, report.errors)
        assert report.circle_accuracy >= floors["circle"], (report.language, report.errors)


def test_the_command_prints_the_table(capsys: pytest.CaptureFixture) -> None:
    call_command("people_eval_archivist", str(DATA / "archivist_eval.yaml"))
    out = capsys.readouterr().out
    assert out.splitlines()[0].split()[:4] == ["lang", "msgs", "tp", "fp"]
    assert {line.split()[0] for line in out.splitlines()[1:]} == {"en", "ru", "zh"}
