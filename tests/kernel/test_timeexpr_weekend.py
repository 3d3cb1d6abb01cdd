"""A weekend said without "last" or "next" ("on the weekend", "this weekend", "на выходных", "周末"): the coming one
or the one just past by the tense of its sentence; a recurring weekend is no date.

A bare weekend was not read at all ("на выходных поедем на дачу", "我们周末去爬山"), and "this weekend" said on a
Wednesday was the weekend before in English and Russian but the one to come in Chinese ("这个周末").
"""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr
from rag.memories.when import anchor_dates

WEDNESDAY = date(2024, 5, 15)
SATURDAY = date(2024, 5, 18)
COMING = "2024-05-18 – 2024-05-19"
JUST_PAST = "2024-05-11 – 2024-05-12"


def read(text: str, anchor: date = WEDNESDAY, *, query: bool = False) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, anchor, query=query)]


@pytest.mark.parametrize(("text", "expected"), [
    # What is ahead: a plan, an intention, or nothing that says past on a weekday.
    ("on the weekend I will bake a cake", COMING),
    ("this weekend we go hiking", COMING),
    ("We're going to visit my parents at the weekend", COMING),
    ("I need to clean the house this weekend", COMING),
    ("I'm so excited for this weekend!", COMING),
    ("Any plans for the weekend?", COMING),
    ("на выходных поедем на дачу", COMING),
    ("в эти выходные", COMING),
    ("собираемся на выходных в поход", COMING),
    ("Как дела? Что делаешь на выходных?", COMING),
    ("Лена приезжает в гости на выходных.", COMING),
    ("我们周末去爬山", COMING),
    ("这个周末", COMING),
    ("这周末我们要去上海", COMING),
    ("我们打算周末去看电影", COMING),
    ("周末你过来吧", COMING),
    # Told in the past: the weekend just gone.
    ("we hiked this weekend", JUST_PAST),
    ("On the weekend we went to the lake", JUST_PAST),
    ("на выходных ездили на дачу", JUST_PAST),
    ("в эти выходные мы были в театре", JUST_PAST),
    ("周末我们去了海边", JUST_PAST),
    ("这个周末过得很开心", JUST_PAST),
    # Only the sentence's own tense counts; an intention outweighs a past word beside it.
    ("We went to the beach. This weekend we will hike.", COMING),
    ("Я устала, но на выходных поеду к маме", COMING),
])
def test_a_bare_or_this_weekend_is_the_coming_one_or_the_one_just_past_by_its_tense(text: str, expected: str) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize("text", [
    "this weekend we go hiking", "we hiked this weekend", "на выходных поедем на дачу", "на выходных ездили на дачу",
    "我们周末去爬山", "周末我们去了海边", "这个周末",
])
@pytest.mark.parametrize("anchor", [SATURDAY, date(2024, 5, 19)])
def test_said_on_a_saturday_or_sunday_it_is_that_very_weekend(text: str, anchor: date) -> None:
    assert read(text, anchor) == [COMING]


@pytest.mark.parametrize("text", [
    "every weekend we play football", "On weekends I go climbing", "at the weekend I usually sleep in",
    "по выходным играю в футбол", "каждые выходные езжу к маме", "в выходные обычно сплю до обеда",
    "в выходные дни магазин закрыт", "我每个周末都去游泳", "每周末去爬山", "周末我一般在家", "周末我喜欢去爬山",
    "soon we will move", "скоро переезжаем", "我们很快就搬家",
])
def test_a_recurring_weekend_and_a_vague_soon_are_no_date(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("last weekend we hiked", JUST_PAST),
    ("we watched it over the weekend", JUST_PAST),
    ("that roadtrip this past weekend was insane", JUST_PAST),
    ("на прошлых выходных", JUST_PAST),
    ("на следующих выходных", COMING),
    ("上周末去爬山了", JUST_PAST),
    ("下周末去爬山", "2024-05-25 – 2024-05-26"),
])
def test_a_weekend_named_last_next_or_over_keeps_its_reading(text: str, expected: str) -> None:
    assert read(text) == [expected]


@pytest.mark.parametrize(("query", "days"), [
    ("What did I do this weekend?", {"@d2024-05-11", "@d2024-05-12"}),
    ("Что я делал на выходных?", {"@d2024-05-11", "@d2024-05-12"}),
    ("我周末做了什么？", {"@d2024-05-11", "@d2024-05-12"}),
    ("What am I doing this weekend?", {"@d2024-05-18", "@d2024-05-19"}),
    ("Какие у меня планы на выходные?", {"@d2024-05-18", "@d2024-05-19"}),
    ("这个周末我要做什么？", {"@d2024-05-18", "@d2024-05-19"}),
])
def test_a_question_about_this_weekend_asks_for_the_one_its_tense_means(query: str, days: set[str]) -> None:
    terms = timeexpr.query_terms(query, WEDNESDAY)
    assert {term for term in terms if term.startswith("@d")} == days
    # The words are a date the terms say: as search words they matched turns of every other weekend.
    assert timeexpr.relative_expressions(query, WEDNESDAY)


@pytest.mark.parametrize("query", ["When did I go hiking on the weekend?", "Когда мы на выходных ходили в поход?",
                                   "我们什么时候周末去爬山了？"])
def test_a_when_question_asks_which_weekend_and_names_none(query: str) -> None:
    assert timeexpr.query_terms(query, WEDNESDAY) == ["@t"]


def test_an_expression_read_apart_from_its_sentence_takes_the_tense_the_caller_knows() -> None:
    assert [s.iso() for s in timeexpr.mentions("this weekend", WEDNESDAY, past=True)] == [JUST_PAST]
    assert [s.iso() for s in timeexpr.mentions("на выходных", WEDNESDAY, past=False)] == [COMING]
    assert anchor_dates("We hiked this weekend", WEDNESDAY, told_in_past=True) == f"We hiked this weekend ({JUST_PAST})"
    assert anchor_dates("На выходных ездили на дачу", WEDNESDAY, told_in_past=True) == \
        f"На выходных ({JUST_PAST}) ездили на дачу"
    assert anchor_dates("周末我们去了海边", WEDNESDAY, told_in_past=True) == f"周末({JUST_PAST})我们去了海边"
    assert anchor_dates("我们周末去爬山", WEDNESDAY) == f"我们周末({COMING})去爬山"
