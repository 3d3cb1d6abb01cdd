"""A turn carries the turns just before it as search context (DIALOG_CONTEXT_TURNS), so that "Yes, last Friday!" is
found by what it answers; only those of the same exchange (DIALOG_CONTEXT_GAP_HOURS).

Found by a QA pass as a companion app that keeps one session per user: "我对什么过敏？" put
"最近工作压力很大，老板老是让我加班" in the context beside the allergy, because that turn, said forty
days later in the same session, carried the allergy turn's words as its context. The same in English and
Russian."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoryhub import services
from rag.context import context_assemble
from rag.models import Chunk
from rag.selectors import chunks_search

pytestmark = pytest.mark.django_db
START = datetime(2026, 8, 1, 10, 0, tzinfo=UTC)

# (text, days after START): one long session; the last turn comes weeks after the others.
CASES = {
    "zh": ([("我对花生过敏，吃了会起疹子。", 0), ("我妈妈下个月要来杭州看我。", 0),
            ("最近工作压力很大，老板老是让我加班，有点焦虑。", 40)],
           "我对什么过敏？", "花生", "加班"),
    "en": ([("I'm allergic to peanuts, I get a rash.", 0), ("My mom is visiting next month.", 0),
            ("Work has been crazy lately, my boss keeps asking for overtime.", 40)],
           "What am I allergic to?", "peanuts", "overtime"),
    "ru": ([("У меня аллергия на арахис, сразу сыпь.", 0), ("Мама приедет в следующем месяце.", 0),
            ("На работе завал, начальник опять просит задержаться.", 40)],
           "На что у меня аллергия?", "арахис", "задержаться"),
}


def _said(tenant, user_id: str, turns: list[tuple[str, float]]) -> None:
    """Each turn its own request in one session, indexed as a worker would."""
    for i, (text, days) in enumerate(turns):
        at = START + timedelta(days=days, minutes=i)
        result = services.messages_append(tenant=tenant, user_id=user_id, session_id="one",
                                          messages=[services.IncomingMessage(role="user", text=text, created_at=at)])
        services.archival_job_run(job_id=result.job.pk)


def _chunk(tenant, needle: str) -> Chunk:
    return next(c for c in Chunk.objects.filter(tenant=tenant, type="dialog") if needle in c.text)


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_turn_said_weeks_later_in_the_same_session_does_not_carry_the_earlier_turns(tenant, lang: str) -> None:
    turns, query, answer, later = CASES[lang]
    _said(tenant, "u1", turns)

    assert _chunk(tenant, later).meta["context_message_ids"] == []
    # The turn of the same day still carries the one before it.
    assert len(_chunk(tenant, turns[1][0][:6]).meta["context_message_ids"]) == 1
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=5).items
    assert answer in items[0].chunk["text"]
    assert not any(later in item.chunk["text"] and "bm25" in item.components for item in items)
    text = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                            budget_tokens=200).render()
    assert answer in text and later not in text


def test_the_gap_is_a_setting_and_a_reply_within_it_keeps_its_question(tenant, settings) -> None:
    settings.DIALOG_CONTEXT_GAP_HOURS = 24 * 60
    _said(tenant, "u1", CASES["en"][0])
    assert len(_chunk(tenant, "overtime").meta["context_message_ids"]) == 2

    # An overnight answer to the assistant's question is the same exchange at the default of 12 hours.
    settings.DIALOG_CONTEXT_GAP_HOURS = 12
    asked = services.messages_append(tenant=tenant, user_id="u2", session_id="s", messages=[
        services.IncomingMessage(role="assistant", text="How did the driving test go?",
                                 created_at=START + timedelta(hours=22))])
    services.archival_job_run(job_id=asked.job.pk)
    answered = services.messages_append(tenant=tenant, user_id="u2", session_id="s", messages=[
        services.IncomingMessage(role="user", text="Passed, first try!", created_at=START + timedelta(hours=31))])
    services.archival_job_run(job_id=answered.job.pk)
    assert len(_chunk(tenant, "Passed").meta["context_message_ids"]) == 1
    items = chunks_search(tenant_id=tenant.pk, user_id="u2", query="How did my driving test go?", k=3).items
    assert any("Passed" in item.chunk["text"] for item in items)
