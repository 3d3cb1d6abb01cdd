"""The turn that dates a hit: people say when first and what after ("Last weekend I went to a community
event." / "Oh, which one?" / "I set up a 5K charity run in our neighbourhood."). "When did I run the charity
5K?" finds the last by its words, and its date is in the first. For a "when" question a turn among the fused
top that names no time lifts the turn before it by the same speaker that does (rag.selectors._dated_turns_lifted)."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from memoryhub import services
from memoryhub.dates import without_dates
from memoryhub.search import vectors
from rag import selectors
from rag.context import context_assemble
from rag.selectors import chunks_search
from tests.knowledge_config import assert_rejected

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 4, 9, 0, tzinfo=UTC)


def _said(tenant, user_id: str, turns: list[tuple[str, str]], session_id: str, start: datetime) -> None:
    """(role, text) turns of one session, a minute apart, indexed as a worker would."""
    messages = [services.IncomingMessage(role=role, text=text, created_at=start + timedelta(minutes=i))
                for i, (role, text) in enumerate(turns)]
    result = services.messages_append(tenant=tenant, user_id=user_id, session_id=session_id, messages=messages)
    services.archival_job_run(job_id=result.job.pk)


def _history(tenant, language: str) -> tuple[list[tuple[str, str]], str, str]:
    """The other sessions weeks before, then the event's: its turns, the question and the dated turn's words."""
    event, others, query, dated = CHATS[language]
    for i, turns in enumerate(others):
        _said(tenant, "u1", turns, f"o{i}", START - timedelta(days=20 - i))
    _said(tenant, "u1", event, "s1", START)
    return event, query, dated


def _without_dated(monkeypatch) -> None:
    real = selectors.retrieval_config

    def config(domain: str = "default"):
        return dataclasses.replace(real(domain), dated_candidates=0)

    monkeypatch.setattr(selectors, "retrieval_config", config)


def _rank(tenant, query: str, text: str) -> tuple[int | None, selectors.SearchItem | None]:
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=10).items
    for rank, item in enumerate(items, start=1):
        if text in item.chunk["text"]:
            return rank, item
    return None, None


# The date said first, the event after the assistant's question; other sessions say the question's words.
CHATS = {
    "en": ([("user", "Last weekend I went to a community event in the park."),
            ("assistant", "Oh nice, what kind of event?"),
            ("user", "I set up a 5K charity run for the animal shelter, we raised 900 dollars!")],
           [[("user", "My neighbour wants to run a 5K charity race next year."),
             ("assistant", "That's a great idea.")],
            [("user", "I should run more often, maybe a 5K every Sunday."),
             ("assistant", "Sounds like a plan!")],
            [("user", "I organised a book club at work, we meet on Fridays."), ("assistant", "Fun!")]],
           "When did I organise the 5K charity run?", "Last weekend I went"),
    "ru": ([("user", "В прошлую субботу я был на одном городском мероприятии."),
            ("assistant", "Ого, на каком?"),
            ("user", "Организовал благотворительный забег на пять километров для приюта, собрали 900 долларов!")],
           [[("user", "Сосед хочет устроить благотворительный забег в следующем году."),
             ("assistant", "Отличная идея.")],
            [("user", "Надо бегать чаще, хотя бы пять километров по воскресеньям."),
             ("assistant", "Хороший план!")],
            [("user", "Организовал на работе турнир по настольному теннису."), ("assistant", "Здорово!")]],
           "Когда я организовал благотворительный забег?", "В прошлую субботу я был"),
    "zh": ([("user", "上周六我去参加了一个社区活动。"),
            ("assistant", "哦？什么活动？"),
            ("user", "我给动物收容所组织了一场五公里慈善跑，筹了九百块钱！")],
           [[("user", "邻居说明年也想办一场慈善跑。"),
             ("assistant", "好主意。")],
            [("user", "我应该多跑步，每个星期天跑五公里。"),
             ("assistant", "不错的计划！")],
            [("user", "我组织了一次同学聚会，大家玩得很开心。"), ("assistant", "真好！")]],
           "我什么时候组织的慈善跑？", "上周六我去参加了"),
}


@pytest.mark.parametrize("language", CHATS)
def test_a_when_question_lifts_the_turn_that_dates_its_hit(tenant, monkeypatch, language) -> None:
    _, query, dated = _history(tenant, language)
    rank, item = _rank(tenant, query, dated)
    assert rank is not None and rank <= 3 and item.components["dated"] > 0
    _without_dated(monkeypatch)
    rank_without, item_without = _rank(tenant, query, dated)
    # It shares no word of the question but "when"'s time: the turns that only say the question's words
    # ranked above it.
    assert rank_without is None or rank_without > rank
    assert item_without is None or "dated" not in item_without.components


@pytest.mark.parametrize("language", CHATS)
def test_a_question_that_does_not_ask_when_lifts_nothing(tenant, language) -> None:
    event = CHATS[language][0]
    _said(tenant, "u1", event, "s1", START)
    query = {"en": "What charity run did I organise?", "ru": "Какой благотворительный забег я организовал?",
             "zh": "我组织了什么慈善跑？"}[language]
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=10).items
    assert items and all("dated" not in i.components for i in items)


def test_another_speakers_dated_turn_is_not_lifted(tenant) -> None:
    # The assistant's "Yesterday…" dates nothing the user did.
    _said(tenant, "u1", [("assistant", "Yesterday you said you wanted to plan something for the shelter."),
                         ("user", "I set up a 5K charity run for the animal shelter!")], "s1", START)
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query="When did I set up the 5K charity run?",
                          k=10).items
    assert items and all("dated" not in i.components for i in items)


def test_a_hit_that_names_its_own_time_lifts_nothing(tenant) -> None:
    _said(tenant, "u1", [("user", "Last month I moved to a new flat."),
                         ("assistant", "Congratulations!"),
                         ("user", "Yesterday I set up a 5K charity run for the animal shelter!")], "s1", START)
    items = chunks_search(tenant_id=tenant.pk, user_id="u1", query="When did I set up the 5K charity run?",
                          k=10).items
    assert items and all("dated" not in i.components for i in items)


def test_a_namespace_outside_the_chunk_stores_lifts_the_same_turn(tenant, monkeypatch) -> None:
    _, query, dated = _history(tenant, "en")
    in_process = [i.chunk["id"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=8).items]
    monkeypatch.setattr(vectors, "EXACT_SCAN_MAX_ROWS", 0)  # every namespace counts as large: rows from SQL
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=8)
    assert [i.chunk["id"] for i in result.items] == in_process
    assert [dated in i.chunk["text"] for i in result.items if "dated" in i.components] == [True]
    assert "dated" in result.timings_ms


@pytest.mark.parametrize("wrong", ["dated: {candidates: 10, share: 1.5}", "dated: {candidates: -1, share: 0.8}"])
def test_dated_out_of_range_is_a_configuration_error(tmp_path, settings, wrong: str) -> None:
    assert_rejected(settings, tmp_path, "dated: {candidates: 10, share: 0.8}", wrong, "dated")


@pytest.mark.parametrize("language", CHATS)
def test_the_context_of_a_when_question_shows_the_turn_that_dates_its_answer(tenant, language) -> None:
    event, query, dated = _history(tenant, language)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None, budget_tokens=150)
    shown = next(b for b in context.blocks if b.name == "memories").render()
    # It says no word of the question and is far from it by meaning: the floor lets it through for its hit.
    # Asked when, it reads with the days it meant: "Last weekend (2024-03-02 – 2024-03-03) I went…".
    assert dated in without_dates(shown) and event[2][1][:20] in shown, shown
    assert "(2024-03-02" in shown
