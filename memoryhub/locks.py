"""Session-level PostgreSQL advisory locks: one runner of a job across processes.

Such a lock guards no row and no transaction waits on it, so holding it while a job embeds or
waits on the LLM blocks nobody but a second runner of the same job, which leaves the work to the
holder. A worker that dies drops its connection and with it the lock.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from django.db import connection


@contextmanager
def advisory_lock(key: str, seed: int) -> Iterator[bool]:
    """Try to take the lock named `key` (hashed with `seed`, which keeps one family of keys apart
    from another); yields whether it was taken, and lets go on exit."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_try_advisory_lock(hashtextextended(%s, %s))", [key, seed])
        acquired = bool(cursor.fetchone()[0])
    try:
        yield acquired
    finally:
        if acquired:
            with connection.cursor() as cursor:
                cursor.execute("SELECT pg_advisory_unlock(hashtextextended(%s, %s))", [key, seed])
