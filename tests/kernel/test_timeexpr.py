"""Dates a text mentions, resolved against the day it was said, in English, Russian and Chinese."""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr

THURSDAY = date(2023, 11, 16)  # a Thursday


def spans(text: str, anchor: date = THURSDAY, *, query: bool = False) -> list[tuple[str, str]]:
    return [(s.start.isoformat(), s.end.isoformat()) for s in timeexpr.mentions(text, anchor, query=query)]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I went to a castle during my trip last Friday", [("2023-11-10", "2023-11-10")]),
        ("We watched it last night", [("2023-11-15", "2023-11-15")]),
        ("the day before yesterday was rough", [("2023-11-14", "2023-11-14")]),
        ("that roadtrip this past weekend was insane", [("2023-11-11", "2023-11-12")]),
        ("I joined a group last week", [("2023-11-06", "2023-11-12")]),
        ("two weeks ago we moved", [("2023-10-30", "2023-11-05")]),
        ("I met my teammates on the 15th", [("2023-11-15", "2023-11-15")]),
        ("we married on 5 May 2022", [("2022-05-05", "2022-05-05")]),
        ("Where was John between August 11 and August 15 2023?", [("2023-08-11", "2023-08-15")]),
        ("Where was Tim in the week before 16 November 2023?", [("2023-11-09", "2023-11-15")]),
        ("in the summer of 2022", [("2022-06-01", "2022-08-31")]),
        ("at the beginning of November 2022", [("2022-11-01", "2022-11-10")]),
        ("на прошлой неделе я ездил в Казань", [("2023-11-06", "2023-11-12")]),
        ("вчера позвонила мама", [("2023-11-15", "2023-11-15")]),
        ("в прошлую пятницу был концерт", [("2023-11-10", "2023-11-10")]),
        ("5 мая 2022 мы поженились", [("2022-05-05", "2022-05-05")]),
        ("два года назад", [("2021-01-01", "2021-12-31")]),
        ("我上周五去了杭州", [("2023-11-10", "2023-11-10")]),
        ("去年三月我们见过", [("2022-03-01", "2022-03-31")]),
        ("我们5月3号见面", [("2023-05-03", "2023-05-03")]),
        ("昨天下雨了", [("2023-11-15", "2023-11-15")]),
    ],
)
def test_expressions_resolve_against_the_day_they_were_said(text: str, expected: list[tuple[str, str]]) -> None:
    assert spans(text) == expected


@pytest.mark.parametrize("text", [
    "May I ask you something?", "I have had them for 3 years now", "三个月的课程", "Мы рады",
    "Jan is my neighbour",
])
def test_words_that_only_look_like_dates_are_not_dates(text: str) -> None:
    assert spans(text) == []


def test_a_month_without_a_year_in_a_question_means_that_month_of_any_year() -> None:
    assert timeexpr.query_terms("When did Melanie go camping in June?", THURSDAY) == ["@mo06", "@t"]
    # In a stored turn it is the latest such month that is not ahead of the day it was said.
    assert "@m2023-06" in timeexpr.chunk_terms("we went camping in June", THURSDAY)
    assert "@m2022-12" in timeexpr.chunk_terms("in December we skied", THURSDAY)


@pytest.mark.parametrize("query", ["When did you move?", "Когда ты переехал?", "你什么时候搬家的？",
                                   "In which year did she graduate?", "в каком году она закончила?"])
def test_when_questions_ask_for_a_time_reference(query: str) -> None:
    assert timeexpr.asks_when(query)
    assert "@t" in timeexpr.query_terms(query, THURSDAY)


def test_a_turn_carries_the_day_it_was_said_and_the_days_it_mentions() -> None:
    terms = timeexpr.chunk_terms("I watched the trilogy last night", date(2022, 5, 2))
    assert {"@d2022-05-02", "@d2022-05-01", "@m2022-05", "@y2022", "@t"} <= set(terms)
    assert "@t" not in timeexpr.chunk_terms("I love trilogies", date(2022, 5, 2))


def test_a_week_range_weighs_like_a_single_day() -> None:
    week = timeexpr.query_weights("the week before 16 November 2023", THURSDAY)
    day = timeexpr.query_weights("on 16 November 2023", THURSDAY)
    day_terms = sum(w for t, w in week.items() if t.startswith("@d"))
    assert day_terms == pytest.approx(sum(w for t, w in day.items() if t.startswith("@d")))


@pytest.mark.parametrize(("text", "states"), [
    ("I've had them for 3 years now", True), ("over the past few weeks I ran a lot", True),
    ("Я работаю там уже два года", True), ("我养了三年了", True),
    ("I went there 3 years ago", False), ("we talked last week", False), ("три года назад", False),
    ("三年前我去过", False), ("I love turtles", False),
])
def test_a_turn_that_states_a_duration_carries_the_duration_term(text: str, states: bool) -> None:
    assert ("@dur" in timeexpr.chunk_terms(text, THURSDAY)) is states


@pytest.mark.parametrize(("query", "asks"), [
    ("How long has Nate had his turtles?", True), ("How many years has she worked there?", True),
    ("Как долго ты там живёшь?", True), ("你养猫多久了？", True),
    ("How long ago did she move?", False), ("What did Caroline research?", False),
])
def test_how_long_questions_ask_for_a_duration(query: str, asks: bool) -> None:
    assert ("@dur" in timeexpr.query_weights(query, THURSDAY)) is asks
