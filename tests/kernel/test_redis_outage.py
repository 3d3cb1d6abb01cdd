"""Redis away (stopped, or hung with SIGSTOP) is not the API away.

Intake keeps accepting into the outbox, reads keep answering, and nothing waits long on a Redis
that does not answer; when Redis is back, the sweeper hands the waiting jobs to the broker.
"""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.db import connections

from memoryhub import services
from memoryhub.models import ArchivalJob, Message
from tests.redis_server import RedisSettings

URL = "/api/v1/users/u1/sessions/s1/messages"
BATCHES = 5
PER_BATCH = 5


def batch(n: int) -> dict:
    return {"messages": [{"role": "user", "text": f"Batch {n}: I adopted a cat named Miso #{i}.",
                          "external_id": f"b{n}-{i}"} for i in range(PER_BATCH)]}


def exercise_api(client) -> list[float]:
    """Intake and reads against the API; returns each request's duration."""
    took = []
    for n in range(BATCHES):
        started = time.monotonic()
        response = client.post(URL, batch(n), format="json")
        took.append(time.monotonic() - started)
        assert response.status_code == 202, response.content
        assert response.json()["accepted"] == PER_BATCH
    for _ in range(3):
        started = time.monotonic()
        recent = client.get(URL)
        search = client.post("/api/v1/search", {"query": "cat named Miso", "user_id": "u1", "k": 3}, format="json")
        took.append(time.monotonic() - started)
        assert recent.status_code == 200, recent.content
        assert len(recent.json()["messages"]) == min(20, BATCHES * PER_BATCH)
        assert search.status_code == 200, search.content
    return took


def assert_back_and_swept(redis: RedisSettings) -> None:
    """Redis back: once the breaker's interval has passed, the sweeper hands every job the outage
    left to the broker."""
    jobs = ArchivalJob.objects.exclude(status=ArchivalJob.Status.DONE)
    assert jobs.count() == BATCHES  # one index job per batch, none handed over during the outage
    assert redis.server.ping() and redis.queued() == 0
    time.sleep(django_settings.REDIS_RETRY_SECONDS)
    assert services.archival_sweep(older_than=timedelta(0)) == BATCHES
    assert redis.queued() == BATCHES


@pytest.mark.django_db(transaction=True)
def test_redis_stopped_intake_accepts_into_the_outbox_and_reads_answer(client_a, redis_settings) -> None:
    client, _ = client_a
    assert client.get(URL).status_code == 404  # Redis up: the API works (no such session yet)
    redis_settings.server.stop()

    took = exercise_api(client)

    assert Message.objects.count() == BATCHES * PER_BATCH
    print("stopped redis, request durations:", [round(t, 2) for t in took])
    assert max(took) < 3, took  # a refused connection costs nothing like a timeout
    redis_settings.server.start()  # the same port, an empty Redis
    assert_back_and_swept(redis_settings)


@pytest.mark.django_db(transaction=True)
def test_redis_stopped_a_request_on_a_fresh_thread_stores_its_batch_at_once(client_a, redis_settings) -> None:
    """A threaded web server serves each request on a thread of its own. With a Redis result
    backend (one per thread) a thread's first publish subscribed to the result's channel and,
    Redis away, waited out 20 reconnects of a second each before the broker was even tried."""
    client, _ = client_a
    redis_settings.server.stop()

    def post(n: int) -> None:
        started = time.monotonic()
        try:
            response = client.post(URL, batch(n), format="json")
            out.append((response.status_code, time.monotonic() - started))
        finally:
            connections.close_all()

    out: list[tuple[int, float]] = []
    for n in range(2):
        thread = threading.Thread(target=post, args=(n,))
        thread.start()
        thread.join(60)
    assert [status for status, _ in out] == [202, 202]
    assert Message.objects.count() == 2 * PER_BATCH
    took = [round(seconds, 2) for _, seconds in out]
    assert max(took) < 3, f"batches waited {took} s for a Redis that is away"


@pytest.mark.django_db(transaction=True)
def test_redis_hung_intake_accepts_into_the_outbox_and_reads_answer(client_a, redis_settings) -> None:
    client, _ = client_a
    assert client.get(URL).status_code == 404
    redis_settings.server.pause()

    took = exercise_api(client)

    assert Message.objects.count() == BATCHES * PER_BATCH
    # The first request pays the timeouts; later ones skip a Redis known to be away.
    print("hung redis, request durations:", [round(t, 2) for t in took])
    assert sum(took) < 15, took
    redis_settings.server.resume()
    assert_back_and_swept(redis_settings)


def test_a_redis_failure_inside_a_request_is_503_with_retry_after(client_a, monkeypatch) -> None:
    import redis

    from memoryhub import selectors

    def unreachable(**kwargs: object) -> None:
        raise redis.exceptions.ConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")

    monkeypatch.setattr(selectors, "conversation_get", unreachable)
    client, _ = client_a
    response = client.get(URL)
    assert response.status_code == 503
    assert response.json()["error"]["code"] == "unavailable"
    assert int(response["Retry-After"]) >= 1
