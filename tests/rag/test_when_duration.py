"""A "when" question is answered by how long, too: "When did I get Mochi?" by "I've had Mochi for three years now",
which names no date (`memoryhub.timeexpr.WHEN_DURATION_WEIGHT`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rag import selectors
from rag.context import context_assemble
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2026, 10, 1, 19, tzinfo=UTC)


@pytest.mark.parametrize(("query", "since", "others"), [
    ("When did I get Mochi?", "I've had Mochi for three years now.",
     ["Mochi is sleeping on my keyboard again.", "Mochi knocked over my coffee.", "Mochi hates the vacuum cleaner."]),
    ("Когда у меня появился Мочи?", "Мочи живёт у меня уже три года.",
     ["Мочи опять спит на клавиатуре.", "Мочи уронил мой кофе.", "Мочи ненавидит пылесос."]),
    ("我什么时候有的年糕？", "年糕在我家已经三年了。",
     ["年糕又在键盘上睡觉了。", "年糕打翻了我的咖啡。", "年糕讨厌吸尘器。"]),
])
def test_a_when_question_finds_the_turn_that_says_how_long(tenant, query: str, since: str, others: list[str]) -> None:
    for day, turn in enumerate([*others[:2], since, others[2]]):
        append_messages(tenant, "u1", f"s{day}", [turn], start=START + timedelta(days=day))
    found = selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=4)
    assert found.items[0].chunk["text"] == since, [i.chunk["text"] for i in found.items]


@pytest.mark.parametrize(("query", "answer", "dated"), [
    ("When is my sister coming?", "My sister Anna is coming to visit next week.",
     ["We should cook pasta tonight.", "I started a new job in March.", "I go hiking every weekend."]),
    ("Когда приедет моя сестра?", "Моя сестра Аня приедет на следующей неделе.",
     ["Давай сегодня вечером приготовим пасту.", "Я вышла на новую работу в марте.",
      "Я хожу в походы каждые выходные."]),
    ("我妹妹什么时候来？", "我妹妹安娜下周来看我。",
     ["我们今晚做意大利面吧。", "我三月开始了新工作。", "我每个周末都去爬山。"]),
])
def test_a_when_question_is_not_answered_by_any_time_at_all(tenant, query: str, answer: str,
                                                            dated: list[str]) -> None:
    """"When is my sister coming?" showed a new user "We should cook pasta tonight." and "I started a new job in
    March.": the question's "when" term (@t, any time named) matched them, and nothing else of it did. It adds to
    a turn that says something the question asks about; alone, it finds nothing."""
    for day, turn in enumerate([*dated, answer]):
        append_messages(tenant, "u1", f"s{day}", [turn], start=START + timedelta(days=day))
    found = selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=4)
    by_words = [i.chunk["text"] for i in found.items if "bm25" in i.components]
    assert by_words == [answer]
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None, budget_tokens=300)
    shown = context.render()
    # The beginnings: a relative date is shown with the days it meant ("下周(2026-10-05 – 2026-10-11)").
    assert answer[:6] in shown and not any(turn[:6] in shown for turn in dated), shown
