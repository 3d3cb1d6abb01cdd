"""Prometheus metrics of the kernel. Apps define theirs beside their code, all `memoryhub_`-prefixed."""

from prometheus_client import Counter, Gauge, Histogram

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
QUEUE_DEPTH = Gauge("memoryhub_archival_jobs_pending", "Archival jobs not yet done")
