"""The present of a schedule speaks of what is ahead: "Emma starts kindergarten in September", said in June.

Found by a QA pass: that sentence went into Emma's bio as September of the year before (a month three months
ahead, in a sentence with neither a past nor a future word, was the last one)."""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr

JUNE = date(2024, 6, 3)  # a Monday


def read(text: str) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, JUNE)]


@pytest.mark.parametrize(("text", "days"), [
    ("My daughter Emma starts kindergarten in September.", ["2024-09"]),
    ("The baby is due in March.", ["2025-03"]),
    ("My class begins in October.", ["2024-10"]),
    ("School starts on Thursday.", ["2024-06-06"]),
    # "женимся", "выходит замуж": the Russian present of a wedding ahead (a QA pass: 15 June 2023, said in March 2024)
    ("Мы с невестой Дашей женимся 15 сентября, подготовка — сплошной хаос.", ["2024-09-15"]),
    ("Сестра выходит замуж в сентябре.", ["2024-09"]),
])
def test_a_scheduled_start_is_ahead(text: str, days: list[str]) -> None:
    assert read(text) == days


@pytest.mark.parametrize(("text", "days"), [
    ("My class began in October.", ["2023-10"]),
    ("Emma started kindergarten in September.", ["2023-09"]),
    ("We met in October.", ["2023-10"]),
    ("Мы поженились 15 сентября.", ["2023-09-15"]),
])
def test_a_start_told_in_the_past_is_behind(text: str, days: list[str]) -> None:
    assert read(text) == days
