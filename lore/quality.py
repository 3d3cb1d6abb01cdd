"""A world's quality figures for the game master (seed 003 §8.10), shown on its admin page.

Each figure is read from the database over a period (the last N days), per day where it is
plotted:

- turns: scene-context answers (`SceneAssembly`) of the world's campaigns;
- retrieval hit-rate: of the sources the reported answers returned, the share the engine said the
  narration used (all blocks, and the rules + lore blocks that search filled);
- fusion gain (the seed's "rerank gain"; the world search has no rerank step, see
  `lore.campaigns.turns`): mean reciprocal rank of the used retrieved sources in the fused list
  minus in BM25's own;
- context tokens per scene (all blocks but the player's input), and per block;
- LLM cost per turn: MemoryHub's own LLM spend while assembling plus the engine's reported call,
  over the turns (tokens always; USD where priced);
- drift: corrections through review, i.e. approved lore edits that went live with each published
  version (the edits in that version and not in the one it replaced).

Apps add sections with `register_world_section` (the tools app adds lore_assert's contradiction
rate: the tools read lore, never the other way round).
"""

from __future__ import annotations

import statistics
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.db.models import QuerySet
from django.utils import timezone
from django.utils.safestring import SafeString

from lore.campaigns.models import SceneAssembly
from lore.campaigns.turns import RETRIEVAL_BLOCKS, reciprocal_ranks
from lore.models import KnowledgeChange, KnowledgeVersion, World
from memoryhub.charts import bar_chart


@dataclass(frozen=True)
class Figure:
    label: str
    value: str
    note: str = ""


@dataclass
class Section:
    title: str
    figures: list[Figure] = field(default_factory=list)
    charts: list[SafeString] = field(default_factory=list)
    note: str = ""


@dataclass(frozen=True)
class Period:
    since: datetime
    days: list[date]  # every day of the period, oldest first


WorldSection = Callable[[World, Period], Section]
_sections: dict[str, tuple[int, WorldSection]] = {}


def register_world_section(name: str, build: WorldSection, *, order: int = 50) -> None:
    """Sections show by `order`, then name."""
    _sections[name] = (order, build)


def period_of(days: int, now: datetime | None = None) -> Period:
    today = timezone.localdate(now or timezone.now())
    first = today - timedelta(days=days - 1)
    since = timezone.make_aware(datetime.combine(first, datetime.min.time()))
    return Period(since, [first + timedelta(days=i) for i in range(days)])


def world_quality(world: World, days: int = 30) -> list[Section]:
    period = period_of(days)
    return [build(world, period) for _, _, build in sorted((o, n, b) for n, (o, b) in _sections.items())]


def pct(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.1f}%"


def day_label(day: date) -> str:
    return day.strftime("%m-%d")


def daily(period: Period, values: dict[date, float | None]) -> list[tuple[str, float | None]]:
    return [(day_label(day), values.get(day)) for day in period.days]


def _ratio(part: float, whole: float) -> float | None:
    return part / whole if whole else None


def _mean_or_0(total: float, count: int) -> float:
    return total / count if count else 0.0


def _assemblies(world: World, period: Period) -> QuerySet[SceneAssembly]:
    return SceneAssembly.objects.filter(tenant_id=world.tenant_id, campaign__world=world, created_at__gte=period.since)


def turns_section(world: World, period: Period) -> Section:
    rows = list(_assemblies(world, period).values_list(
        "created_at", "sources", "used", "tokens", "context_tokens", "degraded", "llm_tokens", "llm_cost_usd",
        "engine_prompt_tokens", "engine_completion_tokens", "engine_cost_usd"))
    turns = len(rows)
    context_by_day: dict[date, list[int]] = defaultdict(list)
    hits_by_day: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    # MemoryHub's own spend is known for every turn, the engine's only for the turns it reported: each is
    # averaged over the turns it is known for (over every turn, unreported turns counted as free).
    own_cost_by_day: dict[date, list[float]] = defaultdict(list)
    engine_cost_by_day: dict[date, list[float]] = defaultdict(list)
    block_tokens: dict[str, list[int]] = defaultdict(list)
    returned = used_count = retrieved = retrieved_used = 0
    pairs: list[tuple[float, float]] = []
    reported = engine_reported = degraded = 0
    own_tokens = engine_tokens = 0
    own_cost = engine_cost_total = 0.0
    for (created, sources, used, tokens, context, was_degraded, llm_tokens, llm_cost, engine_prompt,
         engine_completion, engine_cost) in rows:
        day = timezone.localdate(created)
        context_by_day[day].append(context)
        for name, count in tokens.items():
            block_tokens[name].append(count)
        degraded += was_degraded
        own_tokens += llm_tokens
        own_cost += llm_cost
        own_cost_by_day[day].append(llm_cost)
        if engine_prompt is not None:
            engine_reported += 1
            engine_tokens += engine_prompt + (engine_completion or 0)
            engine_cost_total += engine_cost or 0.0
            engine_cost_by_day[day].append(engine_cost or 0.0)
        if used is None:
            continue
        reported += 1
        chosen = set(used)
        for source in sources:
            hit = source["ref"] in chosen
            returned += 1
            used_count += hit
            if source["block"] in RETRIEVAL_BLOCKS:
                retrieved += 1
                retrieved_used += hit
                hits_by_day[day][0] += hit
                hits_by_day[day][1] += 1
        pairs += reciprocal_ranks(sources, used)
    contexts = sorted(c for values in context_by_day.values() for c in values)
    mrr_fused = statistics.fmean(f for f, _ in pairs) if pairs else None
    mrr_bm25 = statistics.fmean(b for _, b in pairs) if pairs else None
    section = Section("Turns: retrieval, context and cost", note=(
        "A turn is one scene-context answer; hit-rates count the turns the engine reported "
        "(POST …/scene-context/{id}/feedback). The fusion gain compares where the used rules and lore "
        "stood in the fused (BM25 + vector, RRF) list with where BM25 alone had them; there is no rerank "
        "step. It only sees what was returned, so it leans towards the fusion."))
    section.figures = [
        Figure("turns (scene-context answers)", str(turns), f"{reported} reported by the engine"),
        Figure("retrieval hit-rate (rules + lore)", pct(_ratio(retrieved_used, retrieved)),
               f"{retrieved_used} of {retrieved} returned sources used"),
        Figure("hit-rate, every block", pct(_ratio(used_count, returned)),
               f"{used_count} of {returned} (episode, NPC and art items included)"),
        Figure("fusion gain (MRR fused − MRR BM25)",
               "—" if mrr_fused is None or mrr_bm25 is None else f"{mrr_fused - mrr_bm25:+.3f}",
               "—" if mrr_fused is None else f"MRR fused {mrr_fused:.3f}, BM25 alone {mrr_bm25:.3f}, "
                                             f"{len(pairs)} used sources"),
        Figure("context tokens per scene", "—" if not contexts else f"{statistics.fmean(contexts):.0f}",
               "" if not contexts else f"p95 {contexts[int(0.95 * (len(contexts) - 1))]}, "
                                       f"max {contexts[-1]}; degraded (no lore) {degraded}"),
        Figure("tokens per block (mean)", ", ".join(f"{name} {statistics.fmean(v):.0f}"
                                                    for name, v in block_tokens.items()) or "—"),
        Figure("LLM tokens per turn",
               "—" if not turns else f"{own_tokens / turns + _mean_or_0(engine_tokens, engine_reported):.0f}",
               "—" if not turns else f"MemoryHub's own calls {own_tokens / turns:.0f} (every turn) + the engine's "
                                     f"call {_mean_or_0(engine_tokens, engine_reported):.0f} (the mean of its "
                                     f"{engine_reported} reported turns)"),
        Figure("LLM cost per turn",
               "—" if not turns else f"${own_cost / turns + _mean_or_0(engine_cost_total, engine_reported):.5f}",
               "the same two parts; priced by LLM_PRICES or as the engine reported; unpriced models count 0"),
    ]
    cost_days = set(own_cost_by_day) | set(engine_cost_by_day)
    cost_by_day = {d: statistics.fmean(own_cost_by_day[d])
                   + (statistics.fmean(engine_cost_by_day[d]) if engine_cost_by_day.get(d) else 0.0)
                   for d in cost_days}
    section.charts = [
        bar_chart(daily(period, {d: statistics.fmean(v) for d, v in context_by_day.items()}),
                  title="Context tokens per scene (daily mean)"),
        bar_chart(daily(period, {d: _ratio(h, n) for d, (h, n) in hits_by_day.items()}),
                  title="Retrieval hit-rate (rules + lore, daily)", max_value=1.0, value_format=pct),
        bar_chart(daily(period, cost_by_day),
                  title="LLM cost per turn (USD, daily mean)", value_format=lambda v: f"${v:.4f}"),
    ]
    return section


def version_corrections(world: World, period: Period) -> list[tuple[KnowledgeChange, int]]:
    """Each publish in the period with the number of approved edits it took live."""
    changes = list(KnowledgeChange.objects.filter(
        world=world, action__in=[KnowledgeChange.Action.PUBLISH, KnowledgeChange.Action.FORCED_PUBLISH],
        created_at__gte=period.since).select_related("from_version", "to_version").order_by("created_at", "id"))
    out = []
    for change in changes:
        before: KnowledgeVersion | None = change.from_version
        new = set(change.to_version.edits) - set(before.edits if before is not None else [])
        out.append((change, len(new)))
    return out


def drift_section(world: World, period: Period) -> Section:
    published = version_corrections(world, period)
    corrections = sum(n for _, n in published)
    section = Section("Drift: corrections through review", note=(
        "Approved lore edits that went live with each published version (in it, not in the version it "
        "replaced). Many corrections per version mean the canon keeps being fixed after the fact."))
    section.figures = [
        Figure("versions published", str(len(published))),
        Figure("corrections taken live", str(corrections)),
        Figure("corrections per published version",
               "—" if not published else f"{corrections / len(published):.2f}"),
    ]
    section.charts = [bar_chart(
        [(f"{c.domain} {c.to_version.version}", float(n)) for c, n in published],
        title="Corrections per published version", value_format=lambda v: f"{v:.0f}")]
    return section


register_world_section("turns", turns_section, order=10)
register_world_section("drift", drift_section, order=90)
