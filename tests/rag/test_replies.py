"""The answer to a question: "How often do I work out with my family?" shares its words with the
assistant's question "How often do you and your family work out together?", not with the user's answer
"Three times a week, it keeps us on track". A question among the fused top lifts the turn that answers it
(rag.selectors._replies_lifted)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from memoryhub import services
from memoryhub.search import vectors
from rag import selectors
from rag.selectors import SearchFilters, chunks_search
from tests.knowledge_config import assert_rejected

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _said(tenant, user_id: str, turns: list[tuple[str, str]], session_id: str = "s1",
          start: datetime = START) -> None:
    """(role, text) turns of one session, a minute apart, indexed as a worker would."""
    messages = [services.IncomingMessage(role=role, text=text, created_at=start + timedelta(minutes=i))
                for i, (role, text) in enumerate(turns)]
    result = services.messages_append(tenant=tenant, user_id=user_id, session_id=session_id, messages=messages)
    services.archival_job_run(job_id=result.job.pk)


def _without_replies(monkeypatch) -> None:
    real = selectors.retrieval_config

    def config(domain: str = "default"):
        return dataclasses.replace(real(domain), reply_candidates=0)

    monkeypatch.setattr(selectors, "retrieval_config", config)


def _rank(tenant, user_id: str, query: str, answer: str, **options) -> tuple[int | None, selectors.SearchItem | None]:
    items = chunks_search(tenant_id=tenant.pk, user_id=user_id, query=query, k=10, **options).items
    for rank, item in enumerate(items, start=1):
        if answer in item.chunk["text"]:
            return rank, item
    return None, None


# The assistant asks, the user answers in words of their own; the other turns say the question's words.
CHATS = [
    ([("user", "I try to work out every morning before work."),
      ("assistant", "Nice! Does your family join you?"),
      ("user", "My family loves it, we even bought a family gym membership."),
      ("assistant", "How often do you and your family work out together?"),
      ("user", "Three times a week, it keeps us on track."),
      ("user", "Work has been crazy, I often stay late."),
      ("user", "My family visited my aunt last weekend."),
      ("user", "My family often visits my aunt on Sundays."),
      ("user", "How often should I take a break from work?")],
     "How often do I work out with my family?", "Three times a week"),
    ([("user", "Мы с семьёй любим плавать, это наш семейный спорт."),
      ("assistant", "Здорово! А где вы плаваете?"),
      ("user", "В бассейне рядом с домом, там хорошая семейная скидка."),
      ("assistant", "Как часто вы с семьёй ходите в бассейн?"),
      ("user", "По субботам и средам, иногда чаще."),
      ("user", "Часто думаю, что надо бы найти бассейн побольше."),
      ("user", "Семья у меня большая, нас пятеро."),
      ("user", "Как часто нужно менять воду в бассейне?"),
      ("user", "С семьёй мы часто ходим в кино.")],
     "Как часто я хожу с семьёй в бассейн?", "По субботам и средам"),
    ([("user", "我们全家都喜欢游泳。"),
      ("assistant", "太好了！你们在哪里游泳？"),
      ("user", "家附近的游泳馆，全家办了年卡。"),
      ("assistant", "你们全家多久去一次游泳馆？"),
      ("user", "每周六早上，雷打不动。"),
      ("user", "游泳馆最近人很多。"),
      ("user", "全家一起出去玩很开心。"),
      ("user", "多久去一次健身房比较好？"),
      ("user", "游泳馆的水多久换一次？")],
     "我们全家多久去一次游泳馆？", "每周六早上"),
]


@pytest.mark.parametrize(("turns", "query", "answer"), CHATS)
def test_the_answer_to_a_matching_question_is_lifted(tenant, monkeypatch, turns, query, answer) -> None:
    _said(tenant, "u1", turns)
    rank, item = _rank(tenant, "u1", query, answer)
    assert item is not None and item.components["reply"] > 0
    _without_replies(monkeypatch)
    rank_without, item_without = _rank(tenant, "u1", query, answer)
    # Its own words put it below turns that only share the question's words ("How often should I take a
    # break from work?"); lifted by its question, it passes them.
    assert rank_without is not None and rank < rank_without
    assert "reply" not in item_without.components


def test_a_namespace_outside_the_chunk_stores_finds_the_same_answer(tenant, monkeypatch) -> None:
    turns, query, answer = CHATS[0]
    _said(tenant, "u1", turns)
    in_process = [i.chunk["id"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=8).items]
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 0)  # every namespace counts as large: rows from SQL
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=8)
    assert [i.chunk["id"] for i in result.items] == in_process
    lifted = [i for i in result.items if "reply" in i.components]
    assert [answer in i.chunk["text"] for i in lifted][:1] == [True]
    assert "replies" in result.timings_ms


def test_the_assistants_answer_to_the_users_question_is_not_lifted(tenant) -> None:
    # A memory is what the user said: the user's question stays the memory, the assistant's answer is not lifted.
    _said(tenant, "u1", [("user", "What is a good recipe for borscht?"),
                         ("assistant", "Beets, cabbage, potatoes and a spoon of sour cream."),
                         ("user", "I cooked borscht for my parents yesterday.")])
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query="What recipe for borscht did I ask about?",
                          k=5).items
    assert items and all("reply" not in i.components for i in items)


def test_the_next_sessions_first_turn_is_not_an_answer(tenant) -> None:
    _said(tenant, "u1", [("user", "Hi"), ("assistant", "How often do you play tennis?")])
    _said(tenant, "u1", [("user", "Twice a month, with my brother."), ("user", "Tennis is fun.")],
          session_id="s2", start=START + timedelta(days=3))
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query="How often do I play tennis?", k=5).items
    assert any("Twice a month" in i.chunk["text"] for i in items)
    assert all("reply" not in i.components for i in items)


def test_an_answer_outside_the_filters_is_not_returned(tenant) -> None:
    turns, query, answer = CHATS[0]
    _said(tenant, "u1", turns)
    question_said = START + timedelta(minutes=3)  # the assistant's question; its answer a minute later
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=10,
                          filters=SearchFilters(created_before=question_said)).items
    assert any("How often do you and your family" in i.chunk["text"] for i in items)
    assert all(answer not in i.chunk["text"] for i in items)


@pytest.mark.parametrize("wrong", ["replies: {candidates: 20, share: 1.5}", "replies: {candidates: -1, share: 0.4}"])
def test_replies_out_of_range_is_a_configuration_error(tmp_path, settings, wrong: str) -> None:
    assert_rejected(settings, tmp_path, "replies: {candidates: 20, share: 0.4}", wrong, "replies")
