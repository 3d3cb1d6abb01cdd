"""A question about the previous conversation ("what did I tell you last time?", "что я говорил в прошлый
раз?", "我上次说了什么？") finds what the user said on the last day they talked before today, not the turn
that happens to share a word with the question."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub import timeexpr
from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

CASES = [
    ("en",
     ["Last time we talked about my trip, I said I'd tell you more about the museums.",
      "I'm thinking about a new time management app for work."],
     ["I adopted a grey cat named Pixel, she sleeps on my keyboard."],
     ["Hi again!"],
     "What did I tell you last time?", "Pixel"),
    ("ru",
     ["В прошлый раз, когда я был в Риме, я потерял паспорт.", "Говорил же тебе, что работа съедает всё время."],
     ["Я взял из приюта серую кошку, назвал её Пиксель."],
     ["Привет ещё раз!"],
     "Что я говорил в прошлый раз?", "Пиксель"),
    ("zh",
     ["上次去北京的时候，我说过想去长城。", "我说工作太忙了，没时间运动。"],
     ["我从收容所领养了一只灰猫，叫皮克斯。"],
     ["又见面啦！"],
     "我上次说了什么？", "皮克斯"),
]


@pytest.mark.parametrize(("language", "older", "previous", "today", "query", "wanted"), CASES,
                         ids=[c[0] for c in CASES])
def test_last_time_finds_the_previous_conversation(tenant, language, older, previous, today, query, wanted) -> None:
    now = timezone.now()
    append_messages(tenant, "u1", "s1", older, start=now - timedelta(days=9))
    append_messages(tenant, "u1", "s2", previous, start=now - timedelta(days=3))
    append_messages(tenant, "u1", "s3", today, start=now - timedelta(minutes=5))

    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=3)

    assert wanted in result.items[0].chunk["text"], [i.chunk["text"] for i in result.items]


@pytest.mark.parametrize("question", [
    "What did I tell you last time?", "what did we talk about last time", "What did I say in our last conversation?",
    "Remind me what I mentioned last time.", "Что я говорил в прошлый раз?", "О чём мы говорили в прошлый раз?",
    "Что я тебе рассказывал в прошлый раз?", "我上次说了什么？", "我们上次聊了什么", "上回我跟你讲了什么？",
])
def test_questions_about_the_previous_conversation_are_recognised(question) -> None:
    assert timeexpr.asks_last_conversation(question)


@pytest.mark.parametrize("question", [
    # The last time something happened, not the last conversation.
    "When was the last time I went to the dentist?", "Last time I was in Rome I lost my passport.",
    "Когда я в последний раз был у врача?", "В прошлый раз в Риме я потерял паспорт.", "我上次去北京是什么时候？",
    "上次考试我考了多少分？", "What did I say about my sister?",
    # Someone else's words: about them, not about the user's last conversation.
    "What did my sister say last time she visited?", "Что сестра говорила в прошлый раз?", "妹妹上次说了什么？",
])
def test_the_last_occasion_of_something_is_not_the_last_conversation(question) -> None:
    assert not timeexpr.asks_last_conversation(question)


def test_with_no_earlier_day_the_question_is_searched_as_it_is(tenant) -> None:
    start = timezone.now() - timedelta(minutes=30)
    append_messages(tenant, "u1", "s1", ["I adopted a grey cat named Pixel."], start=start)

    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query="What did I tell you last time?", k=3)

    assert "Pixel" in result.items[0].chunk["text"]
