"""The rag write path: no lock held while embedding, bounded chunks, large documents as jobs.

The embedder is pointed at the loopback OpenAI-compatible server, whose replies can be slowed
down, so "while a job is embedding" is a real HTTP call in flight. Threads run with their own
database connections, so the concurrency tests use real transactions."""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.db import connection, connections
from django.utils import timezone

from memoryhub import services as kernel
from memoryhub.models import ArchivalJob
from rag import services
from rag.chunking import split_bounded, split_document
from rag.models import Chunk, Document, Namespace, user_namespace
from tests.factories import append_messages
from tests.llm_server import Delay, HTTPError, OpenAICompatServer

EMBEDDING_DELAY = 2.0


def in_thread(fn: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    out: dict[str, Any] = {}

    def target() -> None:
        try:
            out["result"] = fn()
        except BaseException as exc:  # reported by the test, not lost in the thread
            out["error"] = exc
        finally:
            connections.close_all()

    thread = threading.Thread(target=target)
    thread.start()
    return thread, out


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> None:
    """Archival jobs stay queued after commit (a busy broker) until the test runs them itself."""
    monkeypatch.setattr(kernel, "archival_job_enqueue", lambda *, job_id, **kwargs: True)


def wait_for(condition: Callable[[], bool], seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and not condition():
        time.sleep(0.02)
    return condition()


def advisory_locks_held(keys: list[tuple[str, int]]) -> int:
    """How many of these advisory locks (`hashtextextended(text, seed)` keys) someone holds."""
    held = 0
    with connection.cursor() as cursor:
        for text, seed in keys:
            cursor.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 1"
                " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                " AND ((classid::bigint << 32) | objid::bigint) = hashtextextended(%s, %s)", [text, seed])
            held += cursor.fetchone()[0]
    return held


# --- no lock while embedding ------------------------------------------------------------------
@pytest.mark.django_db(transaction=True)
def test_an_index_job_holds_no_lock_while_it_embeds_so_other_writers_of_the_namespace_go_on(
    tenant: Any, remote_embedder: OpenAICompatServer, queued: None
) -> None:
    result = kernel.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=[
        kernel.IncomingMessage(role="user", text=f"turn {i} about the lighthouse") for i in range(5)])
    remote_embedder.script_embeddings(Delay(EMBEDDING_DELAY))  # the job's first embedding call hangs
    thread, out = in_thread(lambda: kernel.archival_job_run(job_id=result.job.pk))
    assert wait_for(lambda: len(remote_embedder.embedding_requests) >= 1), "the job never embedded"
    time.sleep(0.2)  # the call is in flight

    namespace_lock = (f"ns:{tenant.pk}:{user_namespace('u1')}", 1)
    user_lock = (f"archival:{tenant.pk}:u1", 0)
    assert advisory_locks_held([namespace_lock, user_lock]) == 0

    # A document upload to the same namespace (it embeds, then takes the namespace lock).
    started = time.monotonic()
    services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="The lighthouse keeper's log.", title="Log"))
    waited = time.monotonic() - started
    assert waited < EMBEDDING_DELAY / 2, f"a writer of the namespace waited {waited:.2f} s for an embedding call"
    assert thread.is_alive()  # the job was still embedding all along

    thread.join(30)
    assert "error" not in out, out
    assert out["result"].status == ArchivalJob.Status.DONE
    assert Chunk.objects.filter(tenant=tenant, type="dialog").count() == 5
    assert Namespace.objects.get(tenant=tenant, name=user_namespace("u1")).chunk_count == 6


@pytest.mark.django_db(transaction=True)
def test_erasure_while_an_index_job_embeds_is_prompt_and_leaves_no_chunk(
    tenant: Any, remote_embedder: OpenAICompatServer, queued: None
) -> None:
    result = kernel.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=[
        kernel.IncomingMessage(role="user", text="my locker code is 4711")])
    remote_embedder.script_embeddings(Delay(EMBEDDING_DELAY))
    thread, out = in_thread(lambda: kernel.archival_job_run(job_id=result.job.pk))
    assert wait_for(lambda: len(remote_embedder.embedding_requests) >= 1)
    started = time.monotonic()
    receipt = kernel.user_erase(tenant=tenant, user_id="u1")
    assert time.monotonic() - started < EMBEDDING_DELAY / 2
    thread.join(30)
    assert "error" not in out, out
    assert receipt["deleted"]["messages"] == 1
    assert not Chunk.objects.filter(tenant=tenant).exists()
    assert not Namespace.objects.filter(tenant=tenant).exists()


@pytest.mark.django_db(transaction=True)
def test_approving_a_typed_memory_embeds_before_it_locks_the_review_item(
    tenant: Any, remote_embedder: OpenAICompatServer
) -> None:
    """While an approval's embedding call is in flight, another editor can decide the same item at
    once (no row lock is held); the approval then finds it decided and writes nothing."""
    from rag.memories.services import memory_review_approve, memory_review_reject
    from rag.models import MemoryReview

    review = MemoryReview.objects.create(tenant=tenant, user_id="u1", conf_uid="default", text="Anna wants a dog.",
                                         kind="user", category="Objectives", confidence=0.3)
    remote_embedder.script_embeddings(Delay(EMBEDDING_DELAY))
    thread, out = in_thread(lambda: memory_review_approve(review=review, reviewer=None, actor_label="editor:a"))
    assert wait_for(lambda: len(remote_embedder.embedding_requests) >= 1), "the approval never embedded"
    time.sleep(0.2)  # the call is in flight
    started = time.monotonic()
    assert memory_review_reject(review=review, reviewer=None, actor_label="editor:b", reason="not a goal")
    waited = time.monotonic() - started
    assert waited < EMBEDDING_DELAY / 2, f"the other decision waited {waited:.2f} s for an embedding call"
    assert thread.is_alive()
    thread.join(30)
    assert "error" not in out, out
    assert out["result"] is None
    review.refresh_from_db()
    assert (review.status, review.decided_by, review.chunk_id) == ("rejected", "editor:b", None)
    assert not Chunk.objects.filter(tenant=tenant, type="memory").exists()


@pytest.mark.django_db
def test_a_retried_index_job_does_not_index_twice(tenant: Any) -> None:
    """A worker killed after the insert committed but before the step was recorded: the re-run
    prepares the same turns again (they were not indexed when it read), and apply, checking under
    the lock, inserts none of them."""
    result = append_messages(tenant, "u1", "s1", ["one", "two", "three"], run_job=False)
    job = ArchivalJob.objects.select_related("tenant", "conversation").get(pk=result.job.pk)
    messages = list(result.created)
    for m in messages:
        m.conversation = job.conversation
    prepared = services.dialog_index_prepare(job, messages)
    assert services.dialog_index_apply(job, prepared) == {"chunks": 3}
    assert services.dialog_index_apply(job, prepared) == {"chunks": 0}
    kernel.archival_job_run(job_id=job.pk)
    assert Chunk.objects.filter(tenant=tenant).count() == 3


# --- bounded chunks -----------------------------------------------------------------------------
def test_a_run_without_whitespace_is_cut_into_bounded_pieces() -> None:
    text = "x" * 1_300_000
    pieces = split_bounded(text, 4000)
    assert len(pieces) == 325 and max(map(len, pieces)) == 4000
    assert "".join(pieces) == text
    # Boundaries are preferred to hard cuts: paragraph, then sentence, then space.
    assert split_bounded("aaa bbb. ccc ddd\n\neee fff", 18) == ["aaa bbb. ccc ddd", "eee fff"]
    assert split_bounded("aaa bbb. ccc ddd eee", 14) == ["aaa bbb.", "ccc ddd eee"]
    pieces = split_document("# Title\n" + "word " * 50_000, max_chars=1000)
    assert len(pieces) > 200 and max(len(p.text) for p in pieces) <= 1000


@pytest.mark.django_db
def test_a_megabyte_of_one_word_becomes_many_bounded_chunks(tenant: Any, settings: Any) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 2_000_000  # the synchronous path; the job path is tested below
    document, chunks, _ = services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text="z" * 1_300_000, title="Blob"))
    lengths = list(Chunk.objects.filter(tenant=tenant).values_list("text", flat=True))
    assert chunks == len(lengths) >= 1_300_000 // settings.CHUNK_MAX_CHARS
    assert max(map(len, lengths)) <= settings.CHUNK_MAX_CHARS
    assert document.status == Document.Status.READY and document.chunks_done == chunks


@pytest.mark.django_db
def test_an_overlong_dialog_turn_becomes_several_bounded_chunks(tenant: Any, settings: Any) -> None:
    settings.CHUNK_MAX_CHARS = 500
    long_turn = " ".join(f"sentence number {i} about the harbour." for i in range(60))  # ~2,200 chars
    append_messages(tenant, "u1", "s1", ["x" * 900, "short question?", long_turn])
    chunks = list(Chunk.objects.filter(tenant=tenant).order_by("id"))
    assert max(len(c.text) for c in chunks) <= 500
    by_source: dict[str, list[Chunk]] = {}
    for chunk in chunks:
        by_source.setdefault(chunk.source_id, []).append(chunk)
    assert sorted(len(parts) for parts in by_source.values()) == [1, 2, 5]
    parts = max(by_source.values(), key=len)
    assert [c.meta["part"] for c in parts] == [0, 1, 2, 3, 4]
    assert "sentence number 59" in parts[-1].text


@pytest.mark.django_db
def test_an_embedding_endpoint_away_is_a_503_for_a_write_and_a_search_by_words_for_a_read(
    client_a: Any, remote_embedder: OpenAICompatServer
) -> None:
    """A document needs its vectors: away, the upload is a 503 to retry, nothing half-stored. A
    hybrid search or a context answered 503 too; they now answer by words alone and say so."""
    client, tenant = client_a
    remote_embedder.script_embeddings(HTTPError(503))
    upload = client.post("/api/v1/users/alice/documents", {"text": "Alice keeps bees."}, format="json")
    assert upload.status_code == 503, upload.content
    assert upload.json()["error"]["code"] == "upstream_unavailable" and int(upload["Retry-After"]) > 0
    assert not Document.objects.filter(tenant=tenant).exists()  # nothing half-stored: retry it whole
    assert client.post("/api/v1/users/alice/documents", {"text": "Alice keeps bees."}, format="json").status_code == 201

    remote_embedder.script_embeddings(*[HTTPError(503)] * 50)  # every embedding of the reads below fails
    found = client.post("/api/v1/search", {"query": "bees", "user_id": "alice"}, format="json")
    assert found.status_code == 200, found.content
    body = found.json()
    assert [i["text"] for i in body["items"]] == ["Alice keeps bees."]
    assert body["skipped_steps"] == [{"step": "vector", "reason": "embedder_unavailable"}]
    assert "vector" not in body["items"][0]["components"]
    context = client.post("/api/v1/context", {"query": "bees", "user_id": "alice"}, format="json")
    assert context.status_code == 200, context.content
    assert "Alice keeps bees." in context.json()["text"]
    # A vector search has nothing to answer with.
    vector = client.post("/api/v1/search", {"query": "bees", "user_id": "alice", "mode": "vector"}, format="json")
    assert vector.status_code == 503 and vector.json()["error"]["code"] == "upstream_unavailable"


# --- large documents as jobs --------------------------------------------------------------------
BIG_TEXT = "\n\n".join(f"## Chapter {i}\nThe ferry to island {i} leaves at dawn. " * 3 for i in range(60))


@pytest.mark.django_db
def test_a_large_document_is_accepted_at_once_and_indexed_by_a_job(
    client_a: Any, client_b: Any, settings: Any, django_capture_on_commit_callbacks: Any
) -> None:
    client, tenant = client_a
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        response = client.post("/api/v1/users/alice/documents", {"text": BIG_TEXT, "title": "Ferries"},
                               format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "pending" and body["chunks"] is None
    assert body["status_url"] == f"/api/v1/documents/{body['id']}"
    pending = client.get(body["status_url"]).json()
    assert (pending["status"], pending["chunks_done"], pending["chunks_total"]) == ("pending", 0, 0)
    assert pending["chars"] == len(BIG_TEXT.strip())  # DRF trims the edges
    assert not Chunk.objects.filter(tenant=tenant).exists()

    for callback in callbacks:  # the job, in-process as in the embedded mode
        callback()
    ready = client.get(body["status_url"]).json()
    assert ready["status"] == "ready" and ready["chunks_done"] == ready["chunks_total"] > 1
    assert Chunk.objects.filter(tenant=tenant, source_id=f"document:{body['id']}").count() == ready["chunks_total"]
    hits = client.post("/api/v1/search", {"user_id": "alice", "query": "ferry to island 42"}, format="json").json()
    assert "island 42" in hits["items"][0]["text"]

    # Another tenant cannot see it; a small document keeps the synchronous answer.
    other, _ = client_b
    assert other.get(body["status_url"]).status_code == 404
    small = client.post("/api/v1/users/alice/documents", {"text": "Short note."}, format="json")
    assert small.status_code == 201 and small.json()["status"] == "ready" and small.json()["chunks"] == 1
    assert client.get("/api/v1/documents/999999").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_in_the_embedded_mode_a_large_document_is_indexed_after_the_202_and_its_progress_shows(
    client_a: Any, settings: Any, remote_embedder: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch,
    web_process_beat: Any,
) -> None:
    """Without a broker the job ran inside the POST: the 202 came only once the whole document was
    embedded, still saying `pending`, and no poll could ever see it `indexing`."""
    client, _ = client_a
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    monkeypatch.setattr(services, "DOCUMENT_INDEX_BATCH", 20)
    remote_embedder.script_embeddings(None, Delay(1.0), Delay(1.0))  # the job's later rounds are slow

    started = time.monotonic()
    response = client.post("/api/v1/users/alice/documents", {"text": BIG_TEXT, "title": "Ferries"}, format="json")
    took = time.monotonic() - started
    assert response.status_code == 202, response.content
    assert took < 1.0, f"the 202 waited {took:.2f} s for the job"
    assert Document.objects.get(pk=response.json()["id"]).status != Document.Status.READY
    assert not remote_embedder.embedding_requests  # nothing was embedded in the request

    url = response.json()["status_url"]
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = client.get(url).json()
        seen.append((state["status"], state["chunks_done"], state["chunks_total"]))
        if state["status"] == "ready":
            break
        time.sleep(0.25)
    assert seen[-1][0] == "ready" and seen[-1][1] == seen[-1][2] > 40, seen
    assert any(status == "indexing" and 0 < done < total for status, done, total in seen), seen
    hits = client.post("/api/v1/search", {"user_id": "alice", "query": "ferry to island 42"}, format="json").json()
    assert "island 42" in hits["items"][0]["text"]


@pytest.mark.django_db
def test_a_document_left_pending_or_failed_is_picked_up_by_the_sweep(
    tenant: Any, settings: Any, remote_embedder: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    # The worker died before it ran the job: nothing ever enqueued it again but the sweep.
    document, chunks, _ = services.document_ingest(tenant=tenant, user_id=None, document=services.DocumentInput(
        text=BIG_TEXT))
    assert chunks is None
    Document.objects.filter(pk=document.pk).update(enqueued_at=timezone.now() - timedelta(hours=1))

    remote_embedder.script_embeddings(HTTPError(500))  # the endpoint is away for the first try
    assert services.documents_sweep() == 1
    failed = Document.objects.get(pk=document.pk)
    assert failed.status == Document.Status.FAILED and failed.attempts == 1 and "500" in failed.error
    assert failed.next_attempt_at > timezone.now()
    assert services.documents_sweep() == 0  # not due yet

    Document.objects.filter(pk=document.pk).update(next_attempt_at=timezone.now())
    assert services.documents_sweep() == 1
    ready = Document.objects.get(pk=document.pk)
    assert ready.status == Document.Status.READY and ready.error == ""
    assert Chunk.objects.filter(tenant=tenant, source_id=f"document:{document.pk}").count() == ready.chunks_total
    # Done: the sweep leaves it alone, and a duplicate delivery indexes nothing twice.
    assert services.documents_sweep() == 0
    services.document_index(document_id=document.pk)
    assert Chunk.objects.filter(tenant=tenant).count() == ready.chunks_total


@pytest.mark.django_db
def test_a_document_job_killed_midway_resumes_without_doubling(tenant: Any, settings: Any,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    monkeypatch.setattr(services, "DOCUMENT_INDEX_BATCH", 10)
    document, _, _ = services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text=BIG_TEXT))
    real_prepare = services.chunks_prepare
    calls = [0]

    def dies_on_third_round(drafts: Any) -> Any:
        calls[0] += 1
        if calls[0] == 3:
            raise RuntimeError("worker killed")
        return real_prepare(drafts)

    monkeypatch.setattr(services, "chunks_prepare", dies_on_third_round)
    services.document_index(document_id=document.pk)
    midway = Document.objects.get(pk=document.pk)
    assert midway.status == Document.Status.FAILED and midway.chunks_done == 20 < midway.chunks_total
    services.document_index(document_id=document.pk)
    done = Document.objects.get(pk=document.pk)
    parts = list(Chunk.objects.filter(tenant=tenant).values_list("meta__part", flat=True))
    assert done.status == Document.Status.READY and sorted(parts) == list(range(done.chunks_total))


@pytest.mark.django_db(transaction=True)
def test_erasure_while_a_document_job_embeds_removes_the_document_and_leaves_no_chunk(
    tenant: Any, settings: Any, remote_embedder: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    monkeypatch.setattr(services, "DOCUMENT_INDEX_BATCH", 20)
    monkeypatch.setattr(services, "document_index_enqueue", lambda *, document_id: True)  # a busy broker
    document, _, _ = services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text=BIG_TEXT))
    # The first round goes through; the job is embedding its second round when the erasure comes.
    remote_embedder.script_embeddings(None, Delay(EMBEDDING_DELAY))
    thread, out = in_thread(lambda: services.document_index(document_id=document.pk))
    assert wait_for(lambda: len(remote_embedder.embedding_requests) >= 2)
    assert Document.objects.get(pk=document.pk).chunks_done == 20  # some chunks are in
    started = time.monotonic()
    receipt = kernel.user_erase(tenant=tenant, user_id="u1")
    assert time.monotonic() - started < EMBEDDING_DELAY / 2
    thread.join(30)
    assert "error" not in out, out
    assert out["result"] is None  # the job saw the document gone and wrote nothing more
    assert receipt["deleted"]["documents"] == 1 and receipt["deleted"]["chunks"] == 20
    assert not Chunk.objects.filter(tenant=tenant).exists()
    assert not Document.objects.filter(tenant=tenant).exists()
    assert not Namespace.objects.filter(tenant=tenant).exists()


@pytest.mark.django_db(transaction=True)
def test_deleting_a_document_while_its_job_embeds_stops_the_job_and_leaves_no_chunk(
    tenant: Any, settings: Any, remote_embedder: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    monkeypatch.setattr(services, "DOCUMENT_INDEX_BATCH", 20)
    monkeypatch.setattr(services, "document_index_enqueue", lambda *, document_id: True)  # a busy broker
    document, _, _ = services.document_ingest(tenant=tenant, user_id=None, document=services.DocumentInput(
        text=BIG_TEXT))
    remote_embedder.script_embeddings(None, Delay(EMBEDDING_DELAY))
    thread, out = in_thread(lambda: services.document_index(document_id=document.pk))
    assert wait_for(lambda: len(remote_embedder.embedding_requests) >= 2)
    assert Document.objects.get(pk=document.pk).chunks_done == 20
    started = time.monotonic()
    deleted = services.document_delete(tenant=tenant, document_id=document.pk)
    assert time.monotonic() - started < EMBEDDING_DELAY / 2  # no wait for the job's embedding call
    thread.join(30)
    assert "error" not in out, out
    assert out["result"] is None  # the job saw its row gone and wrote nothing more
    assert deleted == {"documents": 1, "chunks": 20}
    assert not Chunk.objects.filter(tenant=tenant).exists() and not Document.objects.exists()
    assert Namespace.objects.get(tenant=tenant, name="tenant").chunk_count == 0


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("size", ["small", "large"])
def test_two_uploads_of_one_external_id_at_once_leave_one_document(
    tenant: Any, settings: Any, monkeypatch: pytest.MonkeyPatch, size: str
) -> None:
    """A client retrying an upload after a timeout: both requests looked for the id before either
    committed, found nothing to replace, and both documents stayed searchable."""
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    monkeypatch.setattr(services, "document_index_enqueue", lambda *, document_id: True)
    real_replace = services._document_replace
    both_looked = threading.Barrier(2)

    def replace_then_meet(*args: Any) -> None:
        real_replace(*args)
        # Without a lock both uploads get here before either commits; with it the second waits
        # before it looks, and the first goes on alone once the wait times out.
        with contextlib.suppress(threading.BrokenBarrierError):
            both_looked.wait(timeout=1.0)

    monkeypatch.setattr(services, "_document_replace", replace_then_meet)
    text = BIG_TEXT if size == "large" else "The gate code changes every week."
    runs = [in_thread(lambda n=n: services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text=f"Version {n}. {text}", external_id="gate"))) for n in range(2)]
    for thread, out in runs:
        thread.join(30)
        assert "error" not in out, out
    [kept] = Document.objects.filter(tenant=tenant, external_id="gate")
    assert set(Chunk.objects.filter(tenant=tenant).values_list("source_id", flat=True)) <= {f"document:{kept.pk}"}


@pytest.mark.django_db
def test_reindex_leaves_a_document_being_indexed_to_its_job_and_doubles_nothing(tenant: Any, settings: Any) -> None:
    settings.DOCUMENT_SYNC_MAX_CHARS = 1000
    append_messages(tenant, "u1", "s1", ["I keep bees.", "How many hives?"])
    document, _, _ = services.document_ingest(tenant=tenant, user_id="u1", document=services.DocumentInput(
        text=BIG_TEXT))
    services.reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    assert not Chunk.objects.filter(tenant=tenant, type="document").exists()  # not ready: its job's work
    services.document_index(document_id=document.pk)
    total = Document.objects.get(pk=document.pk).chunks_total
    for _ in range(2):
        services.reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
        sources = list(Chunk.objects.filter(tenant=tenant).values_list("source_id", flat=True))
        assert len(sources) == total + 2
        assert Namespace.objects.get(tenant=tenant, name=user_namespace("u1")).chunk_count == total + 2


@pytest.mark.django_db
def test_a_document_over_the_size_limit_is_refused_naming_the_field(client_a: Any) -> None:
    client, _ = client_a
    response = client.post("/api/v1/documents", {"text": "y" * 2_000_001}, format="json")
    assert response.status_code == 400
    assert "text" in response.json()["error"]["fields"]
    assert not Document.objects.exists()


# --- the chunk write itself (one binary COPY) ----------------------------------------------------
@pytest.mark.django_db
def test_chunks_written_by_copy_read_back_as_written(tenant) -> None:
    import uuid

    import numpy as np

    uid = uuid.uuid4()
    expires = timezone.now() + timedelta(days=3)
    drafts = [
        services.ChunkDraft(type="dialog", text="Anna: I moved to Lisbon 🙂 — «ёлка» 我们", source_id="message:1",
                            search_prefix="Anna", context_text="Bob: where do you live?", user_id="anna",
                            session_id="s1", role="user", speaker="Anna", importance=0.7, tags=["move", "città"],
                            meta={"message_id": 1, "nested": {"ü": [1, 2.5, None]}}, expires_at=expires),
        services.ChunkDraft(type="memory", text="Anna loves Muse.", source_id=f"memory:{uid.hex}", user_id="anna",
                            kind="user", memory_uid=uid, category="KeyFacts", conf_uid="neiri", history_uid="s1",
                            emotion="joy", context_window="2024-05"),
    ]
    prepared = services.chunks_prepare(drafts)
    written = services.chunks_insert(tenant=tenant, namespace=user_namespace("anna"), prepared=prepared)

    assert [c.pk for c in written] == sorted(c.pk for c in written)
    for chunk, draft, terms, vector in zip(written, drafts, prepared.terms, prepared.embeddings, strict=True):
        stored = Chunk.objects.get(pk=chunk.pk)
        for name in ("type", "text", "source_id", "user_id", "session_id", "role", "speaker", "kind", "importance",
                     "tags", "meta", "expires_at", "memory_uid", "category", "conf_uid", "history_uid", "emotion",
                     "context_window"):
            assert getattr(stored, name) == getattr(draft, name), name
        assert stored.terms == terms and stored.tokens > 0 and stored.namespace == "user:anna"
        assert stored.last_seen_at is None and not stored.in_hnsw and stored.tenant_id == tenant.pk
        assert np.allclose(np.asarray(stored.embedding), vector, atol=1e-6)
    state = Namespace.objects.get(tenant=tenant, name="user:anna")
    assert (state.chunk_count, state.last_chunk_id) == (2, written[-1].pk)
    # Searchable like any other chunk, by words and by vector.
    from rag.selectors import chunks_search

    found = chunks_search(tenant_id=tenant.pk, user_id="anna", query="Lisbon", k=5, include_tenant_documents=False)
    assert found.items and found.items[0].chunk["id"] == written[0].pk


@pytest.mark.django_db
def test_an_index_step_inserts_nothing_for_turns_indexed_meanwhile(tenant) -> None:
    result = append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", "She is grey."], run_job=False)
    job = ArchivalJob.objects.select_related("tenant", "conversation").get(pk=result.job.pk)
    messages = list(result.created)
    prepared = services.dialog_index_prepare(job, messages)
    services.dialog_index_messages(job, messages[:1])  # a re-index wrote the first turn meanwhile
    assert services.dialog_index_apply(job, prepared) == {"chunks": 1}
    assert sorted(Chunk.objects.filter(tenant=tenant).values_list("source_id", flat=True)) == \
        sorted(f"message:{m.pk}" for m in messages)


@pytest.mark.django_db
def test_a_stored_batch_costs_twenty_four_queries(tenant, django_assert_num_queries,
                                                 django_capture_on_commit_callbacks, web_process_beat) -> None:
    """Intake and its index job, run in-process at commit, for a session that already exists (the
    COPY of the chunks is not a query Django counts), in a web process of the embedded mode: the
    turns' reranker vectors go to its background thread. It was 34, then 23; the 24th is the user's
    write lock that intake now takes (an erasure racing a batch failed at its commit without it).
    Pinned, so a query added back on the write path of every batch fails here."""
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso."], run_job=True)
    batch = [kernel.IncomingMessage(role="user", text=f"Turn {i} about Miso.") for i in range(20)]
    with django_assert_num_queries(24), django_capture_on_commit_callbacks(execute=True):
        result = kernel.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=batch)
    assert ArchivalJob.objects.get(pk=result.job.pk).status == ArchivalJob.Status.DONE
    assert Chunk.objects.filter(tenant=tenant).count() == 21
