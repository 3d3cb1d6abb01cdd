"""An NPC's disposition towards one hero of a party (seed 003 §8.1.1: towards the party and the heroes):
`"towards": "hero_id:p_A"` in a summary's relations_delta, a disposition of its own beside the party's."""

from __future__ import annotations

from typing import Any

import pytest

from lore.campaigns import selectors
from lore.campaigns.api import NPC_PROFILE_ANSWER, SUMMARY_HERO_EXAMPLE
from lore.campaigns.models import Disposition, DispositionChange, EpisodicSummary, Party
from lore.campaigns.schemas import document_errors
from tests.lore.conftest import CAMPAIGN_BASE, summary_document

BASE = CAMPAIGN_BASE


def _change(delta: int, reason: str, towards: str = "hero_id:p_A", npc_id: str = "npc_LiShen") -> dict[str, Any]:
    return {"npc_id": npc_id, "towards": towards, "delta": delta, "reason": reason}


def _values() -> dict[str, int]:
    return dict(Disposition.objects.values_list("hero_id", "value"))


def test_a_hero_disposition_moves_apart_from_the_partys_with_its_own_history(engine):
    first = summary_document("s1", relations_delta=[_change(1, "kept promise", "party"),
                                                    _change(-2, "p_A insulted his blade")])
    response = engine.post(f"{BASE}/summaries", first, format="json")
    assert response.status_code == 201, response.json()
    assert response.json()["disposition_changes"] == [
        {"npc_id": "npc_LiShen", "towards": "party", "delta": 1, "applied": 1, "value_after": 1,
         "reason": "kept promise"},
        {"npc_id": "npc_LiShen", "towards": "hero_id:p_A", "delta": -2, "applied": -2, "value_after": -2,
         "reason": "p_A insulted his blade"}]
    second = summary_document("s2", when="2025-08-28T10:00:00Z",
                              relations_delta=[_change(1, "p_B shared his wine", "hero_id:p_B")])
    assert engine.post(f"{BASE}/summaries", second, format="json").status_code == 201
    assert _values() == {"": 1, "p_A": -2, "p_B": 1}
    # Each disposition keeps its own history.
    towards_a = DispositionChange.objects.filter(disposition__hero_id="p_A")
    assert list(towards_a.values_list("summary__summary_id", "value_after")) == [("s1", -2)]
    assert DispositionChange.objects.filter(disposition__hero_id="").count() == 1
    # The episode says towards whom; the party's sentence reads as it always did.
    text = EpisodicSummary.objects.get(summary_id="s1").chunk.text
    assert "npc_LiShen +1 towards the party: kept promise." in text
    assert "npc_LiShen -2 towards p_A: p_A insulted his blade." in text
    # A replay is recognised by its summary_id and body: nothing moves twice.
    replay = engine.post(f"{BASE}/summaries", first, format="json")
    assert replay.status_code == 200 and replay.json() == response.json()
    assert _values() == {"": 1, "p_A": -2, "p_B": 1} and DispositionChange.objects.count() == 3


def test_a_hero_disposition_is_clamped_to_the_range_like_the_partys(engine, settings):
    settings.GM_DISPOSITION_RANGE = 4
    for i in range(2):
        document = summary_document(f"s{i}", when=f"2025-08-2{i}T10:00:00Z",
                                    relations_delta=[_change(-3, f"slight {i}")])
        assert engine.post(f"{BASE}/summaries", document, format="json").status_code == 201
    assert list(DispositionChange.objects.order_by("id").values_list("delta", "applied", "value_after")) == \
        [(-3, -3, -3), (-3, -1, -4)]
    assert _values() == {"p_A": -4}  # the party's was never moved: no row
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001"}, format="json").json()
    assert "npc_LiShen -1 (-3 asked, at its bound) towards p_A: slight 1." in scene["prompt"]


def test_a_late_summary_still_moves_a_hero_disposition_and_leaves_the_flags_as_before(engine):
    now = summary_document("s_now", when="2025-09-01T10:00:00Z", flags={"gate": "open"},
                           relations_delta=[_change(2, "saved him")])
    late = summary_document("s_late", when="2020-01-01T00:00:00Z", flags={"gate": "closed"},
                            relations_delta=[_change(-1, "old grudge")])
    assert engine.post(f"{BASE}/summaries", now, format="json").status_code == 201
    body = engine.post(f"{BASE}/summaries", late, format="json").json()
    assert [f["key"] for f in body["flags_not_applied"]] == ["gate"]
    assert body["disposition_changes"][0]["value_after"] == 1  # a delta: it still moves
    assert Party.objects.get().flags["gate"] == "open" and _values() == {"p_A": 1}


@pytest.mark.parametrize("towards", ["hero:p_A", "hero_id:", "hero_id:p A", "Party", "p_A", "party_id:pty_001",
                                     "hero_id:" + "x" * 65, 5, None])
def test_a_malformed_towards_is_a_400_naming_it(engine, towards):
    response = engine.post(f"{BASE}/summaries", summary_document(relations_delta=[_change(1, "x", towards)]),
                           format="json")
    assert response.status_code == 400, response.content
    assert list(response.json()["error"]["fields"]) == ["/relations_delta/0/towards"]
    assert not EpisodicSummary.objects.exists() and not Disposition.objects.exists()


def test_a_hero_the_summary_does_not_name_among_its_players_is_a_400(engine):
    """The party has no roster: a hero is a player the summary names. "p_a" for "p_A" would start a
    disposition no profile lookup by the right id would show."""
    document = summary_document(relations_delta=[_change(1, "kept promise", "party"),
                                                 _change(1, "typo", "hero_id:p_a")])
    response = engine.post(f"{BASE}/summaries", document, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "unknown_hero" and list(error["fields"]) == ["/relations_delta/1/towards"]
    assert "p_A, p_B" in error["message"]
    assert not EpisodicSummary.objects.exists() and not Disposition.objects.exists()


def test_the_delta_bound_holds_per_disposition_the_partys_and_each_heros_apart(engine):
    apart = summary_document("s1", relations_delta=[_change(3, "saved the party", "party"), _change(3, "saved p_A"),
                                                    _change(-3, "p_B mocked him", "hero_id:p_B")])
    assert engine.post(f"{BASE}/summaries", apart, format="json").status_code == 201
    assert _values() == {"": 3, "p_A": 3, "p_B": -3}
    twice = summary_document("s2", relations_delta=[_change(2, "gift"), _change(2, "another gift")])
    refused = engine.post(f"{BASE}/summaries", twice, format="json")
    assert refused.status_code == 400 and refused.json()["error"]["code"] == "delta_out_of_bounds"
    assert list(refused.json()["error"]["fields"]) == ["/relations_delta/1/delta"]
    assert "towards hero 'p_A'" in refused.json()["error"]["message"]
    assert EpisodicSummary.objects.count() == 1


def test_the_npc_profile_shows_the_party_and_each_hero_or_the_hero_asked(engine):
    engine.post(f"{BASE}/summaries", summary_document("s1", relations_delta=[_change(1, "kept promise", "party")]),
                format="json")
    for i in range(4):
        document = summary_document(f"h{i}", when=f"2025-08-2{i}T10:00:00Z",
                                    relations_delta=[_change(-1, f"p_A lie {i}")])
        engine.post(f"{BASE}/summaries", document, format="json")
    party = Party.objects.get()
    profile = selectors.npc_profile("npc_LiShen", party)
    assert profile["dynamic"]["disposition"] == {"party_id:pty_001": 1, "hero_id:p_A": -4}
    # Still the seed's document (with its latest changes besides).
    seed_part = {k: v for k, v in profile.items() if k != "latest_changes"}
    assert document_errors("npc_profile", seed_part) == {}
    assert profile["dynamic"]["memory"][-1] == {"summary_id": "h3", "impact": "disposition-1 towards p_A: p_A lie 3"}
    assert profile["dynamic"]["memory"][0] == {"summary_id": "s1", "impact": "disposition+1: kept promise"}
    # The latest changes of each disposition, each saying towards whom: the hero's last 3 and the party's one.
    assert [(c["towards"], c["summary_id"]) for c in profile["latest_changes"]] == [
        ("hero_id:p_A", "h3"), ("hero_id:p_A", "h2"), ("hero_id:p_A", "h1"), ("party", "s1")]
    # Over REST: every hero, or the party and the hero asked (0 when the NPC has none towards it).
    read = engine.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001"})
    assert read.status_code == 200 and read.json()["dynamic"]["disposition"] == profile["dynamic"]["disposition"]
    only_b = engine.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001", "hero": "p_B"}).json()
    assert only_b["dynamic"]["disposition"] == {"party_id:pty_001": 1, "hero_id:p_B": 0}
    assert [c["towards"] for c in only_b["latest_changes"]] == ["party"]
    assert [m["summary_id"] for m in only_b["dynamic"]["memory"]] == ["s1"]
    only_a = engine.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001", "hero": "p_A"}).json()
    assert only_a["dynamic"]["disposition"] == {"party_id:pty_001": 1, "hero_id:p_A": -4}
    bad = engine.get(f"{BASE}/npcs/npc_LiShen", {"party": "pty_001", "hero": "p A!"})
    assert bad.status_code == 400 and "hero" in bad.json()["error"]["fields"]


def test_the_scene_says_the_disposition_towards_the_party_and_the_heroes_that_have_one(engine):
    engine.post(f"{BASE}/summaries", summary_document("s1", relations_delta=[
        _change(2, "kept promise", "party"), _change(-1, "p_A doubted him"),
        _change(3, "p_B saved him", "hero_id:p_B")]),
        format="json")
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json").json()
    [npc] = next(b for b in scene["blocks"] if b["name"] == "npc")["items"]
    # The party's line keeps its own latest changes only; the heroes' values follow, short.
    assert "Disposition towards the party: +2 (latest: +2 kept promise [s1]). Towards heroes: p_A -1, p_B +3." \
        in npc["text"]
    assert npc["tokens"] <= 100 and not [c for c in scene["cut"] if c["block"] == "npc"]


def test_without_a_hero_disposition_the_scene_line_is_as_before(engine):
    engine.post(f"{BASE}/summaries", summary_document(), format="json")
    scene = engine.post(f"{BASE}/scene-context", {"party": "pty_001", "npcs": ["npc_LiShen"]}, format="json").json()
    [npc] = next(b for b in scene["blocks"] if b["name"] == "npc")["items"]
    assert "Disposition towards the party: +1 (latest: +1 kept promise [sum_1])." in npc["text"]
    assert "heroes" not in npc["text"]


def test_the_published_examples_match_the_schemas():
    assert document_errors("episodic_summary", SUMMARY_HERO_EXAMPLE) == {}
    seed_part = {k: v for k, v in NPC_PROFILE_ANSWER.items() if k != "latest_changes"}
    assert document_errors("npc_profile", seed_part) == {}
    assert "/dynamic/disposition" in document_errors(
        "npc_profile", {**seed_part, "dynamic": {"disposition": {"hero:p_A": 1}, "memory": []}})


def test_admin_shows_hero_dispositions_and_their_history_read_only(engine):
    from django.contrib.auth import get_user_model
    from django.test import Client

    engine.post(f"{BASE}/summaries", summary_document("s1", relations_delta=[_change(-1, "p_A doubted him")]),
                format="json")
    user = get_user_model().objects.create_superuser("ops", "ops@example.com", "pw-123456")
    client = Client()
    client.force_login(user)
    disposition = Disposition.objects.get()
    page = client.get(f"/admin/lore/npc/{disposition.npc.pk}/change/").content.decode()
    assert "p_A" in page and "Hero id" in page
    listing = client.get("/admin/lore/dispositionchange/", {"towards": "hero"})
    assert listing.status_code == 200 and "hero_id:p_A" in listing.content.decode()
    assert "hero_id:p_A" not in client.get("/admin/lore/dispositionchange/", {"towards": "party"}).content.decode()
    client.post(f"/admin/lore/npc/{disposition.npc.pk}/change/",
                {"dispositions-0-value": "9", "dispositions-0-id": disposition.pk})
    assert Disposition.objects.get().value == -1


@pytest.mark.django_db(transaction=True)
def test_two_summaries_moving_one_heros_disposition_at_once_add_up(engine):
    """The party's row serialises its summaries: two recorded at once both move the hero's disposition
    (the first pair also creates it), one after the other, and its history gives the values in the order
    they were made, up to the range (10) and then no further."""
    from lore.campaigns import services
    from tests.concurrency import at_once, errors_of

    campaign = Party.objects.get(slug="pty_001").campaign
    expected = [[(3, 3), (3, 6)], [(3, 9), (1, 10)], [(0, 10), (0, 10)]]
    for round_, made in enumerate(expected):
        documents = [summary_document(f"r{round_}_{i}", when=f"2025-08-0{round_ + 1}T1{i}:00:00Z",
                                      relations_delta=[_change(3, f"round {round_} gift {i}")]) for i in range(2)]
        outcomes = at_once(*(lambda d=d: services.summary_record(campaign=campaign, document=d) for d in documents))
        assert not errors_of(outcomes), outcomes
        rows = list(DispositionChange.objects.filter(summary__summary_id__startswith=f"r{round_}_")
                    .order_by("id").values_list("applied", "value_after"))
        assert rows == made, (round_, rows)
    assert list(Disposition.objects.values_list("hero_id", "value")) == [("p_A", 10)]
    assert DispositionChange.objects.filter(disposition__hero_id="p_A").count() == 6
