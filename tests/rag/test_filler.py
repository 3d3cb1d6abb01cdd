"""A turn of greetings and thanks only ranks below the turns that say something (boosts.filler in
config/knowledge.yaml): it carries the turns before it as search text and matched their words."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2026, 6, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(("turns", "query", "answer", "filler"), [
    (["Half a year ago I started running every morning before work.", ("assistant", "Running every morning?"),
      "Thanks!", "My neighbour plays the piano at night, which is annoying."],
     "what did I start half a year ago?", "Half a year ago I started running every morning before work.", "Thanks!"),
    (["Полгода назад я начал бегать каждое утро перед работой.", ("assistant", "Бегать каждое утро?"),
      "Спасибо!", "Сосед по ночам играет на пианино, это раздражает."],
     "что я начал полгода назад?", "Полгода назад я начал бегать каждое утро перед работой.", "Спасибо!"),
    (["上个月我开始每天早上跑步。", ("assistant", "每天早上跑步？"), "谢谢！", "邻居晚上弹钢琴，很吵。"],
     "我上个月开始做什么？", "上个月我开始每天早上跑步。", "谢谢！"),
])
def test_thanks_ranks_below_the_turns_that_say_something(tenant, turns, query: str, answer: str,
                                                          filler: str) -> None:
    append_messages(tenant, "u1", "s1", turns, start=START)
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=4, include_tenant_documents=False).items
    texts = [item.chunk["text"] for item in items]
    assert texts[0] == answer
    # The thanks was found only through the turns before it (and lifted as the answer to the assistant's
    # question): it ranks below the two turns that say what it thanks for.
    position = texts.index(filler)
    assert position >= 2, texts
    assert items[position].components["filler"] == 0.5
    assert "filler" not in items[1].components  # the echo is no filler: "Running" opens it, it is no name


def test_a_query_of_thanks_finds_the_thanks(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["I moved to Lisbon.", "Thanks!"], start=START)
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query="thanks", k=2, include_tenant_documents=False).items
    assert items[0].chunk["text"] == "Thanks!" and "filler" not in items[0].components


@pytest.mark.parametrize(("statements", "asked_before", "query"), [
    (["I live in Boston, near the harbor.", "Big news: I moved to Seattle last week!"], "where do I live now?",
     "where do I live?"),
    (["Я живу в Москве, у самого парка.", "Новости: я переехал в Петербург!"], "где я сейчас живу?", "где я живу?"),
    (["我住在北京，靠近公园。", "大新闻：我搬到深圳了！"], "我现在住在哪里？", "我住在哪里？"),
])
def test_a_question_asked_before_ranks_below_the_turns_that_answer_it(tenant, statements, asked_before: str,
                                                                       query: str) -> None:
    """QA: a chat app's user asked "where do I live now?" once; then "where do I live?" found that question
    first (1.2), above what they had said about it."""
    append_messages(tenant, "u1", "s1", statements[:1], start=START)
    append_messages(tenant, "u1", "s2", statements[1:], start=datetime(2026, 9, 1, 9, 0, tzinfo=UTC))
    append_messages(tenant, "u1", "s3", [asked_before, ("assistant", "Let me check your memories.")],
                    start=datetime(2026, 11, 1, 9, 0, tzinfo=UTC))
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=5, include_tenant_documents=False).items
    texts = [item.chunk["text"] for item in items]
    assert texts.index(asked_before) > texts.index(statements[0]), texts
    assert items[texts.index(asked_before)].components["echo"] == 0.5
