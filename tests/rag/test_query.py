"""Query terms: a conversation used as a query weighs the user's turns over the assistant's."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import pytest

from memoryhub import lexicon
from rag import query
from rag.selectors import chunks_search
from tests.factories import append_messages

NOW = datetime(2024, 3, 1, tzinfo=UTC)


@pytest.mark.parametrize("text", [
    '<Bart>:"I will do a magic show!"\n<Assistant>:"Wonderful!"',
    "User: I will do a magic show!\nAssistant: Wonderful!",
    "用户：我要表演魔术！\n助手：太棒了！",
])
def test_a_conversation_is_read_as_turns(text: str) -> None:
    turns = query.dialogue_turns(text)
    assert turns is not None and len(turns) == 2
    assert query._is_assistant(turns[1][0]) and not query._is_assistant(turns[0][0])


@pytest.mark.parametrize("text", ["what is my cat called", "Note: buy milk\nand bread", "Time: 10:30"])
def test_prose_is_not_a_conversation(text: str) -> None:
    assert query.dialogue_turns(text) is None


def test_the_assistants_words_weigh_less_than_the_users() -> None:
    weights = query.weighted_terms("User: magic show tonight\nAssistant: the audience will love it", NOW)
    assert weights["magic"] == pytest.approx(math.log1p(1.0))
    assert weights["audienc"] == pytest.approx(math.log1p(query.ASSISTANT_TURN_WEIGHT))


def test_a_word_the_dialogue_repeats_weighs_more_but_not_in_proportion() -> None:
    weights = query.weighted_terms("User: happy happy happy, I'm so happy\nAssistant: ok\nUser: the kite flew", NOW)
    # Said four times, "happy" weighs more than "kite" said once, but well under four times as much.
    assert weights["kite"] < weights["happi"] < 3 * weights["kite"]
    # A plain query keeps one weight per occurrence.
    assert query.weighted_terms("happy happy kite", NOW) == {"happi": 2.0, "kite": 1.0}


def test_a_conversation_that_says_when_does_not_ask_for_a_time() -> None:
    dialogue = "User: I was so happy when we won the game\nAssistant: How long did you practise?"
    assert "@t" not in query.weighted_terms(dialogue, NOW) and "@dur" not in query.weighted_terms(dialogue, NOW)
    # The dates a conversation names still count, and a plain question still asks.
    assert "@mo12" in query.weighted_terms("User: the Christmas party was fun\nAssistant: Great!", NOW)
    assert "@t" in query.weighted_terms("When did we win the game?", NOW)


@pytest.mark.django_db
def test_a_dialogue_query_finds_the_memory_the_user_speaks_of(tenant) -> None:
    append_messages(tenant, "u1", "m1", ["Bart performed a magic trick at the school party."])
    append_messages(tenant, "u1", "m2", ["Bart sang for a cheering audience and loved the applause."])
    dialogue = ("<Bart>: I will do a magic trick at the party!\n"
                "<Assistant>: The audience will cheer and sing, the applause, the applause! Sing, audience, cheer!\n"
                "<Bart>: I hope my magic works.")
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query=dialogue, k=2, mode="bm25")
    assert result.items[0].chunk["text"] == "Bart performed a magic trick at the school party."


def test_a_question_asking_for_a_category_gets_its_term_beside_its_words() -> None:
    weights = query.weighted_terms("Which cities has Jon visited?", NOW)
    assert weights["citi"] == 1.0 and weights["^city.1"] == lexicon.CATEGORY_WEIGHT
    assert not any(t.startswith(lexicon.CATEGORY_PREFIX) for t in query.weighted_terms("Jon's trip to the city", NOW))


@pytest.mark.parametrize(("before", "said", "question"), [
    ("Last week I finally fixed the old bicycle.", ["I started my new job at the bakery.", "The weather was fine."],
     "What did I tell you last week?"),
    ("На прошлой неделе я наконец починил старый велосипед.", ["Я вышел на новую работу в пекарне.",
                                                              "Погода была хорошая."],
     "Что я рассказывал на прошлой неделе?"),
    ("上周我终于修好了旧自行车。", ["我开始在面包店上班了。", "天气很好。"], "我上周跟你说了什么？"),
    # The week before's turn shares 跟 and 说了 with the question, and the reranker's model liked it best.
    ("我跟姐姐说了马德里的工作机会。", ["我开始学小提琴了，还买了一辆新自行车。"], "我上周跟你说了什么？"),
])
def test_a_question_about_last_week_finds_last_weeks_turns_not_ones_that_say_last_week(
        tenant, monkeypatch, before: str, said: list[str], question: str) -> None:
    """Asked on a Wednesday, "what did I tell you last week?" ranked first a turn of the week before
    that says "last week" (its words matched) over the turns said last week (its date terms).

    The clock is a fixed Wednesday: on the real one the test failed on the Monday after a week that straddled two
    months (30 Nov – 6 Dec 2026), where the question also asks for November and, among three turns, the week before's
    November matched more rarely than the week's own terms."""
    from datetime import timedelta

    from django.utils import timezone

    wednesday = datetime(2026, 11, 18, 10, 0, tzinfo=UTC)
    monkeypatch.setattr(timezone, "now", lambda: wednesday)
    monday = wednesday.replace(hour=9) - timedelta(days=wednesday.weekday())
    append_messages(tenant, "u1", "s-old", [before], start=monday - timedelta(days=11))
    append_messages(tenant, "u1", "s-last", said, start=monday - timedelta(days=5))
    found = [i.chunk["text"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query=question, k=3).items]
    assert set(found[:len(said)]) == set(said), found
