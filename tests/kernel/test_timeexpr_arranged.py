"""A day or month something was arranged for is the coming one, however the arranging is told.

Found by a QA pass: said in November, "My boss approved my vacation for March" was read as the March before, and
"I booked a table for Saturday" as the Saturday gone: the sentence is told in the past, but what it booked is
ahead. Russian "на субботу" was not read at all.
"""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr
from memoryhub.dates import anchor_relative_dates, dated_as_said
from rag.memories.when import anchor_dates

WEDNESDAY = date(2024, 11, 20)


def read(text: str) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, WEDNESDAY)]


@pytest.mark.parametrize(("text", "days"), [
    ("My boss approved my vacation for March.", ["2025-03"]),
    ("We scheduled the wedding for June.", ["2025-06"]),
    ("I booked a table for Saturday.", ["2024-11-23"]),
    ("We booked a cabin for the weekend.", ["2024-11-23 – 2024-11-24"]),
    ("The dentist moved my appointment to Friday.", ["2024-11-22"]),
    ("Мне одобрили отпуск на март.", ["2025-03"]),
    ("Я забронировал столик на субботу.", ["2024-11-23"]),
    ("Записалась к врачу на пятницу.", ["2024-11-22"]),
    ("Записала сына к стоматологу на пятницу.", ["2024-11-22"]),
    ("Мы договорились с Леной на субботу.", ["2024-11-23"]),
    ("Совещание перенесли на понедельник.", ["2024-11-25"]),
    ("老板批了我三月的假。", ["2025-03"]),
    ("我订了周六的餐厅。", ["2024-11-23"]),
    ("会议改到周五了。", ["2024-11-22"]),
    ("我们把聚会挪到周六了。", ["2024-11-23"]),
    # What was signed up for starts then (a QA pass: read as the January gone, the sentence being past).
    ("I signed up for a Spanish course, starting in January.", ["2025-01"]),
    ("I registered, the course begins in February.", ["2025-02"]),
    ("Я записалась на курсы, начинаю в январе.", ["2025-01"]),
    ("Записалась на йогу, занятия начинаются с января.", ["2025-01"]),
    ("我报名了日语课，一月份开始上。", ["2025-01"]),
])
def test_what_was_arranged_for_is_ahead(text: str, days: list[str]) -> None:
    assert read(text) == days


@pytest.mark.parametrize(("text", "days"), [
    # Nothing arranged: a past month or day stays past.
    ("I paid the rent for October.", ["2024-10"]),
    ("We went to Rome in March.", ["2024-03"]),
    ("Ходили в кино в субботу.", ["2024-11-16"]),
    ("我们周六去了公园。", ["2024-11-16"]),
    # A start told in the past, with nothing signed up for.
    ("I started a course in January.", ["2024-01"]), ("В январе начала ходить в зал.", ["2024-01"]),
    ("我一月份开始学日语了。", ["2024-01"]), ("I signed up for the gym in January.", ["2024-01"]),
    ("周一到周五我都上班，周六去了公园。", ["2024-11-16"]),
    # The day of the arranging is not what it arranged: booked on the last Monday, for the coming Saturday.
    ("On Monday I booked a table for Saturday.", ["2024-11-18", "2024-11-23"]),
    ("В понедельник я забронировал столик на субботу.", ["2024-11-18", "2024-11-23"]),
])
def test_a_date_that_is_not_the_target_keeps_its_tense(text: str, days: list[str]) -> None:
    assert sorted(read(text)) == days


def test_a_typed_memory_writes_the_day_arranged_for_though_told_in_the_past() -> None:
    # The memory rules read an expression apart from its sentence, with the sentence's tense.
    assert anchor_dates("I booked a table for Saturday.", WEDNESDAY, told_in_past=True) == \
        "I booked a table for Saturday (2024-11-23)."
    assert anchor_dates("Я забронировал столик на субботу.", WEDNESDAY, told_in_past=True) == \
        "Я забронировал столик на субботу (2024-11-23)."
    assert anchor_dates("我订了周六的餐厅。", WEDNESDAY, told_in_past=True) == "我订了周六(2024-11-23)的餐厅。"
    assert anchor_dates("We went hiking on Saturday.", WEDNESDAY, told_in_past=True) == \
        "We went hiking on Saturday (2024-11-16)."


def test_a_bio_writes_the_day_arranged_for() -> None:
    # A QA pass: Anika's bio kept "booked a table … for Saturday" without its day, and a past verb read it as the
    # Saturday gone; a sentence told in the past passes its tense to every date it holds but the one arranged for.
    said = "I also booked a table at Nando's for Saturday, for my daughter Anika's birthday."
    assert anchor_relative_dates(said, WEDNESDAY) == \
        "I also booked a table at Nando's for Saturday (2024-11-23), for my daughter Anika's birthday."
    assert dated_as_said("Совещание перенесли на понедельник.", WEDNESDAY) == \
        "Совещание перенесли на понедельник (2024-11-25)."
    assert dated_as_said("我预约了周一上午九点看牙医。", WEDNESDAY) == "我预约了周一(2024-11-25)上午九点看牙医。"


@pytest.mark.parametrize(("text", "days"), [
    # A QA pass: said in October, "Мы с мужем Игорем решили поехать в Грузию в ноябре" went into Игорь's bio as the
    # November a year gone. What was decided is ahead, as what was arranged.
    ("We decided to go to Georgia in March.", ["2025-03"]),
    ("We've decided to visit my parents on Saturday.", ["2024-11-23"]),
    ("We agreed to meet on Friday.", ["2024-11-22"]),
    ("Мы с мужем решили поехать в Грузию в марте.", ["2025-03"]),
    ("Всё было хорошо. Решили в субботу съездить на дачу.", ["2024-11-23"]),
    ("我们决定了周六去爬山。", ["2024-11-23"]),
    # The date of the deciding, not of what was decided.
    ("In March we decided to sell the car.", ["2024-03"]),
    ("We decided on Saturday to go hiking.", ["2024-11-16"]),
    ("В марте мы решили продать машину.", ["2024-03"]),
    ("Мы решили, что в субботу было весело.", ["2024-11-16"]),
    ("三月我们决定卖车。", ["2024-03"]),
])
def test_what_was_decided_is_ahead_and_when_it_was_decided_is_not(text: str, days: list[str]) -> None:
    assert read(text) == days
