"""The campaign tools read what the engine wrote: a party's episodes, an NPC's stance, a scene's canon."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from lore.campaigns.demo import demo_campaign_create
from lore.campaigns.models import Disposition
from lore.models import World
from memoryhub.models import Tenant
from tools.models import ToolCall

pytestmark = pytest.mark.django_db


@pytest.fixture
def campaign_client(tools_client: tuple[APIClient, Tenant]) -> tuple[APIClient, Tenant]:
    client, tenant = tools_client
    demo_campaign_create(world=World.objects.get(tenant=tenant, slug="dnd5e"))
    return client, tenant


def call(client: APIClient, name: str, args: dict) -> tuple[int, dict]:
    response = client.post(f"/api/v1/tools/{name}", args, format="json")
    return response.status_code, response.json()


def test_session_fetch_npc_profile_and_art_suggest(campaign_client) -> None:
    client, tenant = campaign_client
    status, body = call(client, "session_fetch", {"campaign_id": "demo_moon", "party_id": "pty_demo", "k": 2})
    assert status == 200 and len(body["summaries"]) == 2
    assert body["sources"] == [f"summary:{s['summary_id']}" for s in body["summaries"]]
    assert body["summaries"][0]["when"] >= body["summaries"][1]["when"]  # newest first

    status, body = call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                "npc_id": "npc_LiShen"})
    assert status == 200 and body["static"]["name"] == "Li Shen"
    held = dict(Disposition.objects.filter(npc__npc_id="npc_LiShen", party__slug="pty_demo")
                .values_list("hero_id", "value"))
    # The demo's Li Shen also warmed to the hero p_A, a disposition of its own.
    assert body["dynamic"]["disposition"] == {"party_id:pty_demo": held[""], "hero_id:p_A": held["p_A"]}

    status, body = call(client, "art_suggest", {"campaign_id": "demo_moon", "npcs": ["npc_LiShen"]})
    assert status == 200 and "scar_left_cheek" in body["keep"]
    assert set(body["sources"]) == {f"artcard:{c['image_id']}" for c in body["cards"]}
    assert ToolCall.objects.filter(tenant=tenant, tool="art_suggest").count() == 1


def test_episode_search_finds_the_partys_episode_about_the_question_whenever_it_was(campaign_client) -> None:
    """session_fetch gives the last summaries; a question about an older episode needs a search."""
    client, _ = campaign_client
    status, body = call(client, "episode_search", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                   "query": "who let us cross the bridge after the amulet?", "k": 2})
    assert status == 200 and (body["campaign_id"], body["party_id"]) == ("demo_moon", "pty_demo")
    assert body["hits"][0]["summary_id"] == "sum_demo_001"  # the oldest of the three
    assert body["hits"][0]["document"]["notes"].startswith("Li Shen let the party cross")
    # k is at most: the other two episodes share no word with the question and are far from it.
    assert len(body["hits"]) == 1 and body["sources"] == [f"summary:{h['summary_id']}" for h in body["hits"]]
    status, body = call(client, "episode_search", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                   "query": "the katana was mended at the forge"})
    assert status == 200 and body["hits"][0]["summary_id"] == "sum_demo_003"
    for bad, field in (({"query": " "}, "query"), ({"query": "x", "k": 0}, "k"), ({"party_id": "pty_x", "query": "x"},
                                                                                  "party_id")):
        status, body = call(client, "episode_search", {"campaign_id": "demo_moon", "party_id": "pty_demo", **bad})
        assert status in (400, 404) and field in body["error"]["fields"], (bad, body)


def test_npc_profile_shows_each_heros_disposition_or_the_hero_asked(campaign_client) -> None:
    """Seed §8.1.1: an NPC's relations are towards the party and its heroes; the demo's Li Shen warmed to p_A."""
    client, _ = campaign_client
    args = {"campaign_id": "demo_moon", "party_id": "pty_demo", "npc_id": "npc_LiShen"}
    status, body = call(client, "npc_profile", args)
    assert status == 200 and body["dynamic"]["disposition"] == {"party_id:pty_demo": 1, "hero_id:p_A": 1}
    assert [(c["towards"], c["reason"]) for c in body["latest_changes"]] == [
        ("hero_id:p_A", "p_A saw his honour"), ("party", "kept promise")]
    assert {"summary_id": "sum_demo_001", "impact": "disposition+1 towards p_A: p_A saw his honour"} in \
        body["dynamic"]["memory"]
    assert body["sources"] == ["npc:npc_LiShen", "summary:sum_demo_001"]  # the summary once, for both changes
    status, body = call(client, "npc_profile", {**args, "hero_id": "p_B"})
    assert status == 200 and body["dynamic"]["disposition"] == {"party_id:pty_demo": 1, "hero_id:p_B": 0}
    assert [c["towards"] for c in body["latest_changes"]] == ["party"]
    status, body = call(client, "npc_profile", {**args, "hero_id": "p A"})
    assert status == 400 and "hero_id" in body["error"]["fields"]
    status, body = call(client, "npc_profile", {**args, "hero_id": "p_A", "party_id": "pty_nope"})
    assert status == 404 and "party_id" in body["error"]["fields"]


def test_the_tools_never_change_a_disposition(campaign_client) -> None:
    client, _ = campaign_client
    before = list(Disposition.objects.values_list("pk", "value"))
    for _ in range(3):
        call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_demo", "npc_id": "npc_LiShen"})
        call(client, "session_fetch", {"campaign_id": "demo_moon", "party_id": "pty_demo"})
    assert list(Disposition.objects.values_list("pk", "value")) == before


def test_bad_and_unknown_arguments(campaign_client, key_for: Callable[..., tuple[str, Tenant]]) -> None:
    client, _ = campaign_client
    status, body = call(client, "art_suggest", {"campaign_id": "demo_moon"})
    assert status == 400  # a scene, a location or NPCs
    status, body = call(client, "session_fetch", {"campaign_id": "demo_moon", "party_id": "pty_demo", "k": 0})
    assert status == 400 and "k" in body["error"]["fields"]
    status, body = call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_nope",
                                                "npc_id": "npc_LiShen"})
    assert status == 404 and "party_id" in body["error"]["fields"]
    other_raw, _ = key_for(name="tenant-b")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {other_raw}")
    status, _ = call(other, "session_fetch", {"campaign_id": "demo_moon", "party_id": "pty_demo"})
    assert status == 404  # another tenant's campaign


def test_an_unknown_npc_or_party_names_the_ids_the_model_may_have_meant(campaign_client) -> None:
    """A model over MCP asked for NPC 'LiShen' (the name it read in the lore); the 404 only said there
    was none, so it could not correct itself without another tool to list the campaign's ids."""
    client, _ = campaign_client
    status, body = call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                "npc_id": "LiShen"})
    assert status == 404 and body["error"]["fields"] == {"npc_id": [body["error"]["message"]]}
    assert "Did you mean 'npc_LiShen'?" in body["error"]["message"]
    status, body = call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                "npc_id": "the_ferryman"})
    assert status == 404 and "Its NPCs: npc_Borin, npc_LiShen, npc_Vasilisa." in body["error"]["message"]
    status, body = call(client, "session_fetch", {"campaign_id": "demo_moon", "party_id": "demo"})
    assert status == 404 and "Did you mean 'pty_demo'?" in body["error"]["message"]


def test_npc_profile_dates_a_change_by_its_summarys_game_time_not_its_recording(campaign_client) -> None:
    """`latest_changes[].at` was when MemoryHub recorded the change: a model read the demo's bridge scene of
    2025-08-27 as having happened today."""
    from lore.campaigns.models import EpisodicSummary

    client, _ = campaign_client
    status, body = call(client, "npc_profile", {"campaign_id": "demo_moon", "party_id": "pty_demo",
                                                "npc_id": "npc_LiShen"})
    assert status == 200
    when = {s.summary_id: s.document["when"] for s in EpisodicSummary.objects.all()}
    assert [(c["summary_id"], c["at"]) for c in body["latest_changes"]] == [
        ("sum_demo_001", "2025-08-27T11:42:00Z"), ("sum_demo_001", "2025-08-27T11:42:00Z")]
    assert all(c["at"] == when[c["summary_id"]] for c in body["latest_changes"])
    # The recording time is kept under its own name: this run's, not the game's.
    assert all(c["recorded_at"] > "2025-08-28" for c in body["latest_changes"])
