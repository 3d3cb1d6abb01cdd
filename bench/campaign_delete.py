#!/usr/bin/env python
"""Deleting a large campaign (`lore.campaigns.services.campaign_delete`): how long its one transaction
holds the campaign's locks, and how many rows it removes.

    .venv/bin/python bench/campaign_delete.py --summaries 10000 --runs 3

Runs against its own database (`memoryhub_bench` on the embedded server, or the server of
DATABASE_URL), offline providers. Builds one campaign through the engine's own services (parties, NPCs,
summaries with their `episode` chunks, flag and disposition changes, art cards with their `art` chunks,
threads with checkpoints), plus logged tool calls about it and a few admin log entries. Then deletes it
`--runs` times inside a transaction that is rolled back (the same deletes, the same locks, the same
time they are held; only the commit is left out), and once more for real, committed. While each deletion
runs, a second thread writes checkpoints to another campaign of the same tenant (p50 and slowest write,
and how often pg_stat_activity showed a session waiting on a lock): what the deletion costs the rest of
the tenant. Prints the six slowest SQL statements of the deletion too.

Measured on this machine (2 cores, embedded PostgreSQL 18, hashing embeddings), the defaults: a campaign
of 10,000 summaries (10,500 chunks, 30,000 disposition changes, 9,226 flag changes, 4 parties, 50 NPCs,
500 art cards, 20 threads of 20 checkpoints, 10,000 tool calls; 70,906 rows deleted). Building it
through the services takes 5-6 min (~30 summaries/s). Two invocations:

    rolled back, median of 3    2.31 s (2.03-2.33)    2.46 s (2.14-2.66)
    committed                   2.14 s                3.15 s

So the deletion holds its locks for 2-3 s at 10k summaries, over the 1 s bar; at 2,000 summaries it is
0.37-0.60 s. Noted, not restructured: the locks are the campaign's own (its row FOR UPDATE, its two
namespaces' advisory locks), so only writes to that campaign wait, and those would find it gone (404).
Checkpoint writes to another campaign of the tenant meanwhile never waited on a lock (0 lock-wait samples
in pg_stat_activity, second invocation and a 2k run); they slowed from p50 ~8-11 ms / slowest ~20 ms to
p50 15-24 ms / slowest ~0.3 s, the two cores being busy with the deletion. Splitting it into batches
would leave a half-deleted campaign with no receipt after a failure. Where the time goes: the six slowest
statements take ~0.95 s (the chunks' DELETE ~0.2 s, then cascades and SET NULLs Django's collector issues
for rows the service has already deleted: dispositionchange / partyflagchange by summary_id,
episodicsummary.chunk_id, partyflagchange.superseded_by_id, ~0.13-0.19 s each); the rest is spent outside
the statements, mostly in the collector's Python work. Deleting with plain SQL in the leaves-first order
would skip those, if it ever matters.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_bench")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["EMBEDDED_BEAT"] = "0"

import django  # noqa: E402

django.setup()

from django.contrib.admin.models import CHANGE, LogEntry  # noqa: E402
from django.contrib.auth import get_user_model  # noqa: E402
from django.contrib.contenttypes.models import ContentType  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, transaction  # noqa: E402
from tqdm import tqdm  # noqa: E402

from lore import services as lore_services  # noqa: E402
from lore.campaigns import services, threads  # noqa: E402
from lore.campaigns.models import (  # noqa: E402
    NPC,
    ArtCard,
    Campaign,
    Checkpoint,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    Thread,
)
from memoryhub import services as kernel_services  # noqa: E402
from rag.models import Chunk  # noqa: E402
from tools.models import ToolCall  # noqa: E402

LOCATIONS = ["loc_moon_bridge", "loc_forge", "loc_swamp_hut", "loc_harbour", "loc_temple", "loc_market"]
EVENTS = [("bargain", "partial_success"), ("ambush", "victory"), ("negotiation", "failure"), ("repair", "success"),
          ("chase", "escape"), ("ritual", "interrupted")]
FLAGS = ["quest_moon_key", "gate_moon_door", "witch_favour", "katana_repaired", "harbour_toll", "temple_bell"]


class Rollback(Exception):
    """Raised to undo a timed deletion, so the next run deletes the same campaign."""


def build(args: argparse.Namespace, tenant: Any, world: Any, slug: str, rng: random.Random) -> Campaign:
    campaign = services.campaign_create(tenant=tenant, world=world, slug=slug, name="Bench")
    parties = [services.party_create(campaign=campaign, slug=f"pty_{i:03d}").slug for i in range(args.parties)]
    npc_ids = [f"npc_{i:03d}" for i in range(args.npcs)]
    for npc_id in npc_ids:
        services.npc_upsert(campaign=campaign, document={
            "npc_id": npc_id, "version": "1.0.0",
            "static": {"name": npc_id.title(), "archetype": "villager", "voice_tts": "neutral", "secrets": [],
                       "lore_refs": []}})
    start = datetime(2025, 1, 1, tzinfo=UTC)
    for i in tqdm(range(args.summaries), desc="summaries", unit="summary", file=sys.stderr):
        event, outcome = rng.choice(EVENTS)
        present = rng.sample(npc_ids, min(3, len(npc_ids)))
        services.summary_record(campaign=campaign, document={
            "summary_id": f"sum_{i:06d}", "campaign_id": slug, "party_id": parties[i % len(parties)],
            "scene_id": f"scn_{i:06d}", "when": (start + timedelta(minutes=10 * i)).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "who": {"players": ["p_A", "p_B"], "npcs": present},
            "where": {"location_id": rng.choice(LOCATIONS), "tags": ["night"] if i % 2 else ["day"]},
            "what": {"event": event, "outcome": outcome,
                     "rolls": [{"who": "p_A", "d20": rng.randint(1, 20), "dc": 12, "effect": "insight"}],
                     "loot": []},
            "flags": {rng.choice(FLAGS): f"state_{i % 7}"},
            "relations_delta": [{"npc_id": npc, "towards": "party", "delta": rng.choice([-1, 1]),
                                 "reason": f"scene {i}"} for npc in present],
            "notes": f"Scene {i} of the bench campaign.", "version": "1.0.0"})
    for i in tqdm(range(args.artcards), desc="art cards", unit="card", file=sys.stderr):
        services.artcard_record(campaign=campaign, document={
            "image_id": f"img_{i:05d}", "scene_id": f"scn_{i:06d}",
            "prompt_text": f"{rng.choice(LOCATIONS)} at night, mist, figure {i}",
            "entities": {"npc": rng.sample(npc_ids, min(2, len(npc_ids))), "location": [rng.choice(LOCATIONS)]},
            "visual_tags": ["mist", "night", f"tag_{i % 40}"], "style": {"preset": "ukiyo-e-modern", "seed": i},
            "moderation": {"safe": True}, "created_at": "2025-08-27T11:42:05Z"})
    for t in tqdm(range(args.threads), desc="threads", unit="thread", file=sys.stderr):
        for step in range(args.checkpoints):
            threads.checkpoint_write(campaign=campaign, thread_id=f"t_{t}", state={"turn": step, "hp": [10, 12]})
    # Logged tool calls about the campaign (the tools' eraser finds them by their arguments) and a few
    # admin log entries on its rows (the service matches the log to the rows).
    ToolCall.objects.bulk_create([
        ToolCall(tenant=tenant, tool="session_fetch", transport=ToolCall.Transport.API, latency_ms=3.0,
                 arguments={"campaign_id": slug, "party_id": parties[i % len(parties)]})
        for i in range(args.tool_calls)], batch_size=2000)
    user = get_user_model().objects.get_or_create(username="bench-ops", defaults={"is_staff": True})[0]
    for obj in [campaign, *EpisodicSummary.objects.filter(campaign=campaign)[:5]]:
        LogEntry.objects.create(user=user, content_type=ContentType.objects.get_for_model(type(obj)),
                                object_id=str(obj.pk), object_repr=str(obj)[:200], action_flag=CHANGE,
                                change_message="[]")
    return campaign


def rows_of(campaign: Campaign) -> dict[str, int]:
    return {
        "summaries": EpisodicSummary.objects.filter(campaign=campaign).count(),
        "chunks": Chunk.objects.filter(tenant_id=campaign.tenant_id,
                                       namespace__in=[campaign.episode_namespace, campaign.art_namespace]).count(),
        "flag_changes": PartyFlagChange.objects.filter(party__campaign=campaign).count(),
        "dispositions": Disposition.objects.filter(npc__campaign=campaign).count(),
        "disposition_changes": DispositionChange.objects.filter(disposition__npc__campaign=campaign).count(),
        "parties": Party.objects.filter(campaign=campaign).count(),
        "npcs": NPC.objects.filter(campaign=campaign).count(),
        "artcards": ArtCard.objects.filter(campaign=campaign).count(),
        "threads": Thread.objects.filter(campaign=campaign).count(),
        "checkpoints": Checkpoint.objects.filter(thread__campaign=campaign).count(),
    }


class Neighbour(threading.Thread):
    """Writes checkpoints to another campaign of the tenant while a deletion runs; keeps each write's time,
    and samples pg_stat_activity for sessions waiting on a lock (wait_event_type 'Lock'): a slow write with
    no such wait is the machine busy with the deletion, not the deletion's locks."""

    def __init__(self, campaign: Campaign) -> None:
        super().__init__(daemon=True)
        self.campaign, self.times, self.lock_waits, self.stop = campaign, [], 0, threading.Event()

    def run(self) -> None:
        sampler = threading.Thread(target=self.sample, daemon=True)
        sampler.start()
        try:
            while not self.stop.is_set():
                started = time.perf_counter()
                threads.checkpoint_write(campaign=self.campaign, thread_id="neighbour", state={"t": time.time()})
                self.times.append((time.perf_counter() - started) * 1000)
                time.sleep(0.005)
        finally:
            sampler.join()
            connection.close()

    def sample(self) -> None:
        try:
            with connection.cursor() as cur:
                while not self.stop.is_set():
                    cur.execute("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                                "AND datname = current_database()")
                    self.lock_waits += cur.fetchone()[0]
                    time.sleep(0.01)
        finally:
            connection.close()


def writes(neighbour: Neighbour) -> str:
    times = neighbour.times or [0.0]
    return (f"neighbour writes {len(neighbour.times)}: p50 {statistics.median(times):.1f} ms, "
            f"slowest {max(times):.1f} ms, lock-wait samples {neighbour.lock_waits}")


def timed_delete(campaign: Campaign, neighbour_campaign: Campaign, commit: bool,
                 statements: dict[str, list[float]]) -> tuple[float, dict[str, int], Neighbour]:
    """Seconds from the deletion's first lock to its commit (or rollback), its counts, the neighbour that
    wrote meanwhile; `statements` gathers each SQL statement's time (by its first words)."""
    def timed(execute, sql, params, many, context):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return execute(sql, params, many, context)
        finally:
            statements.setdefault(" ".join(sql.split()[:6])[:90], []).append(time.perf_counter() - started)

    neighbour = Neighbour(neighbour_campaign)
    neighbour.start()
    time.sleep(0.1)  # let it reach its steady pace
    deleted: dict[str, int] = {}
    started = time.perf_counter()
    try:
        with connection.execute_wrapper(timed), transaction.atomic():
            deleted = services.campaign_delete(campaign=Campaign.objects.get(pk=campaign.pk), actor="bench")
            if not commit:
                raise Rollback
    except Rollback:
        pass
    took = time.perf_counter() - started
    time.sleep(0.1)
    neighbour.stop.set()
    neighbour.join()
    return took, deleted, neighbour


def idle_neighbour(neighbour_campaign: Campaign, seconds: float) -> Neighbour:
    """The same writes with no deletion running: the baseline."""
    neighbour = Neighbour(neighbour_campaign)
    neighbour.start()
    time.sleep(seconds)
    neighbour.stop.set()
    neighbour.join()
    return neighbour


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--summaries", type=int, default=10000)
    parser.add_argument("--parties", type=int, default=4)
    parser.add_argument("--npcs", type=int, default=50)
    parser.add_argument("--artcards", type=int, default=500)
    parser.add_argument("--threads", type=int, default=20)
    parser.add_argument("--checkpoints", type=int, default=20, help="per thread (at most THREAD_MAX_CHECKPOINTS kept)")
    parser.add_argument("--tool-calls", type=int, default=None, help="default: as many as summaries")
    parser.add_argument("--runs", type=int, default=3, help="rolled-back deletions timed before the committed one")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.tool_calls is None:
        args.tool_calls = args.summaries
    call_command("migrate", verbosity=0)
    rng = random.Random(args.seed)
    tenant, _ = kernel_services.tenant_create(name=f"bench-campaign-delete-{time.time_ns()}")
    world = lore_services.world_create(tenant=tenant, slug="bench", name="Bench", languages=["en"])
    neighbour = services.campaign_create(tenant=tenant, world=world, slug="neighbour")

    started = time.perf_counter()
    campaign = build(args, tenant, world, "camp_bench", rng)
    built = time.perf_counter() - started
    rows = rows_of(campaign)
    with connection.cursor() as cur:
        cur.execute("ANALYZE")
    print(f"built campaign {campaign.slug} (tenant {tenant.name}) in {built:.1f} s "
          f"({args.summaries / built if built else 0:.0f} summaries/s through summary_record)")
    print("  " + ", ".join(f"{kind} {count}" for kind, count in rows.items()) + f", tool calls {args.tool_calls}")

    print(f"baseline, no deletion:  {writes(idle_neighbour(neighbour, 2.0))}")
    times: list[float] = []
    statements: dict[str, list[float]] = {}
    deleted: dict[str, int] = {}
    for run in range(args.runs):
        took, deleted, during = timed_delete(campaign, neighbour, commit=False, statements=statements)
        times.append(took)
        print(f"run {run + 1} (rolled back): {took * 1000:8.1f} ms   {writes(during)}")
    took, deleted, during = timed_delete(campaign, neighbour, commit=True, statements=statements)
    print(f"{'committed:':20s} {took * 1000:8.1f} ms   {writes(during)}")
    assert not Campaign.objects.filter(pk=campaign.pk).exists()
    total = sum(deleted.values())
    print(f"\ncampaign_delete, {args.summaries} summaries: median {statistics.median(times) * 1000:.1f} ms "
          f"(min {min(times) * 1000:.1f}, max {max(times) * 1000:.1f}, n={len(times)} rolled back), "
          f"committed {took * 1000:.1f} ms; {total} rows deleted "
          f"({total / took:.0f} rows/s)")
    print("  " + ", ".join(f"{kind} {count}" for kind, count in deleted.items()))
    runs = args.runs + 1
    print("slowest statements, mean per deletion:")
    for sql, spent in sorted(statements.items(), key=lambda item: -sum(item[1]))[:6]:
        print(f"  {sum(spent) / runs * 1000:8.1f} ms  {sql}")


if __name__ == "__main__":
    main()
