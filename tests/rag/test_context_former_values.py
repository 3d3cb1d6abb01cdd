"""A question about what a profile key held before is answered from the key's story: the active facts hold
today's values only, and the turn that said the old one may share no word with the question."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from profiles.selectors import asks_about_past
from profiles.services import fact_delete, fact_upsert
from rag.context import context_assemble
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)
MOVED = datetime(2024, 6, 1, 9, 0, tzinfo=UTC)

MOVES = {
    "en": ("I live in Boston, near the harbor.", "Big news: I moved to Seattle last week!",
           "Where did I live before?", "where do I live?", "location: Seattle",
           "former location: Boston (until 1 Jun 2024)"),
    "ru": ("Я живу в Казани и работаю в школе.", "Новости: на прошлой неделе я переехал в Питер!",
           "Где я раньше жил?", "где я живу?", "location: Питер",
           "former location: Казань (until 1 Jun 2024)"),
    "zh": ("我住在波士顿，靠近港口。", "大新闻：我上周搬到西雅图了！",
           "我以前住在哪里？", "我住在哪里？", "location: 西雅图",
           "former location: 波士顿 (until 1 Jun 2024)"),
}


def _profile(context) -> list[str]:
    return [i.text for b in context.blocks if b.name == "profile" for i in b.items]


@pytest.mark.parametrize("lang", MOVES)
def test_a_question_about_the_past_gets_the_value_a_stated_change_replaced(tenant, lang: str) -> None:
    """QA: "Где я раньше жил?" after "я живу в Казани" and, months later, "я переехал в Питер" showed "location:
    Питер" and no memory at all: "жил" and "живу" stem apart, and the profile held today's value only."""
    before, after, past, present, line, former = MOVES[lang]
    append_messages(tenant, "u1", "s1", [before], start=START, auto_extract=True)
    append_messages(tenant, "u1", "s2", [after], start=MOVED, auto_extract=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=past, session_id=None, budget_tokens=80)
    assert _profile(context)[:2] == [line, former], context.render()
    # A question about today is answered by today's value alone.
    now = context_assemble(tenant_id=tenant.pk, user_id="u1", query=present, session_id=None, budget_tokens=80)
    assert "former" not in now.render() and _profile(now)[0] == line
    # Where the profile's room holds one line, it is today's value.
    small = context_assemble(tenant_id=tenant.pk, user_id="u1", query=past, session_id=None, budget_tokens=30)
    assert _profile(small)[0] == line


@pytest.mark.parametrize(("quit_turn", "question"), [
    ("I quit Google last month, taking a break now.", "Where did I work before?"),
    ("Я уволился из Яндекса, пока отдыхаю.", "Где я работал раньше?"),
    ("我从腾讯辞职了，现在在休息。", "我以前在哪里工作？"),
])
def test_a_key_the_user_ended_gets_a_line_of_its_own(tenant, quit_turn: str, question: str) -> None:
    employer = {"I": "Google", "Я": "Яндекс", "我": "腾讯"}[quit_turn[0]]
    fact_upsert(tenant=tenant, user_id="u1", key="employer", value=employer, confidence=0.9, source="api")
    append_messages(tenant, "u1", "s1", [quit_turn], start=MOVED, auto_extract=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=question, session_id=None,
                               budget_tokens=60)
    assert f"former employer: {employer} (until 1 Jun 2024)" in _profile(context), context.render()
    ref = next(i.ref for b in context.blocks if b.name == "profile" for i in b.items if "employer" in i.text)
    assert ref.startswith("event:")


def test_a_value_deleted_as_wrong_is_no_former_value(tenant) -> None:
    fact_upsert(tenant=tenant, user_id="u1", key="location", value="Boston", confidence=0.9, source="api")
    fact_delete(tenant=tenant, user_id="u1", key="location")  # the client says it was never true
    fact_upsert(tenant=tenant, user_id="u1", key="location", value="Seattle", confidence=0.9, source="api")
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="Where did I live before?", session_id=None,
                               budget_tokens=60)
    assert _profile(context) == ["location: Seattle"]


def test_a_value_held_again_is_not_listed_as_former(tenant) -> None:
    for city in ("Boston", "Seattle", "Boston"):
        fact_upsert(tenant=tenant, user_id="u1", key="location", value=city, confidence=0.9, source="api",
                    change=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="where did I live previously?",
                               session_id=None, budget_tokens=60)
    current, former = _profile(context)
    assert current == "location: Boston" and former.startswith("former location: Seattle (until ")
    assert "Boston" not in former


@pytest.mark.parametrize(("query", "past"), [
    ("Where did I live before?", True), ("what was my previous job?", True), ("my old address", True),
    ("где я раньше жил?", True), ("мой бывший работодатель", True), ("我以前住在哪里？", True), ("我之前的工作", True),
    ("where do I live?", False), ("где я живу?", False), ("我住在哪里？", False), ("what is my job?", False),
])
def test_a_question_about_the_past_is_told_apart(query: str, past: bool) -> None:
    assert asks_about_past(query) is past


FAMILY_TURNS = {
    "en": ["My husband Artem is a sound engineer, he mixes albums for local bands and teaches on weekends, and last "
           "month he finally finished restoring his grandfather's old motorcycle in our garage."],
    "ru": ["Мой муж Артём звукорежиссёр, сводит альбомы местным группам и преподаёт по выходным, а в прошлом месяце "
           "он наконец восстановил старый мотоцикл своего деда у нас в гараже."],
    "zh": ["我老公张伟是录音师，给本地乐队混音，周末还去教课，"
           "上个月他终于在我们家车库里修好了他爷爷留下的那辆老摩托车。"],
}


@pytest.mark.parametrize("lang", MOVES)
def test_the_room_left_goes_to_the_asked_former_value_before_a_long_bio(tenant, lang: str) -> None:
    """QA (`make run`, a Russian user): "Где я раньше жила?" at 150 tokens gave the room the memories left to the
    husband's whole bio, and the answer, "former location: Екатеринбург", stayed cut."""
    before, after, past, _, line, former = MOVES[lang]
    append_messages(tenant, "u1", "s1", [before, *FAMILY_TURNS[lang]], start=START, auto_extract=True)
    append_messages(tenant, "u1", "s2", [after], start=MOVED, auto_extract=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=past, session_id=None, budget_tokens=110)
    assert _profile(context)[:2] == [line, former], context.render()
    assert any(b.name == "inner_circle" and b.items for b in context.blocks), context.render()
