"""The periodic jobs in the embedded mode, where no Celery beat runs.

Without `REDIS_URL` tasks run in-process and nobody runs `celery beat`, so idle sessions were
never extracted and failed jobs never retried. The web process runs the same schedule
(`CELERY_BEAT_SCHEDULE`) on a daemon thread instead. Several web processes may start one each:
a PostgreSQL advisory lock, held by the thread's own connection while it lives, lets exactly
one of them tick, and another takes over when that process dies.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection

logger = logging.getLogger(__name__)

LEADER_LOCK = "memoryhub:embedded-beat"
_started: threading.Thread | None = None
_start_lock = threading.Lock()
_alive: set[EmbeddedBeat] = set()  # beats running in this process (memoryhub.deferred asks)


class EmbeddedBeat(threading.Thread):
    def __init__(self, schedule: dict[str, dict[str, Any]], *, tick: float = 1.0) -> None:
        super().__init__(name="memoryhub-embedded-beat", daemon=True)
        self.schedule = schedule
        self.tick = tick
        self.stopped = threading.Event()
        self.leader = False
        self.runs: dict[str, int] = {}

    def stop(self) -> None:
        self.stopped.set()

    def run(self) -> None:
        from memoryhub.celery import app

        # A web process never imported the apps' tasks modules (a worker does at start-up), and
        # autodiscovery is lazy: import them now, or the schedule names unregistered tasks.
        app.loader.import_default_modules()
        due = dict.fromkeys(self.schedule, 0.0)  # every job once at start, then at its interval
        _alive.add(self)
        try:
            while not self.stopped.is_set():
                if self._lead():
                    for name, entry in self.schedule.items():
                        if time.monotonic() >= due[name]:
                            due[name] = time.monotonic() + float(entry["schedule"])
                            self._run(app, name, entry["task"])
                self.stopped.wait(self.tick)
        finally:
            _alive.discard(self)
            connection.close()

    def _lead(self) -> bool:
        if self.leader:
            return True
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, 0))", [LEADER_LOCK])
                self.leader = bool(cursor.fetchone()[0])
        except Exception as exc:  # the database restarting: try again next tick
            logger.warning("embedded beat: database unavailable: %s", exc)
            connection.close()
        return self.leader

    def _run(self, app: Any, name: str, task_name: str) -> None:
        try:
            # apply(): in this thread, whatever the broker settings say; the jobs it enqueues
            # follow the normal path (in-process in the embedded mode).
            app.tasks[task_name].apply(throw=True)
            self.runs[name] = self.runs.get(name, 0) + 1
        except Exception:
            logger.exception("embedded beat: %s failed", name)
            # The thread's connection lives as long as the thread (its session holds the leader
            # lock); a broken one lost the lock with it: replace it and stand for election again.
            if connection.connection is not None and not connection.is_usable():
                self.leader = False
                connection.close()


def running() -> bool:
    """Whether a beat runs in this process (leading or standing by: either way some process's
    beat sweeps what this one leaves pending)."""
    return any(beat.is_alive() for beat in list(_alive))


def start_if_embedded() -> EmbeddedBeat | None:
    """Start the thread once per process when the embedded mode has no beat of its own."""
    global _started
    if not settings.EMBEDDED_BEAT:
        return None
    with _start_lock:
        if _started is None:
            beat = EmbeddedBeat(settings.CELERY_BEAT_SCHEDULE)
            beat.start()
            _started = beat
            logger.info("embedded beat started: %s", ", ".join(settings.CELERY_BEAT_SCHEDULE))
        return _started if isinstance(_started, EmbeddedBeat) else None
