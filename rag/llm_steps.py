"""Optional LLM steps of retrieval (seed 003 §8.3): query expansion and rerank of the top 20.

Both are skipped when `LLM_PROVIDER=off`, and both fall back to the plain path on any LLM
failure (a search never fails because a model is slow or talks nonsense); the result says which
steps ran. The rerank (`rerank_top`) also serves the world search (lore.selectors.knowledge_search).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from typing import Any, TypeVar

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
    "Rate how useful each {item} is for answering the query, 0 (useless) to 10 (answers it). "
    'Answer as JSON: {{"ranking": [{{"id": "Chunk:ID", "score": 0-10}}, ...]}} covering the {items} '
    "you consider relevant, best first. Use only the ids given."
)
T = TypeVar("T")


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


def rerank(query: str, candidates: list[tuple[int, str]], *, item: str = "memory",
           items: str = "memories") -> dict[int, float] | None:
    """LLM scores (0-10) for the candidates it rated, or None when off or failed. Ids the model
    invents are dropped. `item` / `items` name what is rated in the prompt ("rule or lore entry")."""
    client = get_llm()
    if client is None or not candidates:
        return None
    listing = "\n".join(f"[Chunk:{pk}] {text[:500]}" for pk, text in candidates)
    try:
        result, _ = client.chat_json("reranker", [
            {"role": "system", "content": RERANK_PROMPT.format(item=item, items=items)},
            {"role": "user", "content": f"Query: {query}\n\n{items.capitalize()}:\n{listing}"},
        ], Rerank)
    except LLMError as exc:
        logger.warning("rerank skipped: %s", exc)
        return None
    known = {pk for pk, _ in candidates}
    return {choice.id: choice.score for choice in result.ranking if choice.id in known}


def rerank_top(query: str, ranked: list[T], *, top: int, ident: Callable[[T], int], text: Callable[[T], str],
               components: Callable[[T], dict[str, float]], item: str = "memory",
               items: str = "memories") -> bool:
    """The LLM re-orders the first `top` of `ranked` in place, by its scores (a candidate it did not rate
    scores 0; each gets `components["rerank"]`), the order given breaking its ties; the rest stay below.
    Returns whether it ran: False (the order untouched) when the LLM is off or failed."""
    head = ranked[:top]
    scores = rerank(query, [(ident(c), text(c)) for c in head], item=item, items=items)
    if scores is None:
        return False
    for candidate in head:
        components(candidate)["rerank"] = scores.get(ident(candidate), 0.0)
    head.sort(key=lambda c: -components(c)["rerank"])
    ranked[: len(head)] = head
    return True
