"""`POST /api/v1/search` and a fact the user has changed: "where do I live?" found "I live in Boston"
and not "I moved to Seattle last week!" (no shared word), so a chat app building its own prompt from
the results answered Boston. The old turn now says what changed, and the turn that changed it follows."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from rest_framework.test import APIClient

from memoryhub.models import Tenant
from tests.factories import append_messages

OLD = datetime(2026, 9, 8, 19, 0, tzinfo=UTC)
NEW = datetime(2026, 10, 26, 19, 0, tzinfo=UTC)

CASES = {
    "en": ("I live in Boston with my partner.", "I moved to Seattle last week!", "Seattle", "where do I live?",
           "Boston"),
    "ru": ("Я живу в Самаре с мужем.", "Мы переехали в Казань на прошлой неделе.", "Казань", "где я живу?",
           "Самар"),
    "zh": ("我住在上海。", "我搬到杭州了。", "杭州", "我住在哪里？", "上海"),
}
# Talk around the old statement that the question's words find before the turn of the move.
AROUND = {
    "en": ["Do you live near the sea?", "Live music is my thing.", "The winters are long here.",
           "My cat loves the window seat."],
    "ru": ["Там, где я живу, зимы длинные.", "Ты живёшь у моря?", "Я живу ради музыки.", "Мой кот любит подоконник."],
    "zh": ["我住的地方冬天很长。", "你住在海边吗？", "我住的小区很安静。", "我的猫喜欢窗台。"],
}


def _search(client: APIClient, query: str, k: int) -> list[dict]:
    response = client.post("/api/v1/search", {"query": query, "user_id": "u1", "k": k}, format="json")
    assert response.status_code == 200, response.content
    return response.json()["items"]


@pytest.mark.parametrize("lang", sorted(CASES))
def test_a_turn_whose_fact_changed_says_so_and_the_change_follows_it(
        client_a: tuple[APIClient, Tenant], lang: str) -> None:
    client, tenant = client_a
    old, new, now, query, old_word = CASES[lang]
    append_messages(tenant, "u1", "s1", [old, *AROUND[lang]], start=OLD, auto_extract=True)
    append_messages(tenant, "u1", "s2", [new], start=NEW, auto_extract=True)
    items = _search(client, query, 3)
    assert len(items) == 3
    at = next(n for n, item in enumerate(items) if old_word in item["text"])
    assert items[at]["changed_since"] == {"key": "location", "now": now, "said_at": "2026-10-26T19:00:00Z"}
    assert items[at + 1]["text"] == new and items[at + 1]["corrects"] == items[at]["id"]
    assert items[at + 1]["changed_since"] is None
    assert [i["text"] for i in items].count(new) == 1


def test_the_results_stay_within_k_and_an_unchanged_fact_is_left_alone(client_a: tuple[APIClient, Tenant]) -> None:
    client, tenant = client_a
    append_messages(tenant, "u1", "s1", ["I live in Boston with my partner.", "Boston traffic is awful.",
                                         "Boston is lovely in spring."], start=OLD, auto_extract=True)
    append_messages(tenant, "u1", "s2", ["I moved to Seattle last week!"], start=NEW, auto_extract=True)
    assert len(_search(client, "where do I live in Boston?", 3)) == 3
    items = _search(client, "where do I live?", 2)
    # The correction takes the place of the last item that is neither.
    assert [i["text"] for i in items] == ["I live in Boston with my partner.", "I moved to Seattle last week!"]
    assert items[1]["corrects"] == items[0]["id"]
    # A user who never changed the fact: no mark, no extra turn.
    append_messages(tenant, "u2", "s1", ["I live in Boston with my partner."], start=OLD, auto_extract=True)
    response = client.post("/api/v1/search", {"query": "where do I live?", "user_id": "u2", "k": 5}, format="json")
    assert [(i["changed_since"], i["corrects"]) for i in response.json()["items"]] == [(None, None)]
