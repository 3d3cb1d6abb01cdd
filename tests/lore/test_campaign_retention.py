"""Retention of campaign memory (seed 003 §8.9): episode summaries expire after their campaign's
period, finished campaigns are archived (kept, read-only, out of search), art cards follow the
media policy, and the beat jobs report what they did."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from lore import services as lore_services
from lore.campaigns import retention, selectors
from lore.campaigns.api import ARTCARD_EXAMPLE, NPC_EXAMPLE
from lore.campaigns.models import (
    ArtCard,
    Campaign,
    CampaignEvent,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    SceneAssembly,
)
from lore.models import World
from memoryhub import services as kernel_services
from rag.models import Chunk, ChunkDeletion
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client, summary_document

BASE = CAMPAIGN_BASE


def age(summary_id: str, days: float, campaign: str = "camp_123") -> None:
    """Pretend the summary was recorded `days` ago."""
    updated = EpisodicSummary.objects.filter(campaign__tenant__name="tenant-a", campaign__slug=campaign,
                                             summary_id=summary_id).update(
        created_at=timezone.now() - timedelta(days=days))
    assert updated == 1


def post_summary(client: APIClient, summary_id: str, campaign: str = "camp_123", **changes) -> dict:
    response = client.post(f"/api/v1/campaigns/{campaign}/summaries",
                           summary_document(summary_id, campaign_id=campaign, **changes), format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def second_campaign(client: APIClient, slug: str, **extra) -> None:
    assert client.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": slug, **extra},
                       format="json").status_code == 201
    assert client.post(f"/api/v1/campaigns/{slug}/parties", {"party_id": "pty_001"}, format="json").status_code == 201
    assert client.post(f"/api/v1/campaigns/{slug}/npcs", NPC_EXAMPLE, format="json").status_code == 201


def search(slug: str, query: str = "bargain on the moon bridge") -> set[str]:
    campaign = Campaign.objects.get(slug=slug, tenant__name="tenant-a")
    party = Party.objects.get(campaign=campaign, slug="pty_001")
    return {hit["summary_id"] for hit in selectors.episode_search(campaign, party, query, k=10)}


# --- Episode TTL ---------------------------------------------------------------------------------
def test_expiry_removes_exactly_the_expired_summaries_and_nothing_of_another_campaign_or_tenant(engine, world):
    old = post_summary(engine, "s_old", when="2025-08-01T10:00:00Z")
    post_summary(engine, "s_new", when="2025-08-02T10:00:00Z",
                 relations_delta=[{"npc_id": "npc_LiShen", "towards": "party", "delta": 2, "reason": "gift"}])
    second_campaign(engine, "camp_long", episode_ttl_days=180)
    post_summary(engine, "s_mid", campaign="camp_long")
    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    lore_services.world_create(tenant=other_tenant, slug="dnd5e", name="D&D", languages=["en"])
    other = scoped_client(other_tenant, "engine")
    second_campaign(other, "camp_123")
    post_summary(other, "s_old")
    age("s_old", 121)
    age("s_new", 119)
    age("s_mid", 150, campaign="camp_long")  # past 120 days, within its campaign's 180
    EpisodicSummary.objects.filter(campaign__tenant=other_tenant).update(
        created_at=timezone.now() - timedelta(days=100))
    assert search("camp_123") == {"s_old", "s_new"}

    assert retention.episodes_expire() == {"summaries": 1, "chunks": 1}

    expired = EpisodicSummary.objects.get(campaign__slug="camp_123", campaign__tenant=world.tenant, summary_id="s_old")
    assert expired.expired_at is not None and expired.document == {} and expired.chunk_id is None
    assert not Chunk.objects.filter(pk=old["chunk_id"]).exists()
    assert ChunkDeletion.objects.filter(chunk_id=old["chunk_id"]).exists()  # cached BM25 indexes drop it
    assert search("camp_123") == {"s_new"} and search("camp_long") == {"s_mid"}
    others = EpisodicSummary.objects.filter(campaign__tenant=other_tenant)
    assert [(s.summary_id, s.expired_at, s.chunk_id is not None) for s in others] == [("s_old", None, True)]
    assert Chunk.objects.filter(kind="episode").count() == 3

    # Flags and dispositions are engine state: their history still names the expired summary.
    party = Party.objects.get(campaign__slug="camp_123", campaign__tenant=world.tenant)
    assert party.flags == {"quest_moon_key": "obtained", "gate_moon_door": "open"}
    assert PartyFlagChange.objects.filter(party=party, summary=expired).count() == 2
    assert Disposition.objects.get(party=party).value == 3
    profile = selectors.npc_profile("npc_LiShen", party)
    assert [(c["summary_id"], c["summary_expired"]) for c in profile["latest_changes"]] == [
        ("s_new", False), ("s_old", True)]
    fetched = selectors.session_fetch(party.campaign, party, k=5)
    assert [s["summary_id"] for s in fetched["summaries"]] == ["s_new"]
    assert {"key": "gate_moon_door", "value": "open", "set_by": "s_old"} in fetched["flags"]
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json").json()
    episode = {i["source"] for b in scene["blocks"] if b["name"] == "episode" for i in b["items"]}
    assert "summary:s_new" in episode and "summary:s_old" not in episode

    # A late replay of the expired summary is recognised: no second disposition change.
    replay = engine.post(f"{BASE}/summaries", summary_document("s_old", when="2025-08-01T10:00:00Z"), format="json")
    assert replay.status_code == 200 and replay.json()["expired_at"] and replay.json()["chunk_id"] is None
    assert DispositionChange.objects.filter(disposition__party=party).count() == 2
    # Idempotent: the next run finds nothing.
    assert retention.episodes_expire() == {"summaries": 0, "chunks": 0}


def test_a_shorter_period_set_by_an_editor_expires_more_and_the_range_is_enforced(engine, world):
    for summary_id in ("s1", "s2"):
        post_summary(engine, summary_id)
    age("s1", 100)
    age("s2", 80)
    assert retention.episodes_expire()["summaries"] == 0
    editor = scoped_client(world.tenant, "editor")
    for bad in (89, 181, "120", None):
        response = editor.patch(BASE, {"episode_ttl_days": bad}, format="json")
        assert response.status_code == 400 and "episode_ttl_days" in response.json()["error"]["fields"], bad
    assert editor.patch(BASE, {"episode_ttl_days": 90, "status": "archived"}, format="json").status_code == 400
    for scope in ("memory", "tools"):
        assert scoped_client(world.tenant, scope).patch(BASE, {"episode_ttl_days": 90},
                                                        format="json").status_code == 403
    response = editor.patch(BASE, {"episode_ttl_days": 90}, format="json")
    assert response.status_code == 200 and response.json()["episode_ttl_days"] == 90
    assert engine.get(BASE).json()["episode_ttl_days"] == 90
    event = CampaignEvent.objects.get(action="ttl_changed")
    assert event.detail == {"from": 120, "to": 90} and event.actor.startswith("api-key:")
    assert retention.episodes_expire() == {"summaries": 1, "chunks": 1}
    assert list(EpisodicSummary.objects.filter(expired_at__isnull=True).values_list("summary_id", flat=True)) == ["s2"]
    # A campaign created with a period outside the range is refused too.
    response = engine.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "c9", "episode_ttl_days": 365},
                           format="json")
    assert response.status_code == 400 and "episode_ttl_days" in response.json()["error"]["fields"]


# --- Archive -------------------------------------------------------------------------------------
def test_an_archived_campaign_is_kept_refuses_writes_and_is_out_of_search(engine, world, key_scene_client):
    post_summary(engine, "s1")
    engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json")
    second_campaign(engine, "camp_other")
    post_summary(engine, "s_other", campaign="camp_other")
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json").json()
    assert scoped_client(world.tenant, "memory").post(f"{BASE}/archive", {}, format="json").status_code == 403

    response = engine.post(f"{BASE}/archive", {"reason": "the party won"}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["status"] == "archived" and body["archived_now"] and body["episode_chunks_deleted"] == 1
    again = scoped_client(world.tenant, "editor").post(f"{BASE}/archive", {}, format="json").json()
    assert again["archived_now"] is False and again["archived_at"] == body["archived_at"]
    assert CampaignEvent.objects.get(action="archived").detail["reason"] == "the party won"

    # Kept: the records are all there.
    campaign = Campaign.objects.get(slug="camp_123")
    assert EpisodicSummary.objects.filter(campaign=campaign).count() == 1 and ArtCard.objects.filter(
        campaign=campaign).count() == 1
    assert Disposition.objects.get(party__campaign=campaign).value == 1
    # Read-only: every write is a 409 naming why.
    writes = [("post", f"{BASE}/parties", {"party_id": "pty_9"}),
              ("post", f"{BASE}/summaries", summary_document("s2")),
              ("post", f"{BASE}/npcs", NPC_EXAMPLE),
              ("post", f"{BASE}/artcards", {**ARTCARD_EXAMPLE, "image_id": "i2"}),
              ("patch", BASE, {"episode_ttl_days": 150}),
              ("post", f"{BASE}/scene-context/{scene['assembly_id']}/feedback", {"used": []})]
    for method, path, data in writes:
        response = getattr(engine, method)(path, data, format="json")
        assert response.status_code == 409, (path, response.status_code)
        error = response.json()["error"]
        assert error["code"] == "archived" and "campaign" in error["fields"] and "archived" in error["message"]
    assert EpisodicSummary.objects.filter(campaign=campaign).count() == 1
    # Out of search, scene-context and the tools.
    assert Chunk.objects.filter(namespace=campaign.episode_namespace).count() == 0
    response = engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json")
    assert response.status_code == 409 and response.json()["error"]["code"] == "archived"
    tools = key_scene_client
    for tool, args in (("session_fetch", {"party_id": "pty_001"}), ("art_suggest", {"scene_id": "scn_042"}),
                       ("npc_profile", {"party_id": "pty_001", "npc_id": "npc_LiShen"})):
        response = tools.post(f"/api/v1/tools/{tool}", {"campaign_id": "camp_123", **args}, format="json")
        assert response.status_code == 409 and response.json()["error"]["code"] == "archived", tool
    with pytest.raises(Exception, match="archived"):
        search("camp_123")
    # The other campaign goes on.
    assert search("camp_other") == {"s_other"}
    assert engine.post("/api/v1/campaigns/camp_other/scene-context", {"party": "pty_001"},
                       format="json").status_code == 200
    # Summaries of an archived campaign still expire after its period.
    age("s1", 130)
    assert retention.episodes_expire() == {"summaries": 1, "chunks": 0}


@pytest.fixture
def key_scene_client(world: World) -> APIClient:
    return scoped_client(world.tenant, "tools")


def test_the_admin_changes_the_period_and_archives_through_the_services(engine, world):
    admin_user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    campaign = Campaign.objects.get(slug="camp_123")
    page = client.get(f"/admin/lore/campaign/{campaign.pk}/change/")
    assert page.status_code == 200 and 'name="episode_ttl_days"' in page.content.decode()
    refused = client.post(f"/admin/lore/campaign/{campaign.pk}/change/",
                          {"events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0", "episode_ttl_days": "200"})
    assert refused.status_code == 200 and "180" in refused.content.decode()  # the form shows the bound
    form = {"events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0"}  # the inline's, as the page sends them
    client.post(f"/admin/lore/campaign/{campaign.pk}/change/", {**form, "episode_ttl_days": "150"})
    campaign.refresh_from_db()
    assert campaign.episode_ttl_days == 150
    assert CampaignEvent.objects.get(action="ttl_changed").actor == "admin:ops"
    client.post("/admin/lore/campaign/", {"action": "archive", "_selected_action": [campaign.pk]})
    campaign.refresh_from_db()
    assert campaign.is_archived and CampaignEvent.objects.get(action="archived").actor == "admin:ops"
    # Archived: the page is a view, posting changes nothing.
    client.post(f"/admin/lore/campaign/{campaign.pk}/change/", {**form, "episode_ttl_days": "90"})
    campaign.refresh_from_db()
    assert campaign.episode_ttl_days == 150
    assert 'name="episode_ttl_days"' not in client.get(f"/admin/lore/campaign/{campaign.pk}/change/").content.decode()


# --- Art cards: the media policy -----------------------------------------------------------------
@pytest.mark.parametrize("policy", ["keep", "strip-media", "expire-with-episodes"])
def test_art_cards_follow_the_media_policy(engine, settings, policy):
    settings.ART_MEDIA_POLICY = policy
    engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json")
    engine.post(f"{BASE}/artcards", {**ARTCARD_EXAMPLE, "image_id": "img_new"}, format="json")
    ArtCard.objects.filter(image_id="img_8f3c").update(recorded_at=timezone.now() - timedelta(days=121))
    counts = retention.episodes_expire()
    cards = {c.image_id: c for c in ArtCard.objects.all()}
    assert cards["img_new"].document["cdn_url"] == ARTCARD_EXAMPLE["cdn_url"]
    if policy == "keep":
        assert counts == {"summaries": 0, "chunks": 0} and cards["img_8f3c"].document == cards["img_new"].document | {
            "image_id": "img_8f3c"}
    elif policy == "strip-media":
        assert counts["artcards_stripped"] == 1 and "cdn_url" not in cards["img_8f3c"].document
        assert cards["img_8f3c"].media_stripped_at is not None
        # The words stay: the canon markers still come from the old card.
        assert cards["img_8f3c"].visual_tags == ARTCARD_EXAMPLE["visual_tags"]
        assert retention.episodes_expire()["artcards_stripped"] == 0
    else:
        assert counts["artcards_deleted"] == 1 and set(cards) == {"img_new"}


# --- Beat ----------------------------------------------------------------------------------------
def test_scene_records_are_pruned_with_their_campaigns_period(engine):
    for _ in range(3):
        assert engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json").status_code == 200
    first = SceneAssembly.objects.order_by("id").first()
    SceneAssembly.objects.filter(pk=first.pk).update(created_at=timezone.now() - timedelta(days=121))
    assert retention.scene_assemblies_prune() == {"assemblies": 1}
    assert SceneAssembly.objects.count() == 2 and retention.scene_assemblies_prune() == {"assemblies": 0}
