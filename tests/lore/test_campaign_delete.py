"""Deleting a campaign's memory over the API (seed 003 §8.9): `DELETE /api/v1/campaigns/{campaign}`
removes every row of the campaign, its episode chunks and the traces that point at them, leaves a
receipt without content, and is safe against the engine's writes running at the same time."""

from __future__ import annotations

import json
import threading
from typing import Any

import pytest
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.contrib.contenttypes.models import ContentType
from django.contrib.messages import get_messages
from django.db import connection
from django.test import Client
from rest_framework.test import APIClient

from lore import services as lore_services
from lore.campaigns import selectors, services
from lore.campaigns.api import ARTCARD_EXAMPLE, NPC_EXAMPLE
from lore.campaigns.models import (
    NPC,
    ArtCard,
    Campaign,
    CampaignDeletion,
    CampaignEvent,
    Checkpoint,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    SceneAssembly,
    Thread,
)
from lore.models import World
from memoryhub import services as kernel_services
from memoryhub.exceptions import ApplicationError
from rag import index as bm25_index
from rag.models import Chunk, ChunkDeletion, Namespace
from tests.concurrency import at_once, errors_of
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client, summary_document
from tests.lore.test_campaign_retention import post_summary, search, second_campaign
from tools.mcp_server import _call_sync
from tools.models import ToolCall

BASE = CAMPAIGN_BASE
QUERY = "bargain on the moon bridge"


def campaign_rows(campaign_pk: int) -> dict[str, int]:
    """Every row kind a campaign holds, counted by the deleted campaign's id."""
    return {
        "summaries": EpisodicSummary.objects.filter(campaign_id=campaign_pk).count(),
        "parties": Party.objects.filter(campaign_id=campaign_pk).count(),
        "flag_changes": PartyFlagChange.objects.filter(party__campaign_id=campaign_pk).count(),
        "npcs": NPC.objects.filter(campaign_id=campaign_pk).count(),
        "dispositions": Disposition.objects.filter(npc__campaign_id=campaign_pk).count(),
        "disposition_changes": DispositionChange.objects.filter(disposition__npc__campaign_id=campaign_pk).count(),
        "artcards": ArtCard.objects.filter(campaign_id=campaign_pk).count(),
        "scene_assemblies": SceneAssembly.objects.filter(campaign_id=campaign_pk).count(),
        "events": CampaignEvent.objects.filter(campaign_id=campaign_pk).count(),
        "threads": Thread.objects.filter(campaign_id=campaign_pk).count(),
        "checkpoints": Checkpoint.objects.filter(thread__campaign_id=campaign_pk).count(),
        "campaign": Campaign.objects.filter(pk=campaign_pk).count(),
        "chunks": Chunk.objects.filter(namespace=f"campaign:{campaign_pk}:episode").count(),
        "namespace_rows": Namespace.objects.filter(name=f"campaign:{campaign_pk}:episode").count(),
        "chunk_deletions": ChunkDeletion.objects.filter(namespace=f"campaign:{campaign_pk}:episode").count(),
    }


def nothing_left(campaign_pk: int) -> bool:
    return not any(campaign_rows(campaign_pk).values())


def log_entry(obj: Any) -> LogEntry:
    """An admin log entry about `obj`, as the admin writes one when an editor touches a row."""
    user = get_user_model().objects.get_or_create(username="ops", defaults={"is_staff": True})[0]
    return LogEntry.objects.create(user=user, content_type=ContentType.objects.get_for_model(type(obj)),
                                   object_id=str(obj.pk), object_repr=str(obj)[:200], action_flag=CHANGE,
                                   change_message="[]")


def a_full_campaign(engine: APIClient, world: World) -> Campaign:
    """camp_123 with a row of every kind: two summaries (flags, a disposition change), an art card, a
    scene record with its report, a thread with two checkpoints, a period change, tool calls about it and
    admin log entries."""
    post_summary(engine, "s1")
    post_summary(engine, "s2", scene_id="scn_043", flags={"gate_moon_door": "closed"},
                 when="2025-08-28T10:00:00Z")
    assert engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json").status_code == 201
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json")
    assert scene.status_code == 200
    assert engine.post(f"{BASE}/scene-context/{scene.json()['assembly_id']}/feedback", {"used": []},
                       format="json").status_code == 201
    for turn in (1, 2):
        assert engine.post(f"{BASE}/threads/t_1/checkpoints", {"state": {"turn": turn}},
                           format="json").status_code == 201
    assert engine.patch(BASE, {"episode_ttl_days": 150}, format="json").status_code == 200
    tools = scoped_client(world.tenant, "tools")
    for tool, args in (("session_fetch", {"party_id": "pty_001"}), ("episode_search", {"party_id": "pty_001",
                                                                                       "query": QUERY})):
        assert tools.post(f"/api/v1/tools/{tool}", {"campaign_id": "camp_123", **args},
                          format="json").status_code == 200
    campaign = Campaign.objects.get(slug="camp_123")
    for obj in (campaign, EpisodicSummary.objects.get(summary_id="s1"), NPC.objects.get(campaign=campaign),
                Party.objects.get(campaign=campaign), Chunk.objects.filter(namespace=campaign.episode_namespace)[0]):
        log_entry(obj)
    return campaign


# --- The happy path ------------------------------------------------------------------------------
def test_deleting_a_campaign_removes_every_row_chunk_and_trace_and_keeps_a_receipt_without_content(
        engine, world, django_capture_on_commit_callbacks, monkeypatch):
    campaign = a_full_campaign(engine, world)
    party = Party.objects.get(campaign=campaign)
    # Another campaign of the tenant, with its own traces: untouched.
    second_campaign(engine, "camp_other")
    post_summary(engine, "s_other", campaign="camp_other")
    other = Campaign.objects.get(slug="camp_other")
    other_log = log_entry(EpisodicSummary.objects.get(campaign=other))
    scoped_client(world.tenant, "tools").post("/api/v1/tools/session_fetch", {
        "campaign_id": "camp_other", "party_id": "pty_001"}, format="json")
    # Warm the episode namespace's BM25 index (episode search reads it when the embedder is away).
    assert search("camp_123", QUERY) == {"s1", "s2"}
    cached = bm25_index.namespace_index(campaign.tenant_id, campaign.episode_namespace)
    assert len(cached) == 2 and bm25_index.cache().get((campaign.tenant_id, campaign.episode_namespace)) is cached
    before = campaign_rows(campaign.pk)
    assert all(before[kind] for kind in ("summaries", "parties", "flag_changes", "npcs", "dispositions",
                                         "disposition_changes", "artcards", "scene_assemblies", "events", "chunks",
                                         "threads", "checkpoints"))

    with django_capture_on_commit_callbacks(execute=True):
        response = engine.delete(BASE)
    assert response.status_code == 204, response.content
    assert response.content == b""

    assert campaign_rows(campaign.pk) == dict.fromkeys(campaign_rows(campaign.pk), 0)
    assert not LogEntry.objects.exclude(pk=other_log.pk).exists() and LogEntry.objects.filter(pk=other_log.pk).exists()
    assert not ToolCall.objects.filter(arguments__campaign_id="camp_123").exists()
    assert ToolCall.objects.filter(arguments__campaign_id="camp_other").count() == 1
    # The receipt: who, when, how many of each kind; no name, narrative, NPC or flag.
    receipt = CampaignDeletion.objects.get()
    assert (receipt.tenant_id, receipt.slug, receipt.world, receipt.campaign_pk) == (
        campaign.tenant_id, "camp_123", "dnd5e", campaign.pk)
    assert receipt.actor.startswith("api-key:") and receipt.detail["status"] == "active"
    assert receipt.detail["deleted"] == {
        # chunks: the two summaries' and the art card's (lore.campaigns.art).
        "summaries": 2, "chunks": 3, "parties": 1, "flag_changes": before["flag_changes"], "npcs": 1,
        "dispositions": 1, "disposition_changes": 2, "artcards": 1, "scene_assemblies": 1,
        "threads": 1, "checkpoints": 2, "events": before["events"], "admin_log_entries": 5, "tool_calls": 2}
    stored = json.dumps({"detail": receipt.detail, "str": str(receipt)}, ensure_ascii=False)
    for content in ("Moon", "Li Shen", "npc_LiShen", "bargain", "quest_moon_key", "pty_001", "scn_042"):
        assert content not in stored, content

    # Search finds nothing, through a campaign object read before the deletion too, and the cached index is
    # gone; an index another process still holds rebuilds (empty) instead of catching up.
    assert bm25_index.cache().get((campaign.tenant_id, campaign.episode_namespace)) is None
    assert selectors.episode_search(campaign, party, QUERY, k=10) == []
    bm25_index.cache().put((campaign.tenant_id, campaign.episode_namespace), cached)
    monkeypatch.setattr(selectors, "embed_query_if_available", lambda *args, **kwargs: None)  # by words
    assert selectors.episode_search(campaign, party, QUERY, k=10) == []
    assert len(bm25_index.namespace_index(campaign.tenant_id, campaign.episode_namespace)) == 0
    monkeypatch.undo()
    assert search("camp_other", QUERY) == {"s_other"}

    # Every read and write of the campaign is a 404 now.
    tools = scoped_client(world.tenant, "tools")
    calls = [("get", BASE, None), ("patch", BASE, {"episode_ttl_days": 120}), ("delete", BASE, None),
             ("post", f"{BASE}/archive", {}), ("post", f"{BASE}/parties", {"party_id": "pty_9"}),
             ("post", f"{BASE}/summaries", summary_document("s3")), ("post", f"{BASE}/npcs", NPC_EXAMPLE),
             ("get", f"{BASE}/npcs/npc_LiShen?party=pty_001", None),
             ("post", f"{BASE}/artcards", {**ARTCARD_EXAMPLE, "image_id": "img_2"}),
             ("post", f"{BASE}/scene-context", {"party": "pty_001"}),
             ("post", f"{BASE}/scene-context/1/feedback", {"used": []}),
             ("get", f"{BASE}/threads/t_1", None), ("get", f"{BASE}/threads/t_1/checkpoints", None),
             ("post", f"{BASE}/threads/t_1/checkpoints", {"state": {}}), ("delete", f"{BASE}/threads/t_1", None)]
    for method, path, data in calls:
        response = getattr(engine, method)(path, data, format="json")
        assert response.status_code == 404, (method, path, response.status_code)
        assert response.json()["error"]["code"] == "not_found" and "campaign" in response.json()["error"]["fields"]
    for tool, args in (("session_fetch", {"party_id": "pty_001"}), ("art_suggest", {"scene_id": "scn_042"}),
                       ("episode_search", {"party_id": "pty_001", "query": QUERY}),
                       ("npc_profile", {"party_id": "pty_001", "npc_id": "npc_LiShen"})):
        response = tools.post(f"/api/v1/tools/{tool}", {"campaign_id": "camp_123", **args}, format="json")
        assert response.status_code == 404 and "campaign_id" in response.json()["error"]["fields"], tool
    # Over MCP the model reads the refusal as a tool error, not a broken server. (The server's per-call
    # connection check would close the test's transaction.)
    monkeypatch.setattr("tools.mcp_server.close_old_connections", lambda: None)
    result = _call_sync(world.tenant, "session_fetch", {"campaign_id": "camp_123", "party_id": "pty_001"},
                        ToolCall.Transport.MCP_STDIO)
    assert result.is_error and json.loads(result.content[0].text)["error"]["code"] == "not_found"
    assert not EpisodicSummary.objects.filter(campaign__slug="camp_123").exists()

    # The id is free again: a new campaign under it starts empty.
    assert engine.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "camp_123"}, format="json").status_code == 201
    assert engine.post(f"{BASE}/parties", {"party_id": "pty_001"}, format="json").status_code == 201
    assert engine.post(f"{BASE}/npcs", NPC_EXAMPLE, format="json").status_code == 201
    assert search("camp_123", QUERY) == set()
    post_summary(engine, "s1")
    assert search("camp_123", QUERY) == {"s1"}
    fetched = tools.post("/api/v1/tools/session_fetch", {"campaign_id": "camp_123", "party_id": "pty_001"},
                         format="json").json()
    assert [s["summary_id"] for s in fetched["summaries"]] == ["s1"]


def test_an_archived_campaign_can_be_deleted(engine, world):
    post_summary(engine, "s1")
    assert engine.post(f"{BASE}/archive", {"reason": "the party won"}, format="json").status_code == 200
    campaign = Campaign.objects.get(slug="camp_123")
    response = scoped_client(world.tenant, "editor").delete(BASE)
    assert response.status_code == 204
    assert nothing_left(campaign.pk)
    receipt = CampaignDeletion.objects.get()
    assert receipt.detail["status"] == "archived" and receipt.detail["deleted"]["summaries"] == 1
    assert receipt.detail["deleted"]["chunks"] == 0  # archiving took them already
    assert "the party won" not in json.dumps(receipt.detail)


def test_an_unknown_campaign_or_one_deleted_already_is_a_404_in_the_error_format(engine):
    response = engine.delete("/api/v1/campaigns/nope")
    assert response.status_code == 404
    assert response.json() == {"error": {"code": "not_found", "message": "No campaign 'nope'.",
                                         "fields": {"campaign": ["No campaign 'nope'."]}}}
    assert engine.delete(BASE).status_code == 204
    assert engine.delete(BASE).status_code == 404
    assert CampaignDeletion.objects.count() == 1


def test_another_tenants_campaign_is_unknown_and_its_own_namesake_is_deleted_alone(engine, world):
    post_summary(engine, "s1")
    mine = Campaign.objects.get(slug="camp_123")
    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    other = scoped_client(other_tenant, "engine")
    response = other.delete(BASE)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"
    assert Campaign.objects.filter(pk=mine.pk).exists() and search("camp_123", QUERY) == {"s1"}
    # tenant-b's own camp_123, in its own world: deleting it leaves tenant-a's as it was.
    other_world = lore_services.world_create(tenant=other_tenant, slug="dnd5e", name="D&D", languages=["en"])
    theirs = services.campaign_create(tenant=other_tenant, world=other_world, slug="camp_123")
    assert other.delete(BASE).status_code == 204
    assert not Campaign.objects.filter(pk=theirs.pk).exists()
    assert Campaign.objects.filter(pk=mine.pk).exists() and search("camp_123", QUERY) == {"s1"}
    assert CampaignDeletion.objects.get().tenant_id == other_tenant.pk


@pytest.mark.parametrize("scopes,status", [(("tools",), 403), (("memory",), 403), (("engine",), 204),
                                           (("editor",), 204)])
def test_only_a_steward_key_deletes_a_campaign(engine, world, scopes, status):
    response = scoped_client(world.tenant, *scopes).delete(BASE)
    assert response.status_code == status
    if status == 403:
        assert response.json()["error"]["code"] == "missing_scope"
    assert Campaign.objects.filter(slug="camp_123").exists() is (status == 403)
    assert APIClient().delete(BASE).status_code == 401


def test_a_request_holding_a_campaign_deleted_since_gets_a_404_from_the_services(engine, world):
    """The PATCH, archive and writes that read the campaign just before a deletion committed."""
    stale = Campaign.objects.get(slug="camp_123")
    services.campaign_delete(campaign=Campaign.objects.get(slug="camp_123"), actor="test")
    for write in (lambda: services.campaign_update(campaign=stale, episode_ttl_days=150, actor="t"),
                  lambda: services.campaign_archive(campaign=stale, actor="t"),
                  lambda: services.campaign_delete(campaign=stale, actor="t"),
                  lambda: services.party_create(campaign=stale, slug="pty_2"),
                  lambda: services.npc_upsert(campaign=stale, document=NPC_EXAMPLE),
                  lambda: services.artcard_record(campaign=stale, document=ARTCARD_EXAMPLE),
                  lambda: services.summary_record(campaign=stale, document=summary_document("s9"))):
        with pytest.raises(ApplicationError) as refused:
            write()
        assert refused.value.status_code == 404


def test_the_schema_documents_the_deletion(engine):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    operation = schema["paths"]["/api/v1/campaigns/{campaign}"]["delete"]
    assert operation["operationId"] == "campaign_delete" and "requestBody" not in operation
    assert {"204", "401", "403", "404"} <= set(operation["responses"])
    assert "content" not in operation["responses"]["204"]
    assert "error" in json.dumps(operation["responses"]["404"]["content"])
    assert "archived campaign can be deleted" in operation["description"]


def test_the_admin_lists_receipts_and_its_pages_work_after_a_deletion(engine, world):
    campaign = a_full_campaign(engine, world)
    admin_user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    client.post(f"/admin/lore/campaign/{campaign.pk}/change/", {"events-TOTAL_FORMS": "0",
                                                                "events-INITIAL_FORMS": "0", "episode_ttl_days": "160"})
    assert LogEntry.objects.filter(object_id=str(campaign.pk), content_type__model="campaign").exists()
    assert engine.delete(BASE).status_code == 204
    assert not LogEntry.objects.exists()  # the admin's "Recent actions" named the campaign's rows
    receipt = CampaignDeletion.objects.get()
    for page in ("/admin/", "/admin/lore/campaign/", "/admin/lore/episodicsummary/", "/admin/lore/sceneassembly/",
                 "/admin/lore/campaigndeletion/", f"/admin/lore/campaigndeletion/{receipt.pk}/change/",
                 f"/admin/lore/world/{world.pk}/quality/", "/admin/tools/toolcall/"):
        assert client.get(page).status_code == 200, page
    assert client.get(f"/admin/lore/campaign/{campaign.pk}/change/").status_code == 302  # gone: back to the list
    assert "camp_123" in client.get("/admin/lore/campaigndeletion/").content.decode()


# --- Races -------------------------------------------------------------------------------------
def _left_consistent(campaign_pk: int, outcomes: list[object]) -> None:
    """After a summary and the deletion ran at once: the deletion succeeded, the summary was recorded
    (and deleted with the rest) or refused with a 404, and nothing of the campaign is left."""
    assert not isinstance(outcomes[1], BaseException), outcomes[1]
    if isinstance(outcomes[0], BaseException):
        assert isinstance(outcomes[0], ApplicationError) and outcomes[0].status_code == 404, outcomes[0]
    assert nothing_left(campaign_pk), campaign_rows(campaign_pk)


@pytest.mark.django_db(transaction=True)
def test_a_summary_recorded_while_the_campaign_is_deleted_is_deleted_with_it_or_refused(engine, world):
    for round_ in range(4):
        slug = f"race_{round_}"
        second_campaign(engine, slug)
        post_summary(engine, "s0", campaign=slug)
        campaign = Campaign.objects.get(slug=slug)
        outcomes = at_once(
            lambda c=campaign: services.summary_record(campaign=c, document=summary_document("s1", campaign_id=c.slug)),
            lambda c=campaign: services.campaign_delete(campaign=c, actor="test"))
        _left_consistent(campaign.pk, outcomes)


@pytest.mark.django_db(transaction=True)
def test_over_the_api_a_racing_summary_is_a_201_or_a_404_never_a_500(engine, world):
    client_a, client_b = scoped_client(world.tenant, "engine"), scoped_client(world.tenant, "engine")
    for round_ in range(3):
        slug = f"api_race_{round_}"
        second_campaign(engine, slug)
        pk = Campaign.objects.get(slug=slug).pk
        write, delete = at_once(
            lambda s=slug: client_a.post(f"/api/v1/campaigns/{s}/summaries", summary_document(
                "s1", campaign_id=s), format="json").status_code,
            lambda s=slug: client_b.delete(f"/api/v1/campaigns/{s}").status_code)
        assert (write in (201, 404), delete) == (True, 204), (write, delete)
        assert nothing_left(pk), campaign_rows(pk)


@pytest.mark.django_db(transaction=True)
def test_a_deletion_waits_for_a_summary_holding_its_locks_and_then_takes_its_chunk_too(engine, world, monkeypatch):
    """The summary's transaction holds the campaign row (FOR SHARE) and its party, and has yet to take the
    namespace lock for its chunk, when the deletion comes: the deletion waits (both take the campaign row
    first) and then deletes the summary and its chunk. A deletion taking the namespace lock before the
    campaign row deadlocked here (PostgreSQL aborted one of the two: a 500)."""
    campaign = Campaign.objects.get(slug="camp_123")
    inside, release = threading.Event(), threading.Event()
    real_flags_write = services._flags_write

    def slow_flags_write(*args: Any) -> Any:
        inside.set()
        assert release.wait(30)
        return real_flags_write(*args)

    monkeypatch.setattr(services, "_flags_write", slow_flags_write)
    results: dict[str, object] = {}

    def record() -> None:
        try:
            results["summary"] = services.summary_record(campaign=campaign, document=summary_document("s1"))
        except BaseException as exc:
            results["summary"] = exc
        finally:
            connection.close()

    def delete() -> None:
        try:
            results["delete"] = services.campaign_delete(campaign=campaign, actor="test")
        except BaseException as exc:
            results["delete"] = exc
        finally:
            connection.close()

    writer = threading.Thread(target=record)
    writer.start()
    assert inside.wait(30)
    deleter = threading.Thread(target=delete)
    deleter.start()
    deleter.join(1.0)
    assert deleter.is_alive()  # it waits for the summary's transaction
    release.set()
    writer.join(30)
    deleter.join(30)
    assert isinstance(results["summary"], services.SummaryResult) and results["summary"].created
    assert isinstance(results["delete"], dict), results["delete"]
    assert results["delete"]["summaries"] == 1 and results["delete"]["chunks"] == 1
    assert nothing_left(campaign.pk), campaign_rows(campaign.pk)


@pytest.mark.django_db(transaction=True)
def test_a_summary_whose_campaign_is_deleted_while_it_is_embedded_is_a_404_and_leaves_no_chunk(
        engine, world, monkeypatch):
    campaign = Campaign.objects.get(slug="camp_123")
    embedder = services.get_embedder()

    class DeletingEmbedder:
        """The embedding is the summary's slow step, before its transaction: the deletion lands then."""

        def embed_one(self, text: str) -> Any:
            thread = threading.Thread(target=lambda: (services.campaign_delete(
                campaign=Campaign.objects.get(pk=campaign.pk), actor="test"), connection.close()))
            thread.start()
            thread.join(30)
            return embedder.embed_one(text)

    monkeypatch.setattr(services, "get_embedder", DeletingEmbedder)
    with pytest.raises(ApplicationError) as refused:
        services.summary_record(campaign=campaign, document=summary_document("s1"))
    assert refused.value.status_code == 404
    assert nothing_left(campaign.pk), campaign_rows(campaign.pk)
    assert CampaignDeletion.objects.count() == 1


@pytest.mark.django_db(transaction=True)
def test_a_scene_assembled_while_its_campaign_is_deleted_is_a_404_not_a_500(engine, world, monkeypatch):
    """The turn record is written after the assembly; the campaign it would point at is gone by then."""
    from lore.campaigns import turns

    real = turns.scene_context

    def assemble_then_delete(**kwargs: Any) -> Any:
        result = real(**kwargs)
        services.campaign_delete(campaign=Campaign.objects.get(slug="camp_123"), actor="test")
        return result

    monkeypatch.setattr(turns, "scene_context", assemble_then_delete)
    response = engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json")
    assert response.status_code == 404, response.content
    assert response.json()["error"]["code"] == "not_found"
    assert not SceneAssembly.objects.exists()


@pytest.mark.django_db(transaction=True)
def test_two_deletions_at_once_give_one_204_and_one_404(engine, world):
    post_summary(engine, "s1")
    pk = Campaign.objects.get(slug="camp_123").pk
    clients = [scoped_client(world.tenant, "engine") for _ in range(2)]
    outcomes = at_once(*(lambda c=c: c.delete(BASE).status_code for c in clients))
    assert not errors_of(outcomes) and sorted(outcomes) == [204, 404]
    assert nothing_left(pk) and CampaignDeletion.objects.count() == 1


# --- From the admin ------------------------------------------------------------------------------
def admin_client(username: str = "ed", *, superuser: bool = True, perms: tuple[str, ...] = (),
                 enforce_csrf: bool = False) -> Client:
    """A logged-in admin client: a superuser, or staff holding only `perms` (codenames of the lore app)."""
    users = get_user_model().objects
    if superuser:
        user = users.create_superuser(username, f"{username}@example.com", "pw-123456")
    else:
        user = users.create_user(username, f"{username}@example.com", "pw-123456", is_staff=True)
        user.user_permissions.add(*Permission.objects.filter(content_type__app_label="lore", codename__in=perms))
    client = Client(enforce_csrf_checks=enforce_csrf)
    client.force_login(user)
    return client


def test_the_admin_deletion_page_lists_what_goes_and_a_get_deletes_nothing(engine, world):
    campaign = a_full_campaign(engine, world)
    before = campaign_rows(campaign.pk)
    client = admin_client()
    page = client.get(f"/admin/lore/campaign/{campaign.pk}/change/").content.decode()
    delete_url = f"/admin/lore/campaign/{campaign.pk}/delete-campaign/"
    assert f'href="{delete_url}"' in page
    response = client.get(delete_url)
    assert response.status_code == 200
    assert response.context["contents"] == {"parties": 1, "summaries": 2, "npcs": 1, "artcards": 1, "threads": 1,
                                            "chunks": 3}  # the two summaries' chunks and the art card's
    text = response.content.decode()
    for label, count in (("parties", 1), ("episodic summaries", 2), ("NPCs", 1), ("art cards", 1), ("threads", 1),
                         ("search chunks (episodes and art)", 3)):
        assert f"<tr><td>{label}</td><td>{count}</td></tr>" in text, label
    assert 'name="confirm" value="yes"' in text and "csrfmiddlewaretoken" in text
    # Nor does a post without the confirmation, and Django's own delete stays off, bulk and single.
    assert client.post(delete_url, {}).status_code == 200
    assert client.get(f"/admin/lore/campaign/{campaign.pk}/delete/").status_code == 403
    changelist = client.get("/admin/lore/campaign/")
    assert "delete_selected" not in dict(changelist.context["action_form"].fields["action"].choices)
    client.post("/admin/lore/campaign/", {"action": "delete_selected", "_selected_action": [campaign.pk],
                                          "post": "yes"})
    assert campaign_rows(campaign.pk) == before and not CampaignDeletion.objects.exists()


def test_the_admin_deletes_a_campaign_through_the_service_and_shows_the_receipts_counts(
        engine, world, django_capture_on_commit_callbacks):
    campaign = a_full_campaign(engine, world)
    client = admin_client()
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(f"/admin/lore/campaign/{campaign.pk}/delete-campaign/", {"confirm": "yes"})
    assert response.status_code == 302 and response["Location"] == "/admin/lore/campaign/"
    assert nothing_left(campaign.pk), campaign_rows(campaign.pk)
    # The service's traces went too: the admin's log entries and the tool calls about the campaign.
    assert not LogEntry.objects.exists() and not ToolCall.objects.filter(arguments__campaign_id="camp_123").exists()
    receipt = CampaignDeletion.objects.get()
    assert (receipt.slug, receipt.campaign_pk, receipt.actor) == ("camp_123", campaign.pk, "admin:ed")
    deleted = receipt.detail["deleted"]
    assert (deleted["summaries"], deleted["chunks"], deleted["npcs"], deleted["artcards"]) == (2, 3, 1, 1)
    shown = [str(m) for m in get_messages(response.wsgi_request)]
    assert len(shown) == 1 and "Campaign camp_123 of tenant-a deleted (" in shown[0]
    assert "2 summaries" in shown[0] and "3 chunks" in shown[0] and "5 admin log entries" in shown[0]
    assert f'href="/admin/lore/campaigndeletion/{receipt.pk}/change/"' in shown[0]
    # The page of a campaign deleted already (a second tab) leads back to the list; nothing more is written.
    again = client.post(f"/admin/lore/campaign/{campaign.pk}/delete-campaign/", {"confirm": "yes"})
    assert again.status_code == 302 and CampaignDeletion.objects.count() == 1


def test_deleting_from_the_admin_needs_the_delete_permission_and_the_csrf_token(engine, world):
    campaign = Campaign.objects.get(slug="camp_123")
    post_summary(engine, "s1")
    url = f"/admin/lore/campaign/{campaign.pk}/delete-campaign/"
    viewer = admin_client("viewer", superuser=False, perms=("view_campaign", "change_campaign"))
    assert viewer.get(f"/admin/lore/campaign/{campaign.pk}/change/").status_code == 200
    assert "delete-campaign" not in viewer.get(f"/admin/lore/campaign/{campaign.pk}/change/").content.decode()
    assert viewer.get(url).status_code == 403
    assert viewer.post(url, {"confirm": "yes"}).status_code == 403
    assert Campaign.objects.filter(pk=campaign.pk).exists() and not CampaignDeletion.objects.exists()
    # The model's delete permission is what it takes; the form's post needs the page's CSRF token.
    deleter = admin_client("deleter", superuser=False, perms=("view_campaign", "delete_campaign"),
                           enforce_csrf=True)
    page = deleter.get(url)
    assert page.status_code == 200
    assert deleter.post(url, {"confirm": "yes"}).status_code == 403  # no token
    assert Campaign.objects.filter(pk=campaign.pk).exists()
    token = page.context["csrf_token"]
    assert deleter.post(url, {"confirm": "yes", "csrfmiddlewaretoken": str(token)}).status_code == 302
    assert nothing_left(campaign.pk) and CampaignDeletion.objects.get().actor == "admin:deleter"


def test_deleting_from_the_admin_leaves_another_tenants_namesake_campaign_untouched(engine, world):
    post_summary(engine, "s1")
    mine = Campaign.objects.get(slug="camp_123")
    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    lore_services.world_create(tenant=other_tenant, slug="dnd5e", name="D&D", languages=["en"])
    other = scoped_client(other_tenant, "engine")
    second_campaign(other, "camp_123")
    post_summary(other, "s1")
    theirs = Campaign.objects.get(tenant=other_tenant, slug="camp_123")
    theirs_before = campaign_rows(theirs.pk)
    assert theirs_before["summaries"] == 1 and theirs_before["chunks"] == 1
    client = admin_client()
    assert client.get(f"/admin/lore/campaign/{mine.pk}/delete-campaign/").context["contents"]["summaries"] == 1
    assert client.post(f"/admin/lore/campaign/{mine.pk}/delete-campaign/", {"confirm": "yes"}).status_code == 302
    assert nothing_left(mine.pk)
    assert campaign_rows(theirs.pk) == theirs_before
    assert CampaignDeletion.objects.get().tenant_id == world.tenant_id
    tools = scoped_client(other_tenant, "tools")
    fetched = tools.post("/api/v1/tools/session_fetch", {"campaign_id": "camp_123", "party_id": "pty_001"},
                         format="json")
    assert [s["summary_id"] for s in fetched.json()["summaries"]] == ["s1"]
