"""The retrieval API's contract: search, context, documents; auth, isolation, validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from rag.models import Chunk, Document
from tests.factories import append_messages
from tests.openapi import schema_body

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def test_search_returns_items_with_component_scores_and_ranks(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring.", "My dog is called Pixel."], start=START)
    response = client.post("/api/v1/search", {"query": "where did I move", "user_id": "alice", "k": 1},
                           format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["mode"] == "hybrid" and body["fusion"] == "weighted" and body["took_ms"] > 0
    [item] = body["items"]
    assert item["text"] == "I moved to Lisbon last spring."
    # "soft": how well its words answer the question's in meaning, among the fused top (0-1).
    assert set(item["components"]) == {"bm25", "vector", "soft"} and item["ranks"]["bm25"] == 1
    assert 0.0 <= item["components"]["soft"] <= 1.0
    assert item["type"] == "dialog" and item["source_id"].startswith("message:")


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"user_id": "alice"}, "query"),
        ({"query": "x"}, "user_id"),
        ({"query": "x", "user_id": "bad id"}, "user_id"),
        ({"query": "x", "user_id": "a", "k": 0}, "k"),
        ({"query": "x", "user_id": "a", "k": 101}, "k"),
        ({"query": "x", "user_id": "a", "mode": "magic"}, "mode"),
        ({"query": "x", "user_id": "a", "weights": {"bm25": 1}}, "weights"),
        ({"query": "x", "user_id": "a", "filters": {"types": ["poem"]}}, "filters"),
        ({"query": "x", "user_id": "a", "filters": {"created_after": "2024-02-01T00:00:00Z",
                                                     "created_before": "2024-01-01T00:00:00Z"}}, "filters"),
    ],
)
def test_bad_search_input_is_400_naming_the_field(client_a, body: dict, field: str) -> None:
    client, _ = client_a
    response = client.post("/api/v1/search", body, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]


def test_search_needs_a_key_and_sees_only_its_tenant(client_a, client_b) -> None:
    from rest_framework.test import APIClient

    a, tenant_a = client_a
    b, _ = client_b
    append_messages(tenant_a, "alice", "s1", ["The boat is moored at pier 7."], start=START)
    assert APIClient().post("/api/v1/search", {"query": "boat", "user_id": "alice"}, format="json").status_code == 401
    assert b.post("/api/v1/search", {"query": "boat pier", "user_id": "alice"}, format="json").json()["items"] == []
    assert len(a.post("/api/v1/search", {"query": "boat pier", "user_id": "alice"}, format="json").json()["items"]) == 1


def test_documents_are_chunked_by_heading_and_replaced_by_external_id(client_a) -> None:
    client, tenant = client_a
    text = "# Returns\nItems can be returned within 30 days.\n\n# Shipping\nWe ship to the EU in 3 days."
    response = client.post("/api/v1/documents", {"text": text, "title": "FAQ", "external_id": "faq"}, format="json")
    assert response.status_code == 201
    assert response.json()["chunks"] == 2 and response.json()["namespace"] == "tenant"
    # A tenant-wide document is found from any user's search.
    found = client.post("/api/v1/search", {"query": "how long to return items", "user_id": "anyone"}, format="json")
    assert found.json()["items"][0]["text"] == "FAQ / Returns\nItems can be returned within 30 days."
    client.post("/api/v1/documents", {"text": "# Returns\nReturns within 14 days.", "title": "FAQ",
                                      "external_id": "faq"}, format="json")
    assert Document.objects.filter(tenant=tenant).count() == 1
    assert list(Chunk.objects.filter(tenant=tenant).values_list("text", flat=True)) == [
        "FAQ / Returns\nReturns within 14 days."]
    user_doc = client.post("/api/v1/users/alice/documents", {"text": "Alice's packing list: tent, stove."},
                           format="json")
    assert user_doc.status_code == 201 and user_doc.json()["namespace"] == "user:alice"
    empty = client.post("/api/v1/documents", {"text": "   "}, format="json")
    assert empty.status_code == 400 and "text" in empty.json()["error"]["fields"]


def test_a_document_can_be_sent_as_a_file(client_a, schema) -> None:
    """`curl -F file=@policy.md` is how a client holding a file sends it; it got a 415."""
    client, tenant = client_a
    policy = SimpleUploadedFile("Политика возврата.md", "# Возврат\nВозврат в течение 14 дней.\n\n# Доставка\n"
                                "По Москве 1-2 дня.".encode())
    response = client.post("/api/v1/documents", {"file": policy, "tags": ["faq", "ru"], "external_id": "policy"},
                           format="multipart")
    assert response.status_code == 201, response.content
    assert response.json()["chunks"] == 2
    document = Document.objects.get(tenant=tenant)
    assert (document.title, document.format, document.external_id) == ("Политика возврата", "markdown", "policy")
    found = client.post("/api/v1/search", {"query": "сколько дней на возврат", "user_id": "anyone"}, format="json")
    assert found.json()["items"][0]["text"] == "Политика возврата / Возврат\nВозврат в течение 14 дней."
    assert found.json()["items"][0]["tags"] == ["faq", "ru"]

    # A .txt file is plain text ("#" taken literally); a title given wins over the file's name.
    note = SimpleUploadedFile("notes.txt", "\ufeff# 1 rule: 带伞。".encode())
    response = client.post("/api/v1/users/alice/documents", {"file": note, "title": "Rules"}, format="multipart")
    assert response.status_code == 201, response.content
    document = Document.objects.get(pk=response.json()["id"])
    assert (document.title, document.format, document.text) == ("Rules", "text", "# 1 rule: 带伞。")

    for upload, fields in [
        ({"file": SimpleUploadedFile("latin1.md", "Café\nnaïve".encode("latin-1"))}, {"file"}),
        ({"file": SimpleUploadedFile("empty.md", b"  \n")}, {"file"}),
        ({"title": "no file"}, {"file"}),
        ({"file": SimpleUploadedFile("a.md", b"x"), "colour": "red"}, {"colour"}),
        ({"file": SimpleUploadedFile("a.md", b"x"), "importance": "2"}, {"importance"}),
        # Two files: the second was kept and the first dropped without a word.
        ({"file": [SimpleUploadedFile("a.md", b"First."), SimpleUploadedFile("b.md", b"Second.")]}, {"file"}),
    ]:
        response = client.post("/api/v1/documents", upload, format="multipart")
        assert response.status_code == 400, response.content
        assert set(response.json()["error"]["fields"]) == fields, response.content
    bad = client.post("/api/v1/documents", {"file": SimpleUploadedFile("x.md", b"ok\n\xff")}, format="multipart")
    assert bad.json()["error"]["fields"]["file"] == ["Not UTF-8 text (line 2)."]
    assert Document.objects.filter(tenant=tenant).count() == 2

    body = schema["paths"]["/api/v1/documents"]["post"]["requestBody"]["content"]
    assert set(body) == {"application/json", "multipart/form-data"}
    upload_schema = schema_body(schema, "/api/v1/documents", "post", "multipart/form-data")
    assert upload_schema["required"] == ["file"] and upload_schema["additionalProperties"] is False


def test_a_document_with_too_many_tags_is_refused_naming_the_field(client_a, schema) -> None:
    client, tenant = client_a
    tags = [f"t{i}" for i in range(65)]
    response = client.post("/api/v1/users/alice/documents", {"text": "Note.", "tags": tags}, format="json")
    assert response.status_code == 400 and "tags" in response.json()["error"]["fields"]
    assert not Document.objects.filter(tenant=tenant).exists()
    assert client.post("/api/v1/users/alice/documents", {"text": "Note.", "tags": tags[:64]},
                       format="json").status_code == 201
    assert schema["components"]["schemas"]["DocumentInputRequest"]["properties"]["tags"]["maxItems"] == 64


def test_headings_without_text_of_their_own_are_kept_and_found(client_a) -> None:
    """An outline, or a document of headings only, was stored `ready` with 0 chunks: unsearchable."""
    client, _ = client_a
    only = client.post("/api/v1/users/alice/documents", {"text": "# Wi-Fi name: Heron-5G"}, format="json")
    assert only.status_code == 201 and only.json()["chunks"] == 1
    outline = "# Trip\n## Day 1: Lisbon\n## Day 2: Porto\n### Morning\nThe tile museum.\n## Day 3: Salamanca"
    body = client.post("/api/v1/users/alice/documents", {"text": outline, "title": "Plan"}, format="json").json()
    assert body["chunks"] == 3  # Day 1, Day 2 / Morning with its text, Day 3; a parent heading is no piece
    texts = sorted(Chunk.objects.filter(source_id=f"document:{body['id']}").values_list("text", flat=True))
    assert texts == ["Plan / Trip / Day 1: Lisbon", "Plan / Trip / Day 2: Porto / Morning\nThe tile museum.",
                     "Plan / Trip / Day 3: Salamanca"]
    for query, expected in (("Salamanca", "Day 3: Salamanca"), ("heron wifi", "Heron-5G")):
        found = client.post("/api/v1/search", {"query": query, "user_id": "alice", "domain": "document"},
                            format="json").json()
        assert expected in found["items"][0]["text"]


def test_a_deleted_document_is_gone_from_search_and_context_at_once(client_a, client_b) -> None:
    client, tenant = client_a
    faq = client.post("/api/v1/documents", {"text": "# Returns\nZebra socks cannot be exchanged.", "title": "FAQ"},
                      format="json").json()
    note = client.post("/api/v1/users/alice/documents", {"text": "Alice stores zebra socks in the attic."},
                       format="json").json()

    def texts(kind: str) -> str:
        if kind == "search":
            body = client.post("/api/v1/search", {"query": "zebra socks", "user_id": "alice", "domain": "document"},
                               format="json").json()
            return " | ".join(item["text"] for item in body["items"])
        context = client.post("/api/v1/context", {"query": "zebra socks", "user_id": "alice"}, format="json")
        return context.json()["text"]

    # Searched first, so the process's cached indexes hold both documents.
    assert "exchanged" in texts("search") and "exchanged" in texts("context") and "attic" in texts("search")

    other, _ = client_b
    assert other.delete(f"/api/v1/documents/{faq['id']}").status_code == 404  # another tenant's
    assert "exchanged" in texts("search")

    response = client.delete(f"/api/v1/documents/{faq['id']}")
    assert response.status_code == 200, response.content
    assert response.json() == {"id": faq["id"], "deleted": {"documents": 1, "chunks": 1}}
    assert "exchanged" not in texts("search") and "exchanged" not in texts("context")
    assert "attic" in texts("search")  # the other document stays
    assert client.get(faq["status_url"]).status_code == 404
    again = client.delete(f"/api/v1/documents/{faq['id']}")
    assert again.status_code == 404 and again.json()["error"]["code"] == "not_found"
    assert not Chunk.objects.filter(tenant=tenant, source_id=f"document:{faq['id']}").exists()

    assert client.delete(note["status_url"]).json()["deleted"] == {"documents": 1, "chunks": 1}
    assert "attic" not in texts("search") and not Document.objects.filter(tenant=tenant).exists()


def test_context_packs_recent_turns_and_memories_into_the_budget(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "old", ["I am allergic to peanuts.", "My brother Tom lives in Leeds."],
                    start=START)
    append_messages(tenant, "alice", "now", ["Can you suggest a snack?"], start=datetime(2024, 6, 1, tzinfo=UTC))
    response = client.post("/api/v1/context", {"user_id": "alice", "query": "snack suggestion allergies peanuts",
                                               "session_id": "now", "budget_tokens": 400}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    blocks = {b["name"]: b for b in body["blocks"]}
    assert [i["text"].split("] ", 1)[1] for i in blocks["recent_turns"]["items"]] == ["user: Can you suggest a snack?"]
    memories = [i["text"] for i in blocks["memories"]["items"]]
    assert memories[0].endswith("user: I am allergic to peanuts.")
    assert blocks["memories"]["items"][0]["at"] == "2024-05-01T08:00:00Z"  # as the serializers write times
    assert blocks["recent_turns"]["items"][0]["at"] == "2024-06-01T00:00:00Z"  # every block's items say when
    # The current turn is already in recent_turns, so it is not repeated as a memory.
    assert not any("suggest a snack" in m for m in memories)
    assert any(c["reason"] == "in_recent_turns" for c in blocks["memories"]["cut"])
    assert body["used_tokens"] == sum(b["tokens"] for b in body["blocks"]) <= 400
    assert "<memories>" in body["text"] and "<recent_turns>" in body["text"]


def test_context_reports_what_the_budget_cut(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", [f"Fact number {i}: the lighthouse keeper paints boats." for i in range(30)],
                    start=START)
    body = client.post("/api/v1/context", {"user_id": "alice", "query": "lighthouse keeper boats",
                                           "budget_tokens": 60}, format="json").json()
    memories = next(b for b in body["blocks"] if b["name"] == "memories")
    assert body["used_tokens"] <= 60 and memories["items"]
    assert any(c["reason"] == "budget" for c in memories["cut"])


def test_context_references_name_the_rows_shown_or_cut(client_a) -> None:
    from profiles import services as profile_services
    from profiles.models import UserProfile

    client, tenant = client_a
    values = (("name", "Alice"), ("location", "Lisbon, in the old town near the river"),
              ("occupation", "marine biologist at the national institute of the sea, studying coral reefs"),
              ("hobbies", "sailing, diving and reading about the history of the ocean"))
    facts = [profile_services.fact_upsert(tenant=tenant, user_id="alice", key=key, value=value, confidence=1.0,
                                          source=UserProfile.Source.API).fact for key, value in values]
    append_messages(tenant, "alice", "s1", ["Hello there."], start=START)
    body = client.post("/api/v1/context", {"user_id": "alice", "query": "who am I", "budget_tokens": 50},
                       format="json").json()
    profile = next(b for b in body["blocks"] if b["name"] == "profile")
    refs = [i["ref"] for i in profile["items"]] + [c["ref"] for c in profile["cut"]]
    assert sorted(refs) == sorted(f"fact:{f.pk}" for f in facts)  # ids, not positions
    assert profile["cut"]  # the budget left some out, and says which
