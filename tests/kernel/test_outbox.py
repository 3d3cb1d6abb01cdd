"""Nothing accepted is lost: the outbox survives a broker outage, and a real worker runs jobs."""

from __future__ import annotations

import time
from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub import services
from memoryhub.models import ArchivalJob, Message
from tests.celery_worker import UNREACHABLE_BROKER, celery_worker, use_broker

URL = "/api/v1/users/u1/sessions/s1/messages"
BATCH = {"messages": [{"role": "user", "text": "I adopted a cat named Miso."}]}


@pytest.mark.django_db(transaction=True)
def test_broker_outage_keeps_messages_and_job_then_sweeper_completes_it(client_a) -> None:
    client, _ = client_a
    use_broker(UNREACHABLE_BROKER)
    started = time.monotonic()
    response = client.post(URL, BATCH, format="json")
    assert response.status_code == 202
    assert time.monotonic() - started < 10  # a dead broker costs seconds at most, never hangs
    job = ArchivalJob.objects.get(pk=response.json()["job_id"])
    # Not sent, so not stamped as sent: the next sweep sends it, not one ARCHIVAL_SWEEP_AFTER_SECONDS on.
    assert job.status == ArchivalJob.Status.PENDING and job.enqueued_at is None
    assert Message.objects.filter(pk__in=job.message_ids).count() == 1

    # A sweep while the broker is still down enqueues nothing successfully and loses nothing.
    assert services.archival_sweep(older_than=timedelta(0)) == 1
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.PENDING

    use_broker(None)  # the broker is back (in-process mode runs the task at once)
    assert services.archival_sweep(older_than=timedelta(0)) == 1
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.DONE and job.attempts == 0
    # Nothing is left to sweep, and a second run of the job changes nothing.
    assert services.archival_sweep(older_than=timedelta(0)) == 0
    finished = job.finished_at
    services.archival_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.attempts == 0 and job.finished_at == finished


@pytest.mark.django_db(transaction=True)
def test_sweeper_sends_at_once_what_the_broker_never_got_and_leaves_what_it_got_alone(client_a) -> None:
    """After a broker outage the jobs it refused reached a worker 6 minutes later (an operator's QA pass):
    stamped as sent, they waited out the sweep's 5 minutes as if a worker held them."""
    client, _ = client_a
    use_broker(UNREACHABLE_BROKER)
    job_id = client.post(URL, BATCH, format="json").json()["job_id"]
    assert services.archival_sweep(older_than=timedelta(minutes=5)) == 1  # refused again: still unstamped
    ArchivalJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())  # as a broker that took it
    assert services.archival_sweep(older_than=timedelta(minutes=5)) == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_celery_worker_completes_an_archival_job(client_a) -> None:
    with celery_worker() as worker:
        client, _ = client_a
        response = client.post(URL, BATCH, format="json")
        assert response.status_code == 202
        job_id = response.json()["job_id"]
        deadline = time.monotonic() + 60
        status = None
        while time.monotonic() < deadline:
            status = ArchivalJob.objects.get(pk=job_id).status
            if status == ArchivalJob.Status.DONE or worker.poll() is not None:
                break
            time.sleep(0.2)
        assert status == ArchivalJob.Status.DONE, f"worker exited {worker.poll()}, job {status}"
