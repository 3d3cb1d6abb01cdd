"""Prometheus metrics of the kernel. Apps define theirs beside their code, all `memoryhub_`-prefixed.

Counters and histograms are written by whichever process counts them, to files in multiprocess
mode (`memoryhub/multiprocess.py`). What describes the database's state (queue depth, people per
circle) is not kept in gauges on write paths: it is read at scrape time by the functions apps
register with `registry.register_scrape_metrics` (the kernel's own is `archival_queue_depth`).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

LLM_CALLS = Counter(
    "memoryhub_llm_calls_total", "LLM chat calls by agent and outcome", ["agent", "outcome"]
)
LLM_TOKENS = Counter(
    "memoryhub_llm_tokens_total", "LLM tokens by agent and kind (prompt/completion)", ["agent", "kind"]
)
LLM_COST = Counter("memoryhub_llm_cost_usd_total", "Estimated LLM cost in USD by agent", ["agent"])
LLM_LATENCY = Histogram(
    "memoryhub_llm_call_seconds", "LLM call latency including retries", ["agent"],
    buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60),
)
EMBEDDING_CALLS = Counter(
    "memoryhub_embedding_texts_total", "Texts embedded by provider", ["provider"]
)
EMBEDDER_UNAVAILABLE = Counter(
    "memoryhub_embedder_unavailable_total", "Searches answered by words alone: the embedder was away", ["where"]
)
EMBEDDING_LATENCY = Histogram(
    "memoryhub_embedding_batch_seconds", "Embedding batch latency by provider", ["provider"],
    buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5),
)
RETRIEVAL_LATENCY = Histogram(
    "memoryhub_retrieval_latency_seconds", "Search latency by mode", ["mode"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.12, 0.25, 0.5, 1),
)
ARCHIVAL_JOBS = Counter(
    "memoryhub_archival_jobs_total", "Archival jobs by outcome", ["outcome"]
)
SENSITIVE_MASKED = Counter(
    "memoryhub_sensitive_masked_total",
    "Sensitive numbers masked, by kind and where (message, meta, document, memory, chunk, context, bio, "
    "consolidation, llm_prompt)",
    ["kind", "where"],
)
HTTP_REQUESTS = Counter(
    "memoryhub_http_requests_total", "HTTP requests by method, route template and status code",
    ["method", "route", "status"],
)
HTTP_LATENCY = Histogram(
    "memoryhub_http_request_duration_seconds", "HTTP request latency by method and route template",
    ["method", "route"], buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10),
)


def archival_queue_depth() -> Iterator[GaugeMetricFamily]:
    """Unfinished archival jobs by kind and status, read at scrape time."""
    from memoryhub.models import ArchivalJob
    from memoryhub.selectors import archival_jobs_unfinished_by_kind_status

    counts = archival_jobs_unfinished_by_kind_status()
    family = GaugeMetricFamily("memoryhub_archival_queue_depth", "Unfinished archival jobs by kind and status",
                               labels=["kind", "status"])
    for kind in ArchivalJob.Kind.values:
        for status in (ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING, ArchivalJob.Status.FAILED):
            family.add_metric([kind, status], counts.get((kind, status), 0))
    yield family
