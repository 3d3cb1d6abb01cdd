"""What a summary may do to dispositions: move those of the NPCs in its scene only, and record no change
that changes nothing (a delta of 0)."""

from __future__ import annotations

from typing import Any

import pytest

from lore.campaigns.api import NPC_EXAMPLE
from lore.campaigns.models import Disposition, DispositionChange, EpisodicSummary
from lore.campaigns.services import summary_text
from tests.lore.conftest import CAMPAIGN_BASE as BASE
from tests.lore.conftest import summary_document

pytestmark = pytest.mark.django_db


def _change(npc_id: str, delta: int, reason: str, towards: str = "party") -> dict[str, Any]:
    return {"npc_id": npc_id, "towards": towards, "delta": delta, "reason": reason}


@pytest.fixture
def borin(engine: Any) -> Any:
    """A second NPC of the campaign, not in the example summary's scene (who.npcs: npc_LiShen)."""
    assert engine.post(f"{BASE}/npcs", {**NPC_EXAMPLE, "npc_id": "npc_Borin",
                                        "static": {**NPC_EXAMPLE["static"], "name": "Borin"}},
                       format="json").status_code == 201
    return engine


@pytest.mark.parametrize("reason", ["paid in full", "заплатили сполна", "付清了钱"])
def test_a_summary_moving_an_npc_absent_from_its_scene_is_refused_naming_it(borin, reason):
    document = summary_document(relations_delta=[_change("npc_LiShen", 1, "kept promise"),
                                                 _change("npc_Borin", 2, reason)])
    response = borin.post(f"{BASE}/summaries", document, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "npc_not_in_scene" and list(error["fields"]) == ["/relations_delta/1/npc_id"]
    assert "npc_Borin" in error["message"]
    # Nothing of it is recorded: not the summary, not the change of the NPC that was there.
    assert not EpisodicSummary.objects.exists() and not Disposition.objects.exists()
    # In the scene, the same change is recorded.
    document["who"]["npcs"] = ["npc_LiShen", "npc_Borin"]
    recorded = borin.post(f"{BASE}/summaries", document, format="json")
    assert recorded.status_code == 201, recorded.content
    assert [(c["npc_id"], c["value_after"]) for c in recorded.json()["disposition_changes"]] == \
        [("npc_LiShen", 1), ("npc_Borin", 2)]


def test_an_unknown_npc_is_still_a_404_before_the_scene_is_asked(borin):
    document = summary_document(relations_delta=[_change("npc_ghost", 1, "x")])
    response = borin.post(f"{BASE}/summaries", document, format="json")
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["/relations_delta/0/npc_id"]


def test_a_zero_delta_records_no_change_and_no_disposition(engine):
    document = summary_document(relations_delta=[_change("npc_LiShen", 0, "stayed neutral"),
                                                 _change("npc_LiShen", -1, "p_A doubted him", "hero_id:p_A")])
    response = engine.post(f"{BASE}/summaries", document, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["disposition_changes"] == [
        {"npc_id": "npc_LiShen", "towards": "hero_id:p_A", "delta": -1, "applied": -1, "value_after": -1,
         "reason": "p_A doubted him"}]
    assert DispositionChange.objects.count() == 1
    # No disposition towards the party was started at 0 by it: the profile has none to list changes of.
    assert list(Disposition.objects.values_list("hero_id", "value")) == [("p_A", -1)]
    chunk = EpisodicSummary.objects.get().chunk.text
    assert "+0" not in chunk and "stayed neutral" not in chunk and "npc_LiShen -1 towards p_A" in chunk
    # A replay answers the same and records nothing more.
    assert engine.post(f"{BASE}/summaries", document, format="json").json() == response.json()
    assert DispositionChange.objects.count() == 1


def test_after_a_zero_delta_the_scene_says_each_change_as_made(engine, settings):
    """The scene reads the changes' rows in order; with no row for a 0 the next change's clamp is its own."""
    settings.GM_DISPOSITION_RANGE = 1
    assert engine.post(f"{BASE}/summaries", summary_document("s1", relations_delta=[
        _change("npc_LiShen", 1, "kept promise")]), format="json").status_code == 201
    late = summary_document("s2", when="2025-08-27T12:00:00Z", relations_delta=[
        _change("npc_LiShen", 0, "shrugged", "hero_id:p_B"), _change("npc_LiShen", 1, "another gift"),
        _change("npc_LiShen", 1, "p_A bowed", "hero_id:p_A")])
    assert engine.post(f"{BASE}/summaries", late, format="json").status_code == 201
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json").json()
    assert "npc_LiShen +0 (+1 asked, at its bound) towards the party: another gift." in scene["prompt"]
    assert "npc_LiShen +1 towards p_A: p_A bowed." in scene["prompt"]
    assert "shrugged" not in scene["prompt"]


def test_a_summary_recorded_with_a_row_for_a_zero_delta_still_reads_right():
    """Summaries recorded before kept a row (applied 0) for a 0: one `applied` per item."""
    document = summary_document(relations_delta=[_change("npc_LiShen", 0, "neutral"),
                                                 _change("npc_LiShen", 3, "gift")])
    for applied in ([0, 1], [1]):
        text = summary_text(document, applied)
        assert "npc_LiShen +1 (+3 asked, at its bound) towards the party: gift." in text and "neutral" not in text
