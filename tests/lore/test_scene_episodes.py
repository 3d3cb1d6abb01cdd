"""The scene's episode block serves the scene (QA pass on the demo campaign): the summaries of its location
and its NPCs come before the latest ones, and the flags line holds the party's flags, not only those of the
summaries shown; all within the episode block's budget (config/prompt_budgets.yaml scene.blocks.episode)."""

from __future__ import annotations

from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from lore.campaigns import selectors, services
from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY, demo_campaign_create
from lore.campaigns.models import Campaign, EpisodicSummary, Party
from lore.campaigns.scene import scene_config
from lore.models import World
from memoryhub.text import count_tokens
from tests.lore.conftest import scoped_client

pytestmark = pytest.mark.django_db

SCENE = f"/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context"


@pytest.fixture
def demo(world: World) -> tuple[APIClient, Campaign]:
    campaign = demo_campaign_create(world=world)
    assert campaign is not None
    return scoped_client(world.tenant, "tools"), campaign


def _record(campaign: Campaign, summary_id: str, day: int, location: str, npcs: list[str],
            flags: dict[str, str] | None = None, notes: str = "", month: int = 9) -> None:
    document: dict[str, Any] = {
        "summary_id": summary_id, "campaign_id": campaign.slug, "party_id": DEMO_PARTY,
        "scene_id": f"scn_{summary_id}", "when": f"2025-{month:02d}-{day:02d}T10:00:00Z",
        "who": {"players": ["p_A", "p_B"], "npcs": npcs}, "where": {"location_id": location, "tags": []},
        "what": {"event": "travel", "outcome": "done", "rolls": [], "loot": []},
        "flags": flags or {}, "relations_delta": [], "notes": notes or f"The party went on ({summary_id}).",
        "version": "1.0.0",
    }
    services.summary_record(campaign=campaign, document=document)


def _episode(client: APIClient, **body: Any) -> dict[str, Any]:
    response = client.post(SCENE, {"party": DEMO_PARTY, **body}, format="json")
    assert response.status_code == 200, response.json()
    scene = response.json()
    block = next(b for b in scene["blocks"] if b["name"] == "episode")
    cfg = scene_config()["blocks"]["episode"]
    assert block["tokens"] <= cfg["max_tokens"] and len(block["items"]) <= cfg["max_items"]
    return {"block": block, "cut": scene["cut"], "summaries": [i["source"].removeprefix("summary:")
                                                                for i in block["items"]
                                                                if i["source"].startswith("summary:")],
            "flags": next((i["text"] for i in block["items"] if i["source"].startswith("flags:")), None)}


@pytest.mark.parametrize("user_input", ["I roll insight on Li Shen", "Я проверяю проницательность Ли Шэня",
                                        "我对李慎进行洞察检定"])
def test_the_bridge_scene_with_li_shen_shows_the_bargain_on_that_bridge(demo, user_input: str) -> None:
    """QA: the bridge with Li Shen showed the forge (sum_demo_003) and the swamp (sum_demo_002), the latest,
    and not sum_demo_001, the party's only summary at this bridge with him."""
    client, _ = demo
    episode = _episode(client, location="loc_moon_bridge", npcs=["npc_LiShen"], user_input=user_input)
    assert episode["summaries"] == ["sum_demo_001", "sum_demo_003"]  # the scene's first, then the latest
    assert "Li Shen let the party cross" in episode["block"]["items"][1]["text"]


def test_the_lie_to_the_witch_comes_back_at_her_hut_after_newer_scenes(demo) -> None:
    """QA: at loc_swamp_hut, "Я пытаюсь обмануть ведьму" lost the earlier lie to Vasilisa (sum_demo_002)
    to later scenes elsewhere."""
    client, campaign = demo
    _record(campaign, "sum_road", 1, "loc_road", [])
    episode = _episode(client, location="loc_swamp_hut", user_input="Я пытаюсь обмануть ведьму")
    assert episode["summaries"] == ["sum_demo_002", "sum_road"]
    # By her, too, wherever the scene is: the NPC's summaries come first.
    episode = _episode(client, location="loc_village", npcs=["npc_Vasilisa"], user_input="我想骗女巫")
    assert episode["summaries"] == ["sum_demo_002", "sum_road"]


def test_what_shares_more_of_the_scene_comes_first_then_the_newest(demo) -> None:
    client, campaign = demo
    # Newer summaries sharing only the bridge, or only Li Shen, and one sharing neither.
    _record(campaign, "sum_bridge_alone", 1, "loc_moon_bridge", [])
    _record(campaign, "sum_li_at_forge", 2, "loc_forge", ["npc_LiShen"])
    _record(campaign, "sum_elsewhere", 3, "loc_road", [])
    episode = _episode(client, location="loc_moon_bridge", npcs=["npc_LiShen"], user_input="I look around.")
    assert episode["summaries"] == ["sum_demo_001", "sum_li_at_forge"]
    # A scene naming nothing of the party's past: the latest, as before.
    episode = _episode(client, location="loc_nowhere", user_input="I look around.")
    assert episode["summaries"] == ["sum_elsewhere", "sum_li_at_forge"]
    assert _episode(client, user_input="I look around.")["summaries"] == ["sum_elsewhere", "sum_li_at_forge"]


def test_an_expired_summary_of_the_scene_stays_out(demo) -> None:
    """Retention: an expired summary is a tombstone no read returns, whatever its location."""
    client, _ = demo
    EpisodicSummary.objects.filter(summary_id="sum_demo_001").update(document={}, chunk=None,
                                                                      expired_at=timezone.now())
    episode = _episode(client, location="loc_moon_bridge", npcs=["npc_LiShen"], user_input="I bow.")
    assert episode["summaries"] == ["sum_demo_003", "sum_demo_002"]


@pytest.mark.parametrize(("body", "text"), [
    ({"location": "loc_moon_bridge", "npcs": ["npc_LiShen"]}, "I roll insight on Li Shen"),
    ({"location": "loc_forge", "npcs": ["npc_Borin"]}, "Я благодарю Борина"),
    ({"location": "loc_swamp_hut"}, "我向女巫鞠躬"),
])
def test_the_flags_line_holds_every_flag_of_the_party(demo, body: dict[str, Any], text: str) -> None:
    """QA: the bridge scene said "katana_repaired=yes, witch_favour=owed" (the flags of the summaries shown)
    while session_fetch listed gate_moon_door=open and quest_moon_key=obtained as well."""
    client, campaign = demo
    party = Party.objects.get(campaign=campaign, slug=DEMO_PARTY)
    expected = ", ".join(f"{f['key']}={f['value']}" for f in selectors.party_flags(party))
    assert expected == "gate_moon_door=open, katana_repaired=yes, quest_moon_key=obtained, witch_favour=owed"
    episode = _episode(client, **body, user_input=text)
    assert episode["flags"] == f"Flags: {expected}."
    assert episode["block"]["items"][0]["source"] == f"flags:{DEMO_PARTY}"  # the engine's hard facts first
    # Both summaries still fit beside it (a long one only cut to item_tokens, as before).
    assert len(episode["summaries"]) == 2
    assert not [c for c in episode["cut"] if c["block"] == "episode" and c["reason"] != "truncated"]


def test_many_flags_keep_whole_flags_those_of_the_scene_first_and_leave_the_summaries_their_room(demo) -> None:
    """Flags the scene bears on go first; the rest only where the summaries leave room: forty rumours of an
    old scene elsewhere would fill the line to its item_tokens and push a summary out of the block."""
    client, campaign = demo
    # An old scene elsewhere that set forty flags no word of the scene names.
    rumours = {f"rumour_{i:02d}": f"heard_in_the_tavern_{i:02d}" for i in range(40)}
    _record(campaign, "sum_rumours", 1, "loc_tavern", [], flags=rumours, month=1)
    party = Party.objects.get(campaign=campaign, slug=DEMO_PARTY)
    every = {f["key"]: f["value"] for f in selectors.party_flags(party)}
    assert len(every) == 44
    episode = _episode(client, location="loc_moon_bridge", npcs=["npc_LiShen"], user_input="I cross the moon bridge.")
    line, cfg = episode["flags"], scene_config()["blocks"]["episode"]
    assert count_tokens(line) <= cfg["item_tokens"]
    assert line.startswith("Flags: ") and line.endswith(" more).")
    listed, _, more = line.removeprefix("Flags: ").rpartition(" (and ")
    pairs = [pair.split("=", 1) for pair in listed.split(", ")]
    assert all(every[key] == value for key, value in pairs)  # whole flags, as the party holds them
    assert int(more.split()[0]) == len(every) - len(pairs)
    # Those the scene bears on are kept: set by the summaries shown, or named by the scene's words.
    assert {"gate_moon_door", "quest_moon_key", "katana_repaired"} <= {key for key, _ in pairs}
    assert [key for key, _ in pairs] == sorted(key for key, _ in pairs)
    # The summaries keep their room in the block: nothing of it dropped, the line not cut mid-flag.
    assert episode["summaries"] == ["sum_demo_001", "sum_demo_003"]
    assert not [c for c in episode["cut"] if c["block"] == "episode" and
                (c["reason"] != "truncated" or c["source"].startswith("flags:"))]
    # Where the summaries leave more room, more of the rest come in.
    wide = _episode(client, location="loc_forge", npcs=["npc_Borin"], user_input="I pay Borin.")
    assert len(wide["flags"].split(", ")) > len(pairs) and wide["summaries"] == ["sum_demo_003", "sum_demo_002"]
