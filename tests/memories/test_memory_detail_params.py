"""`/api/v1/characters/{conf_uid}/memories/{id}` takes the query parameters the list takes the same way: an
unknown one is a 400 naming it, and `user_id` holds: another user's memory is a 404."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from rag.models import Chunk
from tests.openapi import schema_parameter

# A user's memory in each language: the filter is on whose memory it is, whatever it says.
MEMORIES = [
    pytest.param("Alex loves rock music", id="en"),
    pytest.param("Алекс любит рок", id="ru"),
    pytest.param("亚历克斯喜欢摇滚乐", id="zh"),
]
DETAIL = "/api/v1/characters/{conf_uid}/memories/{memory_id}"


def write(client: APIClient, text: str, user_id: str = "alex") -> str:
    response = client.post("/api/v1/characters/neiri/memories",
                           {"user_id": user_id, "text": text, "kind": "user", "category": "FactsAboutUser"},
                           format="json")
    assert response.status_code == 201, response.content
    return response.json()["id"]


@pytest.mark.parametrize("text", MEMORIES)
def test_another_users_memory_is_not_found(client_a, text: str) -> None:
    client, _ = client_a
    url = f"/api/v1/characters/neiri/memories/{write(client, text)}"
    assert client.get(url, {"user_id": "alex"}).json()["text"] == text
    refused = client.get(url, {"user_id": "ivan"})
    assert refused.status_code == 404
    assert list(refused.json()["error"]["fields"]) == ["memory_id"] and "'ivan'" in refused.json()["error"]["message"]
    # As the list: ivan has no memories of neiri.
    assert client.get("/api/v1/characters/neiri/memories", {"user_id": "ivan"}).json()["count"] == 0


def test_another_users_memory_is_neither_corrected_nor_forgotten(client_a) -> None:
    client, _ = client_a
    memory_id = write(client, "Alex loves rock music")
    url = f"/api/v1/characters/neiri/memories/{memory_id}"
    assert client.patch(f"{url}?user_id=ivan", {"importance": 0.1}, format="json").status_code == 404
    assert client.delete(f"{url}?user_id=ivan").status_code == 404
    chunk = Chunk.objects.get(memory_uid=memory_id)
    assert chunk.importance != 0.1
    assert client.patch(f"{url}?user_id=alex", {"importance": 0.1}, format="json").json()["importance"] == 0.1
    assert client.delete(f"{url}?user_id=alex").status_code == 204
    assert not Chunk.objects.filter(memory_uid=memory_id).exists()


def test_an_unknown_parameter_is_a_400_naming_it(client_a) -> None:
    client, _ = client_a
    url = f"/api/v1/characters/neiri/memories/{write(client, '亚历克斯喜欢摇滚乐')}"
    for method in ("get", "delete"):
        refused = getattr(client, method)(f"{url}?usr_id=alex")
        assert refused.status_code == 400, method
        assert list(refused.json()["error"]["fields"]) == ["usr_id"]
    bad = client.get(url, {"user_id": "../alex"})
    assert bad.status_code == 400 and "user_id" in bad.json()["error"]["fields"]
    assert Chunk.objects.filter(type=Chunk.Type.MEMORY).count() == 1  # the refused delete forgot nothing


def test_the_schema_documents_user_id_on_the_detail(schema: dict) -> None:
    for method in ("get", "patch", "delete"):
        assert schema_parameter(schema, DETAIL, method, "user_id")["type"] == "string"
