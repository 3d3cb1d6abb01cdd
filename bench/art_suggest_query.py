"""art_suggest latency with and without `query` over N art cards of one campaign (offline hashing embedder).

Run: .venv/bin/python -m bench.art_suggest_query [N]   (creates a throwaway tenant, deletes it afterwards)
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import django

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
django.setup()

from lore.campaigns import selectors, services  # noqa: E402
from lore.models import World  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402

WORDS = ["moonlit", "bridge", "mist", "katana", "lantern", "temple", "market", "snow", "forest", "river", "fox",
         "bell", "scar", "ronin", "monk", "dragon", "gate", "ruins", "storm", "garden"]


def main(n: int) -> None:
    tenant = Tenant.objects.create(name=f"bench-art-{time.time_ns()}")
    try:
        world = World.objects.create(tenant=tenant, slug="w", name="w")
        campaign = services.campaign_create(tenant=tenant, world=world, slug="c")
        started = time.perf_counter()
        for i in range(n):
            words = [WORDS[(i * 7 + j * 3) % len(WORDS)] for j in range(5)]
            services.artcard_record(campaign=campaign, document={
                "image_id": f"img_{i}", "scene_id": f"scn_{i % 50}", "prompt_text": " ".join(words) + f" scene {i}",
                "entities": {"npc": [], "location": [f"loc_{i % 20}"]}, "visual_tags": words[:4],
                "style": {"preset": "ink"}, "moderation": {"safe": True}, "created_at": "2025-08-27T11:42:05Z"})
        record_ms = (time.perf_counter() - started) * 1000 / n
        for label, kwargs in [("no query, by location", {"location": "loc_3"}),
                              ("query alone", {"query": "misty bridge at night with the ronin"}),
                              ("query + location", {"location": "loc_3", "query": "snowy temple bell"})]:
            selectors.art_suggest(campaign, **kwargs)  # warm: BM25 index build, query vector cache
            times = []
            for q in range(30):
                if "query" in kwargs:
                    kwargs = {**kwargs, "query": f"{kwargs['query'].split(' #')[0]} #{q}"}  # no vector cache hit
                t = time.perf_counter()
                selectors.art_suggest(campaign, **kwargs)
                times.append((time.perf_counter() - t) * 1000)
            print(f"{n} cards, {label}: p50 {statistics.median(times):.1f} ms, "
                  f"p95 {sorted(times)[int(0.95 * len(times)) - 1]:.1f} ms")
        print(f"artcard_record with indexing: {record_ms:.1f} ms per card")
    finally:
        tenant.delete()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 500)
