"""A day of the month said alone ("the 20th", "20-го", "20号") is read by its sentence's tense, as a month alone is.

Found by a QA pass: said on 2 September, "My mom and dad are flying in from Pune on the 20th" went into both
parents' bios as 20 August: the 20th was always the latest one not ahead, whatever the sentence said; and
"20-го" and "20号" said alone were not read at all.
"""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr

MONDAY = date(2024, 9, 2)


def read(text: str, *, query: bool = False) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, MONDAY, query=query)]


@pytest.mark.parametrize(("text", "days"), [
    ("My mom and dad are flying in from Pune on the 20th.", ["2024-09-20"]),
    ("My parents will arrive on the 20th.", ["2024-09-20"]),
    ("The party is on the 5th.", ["2024-09-05"]),
    ("We will move on the 1st.", ["2024-10-01"]),
    ("I booked a table for the 1st.", ["2024-10-01"]),
    ("I'm so excited, the party is on the 5th.", ["2024-09-05"]),
    ("Мама и папа прилетают 20-го.", ["2024-09-20"]),
    ("Экзамен 5-го числа.", ["2024-09-05"]),
    ("爸妈20号到。", ["2024-09-20"]),
    ("我20日出发。", ["2024-09-20"]),
])
def test_a_day_of_the_month_ahead_in_a_turn_of_what_is_coming_is_the_coming_one(text: str, days: list[str]) -> None:
    assert read(text) == days


@pytest.mark.parametrize(("text", "days"), [
    ("We met on the 20th.", ["2024-08-20"]),
    ("My exam was on the 28th.", ["2024-08-28"]),
    ("On the 1st I started my new job.", ["2024-09-01"]),
    ("The 1st was great.", ["2024-09-01"]),
    ("Мы встретились 20 числа.", ["2024-08-20"]),
    ("Я родился 1-го.", ["2024-09-01"]),
    ("我们20号见过面了。", ["2024-08-20"]),
])
def test_a_day_of_the_month_told_in_the_past_is_the_last_one(text: str, days: list[str]) -> None:
    assert read(text) == days


@pytest.mark.parametrize(("text", "days"), [
    ("Приеду 20-го мая.", ["2025-05-20"]), ("我9月20号去北京。", ["2024-09-20"]),
    ("我住3号楼。", []), ("坐1号线去公司。", []), ("Счёт 2:0, 20-й раз подряд.", []),
])
def test_a_day_of_another_form_or_a_number_is_not_read_as_a_day_alone(text: str, days: list[str]) -> None:
    assert read(text) == days


def test_a_question_asks_for_the_last_one() -> None:
    assert read("What did I do on the 20th?", query=True) == ["2024-08-20"]
    assert read("What will I do on the 20th?", query=True) == ["2024-08-20"]
