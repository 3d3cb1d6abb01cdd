"""The periodic jobs in the embedded mode, where no Celery beat runs.

Without `REDIS_URL` tasks run in-process and nobody runs `celery beat`, so idle sessions were
never extracted and failed jobs never retried. The web process runs the same schedule
(`CELERY_BEAT_SCHEDULE`) on a daemon thread instead. Several web processes may start one each:
a PostgreSQL advisory lock, held by the thread's own connection while it lives, lets exactly
one of them tick, and another takes over when that process dies.
Each job's last finished run is kept in `PeriodicRun`, so a restart runs only the jobs that are
due: a web process restarts at every code change under runserver, and used to run the daily
prune and decay each time.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from django.conf import settings
from django.db import connection
from django.utils import timezone

from memoryhub import deferred

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
        due: dict[str, float] | None = None
        _alive.add(self)
        try:
            while not self.stopped.is_set():
                leading = self.leader
                if self._lead():
                    if not leading:
                        # On taking over: another process (or this one before a restart) may have
                        # run the jobs a moment ago.
                        due = self._due()
                    for name, entry in self.schedule.items() if due is not None else ():
                        if time.time() >= due[name]:
                            due[name] = time.time() + float(entry["schedule"])
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

    def _due(self) -> dict[str, float] | None:
        """When each job is next due (epoch seconds): its interval after the start of its last
        finished run, or now for a job never run. None when the database cannot say (next tick)."""
        from memoryhub.models import PeriodicRun

        try:
            last = dict(PeriodicRun.objects.filter(name__in=list(self.schedule)).values_list("name", "started_at"))
        except Exception as exc:
            logger.warning("embedded beat: the last runs are unreadable: %s", exc)
            connection.close()
            self.leader = False  # the session, and the leader lock with it, may be gone
            return None
        return {name: last[name].timestamp() + float(entry["schedule"]) if name in last else 0.0
                for name, entry in self.schedule.items()}

    def _run(self, app: Any, name: str, task_name: str) -> None:
        from memoryhub.models import PeriodicRun

        started = timezone.now()
        try:
            # apply(): in this thread, whatever the broker settings say; the jobs it enqueues
            # follow the normal path (in-process in the embedded mode).
            app.tasks[task_name].apply(throw=True)
            self.runs[name] = self.runs.get(name, 0) + 1
            succeeded = True
        except Exception:
            logger.exception("embedded beat: %s failed", name)
            succeeded = False
        try:
            # A failed run counts as a run too: the next try comes at the job's interval, as before.
            PeriodicRun.objects.update_or_create(name=name, defaults={
                "task": task_name, "started_at": started, "finished_at": timezone.now(), "succeeded": succeeded})
        except Exception as exc:
            logger.warning("embedded beat: the run of %s went unrecorded: %s", name, exc)
        # The thread's connection lives as long as the thread (its session holds the leader lock);
        # a broken one lost the lock with it: replace it and stand for election again.
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
            deferred.share_malloc_arena()  # before the threads: the background work runs as fast as in line
            beat = EmbeddedBeat(settings.CELERY_BEAT_SCHEDULE)
            beat.start()
            _started = beat
            logger.info("embedded beat started: %s", ", ".join(settings.CELERY_BEAT_SCHEDULE))
        return _started if isinstance(_started, EmbeddedBeat) else None
