"""Retrieval evaluation on the format of `shared/eval/FORMAT.md`: recall@k, hit@k, MRR, nDCG@10."""

from __future__ import annotations

import math
import statistics
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.db import transaction
from django.utils.dateparse import parse_datetime
from django.utils.timezone import is_naive, make_aware

from memoryhub import services as kernel_services
from memoryhub.celery import app as celery_app
from memoryhub.dates import without_dates
from memoryhub.models import Conversation, Tenant
from rag import index as bm25_index
from rag.memories import consolidation
from rag.selectors import Mode, chunks_search


@dataclass
class QueryOutcome:
    category: str
    ranked_turns: list[str]
    evidence: list[str]
    latency_ms: float


@dataclass
class Report:
    ks: list[int]
    per_category: dict[str, dict[str, float]] = field(default_factory=dict)
    overall: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, float] = field(default_factory=dict)
    counts: dict[str, int] = field(default_factory=dict)
    ingest: dict[str, float] = field(default_factory=dict)
    # Evidence in context: per budget (tokens), the share of a query's evidence turns whose text the
    # assembled context (POST /api/v1/context without a session) contains, averaged over queries.
    context: dict[int, float] = field(default_factory=dict)
    # Every session consolidated after the ingest (`evaluate(consolidated=True)`).
    consolidated: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {"ks": self.ks, "overall": self.overall, "per_category": self.per_category,
                "latency_ms": self.latency_ms, "counts": self.counts, "ingest": self.ingest,
                "evidence_in_context": self.context, "consolidated": self.consolidated}


def _score(outcomes: Sequence[QueryOutcome], ks: Sequence[int]) -> dict[str, float]:
    metrics: dict[str, float] = {}
    for k in ks:
        recalls, hits = [], []
        for o in outcomes:
            top = set(o.ranked_turns[:k])
            found = sum(1 for e in set(o.evidence) if e in top)
            recalls.append(found / len(set(o.evidence)))
            hits.append(1.0 if found else 0.0)
        metrics[f"recall@{k}"] = statistics.fmean(recalls)
        metrics[f"hit@{k}"] = statistics.fmean(hits)
    rr, ndcg = [], []
    for o in outcomes:
        evidence = set(o.evidence)
        rank = next((i for i, t in enumerate(o.ranked_turns, start=1) if t in evidence), None)
        rr.append(1 / rank if rank else 0.0)
        dcg = sum(1 / math.log2(i + 1) for i, t in enumerate(o.ranked_turns[:10], start=1) if t in evidence)
        ideal = sum(1 / math.log2(i + 1) for i in range(1, min(len(evidence), 10) + 1))
        ndcg.append(dcg / ideal)
    metrics["mrr"] = statistics.fmean(rr)
    metrics["ndcg@10"] = statistics.fmean(ndcg)
    return metrics


def _turn_ids(items: Sequence[Any]) -> list[str]:
    """The turns each result was made from, in rank order: a dialog chunk's own turn, a typed
    memory's source turns (FORMAT.md: a hit for every evidence id it was made from)."""
    ranked: list[str] = []
    for item in items:
        meta = item.chunk["meta"]
        for turn in [meta.get("external_id"), *meta.get("source_external_ids", [])]:
            if turn and turn not in ranked:
                ranked.append(turn)
    return ranked


def _evidence_in_context(tenant: Tenant, conversations: Sequence[dict[str, Any]], queries: Sequence[dict[str, Any]],
                         budgets: Sequence[int], progress_factory: Callable[[int, str], Any]) -> dict[int, float]:
    from rag.context import context_assemble  # the context imports every app's selectors

    texts = {(c["user_id"], t["id"]): " ".join(without_dates(t["text"]).split())
             for c in conversations for s in c["sessions"] for t in s["turns"]}
    shares: dict[int, list[float]] = {b: [] for b in budgets}
    with progress_factory(len(queries) * len(budgets), "context") as bar:
        for q in queries:
            for budget in budgets:
                # A turn shown with the dates its relative ones meant (a "when" question) is shown all the same.
                rendered = " ".join(without_dates(context_assemble(
                    tenant_id=tenant.pk, user_id=q["user_id"], query=q["question"], session_id=None,
                    budget_tokens=budget).render()).split())
                evidence = set(q["evidence"])
                found = sum(1 for e in evidence if texts.get((q["user_id"], e), "\0") in rendered)
                shares[budget].append(found / len(evidence))
                bar.update(1)
    return {b: round(statistics.fmean(v), 4) for b, v in shares.items() if v}


def split_half(data: dict[str, Any], half: str) -> dict[str, Any]:
    """The dev split that every retrieval setting is chosen on ("tune") and reported on ("test"):
    with several conversations, the first ceil(n/2) are tuning (LoCoMo dev: 0-2 vs 3-4), since
    unseen users are what a setting must generalise to; with one (MADial), alternate queries."""
    if half not in ("tune", "test"):
        raise ValueError(f"half must be tune or test, not {half!r}")
    conversations = data["conversations"]
    if len(conversations) > 1:
        cut = (len(conversations) + 1) // 2
        chosen = conversations[:cut] if half == "tune" else conversations[cut:]
        users = {c["user_id"] for c in chosen}
        queries = [q for q in data["queries"] if q["user_id"] in users]
    else:
        chosen = conversations
        queries = [q for i, q in enumerate(data["queries"]) if (i % 2 == 0) == (half == "tune")]
    return {**data, "name": f"{data.get('name', 'eval')}[{half}]", "conversations": chosen, "queries": queries}


def percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def _aware(value: str) -> datetime:
    parsed = parse_datetime(value)
    if parsed is None:
        raise ValueError(f"bad started_at: {value!r}")
    return make_aware(parsed) if is_naive(parsed) else parsed


def ingest(tenant: Tenant, conversations: Iterable[dict[str, Any]], progress: Callable[[int], None]) -> int:
    """Feed each session through the same service as the API; indexing runs in-process."""
    turns = 0
    for conversation in conversations:
        for session in conversation["sessions"]:
            start = _aware(session["started_at"])
            messages = [
                kernel_services.IncomingMessage(
                    role=turn.get("role", "user"), text=turn["text"], speaker=turn.get("speaker", ""),
                    external_id=turn["id"], created_at=start + timedelta(seconds=30 * i),
                )
                for i, turn in enumerate(session["turns"])
                if turn["text"].strip()
            ]
            kernel_services.messages_append(
                tenant=tenant, user_id=conversation["user_id"], session_id=session["session_id"], messages=messages,
            )
            turns += len(messages)
            progress(len(messages))
    return turns


def consolidate(tenant: Tenant, progress: Callable[[int], None]) -> int:
    """Consolidate every session of the tenant to its end, as the idle sweep (`consolidations_due`) does once
    a session falls quiet: what a deployed service searches is the turns and the typed memories and insights
    made of them. During the ingest only sessions of MEMORY_CONSOLIDATION_EVERY messages are consolidated, up
    to there. Runs in this process, one session after the other (offline rules, or the configured LLM)."""
    runs = 0
    for conversation in Conversation.objects.filter(tenant=tenant).order_by("pk"):
        with transaction.atomic():
            run = consolidation.consolidation_request(conversation, trigger="idle")["consolidation"]
        consolidation.consolidation_run(run_id=run)
        runs += 1
        progress(1)
    return runs


def evaluate(
    data: dict[str, Any],
    *,
    ks: Sequence[int],
    mode: Mode,
    progress_factory: Callable[[int, str], Any],
    search_options: dict[str, Any] | None = None,
    context_budgets: Sequence[int] = (),
    consolidated: bool = False,
) -> Report:
    """Ingest into a throwaway tenant, run every query, score, and remove the tenant. `consolidated`: every
    session consolidated after the ingest (`consolidate`), as a deployed service holds them."""
    ks = sorted(set(ks))
    conversations = data["conversations"]
    queries = [q for q in data["queries"] if q.get("evidence")]
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True  # the evaluation owns its pipeline; no broker needed
    tenant = Tenant.objects.create(name=f"eval-{uuid.uuid4().hex[:12]}")
    report = Report(ks=list(ks), consolidated=consolidated)
    try:
        total_turns = sum(len(s["turns"]) for c in conversations for s in c["sessions"])
        started = time.perf_counter()
        with progress_factory(total_turns, "ingest") as bar:
            turns = ingest(tenant, conversations, bar.update)
        seconds = time.perf_counter() - started
        report.ingest = {"messages": turns, "seconds": round(seconds, 2), "messages_per_s": round(turns / seconds, 1)}
        if consolidated:
            sessions = sum(len(c["sessions"]) for c in conversations)
            with progress_factory(sessions, "consolidate") as bar:
                consolidate(tenant, bar.update)

        outcomes: list[QueryOutcome] = []
        with progress_factory(len(queries), f"search ({mode})") as bar:
            for q in queries:
                t = time.perf_counter()
                result = chunks_search(tenant_id=tenant.pk, user_id=q["user_id"], query=q["question"], k=max(ks),
                                       mode=mode, include_tenant_documents=False, **(search_options or {}))
                latency = (time.perf_counter() - t) * 1000
                outcomes.append(QueryOutcome(q.get("category", "all"), _turn_ids(result.items), q["evidence"],
                                             latency))
                bar.update(1)
        if context_budgets:
            report.context = _evidence_in_context(tenant, conversations, queries, context_budgets, progress_factory)
    finally:
        for conversation in conversations:
            bm25_index.forget(tenant.pk, f"user:{conversation['user_id']}")
        tenant.delete()
        celery_app.conf.task_always_eager = eager

    by_category: dict[str, list[QueryOutcome]] = defaultdict(list)
    for o in outcomes:
        by_category[o.category].append(o)
    report.per_category = {c: _score(os_, ks) for c, os_ in sorted(by_category.items())}
    report.overall = _score(outcomes, ks)
    report.counts = {c: len(os_) for c, os_ in sorted(by_category.items())} | {"all": len(outcomes)}
    latencies = [o.latency_ms for o in outcomes]
    report.latency_ms = {"p50": round(percentile(latencies, 0.5), 2), "p95": round(percentile(latencies, 0.95), 2)}
    return report
