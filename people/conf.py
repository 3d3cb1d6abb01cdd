"""People settings. Their defaults and validation live in memoryhub/settings.py (one place,
overridable from the environment); this says what each means.

PEOPLE_SEARCH_THRESHOLD, PEOPLE_SEARCH_MAX_RESULTS   SearchPeople (seed 000): minimum score, result count
PEOPLE_RERANK_CANDIDATES, PEOPLE_RERANK_MAX_PEOPLE   reranker: candidates shown to the model, and the most
                                                     it may choose (seed 000: 50 and 10)
PEOPLE_RERANK_TIMEOUT, PEOPLE_RERANK_MAX_RETRIES     the reranker's own limits, below the global LLM ones
PEOPLE_RERANK_MIN_SCORE                              candidates below it are not worth a reranker's attention
PEOPLE_DEDUP_FUZZY_THRESHOLD, …_EMBEDDING_THRESHOLD  dedup: the weak rules' thresholds
PEOPLE_DEDUP_MAX_PROPOSALS                           dedup: the proposals one new person opens at most (the best
                                                     matches, the most mentioned first): a bare "Natasha" beside
                                                     thirty "Наталья …" is a question, not thirty
PEOPLE_ARCHIVIST_MAX_KNOWN, …_MAX_ADDED              archivist: known people listed in the prompt, and the
                                                     Added ops one reply may make
PEOPLE_BIO_MAX_CHARS, PEOPLE_INNER_CIRCLE_MAX        bio length; inner-circle people in a prompt
"""

from __future__ import annotations

from typing import Any

from django.conf import settings


def get(name: str) -> Any:
    # Read at call time, so override_settings and a changed environment apply.
    return getattr(settings, name)
