"""Operational endpoints: health and Prometheus metrics."""

from __future__ import annotations

import contextlib
import time

import prometheus_client
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.http import require_GET

from memoryhub import metrics
from memoryhub.selectors import archival_jobs_unfinished_count


def _check_database() -> dict[str, object]:
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        return {"ok": row is not None, "pgvector": row[0] if row else None,
                "ms": round((time.monotonic() - started) * 1000, 1)}
    except Exception as exc:
        return {"ok": False, "error": str(exc)}


def _check_broker() -> dict[str, object]:
    if not settings.REDIS_URL:
        return {"ok": True, "mode": "in-process"}
    import redis

    started = time.monotonic()
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1).ping()
        return {"ok": True, "mode": "redis", "ms": round((time.monotonic() - started) * 1000, 1)}
    except Exception as exc:
        return {"ok": False, "mode": "redis", "error": str(exc)}


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check_database(), "broker": _check_broker()}
    healthy = all(c["ok"] for c in checks.values())
    return JsonResponse({"status": "ok" if healthy else "unavailable", "checks": checks},
                        status=200 if healthy else 503)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    # The queue depth is read at scrape time: cheaper than keeping a gauge in step on every write.
    with contextlib.suppress(Exception):  # a database outage must not hide the other metrics
        metrics.QUEUE_DEPTH.set(archival_jobs_unfinished_count())
    return HttpResponse(prometheus_client.generate_latest(), content_type=prometheus_client.CONTENT_TYPE_LATEST)
