"""World search latency over the bundled SRD, plus ingest, lore-edit approve, publish and rollback times.

Creates a throwaway tenant with a world holding `data/srd` (en + ru) through the real ingest, runs
the golden queries of `qa/memory_retrieval_golden/dnd5e/srd.json` (each `--rounds` times) through
`lore.selectors.knowledge_search` against `latest`, prints p50/p95, then deletes the tenant's world.
Figures with the configured embedder (offline hashing by default), printed, not asserted.

    .venv/bin/python bench/lore_search.py --rounds 5
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django  # noqa: E402

django.setup()

from lore import edits, selectors, services  # noqa: E402
from lore.backup import world_delete  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5, help="Passes over the golden queries.")
    parser.add_argument("--k", type=int, default=8)
    args = parser.parse_args()

    tenant = Tenant.objects.create(name=f"bench-lore-{secrets.token_hex(4)}")
    world = services.world_create(tenant=tenant, slug="srd-bench", languages=["en", "ru"])
    try:
        files = [services.UploadedFile(path.name, path.read_bytes(), language)
                 for language in ("en", "ru") for path in sorted((ROOT / "data" / "srd" / language).glob("*.json"))]
        started = time.perf_counter()
        first = services.knowledge_ingest(world=world, domain="srd", files=files, actor="bench")
        took = time.perf_counter() - started
        print(f"ingest: {first.entry_count} entries, {first.chunk_count} chunks in {took:.1f} s "
              f"({first.entry_count / took:.0f} entries/s)")
        started = time.perf_counter()
        change = services.lore_version_publish(version=first, actor="bench", force=True, reason="bench")
        print(f"publish 1.0.0: {_ms(time.perf_counter() - started)} (in-transaction {change.took_ms:.1f} ms)")

        golden = json.loads((ROOT / "qa/memory_retrieval_golden/dnd5e/srd.json").read_text())["queries"]
        targets = selectors.targets_resolve(tenant_id=tenant.pk, world_slug=world.slug, domains=["srd"])
        selectors.knowledge_search(tenant_id=tenant.pk, targets=targets, query="warm up", k=args.k)
        timings: dict[str, list[float]] = {"en": [], "ru": []}
        for _ in range(args.rounds):
            for query in golden:
                started = time.perf_counter()
                # Resolving the alias is part of every search the API serves.
                targets = selectors.targets_resolve(tenant_id=tenant.pk, world_slug=world.slug, domains=["srd"])
                selectors.knowledge_search(tenant_id=tenant.pk, targets=targets, query=query["query"], k=args.k)
                timings.setdefault(query["language"], []).append(time.perf_counter() - started)
        for language, values in [*timings.items(), ("all", [v for vs in timings.values() for v in vs])]:
            if values:
                p50, p95 = np.percentile(values, [50, 95])
                print(f"search {language}: n={len(values)} p50 {_ms(p50)} p95 {_ms(p95)}")

        started = time.perf_counter()
        edit = edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                            entry_id="Spells/fireball", text="A bench edit: 6d6 fire damage.",
                                            reason="bench", actor="bench")
        print(f"edit propose (entry checked against 1.0.0): {_ms(time.perf_counter() - started)}")
        started = time.perf_counter()
        second = edits.knowledge_edit_approve(edit=edit, actor="bench").produced_version
        print(f"edit approve -> {second.version}: {time.perf_counter() - started:.2f} s "
              f"({second.reused_chunks}/{second.chunk_count} vectors re-used)")
        started = time.perf_counter()
        services.lore_version_publish(version=second, actor="bench", force=True, reason="bench")
        print(f"publish {second.version}: {_ms(time.perf_counter() - started)}")
        started = time.perf_counter()
        services.lore_version_rollback(world=world, domain="srd", actor="bench")
        print(f"rollback: {_ms(time.perf_counter() - started)}")
    finally:
        world_delete(world=world)
        tenant.delete()


if __name__ == "__main__":
    main()
