"""The embedded mode runs the periodic jobs itself: without a broker nobody runs `celery beat`,
and a session sent without `enable_auto_extract` was never extracted."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub.beat import EmbeddedBeat
from memoryhub.models import ArchivalJob, Conversation, PeriodicRun
from profiles.models import UserProfile
from tests.celery_worker import UNREACHABLE_BROKER, use_broker

pytestmark = pytest.mark.django_db(transaction=True)

SCHEDULE = {
    "archival-sweep": {"task": "memoryhub.tasks.archival_sweep", "schedule": 0.2},
    "sessions-extract-idle": {"task": "memoryhub.tasks.sessions_extract_idle", "schedule": 0.2},
}


def wait_for(condition: Callable[[], bool], seconds: float = 15.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return False


def test_the_embedded_beat_sweeps_lost_jobs_and_extracts_idle_sessions(client_a, settings) -> None:
    client, tenant = client_a
    settings.ARCHIVAL_IDLE_SECONDS = 1
    settings.ARCHIVAL_SWEEP_AFTER_SECONDS = 1
    use_broker(UNREACHABLE_BROKER)  # the job is accepted but never reaches a worker
    response = client.post("/api/v1/users/u1/sessions/s1/messages",
                           {"messages": [{"role": "user", "text": "I live in Riga."}]}, format="json")
    assert response.status_code == 202
    job_id = response.json()["job_id"]
    assert ArchivalJob.objects.get(pk=job_id).status == ArchivalJob.Status.PENDING
    Conversation.objects.update(last_message_at=timezone.now() - timedelta(seconds=5))
    use_broker(None)

    beat = EmbeddedBeat(SCHEDULE, tick=0.05)
    beat.start()
    try:
        assert wait_for(lambda: ArchivalJob.objects.get(pk=job_id).status == ArchivalJob.Status.DONE)
        # Sent without enable_auto_extract, the idle session is extracted all the same.
        assert wait_for(lambda: UserProfile.objects.filter(tenant=tenant, user_id="u1", key="location").exists())
    finally:
        beat.stop()
        beat.join(10)
    assert not beat.is_alive() and beat.leader


def test_only_one_process_runs_the_embedded_beat(db) -> None:
    first, second = EmbeddedBeat(SCHEDULE, tick=0.05), EmbeddedBeat(SCHEDULE, tick=0.05)
    first.start()
    assert wait_for(lambda: first.leader)
    second.start()
    time.sleep(0.5)
    try:
        assert first.leader and not second.leader
        assert first.runs and not second.runs
    finally:
        first.stop()
        first.join(10)
    # The leader is gone (its connection closed): the other takes over.
    try:
        assert wait_for(lambda: second.leader, 5)
    finally:
        second.stop()
        second.join(10)


def test_a_restarted_beat_runs_only_the_jobs_that_are_due(db) -> None:
    """runserver restarts the web process at every code change, and each start used to run every
    job at once, the daily prune and decay included."""
    schedule = {
        "daily": {"task": "memoryhub.tasks.archival_sweep", "schedule": 86400.0},
        "hourly": {"task": "memoryhub.tasks.sessions_extract_idle", "schedule": 3600.0},
        "broken": {"task": "memoryhub.tasks.no_such_task", "schedule": 3600.0},
    }
    an_hour_ago, two_hours_ago = timezone.now() - timedelta(hours=1), timezone.now() - timedelta(hours=2)
    PeriodicRun.objects.create(name="daily", task="memoryhub.tasks.archival_sweep", started_at=an_hour_ago,
                               finished_at=an_hour_ago, succeeded=True)
    PeriodicRun.objects.create(name="hourly", task="memoryhub.tasks.sessions_extract_idle",
                               started_at=two_hours_ago, finished_at=two_hours_ago, succeeded=True)
    beat = EmbeddedBeat(schedule, tick=0.05)
    beat.start()
    try:
        assert wait_for(lambda: PeriodicRun.objects.filter(name="broken").exists()
                        and PeriodicRun.objects.get(name="hourly").started_at > two_hours_ago)
        time.sleep(0.3)  # a few more ticks: nothing else becomes due
    finally:
        beat.stop()
        beat.join(10)
    assert beat.runs == {"hourly": 1}
    assert PeriodicRun.objects.get(name="daily").started_at == an_hour_ago
    hourly, broken = PeriodicRun.objects.get(name="hourly"), PeriodicRun.objects.get(name="broken")
    assert hourly.succeeded and hourly.finished_at >= hourly.started_at > an_hour_ago
    assert not broken.succeeded  # a failed run waits for its interval like any other

    restarted = EmbeddedBeat(schedule, tick=0.05)
    restarted.start()
    try:
        assert wait_for(lambda: restarted.leader, 5)
        time.sleep(0.3)
    finally:
        restarted.stop()
        restarted.join(10)
    assert restarted.runs == {}
    assert PeriodicRun.objects.get(name="hourly").started_at == hourly.started_at


def test_a_web_process_runs_the_beat_with_the_apps_tasks(client_a) -> None:
    """In a fresh process (as under runserver or gunicorn) nothing has imported the apps' tasks
    modules yet; the beat must find them all the same."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from django.db import connection

    client, _ = client_a
    use_broker(UNREACHABLE_BROKER)
    response = client.post("/api/v1/users/u1/sessions/s1/messages",
                           {"messages": [{"role": "user", "text": "I live in Riga."}]}, format="json")
    use_broker(None)
    job_id = response.json()["job_id"]
    ArchivalJob.objects.filter(pk=job_id).update(enqueued_at=None)
    env = os.environ | {"MEMORYHUB_DB_NAME": connection.settings_dict["NAME"], "EMBEDDED_BEAT": "1"}
    env.pop("REDIS_URL", None)
    script = ("import time, memoryhub.wsgi\n"
              "from memoryhub.models import ArchivalJob\n"
              f"for _ in range(100):\n"
              f"    if ArchivalJob.objects.get(pk={job_id}).status == 'done': break\n"
              f"    time.sleep(0.1)\n")
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2], env=env,
                          capture_output=True, text=True, timeout=60)
    assert "NotRegistered" not in done.stderr and "Traceback" not in done.stderr, done.stderr[-2000:]
    assert ArchivalJob.objects.get(pk=job_id).status == ArchivalJob.Status.DONE
