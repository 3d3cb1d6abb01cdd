"""`/healthz` answers anyone: it says which dependency failed, never the driver's message (addresses,
ports, database and user names), which goes to the log."""

from __future__ import annotations

import json
import logging

import psycopg
import pytest
from django.db import connection
from django.test import RequestFactory

from memoryhub.views import healthz

pytestmark = pytest.mark.django_db

DRIVER_MESSAGE = ('connection to server at "db.internal" (10.0.3.7), port 5432 failed: FATAL: password '
                  'authentication failed for user "memoryhub_prod"')


class _Records(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(record.getMessage())


def test_an_unauthenticated_caller_learns_what_failed_not_where(settings) -> None:
    settings.REDIS_URL = "redis://127.0.0.1:1/0"

    def refuse(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        raise psycopg.OperationalError(DRIVER_MESSAGE)

    records = _Records()
    logger = logging.getLogger("memoryhub.views")
    logger.addHandler(records)
    try:
        with connection.execute_wrapper(refuse):
            # The view itself: through the middleware, this process's metrics would keep a 503 of /healthz,
            # which tests/kernel/test_metrics.py reads back from every process's files.
            response = healthz(RequestFactory().get("/healthz"))
    finally:
        logger.removeHandler(records)
    assert response.status_code == 503
    body = json.loads(response.content)
    assert body["checks"]["database"]["ok"] is False and body["checks"]["broker"]["ok"] is False
    text = response.content.decode()
    for detail in ("db.internal", "10.0.3.7", "memoryhub_prod", "127.0.0.1:1", "Connection refused"):
        assert detail not in text
    logged = "\n".join(records.lines)
    assert "db.internal" in logged and "127.0.0.1" in logged  # the operator still reads why


def test_the_broker_away_is_degraded_not_unavailable(settings, db) -> None:
    """Every request works without Redis (the outbox waits for the sweeper): a 503 took every web node out of a
    load balancer's rotation."""
    settings.REDIS_URL = "redis://127.0.0.1:1/0"
    response = healthz(RequestFactory().get("/healthz"))
    body = json.loads(response.content)
    assert response.status_code == 200 and body["status"] == "degraded"
    assert body["checks"]["broker"]["ok"] is False and body["checks"]["database"]["ok"] is True


def test_the_database_away_is_a_503_to_retry_not_a_500(client_a) -> None:
    client, _ = client_a

    def refuse(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        raise psycopg.OperationalError(DRIVER_MESSAGE)

    with connection.execute_wrapper(refuse):
        response = client.post("/api/v1/search", {"query": "cat", "user_id": "alice"}, format="json")
    assert response.status_code == 503, response.content
    assert response.json()["error"]["code"] == "unavailable" and response["Retry-After"]
    assert DRIVER_MESSAGE not in response.content.decode()
