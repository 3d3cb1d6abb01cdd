"""Importance and recency decay in the ranking of typed memories.

Each test also runs with the boosts switched off and asserts the opposite order, so it shows the
boosts are what decides (the texts are chosen so relevance alone prefers the other memory)."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from rag.memories.services import MemoryInput, memories_create
from rag.selectors import SearchFilters, chunks_search

BETTER_MATCH = "Guitar band, guitar band!"
WEAKER_MATCH = "Alex once played the guitar in a small band at school"


def _write(tenant, text: str, importance: float, days_old: float, category: str) -> None:
    memories_create(tenant=tenant, user_id="alex", conf_uid="neiri", items=[MemoryInput(
        text=text, kind="user", category=category, importance=importance,
        occurred_at=timezone.now() - timedelta(days=days_old))])


def _ranked(tenant) -> list[str]:
    result = chunks_search(tenant_id=tenant.pk, user_id="alex", query="guitar band", k=5, fusion="rrf",
                           filters=SearchFilters(types=("memory",)))
    return [item.chunk["text"] for item in result.items]


def test_important_old_memory_outranks_trivial_recent_one(tenant, settings) -> None:
    _write(tenant, WEAKER_MATCH, importance=0.95, days_old=200, category="KeyFacts")
    _write(tenant, BETTER_MATCH, importance=0.1, days_old=0, category="KeyFacts")
    assert _ranked(tenant)[0] == WEAKER_MATCH
    settings.MEMORY_IMPORTANCE_WEIGHT, settings.MEMORY_RECENCY_WEIGHT = 0.0, 0.0
    assert _ranked(tenant)[0] == BETTER_MATCH  # without the boosts relevance alone decides


def test_trivial_old_memory_decays_below_a_fresh_one(tenant, settings) -> None:
    _write(tenant, BETTER_MATCH, importance=0.3, days_old=60, category="chat")
    _write(tenant, WEAKER_MATCH, importance=0.3, days_old=0, category="chat")
    assert _ranked(tenant)[0] == WEAKER_MATCH
    settings.MEMORY_RECENCY_WEIGHT = 0.0
    assert _ranked(tenant)[0] == BETTER_MATCH


def test_half_life_is_per_category(tenant, settings) -> None:
    # The same age: a fact about the user (half-life 180 days) keeps its weight, chat (7) loses it.
    _write(tenant, BETTER_MATCH, importance=0.5, days_old=30, category="chat")
    _write(tenant, WEAKER_MATCH, importance=0.5, days_old=30, category="FactsAboutUser")
    result = chunks_search(tenant_id=tenant.pk, user_id="alex", query="guitar band", k=5, fusion="rrf",
                           filters=SearchFilters(types=("memory",)))
    boosts = {item.chunk["category"]: item.boosts["recency"] for item in result.items}
    assert boosts["FactsAboutUser"] > 0.9 > 0.6 > boosts["chat"]
    assert result.items[0].chunk["text"] == WEAKER_MATCH
    settings.MEMORY_HALF_LIFE_DAYS = {**settings.MEMORY_HALF_LIFE_DAYS, "chat": 180.0}
    assert _ranked(tenant)[0] == BETTER_MATCH


def test_reseen_memory_counts_age_from_last_seen(tenant) -> None:
    _write(tenant, BETTER_MATCH, importance=0.3, days_old=60, category="chat")
    result = chunks_search(tenant_id=tenant.pk, user_id="alex", query="guitar", k=1,
                           filters=SearchFilters(types=("memory",)))
    assert result.items[0].boosts["recency"] < 0.51
