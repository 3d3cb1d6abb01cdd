"""A real Celery worker in a subprocess, for the tests marked `worker` (CI runs them with Redis)."""

from __future__ import annotations

import os
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from django.db import connection

from memoryhub.celery import app as celery_app
from tests.conftest import reset_celery_connections

ROOT = Path(__file__).resolve().parents[1]
UNREACHABLE_BROKER = "redis://127.0.0.1:1/0"  # port 1: connection refused at once


def use_broker(url: str | None, **conf: object) -> None:
    """Send tasks to the broker at `url`, or run them in-process (None). The tests' autouse fixture
    puts the in-process mode back afterwards."""
    celery_app.conf.update(task_always_eager=url is None, broker_url=url or "memory://", **conf)
    reset_celery_connections()


@contextmanager
def celery_worker(concurrency: int = 2) -> Iterator[subprocess.Popen]:
    """A worker on a queue of its own (no other test's worker takes its tasks), this test's
    database, and the in-process broker pointed at Redis while it runs; on exit the worker stops
    and its output must hold no traceback."""
    redis_url = os.environ.get("REDIS_URL")
    if not redis_url:
        pytest.skip("REDIS_URL is not set: no Redis broker to run a real Celery worker against")
    queue = f"test-{uuid.uuid4().hex[:8]}"
    env = os.environ | {"MEMORYHUB_DB_NAME": connection.settings_dict["NAME"], "CELERY_QUEUE": queue}
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "-Q", queue, "-c", str(concurrency),
         "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    try:
        use_broker(redis_url, task_default_queue=queue)
        yield worker
    finally:
        worker.terminate()
        try:
            output = worker.communicate(timeout=20)[0].decode(errors="replace")
        except subprocess.TimeoutExpired:
            worker.kill()
            output = worker.communicate()[0].decode(errors="replace")
    assert "Traceback" not in output, output[-3000:]
