"""The operators' read-only views of rag in the admin."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.admin.models import LogEntry

from rag import services
from rag.models import Chunk, Document, Namespace, user_namespace
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


@pytest.fixture
def indexed(tenant) -> Chunk:
    append_messages(tenant, "u1", "s1", ["We adopted a grey cat called Miso."],
                    start=datetime(2024, 3, 1, tzinfo=UTC))
    services.document_ingest(tenant=tenant, user_id=None, document=services.DocumentInput(
        text="Cats need a vet check every year.", title="Pet care"))
    return Chunk.objects.get(tenant=tenant, namespace=user_namespace("u1"))


def test_namespaces_documents_and_chunks_are_listed(admin_client, indexed) -> None:
    page = admin_client.get("/admin/rag/namespace/").content.decode()
    assert user_namespace("u1") in page and "tenant" in page
    assert "Pet care" in admin_client.get("/admin/rag/document/").content.decode()
    chunks = admin_client.get("/admin/rag/chunk/", {"q": user_namespace("u1")}).content.decode()
    assert "We adopted a grey cat called Miso." in chunks and "Cats need a vet check" not in chunks


def test_a_chunk_is_shown_without_its_vector_and_cannot_be_changed(admin_client, indexed) -> None:
    response = admin_client.get(f"/admin/rag/chunk/{indexed.pk}/change/")
    page = response.content.decode()
    assert response.status_code == 200 and "We adopted a grey cat called Miso." in page
    assert "embedding" not in page.lower() and 'type="submit" value="Save"' not in page
    assert admin_client.post(f"/admin/rag/chunk/{indexed.pk}/delete/", {"post": "yes"}).status_code == 403
    assert admin_client.get("/admin/rag/namespace/add/").status_code == 403
    assert Chunk.objects.filter(pk=indexed.pk).exists()
    assert Namespace.objects.get(name=user_namespace("u1")).chunk_count == 1


def test_a_failed_document_is_listed_with_its_progress_and_can_be_indexed_again(admin_client, tenant, settings,
                                                                                monkeypatch) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 100
    monkeypatch.setattr(services, "document_index_enqueue", lambda *, document_id: True)  # the job fails later
    document, _, _ = services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="## Part\n" + "The ferry leaves at dawn. " * 20, title="Ferries"))
    Document.objects.filter(pk=document.pk).update(status="failed", attempts=2, chunks_total=3, chunks_done=1)
    page = admin_client.get("/admin/rag/document/", {"status__exact": "failed"}).content.decode()
    assert "Ferries" in page and "1 / 3" in page

    monkeypatch.undo()
    response = admin_client.post("/admin/rag/document/", {"action": "index_again", "_selected_action": [document.pk]})
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == "ready" and document.chunks_done == document.chunks_total
    assert LogEntry.objects.filter(object_id=str(document.pk), change_message__contains="was failed").exists()
