"""The extract job asks the LLM outside any transaction: a slow model holds up no other write.

The job runs in a thread with its own database connection, as a worker would, while the test
makes requests through the API on the main connection and times them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from django.db import connection

from memoryhub import services as kernel
from memoryhub.celery import app as celery_app
from memoryhub.models import ArchivalJob, Message
from profiles.models import UserProfile
from tests.conftest import reset_celery_connections
from tests.llm_server import Delay, OpenAICompatServer

SLOW = 3.0  # seconds the model takes to answer the job's fact extraction
FACTS = {"facts": [{"key": "name", "value": "Anna", "confidence": 0.95, "message": 0}]}


@pytest.fixture
def slow_llm(settings, llm: OpenAICompatServer) -> OpenAICompatServer:
    settings.LLM_TIMEOUT = SLOW * 4  # slow, not timed out
    # Jobs go to an in-memory broker nobody consumes: the test runs the extract job itself, in a thread.
    celery_app.conf.update(task_always_eager=False, broker_url="memory://")
    reset_celery_connections()
    return llm


@contextmanager
def job_in_thread(job_id: int, llm: OpenAICompatServer) -> Iterator[threading.Thread]:
    """Run the job in a thread (its own connection) and yield once the model has its request."""

    def run() -> None:
        try:
            kernel.archival_job_run(job_id=job_id)
        finally:
            connection.close()

    thread = threading.Thread(target=run, name=f"job-{job_id}")
    thread.start()
    deadline = time.monotonic() + 10
    while not llm.chat_requests and time.monotonic() < deadline:
        time.sleep(0.01)
    assert llm.chat_requests, "the job never asked the model"
    try:
        yield thread
    finally:
        thread.join(timeout=SLOW * 5)
        assert not thread.is_alive()


def post_u1_batch(client) -> ArchivalJob:
    response = client.post("/api/v1/users/u1/sessions/s1/messages", {
        "messages": [{"role": "user", "text": "I'm Anna from Berlin."}], "enable_auto_extract": True,
    }, format="json")
    assert response.status_code == 202
    return ArchivalJob.objects.get(pk=response.json()["extract_job_id"])


@pytest.mark.django_db(transaction=True)
def test_a_slow_model_holds_up_no_write_of_another_user(client_a, slow_llm: OpenAICompatServer) -> None:
    client, tenant = client_a
    job = post_u1_batch(client)
    slow_llm.script_chat(Delay(SLOW, FACTS), {"people_operations": []})

    with job_in_thread(job.pk, slow_llm):
        started = time.monotonic()
        fact = client.put("/api/v1/users/u2/profile/location", {"value": "Paris"}, format="json")
        batch = client.post("/api/v1/users/u2/sessions/s9/messages",
                            {"messages": [{"role": "user", "text": "Hello again"}]}, format="json")
        took = time.monotonic() - started
        job_status = ArchivalJob.objects.get(pk=job.pk).status

    assert fact.status_code == 201 and batch.status_code == 202
    # Both finished while u1's job was still waiting for the model, well before it answered.
    assert job_status == ArchivalJob.Status.RUNNING
    assert took < SLOW / 3, f"the other user's writes took {took:.2f}s"
    assert UserProfile.objects.get(tenant=tenant, user_id="u2").value == "Paris"
    assert Message.objects.filter(tenant=tenant, user_id="u2").count() == 1
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.DONE
    assert UserProfile.objects.get(tenant=tenant, user_id="u1").value == "Anna"


@pytest.mark.django_db(transaction=True)
def test_erasing_the_user_does_not_wait_for_the_slow_model_and_the_job_then_writes_nothing(
    client_a, slow_llm: OpenAICompatServer
) -> None:
    # The job's own user: erasure takes the lock the job's writes hold, so this only passes when
    # the model is asked before that lock is taken.
    client, tenant = client_a
    job = post_u1_batch(client)
    slow_llm.script_chat(Delay(SLOW, FACTS), {"people_operations": []})

    with job_in_thread(job.pk, slow_llm):
        started = time.monotonic()
        erased = client.delete("/api/v1/users/u1")
        took = time.monotonic() - started

    assert erased.status_code == 200 and erased.json()["deleted"]["messages"] == 1
    assert took < SLOW / 3, f"erasure took {took:.2f}s"
    # What the job prepared was dropped: nothing of u1 came back.
    assert not UserProfile.objects.filter(tenant=tenant, user_id="u1").exists()
    assert not ArchivalJob.objects.filter(pk=job.pk).exists()
    assert len(slow_llm.chat_requests) == 1  # the people step never ran
