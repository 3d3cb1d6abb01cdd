"""Redis without depending on it: the kernel's own client (API rate limits, events) and the
breakers that keep a Redis outage from reaching requests.

No request needs Redis to be answered. Every call has short timeouts and no client-side retries,
and after a failure the process leaves that Redis alone for `REDIS_RETRY_SECONDS` (a breaker): a
hung Redis (it accepts connections, then answers nothing) costs one timeout per process per
interval, not one per request. Callers catch `RedisUnavailable` and fall back: rate limits count
in-process, events stay in-process, a task not published waits in the outbox for the sweeper.

(pybreaker holds its lock while the guarded call runs, which would serialise every rate-limit
count of a process behind one Redis round trip; this breaker only guards its own state.)
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from django.conf import settings

if TYPE_CHECKING:
    import redis

logger = logging.getLogger(__name__)

T = TypeVar("T")


class RedisUnavailable(Exception):
    """Redis is not configured, did not answer, or failed moments ago (and is left alone a while)."""


class Breaker:
    """Open for `REDIS_RETRY_SECONDS` after a failure: calls fail at once instead of waiting."""

    def __init__(self, name: str) -> None:
        self.name = name
        self._lock = threading.Lock()
        self._open_until: dict[str, float] = {}  # per URL: tests and deployments may switch

    def call(self, target: str, operation: Callable[[], T], failures: tuple[type[BaseException], ...]) -> T:
        if self._open_until.get(target, 0.0) > time.monotonic():
            raise RedisUnavailable(f"{self.name} failed moments ago; next try within {settings.REDIS_RETRY_SECONDS}s")
        try:
            result = operation()
        except failures as exc:
            with self._lock:
                first = target not in self._open_until
                self._open_until[target] = time.monotonic() + settings.REDIS_RETRY_SECONDS
            if first:
                logger.warning("%s unreachable, working without it (next try in %ss): %s: %s",
                               self.name, settings.REDIS_RETRY_SECONDS, type(exc).__name__, exc)
            raise RedisUnavailable(f"{self.name}: {exc}") from exc
        if target in self._open_until:
            with self._lock:
                if self._open_until.pop(target, None) is not None:
                    logger.warning("%s answers again", self.name)
        return result

    def reset(self) -> None:
        with self._lock:
            self._open_until.clear()


redis_breaker = Breaker("Redis")
broker_breaker = Breaker("Celery broker")

_lock = threading.Lock()
_clients: dict[str, redis.Redis] = {}


def _client(url: str) -> redis.Redis:
    with _lock:
        client = _clients.get(url)
        if client is None:
            import redis
            from redis.backoff import NoBackoff
            from redis.retry import Retry

            timeout = settings.REDIS_SOCKET_TIMEOUT
            client = _clients[url] = redis.Redis.from_url(
                url, socket_connect_timeout=timeout, socket_timeout=timeout, retry=Retry(NoBackoff(), 0),
            )
        return client


def run(operation: Callable[[redis.Redis], T]) -> T:
    """`operation(client)` on `REDIS_URL`, or `RedisUnavailable` (at once while the breaker is open)."""
    import redis

    url = settings.REDIS_URL
    if not url:
        raise RedisUnavailable("REDIS_URL is not set")
    return redis_breaker.call(url, lambda: operation(_client(url)), (redis.RedisError,))


def reset() -> None:
    """Forget clients and failures (tests that start and stop their own Redis)."""
    with _lock:
        for client in _clients.values():
            client.close()
        _clients.clear()
    redis_breaker.reset()
    broker_breaker.reset()
