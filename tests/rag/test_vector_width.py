"""The vector columns follow EMBEDDING_DIMENSIONS: a new database is created at that width, a database
holding vectors is altered by `manage.py embedding_resize` (which re-embeds them), and until then the
service says what is wrong (503 naming the command, /healthz unavailable) instead of a 500 per request."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from django.db import connection
from django.test import override_settings

from memoryhub import embeddings
from people.models import Person
from people.ops import PersonDraft
from people.services import person_create_from_draft
from people.services.vectors import people_embed_pending
from rag import vector_width
from rag.memories.services import MemoryInput, memories_create
from rag.models import Namespace, user_namespace
from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]


def _stored(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", ("assistant", "Lovely!")],
                    start=datetime(2024, 1, 1, tzinfo=UTC))
    memories_create(tenant=tenant, user_id="u1", conf_uid="c1",
                    items=[MemoryInput(text="The user is allergic to peanuts.", kind="user")])
    person_create_from_draft(tenant_id=tenant.pk, user_id="u1",
                             draft=PersonDraft(display_name="Anna Petrova", bio="my sister, a vet"))
    people_embed_pending(tenant_id=tenant.pk, user_id="u1")


def _vector_hits(tenant, query: str) -> list[str]:
    return [i.chunk["text"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=5,
                                                   mode="vector", include_tenant_documents=False).items]


def _person_width(tenant) -> int | None:
    with connection.cursor() as cursor:
        cursor.execute("SELECT vector_dims(embedding) FROM people_person WHERE tenant_id = %s", [tenant.pk])
        return cursor.fetchone()[0]


def test_the_embedder_names_its_width_when_it_is_not_the_migrations(settings) -> None:
    assert embeddings.get_embedder().name == "hashing-v1"
    with override_settings(EMBEDDING_DIMENSIONS=512):
        assert embeddings.get_embedder().name == "hashing-v1/512d"
        assert embeddings.get_embedder().embed_one("a cat").shape == (512,)


def test_columns_of_another_width_take_and_find_vectors_of_it(tenant) -> None:
    with override_settings(EMBEDDING_DIMENSIONS=512):
        report = vector_width.vectors_resize()
        assert report.altered == ["rag_chunk", "people_person"]
        assert vector_width.hnsw_index_width() is None  # dropped; built again once vectors are in
        assert vector_width.hnsw_index_create() is True
        assert vector_width.column_widths() == {"rag_chunk": 512, "people_person": 512}
        assert vector_width.hnsw_index_width() == 512
        _stored(tenant)
        assert _vector_hits(tenant, "allergic to peanuts")[0] == "The user is allergic to peanuts."
        assert _person_width(tenant) == 512
        assert vector_width.vectors_resize().altered == []  # already that width: nothing done


def test_resize_if_empty_alters_a_new_database_only(tenant) -> None:
    with override_settings(EMBEDDING_DIMENSIONS=512):
        assert vector_width.resize_if_empty() is True
        assert vector_width.column_widths() == {"rag_chunk": 512, "people_person": 512}
        assert vector_width.hnsw_index_width() == 512
        _stored(tenant)
    with override_settings(EMBEDDING_DIMENSIONS=256):
        assert vector_width.resize_if_empty() is False  # vectors are stored: the command decides, not migrate
        assert vector_width.column_widths() == {"rag_chunk": 512, "people_person": 512}


def test_embedding_resize_re_embeds_what_was_stored_at_the_old_width(client_a, client_b) -> None:
    client, tenant = client_a
    _, other = client_b
    _stored(tenant)
    append_messages(tenant, "alice", "s1", ["My dog is called Pixel."], start=datetime(2024, 1, 1, tzinfo=UTC))
    append_messages(other, "bob", "s1", ["My parrot is called Kiwi."], start=datetime(2024, 1, 1, tzinfo=UTC))
    with override_settings(EMBEDDING_DIMENSIONS=256):
        # Before: every vector fails. The answer names the command, not "Internal server error".
        response = client.post("/api/v1/search", {"query": "dog", "user_id": "alice"}, format="json")
        assert response.status_code == 503, response.content
        assert response.json()["error"]["code"] == "misconfigured"
        assert "embedding_resize" in response.json()["error"]["message"]
        health = client.get("/healthz")
        assert health.status_code == 503
        assert health.json()["checks"]["database"]["error"] == "vector_width"

        out = StringIO()
        call_command("embedding_resize", "--yes", stdout=out, stderr=StringIO())
        assert "altered rag_chunk, people_person" in out.getvalue()
        assert "built the HNSW index at halfvec(256)" in out.getvalue()
        assert vector_width.column_widths() == {"rag_chunk": 256, "people_person": 256}
        assert vector_width.hnsw_index_width() == 256
        # Every namespace was re-embedded at the new width, every person too.
        spaces = set(Namespace.objects.filter(tenant__in=[tenant, other]).values_list("vector_space", flat=True))
        assert spaces == {"hashing-v1/256d"}
        assert _vector_hits(tenant, "allergic to peanuts")[0] == "The user is allergic to peanuts."
        assert _person_width(tenant) == 256
        response = client.post("/api/v1/search", {"query": "dog", "user_id": "alice"}, format="json")
        assert response.status_code == 200, response.content
        assert response.json()["items"][0]["text"] == "My dog is called Pixel."
        assert response.json()["skipped_steps"] == []
        assert client.get("/healthz").status_code == 200

        again = StringIO()
        call_command("embedding_resize", "--yes", stdout=again, stderr=StringIO())
        assert "nothing to do" in again.getvalue()


def test_without_reindex_the_old_vectors_are_never_compared(tenant, monkeypatch) -> None:
    _stored(tenant)
    with override_settings(EMBEDDING_DIMENSIONS=512):
        out = StringIO()
        call_command("embedding_resize", "--yes", "--no-reindex", stdout=out, stderr=StringIO())
        assert "run `manage.py reindex`" in out.getvalue()
        # The old vectors, zero-padded, are another embedder's: the words still find, the vectors do not.
        assert _vector_hits(tenant, "allergic to peanuts") == []
        hybrid = chunks_search(tenant_id=tenant.pk, user_id="u1", query="allergic to peanuts", k=3)
        assert hybrid.items[0].chunk["text"] == "The user is allergic to peanuts."
        assert hybrid.skipped == {"vector": "reindex_needed"}
        assert Person.objects.get(tenant=tenant).embedding is None
        # Run again without --yes, the re-embedding is asked for too (it re-embedded everything unasked).
        monkeypatch.setattr("builtins.input", lambda prompt: "n")
        with pytest.raises(CommandError, match="nothing changed"):
            call_command("embedding_resize", stdout=StringIO(), stderr=StringIO())
        assert _vector_hits(tenant, "allergic to peanuts") == []
        call_command("reindex", stdout=StringIO(), stderr=StringIO())
        assert _vector_hits(tenant, "allergic to peanuts")[0] == "The user is allergic to peanuts."
        assert Namespace.objects.get(tenant=tenant, name=user_namespace("u1")).vector_space == "hashing-v1/512d"


def test_the_command_changes_nothing_unless_confirmed(tenant, monkeypatch) -> None:
    _stored(tenant)

    def no_terminal(prompt: str) -> str:
        raise EOFError

    monkeypatch.setattr("builtins.input", no_terminal)
    with override_settings(EMBEDDING_DIMENSIONS=512), pytest.raises(CommandError, match="nothing changed"):
        call_command("embedding_resize", stdout=StringIO(), stderr=StringIO())
    assert vector_width.column_widths() == {"rag_chunk": 384, "people_person": 384}
    assert vector_width.hnsw_index_width() == 384


def test_a_width_pgvector_cannot_index_is_refused(tenant) -> None:
    with pytest.raises(ValueError, match="1 to 4000"):
        vector_width.vectors_resize(4096)
    assert vector_width.column_widths() == {"rag_chunk": 384, "people_person": 384}


def test_the_migrations_do_not_depend_on_the_configured_width() -> None:
    # The models declare the migrations' width: a deployment at another one has no "changes not yet
    # reflected in a migration", and its `migrate` creates what the migrations say, then resizes.
    env = {**os.environ, "EMBEDDING_DIMENSIONS": "1024"}
    done = subprocess.run([sys.executable, "manage.py", "makemigrations", "--check", "--dry-run"], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "No changes detected" in done.stdout


def test_a_worker_at_another_width_stops_instead_of_failing_every_job(tenant, monkeypatch) -> None:
    from memoryhub import celery

    exits: list[int] = []
    monkeypatch.setattr(celery.os, "_exit", exits.append)
    celery._vector_width_checked()
    assert exits == []
    with override_settings(EMBEDDING_DIMENSIONS=512):
        celery._vector_width_checked()
    assert exits == [78]
