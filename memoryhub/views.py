"""Operational endpoints: a landing page, health and Prometheus metrics."""

from __future__ import annotations

import glob
import hmac
import ipaddress
import logging
import os
import time
from collections.abc import Iterator
from typing import Any

import prometheus_client
from django.conf import settings
from django.db import connection
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.views.decorators.http import require_GET
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.multiprocess import MultiProcessCollector

from memoryhub import metrics, multiprocess, registry
from memoryhub.exceptions import error_body

logger = logging.getLogger(__name__)


def _check_database() -> dict[str, object]:
    started = time.monotonic()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        found = {"ok": row is not None, "pgvector": row[0] if row else None,
                 "ms": round((time.monotonic() - started) * 1000, 1)}
        from rag import vector_width

        problem = vector_width.problem()
        if problem:
            # Every write of a vector would fail (and a search 503): not a healthy instance.
            found |= {"ok": False, "error": "vector_width", "message": problem}
        return found
    except Exception as exc:
        return _failed("database", exc, {})


def _failed(check: str, exc: Exception, fields: dict[str, object]) -> dict[str, object]:
    """`/healthz` answers anyone: the driver's message (server address, port, database and user
    names) goes to the log, the answer names the kind of failure."""
    logger.warning("healthz: %s check failed: %s", check, exc)
    return {"ok": False, **fields, "error": type(exc).__name__}


def _check_broker() -> dict[str, object]:
    if not settings.REDIS_URL:
        return {"ok": True, "mode": "in-process"}
    import redis

    started = time.monotonic()
    try:
        redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=1, socket_timeout=1).ping()
        return {"ok": True, "mode": "redis", "ms": round((time.monotonic() - started) * 1000, 1)}
    except Exception as exc:
        return _failed("broker", exc, {"mode": "redis"})


LANDING_LINKS = (
    ("API docs", "docs", "the operations, their inputs and errors; try them with an API key"),
    ("OpenAPI schema", "schema", "for client generators"),
    ("Admin", "admin:index", "review queues, keys, jobs (staff login)"),
    ("Health", "healthz", "database and broker checks"),
    ("Metrics", "metrics", "Prometheus, loopback or METRICS_TOKEN"),
)


@require_GET
def landing(request: HttpRequest) -> HttpResponse:
    """`/` and `/api/`: where things are, instead of a bare 404."""
    items = format_html_join("\n", '<li><a href="{}">{}</a>: {}</li>',
                             ((reverse(name), title, what) for title, name, what in LANDING_LINKS))
    return HttpResponse(format_html(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>MemoryHub</title></head><body>"
        "<h1>MemoryHub</h1><p>Long-term memory for LLM chat apps. The API lives under <code>/api/v1/</code> "
        "(<code>Authorization: Bearer &lt;API key&gt;</code>).</p><ul>{}</ul></body></html>", items))


@require_GET
def healthz(request: HttpRequest) -> JsonResponse:
    checks = {"database": _check_database(), "broker": _check_broker()}
    # Without the broker every request still works (intake writes its outbox, the sweeper sends the jobs
    # later): a 503 then took every web node out of a load balancer's rotation, an outage of what was only
    # slower. The database is what a request cannot do without.
    if not checks["database"]["ok"]:
        return JsonResponse({"status": "unavailable", "checks": checks}, status=503)
    return JsonResponse({"status": "ok" if checks["broker"]["ok"] else "degraded", "checks": checks}, status=200)


class ProcessFilesCollector:
    """Every process's counters and histograms: the files of every directory under METRICS_DIR
    (one per process tree: gunicorn, Celery workers, ...), merged."""

    def __init__(self, root: str) -> None:
        self.root = root

    def collect(self) -> Any:
        for _ in range(3):
            files = glob.glob(os.path.join(self.root, "*", "*.db"))
            try:
                return MultiProcessCollector.merge(files, accumulate=True)
            except FileNotFoundError:
                continue  # a process tree that ended took its directory between glob and read
        return []


class ScrapeCollector:
    """State read from the database at scrape time (queue depth, and what apps register). A
    failing function (the database away) shows as memoryhub_metrics_collector_up 0 and does not
    hide the rest."""

    def collect(self) -> Iterator[Any]:
        up = GaugeMetricFamily("memoryhub_metrics_collector_up",
                               "1 when a scrape-time collector (database state) answered", labels=["collector"])
        for name, collect in [("archival_queue", metrics.archival_queue_depth), *registry.scrape_metrics.items()]:
            try:
                families = list(collect())
            except Exception as exc:
                logger.warning("metrics collector %s failed: %s", name, exc)
                up.add_metric([name], 0)
                continue
            up.add_metric([name], 1)
            yield from families
        yield up


def _client_allowed(request: HttpRequest) -> bool:
    token = settings.METRICS_TOKEN
    header = request.headers.get("Authorization", "")
    if token and hmac.compare_digest(header.encode(), f"Bearer {token}".encode()):
        return True
    # A request relayed by a proxy on this host arrives from loopback too; it is not local.
    if any(h in request.headers for h in ("X-Forwarded-For", "Forwarded", "X-Real-IP")):
        return False
    try:
        address = ipaddress.ip_address(request.META.get("REMOTE_ADDR", ""))
    except ValueError:
        return False
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped:
        address = address.ipv4_mapped
    return any(address in network for network in settings.METRICS_ALLOWED_NETWORKS)


@require_GET
def metrics_view(request: HttpRequest) -> HttpResponse:
    """Prometheus text for every process (multiprocess mode), plus state read at scrape time.
    Served to METRICS_ALLOWED_NETWORKS (default loopback) or with `Bearer METRICS_TOKEN`."""
    if not _client_allowed(request):
        return JsonResponse(error_body("forbidden", "Metrics are served to METRICS_ALLOWED_NETWORKS, or with "
                                                    "'Authorization: Bearer <METRICS_TOKEN>'."), status=403)
    scrape = prometheus_client.CollectorRegistry()
    scrape.register(ScrapeCollector())
    if multiprocess.active():
        scrape.register(ProcessFilesCollector(str(settings.METRICS_DIR)))
        body = prometheus_client.generate_latest(scrape)
    else:  # multiprocess mode was not set up: this process's own metrics, from memory
        body = prometheus_client.generate_latest() + prometheus_client.generate_latest(scrape)
    return HttpResponse(body, content_type=prometheus_client.CONTENT_TYPE_LATEST)
