"""Session-level PostgreSQL advisory locks: one runner of a job across processes.

Such a lock guards no row and no transaction waits on it, so holding it while a job embeds or
waits on the LLM blocks nobody but a second runner of the same job, which leaves the work to the
holder (or, given `wait`, queues behind it). A worker that dies drops its connection and with it
the lock.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection

POLL_SECONDS = 0.1


@contextmanager
def advisory_lock(key: str, seed: int, *, wait: float | None = 0.0) -> Iterator[bool]:
    """Take the lock named `key` (hashed with `seed`, which keeps one family of keys apart from
    another); yields whether it was taken, and lets go on exit. `wait`: seconds to keep trying
    (None: until it is free). Polled with pg_try_advisory_lock, never a blocking call: the wait is
    bounded and happens in Python, outside any statement. Call it outside a transaction: its wait
    would otherwise hold the transaction's own locks."""
    deadline = None if wait is None else time.monotonic() + wait
    while True:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, %s))", [key, seed])
            acquired = bool(cursor.fetchone()[0])
        if acquired or (deadline is not None and time.monotonic() >= deadline):
            break
        time.sleep(POLL_SECONDS)
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, %s))", [key, seed])
