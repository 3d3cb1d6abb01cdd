"""Client-chosen ids (user_id, session_id, conf_uid): what the API accepts is what a URL can address.

Found by a QA trial: "." and ".." were accepted as user ids (a search, a chat, a memory named them), but
every HTTP client resolves them away in a path (/api/v1/users/./profile is /api/v1/users/profile), so
that user's profile, people and erasure were out of reach.
"""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.django_db

DOTS_ONLY = [".", "..", "..."]
STILL_VALID = ["alice", "a.b", ".a", "a.", "..a", "a..", "user:42", "tg@123", "-", "_", "x" * 128]


@pytest.mark.parametrize("user_id", DOTS_ONLY)
@pytest.mark.parametrize("url", ["/api/v1/search", "/api/v1/context"])
def test_a_user_id_of_dots_alone_is_a_400_naming_the_field(client_a, url: str, user_id: str) -> None:
    client, _ = client_a
    response = client.post(url, {"query": "Lisbon", "user_id": user_id}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert list(error["fields"]) == ["user_id"]
    assert "not dots alone" in error["fields"]["user_id"][0], error


@pytest.mark.parametrize("user_id", STILL_VALID)
def test_other_ids_with_dots_stay_valid(client_a, user_id: str) -> None:
    client, _ = client_a
    response = client.post("/api/v1/search", {"query": "Lisbon", "user_id": user_id}, format="json")
    assert response.status_code == 200, response.content


def test_a_path_with_a_user_id_of_dots_alone_stores_nothing(client_a) -> None:
    """A client that sends the path as written (curl --path-as-is) reached the route and stored a user
    no normalised URL reaches again; now no route matches, and the 404 names the parameter."""
    from memoryhub.models import Message

    client, _ = client_a
    body = {"messages": [{"role": "user", "text": "I moved to Lisbon."}]}
    for user_id in ("..", "."):
        response = client.post(f"/api/v1/users/{user_id}/sessions/s1/messages", body, format="json")
        assert response.status_code == 404, response.content
        assert list(response.json()["error"]["fields"]) == ["user_id"]
    assert not Message.objects.exists()
    assert client.post("/api/v1/users/a.b/sessions/s1/messages", body, format="json").status_code == 202


def test_the_schema_pattern_of_a_user_id_is_the_one_enforced(schema, schema_allows) -> None:
    from tests.openapi import schema_body, schema_parameter

    parts = [schema_parameter(schema, "/api/v1/users/{user_id}", "delete", "user_id"),
             schema_parameter(schema, "/api/v1/users/{user_id}/sessions/{session_id}/messages", "post",
                              "session_id"),
             schema_body(schema, "/api/v1/search", "post")["properties"]["user_id"]]
    for part in parts:
        assert not any(schema_allows(part, value) for value in DOTS_ONLY), part
        assert all(schema_allows(part, value) for value in STILL_VALID), part
        assert not schema_allows(part, "x" * 129) and not schema_allows(part, "a b"), part
