"""Used by `make run`: the SRD 5.1 (data/srd, en + ru) as the demo tenant's world `dnd5e`, published."""

from __future__ import annotations

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand

from lore import services
from lore.campaigns.demo import (
    DEMO_CAMPAIGN,
    DEMO_PARTY,
    demo_campaign_create,
    demo_lore_publish,
    demo_turns_record,
)
from lore.models import Alias, World
from memoryhub import embeddings
from memoryhub.models import Tenant

DEMO_TENANT = "demo"
DEMO_WORLD = "dnd5e"


class Command(BaseCommand):
    help = "Load the bundled SRD into the demo tenant's world 'dnd5e', smoke-test it and publish it (once)."

    def handle(self, *args: object, **options: object) -> None:
        # The same demo tenant demo_bootstrap gives its key; `make run` runs this first, so the key
        # and the admin password are the last lines printed before the server starts.
        tenant, _ = Tenant.objects.get_or_create(name=DEMO_TENANT)
        world = World.objects.filter(tenant=tenant, slug=DEMO_WORLD).first()
        if world is not None and Alias.objects.filter(world=world, domain="srd", name="latest").exists():
            self.stdout.write(f"world {DEMO_WORLD!r} already published")
            self._campaign(world)
            return
        srd = settings.BASE_DIR / "data" / "srd"
        if world is None or not Alias.objects.filter(world=world, domain="srd", name="stage").exists():
            # The language directories only: the licence and notice next to them are not rules text.
            call_command("lore_ingest", DEMO_WORLD, "srd", str(srd / "en"), str(srd / "ru"), "--create",
                         "--languages", "en,ru", "--tenant", DEMO_TENANT, stdout=self.stdout, stderr=self.stderr)
        call_command("lore_smoke", DEMO_WORLD, "srd", "stage", "--tenant", DEMO_TENANT, stdout=self.stdout,
                     stderr=self.stderr)
        staged = Alias.objects.select_related("version__world").get(
            world__tenant=tenant, world__slug=DEMO_WORLD, domain="srd", name="stage").version
        forced: list[str] = []
        if failures := services.smoke_failures(staged):
            # The gate's thresholds (config/knowledge.yaml) were chosen with the offline embedder; another
            # one (an English-only local model, say) can miss them on the Russian rules, and `make run`
            # then stopped with no demo at all. The demo still comes up, as a forced publish that the
            # changelog records with the figures; a real world keeps its gate.
            reason = (f"demo: smoke gate missed with the embedder {embeddings.get_embedder().name} "
                      f"({'; '.join(failures)})")
            self.stderr.write(f"warning: {reason}; published anyway as a forced publish")
            forced = ["--force", "--reason", reason]
        call_command("lore_publish", DEMO_WORLD, "srd", "stage", "--tenant", DEMO_TENANT, *forced, stdout=self.stdout,
                     stderr=self.stderr)
        self.stdout.write(
            "  try: curl -s -X POST http://127.0.0.1:8000/api/v1/worlds/dnd5e/search -H 'Authorization: Bearer <key>' "
            "-H 'Content-Type: application/json' -d '{\"query\": \"how big is a fireball?\", \"k\": 3}'")
        self._campaign(World.objects.get(tenant=tenant, slug=DEMO_WORLD))

    def _campaign(self, world: World) -> None:
        lore = demo_lore_publish(world=world)
        if lore is not None:
            self.stdout.write(f"lore {lore.version}: {lore.entry_count} entries of data/demo/lore published "
                              f"(smoke hit@5 {lore.smoke.get('overall', {}).get('hit@5')})")
        campaign = demo_campaign_create(world=world)
        if campaign is None:
            self.stdout.write(f"campaign {DEMO_CAMPAIGN!r} already there")
            return
        played = demo_turns_record(campaign=campaign)
        self.stdout.write(f"campaign {DEMO_CAMPAIGN!r}: party {DEMO_PARTY!r}, 3 NPCs, 3 summaries, 3 art cards, "
                          f"{played} reported turns (admin: Worlds › {world.slug} › quality)")
        self.stdout.write(
            f"  try: curl -s -X POST http://127.0.0.1:8000/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context "
            "-H 'Authorization: Bearer <key>' -H 'Content-Type: application/json' "
            f"-d '{{\"party\": \"{DEMO_PARTY}\", \"location\": \"loc_moon_bridge\", "
            "\"npcs\": [\"npc_LiShen\"], \"user_input\": \"I roll insight on Li Shen\"}'")
