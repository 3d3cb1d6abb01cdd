"""A client reads a user's sessions and pages back through a session's messages."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def test_paging_back_through_a_session_returns_every_message_once(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", [f"turn {n}" for n in range(7)], start=START)
    url = "/api/v1/users/alice/sessions/s1/messages"
    seen, before = [], None
    while True:
        page = client.get(url, {"limit": 3, **({"before_id": before} if before else {})}).json()
        seen = [m["text"] for m in page["messages"]] + seen
        before = page["next_before_id"]
        if before is None:
            break
    assert seen == [f"turn {n}" for n in range(7)]  # oldest first, no gap, no repeat
    newest = client.get(url, {"limit": 3}).json()
    assert [m["text"] for m in newest["messages"]] == ["turn 4", "turn 5", "turn 6"]


def test_a_page_before_another_sessions_message_is_404_naming_before_id(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["hello"], start=START)
    other = append_messages(tenant, "alice", "s2", ["elsewhere"], start=START).created[0]
    response = client.get("/api/v1/users/alice/sessions/s1/messages", {"before_id": other.pk})
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["before_id"]
    response = client.get("/api/v1/users/alice/sessions/s1/messages", {"limit": 0})
    assert response.status_code == 400 and "limit" in response.json()["error"]["fields"]


def test_a_users_sessions_most_recent_first_and_only_the_callers(client_a, client_b) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "old", ["one", "two"], start=START)
    append_messages(tenant, "alice", "new", ["three"], start=START + timedelta(days=1))
    append_messages(tenant, "bob", "b1", ["not alice's"], start=START)
    other_client, other = client_b
    append_messages(other, "alice", "theirs", ["another tenant's alice"], start=START)
    body = client.get("/api/v1/users/alice/sessions").json()
    assert body["count"] == 2
    assert [(s["session_id"], s["message_count"]) for s in body["sessions"]] == [("new", 1), ("old", 2)]
    assert [s["session_id"] for s in client.get("/api/v1/users/alice/sessions", {"limit": 1, "offset": 1})
            .json()["sessions"]] == ["old"]
    assert other_client.get("/api/v1/users/alice/sessions").json()["count"] == 1
