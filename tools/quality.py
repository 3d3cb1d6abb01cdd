"""The tools' section of a world's quality page (seed 003 §8.10): the contradiction rate.

lore_assert judges statements the game master's model makes against the world's published rules
and lore; the share judged `contradicted` is how often the model spoke against the canon. Counted
from the call log (`ToolCall.verdict`, successful calls naming this world), with what the world's
tool calls spent on the LLM (lore_assert asks one when configured).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import date

from django.utils import timezone

from lore.campaigns.models import SceneAssembly
from lore.models import World
from lore.quality import Figure, Period, Section, daily, pct, register_world_section
from memoryhub.charts import bar_chart
from tools.models import ToolCall


def contradiction_section(world: World, period: Period) -> Section:
    calls = ToolCall.objects.filter(tenant_id=world.tenant_id, world=world.slug, created_at__gte=period.since,
                                    outcome=ToolCall.Outcome.OK)
    verdicts: Counter[str] = Counter()
    by_day: dict[date, list[int]] = defaultdict(lambda: [0, 0])
    for created, verdict in calls.filter(tool="lore_assert").values_list("created_at", "verdict"):
        verdicts[verdict] += 1
        day = by_day[timezone.localdate(created)]
        day[0] += verdict == "contradicted"
        day[1] += 1
    judged = sum(verdicts.values())
    llm_tokens = llm_cost = 0.0
    for tokens, cost in calls.values_list("llm_tokens", "llm_cost_usd"):
        llm_tokens += tokens
        llm_cost += cost
    turns = SceneAssembly.objects.filter(tenant_id=world.tenant_id, campaign__world=world,
                                         created_at__gte=period.since).count()
    section = Section("Canon checks: contradiction rate", note=(
        "lore_assert verdicts on statements checked against this world (successful calls). Contradicted: "
        "the statement goes against the published rules or lore."))
    section.figures = [
        Figure("lore_assert calls", str(judged), ", ".join(f"{v} {n}" for v, n in sorted(verdicts.items()))),
        Figure("contradiction rate", pct(verdicts["contradicted"] / judged if judged else None)),
        Figure("supported", pct(verdicts["supported"] / judged if judged else None)),
        Figure("tool LLM cost per turn", "—" if not turns else f"${llm_cost / turns:.5f}",
               f"{llm_tokens:.0f} tokens, ${llm_cost:.5f} over {turns} turns"),
    ]
    section.charts = [bar_chart(daily(period, {d: c / n for d, (c, n) in by_day.items()}),
                                title="Contradiction rate (lore_assert, daily)", max_value=1.0, value_format=pct)]
    return section


register_world_section("contradiction", contradiction_section, order=20)
