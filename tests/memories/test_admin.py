"""Review of unsure consolidated memories and editing of typed memories in the admin."""

from __future__ import annotations

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk, MemoryReview


@pytest.fixture
def editor_client(db: None) -> tuple[Client, object]:
    user = get_user_model().objects.create_superuser("editor", "editor@example.com", "pw")
    client = Client()
    client.force_login(user)
    return client, user


def _review(tenant, text: str) -> MemoryReview:
    return MemoryReview.objects.create(tenant=tenant, user_id="anna", conf_uid="neiri", text=text, kind="user",
                                       category="Objectives", importance=0.5, confidence=0.3)


def test_editor_approves_and_rejects_pending_memories_with_an_audit(tenant, editor_client) -> None:
    client, user = editor_client
    keep, drop = _review(tenant, "Neiri wants to learn jazz."), _review(tenant, "Neiri is a toaster.")
    url = "/admin/rag/memoryreview/"
    assert client.get(url).status_code == 200
    client.post(url, {"action": "approve", "_selected_action": [keep.pk]})
    client.post(url, {"action": "reject", "_selected_action": [drop.pk]})
    keep.refresh_from_db()
    drop.refresh_from_db()
    assert (keep.status, keep.reviewer_id, drop.status, drop.reviewer_id) == ("approved", user.pk, "rejected", user.pk)
    assert keep.decided_at and Chunk.objects.get(pk=keep.chunk_id).text == "Neiri wants to learn jazz."
    assert not Chunk.objects.filter(text="Neiri is a toaster.").exists()


def test_editor_edits_kind_importance_and_tags_of_a_memory(tenant, editor_client) -> None:
    client, _ = editor_client
    [memory] = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna's brother plays chess", kind="user", category="KeyFacts", importance=0.5)])
    url = f"/admin/rag/typedmemory/{memory.pk}/change/"
    assert client.get(url).status_code == 200
    response = client.post(url, {"kind": "third_party", "category": "KeyFacts", "importance": "0.8",
                                 "tags": "family,chess"})
    assert response.status_code == 302, response.content.decode()[:2000]
    memory.refresh_from_db()
    assert (memory.kind, memory.importance, memory.tags) == ("third_party", 0.8, ["family", "chess"])
    bad = client.post(url, {"kind": "robot", "category": "KeyFacts", "importance": "2", "tags": ""})
    assert bad.status_code == 200  # the form shows its errors; nothing saved
    memory.refresh_from_db()
    assert memory.kind == "third_party"


def test_review_items_come_from_consolidation_only_and_typed_memories_are_named_right(editor_client) -> None:
    client, _ = editor_client
    assert client.get("/admin/rag/memoryreview/add/").status_code == 403  # one added here had no source: a 500
    assert b"/admin/rag/memoryreview/add/" not in client.get("/admin/rag/memoryreview/").content
    index = client.get("/admin/").content.decode()
    assert "Typed memories" in index and "Typed memorys" not in index


def test_an_edit_in_the_admin_reaches_search_at_once(tenant, editor_client) -> None:
    """The search's in-process chunk store held a memory's kind, category and importance as written:
    after an editor changed them, a filtered search still matched the old values (and the list API
    the new ones)."""
    from rag.selectors import SearchFilters, chunks_search

    client, _ = editor_client
    [memory] = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna loves rock music", kind="user", category="FactsAboutUser", importance=0.7)])

    def found(**filters: object) -> list[tuple[int, str, float]]:
        result = chunks_search(tenant_id=tenant.pk, user_id="anna", query="rock music", k=5,
                               filters=SearchFilters(types=("memory",), **filters))
        return [(item.chunk["id"], item.chunk["category"], item.chunk["importance"]) for item in result.items]

    assert found(kinds=("user",)) == [(memory.pk, "FactsAboutUser", 0.7)]  # the store now holds it
    response = client.post(f"/admin/rag/typedmemory/{memory.pk}/change/", {
        "kind": "self", "category": "SelfBeliefs", "importance": "0.2", "tags": "music"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert found(kinds=("user",)) == []
    assert found(kinds=("self",), categories=("SelfBeliefs",)) == [(memory.pk, "SelfBeliefs", 0.2)]


def test_a_memory_deleted_in_the_admin_is_no_longer_served(tenant, editor_client) -> None:
    """The admin deleted the row directly, without the deletion log: the search's cached indexes
    of the namespace never dropped it, so a memory an editor deleted was still found."""
    from rag.models import ChunkDeletion
    from rag.selectors import SearchFilters, chunks_search

    client, _ = editor_client
    wrong, kept = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna is a toaster who loves rock music", kind="user", category="KeyFacts"),
        MemoryInput(text="Anna plays rock music on the guitar", kind="user", category="KeyFacts")])

    def found() -> set[int]:
        result = chunks_search(tenant_id=tenant.pk, user_id="anna", query="rock music", k=5,
                               filters=SearchFilters(types=("memory",)))
        return {item.chunk["id"] for item in result.items}

    assert found() == {wrong.pk, kept.pk}
    response = client.post(f"/admin/rag/typedmemory/{wrong.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302, response.content.decode()[:2000]
    assert found() == {kept.pk}
    assert ChunkDeletion.objects.filter(chunk_id=wrong.pk).exists()
    response = client.post("/admin/rag/typedmemory/", {"action": "delete_selected", "_selected_action": [kept.pk],
                                                       "post": "yes"})
    assert response.status_code == 302 and found() == set()
