"""Work handed to a background thread of this process, in the embedded mode.

Without `REDIS_URL` Celery tasks run in-process, inside whatever enqueued them: a consolidation
that an index job asked for ran inside the client's `POST …/messages`, and more than halved the
rate at which a chat could store its messages. Work that may come a moment later goes to one
background thread instead; the caller returns at once.

Only work whose row stays pending until it is done may be deferred, and only where a beat runs in
this process (`memoryhub.beat`): a process that dies with work still queued loses nothing, since
the beat's sweep finds the pending row and runs it again. Without a beat (management commands,
tests, `EMBEDDED_BEAT=0`) `defer` refuses and the caller runs the work itself, as before. One
thread runs the queue in order, so two deferred runs never compete with each other.

The thread waits for a quiet moment: no request in flight in this process for QUIET_SECONDS, or
MAX_WAIT_SECONDS after the work came. A CPU-bound thread beside the request threads would take
the GIL from them on every database round trip (measured: ingest with consolidation on a thread
at once was slower than with consolidation in the request); between bursts it costs them
nothing, and a run that waited covers more messages, so a burst needs fewer runs.
"""

from __future__ import annotations

import logging
import os
import queue
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from django.core.signals import request_finished, request_started
from django.db import close_old_connections, connections

logger = logging.getLogger(__name__)

QUIET_SECONDS = 0.2
MAX_WAIT_SECONDS = 5.0


class _Activity:
    """Requests in flight in this process, and when the last one ended (Django's request signals)."""

    def __init__(self) -> None:
        self.changed = threading.Condition()
        self.in_flight = 0
        self.last_end = 0.0

    def started(self, **kwargs: Any) -> None:
        with self.changed:
            self.in_flight += 1

    def finished(self, **kwargs: Any) -> None:
        with self.changed:
            self.in_flight = max(0, self.in_flight - 1)
            self.last_end = time.monotonic()
            self.changed.notify_all()

    def wait_quiet(self, until: float) -> None:
        """Return once no request has been in flight for QUIET_SECONDS, or at `until` (monotonic)."""
        with self.changed:
            while True:
                now = time.monotonic()
                quiet_for = now - self.last_end
                if (self.in_flight == 0 and quiet_for >= QUIET_SECONDS) or now >= until:
                    return
                wait = QUIET_SECONDS - quiet_for if self.in_flight == 0 else QUIET_SECONDS
                self.changed.wait(max(0.01, min(wait, until - now)))


_M_ARENA_MAX = -8  # glibc's mallopt parameter


def share_malloc_arena() -> bool:
    """Have every thread of this process allocate from glibc's main arena. Called once, before the threads
    start, by a process that runs background work on a thread (the embedded web process, memoryhub.beat).

    A thread of its own gets an arena of its own, whose large blocks (a model's activations, megabytes a
    batch) glibc hands back to the system and faults in again on every forward: the reranker's vectors of 640
    LoCoMo turns cost 14.6 ms a turn on a thread against 11.9 on the main thread, and 10.4 / 10.6 with one
    arena. The threads of such a process take turns at the GIL anyway, so they hardly contend for the arena.
    False where there is no glibc (nothing changes)."""
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    try:
        return bool(name) and ctypes.CDLL(name).mallopt(_M_ARENA_MAX, 1) == 1
    except (OSError, AttributeError):
        return False


activity = _Activity()
request_started.connect(activity.started, dispatch_uid="memoryhub.deferred.started")
request_finished.connect(activity.finished, dispatch_uid="memoryhub.deferred.finished")


class DeferredRunner(threading.Thread):
    def __init__(self) -> None:
        super().__init__(name="memoryhub-deferred", daemon=True)
        self.queue: queue.SimpleQueue[tuple[float, Callable[..., Any], tuple[Any, ...], Hashable]] = \
            queue.SimpleQueue()
        self._pending = 0
        self._idle = threading.Condition()
        self._waiting: set[Hashable] = set()  # the `once` keys of work queued and not yet started

    def submit(self, fn: Callable[..., Any], args: tuple[Any, ...], once: Hashable = None) -> bool:
        """Queue `fn(*args)`; False when work of the same `once` key is queued and has not started yet: that
        run will see whatever this call was for."""
        with self._idle:
            if once is not None:
                if once in self._waiting:
                    return False
                self._waiting.add(once)
            self._pending += 1
        self.queue.put((time.monotonic(), fn, args, once))
        return True

    def run(self) -> None:
        while True:
            queued_at, fn, args, once = self.queue.get()
            activity.wait_quiet(queued_at + MAX_WAIT_SECONDS)
            if once is not None:
                # From here on a new submission queues again: this run may already have read what it reads.
                with self._idle:
                    self._waiting.discard(once)
            # The thread's own database connection, reused and health-checked as a request's is.
            close_old_connections()
            try:
                fn(*args)
            except Exception:  # the work records its own failures; this only keeps the thread alive
                logger.exception("deferred %s%r failed", getattr(fn, "__name__", fn), args)
            finally:
                # Idle, the thread holds no connection: deferred work comes in bursts, and a
                # connection kept for nothing would also block dropping the database (tests).
                if self.queue.empty():
                    connections.close_all()
                else:
                    close_old_connections()
                with self._idle:
                    self._pending -= 1
                    self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Whether everything submitted so far has run within `timeout` seconds."""
        with self._idle:
            return self._idle.wait_for(lambda: self._pending == 0, timeout)


_runner: DeferredRunner | None = None
_runner_pid = 0
_lock = threading.Lock()


def runner() -> DeferredRunner:
    """This process's runner, started on first use (again in a forked child: threads do not
    survive a fork)."""
    global _runner, _runner_pid
    with _lock:
        if _runner is None or _runner_pid != os.getpid():
            _runner, _runner_pid = DeferredRunner(), os.getpid()
            _runner.start()
        return _runner


def dispatch(task: Any, arg: Any, *, what: str, background: bool = True, coalesce: bool = False) -> bool:
    """Send a Celery task for one row (`arg`, its id). `background`: without a broker the task would
    run right here, inside the client's request; where a beat runs in this process it goes to the
    background thread instead (`defer`), its row pending until done and the sweep's to run again
    should the process die first. A broker outage is logged (naming `what`), not raised: the row is
    committed and the sweep sends it again. False when nothing was sent. `coalesce`: on the background
    thread, the same task for the same `arg` is queued once until it starts (for a task that does all
    the work pending when it runs, not just the caller's)."""
    if background and task.app.conf.task_always_eager and \
            defer(task.apply, (arg,), once=(task.name, arg) if coalesce else None):
        return True
    try:
        task.delay(arg)
    except Exception as exc:  # kombu raises several types for an unreachable broker
        logger.warning("%s not enqueued, the sweeper will retry: %s", what, exc)
        return False
    return True


def defer(fn: Callable[..., Any], *args: Any, once: Hashable = None) -> bool:
    """Run `fn(*args)` soon on the background thread; False (nothing queued: run it yourself) when
    no beat runs in this process to pick the work up again should the process die first. `once`: a key
    under which work is queued at most once until it starts; a call that finds its key queued is done
    (True), that run covering it."""
    from memoryhub import beat

    if not beat.running():
        return False
    runner().submit(fn, args, once)
    return True
