"""Optional LLM steps of retrieval (seed 003 §8.3): query expansion and rerank of the top 20.

Both are skipped when `LLM_PROVIDER=off`, and both fall back to the plain path on any LLM
failure (a search never fails because a model is slow or talks nonsense); the result says which
steps ran.
"""

from __future__ import annotations

import logging
import re
from typing import Any

from pydantic import BaseModel, Field, field_validator

from memoryhub.llm import LLMError, get_llm

logger = logging.getLogger(__name__)

RERANK_TOP = 20
MAX_EXPANSIONS = 4


class Expansion(BaseModel):
    queries: list[str] = Field(default_factory=list)


class RerankChoice(BaseModel):
    id: int
    score: float = Field(ge=0, le=10)

    @field_validator("id", mode="before")
    @classmethod
    def _typed_id(cls, value: Any) -> Any:
        # Models write "Chunk:12" as often as 12.
        if isinstance(value, str):
            match = re.search(r"\d+", value)
            return int(match.group()) if match else value
        return value


class Rerank(BaseModel):
    ranking: list[RerankChoice]


EXPANSION_PROMPT = (
    "You rewrite a user's question into up to {n} short alternative search queries for a memory "
    "search engine: synonyms, the likely wording of the answer, key entities. Keep the user's "
    'language. Answer as JSON: {{"queries": ["...", "..."]}}.'
)
RERANK_PROMPT = (
    "Rate how useful each memory is for answering the query, 0 (useless) to 10 (answers it). "
    'Answer as JSON: {"ranking": [{"id": "Chunk:ID", "score": 0-10}, ...]} covering the memories '
    "you consider relevant, best first. Use only the ids given."
)


def expand_query(query: str) -> list[str] | None:
    """Alternative phrasings of `query`, or None when the LLM is off or failed."""
    client = get_llm()
    if client is None:
        return None
    try:
        result, _ = client.chat_json("query_expander", [
            {"role": "system", "content": EXPANSION_PROMPT.format(n=MAX_EXPANSIONS)},
            {"role": "user", "content": query},
        ], Expansion)
    except LLMError as exc:
        logger.warning("query expansion skipped: %s", exc)
        return None
    return [q.strip() for q in result.queries if q.strip()][:MAX_EXPANSIONS]


def rerank(query: str, candidates: list[tuple[int, str]]) -> dict[int, float] | None:
    """LLM scores (0-10) for the candidates it rated, or None when off or failed. Ids the model
    invents are dropped."""
    client = get_llm()
    if client is None or not candidates:
        return None
    listing = "\n".join(f"[Chunk:{pk}] {text[:500]}" for pk, text in candidates)
    try:
        result, _ = client.chat_json("reranker", [
            {"role": "system", "content": RERANK_PROMPT},
            {"role": "user", "content": f"Query: {query}\n\nMemories:\n{listing}"},
        ], Rerank)
    except LLMError as exc:
        logger.warning("rerank skipped: %s", exc)
        return None
    known = {pk for pk, _ in candidates}
    return {choice.id: choice.score for choice in result.ranking if choice.id in known}
