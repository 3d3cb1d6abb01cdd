"""Campaign memory: engine-only writes, idempotent summaries, bounded dispositions, scene assembly."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from lore import services as lore_services
from lore.campaigns import selectors, services
from lore.campaigns.api import ARTCARD_EXAMPLE, NPC_EXAMPLE, SUMMARY_EXAMPLE
from lore.campaigns.models import (
    NPC,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    SceneAssembly,
)
from lore.models import KnowledgeVersion
from memoryhub import services as kernel_services
from rag.models import Chunk, Namespace
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client, summary_document
from tests.openapi import schema_body

BASE = CAMPAIGN_BASE
_client = scoped_client
_summary = summary_document


def test_summary_records_flags_disposition_history_and_episode_chunk(engine):
    response = engine.post(f"{BASE}/summaries", _summary(), format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["flag_changes"] == [{"key": "quest_moon_key", "value": "obtained", "previous": None},
                                    {"key": "gate_moon_door", "value": "open", "previous": None}]
    assert body["disposition_changes"] == [{"npc_id": "npc_LiShen", "towards": "party", "delta": 1, "applied": 1,
                                            "value_after": 1, "reason": "kept promise"}]
    chunk = Chunk.objects.get(pk=body["chunk_id"])
    assert chunk.namespace.startswith("campaign:") and chunk.kind == "episode" and chunk.session_id == "pty_001"
    assert "bargain" in chunk.text and chunk.meta["summary_id"] == "sum_1"
    # A flag changed later keeps its history; an unchanged one writes nothing.
    later = _summary("sum_2", flags={"gate_moon_door": "closed", "quest_moon_key": "obtained"},
                     when="2025-08-27T12:00:00Z")
    assert engine.post(f"{BASE}/summaries", later, format="json").status_code == 201
    party = Party.objects.get(slug="pty_001")
    assert party.flags == {"quest_moon_key": "obtained", "gate_moon_door": "closed"}
    history = list(PartyFlagChange.objects.filter(party=party, key="gate_moon_door").values_list("previous", "value"))
    assert history == [("", "open"), ("open", "closed")]
    assert Disposition.objects.get().value == 2


def _flagged(summary_id: str, when: str, flags: dict[str, str], delta: int = 0) -> dict[str, Any]:
    changes = [{"npc_id": "npc_LiShen", "towards": "party", "delta": delta, "reason": f"{summary_id}"}] if delta else []
    return _summary(summary_id, when=when, flags=flags, relations_delta=changes)


def test_a_late_summary_of_an_older_scene_does_not_undo_a_flag_a_later_scene_set(engine):
    """An engine's retry posted a 2020 scene after a 2025 duel: the party's flag went back to "no"
    and the answer said so, while session_fetch put the 2020 scene last."""
    assert engine.post(f"{BASE}/summaries", _flagged("sum_duel", "2025-09-01T10:00:00Z", {"duel_won": "yes"}, +1),
                       format="json").status_code == 201
    late = _flagged("sum_retry", "2020-01-01T00:00:00Z", {"duel_won": "no", "met_li_shen": "yes"}, -1)
    response = engine.post(f"{BASE}/summaries", late, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    # A flag no later scene named is set; the one the duel set stays, and the answer says why.
    assert body["flag_changes"] == [{"key": "met_li_shen", "value": "yes", "previous": None}]
    assert body["flags_not_applied"] == [{"key": "duel_won", "value": "no", "kept": "yes", "reason": "later_scene",
                                          "set_by": "sum_duel", "set_by_when": "2025-09-01T10:00:00Z"}]
    # Dispositions are deltas: the late one still moves.
    assert [c["value_after"] for c in body["disposition_changes"]] == [0]
    party = Party.objects.get()
    assert party.flags == {"duel_won": "yes", "met_li_shen": "yes"}
    refused = PartyFlagChange.objects.get(summary__summary_id="sum_retry", key="duel_won")
    assert (refused.applied, refused.previous, refused.value, refused.superseded_by.summary_id) == \
        (False, "yes", "no", "sum_duel")
    fetched = selectors.session_fetch(party.campaign, party, k=2)
    assert [s["summary_id"] for s in fetched["summaries"]] == ["sum_duel", "sum_retry"]
    assert fetched["flags"] == [{"key": "duel_won", "value": "yes", "set_by": "sum_duel"},
                                {"key": "met_li_shen", "value": "yes", "set_by": "sum_retry"}]
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json").json()
    [flags_line] = [i["text"] for b in scene["blocks"] for i in b["items"] if i["source"] == "flags:pty_001"]
    assert flags_line == "Flags: duel_won=yes, met_li_shen=yes."
    # A replay answers as the first write did; a scene after the duel sets the flag again.
    replay = engine.post(f"{BASE}/summaries", late, format="json")
    assert replay.status_code == 200 and replay.json() == body
    rematch = engine.post(f"{BASE}/summaries", _flagged("sum_rematch", "2025-09-02T10:00:00Z", {"duel_won": "no"}),
                          format="json").json()
    assert rematch["flag_changes"] == [{"key": "duel_won", "value": "no", "previous": "yes"}]
    assert rematch["flags_not_applied"] == [] and Party.objects.get().flags["duel_won"] == "no"


def test_a_flag_follows_the_latest_scene_that_named_it_even_without_changing_it(engine):
    """An engine that posts all its flags each turn names a flag it does not change: that scene,
    not the older one that changed it, is what a late summary is compared with."""
    for summary_id, when, flags in [("s_sep01", "2025-09-01T00:00:00Z", {"duel_won": "yes", "gate": "open"}),
                                    ("s_sep05", "2025-09-05T00:00:00Z", {"duel_won": "yes"})]:
        assert engine.post(f"{BASE}/summaries", _flagged(summary_id, when, flags), format="json").status_code == 201
    body = engine.post(f"{BASE}/summaries", _flagged("s_sep03", "2025-09-03T00:00:00Z",
                                                     {"duel_won": "no", "gate": "closed"}), format="json").json()
    # `gate` was last named on Sep 1, before this scene: its value is this one's.
    assert body["flag_changes"] == [{"key": "gate", "value": "closed", "previous": "open"}]
    assert [(f["key"], f["set_by"]) for f in body["flags_not_applied"]] == [("duel_won", "s_sep05")]
    assert Party.objects.get().flags == {"duel_won": "yes", "gate": "closed"}
    # At the same `when`, the summary recorded last wins, as before.
    tie = engine.post(f"{BASE}/summaries", _flagged("s_sep05_b", "2025-09-05T00:00:00Z", {"duel_won": "no"}),
                      format="json").json()
    assert tie["flag_changes"] == [{"key": "duel_won", "value": "no", "previous": "yes"}]


def test_an_expired_later_summary_still_keeps_its_flag(engine):
    """Expiry empties a summary's document; the flags it named stay on its row for a late summary to meet."""
    from datetime import timedelta

    from django.utils import timezone

    from lore.campaigns import retention

    engine.post(f"{BASE}/summaries", _flagged("sum_duel", "2025-09-01T10:00:00Z", {"duel_won": "yes"}), format="json")
    EpisodicSummary.objects.update(created_at=timezone.now() - timedelta(days=200))
    assert retention.episodes_expire()["summaries"] == 1
    late = engine.post(f"{BASE}/summaries", _flagged("sum_retry", "2020-01-01T00:00:00Z", {"duel_won": "no"}),
                       format="json").json()
    assert [f["set_by"] for f in late["flags_not_applied"]] == ["sum_duel"]
    assert Party.objects.get().flags == {"duel_won": "yes"}


def test_summaries_recorded_before_keep_their_flags_for_a_late_summary_to_meet(engine):
    import importlib

    from django.utils import timezone

    for summary_id, when, flags in [("s_live", "2025-09-05T00:00:00Z", {"duel_won": "yes", "gate": "open"}),
                                    ("s_gone", "2025-09-01T00:00:00Z", {"bell": "rung"})]:
        engine.post(f"{BASE}/summaries", _flagged(summary_id, when, flags), format="json")
    # As the code before stored them: no flags column; an expired summary's document emptied.
    EpisodicSummary.objects.update(flags={})
    EpisodicSummary.objects.filter(summary_id="s_gone").update(document={}, expired_at=timezone.now())
    migration = importlib.import_module("lore.migrations.0009_party_flags_by_when")
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL_SUMMARY_FLAGS)
    assert dict(EpisodicSummary.objects.values_list("summary_id", "flags")) == {
        "s_live": {"duel_won": "yes", "gate": "open"}, "s_gone": {"bell": "rung"}}


def test_same_summary_replays_the_same_answer_and_another_body_is_409(engine):
    first = engine.post(f"{BASE}/summaries", _summary(), format="json")
    replay = engine.post(f"{BASE}/summaries", _summary(), format="json")
    assert (first.status_code, replay.status_code) == (201, 200)
    assert replay.json() == first.json()
    changed = engine.post(f"{BASE}/summaries", _summary(notes="something else"), format="json")
    assert changed.status_code == 409 and "/summary_id" in changed.json()["error"]["fields"]
    assert EpisodicSummary.objects.count() == 1 and DispositionChange.objects.count() == 1
    assert Disposition.objects.get().value == 1 and Chunk.objects.filter(kind="episode").count() == 1


def test_delta_beyond_the_bound_is_400_and_the_range_clamps(engine, settings):
    too_big = _summary(relations_delta=[{"npc_id": "npc_LiShen", "towards": "party", "delta": 4, "reason": "x"}])
    refused = engine.post(f"{BASE}/summaries", too_big, format="json")
    assert refused.status_code == 400 and "/relations_delta/0/delta" in refused.json()["error"]["fields"]
    assert not EpisodicSummary.objects.exists()
    settings.GM_DISPOSITION_RANGE = 4
    for i in range(2):
        delta = [{"npc_id": "npc_LiShen", "towards": "party", "delta": 3, "reason": f"gift {i}"}]
        assert engine.post(f"{BASE}/summaries", _summary(f"s{i}", relations_delta=delta),
                           format="json").status_code == 201
    rows = list(DispositionChange.objects.order_by("id").values_list("delta", "applied", "value_after"))
    assert rows == [(3, 3, 3), (3, 1, 4)]
    # The scene and the stored episode say what was made, not the +3 asked: a model reasons from them.
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json").json()
    assert "npc_LiShen +1 (+3 asked, at its bound) towards the party: gift 1." in scene["prompt"]
    assert "npc_LiShen +3 towards the party: gift 0." in scene["prompt"]
    stored = EpisodicSummary.objects.get(summary_id="s1").chunk.text
    assert "npc_LiShen +1 (+3 asked, at its bound)" in stored


def test_the_delta_bound_holds_per_npc_when_one_summary_names_it_twice(engine):
    """Two items for one NPC, each within ±3, moved its disposition by 6 in one summary."""
    def change(delta: int, reason: str, npc_id: str = "npc_LiShen") -> dict[str, Any]:
        return {"npc_id": npc_id, "towards": "party", "delta": delta, "reason": reason}

    twice = _summary(relations_delta=[change(3, "сдержал слово"), change(3, "вернул долг")])
    refused = engine.post(f"{BASE}/summaries", twice, format="json")
    assert refused.status_code == 400, refused.json()
    assert refused.json()["error"]["code"] == "delta_out_of_bounds"
    assert list(refused.json()["error"]["fields"]) == ["/relations_delta/1/delta"]
    assert not EpisodicSummary.objects.exists() and not DispositionChange.objects.exists()
    # Within the bound together, or up and back down, several items for one NPC are fine.
    mixed = _summary(relations_delta=[change(2, "помог"), change(-1, "но солгал"), change(1, "извинился")])
    answer = engine.post(f"{BASE}/summaries", mixed, format="json")
    assert answer.status_code == 201, answer.json()
    assert [c["value_after"] for c in answer.json()["disposition_changes"]] == [2, 1, 2]


def test_schema_errors_and_notes_bound_name_the_path(engine):
    bad = _summary()
    bad["what"]["rolls"][0]["d20"] = 0
    bad["version"] = "1.0"
    response = engine.post(f"{BASE}/summaries", bad, format="json")
    assert response.status_code == 400
    assert {"/what/rolls/0/d20", "/version"} <= set(response.json()["error"]["fields"])
    long_notes = engine.post(f"{BASE}/summaries", _summary(notes=" ".join(["word"] * 60)), format="json")
    assert long_notes.status_code == 400 and "/notes" in long_notes.json()["error"]["fields"]
    wrong_campaign = engine.post(f"{BASE}/summaries", _summary(campaign_id="other"), format="json")
    assert wrong_campaign.status_code == 400 and "/campaign_id" in wrong_campaign.json()["error"]["fields"]
    # A year's typo stood first in every scene's episode block until it expired.
    for when in ("2099-01-01T00:00:00Z", "2024-05-01T20:00:00"):
        dated = engine.post(f"{BASE}/summaries", _summary(when=when), format="json")
        assert dated.status_code == 400 and list(dated.json()["error"]["fields"]) == ["/when"], dated.content
    assert not EpisodicSummary.objects.exists()


def test_nothing_is_half_written_when_the_chunk_fails(engine, monkeypatch):
    def broken(**kwargs: Any) -> None:
        raise RuntimeError("index down")

    monkeypatch.setattr("lore.campaigns.services.chunks_insert", broken)
    with pytest.raises(RuntimeError):
        services.summary_record(campaign=selectors.campaign_get(tenant_id=Party.objects.get().tenant_id,
                                                                slug="camp_123"), document=_summary())
    assert not EpisodicSummary.objects.exists() and not PartyFlagChange.objects.exists()
    assert not DispositionChange.objects.exists() and Party.objects.get().flags == {}


def test_a_taken_campaign_id_is_a_409_naming_campaign_id(engine):
    """The field is the request's `campaign_id`; the 409 named `slug`, which no request has."""
    again = engine.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "camp_123", "name": "Луна"}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "exists"
    assert list(again.json()["error"]["fields"]) == ["campaign_id"]
    party = engine.post(f"{BASE}/parties", {"party_id": "pty_001"}, format="json")
    assert party.status_code == 409 and list(party.json()["error"]["fields"]) == ["party_id"]


def test_unknown_and_foreign_ids_are_404(engine, world):
    unknown_party = engine.post(f"{BASE}/summaries", _summary(party_id="pty_nope"), format="json")
    assert unknown_party.status_code == 404 and "/party_id" in unknown_party.json()["error"]["fields"]
    delta = [{"npc_id": "npc_ghost", "towards": "party", "delta": 1, "reason": "x"}]
    unknown_npc = engine.post(f"{BASE}/summaries", _summary(relations_delta=delta), format="json")
    assert unknown_npc.status_code == 404 and "/relations_delta/0/npc_id" in unknown_npc.json()["error"]["fields"]
    # Who was there is the campaign's too, as on an art card; it was taken and shown in every scene's episode block.
    ghost = engine.post(f"{BASE}/summaries", _summary(relations_delta=[], who={"players": [], "npcs": [
        "npc_LiShen", "npc_ghost"]}), format="json")
    assert ghost.status_code == 404 and list(ghost.json()["error"]["fields"]) == ["/who/npcs/1"]
    assert engine.post("/api/v1/campaigns/nope/scene-context", {"party": "pty_001"}, format="json").status_code == 404
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_ghost"]}, format="json")
    assert scene.status_code == 404 and "npcs/0" in scene.json()["error"]["fields"]
    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    other = _client(other_tenant, "engine", "tools")
    assert other.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json").status_code == 404
    assert other.post(f"{BASE}/summaries", _summary(), format="json").status_code == 404
    assert other.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "c2"}, format="json").status_code == 404


WRITES = [
    ("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "camp_9"}),
    (f"{BASE}/parties", {"party_id": "pty_9"}),
    (f"{BASE}/summaries", SUMMARY_EXAMPLE),
    (f"{BASE}/npcs", NPC_EXAMPLE),
    (f"{BASE}/artcards", ARTCARD_EXAMPLE),
]


@pytest.mark.parametrize("scope", ["memory", "editor", "tools"])
def test_every_write_route_refuses_non_engine_keys(engine, world, scope):
    client = _client(world.tenant, scope)
    for path, body in WRITES:
        response = client.post(path, body, format="json")
        assert response.status_code == 403, (scope, path, response.status_code)
        assert response.json()["error"]["code"] == "missing_scope"
    assert not EpisodicSummary.objects.exists() and Disposition.objects.count() == 0
    from prometheus_client import REGISTRY

    def turns_counted() -> float:
        return REGISTRY.get_sample_value("memoryhub_gm_scene_tokens_count", {"block": "context"}) or 0.0

    before = turns_counted()
    scene = client.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json")
    assert scene.status_code == (200 if scope == "tools" else 403)
    # The LLM's tools key reads the scene and leaves nothing behind, not even the engine's turn record,
    # nor a turn in the metrics (their count is the engine's turns).
    assert not SceneAssembly.objects.exists() and turns_counted() == before
    if scope == "tools":
        assert scene.json()["assembly_id"] is None and scene.json()["prompt"]


def test_npc_dynamic_part_is_read_only(engine):
    document = {**NPC_EXAMPLE, "dynamic": {"disposition": {"party_id:pty_001": 5}, "memory": []}}
    response = engine.post(f"{BASE}/npcs", document, format="json")
    assert response.status_code == 400 and "/dynamic" in response.json()["error"]["fields"]
    # An incomplete one is refused as read-only too, not as incomplete (which read as "complete it").
    partial = engine.post(f"{BASE}/npcs", {**NPC_EXAMPLE, "dynamic": {"disposition": {}}}, format="json")
    assert partial.status_code == 400 and partial.json()["error"]["code"] == "read_only", partial.content
    renamed = engine.post(f"{BASE}/npcs", {**NPC_EXAMPLE, "version": "1.2.0"}, format="json")
    assert renamed.status_code == 200 and renamed.json()["version"] == "1.2.0"
    assert not Disposition.objects.exists()


def _npc(version: str, **static: Any) -> dict[str, Any]:
    return {**NPC_EXAMPLE, "version": version, "static": {**NPC_EXAMPLE["static"], **static}}


def test_an_older_npc_version_is_a_409_and_keeps_the_stored_profile(engine):
    """A late 0.0.1 replaced 1.0.1 with a 200 and its secrets were lost."""
    newer = _npc("1.10.0", secrets=["scar_left_cheek_reason", "owes_the_witch"])
    assert engine.post(f"{BASE}/npcs", newer, format="json").status_code == 200
    for version in ("0.0.1", "1.9.9", "1.1.0"):  # as SemVer: 1.10.0 is above 1.9.9, which strings get wrong
        stale = engine.post(f"{BASE}/npcs", _npc(version, secrets=[]), format="json")
        assert stale.status_code == 409, (version, stale.content)
        error = stale.json()["error"]
        assert error["code"] == "stale_version" and list(error["fields"]) == ["/version"]
        assert "1.10.0" in error["message"]
    npc = NPC.objects.get(npc_id="npc_LiShen")
    assert (npc.version, npc.static["secrets"]) == ("1.10.0", ["scar_left_cheek_reason", "owes_the_witch"])


def test_the_same_npc_version_replays_with_its_body_and_is_a_409_with_another(engine):
    before = NPC.objects.get(npc_id="npc_LiShen")
    replay = engine.post(f"{BASE}/npcs", NPC_EXAMPLE, format="json")
    assert replay.status_code == 200 and replay.json() == {"npc_id": "npc_LiShen", "static": NPC_EXAMPLE["static"],
                                                           "version": "1.1.0"}
    changed = engine.post(f"{BASE}/npcs", _npc("1.1.0", secrets=[]), format="json")
    assert changed.status_code == 409, changed.content
    assert changed.json()["error"]["code"] == "conflict" and list(changed.json()["error"]["fields"]) == ["/version"]
    after = NPC.objects.get(npc_id="npc_LiShen")
    assert (after.static, after.updated_at) == (before.static, before.updated_at)
    # A newer version replaces it.
    replaced = engine.post(f"{BASE}/npcs", _npc("1.1.1", secrets=[]), format="json")
    assert replaced.status_code == 200 and replaced.json()["static"]["secrets"] == []


def test_art_cards_are_idempotent_and_give_keep_and_avoid_markers(engine):
    assert engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json").status_code == 201
    assert engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json").status_code == 200
    changed = engine.post(f"{BASE}/artcards", {**ARTCARD_EXAMPLE, "visual_tags": ["red"]}, format="json")
    assert changed.status_code == 409
    second = {**ARTCARD_EXAMPLE, "image_id": "img_2", "visual_tags": ["scar_left_cheek", "katana", "dawn"]}
    refused = {**ARTCARD_EXAMPLE, "image_id": "img_3", "visual_tags": ["scar_right_cheek", "katana"],
               "moderation": {"safe": False}}
    for card in (second, refused):
        assert engine.post(f"{BASE}/artcards", card, format="json").status_code == 201
    campaign = selectors.campaign_get(tenant_id=Party.objects.get().tenant_id, slug="camp_123")
    art = selectors.art_suggest(campaign, npcs=["npc_LiShen"])
    assert art["keep"] == ["katana", "scar_left_cheek"]
    assert art["avoid"] == ["scar_right_cheek"] and art["style"] == "ukiyo-e-modern"
    assert selectors.art_suggest(campaign, scene_id="scn_999")["cards"] == []
    # An NPC the campaign does not have is refused, as a summary's is, naming the item.
    ghost = {**ARTCARD_EXAMPLE, "image_id": "img_4", "entities": {"npc": ["npc_LiShen", "npc_Ghost"], "location": []}}
    response = engine.post(f"{BASE}/artcards", ghost, format="json")
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["/entities/npc/1"]


def test_session_fetch_and_npc_profile_for_the_tools(engine):
    for i in range(3):
        delta = [{"npc_id": "npc_LiShen", "towards": "party", "delta": -1, "reason": f"lie {i}"}]
        engine.post(f"{BASE}/summaries", _summary(f"s{i}", when=f"2025-08-2{i}T10:00:00Z", relations_delta=delta),
                    format="json")
    party = Party.objects.get()
    fetched = selectors.session_fetch(party.campaign, party, k=2)
    assert [s["summary_id"] for s in fetched["summaries"]] == ["s2", "s1"]
    assert {"key": "gate_moon_door", "value": "open", "set_by": "s0"} in fetched["flags"]
    profile = selectors.npc_profile("npc_LiShen", party)
    assert profile["dynamic"]["disposition"] == {"party_id:pty_001": -3}
    assert [m["summary_id"] for m in profile["dynamic"]["memory"]] == ["s0", "s1", "s2"]
    assert profile["latest_changes"][0]["reason"] == "lie 2"
    # The engine reads it over REST with its own key (it had only the tools scope's npc_profile).
    read = engine.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001"})
    assert read.status_code == 200, read.content
    assert read.json()["dynamic"]["disposition"] == {"party_id:pty_001": -3} and read.json()["npc_id"] == "npc_LiShen"
    for path, params, field in [(f"{BASE}/npcs/npc_Ghost", {"party": "pty_001"}, "npc_id"),
                                (f"{BASE}/npcs/npc_LiShen", {"party": "pty_999"}, "party"),
                                (f"{BASE}/npcs/npc_LiShen", {}, "party")]:
        response = engine.get(path, params)
        assert response.status_code in (400, 404) and field in response.json()["error"]["fields"], response.content
    memory_only = scoped_client(party.tenant, "memory")
    assert memory_only.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001"}).status_code == 403


# --- Scene assembly ----------------------------------------------------------------------------
@pytest.fixture
def published(staged: KnowledgeVersion) -> KnowledgeVersion:
    lore_services.lore_version_publish(version=staged, actor="test", force=True, reason="test fixture")
    return staged


def _scene_with_srd(engine, world, files, body: dict) -> dict:
    """Publish these SRD files as the world's rules, then ask for a scene."""
    version = lore_services.knowledge_ingest(world=world, domain="srd", files=files, actor="test")
    lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    return engine.post(f"{BASE}/scene-context", body, format="json").json()


def test_the_rules_block_holds_rules_not_the_stat_blocks_of_monsters_that_use_them(engine, world, small_files):
    from tests.lore.conftest import as_bytes

    monsters = [{"index": name.lower(), "name": name, "desc": f"The {name} grapples its prey. A grappled creature "
                 "is restrained while grappled; the grapple escape DC is 13. It grapples again."}
                for name in ("Ankheg", "Chuul", "Giant Toad")]
    rules = [{"index": "making-an-attack", "name": "Making an Attack",
              "desc": "## Grappling\nWhen you want to grab a creature or wrestle with it, you can use the Attack "
                      "action to make a special melee attack, a grapple."}]
    files = [*small_files, lore_services.UploadedFile("Monsters.json", as_bytes(monsters), "en"),
             lore_services.UploadedFile("Rule-Sections.json", as_bytes(rules), "en")]
    scene = _scene_with_srd(engine, world, files, {
        "party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
        "user_input": "I try to grapple Li Shen and push him off the bridge"})
    rules = next(b for b in scene["blocks"] if b["name"] == "rules")
    sources = [i["source"] for i in rules["items"]]
    assert sources and sources[0].startswith("srd:Rule-Sections/making-an-attack")
    assert not [s for s in sources if s.startswith("srd:Monsters/")]


@pytest.mark.parametrize("user_input", ["Я пытаюсь уговорить стражника пропустить нас",
                                        "Пробую убедить стражника, что мы гонцы",
                                        "I try to persuade the guard to let us pass"],
                         ids=["ru-ugovorit", "ru-ubedit", "en-persuade"])
def test_a_persuasion_attempt_said_with_a_verb_brings_the_persuasion_rule(engine, world, small_files, user_input):
    """The triggers knew the nouns ("persuasion", "убеждение") but not the verbs a player says."""
    from tests.lore.conftest import as_bytes

    skills = [{"index": "persuasion", "name": "Убеждение", "desc": [
        "Когда вы пытаетесь повлиять на кого-то или группу, уговорить стражника пропустить вас или убедить "
        "собеседника тактом и добрыми намерениями, Мастер может попросить вас совершить проверку Харизмы "
        "(Убеждение)."]}]
    skills_en = [{"index": "persuasion", "name": "Persuasion", "desc": [
        "When you attempt to persuade someone or a group of people with tact and good nature, the GM might ask "
        "you to make a Charisma (Persuasion) check, e.g. to convince a guard to let you pass."]}]
    files = [*small_files, lore_services.UploadedFile("Skills.json", as_bytes(skills), "ru"),
             lore_services.UploadedFile("Skills.json", as_bytes(skills_en), "en")]
    scene = _scene_with_srd(engine, world, files, {"party": "pty_001", "user_input": user_input})
    assert scene["rules_needed"] is True, scene["rules_trigger"]
    rules = next(b for b in scene["blocks"] if b["name"] == "rules")
    assert rules["items"] and rules["items"][0]["source"].startswith("srd:Skills/persuasion@")


@pytest.mark.parametrize("user_input", ["I try to shove the guard into the harbour", "I push the guard off the pier",
                                        "Я толкаю стражника в воду"], ids=["en-shove", "en-push", "ru-tolkat"])
def test_a_shove_said_with_a_verb_brings_the_shoving_rule(engine, world, small_files, user_input):
    """"I try to shove the guard" named no trigger word, so the rules block stayed empty."""
    from tests.lore.conftest import as_bytes

    rules = [{"index": "making-an-attack", "name": "Making an Attack",
              "desc": "## Shoving a Creature\nUsing the Attack action, you can make a special melee attack to shove "
                      "a creature, either to knock it prone or push it 5 feet away from you. Вы толкаете существо."}]
    files = [*small_files, lore_services.UploadedFile("Rule-Sections.json", as_bytes(rules), "en")]
    scene = _scene_with_srd(engine, world, files, {"party": "pty_001", "user_input": user_input})
    assert scene["rules_needed"] is True, scene["notes"]
    rules_block = next(b for b in scene["blocks"] if b["name"] == "rules")
    assert "srd:Rule-Sections/making-an-attack@1.0.0" in [i["source"] for i in rules_block["items"]]


def test_the_lore_block_holds_what_the_player_asks_about(engine, world):
    """The lore query was the location, the NPCs and the scene text: a question about a relic none of
    them named ("how do I ring the Drowned Bell?") brought the harbour and the guards instead."""
    entries = "\n\n".join(f"## {title}\n{text}" for title, text in [
        ("Port Brackwater", "A fishing town on stilts; the harbour guard takes bribes."),
        ("The Harbour Guard", "Guards of Port Brackwater in rusted breastplates."),
        ("Gullrock", "A black rock island off Port Brackwater with a flooded chapel."),
        ("The Drowned Bell", "A bronze bell under the water; ring it three times to command the sea-drake."),
    ])
    version = lore_services.knowledge_ingest(
        world=world, domain="lore", files=[lore_services.UploadedFile("Reach.md", f"# Reach\n\n{entries}".encode(),
                                                                     "en")], actor="test")
    lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    body = {"party": "pty_001", "location": "loc_brackwater", "scene_text": "The harbour of Port Brackwater at dusk.",
            "user_input": "I ask how to ring the Drowned Bell"}
    scene = engine.post(f"{BASE}/scene-context", body, format="json").json()
    lore_block = next(b for b in scene["blocks"] if b["name"] == "lore")
    assert "lore:Reach/reach/the-drowned-bell@1.0.0" in [i["source"] for i in lore_block["items"]]


def test_scene_context_blocks_in_order_within_budget_and_degraded_without_lore(engine, published):
    engine.post(f"{BASE}/summaries", _summary(), format="json")
    engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json")
    body = {"party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
            "scene_text": "Mist over the moon bridge.",
            "user_input": "I make a dexterity saving throw against the fireball"}
    response = engine.post(f"{BASE}/scene-context", body, format="json")
    assert response.status_code == 200, response.json()
    scene = response.json()
    assert [b["name"] for b in scene["blocks"]] == ["system", "rules", "lore", "episode", "npc", "art", "user"]
    blocks = {b["name"]: b for b in scene["blocks"]}
    assert scene["rules_needed"] and 1 <= len(blocks["rules"]["items"]) <= 2
    assert blocks["rules"]["items"][0]["source"].startswith("srd:Spells/fireball")
    # No lore published: degraded, said in notes and in the system block.
    assert scene["degraded"] and blocks["lore"]["items"] == [] and "No lore was retrieved" in scene["prompt"]
    assert "Flags:" in blocks["episode"]["items"][0]["text"] and "summary:sum_1" in \
        [i["source"] for i in blocks["episode"]["items"]]
    assert "Disposition towards the party: +1" in blocks["npc"]["items"][0]["text"]
    assert "scar_left_cheek" in blocks["art"]["items"][0]["text"]
    assert blocks["user"]["items"][0]["text"] == body["user_input"]
    for block in scene["blocks"]:
        assert block["tokens"] == sum(i["tokens"] for i in block["items"])
        assert block["budget"] is None or block["tokens"] <= block["budget"]
    assert scene["tokens"]["without_user"] <= scene["tokens"]["budget"] == 1800
    calm = engine.post(f"{BASE}/scene-context", {**body, "user_input": "I wave at the ferryman."},
                       format="json").json()
    assert not calm["rules_needed"] and calm["blocks"][1]["items"] == []


def test_scene_context_reports_what_was_cut(engine, settings, tmp_path):
    for npc_id in ("npc_A", "npc_B"):
        engine.post(f"{BASE}/npcs", {**NPC_EXAMPLE, "npc_id": npc_id}, format="json")
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen", "npc_A", "npc_B"]},
                        format="json").json()
    npc_block = scene["blocks"][4]
    assert [i["source"] for i in npc_block["items"]] == ["npc:npc_LiShen", "npc:npc_A"]
    assert {"block": "npc", "source": "npc:npc_B", "reason": "max_items"} in scene["cut"]


def test_scene_context_validates_input(engine):
    response = engine.post(f"{BASE}/scene-context", {"party": 5, "npcs": "npc_LiShen"}, format="json")
    assert response.status_code == 400 and {"party", "npcs"} <= set(response.json()["error"]["fields"])
    assert connection.vendor == "postgresql"


def test_a_scene_without_a_player_line_is_assembled_whether_user_input_is_empty_or_left_out(engine, schema):
    """A blank `user_input` is not refused (a QA session asked): a scene may open without a player line
    (seed 003 §8.6), and "" is what an engine that always sends the key sends then."""
    left_out = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json")
    for blank in ("", "  \n"):
        scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"], "user_input": blank},
                            format="json")
        assert scene.status_code == 200, scene.content
        body, same = scene.json(), left_out.json()
        assert [b for b in body["blocks"] if b["name"] == "user"] == [{"name": "user", "tokens": 0, "budget": None,
                                                                        "items": []}]
        assert (body["rules_needed"], body["prompt"]) == (False, same["prompt"])
    documented = schema_body(schema, "/api/v1/campaigns/{campaign}/scene-context", "post")["properties"]["user_input"]
    assert "no user block" in documented["description"]


def test_admin_shows_dispositions_read_only(engine):
    from django.contrib.auth import get_user_model
    from django.test import Client

    engine.post(f"{BASE}/summaries", _summary(), format="json")
    admin_user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    npc = Disposition.objects.get().npc
    page = client.get(f"/admin/lore/npc/{npc.pk}/change/")
    assert page.status_code == 200 and "pty_001" in page.content.decode()
    for path in ("npc", "party", "episodicsummary", "dispositionchange", "artcard", "campaign"):
        assert client.get(f"/admin/lore/{path}/").status_code == 200
    # A late summary's change shows in the party's flag history, marked not applied, with the scene kept.
    engine.post(f"{BASE}/summaries", _summary("sum_old", when="2020-01-01T00:00:00Z",
                                              flags={"gate_moon_door": "closed"}, relations_delta=[]), format="json")
    party = Party.objects.get()
    assert party.flags["gate_moon_door"] == "open"
    flag_page = client.get(f"/admin/lore/party/{party.pk}/change/").content.decode()
    assert "sum_old" in flag_page and "Superseded by" in flag_page and "icon-no" in flag_page
    # The change view is a view: posting a new disposition value changes nothing.
    change = Disposition.objects.get()
    client.post(f"/admin/lore/npc/{npc.pk}/change/", {"dispositions-0-value": "9", "dispositions-0-id": change.pk})
    assert Disposition.objects.get().value == 1
    assert client.get("/admin/lore/disposition/add/").status_code in (403, 404)


def test_demo_campaign_is_created_once_and_assembles_a_scene(world):
    from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY, demo_campaign_create, demo_lore_publish

    lore = demo_lore_publish(world=world)
    assert lore is not None
    lore.refresh_from_db()
    assert lore.status == "live"
    assert lore.smoke["overall"]["hit@5"] == 1.0 and demo_lore_publish(world=world) is None
    assert demo_campaign_create(world=world) is not None
    assert demo_campaign_create(world=world) is None
    client = _client(world.tenant, "tools")
    scene = client.post(f"/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context",
                        {"party": DEMO_PARTY, "location": "loc_swamp_hut", "npcs": ["npc_Vasilisa", "npc_LiShen"],
                         "user_input": "Я делаю проверку убеждения"}, format="json").json()
    blocks = {b["name"]: b for b in scene["blocks"]}
    assert scene["rules_needed"] and "Василиса" in blocks["npc"]["items"][0]["text"]
    assert "-2" in blocks["npc"]["items"][0]["text"] and "witch_favour=owed" in scene["prompt"]
    assert "melancholic wuxia" in blocks["system"]["items"][0]["text"]
    assert "болото" in blocks["art"]["items"][0]["text"]
    # Lore is live now: entries for the NPCs named (in either language) come back; not degraded.
    assert not scene["degraded"]
    sources = {i["source"].split("@")[0] for i in blocks["lore"]["items"]}
    assert {"lore:MoonValley/лунная-долина/изба-на-болоте",
            "lore:MoonValley/moon-valley/li-shen-the-ronin-of-the-bridge"} <= sources
    assert scene["tokens"]["without_user"] <= 1800


def test_episode_search_finds_the_partys_summary_by_meaning_and_not_another_partys(engine):
    engine.post(f"{BASE}/parties", {"party_id": "pty_002"}, format="json")
    engine.post(f"{BASE}/summaries", _summary("s_bridge"), format="json")
    forge = _summary("s_forge", where={"location_id": "loc_forge", "tags": ["smoke"]}, relations_delta=[],
                     what={"event": "repair", "outcome": "success", "rolls": [], "loot": []},
                     notes="The dwarf mended the katana at the anvil.")
    engine.post(f"{BASE}/summaries", forge, format="json")
    engine.post(f"{BASE}/summaries", {**forge, "summary_id": "s_other", "party_id": "pty_002"}, format="json")
    party = Party.objects.get(slug="pty_001")
    hits = selectors.episode_search(party.campaign, party, "dwarf mended the katana at the anvil", k=5)
    assert [h["summary_id"] for h in hits] == ["s_forge"]  # the bridge summary shares no word and is far
    hits = selectors.episode_search(party.campaign, party, "what happened at the bridge and the anvil?", k=5)
    assert {h["summary_id"] for h in hits} == {"s_forge", "s_bridge"}  # never the other party's s_other


def test_episode_search_answers_nothing_for_a_question_no_episode_is_about(engine):
    """QA: "zzzz qqqq" returned k summaries, the first at a negative cosine."""
    engine.post(f"{BASE}/summaries", _summary("s_bridge"), format="json")
    party = Party.objects.get(slug="pty_001")
    assert selectors.episode_search(party.campaign, party, "zzzz qqqq", k=4) == []
    assert selectors.episode_search(party.campaign, party, "дуэль под дождём", k=4) == []
    assert [h["summary_id"] for h in selectors.episode_search(party.campaign, party, "bridge", k=4)] == ["s_bridge"]


def test_episodes_of_another_embedder_are_found_by_their_words(engine):
    forge = _summary("s_forge", where={"location_id": "loc_forge", "tags": ["smoke"]}, relations_delta=[],
                     what={"event": "repair", "outcome": "success", "rolls": [], "loot": []},
                     notes="The dwarf mended the katana at the anvil.")
    engine.post(f"{BASE}/summaries", _summary("s_bridge"), format="json")
    engine.post(f"{BASE}/summaries", forge, format="json")
    party = Party.objects.get(slug="pty_001")
    Namespace.objects.filter(name=party.campaign.episode_namespace).update(vector_space="hashing-v0")
    hits = selectors.episode_search(party.campaign, party, "katana anvil", k=5)
    assert [h["summary_id"] for h in hits] == ["s_forge"]  # by words: the bridge summary shares none


def test_a_long_version_is_a_400_not_a_database_error(engine):
    response = engine.post(f"{BASE}/npcs", {**NPC_EXAMPLE, "version": "417997.0.6847351877454911233454640"},
                           format="json")
    assert response.status_code == 400 and "/version" in response.json()["error"]["fields"]
    card = {**ARTCARD_EXAMPLE, "embedding": {"model": "m", "dims": 3, "vec": None}}
    assert "/embedding/vec" in engine.post(f"{BASE}/artcards", card, format="json").json()["error"]["fields"]
    assert "/npc_id" in engine.post(f"{BASE}/npcs", {}, format="json").json()["error"]["fields"]


def test_a_summary_with_a_word_too_long_to_index_is_stored(engine):
    """The episode chunk's terms column holds 128 characters a term: a long word was a 500."""
    document = summary_document("sum_long", notes=f"The seal read {'Q' * 140}.")
    response = engine.post(f"{BASE}/summaries", document, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.django_db(transaction=True)
def test_a_late_summary_and_a_newer_one_at_once_leave_the_newer_scenes_flag(engine):
    """Two summaries of one party recorded at the same time, an older scene and a newer one: whichever
    takes the party's lock first, the flag ends as the newer scene set it."""
    from lore.campaigns import services
    from tests.concurrency import at_once, errors_of

    campaign = Party.objects.get(slug="pty_001").campaign
    for round_ in range(4):
        older = _flagged(f"old_{round_}", f"2025-08-0{round_ + 1}T10:00:00Z", {f"door_{round_}": "closed"})
        newer = _flagged(f"new_{round_}", f"2025-09-0{round_ + 1}T10:00:00Z", {f"door_{round_}": "open"})
        calls = [lambda d=older: services.summary_record(campaign=campaign, document=d),
                 lambda d=newer: services.summary_record(campaign=campaign, document=d)]
        outcomes = at_once(*(calls if round_ % 2 else calls[::-1]))
        assert not errors_of(outcomes), outcomes
        assert Party.objects.get(slug="pty_001").flags[f"door_{round_}"] == "open"
        assert PartyFlagChange.objects.get(key=f"door_{round_}", summary__summary_id=f"new_{round_}").applied


@pytest.mark.parametrize("user_input", ["", "   ", "\u200b"], ids=["empty", "spaces", "zero-width"])
def test_a_scene_without_a_player_line_is_an_opening_not_an_error(engine, user_input: str) -> None:
    """Seed 003 §8.6 assembles every scene, its user block the player's input or the party's choice: an empty
    input is a scene's opening (documented in the API and the README), answered as one without the key; an
    input of zero-width characters alone is no player line either, not a user block of nothing."""
    body = {"party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
            "scene_text": "The party reaches the moon bridge at dusk."}
    opening = engine.post(f"{CAMPAIGN_BASE}/scene-context", {**body, "user_input": user_input}, format="json")
    assert opening.status_code == 200, opening.content
    without = engine.post(f"{CAMPAIGN_BASE}/scene-context", body, format="json").json()
    scene = opening.json()
    assert next(b for b in scene["blocks"] if b["name"] == "user")["items"] == []
    assert (scene["rules_needed"], scene["tokens"]["total"]) == (False, without["tokens"]["total"])
    assert scene["prompt"] == without["prompt"]
