"""A Redis of the test's own, on a free loopback port, that a test may stop, pause and bring back.

The shared Redis (REDIS_URL in CI) must never be stopped by a test, so outage tests start their
own `redis-server` (no persistence) and point the Redis-derived settings at it with the
`redis_settings` fixture: the cache, the Celery broker (on a queue of the test's own) and the
kernel's own Redis client (rate limits, events).
"""

from __future__ import annotations

import contextlib
import shutil
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class RedisServer:
    def __init__(self, executable: str) -> None:
        self.executable = executable
        self.port = _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> RedisServer:
        self.process = subprocess.Popen(
            [self.executable, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no", "--protected-mode", "no", "--loglevel", "warning"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.ping():
                return self
            time.sleep(0.05)
        raise RuntimeError(f"redis-server did not answer on port {self.port}")

    def ping(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(16).startswith(b"+PONG")
        except OSError:
            return False

    def stop(self) -> None:
        """Gone: connections are refused at once."""
        if self.process is not None:
            self.resume()
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None

    def pause(self) -> None:
        """Hung (SIGSTOP): connections open, then nothing answers; only timeouts get a client out."""
        assert self.process is not None
        self.process.send_signal(signal.SIGSTOP)

    def resume(self) -> None:
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    executable = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not shutil.which(executable):
        pytest.skip("redis-server is not installed")
    server = RedisServer(executable).start()
    try:
        yield server
    finally:
        server.stop()


@dataclass
class RedisSettings:
    server: RedisServer
    queue: str

    def queued(self) -> int:
        """Tasks waiting in the test's Celery queue."""
        import redis

        return int(redis.Redis.from_url(self.server.url, socket_timeout=2).llen(self.queue))


@pytest.fixture
def redis_settings(settings: Any, redis_server: RedisServer) -> Iterator[RedisSettings]:
    """Every Redis-derived setting pointed at the test's own Redis, with a real (not eager) broker."""
    from memoryhub import redis_client
    from memoryhub.celery import app as celery_app
    from tests.conftest import reset_celery_connections

    queue = f"test-{uuid.uuid4().hex[:8]}"
    settings.REDIS_URL = redis_server.url
    settings.REDIS_RETRY_SECONDS = 2  # the breaker's interval, short enough to wait out in a test
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                                   "LOCATION": redis_server.url}}
    keys = ("task_always_eager", "broker_url", "task_default_queue", "result_backend")
    saved = {k: celery_app.conf[k] for k in keys}
    # A result backend, where the settings configure one, is the same Redis as the broker's.
    backend = redis_server.url if settings.CELERY_RESULT_BACKEND else None
    celery_app.conf.update(task_always_eager=False, broker_url=redis_server.url, task_default_queue=queue,
                           result_backend=backend)
    reset_celery_connections()
    try:
        yield RedisSettings(server=redis_server, queue=queue)
    finally:
        redis_server.resume()
        redis_client.reset()
        celery_app.conf.update(saved)
        with contextlib.suppress(Exception):
            reset_celery_connections()
