"""The API rate limit holds under concurrency: exactly `limit` requests pass in a window.

Real concurrent clients (threads, each with its own HTTP connection) against a live server, with
the counts in Redis (the test's own) and in-process (the embedded mode, and Redis away).
"""

from __future__ import annotations

import http.client
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import urlsplit

import pytest

from memoryhub import throttling
from memoryhub.auth import ApiKeyRateThrottle
from tests.factories import make_tenant
from tests.start_up import start_up

CLIENTS = 16
LIMIT = 60
REQUESTS = 300
PATH = "/api/v1/users/u1/sessions/s1/messages"  # 404 behind the throttle: cheap, and it counts


def hammer(base_url: str, key: str) -> tuple[Counter[int], set[str]]:
    """REQUESTS requests from CLIENTS threads, each on its own keep-alive connection."""
    host = urlsplit(base_url)
    per_client = REQUESTS // CLIENTS + 1
    barrier = threading.Barrier(CLIENTS)
    statuses: Counter[int] = Counter()
    retry_after: set[str] = set()
    lock = threading.Lock()

    def client(n: int) -> None:
        conn = http.client.HTTPConnection(host.hostname, host.port, timeout=30)
        barrier.wait()  # all start together
        for i in range(per_client):
            if n * per_client + i >= REQUESTS:
                break
            conn.request("GET", PATH, headers={"Authorization": f"Bearer {key}"})
            response = conn.getresponse()
            response.read()
            with lock:
                statuses[response.status] += 1
                if response.status == 429:
                    retry_after.add(response.getheader("Retry-After") or "")
        conn.close()

    with ThreadPoolExecutor(CLIENTS) as pool:
        list(pool.map(client, range(CLIENTS)))
    return statuses, retry_after


@pytest.fixture
def limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(ApiKeyRateThrottle, "THROTTLE_RATES", {"api_key": f"{LIMIT}/hour"})
    throttling.local_counter.clear()


def assert_exact(statuses: Counter[int], retry_after: set[str]) -> None:
    assert sum(statuses.values()) == REQUESTS
    assert statuses[429] == REQUESTS - LIMIT, statuses
    assert statuses[404] == LIMIT, statuses  # behind the throttle, the session does not exist
    assert retry_after and all(0 < int(v) <= 3600 for v in retry_after), retry_after


@pytest.mark.django_db(transaction=True)
def test_rate_limit_counted_in_redis_lets_exactly_the_limit_through(live_server, redis_settings, limited) -> None:
    _, key = make_tenant("busy")
    statuses, retry_after = hammer(live_server.url, key)
    print(f"redis counts: {REQUESTS} requests at {CLIENTS} clients → {dict(statuses)}")
    assert_exact(statuses, retry_after)
    assert throttling.local_counter._windows == {}  # every count went to Redis


@pytest.mark.django_db(transaction=True)
def test_rate_limit_counted_in_process_lets_exactly_the_limit_through(live_server, settings, limited) -> None:
    settings.REDIS_URL = ""  # the embedded mode
    _, key = make_tenant("busy")
    statuses, retry_after = hammer(live_server.url, key)
    print(f"in-process counts: {REQUESTS} requests at {CLIENTS} clients → {dict(statuses)}")
    assert_exact(statuses, retry_after)


@pytest.mark.django_db(transaction=True)
def test_rate_limit_falls_back_to_in_process_counts_while_redis_is_away(live_server, redis_settings,
                                                                         limited) -> None:
    _, key = make_tenant("busy")
    redis_settings.server.stop()
    statuses, retry_after = hammer(live_server.url, key)
    assert_exact(statuses, retry_after)


def test_a_window_closes_and_a_new_one_opens() -> None:
    counter = throttling.LocalCounter()
    assert [counter.hit("k", 0.2).count for _ in range(3)] == [1, 2, 3]
    assert counter.hit("other", 0.2).count == 1
    import time

    time.sleep(0.25)
    hit = counter.hit("k", 0.2)
    assert hit.count == 1 and 0 < hit.reset_in <= 0.2 + 1e-6


@pytest.mark.parametrize("rate", ["1200", "1200/fortnight", "0/min", "many/min"])
def test_a_bad_throttle_rate_stops_start_up_naming_the_variable(rate: str) -> None:
    # DRF parses the rate on every request: it used to start and answer every API call 500.
    done = start_up(API_THROTTLE_RATE=rate)
    assert done.returncode != 0
    assert "ImproperlyConfigured: API_THROTTLE_RATE must be <requests>/<second|minute|hour|day>" in done.stderr
