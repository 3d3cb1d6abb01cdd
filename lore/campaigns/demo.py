"""The demo campaign `make run` creates (via `manage.py lore_demo`): a party, three NPCs, summaries
(one moving Li Shen's disposition towards the hero p_A as well as the party) and art cards in English
and Russian, written through the same services the engine's API uses."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from lore import services as lore_services
from lore import smoke
from lore.campaigns import services, turns
from lore.campaigns.models import Campaign, SceneAssembly
from lore.campaigns.scene import SceneRequest
from lore.models import Alias, KnowledgeVersion, World

DEMO_CAMPAIGN = "demo_moon"
DEMO_PARTY = "pty_demo"

NPCS: list[dict[str, Any]] = [
    {"npc_id": "npc_LiShen", "version": "1.0.0",
     "static": {"name": "Li Shen", "archetype": "ronin", "voice_tts": "asian_male_light_smoke",
                "secrets": ["scar_left_cheek_reason"], "lore_refs": ["lore_ronin_code"]}},
    {"npc_id": "npc_Vasilisa", "version": "1.0.0",
     "static": {"name": "Василиса", "archetype": "ведьма", "voice_tts": "ru_female_low",
                "secrets": ["знает, где спрятан лунный ключ"], "lore_refs": ["lore_swamp_witches"]}},
    {"npc_id": "npc_Borin", "version": "1.0.0",
     "static": {"name": "Borin Ironhand", "archetype": "dwarf smith", "voice_tts": "dwarf_male_gravel",
                "secrets": ["owes the thieves' guild"], "lore_refs": []}},
]


def _summary(summary_id: str, when: str, scene: str, location: str, tags: list[str], npcs: list[str], event: str,
             outcome: str, flags: dict[str, str], deltas: list[tuple[str, str, int, str]], notes: str,
             rolls: list[dict[str, Any]] | None = None, loot: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    return {
        "summary_id": summary_id, "campaign_id": DEMO_CAMPAIGN, "party_id": DEMO_PARTY, "scene_id": scene,
        "when": when, "who": {"players": ["p_A", "p_B"], "npcs": npcs},
        "where": {"location_id": location, "tags": tags},
        "what": {"event": event, "outcome": outcome, "rolls": rolls or [], "loot": loot or []},
        "flags": flags,
        "relations_delta": [{"npc_id": n, "towards": t, "delta": d, "reason": r} for n, t, d, r in deltas],
        "notes": notes, "version": "1.0.0",
    }


SUMMARIES = [
    _summary("sum_demo_001", "2025-08-27T11:42:00Z", "scn_042", "loc_moon_bridge", ["night", "mist"],
             ["npc_LiShen"], "bargain", "partial_success", {"quest_moon_key": "obtained", "gate_moon_door": "open"},
             # Towards the party, and towards the hero whose insight read him (a disposition of its own).
             [("npc_LiShen", "party", 1, "kept promise"), ("npc_LiShen", "hero_id:p_A", 1, "p_A saw his honour")],
             "Li Shen let the party cross after the amulet changed hands.",
             rolls=[{"who": "p_A", "d20": 14, "dc": 12, "effect": "+2 insight"}],
             loot=[{"item_id": "amulet_moon", "qty": 1}]),
    _summary("sum_demo_002", "2025-08-28T19:05:00Z", "scn_043", "loc_swamp_hut", ["болото", "туман"],
             ["npc_Vasilisa"], "торг", "провал", {"witch_favour": "owed"},
             [("npc_Vasilisa", "party", -2, "герои солгали о ключе")],
             "Василиса раскрыла ложь и выгнала героев из избы.",
             rolls=[{"who": "p_B", "d20": 6, "dc": 15, "effect": "обман не удался"}]),
    _summary("sum_demo_003", "2025-08-29T09:30:00Z", "scn_044", "loc_forge", ["smoke", "anvil"], ["npc_Borin"],
             "repair", "success", {"katana_repaired": "yes"}, [("npc_Borin", "party", 1, "paid in full")],
             "Borin mended Li Shen's katana; he hinted at debts in the city.",
             loot=[{"item_id": "whetstone", "qty": 2}]),
]

ARTCARDS = [
    {"image_id": "img_demo_bridge", "scene_id": "scn_042", "cdn_url": "https://cdn.example.com/img_demo_bridge.webp",
     "prompt_text": "moonlit bridge, mist, ronin with scar on left cheek",
     "entities": {"npc": ["npc_LiShen"], "location": ["loc_moon_bridge"]},
     "visual_tags": ["moonlight", "mist", "blue-gold", "katana", "scar_left_cheek"],
     "style": {"preset": "ukiyo-e-modern", "seed": 12345}, "moderation": {"safe": True},
     "created_at": "2025-08-27T11:42:05Z"},
    {"image_id": "img_demo_forge", "scene_id": "scn_044",
     "prompt_text": "dwarf forge, sparks, ronin waiting, scar on left cheek",
     "entities": {"npc": ["npc_Borin", "npc_LiShen"], "location": ["loc_forge"]},
     "visual_tags": ["sparks", "katana", "scar_left_cheek", "warm-orange"],
     "style": {"preset": "ukiyo-e-modern", "seed": 777}, "moderation": {"safe": True},
     "created_at": "2025-08-29T09:31:00Z"},
    {"image_id": "img_demo_hut", "scene_id": "scn_043",
     "prompt_text": "изба ведьмы на болоте, туман, зелёные огни",
     "entities": {"npc": ["npc_Vasilisa"], "location": ["loc_swamp_hut"]},
     "visual_tags": ["болото", "туман", "зелёные огни"],
     "style": {"preset": "ukiyo-e-modern", "seed": 4242}, "moderation": {"safe": True},
     "created_at": "2025-08-28T19:06:00Z"},
]


def demo_lore_publish(*, world: World) -> KnowledgeVersion | None:
    """Moon Valley's world notes (data/demo/lore, en + ru) as the world's live `lore`, through the
    smoke gate (qa/memory_retrieval_golden/<world>/lore.json); None when a lore version is live."""
    if Alias.objects.filter(world=world, domain="lore", name=Alias.Name.LATEST).exists():
        return None
    root = settings.BASE_DIR / "data" / "demo" / "lore"
    files = [lore_services.UploadedFile(path.name, path.read_bytes(), language)
             for language in ("en", "ru") for path in sorted((root / language).glob("*.md"))]
    version = lore_services.knowledge_ingest(world=world, domain="lore", files=files, actor="lore_demo")
    smoke.version_smoke(version=version)
    lore_services.lore_version_publish(version=version, actor="lore_demo")
    return version


def demo_campaign_create(*, world: World) -> Campaign | None:
    """Create the demo campaign once; None when it already exists."""
    if Campaign.objects.filter(tenant_id=world.tenant_id, slug=DEMO_CAMPAIGN).exists():
        return None
    campaign = services.campaign_create(
        tenant=world.tenant, world=world, slug=DEMO_CAMPAIGN, name="The Moon Bridge",
        tone_rules="Tone: melancholic wuxia, moonlight and mist; short sentences; no gore.")
    services.party_create(campaign=campaign, slug=DEMO_PARTY, name="The Lantern Bearers")
    for npc in NPCS:
        services.npc_upsert(campaign=campaign, document=npc)
    for summary in SUMMARIES:
        services.summary_record(campaign=campaign, document=summary)
    for card in ARTCARDS:
        services.artcard_record(campaign=campaign, document=card)
    return campaign


# Turns of the demo, so the world's quality page has figures at once: (scene, what the narration
# used: the scene's NPCs, the party's flags and the first lore entry, as an engine might report).
DEMO_TURNS = [
    SceneRequest(party=DEMO_PARTY, location="loc_moon_bridge", npcs=["npc_LiShen"],
                 scene_text="Mist over the moon bridge; the ronin waits.",
                 user_input="I roll insight to see whether Li Shen is lying."),
    SceneRequest(party=DEMO_PARTY, location="loc_forge", npcs=["npc_Borin"], scene_text="Sparks fly in the forge.",
                 user_input="I thank Borin and pay him."),
    SceneRequest(party=DEMO_PARTY, location="loc_swamp_hut", npcs=["npc_Vasilisa"],
                 scene_text="Изба на болоте, зелёные огни.",
                 user_input="Я пытаюсь убедить Василису: бросок убеждения."),
]


def demo_turn_used(answer: dict[str, Any]) -> list[str]:
    """What the demo's engine reports as used: the NPC profiles, the flags line and the top lore entry."""
    blocks = {block["name"]: block["items"] for block in answer["blocks"]}
    used = [item["source"] for item in blocks["npc"]]
    used += [item["source"] for item in blocks["episode"] if item["source"].startswith("flags:")]
    used += [item["source"] for item in blocks["lore"][:1]]
    return used


def demo_turns_record(*, campaign: Campaign) -> int:
    """Three reported turns of the demo campaign, once (none when it has turns already)."""
    if SceneAssembly.objects.filter(campaign=campaign).exists():
        return 0
    for request in DEMO_TURNS:
        answer = turns.scene_context_record(campaign=campaign, request=request)
        usage = turns.EngineUsage(model="demo-gm", prompt_tokens=answer["tokens"]["total"] + 350,
                                  completion_tokens=180)
        turns.scene_feedback_record(campaign=campaign, assembly_id=answer["assembly_id"], used=demo_turn_used(answer),
                                    usage=usage)
    return len(DEMO_TURNS)
