"""People settings, read from Django settings with these defaults (see the report for settings.py)."""

from __future__ import annotations

from typing import Any

from django.conf import settings

DEFAULTS: dict[str, Any] = {
    # SearchPeople (seed 000): minimum score, result count.
    "PEOPLE_SEARCH_THRESHOLD": 0.65,
    "PEOPLE_SEARCH_MAX_RESULTS": 10,
    # Reranker: candidates shown to the model, and the most it may choose (seed 000: 50 and 10).
    "PEOPLE_RERANK_CANDIDATES": 50,
    "PEOPLE_RERANK_MAX_PEOPLE": 10,
    # The reranker's own limits (seconds, retries), below the global LLM_TIMEOUT / LLM_MAX_RETRIES.
    "PEOPLE_RERANK_TIMEOUT": 10.0,
    "PEOPLE_RERANK_MAX_RETRIES": 0,
    # Candidates below this score are not worth a reranker's attention.
    "PEOPLE_RERANK_MIN_SCORE": 0.3,
    # Dedup: the weak rules' thresholds.
    "PEOPLE_DEDUP_FUZZY_THRESHOLD": 0.8,
    "PEOPLE_DEDUP_EMBEDDING_THRESHOLD": 0.9,
    # Archivist: how many known people the prompt lists, and how many Added ops one reply may make.
    "PEOPLE_ARCHIVIST_MAX_KNOWN": 200,
    "PEOPLE_ARCHIVIST_MAX_ADDED": 30,
    "PEOPLE_BIO_MAX_CHARS": 1000,
    "PEOPLE_INNER_CIRCLE_MAX": 20,
}


def get(name: str) -> Any:
    return getattr(settings, name, DEFAULTS[name])
