"""A world's game-master quality figures (seed 003 §8.10): what the tool log keeps for them, and the
admin page that shows them with plots (hit-rate, fusion gain, context tokens, cost per turn,
contradiction rate, drift)."""

from __future__ import annotations

import re
from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from lore import edits
from lore import services as lore_services
from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY, demo_campaign_create
from lore.models import KnowledgeVersion, World
from memoryhub.models import Tenant
from tests.llm_server import OpenAICompatServer
from tools.models import ToolCall

pytestmark = pytest.mark.django_db

SCENE = {"party": DEMO_PARTY, "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
         "user_input": "I make a dexterity saving throw against the fireball"}
FACTS = {"Fireball has a range of 150 feet.": "supported", "Fireball has a range of 60 feet.": "contradicted",
         "A prone creature can only crawl.": None}


def figures(html: str) -> dict[str, str]:
    """figure label -> value, as the page shows them."""
    return dict(re.findall(r'<tr class="figure"><th scope="row">([^<]+)</th><td class="value"><strong>([^<]*)'
                           r"</strong>", html))


def test_tool_calls_keep_the_world_the_verdict_and_the_llm_spend(tools_client: tuple[APIClient, Tenant],
                                                                  llm: OpenAICompatServer, settings) -> None:
    client, _ = tools_client
    settings.LLM_PRICES = {"gpt-4o-mini": [1.0, 1.0]}
    llm.script_chat({"verdict": "contradicted", "hint": "150 feet, per Spells/fireball.",
                     "source_ids": ["Spells/fireball"]})
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 60 feet."},
                       format="json").json()
    assert body["verdict"] == "contradicted" and body["world"] == "dnd5e"
    call = ToolCall.objects.get(tool="lore_assert")
    assert (call.world, call.verdict) == ("dnd5e", "contradicted")
    assert call.llm_tokens > 0 and call.llm_cost_usd == pytest.approx(call.llm_tokens / 1_000_000)
    client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 150 feet.", "use_llm": False},
                format="json")
    offline = ToolCall.objects.filter(tool="lore_assert").latest("id")
    assert (offline.verdict, offline.llm_tokens, offline.llm_cost_usd) == ("supported", 0, 0.0)
    client.post("/api/v1/tools/rules_lookup", {"rule_id": "Conditions/blinded"}, format="json")
    assert ToolCall.objects.get(tool="rules_lookup").verdict == ""


@pytest.fixture
def played_world(tools_client: tuple[APIClient, Tenant], key_for: Callable[..., tuple[str, Tenant]]) -> World:
    """Three turns of the demo campaign (two reported), three canon checks, one correction published."""
    client, tenant = tools_client
    world = World.objects.get(tenant=tenant, slug="dnd5e")
    demo_campaign_create(world=world)
    raw, _ = key_for(scopes=("engine",))
    engine = APIClient()
    engine.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    base = f"/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context"
    scenes = [engine.post(base, SCENE, format="json").json() for _ in range(3)]
    rules = next(b for b in scenes[0]["blocks"] if b["name"] == "rules")["items"]
    usage = {"model": "gm", "prompt_tokens": 900, "completion_tokens": 100, "cost_usd": 0.002}
    for scene, used in ((scenes[0], [rules[0]["source"], "npc:npc_LiShen"]), (scenes[1], [])):
        response = engine.post(f"{base}/{scene['assembly_id']}/feedback", {"used": used, "llm_usage": usage},
                               format="json")
        assert response.status_code == 201, response.json()
    for fact, expected in FACTS.items():
        verdict = client.post("/api/v1/tools/lore_assert", {"fact": fact}, format="json").json()["verdict"]
        assert expected is None or verdict == expected, fact
    edit = edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                        entry_id="Spells/misty-step", reason="house rule", actor="test",
                                        text="You teleport up to 60 feet.")
    edit = edits.knowledge_edit_approve(edit=edit, actor="test")
    lore_services.lore_version_publish(version=KnowledgeVersion.objects.get(pk=edit.produced_version_id),
                                       actor="test", force=True, reason="test")
    return world


def test_the_world_quality_page_shows_the_figures_with_plots(played_world: World, admin_client) -> None:
    page = admin_client.get(f"/admin/lore/world/{played_world.pk}/quality/")
    assert page.status_code == 200
    html = page.content.decode()
    shown = figures(html)
    assert shown["turns (scene-context answers)"] == "3"
    assert "2 reported by the engine" in html
    retrieval = shown["retrieval hit-rate (rules + lore)"]
    assert re.fullmatch(r"\d+\.\d%", retrieval) and retrieval != "0.0%"
    assert shown["fusion gain (MRR fused − MRR BM25)"].startswith(("+", "-"))
    assert int(shown["context tokens per scene"]) > 0
    # The engine's call is averaged over the 2 turns it reported, not the 3 (667 tokens read as if one
    # turn in three cost nothing); MemoryHub made no call of its own.
    assert shown["LLM tokens per turn"] == "1000"
    assert "(the mean of its 2 reported turns)" in html
    assert shown["LLM cost per turn"] == "$0.00200"
    calls = len(FACTS)
    contradicted = ToolCall.objects.filter(tool="lore_assert", verdict="contradicted").count()
    assert shown["lore_assert calls"] == str(calls)
    assert shown["contradiction rate"] == f"{100 * contradicted / calls:.1f}%"
    # The fixture's first SRD publish (no corrections) and the edit's patch version (one).
    assert shown["versions published"] == "2" and shown["corrections taken live"] == "1"
    assert shown["corrections per published version"] == "0.50"
    assert html.count('<svg class="chart"') == 5 and "Contradiction rate (lore_assert, daily)" in html
    assert re.search(r'<rect class="bar"[^>]*><title>srd 1\.0\.1: 1</title>', html)
    # Another period, and another tenant's world shows none of this.
    assert admin_client.get(f"/admin/lore/world/{played_world.pk}/quality/?days=7").status_code == 200
    other = lore_services.world_create(tenant=Tenant.objects.create(name="tenant-b"), slug="dnd5e", name="D&D",
                                       languages=["en"])
    empty = figures(admin_client.get(f"/admin/lore/world/{other.pk}/quality/").content.decode())
    assert empty["turns (scene-context answers)"] == "0" and empty["lore_assert calls"] == "0"
    # A world gone (deleted in another tab): the admin's own 404 page, not the API's JSON.
    gone = admin_client.get("/admin/lore/world/999999/quality/")
    assert gone.status_code == 404 and gone["Content-Type"].startswith("text/html")


def test_the_page_is_linked_from_the_world_and_the_dashboard(played_world: World, admin_client, client) -> None:
    url = f"/admin/lore/world/{played_world.pk}/quality/"
    assert url in admin_client.get(f"/admin/lore/world/{played_world.pk}/change/").content.decode()
    assert url in admin_client.get("/admin/lore/world/").content.decode()
    home = admin_client.get("/admin/").content.decode()
    assert "Game-master quality per world" in home and url in home
    assert client.get(url).status_code == 302  # staff only: the login page
