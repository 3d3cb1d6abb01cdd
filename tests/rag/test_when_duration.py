"""A "when" question is answered by how long, too: "When did I get Mochi?" by "I've had Mochi for three years now",
which names no date (`memoryhub.timeexpr.WHEN_DURATION_WEIGHT`)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from rag import selectors
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
