#!/usr/bin/env python
"""Scene assembly on the demo campaign: p50/p95 of `scene_context` and tokens per block.

    .venv/bin/python bench/scene_context.py --runs 200

Runs against its own database (`memoryhub_bench` on the embedded server, or the server of
DATABASE_URL), with offline providers: it loads the bundled SRD and the demo campaign once
(`manage.py lore_demo`), then assembles scenes of the demo campaign in a loop, with and without
a rules question, in English and Russian, and prints server-side latency and the blocks' tokens.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")

import django  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402

from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY  # noqa: E402
from lore.campaigns.scene import SceneRequest, scene_context  # noqa: E402
from lore.campaigns.selectors import campaign_get  # noqa: E402
from memoryhub import services as kernel_services  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402

SCENES = [
    SceneRequest(party=DEMO_PARTY, location="loc_moon_bridge", npcs=["npc_LiShen"],
                 scene_text="Mist over the moon bridge; the ronin waits.",
                 user_input="I roll insight to see whether Li Shen is lying."),
    SceneRequest(party=DEMO_PARTY, location="loc_forge", npcs=["npc_Borin", "npc_LiShen"],
                 scene_text="Sparks fly in the forge.", user_input="I thank Borin and pay him."),
    SceneRequest(party=DEMO_PARTY, location="loc_swamp_hut", npcs=["npc_Vasilisa"],
                 scene_text="Изба на болоте, зелёные огни.",
                 user_input="Я пытаюсь убедить Василису: бросок убеждения."),
]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=200)
    args = parser.parse_args()
    call_command("migrate", verbosity=0)
    if not Tenant.objects.filter(name="demo").exists():
        kernel_services.tenant_create(name="demo")
    call_command("lore_demo", stdout=open(os.devnull, "w"))  # noqa: SIM115
    tenant = Tenant.objects.get(name="demo")
    campaign = campaign_get(tenant_id=tenant.pk, slug=DEMO_CAMPAIGN)
    for scene in SCENES:  # warm the BM25 indexes and caches
        scene_context(campaign=campaign, request=scene)
    latencies: dict[int, list[float]] = defaultdict(list)
    tokens: dict[int, dict[str, int]] = {}
    last: dict[int, dict] = {}
    for i in range(args.runs):
        which = i % len(SCENES)
        started = time.perf_counter()
        result = scene_context(campaign=campaign, request=SCENES[which])
        latencies[which].append((time.perf_counter() - started) * 1000)
        tokens[which] = {b["name"]: b["tokens"] for b in result["blocks"]}
        last[which] = result
    every = sorted(x for values in latencies.values() for x in values)
    print(f"scene_context, {args.runs} runs: p50 {statistics.median(every):.1f} ms, "
          f"p95 {every[int(0.95 * (len(every) - 1))]:.1f} ms")
    for which, scene in enumerate(SCENES):
        values = sorted(latencies[which])
        result = last[which]
        print(f"- {scene.location} / {scene.user_input[:40]!r}: p50 {statistics.median(values):.1f} ms, "
              f"p95 {values[int(0.95 * (len(values) - 1))]:.1f} ms; tokens {tokens[which]} "
              f"total {result['tokens']['total']} (budget {result['tokens']['budget']} without the input); "
              f"rules {result['rules_needed']}, degraded {result['degraded']}, cut {len(result['cut'])}")


if __name__ == "__main__":
    main()
