"""A game turn's records for the quality figures (seed 003 §8.10).

A turn: the engine asks for a scene's context (`scene_context_record`, which answers with an
`assembly_id`), narrates with its own model, then reports which of the returned sources the
narration used and, if it likes, what its model call cost (`scene_feedback_record`). From these:

- retrieval hit-rate: used / returned sources (per block; "retrieval" = the rules and lore blocks,
  which search filled);
- fusion gain: there is no rerank step in the world search, so "rerank gain" (how far a step moved
  the relevant items) is measured on the re-ordering step there is, the BM25 + vector RRF fusion:
  mean reciprocal rank of the used retrieved sources in the fused list minus their mean reciprocal
  rank in BM25's own list (1/rank, 0 when BM25 did not return them). Positive: the fusion put what
  the narration used higher than BM25 alone would have. Only returned items can be reported, so
  items BM25 ranked high that the fusion dropped are never seen: the figure leans towards the fusion;
- context tokens per scene, and LLM cost per turn (MemoryHub's own calls while assembling, metered
  by `memoryhub.llm.usage_meter`, plus the engine's reported call, priced by LLM_PRICES unless the
  engine gives the cost).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone

from lore.campaigns import metrics
from lore.campaigns.models import Campaign, SceneAssembly
from lore.campaigns.scene import SceneRequest, scene_context
from lore.campaigns.selectors import require_active
from memoryhub import llm
from memoryhub.exceptions import ApplicationError

NOT_SOURCES = ("system", "user")  # the campaign's tone and the player's input are not retrieved
RETRIEVAL_BLOCKS = ("rules", "lore")


def returned_sources(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The refs an answer gave, once per block (an SRD entry in two languages is one ref)."""
    out: list[dict[str, Any]] = []
    seen: set[tuple[str, str]] = set()
    for block in blocks:
        if block["name"] in NOT_SOURCES:
            continue
        for item in block["items"]:
            key = (block["name"], item["source"])
            if key in seen:
                continue
            seen.add(key)
            entry: dict[str, Any] = {"ref": item["source"], "block": block["name"]}
            ranks = item.get("ranks")
            if ranks:
                entry.update(rank=ranks["fused"], bm25_rank=ranks.get("bm25"), vector_rank=ranks.get("vector"))
            out.append(entry)
    return out


def scene_context_record(*, campaign: Campaign, request: SceneRequest, record: bool = True) -> dict[str, Any]:
    """Assemble a scene (`scene.scene_context`) and record what it returned; the answer carries the
    record's id for the engine's feedback. `record=False` (a read by the LLM's tools key, which may
    change nothing): the same answer, no record, `assembly_id` null."""
    with llm.usage_meter() as usage:
        result = scene_context(campaign=campaign, request=request)
    tokens = {block["name"]: block["tokens"] for block in result["blocks"]}
    assembly_id = None
    if record:
        try:
            assembly_id = SceneAssembly.objects.create(
                tenant_id=campaign.tenant_id, campaign=campaign, party=result["party"],
                sources=returned_sources(result["blocks"]), tokens=tokens,
                context_tokens=result["tokens"]["without_user"], degraded=result["degraded"],
                llm_tokens=usage.tokens, llm_cost_usd=usage.cost_usd).pk
        except IntegrityError:
            # The campaign was deleted while the scene was assembled: its record has nothing to point at.
            if Campaign.objects.filter(pk=campaign.pk).exists():
                raise
            raise ApplicationError(f"No campaign {campaign.slug!r}.", code="not_found", field="campaign",
                                   status_code=404) from None
    if record:  # a turn of the engine's: what the tools read is no turn (its count is the turns')
        for name, count in tokens.items():
            metrics.SCENE_TOKENS.labels(name).observe(count)
        metrics.SCENE_TOKENS.labels("context").observe(result["tokens"]["without_user"])
    metrics.TURN_LLM_TOKENS.labels("memory", "prompt").inc(usage.prompt_tokens)
    metrics.TURN_LLM_TOKENS.labels("memory", "completion").inc(usage.completion_tokens)
    metrics.TURN_LLM_COST.labels("memory").inc(usage.cost_usd)
    return {"assembly_id": assembly_id, **result}


@dataclass(frozen=True)
class EngineUsage:
    """The game master's own LLM call for the turn, as the engine reports it."""

    model: str
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float | None = None  # None: priced by LLM_PRICES, if the model is there


def _price(usage: EngineUsage) -> float | None:
    if usage.cost_usd is not None:
        return usage.cost_usd
    config = llm.config_from_settings()
    if usage.model not in config.prices:
        return None
    return config.cost(usage.model, usage.prompt_tokens, usage.completion_tokens)


def reciprocal_ranks(sources: list[dict[str, Any]], used: list[str]) -> list[tuple[float, float]]:
    """(fused, bm25) reciprocal ranks of the used retrieved sources."""
    chosen = set(used)
    return [(1 / s["rank"], 1 / s["bm25_rank"] if s.get("bm25_rank") else 0.0)
            for s in sources if s["ref"] in chosen and s["block"] in RETRIEVAL_BLOCKS and s.get("rank")]


def feedback_summary(assembly: SceneAssembly) -> dict[str, Any]:
    used = set(assembly.used or [])
    retrieved = [s for s in assembly.sources if s["block"] in RETRIEVAL_BLOCKS]
    pairs = reciprocal_ranks(assembly.sources, assembly.used or [])

    def share(items: list[dict[str, Any]]) -> float | None:
        return round(sum(s["ref"] in used for s in items) / len(items), 4) if items else None

    return {
        "assembly_id": assembly.pk,
        "returned": len(assembly.sources),
        "used": sorted(used),
        "hit_rate": share(assembly.sources),
        "retrieval_hit_rate": share(retrieved),
        "fusion": {"used_retrieved": len(pairs),
                   "mrr_fused": round(sum(f for f, _ in pairs) / len(pairs), 4) if pairs else None,
                   "mrr_bm25": round(sum(b for _, b in pairs) / len(pairs), 4) if pairs else None},
        "context_tokens": assembly.context_tokens,
        "llm": {"memory_tokens": assembly.llm_tokens, "memory_cost_usd": assembly.llm_cost_usd,
                "engine_model": assembly.engine_model or None,
                "engine_tokens": (assembly.engine_prompt_tokens or 0) + (assembly.engine_completion_tokens or 0)
                if assembly.engine_prompt_tokens is not None else None,
                "engine_cost_usd": assembly.engine_cost_usd},
    }


def _same_report(assembly: SceneAssembly, used: list[str], usage: EngineUsage | None, cost: float | None) -> bool:
    stored = (assembly.engine_model, assembly.engine_prompt_tokens, assembly.engine_completion_tokens,
              assembly.engine_cost_usd)
    asked = ((usage.model, usage.prompt_tokens, usage.completion_tokens, cost) if usage is not None
             else ("", None, None, None))
    return sorted(assembly.used or []) == sorted(used) and stored == asked


@dataclass(frozen=True)
class FeedbackResult:
    assembly: SceneAssembly
    created: bool


def scene_feedback_record(*, campaign: Campaign, assembly_id: int, used: list[str],
                          usage: EngineUsage | None = None) -> FeedbackResult:
    """Record which returned sources a turn's narration used. Once per assembly: the same report
    again answers the same; another one is a 409 (a turn happened once)."""
    require_active(campaign, "reporting a turn")
    used = list(dict.fromkeys(used))
    cost = _price(usage) if usage is not None else None
    with transaction.atomic():
        assembly = SceneAssembly.objects.select_for_update().filter(campaign=campaign, pk=assembly_id).first()
        if assembly is None:
            raise ApplicationError(f"Campaign {campaign.slug!r} has no scene assembly {assembly_id}.", code="not_found",
                                   field="assembly_id", status_code=404)
        returned = {s["ref"] for s in assembly.sources}
        for i, ref in enumerate(used):
            if ref not in returned:
                raise ApplicationError(f"{ref!r} is not a source this scene returned.", field=f"used/{i}")
        if assembly.feedback_at is not None:
            if _same_report(assembly, used, usage, cost):
                return FeedbackResult(assembly, created=False)
            raise ApplicationError(f"Scene {assembly_id} was already reported with other figures; a turn is "
                                   f"reported once.", code="conflict", field="assembly_id", status_code=409)
        assembly.used = used
        if usage is not None:
            assembly.engine_model, assembly.engine_cost_usd = usage.model, cost
            assembly.engine_prompt_tokens, assembly.engine_completion_tokens = usage.prompt_tokens, \
                usage.completion_tokens
        assembly.feedback_at = timezone.now()
        assembly.save(update_fields=["used", "engine_model", "engine_cost_usd", "engine_prompt_tokens",
                                     "engine_completion_tokens", "feedback_at"])
    _count(assembly)  # after the commit: a refused report counts nothing
    return FeedbackResult(assembly, created=True)


def _count(assembly: SceneAssembly) -> None:
    used = set(assembly.used or [])
    for source in assembly.sources:
        metrics.SCENE_SOURCES.labels(source["block"], "yes" if source["ref"] in used else "no").inc()
    for fused, bm25 in reciprocal_ranks(assembly.sources, assembly.used or []):
        metrics.USED_RECIPROCAL_RANK.labels("fused").observe(fused)
        metrics.USED_RECIPROCAL_RANK.labels("bm25").observe(bm25)
    if assembly.engine_prompt_tokens is not None:
        metrics.TURN_LLM_TOKENS.labels("engine", "prompt").inc(assembly.engine_prompt_tokens)
        metrics.TURN_LLM_TOKENS.labels("engine", "completion").inc(assembly.engine_completion_tokens or 0)
    if assembly.engine_cost_usd:
        metrics.TURN_LLM_COST.labels("engine").inc(assembly.engine_cost_usd)
