"""An assistant's reply reaches the memories block only with the turn it answers, and where no memory fits whole
the best one shows its beginning: at 30 tokens a chat app's context held "That makes me so happy, Alex." alone,
the reaction without the news."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryhub.dates import without_dates
from rag.context import context_assemble, count_tokens
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)

NEWS = {
    "en": ("I finally got promoted to team lead at the clinic today! After three years of night shifts, two "
           "certifications and that awful audit last spring, my manager told me this morning in front of the "
           "whole ward.", "That makes me so happy, Alex. You earned it.",
           "did I get promoted?"),
    "ru": ("Меня наконец повысили до руководителя команды! После трёх лет ночных смен, двух сертификатов и той "
           "ужасной проверки прошлой весной начальница объявила это сегодня утром при всём отделении.",
           "Как я рада за тебя, Саша!", "меня повысили?"),
    "zh": ("我今天终于升职当组长了！经过三年的夜班、两个证书和去年春天那次可怕的检查，"
           "经理今天早上当着整个科室的面宣布了。",
           "太为你高兴了！", "我升职了吗？"),
}


def _memories(context):
    return next(b for b in context.blocks if b.name == "memories")


@pytest.mark.parametrize("language", ["en", "ru", "zh"])
def test_at_a_small_budget_the_news_shows_its_beginning_and_the_reaction_never_stands_alone(tenant,
                                                                                           language) -> None:
    news, reaction, query = NEWS[language]
    append_messages(tenant, "u1", "s1", [("user", news), ("assistant", reaction)], start=START)
    for budget in (30, 50):
        context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                                   budget_tokens=budget)
        block = _memories(context)
        assert reaction not in block.render(), (budget, block.render())
        first = block.items[0]
        assert first.text.splitlines()[-1].startswith(f"- user: {news[:12]}") and first.text.endswith("…")
        assert {"ref": first.ref, "reason": "clipped"}.items() <= next(
            c for c in block.cut if c["ref"] == first.ref).items()
        assert context.used <= budget
    # With room for both, the reply follows the turn it answers and names it.
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None, budget_tokens=200)
    lines = [line for item in _memories(context).items for line in item.text.splitlines()]
    assert lines.index(f"- assistant: {reaction}") == lines.index(f"- user: {news}") + 1
    by_text = {i.text.splitlines()[-1]: i for i in _memories(context).items}
    assert by_text[f"- assistant: {reaction}"].meta["reply_to"] == by_text[f"- user: {news}"].ref


@pytest.mark.parametrize(("question", "answer", "query"), [
    ("Can you remind me when I have to go?", "Your dentist appointment is on Monday at 9, at Bright Smile.",
     "dentist appointment"),
    ("Напомни, когда мне туда идти?", "Запись к стоматологу в понедельник в 9 утра, клиника «Улыбка».",
     "запись к стоматологу"),
    ("那我到底哪天要过去呢？", "你的牙医预约在周一上午九点，在微笑诊所。", "牙医预约"),
])
def test_a_reply_the_search_found_brings_the_turn_it_answers_though_the_search_left_that_out(
        tenant, question: str, answer: str, query: str) -> None:
    append_messages(tenant, "u1", "s1", [("user", "Hi!"), ("assistant", "Hello! How can I help?")], start=START)
    append_messages(tenant, "u1", "s2", [("user", question), ("assistant", answer)],
                    start=datetime(2024, 3, 4, 9, 0, tzinfo=UTC))
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None, budget_tokens=300)
    block = _memories(context)
    assert block.render().splitlines()[2:4] == [f"- user: {question}", f"- assistant: {answer}"]
    # The reply says what the query asks: it ranks first and stands alone where the two do not fit; the
    # question, fetched only for it, never does, not even where it alone would fit.
    question_ref = next(r for r, line in _refs(context) if line == f"- user: {question}")
    answer_line = f"- assistant: {answer}"
    small = _memories(context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                                       budget_tokens=count_tokens(answer_line) + 8))
    assert small.render().splitlines()[2:] == [answer_line, "</memories>"]
    tiny = _memories(context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                                      budget_tokens=20))
    assert tiny.items == []
    assert [c["reason"] for c in tiny.cut if c["ref"] == question_ref] == ["without_its_answer"]


def _refs(context):
    return [(i.ref, i.text.splitlines()[-1]) for i in _memories(context).items]


@pytest.mark.parametrize(("said", "asked", "answer"), [
    ("I booked a dentist appointment for Monday at 9 at Bright Smile.", "When is my dentist appointment?",
     "Your dentist appointment is on Monday at 9."),
    ("Я записался к стоматологу на понедельник в 9 утра.", "Когда у меня запись к стоматологу?",
     "Запись к стоматологу в понедельник в 9 утра."),
    ("我预约了周一上午九点看牙医。", "我什么时候看牙医？", "你周一上午九点看牙医。"),
])
def test_the_query_asked_before_is_no_memory_but_its_answer_is(tenant, said: str, asked: str, answer: str) -> None:
    """QA: "when is my dentist appointment?", asked in an earlier chat, came back inside the memories for the
    same question: the asking is no memory."""
    append_messages(tenant, "u1", "s1", [said], start=START)
    append_messages(tenant, "u1", "s2", [("user", asked), ("assistant", answer)],
                    start=datetime(2024, 3, 4, 9, 0, tzinfo=UTC))
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=asked, session_id=None, budget_tokens=300)
    block = _memories(context)
    # The booking shows with the day it booked written out ("for Monday (2024-03-04)").
    assert asked not in block.render() and said in without_dates(block.render()), block.render()
    assert "asked_before" in {c["reason"] for c in block.cut}
