"""The README's own questions on the bundled SRD (`lore_demo`): what the README and config/knowledge.yaml
say the title and name votes do, held against the real data rather than a few entries."""

from __future__ import annotations

import io

from django.core.management import call_command

from lore import selectors
from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY
from memoryhub import services as kernel_services
from tests.lore.conftest import scoped_client


def test_the_readmes_questions_get_their_rules_and_unanswerable_ones_none(db) -> None:
    tenant, _ = kernel_services.tenant_create(name="demo")
    call_command("lore_demo", stdout=io.StringIO(), stderr=io.StringIO())
    client = scoped_client(tenant, "tools")

    def search(query: str) -> list[dict]:
        response = client.post("/api/v1/worlds/dnd5e/search", {"query": query, "domains": ["srd"], "k": 3},
                               format="json")
        assert response.status_code == 200
        return response.json()["items"]

    # Ranked third, after The Environment and Madness, which say "happens" and "character" too.
    assert search("what happens when my character is blinded?")[0]["entry_id"] == "Conditions/blinded"
    # The Wand of Fireballs came first: "Vasilisa" held most of the question's weight.
    assert search("I cast fireball at Vasilisa")[0]["entry_id"] == "Spells/fireball"
    # No Chinese in the world: nothing, not the vectors' three nearest.
    assert search("失明") == []
    # The Russian subset has no spells: what comes back shares a word with the question, or nothing.
    for item in search("Я кастую огненный шар в Василису"):
        assert {"bm25", "title"} & item["ranks"].keys() or item["components"]["vector"] >= selectors.MIN_COSINE

    def rules(user_input: str) -> tuple[bool, list[str]]:
        scene = client.post(f"/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context",
                            {"party": DEMO_PARTY, "location": "loc_moon_bridge", "npcs": ["npc_Vasilisa"],
                             "user_input": user_input}, format="json").json()
        block = next(b for b in scene["blocks"] if b["name"] == "rules")
        return scene["rules_needed"], [i["source"].split("@")[0] for i in block["items"]]

    assert rules("I cast fireball at Vasilisa") == (True, ["srd:Spells/fireball", "srd:Magic-Items/wand-of-fireballs"])
    assert rules("我施放火球术") == (True, [])
    needed, found = rules("Я колдую огненный шар в Василису")
    assert needed and "srd:Subraces/hill-dwarf" not in found
