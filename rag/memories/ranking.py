"""Importance and recency in the ranking of typed memories.

A memory's fused score is multiplied by
    importance: 1 + MEMORY_IMPORTANCE_WEIGHT * (importance - 0.5)          (0.5 .. 1.5 by default)
    recency:    (1 - W) + W * 0.5 ** (age_days / half_life[category])       (0.5 .. 1.0 with W = 0.5)
Age counts from when the memory was last seen again, else from its timestamp. The half-life is
per category (MEMORY_HALF_LIFE_DAYS): a fact about the user stays relevant for months, the mood
of a stream for days. Multiplicative factors keep a memory that does not match the query low
however important it is; bounded factors keep recency from erasing relevance.

Only typed memories get these factors. Dialog chunks are the raw evidence: on LoCoMo, whose
questions ask about sessions months apart, decaying them by age costs recall (see the README).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from django.conf import settings

DEFAULT_HALF_LIFE_DAYS = 30.0


def memory_boosts(chunk: dict[str, Any], now: datetime) -> dict[str, float]:
    seen = chunk.get("last_seen_at") or chunk["created_ts"]
    age_days = max(0.0, (now - seen).total_seconds() / 86400)
    half_life = settings.MEMORY_HALF_LIFE_DAYS.get(chunk.get("category") or "", DEFAULT_HALF_LIFE_DAYS)
    weight = settings.MEMORY_RECENCY_WEIGHT
    return {
        "importance": 1 + settings.MEMORY_IMPORTANCE_WEIGHT * (chunk["importance"] - 0.5),
        "recency": (1 - weight) + weight * 0.5 ** (age_days / half_life),
    }
