"""Read-path costs that must not creep back: connection reuse, queries per request."""

from __future__ import annotations

from django.conf import settings


def test_database_connections_are_kept_between_requests_with_a_health_check() -> None:
    # A fresh PostgreSQL backend per request doubled a search's cost (bench/request_cost.py).
    db = settings.DATABASES["default"]
    assert db["CONN_MAX_AGE"] > 0
    assert db["CONN_HEALTH_CHECKS"] is True
