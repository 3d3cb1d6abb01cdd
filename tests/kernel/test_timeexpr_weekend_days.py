"""A question about a plan for a weekend or a weekday asks for both the one just past and the coming one, and meets
the plan told for its Saturday.

Found by a QA pass acting as a chat app: on Wednesday 2026-11-25 "On Saturday we're driving to the lake" / "В субботу
мы с Сергеем едем на дачу" / "周六我们去爬山" is Saturday 28 November; on Monday 30 November "what did I plan for the
weekend?" and "我周末计划做什么？" read the plan word as the future and asked for 5–6 December, sharing no date term
with the plan; "что я планировал на выходные?" (told in the past) asked for the weekend just past, so the same on a
Thursday missed the plan for the coming Saturday. Which weekend is meant the words do not say: the plan was made before
it, and a few days later it may be over or ahead.
"""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr

WEDNESDAY = date(2026, 11, 25)
MONDAY = date(2026, 11, 30)
TUESDAY = date(2026, 12, 1)
THURSDAY = date(2026, 12, 3)
JUST_PAST = "2026-11-28 – 2026-11-29"
COMING = "2026-12-05 – 2026-12-06"

PLAN_QUESTIONS = [
    "what did I plan for the weekend?",
    "What plans did I have for this weekend?",
    "what was I going to do on the weekend?",
    "что я планировал на выходные?",
    "что мы запланировали на выходные?",
    "что я собирался делать на выходных?",
    "какие у меня были планы на эти выходные?",
    "我周末计划做什么？",
    "我这个周末有什么安排？",
    "我们周末打算干什么？",
]


def read(text: str, anchor: date) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, anchor, query=True)]


@pytest.mark.parametrize("query", PLAN_QUESTIONS)
@pytest.mark.parametrize("asked", [MONDAY, THURSDAY])
def test_a_question_about_a_weekend_plan_asks_for_the_weekend_just_past_and_the_coming_one(
        query: str, asked: date) -> None:
    assert read(query, asked) == [JUST_PAST, COMING]


@pytest.mark.parametrize(("query", "last", "coming"), [
    ("what did I plan for Saturday?", "2026-11-28", "2026-12-05"),
    ("what was I going to do on Sunday?", "2026-11-29", "2026-12-06"),
    ("что я планировал в субботу?", "2026-11-28", "2026-12-05"),
    ("что я хотела сделать в воскресенье?", "2026-11-29", "2026-12-06"),
    ("我周六打算做什么？", "2026-11-28", "2026-12-05"),
    ("星期天我计划干什么？", "2026-11-29", "2026-12-06"),
])
def test_a_question_about_a_weekday_plan_asks_for_the_last_and_the_coming_one(query: str, last: str,
                                                                               coming: str) -> None:
    assert read(query, MONDAY) == [last, coming]


@pytest.mark.parametrize(("query", "plan_for_last", "plan_for_coming"), [
    ("what did I plan for the weekend?", "On Saturday we're driving to the lake", "On Sunday we're going to the zoo"),
    ("что я планировал на выходные?", "В субботу мы с Сергеем едем на дачу", "В воскресенье идём в театр"),
    ("我周末计划做什么？", "周六我们去爬山", "周日我们去看话剧"),
])
def test_the_question_meets_the_saturday_or_sunday_of_the_plan_on_monday_and_on_thursday(
        query: str, plan_for_last: str, plan_for_coming: str) -> None:
    told_wednesday = set(timeexpr.chunk_terms(plan_for_last, WEDNESDAY))
    told_tuesday = set(timeexpr.chunk_terms(plan_for_coming, TUESDAY))
    assert {"@d2026-11-28", "@w2026-48"} <= told_wednesday & set(timeexpr.query_terms(query, MONDAY))
    assert {"@d2026-12-06", "@w2026-49"} <= told_tuesday & set(timeexpr.query_terms(query, THURSDAY))


@pytest.mark.parametrize("query", PLAN_QUESTIONS[:1] + PLAN_QUESTIONS[3:4] + PLAN_QUESTIONS[7:8])
def test_each_reading_asks_for_its_days_and_week_as_the_only_reading_would_but_not_its_month(query: str) -> None:
    """Two weekends are alternatives, not a longer span: each day weighs as a lone weekend's does. Widened to its
    month and year, the past one matched every turn said that month as well as the plan; its week is where a plan
    for it is mostly told."""
    day, week = timeexpr.DATE_WEIGHT / 2, timeexpr.DATE_WEIGHT
    assert timeexpr.query_weights(query, MONDAY) == {
        "@d2026-11-28": day, "@d2026-11-29": day, "@w2026-48": week,
        "@d2026-12-05": day, "@d2026-12-06": day, "@w2026-49": week,
    }


@pytest.mark.parametrize(("query", "plan_word"), [
    ("what did I plan for the weekend?", "plan"),
    ("какие у меня были планы на эти выходные?", "планы"),
    ("我周末计划做什么？", "计划"),
])
def test_the_plan_word_of_such_a_question_weighs_as_a_relative_dates_words(query: str, plan_word: str) -> None:
    """"My plans for the evening fell through", said another week, shared the word and outranked the plan told for
    Saturday: the question's date terms say which plans it means (rag/query.py weighs these words 0.3)."""
    said = [query[start:end] for start, end in timeexpr.relative_expressions(query, MONDAY)]
    assert plan_word in said
