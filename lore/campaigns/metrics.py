"""Prometheus metrics of campaign memory: retention (seed 003 §8.9) and quality (§8.10).

No label names a tenant, world or campaign (unbounded); the admin's per-world quality page gives
those figures from the database. How to read them:

- retrieval hit-rate: `memoryhub_gm_scene_sources_total{used="yes"}` / all, per block, over the
  assemblies the engine reported (rules + lore blocks: what search brought);
- fusion gain: mean of `memoryhub_gm_used_source_reciprocal_rank{ranking="fused"}` minus that of
  `ranking="bm25"` (each a Summary: `_sum` / `_count`);
- context tokens per scene: `memoryhub_gm_scene_tokens{block="context"}` (a histogram; `_count` is
  the number of assemblies, i.e. turns);
- LLM cost per turn: `memoryhub_gm_turn_llm_cost_usd_total` / that count.
"""

from __future__ import annotations

from prometheus_client import Counter, Histogram, Summary

EXPIRED = Counter(
    "memoryhub_gm_expired_total",
    "Retention beat: episode summaries expired, their chunks deleted, art cards deleted or stripped of their media "
    "link, scene records pruned, threads past THREAD_TTL_HOURS deleted with their checkpoints",
    ["what"],
)
CAMPAIGNS_ARCHIVED = Counter("memoryhub_gm_campaigns_archived_total", "Campaigns finished and archived")
CAMPAIGNS_DELETED = Counter("memoryhub_gm_campaigns_deleted_total", "Campaigns deleted with all their memory")
SCENE_TOKENS = Histogram(
    "memoryhub_gm_scene_tokens", "Tokens of an assembled scene per block; block=context is all but the player's input",
    ["block"], buckets=(0, 25, 50, 100, 200, 400, 600, 800, 1000, 1200, 1500, 1800, 2500),
)
SCENE_SOURCES = Counter(
    "memoryhub_gm_scene_sources_total",
    "Sources returned by reported scene assemblies, by block and whether the engine used them", ["block", "used"],
)
USED_RECIPROCAL_RANK = Summary(
    "memoryhub_gm_used_source_reciprocal_rank",
    "Reciprocal rank of each used retrieved source (rules, lore) in the fused list and in BM25's own list "
    "(0 when BM25 did not return it)", ["ranking"],
)
TURN_LLM_TOKENS = Counter(
    "memoryhub_gm_turn_llm_tokens_total",
    "LLM tokens of game turns: side=memory (MemoryHub while assembling), side=engine (the game master's call, as "
    "reported)", ["side", "kind"],
)
TURN_LLM_COST = Counter(
    "memoryhub_gm_turn_llm_cost_usd_total", "Estimated LLM cost of game turns in USD (priced models only)", ["side"],
)
