"""Nothing accepted is lost: the outbox survives a broker outage, and a real worker runs jobs."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.db import connection

from memoryhub import services
from memoryhub.celery import app as celery_app
from memoryhub.models import ArchivalJob, Message
from tests.conftest import reset_celery_connections

URL = "/api/v1/users/u1/sessions/s1/messages"
BATCH = {"messages": [{"role": "user", "text": "I adopted a cat named Miso."}]}
UNREACHABLE_BROKER = "redis://127.0.0.1:1/0"  # port 1: connection refused at once


def use_broker(url: str | None, **conf: object) -> None:
    celery_app.conf.update(task_always_eager=url is None, broker_url=url or "memory://", **conf)
    reset_celery_connections()


@pytest.mark.django_db(transaction=True)
def test_broker_outage_keeps_messages_and_job_then_sweeper_completes_it(client_a) -> None:
    client, _ = client_a
    use_broker(UNREACHABLE_BROKER)
    started = time.monotonic()
    response = client.post(URL, BATCH, format="json")
    assert response.status_code == 202
    assert time.monotonic() - started < 10  # a dead broker costs seconds at most, never hangs
    job = ArchivalJob.objects.get(pk=response.json()["job_id"])
    assert job.status == ArchivalJob.Status.PENDING and job.enqueued_at is not None
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
def test_sweeper_leaves_recently_enqueued_jobs_alone(client_a) -> None:
    client, _ = client_a
    use_broker(UNREACHABLE_BROKER)
    client.post(URL, BATCH, format="json")
    assert services.archival_sweep(older_than=timedelta(minutes=5)) == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_real_celery_worker_completes_an_archival_job(client_a) -> None:
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("REDIS_URL is not set: no Redis broker to run a real Celery worker against")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = os.environ | {"MEMORYHUB_DB_NAME": connection.settings_dict["NAME"], "CELERY_QUEUE": queue}
    root = Path(__file__).resolve().parents[2]
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "-Q", queue, "-c", "2",
         "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=root, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        use_broker(redis_url, task_default_queue=queue)
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
    finally:
        worker.terminate()
        try:
            output = worker.communicate(timeout=20)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            worker.kill()
            output = worker.communicate()[0].decode(errors="replace")
    assert "Traceback" not in output, output[-3000:]
