"""The user's own name in a query of their memories finds small talk ("Nice to meet you, Kate!"),
not what the question asks: the search leaves it out, in every language, while a name alone stays."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from profiles import selectors as profile_selectors
from profiles.services import fact_upsert
from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@pytest.mark.parametrize(("name", "turns", "query"), [
    ("Kate", [("assistant", "Nice to meet you, Kate!"), ("assistant", "Good luck at work tomorrow, Kate!"),
              "On weekends I go climbing, my favourite sport.", "I work night shifts in a ward."],
     "Which sport does Kate like?"),
    ("Олег", [("assistant", "Привет, Олег! Рад знакомству."), ("assistant", "Удачи завтра, Олег!"),
              "По выходным играю в футбол, это мой любимый спорт.", "Работаю программистом."],
     "Какой спорт любит Олег?"),
    ("林晓", [("assistant", "你好林晓！很高兴认识你。"), ("assistant", "林晓，明天加油！"),
             "周末我喜欢去爬山，这是我最喜欢的运动。", "我在医院上夜班。"],
     "林晓喜欢什么运动？"),
])
def test_the_users_own_name_is_no_search_word_of_their_memories(tenant, name, turns, query) -> None:
    greetings = {text for role, text in (t for t in turns if isinstance(t, tuple))}
    for user_id in ("told", "untold"):
        append_messages(tenant, user_id, "s1", turns, start=START)
    fact_upsert(tenant=tenant, user_id="told", key="name", value=name, source="api")

    def lexical_hits(user_id: str, q: str) -> set[str]:
        items = chunks_search(tenant_id=tenant.pk, user_id=user_id, query=q, k=10).items
        return {i.chunk["text"] for i in items if "bm25" in i.components}

    assert not lexical_hits("told", query) & greetings
    assert lexical_hits("untold", query) >= greetings  # where the user has not told it, a word like any
    assert lexical_hits("told", name) >= greetings  # a name alone is still searched for


def test_small_talk_with_the_name_no_longer_answers_what_the_user_does(tenant) -> None:
    """What a chat app's user saw: the greetings came first, the answer fourth."""
    append_messages(tenant, "u1", "s1", [
        "Hi! I am Kate, I work as a nurse at St Mary hospital in Leeds.",
        ("assistant", "Nice to meet you, Kate! How long have you been a nurse?"),
        "About six years. My husband Tom is a firefighter, and our daughter Lily just started school.",
        ("assistant", "That is a busy household!"),
        "Yes. On weekends I go climbing with my friend Priya. I am allergic to peanuts, so restaurants are tricky.",
        ("assistant", "Good luck with everything, Kate!"),
    ], start=START)
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Kate", source="api")
    top = chunks_search(tenant_id=tenant.pk, user_id="u1", query="what sport does Kate do?", k=1).items[0]
    assert "climbing" in top.chunk["text"]


def test_a_name_stated_later_counts_once_the_cached_one_expires(tenant, monkeypatch) -> None:
    assert profile_selectors.own_name_terms(tenant_id=tenant.pk, user_id="u1") == frozenset()
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Kate Miller", source="api")
    assert profile_selectors.own_name_terms(tenant_id=tenant.pk, user_id="u1") == frozenset()  # cached
    monkeypatch.setattr(profile_selectors, "OWN_NAME_TTL_S", 0.0)
    assert profile_selectors.own_name_terms(tenant_id=tenant.pk, user_id="u1") == {"kate", "miller"}


def test_an_erased_users_name_leaves_the_process_with_them(tenant) -> None:
    from memoryhub import services as kernel_services

    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Kate", source="api")
    assert profile_selectors.own_name_terms(tenant_id=tenant.pk, user_id="u1") == {"kate"}
    kernel_services.user_erase(tenant=tenant, user_id="u1")
    assert (tenant.pk, "u1") not in profile_selectors._own_names
    assert profile_selectors.own_name_terms(tenant_id=tenant.pk, user_id="u1") == frozenset()


@pytest.mark.parametrize(("query", "kept"), [
    ("What does Li like to eat?", "What does   like to eat?"),
    ("Li's favourite food?", "  favourite food?"),
    ("li", "li"),  # nothing else asked: the name stays
])
def test_only_the_whole_name_leaves_the_query(query: str, kept: str) -> None:
    from rag.selectors import _without_own_name

    assert _without_own_name(query, frozenset({"li"})) == kept
