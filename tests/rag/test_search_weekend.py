"""A question about a weekend's plan finds the plan told for its Saturday, whether the weekend is over or ahead.

Found by a QA pass acting as a chat app: on Wednesday 2026-11-25 the user said "On Saturday we're driving to the
lake" (a date term of Saturday 28 November); on Monday 30 November "what did I plan for the weekend?" asked for
the coming weekend (the plan word read as the future) and found nothing of it, in English and Chinese; in
Russian ("что я планировал на выходные?", told in the past) the weekend just past, so the same question on
Thursday missed the plan told on Tuesday for the coming Saturday. A question about a plan now asks for both
nearest weekends (`memoryhub.timeexpr._either_side`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from types import SimpleNamespace

import pytest

from rag import selectors
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

MONDAY = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
THURSDAY = datetime(2026, 12, 3, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(("query", "last_plan", "next_plan", "plans_fell_through", "chatter"), [
    ("what did I plan for the weekend?", "On Saturday we're driving to the lake with Sergey.",
     "On Sunday we're going to the theatre.", "My plans for the evening fell through.",
     ["Work was crazy again.", "I bought new sneakers.", "My boss wants the report.", "The coffee machine broke."]),
    ("что я планировал на выходные?", "В субботу мы с Сергеем едем на дачу.", "В воскресенье идём в театр.",
     "Мои планы на вечер сорвались.",
     ["На работе опять аврал.", "Купил новые кроссовки.", "Начальник просит отчёт.", "Сломалась кофемашина."]),
    ("我周末计划做什么？", "周六我和谢尔盖去湖边。", "周日我们去看话剧。", "我晚上的计划泡汤了。",
     ["工作又很忙。", "我买了新运动鞋。", "老板要报告。", "咖啡机坏了。"]),
])
def test_a_weekend_plan_question_finds_the_plan_for_the_weekend_just_past_and_the_coming_one(
        tenant, monkeypatch, query: str, last_plan: str, next_plan: str, plans_fell_through: str,
        chatter: list[str]) -> None:
    clock = SimpleNamespace(now=lambda: MONDAY)
    monkeypatch.setattr(selectors, "timezone", clock)
    # A week of chat around each plan; the turn that shares the word "plan" was said the week before.
    for user in ("asks-monday", "asks-thursday"):
        append_messages(tenant, user, "s-before", [plans_fell_through], start=datetime(2026, 11, 17, 19, tzinfo=UTC))
        append_messages(tenant, user, "s-tue", chatter[:2], start=datetime(2026, 11, 24, 19, tzinfo=UTC))
        append_messages(tenant, user, "s-thu", chatter[2:], start=datetime(2026, 11, 26, 19, tzinfo=UTC))
    append_messages(tenant, "asks-monday", "s-wed", [last_plan], start=datetime(2026, 11, 25, 19, tzinfo=UTC))
    append_messages(tenant, "asks-thursday", "s-next", [next_plan], start=datetime(2026, 12, 1, 19, tzinfo=UTC))

    # Monday: the plan was for the weekend just over.
    found = selectors.chunks_search(tenant_id=tenant.pk, user_id="asks-monday", query=query, k=5)
    assert found.items[0].chunk["text"] == last_plan
    # Thursday: the plan told on Tuesday is for the coming weekend.
    clock.now = lambda: THURSDAY
    found = selectors.chunks_search(tenant_id=tenant.pk, user_id="asks-thursday", query=query, k=5)
    assert found.items[0].chunk["text"] == next_plan
