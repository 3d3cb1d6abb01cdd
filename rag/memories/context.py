"""The typed-memories block of the context (rag.context): a character's memories relevant to the
query, ordered by the adjusted score (fusion × importance × recency), each on one compact line
with its kind, category, emotion and context window."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from memoryhub.dates import dated_as_said
from memoryhub.text import count_tokens
from memoryhub.validation import iso_instant
from rag.selectors import SearchFilters, SearchItem, chunks_search

if TYPE_CHECKING:
    from rag.context import Block


def typed_memory_line(item: SearchItem, dated: bool = False) -> str:
    """`dated`: its relative dates followed by the days they meant, as the memories block's turns
    (`rag.context._asks_for_dates`); a goal's or plan's have them already (`when.anchor_dates`)."""
    chunk = item.chunk
    when = chunk["created_ts"].strftime("%Y-%m-%d") if chunk["created_ts"] else ""
    details = [f"{chunk['kind']}/{chunk['category']}"]
    if chunk["emotion"]:
        details.append(f"emotion: {chunk['emotion']}")
    if chunk["context_window"]:
        details.append(f"context: {chunk['context_window']}")
    said = dated_as_said(chunk["text"], chunk["created_ts"]) if dated else chunk["text"]
    return f"- [{when}] {said} ({'; '.join(details)})"


def typed_memories_block(*, tenant_id: int, user_id: str, query: str, cap: int, k: int,
                         filters: SearchFilters | None = None, shown_messages: frozenset[int] = frozenset(),
                         min_bm25_share: float = 0.0, min_cosine: float = 0.0, min_share: float = 0.0,
                         dated: bool = False) -> tuple[Block, set[int], dict[str, frozenset[int]]]:
    """The block, packed within `cap` tokens, the ids of the chunks it shows (so the general
    memories block does not repeat them) and, for each line it shows, the turns it restates (so an
    insight summing up turns the context says anyway is not shown either, and a line whose turns the
    memories block comes to show after all is dropped). A memory whose source turns are all in
    `shown_messages` (turns the memories block shows in full) is left out: the turn already says it.
    `min_bm25_share`: the share of the query's BM25 ceiling a memory's words must answer."""
    from rag.context import Block, BlockItem, RelevanceFloor, _pack

    block = Block("typed_memories")
    wanted = replace(filters or SearchFilters(), types=("memory",))
    # RRF, not the dialog domain's min-max fusion: a character's memories matching a query are
    # few, and min-max over a few candidates pins the last one at 0, where no importance can lift it.
    result = chunks_search(tenant_id=tenant_id, user_id=user_id, query=query, k=k, filters=wanted,
                           include_tenant_documents=False, fusion="rrf")
    candidates = []
    restates: dict[str, frozenset[int]] = {}
    # The memories block's floor too: with no result of the general search matching a word,
    # `min_bm25_share` is 0, and a memory near the question in neither space still came in.
    relevant = RelevanceFloor(min_cosine, min_share, result.bm25_ceiling)
    for item in result.items:
        ceiling = result.bm25_ceiling.get(item.chunk["namespace"], 0.0)
        share = item.components.get("bm25", 0.0) / ceiling if ceiling > 0 else 0.0
        if share < min_bm25_share or relevant.below(item):
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "below_floor"})
            continue
        sources = item.chunk["meta"].get("source_message_ids") or []
        if sources and shown_messages.issuperset(sources):
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "turn_in_memories"})
            continue
        line = typed_memory_line(item, dated)
        candidates.append(BlockItem(line, count_tokens(line), f"chunk:{item.chunk['id']}",
                                    {"score": round(item.score, 6), "type": "memory",
                                     "memory_id": str(item.chunk["memory_uid"]),
                                     "at": iso_instant(item.chunk["created_ts"]) or ""}))
        restates[f"chunk:{item.chunk['id']}"] = frozenset(sources)
    _pack(block, candidates, max(cap, 0))
    shown = {i.ref for i in block.items}
    return block, {int(ref.split(":")[1]) for ref in shown}, {ref: restates[ref] for ref in shown}
