#!/usr/bin/env python
"""Game-master retention and quality figures on the demo campaign (seed 003 §8.9–§8.10).

    .venv/bin/python bench/gm_quality.py --turns 60

Runs against its own database (`memoryhub_bench`, like bench/scene_context.py) with offline
providers. It loads the demo (`manage.py lore_demo`: the SRD, Moon Valley lore, campaign
demo_moon), then:

1. plays `--turns` turns of the demo scenes: scene-context, then the engine's report. The engine is
   simulated: it reports as used the NPC profiles, the flags line and the top lore entry (the rule of
   `lore.campaigns.demo.demo_turn_used`), so the hit-rate printed measures that rule against what
   the assembly returned, not a model's narration; its model call is the answer's tokens + 350 in,
   180 out, priced at `--price` (USD per 1M prompt / completion tokens; gpt-4o-mini's list price);
2. checks every fact of `qa/lore_assert_golden.json` with lore_assert (offline), so the contradiction
   rate printed is the share of that golden set judged contradicted;
3. times the retention beat jobs: once on the demo data as it is (nothing due), once on a copy of
   the demo campaign with `--copies` × its 3 summaries, 3 art cards and the turns recorded 121 days
   ago (all due); the copy is deleted afterwards;
4. renders the world's admin quality page `--renders` times and prints its p50 and the figures.
"""

from __future__ import annotations

import argparse
import copy
import html as html_text
import os
import re
import statistics
import sys
import time
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

import json  # noqa: E402

from django.conf import settings  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.test import Client  # noqa: E402
from django.utils import timezone  # noqa: E402

from lore.campaigns import retention, services, turns  # noqa: E402
from lore.campaigns.demo import (  # noqa: E402
    ARTCARDS,
    DEMO_CAMPAIGN,
    DEMO_PARTY,
    DEMO_TURNS,
    NPCS,
    SUMMARIES,
    demo_turn_used,
)
from lore.campaigns.models import ArtCard, Campaign, EpisodicSummary, SceneAssembly  # noqa: E402
from lore.models import World  # noqa: E402
from memoryhub import services as kernel_services  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402
from tools.models import ToolCall  # noqa: E402
from tools.services import tool_call  # noqa: E402


def play(campaign: Campaign, count: int) -> float:
    started = time.perf_counter()
    for i in range(count):
        answer = turns.scene_context_record(campaign=campaign, request=DEMO_TURNS[i % len(DEMO_TURNS)])
        usage = turns.EngineUsage(model="bench-gm", prompt_tokens=answer["tokens"]["total"] + 350,
                                  completion_tokens=180)
        turns.scene_feedback_record(campaign=campaign, assembly_id=answer["assembly_id"], used=demo_turn_used(answer),
                                    usage=usage)
    return (time.perf_counter() - started) * 1000 / max(count, 1)


def check_golden(tenant: Tenant) -> dict[str, int]:
    golden = json.loads((ROOT / "qa" / "lore_assert_golden.json").read_text())
    verdicts: dict[str, int] = {}
    for fact in golden["facts"]:
        result = tool_call(tenant=tenant, name="lore_assert", arguments={"fact": fact["fact"], "use_llm": False},
                           transport=ToolCall.Transport.API)
        verdicts[result["verdict"]] = verdicts.get(result["verdict"], 0) + 1
    return verdicts


def timed(job, **kwargs) -> tuple[dict[str, int], float]:  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    counts = job(**kwargs)
    return counts, (time.perf_counter() - started) * 1000


def aged_copy(world: World, copies: int) -> Campaign:
    """The demo campaign's documents under a throwaway campaign, `copies` times, recorded 121 days ago."""
    slug = f"bench_ttl_{os.getpid()}"
    campaign = services.campaign_create(tenant=world.tenant, world=world, slug=slug)
    services.party_create(campaign=campaign, slug=DEMO_PARTY)
    for npc in NPCS:
        services.npc_upsert(campaign=campaign, document=npc)
    for n in range(copies):
        for summary in SUMMARIES:
            document = copy.deepcopy(summary)
            document.update(summary_id=f"{summary['summary_id']}_{n}", campaign_id=slug)
            services.summary_record(campaign=campaign, document=document)
        for card in ARTCARDS:
            services.artcard_record(campaign=campaign, document={**card, "image_id": f"{card['image_id']}_{n}"})
    play(campaign, 3 * copies)
    long_ago = timezone.now() - timedelta(days=121)
    EpisodicSummary.objects.filter(campaign=campaign).update(created_at=long_ago)
    ArtCard.objects.filter(campaign=campaign).update(recorded_at=long_ago)
    SceneAssembly.objects.filter(campaign=campaign).update(created_at=long_ago)
    return campaign


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--copies", type=int, default=100, help="copies of the demo campaign's records to expire")
    parser.add_argument("--renders", type=int, default=20)
    parser.add_argument("--price", default="0.15,0.60", help="the simulated engine model's USD per 1M tokens")
    args = parser.parse_args()
    settings.LLM_PRICES = {"bench-gm": [float(p) for p in args.price.split(",")]}
    call_command("migrate", verbosity=0)
    if not Tenant.objects.filter(name="demo").exists():
        kernel_services.tenant_create(name="demo")
    call_command("lore_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    tenant = Tenant.objects.get(name="demo")
    campaign = Campaign.objects.get(tenant=tenant, slug=DEMO_CAMPAIGN)
    world = campaign.world

    per_turn = play(campaign, args.turns)
    print(f"{args.turns} turns played (scene-context + report): {per_turn:.1f} ms per turn")
    verdicts = check_golden(tenant)
    print(f"lore_assert on the golden set ({sum(verdicts.values())} facts, offline): {verdicts}")

    counts, took = timed(retention.episodes_expire)
    print(f"episodes_expire on the demo data as it is: {counts} in {took:.1f} ms")
    counts, took = timed(retention.scene_assemblies_prune)
    print(f"scene_assemblies_prune on the demo data as it is: {counts} in {took:.1f} ms")
    for policy in ("strip-media", "expire-with-episodes"):
        settings.ART_MEDIA_POLICY = policy
        copy_campaign = aged_copy(world, args.copies)
        counts, took = timed(retention.episodes_expire)
        print(f"episodes_expire on {args.copies} aged copies of the demo campaign (ART_MEDIA_POLICY={policy}): "
              f"{counts} in {took:.1f} ms")
        counts, took = timed(retention.scene_assemblies_prune)
        print(f"scene_assemblies_prune on them: {counts} in {took:.1f} ms")
        copy_campaign.delete()

    user = get_user_model().objects.filter(username="bench-admin").first() or \
        get_user_model().objects.create_superuser("bench-admin", "bench@example.com", None)
    client = Client()
    client.force_login(user)
    url = f"/admin/lore/world/{world.pk}/quality/"
    client.get(url)  # warm
    renders = []
    for _ in range(args.renders):
        started = time.perf_counter()
        page = client.get(url)
        renders.append((time.perf_counter() - started) * 1000)
    assert page.status_code == 200, page.status_code
    print(f"quality page of world {world.slug!r} ({SceneAssembly.objects.filter(campaign__world=world).count()} "
          f"turns, {ToolCall.objects.filter(world=world.slug).count()} tool calls): p50 "
          f"{statistics.median(renders):.1f} ms, max {max(renders):.1f} ms over {args.renders} renders")
    html = page.content.decode()
    for label, value, note in re.findall(r'<tr class="figure"><th scope="row">([^<]+)</th><td class="value"><strong>'
                                         r"([^<]*)</strong></td><td>([^<]*)</td>", html):
        print(html_text.unescape(f"  {label}: {value}" + (f" ({note})" if note else "")))


if __name__ == "__main__":
    main()
