"""A namespace records whose vectors it holds; a search never compares a query vector with another
embedder's vectors, and `manage.py reindex` brings every vector of a user (turns, documents, typed
memories, insights, people) into the configured embedder's space."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from io import StringIO

import numpy as np
import pytest
from django.core.management import call_command

from memoryhub import embeddings
from people.ops import PersonDraft
from people.services import person_create_from_draft
from people.services.vectors import people_embed_pending
from rag import chunk_cache, services
from rag.memories.services import MemoryInput, memories_create
from rag.models import MIXED_VECTOR_SPACE, Chunk, Namespace, user_namespace
from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


class ShiftedEmbedder(embeddings.HashingEmbedder):
    """Another vector space of the same width: the hashing vectors rotated by one dimension, so a
    vector of one space compared with the other's scores as noise."""

    version = 99

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return np.roll(super().embed(texts), 1, axis=1)


def _space(tenant, user_id: str = "u1") -> str:
    return Namespace.objects.get(tenant=tenant, name=user_namespace(user_id)).vector_space


def _vector_hits(tenant, query: str) -> list[str]:
    return [i.chunk["text"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=5,
                                                   mode="vector", include_tenant_documents=False).items]


def test_a_foreign_space_is_searched_by_words_until_reindex_re_embeds_every_vector(tenant, monkeypatch) -> None:
    hashing = embeddings.get_embedder()
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", ("assistant", "Lovely!")],
                    start=datetime(2024, 1, 1, tzinfo=UTC))
    [memory] = memories_create(tenant=tenant, user_id="u1", conf_uid="c1",
                               items=[MemoryInput(text="The user is allergic to peanuts.", kind="user")])
    person = person_create_from_draft(tenant_id=tenant.pk, user_id="u1",
                                      draft=PersonDraft(display_name="Anna Petrova", bio="my sister, a vet"))
    people_embed_pending(tenant_id=tenant.pk, user_id="u1")
    assert _space(tenant) == hashing.name
    assert _vector_hits(tenant, "allergic to peanuts")[0] == "The user is allergic to peanuts."  # fills the store

    other = ShiftedEmbedder(hashing.dimensions)
    monkeypatch.setitem(embeddings._cache, "embedder", other)
    # Vectors of another embedder are never compared: the vector side finds nothing, words still do.
    assert _vector_hits(tenant, "allergic to peanuts") == []
    hybrid = chunks_search(tenant_id=tenant.pk, user_id="u1", query="allergic to peanuts", k=3)
    assert hybrid.items[0].chunk["text"] == "The user is allergic to peanuts."
    # And the answer says so (it was only in the server's log).
    assert hybrid.skipped == {"vector": "reindex_needed"}

    # A write of the new embedder's vectors into the old space's namespace leaves it mixed.
    append_messages(tenant, "u1", "s2", ["Miso learned to open the fridge."], start=datetime(2024, 2, 1, tzinfo=UTC))
    assert _space(tenant) == MIXED_VECTOR_SPACE
    assert _vector_hits(tenant, "open the fridge") == []

    stale = chunk_cache.cache().get((tenant.pk, user_namespace("u1")))
    assert stale is not None
    out = StringIO()
    call_command("reindex", "--tenant", tenant.name, stdout=out, stderr=StringIO())
    # Another process still holds the store of the old vectors: it must rebuild it, not catch up.
    chunk_cache.cache().put((tenant.pk, user_namespace("u1")), stale)
    assert "1 people re-embedded" in out.getvalue()
    assert _space(tenant) == other.name
    # The typed memory kept its id (reviews refer to it) and got the new space's vector and terms.
    memory_after = Chunk.objects.get(pk=memory.pk)
    assert np.allclose(np.asarray(memory_after.embedding), other.embed_one(memory.text), atol=1e-5)
    assert sorted(memory_after.terms) == sorted(memory.terms)
    [top] = chunks_search(tenant_id=tenant.pk, user_id="u1", query="allergic to peanuts", k=1, mode="vector",
                          include_tenant_documents=False).items
    expected = float(other.embed_one("allergic to peanuts") @ other.embed_one(memory.text))
    assert top.chunk["id"] == memory.pk and expected > 0.3
    assert top.components["vector"] == pytest.approx(expected, abs=1e-3)
    assert _vector_hits(tenant, "open the fridge")[0] == "Miso learned to open the fridge."
    assert chunks_search(tenant_id=tenant.pk, user_id="u1", query="allergic to peanuts", k=3).skipped == {}
    person.refresh_from_db()
    assert np.allclose(np.asarray(person.embedding), other.embed_one(person.embedding_text()), atol=1e-5)


def test_a_namespace_bulk_loaded_without_a_space_is_trusted_and_an_emptied_one_takes_the_writers(
        tenant, monkeypatch) -> None:
    append_messages(tenant, "u1", "s1", ["We planted tomatoes in the garden."], start=datetime(2024, 1, 1, tzinfo=UTC))
    Namespace.objects.filter(tenant=tenant, name=user_namespace("u1")).update(vector_space="")
    assert _vector_hits(tenant, "tomatoes garden") == ["We planted tomatoes in the garden."]

    other = ShiftedEmbedder(embeddings.get_embedder().dimensions)
    Namespace.objects.filter(tenant=tenant, name=user_namespace("u1")).update(vector_space="hashing-v1")
    monkeypatch.setitem(embeddings._cache, "embedder", other)
    assert _vector_hits(tenant, "tomatoes garden") == []
    services.chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(tenant=tenant))
    append_messages(tenant, "u1", "s2", ["The tomatoes are ripe."], start=datetime(2024, 8, 1, tzinfo=UTC))
    assert _space(tenant) == other.name
    assert _vector_hits(tenant, "ripe tomatoes") == ["The tomatoes are ripe."]


# --- reindex at the same time as other writers ----------------------------------------------------
@pytest.fixture
def reindex_paused(monkeypatch):
    """Runs `reindex` of u1 in a thread that stops after embedding (outside any transaction, as it
    must) until the test lets it go on; yields (release, outcome)."""
    from tests.rag.test_write_path import in_thread

    reached, go_on = threading.Event(), threading.Event()
    real_prepare = services.chunks_prepare
    reindexer: dict[str, threading.Thread] = {}

    def prepare(drafts, **kwargs):
        prepared = real_prepare(drafts, **kwargs)
        if threading.current_thread() is reindexer.get("thread") and drafts and drafts[0].type == Chunk.Type.MEMORY:
            reached.set()  # the typed memories' new vectors are ready: the last thing before the write
            assert go_on.wait(20)
        return prepared

    monkeypatch.setattr(services, "chunks_prepare", prepare)

    def start(tenant):
        thread, out = in_thread(lambda: services.reindex(tenant=tenant, user_ids=["u1"],
                                                         include_tenant_documents=False))
        reindexer["thread"] = thread
        assert reached.wait(20)
        return thread, out

    yield start, go_on
    go_on.set()


def _seed_u1(tenant):
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", ("assistant", "Lovely!")],
                    start=datetime(2024, 1, 1, tzinfo=UTC))
    memories_create(tenant=tenant, user_id="u1", conf_uid="c1",
                    items=[MemoryInput(text="The user is allergic to peanuts.", kind="user")])


@pytest.mark.django_db(transaction=True)
def test_a_memory_written_while_reindex_embeds_is_kept_and_counted(tenant, reindex_paused) -> None:
    start, go_on = reindex_paused
    _seed_u1(tenant)
    thread, out = start(tenant)
    # No lock is held while the reindex embeds: another writer of the namespace goes through at once.
    began = time.monotonic()
    [late] = memories_create(tenant=tenant, user_id="u1", conf_uid="c1",
                             items=[MemoryInput(text="The user started learning the cello.", kind="user")])
    assert time.monotonic() - began < 2
    go_on.set()
    thread.join(30)
    assert "error" not in out, out
    namespace = Namespace.objects.get(tenant=tenant, name=user_namespace("u1"))
    assert namespace.chunk_count == Chunk.objects.filter(tenant=tenant, namespace=namespace.name).count() == 4
    assert namespace.vector_space == embeddings.get_embedder().name
    assert Chunk.objects.filter(pk=late.pk).exists()
    assert _vector_hits(tenant, "learning the cello")[0] == "The user started learning the cello."


@pytest.mark.django_db(transaction=True)
def test_an_erasure_while_reindex_embeds_leaves_nothing(tenant, reindex_paused) -> None:
    from memoryhub import services as kernel

    start, go_on = reindex_paused
    _seed_u1(tenant)
    thread, out = start(tenant)
    receipt = kernel.user_erase(tenant=tenant, user_id="u1")
    assert receipt["deleted"]["chunks"] == 3
    go_on.set()
    thread.join(30)
    assert "error" not in out, out
    assert not Chunk.objects.filter(tenant=tenant).exists()
    assert not Namespace.objects.filter(tenant=tenant).exists()
    assert chunks_search(tenant_id=tenant.pk, user_id="u1", query="allergic to peanuts", k=5).items == []


@pytest.mark.django_db(transaction=True)
def test_reindex_with_the_new_embedder_failing_changes_nothing_and_a_retry_completes(tenant, settings,
                                                                                      llm_server) -> None:
    from memoryhub.llm import LLMError
    from tests.llm_server import HTTPError

    _seed_u1(tenant)
    before = dict(Chunk.objects.filter(tenant=tenant).values_list("pk", "text"))
    row = Namespace.objects.get(tenant=tenant, name=user_namespace("u1"))
    settings.EMBEDDING_PROVIDER = "openai"  # the provider changed; its endpoint is failing
    settings.EMBEDDING_BASE_URL = llm_server.base_url
    settings.EMBEDDING_API_KEY = "test"
    settings.LLM_MAX_RETRIES = 0
    llm_server.script_embeddings(HTTPError(500))
    with pytest.raises(LLMError):
        services.reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    # Nothing was written: the embedding comes before the transaction.
    assert dict(Chunk.objects.filter(tenant=tenant).values_list("pk", "text")) == before
    assert Namespace.objects.get(tenant=tenant, name=user_namespace("u1")) == row
    assert _space(tenant) == row.vector_space != embeddings.get_embedder().name
    services.reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    assert _space(tenant) == embeddings.get_embedder().name
    memory = Chunk.objects.get(tenant=tenant, type=Chunk.Type.MEMORY)
    assert memory.pk in before  # kept its id


def test_the_search_api_says_a_namespace_needs_a_reindex(client_a, monkeypatch) -> None:
    client, tenant = client_a
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso."], start=datetime(2024, 1, 1, tzinfo=UTC))
    body = {"query": "cat named Miso", "user_id": "u1", "k": 3}
    assert client.post("/api/v1/search", body, format="json").json()["skipped_steps"] == []
    monkeypatch.setitem(embeddings._cache, "embedder", ShiftedEmbedder(embeddings.get_embedder().dimensions))
    hybrid = client.post("/api/v1/search", body, format="json").json()
    assert hybrid["items"][0]["text"] == "I adopted a cat named Miso."  # by its words
    assert hybrid["skipped_steps"] == [{"step": "vector", "reason": "reindex_needed"}]
    vector = client.post("/api/v1/search", {**body, "mode": "vector"}, format="json").json()
    assert vector["items"] == [] and vector["skipped_steps"] == [{"step": "vector", "reason": "reindex_needed"}]
    assert client.post("/api/v1/search", {**body, "mode": "bm25"}, format="json").json()["skipped_steps"] == []
