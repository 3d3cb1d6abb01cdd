"""Shared fixtures. The database is the real PostgreSQL + pgvector (embedded unless DATABASE_URL)."""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from rest_framework.test import APIClient

from memoryhub import beat as memoryhub_beat
from memoryhub import deferred
from memoryhub.beat import EmbeddedBeat
from memoryhub.celery import app as celery_app
from memoryhub.models import Tenant
from tests.factories import make_tenant

pytest_plugins = ["tests.fixtures_llm", "tests.redis_server"]


@pytest.fixture(autouse=True)
def _celery_in_process() -> Iterator[None]:
    """Tasks run in-process unless a test asks for a real broker (even when REDIS_URL is set in CI,
    so one test's jobs are never picked up by a worker another test started)."""
    keys = ("task_always_eager", "task_eager_propagates", "broker_url", "task_default_queue")
    saved = {k: celery_app.conf[k] for k in keys}
    celery_app.conf.update(task_always_eager=True, task_eager_propagates=True)
    yield
    celery_app.conf.update(saved)
    reset_celery_connections()


def reset_celery_connections() -> None:
    # Celery caches its connection and producer pools; after changing broker_url they must go.
    celery_app._pool = None
    with contextlib.suppress(AttributeError, KeyError):
        celery_app.__dict__["amqp"]._producer_pool = None
    # The result backend is built from result_backend on first use and cached (per thread).
    celery_app._backend_cache = None
    with contextlib.suppress(AttributeError):
        del celery_app._local.backend


@pytest.fixture
def tenant(db: None) -> Tenant:
    return make_tenant("tenant-a")[0]


@pytest.fixture
def api_client_for(db: None) -> Callable[[str], tuple[APIClient, Tenant]]:
    """A function that creates a tenant and an API client authenticated with its key."""

    def factory(name: str) -> tuple[APIClient, Tenant]:
        tenant, raw = make_tenant(name)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client, tenant

    return factory


@pytest.fixture
def client_a(api_client_for: Callable[[str], tuple[APIClient, Tenant]]) -> tuple[APIClient, Tenant]:
    return api_client_for("tenant-a")


@pytest.fixture
def client_b(api_client_for: Callable[[str], tuple[APIClient, Tenant]]) -> tuple[APIClient, Tenant]:
    return api_client_for("tenant-b")


@pytest.fixture
def schema(db: None) -> dict:
    """The OpenAPI schema as served."""
    response = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert response.status_code == 200
    return json.loads(response.content)


@pytest.fixture
def schema_allows(schema: dict) -> Callable[[dict, Any], bool]:
    """Whether a value is valid for a part of the schema (its `$ref`s resolved), as a
    schema-driven client or fuzzer would judge it."""
    import jsonschema

    def allows(part: dict, value: Any) -> bool:
        try:
            jsonschema.validate(value, {**part, "components": schema["components"]})
        except jsonschema.ValidationError:
            return False
        return True

    return allows



@pytest.fixture
def web_process_beat() -> Iterator[EmbeddedBeat]:
    """A beat running in this process, as in a web process of the embedded mode (wsgi.py): work the
    process defers (memoryhub.deferred) runs on its background thread; at the end, all of it has run."""
    beat = EmbeddedBeat({"memories-consolidate-due": {"task": "rag.memories.tasks.memories_consolidate_due",
                                                      "schedule": 0.2}}, tick=0.05)
    beat.start()
    try:
        deadline = time.monotonic() + 5
        while not memoryhub_beat.running() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert memoryhub_beat.running()
        yield beat
    finally:
        beat.stop()
        beat.join(10)
        assert deferred.runner().wait_idle(30)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """Name the browser test's screenshots (tests/browser, kept under var/browser/) and its time,
    after the run, whether it ran in this process or in an xdist worker."""
    shots: dict[str, None] = {}
    seconds = []
    for reports in terminalreporter.stats.values():
        for report in reports:
            for name, value in getattr(report, "user_properties", ()):
                if name == "screenshot":
                    shots[value] = None
                elif name == "browser_seconds" and getattr(report, "when", "") == "call":
                    seconds.append(value)
    if shots:
        terminalreporter.write_sep("-", "browser test screenshots")
        for path in shots:
            terminalreporter.write_line(path)
        if seconds:
            terminalreporter.write_line(f"browser session: {seconds[0]} s")
