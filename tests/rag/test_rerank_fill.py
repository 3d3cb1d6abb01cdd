"""The rerankers' vectors of a conversation turn come after its index job commits (rag.services.chunks_rerank_fill):
a turn is stored and searchable at once, and the client's messages do not wait 12-46 ms of model time a turn.

Real models (MiniLM for English, E5 for Chinese and Russian), real database; the concurrency tests run in real
transactions with threads on their own connections. The fill's model call is wrapped only to act at the moment it
runs (an erasure, a rescan, a second runner), and to see which thread ran it."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from django.db import transaction

from memoryhub import deferred
from memoryhub import services as kernel
from memoryhub.embeddings import english_rerank_vectors, rerank_vectors
from memoryhub.models import ArchivalJob
from rag import services
from rag.models import Chunk
from rag.selectors import chunks_search
from tests.celery_worker import UNREACHABLE_BROKER, celery_worker, use_broker
from tests.factories import make_tenant
from tests.rag.test_write_path import in_thread, wait_for

EN = ["I adopted a cat named Miso last spring.", "We drove up to the lake and the water was freezing.",
      "Thanks!"]
ZH = "我上周末去杭州看了西湖。"


def store(tenant: Any, user_id: str, texts: list[str], session_id: str = "s1") -> None:
    """Intake and its index job, as a worker runs them, and nothing after."""
    result = kernel.messages_append(tenant=tenant, user_id=user_id, session_id=session_id,
                                    messages=[kernel.IncomingMessage(role="user", text=t) for t in texts])
    kernel.archival_job_run(job_id=result.job.pk)


@pytest.fixture
def queued(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fills stay queued after the index job's commit (a busy broker) until the test runs them itself."""
    monkeypatch.setattr(services, "chunks_rerank_fill_enqueue", lambda *, tenant_id: True)


def dialog(tenant: Any) -> list[Chunk]:
    return list(Chunk.objects.filter(tenant=tenant, type="dialog").order_by("id"))


def wrap_rerank(monkeypatch: pytest.MonkeyPatch, before: Callable[[], None]) -> list[str]:
    """Run `before` each time the fill is about to compute vectors; returns the names of the threads that did."""
    real = services._rerank_vectors
    threads: list[str] = []

    def wrapped(drafts: Any, *, english: bool) -> Any:
        threads.append(threading.current_thread().name)
        before()
        return real(drafts, english=english)

    monkeypatch.setattr(services, "_rerank_vectors", wrapped)
    return threads


@pytest.mark.django_db
def test_a_turn_is_searchable_before_its_reranker_vectors_and_gets_them_from_the_fill(tenant) -> None:
    store(tenant, "u1", [*EN, ZH])
    chunks = dialog(tenant)
    assert [c.rerank_pending for c in chunks] == [True] * 4
    assert all(c.english_rerank_embedding is None and c.rerank_embedding is None for c in chunks)
    found = chunks_search(tenant_id=tenant.pk, user_id="u1", query="What is the name of my cat?", k=3,
                          include_tenant_documents=False)
    assert found.items[0].chunk["text"] == EN[0]

    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 4
    chunks = dialog(tenant)
    assert not any(c.rerank_pending for c in chunks)
    english, chinese = english_rerank_vectors(EN), rerank_vectors([ZH])
    for chunk, vector in zip(chunks[:3], english, strict=True):  # each model for its own language's turns
        np.testing.assert_allclose(chunk.english_rerank_embedding, vector, atol=1e-5)
        assert chunk.rerank_embedding is None
    np.testing.assert_allclose(chunks[3].rerank_embedding, chinese[0], atol=1e-5)
    assert chunks[3].english_rerank_embedding is None
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 0


@pytest.mark.django_db
def test_with_the_rerankers_off_no_turn_is_left_pending(tenant, settings) -> None:
    settings.ENGLISH_RERANK = "off"
    store(tenant, "u1", [EN[0], ZH])
    assert [c.rerank_pending for c in dialog(tenant)] == [False, True]  # E5 is still on for Chinese
    settings.SEMANTIC_RERANK = "off"  # turned off before the fill ran: the turn is settled without vectors
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 1
    chunk = dialog(tenant)[1]
    assert not chunk.rerank_pending and chunk.rerank_embedding is None


@pytest.mark.django_db
def test_the_fill_leaves_other_tenants_alone_and_the_sweep_finds_every_tenant(tenant) -> None:
    other = make_tenant("tenant-b")[0]
    store(tenant, "u1", EN[:1])
    store(other, "u1", EN[1:2])
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 1
    assert dialog(other)[0].rerank_pending
    # A process that died with its fill queued: the beat's sweep hands every tenant's pending turns on.
    assert services.chunks_rerank_sweep() == 1
    assert not dialog(other)[0].rerank_pending and dialog(other)[0].english_rerank_embedding is not None
    assert services.chunks_rerank_sweep() == 0


@pytest.mark.django_db
def test_a_fill_out_of_time_hands_the_rest_on(tenant, monkeypatch) -> None:
    monkeypatch.setattr(services, "RERANK_FILL_BATCH", 1)
    store(tenant, "u1", EN)
    enqueued: list[int] = []
    monkeypatch.setattr(services, "chunks_rerank_fill_enqueue", lambda *, tenant_id: enqueued.append(tenant_id))
    assert services.chunks_rerank_fill(tenant_id=tenant.pk, seconds=0) == 0
    assert enqueued == [tenant.pk] and all(c.rerank_pending for c in dialog(tenant))
    monkeypatch.undo()
    assert services.chunks_rerank_fill(tenant_id=tenant.pk, seconds=None) == 3  # one batch of 1 at a time


@pytest.mark.django_db
def test_a_model_failure_leaves_the_turns_pending_for_the_sweep(tenant, monkeypatch) -> None:
    store(tenant, "u1", EN[:2])

    def broken() -> None:
        raise MemoryError("the model could not be loaded")

    wrap_rerank(monkeypatch, broken)
    with pytest.raises(MemoryError):
        services.chunks_rerank_fill(tenant_id=tenant.pk)
    assert all(c.rerank_pending for c in dialog(tenant))
    monkeypatch.undo()
    assert services.chunks_rerank_sweep() == 1
    assert not any(c.rerank_pending for c in dialog(tenant))


@pytest.mark.django_db
def test_reindex_settles_pending_turns(tenant) -> None:
    store(tenant, "u1", EN[:2])
    services.reindex(tenant=tenant, user_ids=["u1"], include_tenant_documents=False)
    chunks = dialog(tenant)
    assert not any(c.rerank_pending for c in chunks)
    assert all(c.english_rerank_embedding is not None for c in chunks)


@pytest.mark.django_db(transaction=True)
def test_an_erasure_while_the_fill_computes_leaves_nothing(tenant, monkeypatch, queued) -> None:
    store(tenant, "u1", EN[:2])
    store(tenant, "u2", EN[2:])
    erased: list[dict[str, Any]] = []

    def erase_once() -> None:
        if not erased:
            erased.append(kernel.user_erase(tenant=tenant, user_id="u1"))

    wrap_rerank(monkeypatch, erase_once)
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 1  # u2's turn; u1's were gone when it wrote
    assert erased[0]["deleted"]["messages"] == 2
    assert not Chunk.objects.filter(tenant=tenant, user_id="u1").exists()
    assert [c.user_id for c in dialog(tenant)] == ["u2"] and not dialog(tenant)[0].rerank_pending


@pytest.mark.django_db(transaction=True)
def test_a_text_masked_while_the_fill_computes_gets_the_new_texts_vector(tenant, monkeypatch, queued) -> None:
    """A sensitive rescan rewrites a turn's text while its vector is being computed: the vector of the old text
    is not written; the turn stays pending and the next batch computes the text it has now."""
    store(tenant, "u1", ["My card is 4111 1111 1111 1111, keep it safe."])
    masked = "My card is [CARD], keep it safe."
    rewritten: list[int] = []

    def rescan_once() -> None:
        if not rewritten:
            rewritten.append(Chunk.objects.filter(tenant=tenant).update(text=masked))

    wrap_rerank(monkeypatch, rescan_once)
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 1
    chunk = dialog(tenant)[0]
    assert rewritten == [1] and not chunk.rerank_pending
    np.testing.assert_allclose(chunk.english_rerank_embedding, english_rerank_vectors([masked])[0], atol=1e-5)


@pytest.mark.django_db(transaction=True)
def test_one_runner_a_tenant_and_turns_committed_meanwhile_are_not_left_behind(tenant, monkeypatch, queued) -> None:
    store(tenant, "u1", EN[:1])
    second: dict[str, Any] = {}

    def meanwhile_once() -> None:
        if not second:
            thread, out = in_thread(lambda: (store(tenant, "u2", EN[1:]),
                                             services.chunks_rerank_fill(tenant_id=tenant.pk))[1])
            thread.join(60)
            second.update(out)

    wrap_rerank(monkeypatch, meanwhile_once)
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 3  # its own turn, then the two committed meanwhile
    assert second == {"result": 0}
    assert not any(c.rerank_pending for c in dialog(tenant))
    assert all(c.english_rerank_embedding is not None for c in dialog(tenant))


@pytest.mark.django_db(transaction=True)
def test_in_a_web_process_the_vectors_are_computed_off_the_request(tenant, monkeypatch, web_process_beat) -> None:
    threads = wrap_rerank(monkeypatch, lambda: None)
    request = threading.current_thread().name
    with transaction.atomic():
        result = kernel.messages_append(tenant=tenant, user_id="u1", session_id="s1",
                                        messages=[kernel.IncomingMessage(role="user", text=t) for t in EN])
    # The index job ran at the commit, in this thread: the turns are stored before append returned.
    assert ArchivalJob.objects.get(pk=result.job.pk).status == "done"
    assert len(dialog(tenant)) == 3
    assert deferred.runner().wait_idle(60)
    assert wait_for(lambda: not any(c.rerank_pending for c in dialog(tenant)))
    assert threads and request not in threads and set(threads) == {"memoryhub-deferred"}


@pytest.mark.django_db(transaction=True)
def test_in_a_web_process_batches_arriving_while_a_fill_waits_share_it(tenant, monkeypatch, web_process_beat) -> None:
    """A fill takes all of the tenant's pending turns, so a batch stored while one is queued adds none; one
    stored once it has started queues another, which finds what the first had already read past."""
    runs: list[int] = []
    real_fill = services.chunks_rerank_fill

    def counted(*, tenant_id: int, **kwargs: Any) -> int:
        runs.append(tenant_id)
        return real_fill(tenant_id=tenant_id, **kwargs)

    monkeypatch.setattr(services, "chunks_rerank_fill", counted)
    busy, computing, go_on = threading.Event(), threading.Event(), threading.Event()
    assert deferred.defer(busy.wait, 30)  # the background thread is busy with other work
    try:
        for i, text in enumerate(EN):
            with transaction.atomic():
                kernel.messages_append(tenant=tenant, user_id="u1", session_id=f"s{i}",
                                       messages=[kernel.IncomingMessage(role="user", text=text)])
        assert deferred.runner()._pending == 2  # the busy work and one fill for the three batches
    finally:
        busy.set()
    assert deferred.runner().wait_idle(60)
    assert runs == [tenant.pk]
    assert not any(c.rerank_pending for c in dialog(tenant)) and len(dialog(tenant)) == 3

    # A batch committed while the fill computes is not folded into it: the fill may have read past it.
    first = [True]

    def hold() -> None:
        if first[0]:
            first[0] = False
            computing.set()
            assert go_on.wait(30)

    wrap_rerank(monkeypatch, hold)
    with transaction.atomic():
        kernel.messages_append(tenant=tenant, user_id="u1", session_id="s9",
                               messages=[kernel.IncomingMessage(role="user", text="We rented kayaks on Sunday.")])
    try:
        assert computing.wait(30)
        with transaction.atomic():
            kernel.messages_append(tenant=tenant, user_id="u1", session_id="s10",
                                   messages=[kernel.IncomingMessage(role="user", text="My sister Ana turned 30.")])
        assert deferred.runner()._pending == 2  # the running fill and a new one
    finally:
        go_on.set()
    assert deferred.runner().wait_idle(60)
    assert len(runs) == 3
    assert not any(c.rerank_pending for c in dialog(tenant)) and len(dialog(tenant)) == 5


URL = "/api/v1/users/u1/sessions/s1/messages"


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_worker_indexes_the_turns_then_gives_them_their_vectors(client_a) -> None:
    client, tenant = client_a
    with celery_worker() as worker:
        response = client.post(URL, {"messages": [{"role": "user", "text": t} for t in (EN[0], ZH)]}, format="json")
        assert response.status_code == 202

        def settled() -> bool:
            chunks = dialog(tenant)
            return len(chunks) == 2 and not any(c.rerank_pending for c in chunks)

        pending = lambda: [c.rerank_pending for c in dialog(tenant)]  # noqa: E731
        assert wait_for(settled, 60), f"worker exited {worker.poll()}, pending {pending()}"
    english, chinese = dialog(tenant)
    assert english.english_rerank_embedding is not None and chinese.rerank_embedding is not None


@pytest.mark.django_db(transaction=True)
def test_with_the_broker_away_the_turns_wait_for_the_sweep(client_a, caplog) -> None:
    client, tenant = client_a
    use_broker(UNREACHABLE_BROKER)
    job_id = client.post(URL, {"messages": [{"role": "user", "text": EN[0]}]}, format="json").json()["job_id"]
    kernel.archival_job_run(job_id=job_id)  # a worker that took the job before the broker went away
    assert dialog(tenant)[0].rerank_pending
    assert "reranker vectors of tenant" in caplog.text  # the hand-off was refused, and said so
    use_broker(None)  # back
    assert services.chunks_rerank_sweep() == 1
    assert not dialog(tenant)[0].rerank_pending and dialog(tenant)[0].english_rerank_embedding is not None


@pytest.mark.django_db(transaction=True)
def test_a_search_while_the_fill_computes_is_answered_at_once(tenant, monkeypatch, queued) -> None:
    """The fill holds no transaction or lock while the model runs: a search on another connection meanwhile finds
    the turns, re-scored as neutral until their vectors are written."""
    store(tenant, "u1", EN[:2])
    dialogue = "<u1>: We went to the lake.\n<assistant>: Was it cold?\n<u1>: The water was freezing!"
    seen: dict[str, Any] = {}

    def search_meanwhile() -> None:
        if not seen:
            thread, out = in_thread(lambda: chunks_search(tenant_id=tenant.pk, user_id="u1", query=dialogue, k=2,
                                                          include_tenant_documents=False))
            thread.join(30)
            seen.update(out)

    wrap_rerank(monkeypatch, search_meanwhile)
    assert services.chunks_rerank_fill(tenant_id=tenant.pk) == 2
    assert "error" not in seen, seen
    assert seen["result"].items[0].chunk["text"] == EN[1]
    assert "semantic" not in seen["result"].items[0].components  # no vector yet: the stage had nothing to read
    after = chunks_search(tenant_id=tenant.pk, user_id="u1", query=dialogue, k=2, include_tenant_documents=False)
    assert "semantic" in after.items[0].components
