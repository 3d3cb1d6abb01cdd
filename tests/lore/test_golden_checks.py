"""Golden queries checked against the entries the domain's versions hold (found by a QA session): a golden set
expecting `nope/nope` was kept without a word, and the smoke run then failed with "en: hit@5 0.000 < 0.85",
never saying the golden set named an entry no version has."""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client

from lore import services, smoke
from lore.models import KnowledgeVersion

GOLDEN = "/api/v1/worlds/dnd5e/domains/srd/golden"


def test_a_golden_set_naming_entries_no_version_holds_is_kept_with_a_warning_naming_them(editor_client,
                                                                                         staged) -> None:
    client, _ = editor_client()
    queries = [{"id": "en-1", "language": "en", "query": "how big is the explosion of flame",
                "expected": ["Spells/fireball", "nope/nope"]},
               {"id": "ru-1", "language": "ru", "query": "существо не видит", "expected": ["Conditions/blinded"]},
               {"id": "en-2", "language": "en", "query": "what a ghoul's touch does", "expected": ["Monsters/ghoul"]}]
    sent = client.put(GOLDEN, {"queries": queries}, format="json")
    # A golden set may be written before its sources: kept, and the answer says which ids nothing holds.
    assert sent.status_code == 200, sent.content
    warnings = sent.json()["warnings"]
    assert [(w["field"], w["query"], w["entry_ids"]) for w in warnings] == [
        ("queries[0].expected", "en-1", ["nope/nope"]), ("queries[2].expected", "en-2", ["Monsters/ghoul"])]
    assert "nope/nope" in warnings[0]["message"] and "dnd5e/srd" in warnings[0]["message"]
    assert client.get(GOLDEN).json()["warnings"] == warnings  # read back, checked again

    # Once a version holds the entry, the warning is gone.
    services.knowledge_ingest(world=staged.world, domain="srd", actor="test", files=[services.UploadedFile(
        "Monsters.json", b'[{"index": "ghoul", "name": "Ghoul", "desc": ["Paralyzing claws."]}]', "en")])
    assert [w["query"] for w in client.get(GOLDEN).json()["warnings"]] == ["en-1"]


def test_a_golden_set_written_before_any_version_warns_that_the_domain_has_none(editor_client, world) -> None:
    client, _ = editor_client()
    sent = client.put("/api/v1/worlds/dnd5e/domains/lore/golden", {"queries": [
        {"id": "en-1", "language": "en", "query": "who guards the bridge", "expected": ["Places/bridge"]}]},
        format="json")
    assert sent.status_code == 200, sent.content
    [warning] = sent.json()["warnings"]
    assert warning["entry_ids"] == ["Places/bridge"] and "has none yet" in warning["message"]


def test_a_failed_smoke_run_names_the_expected_ids_the_version_does_not_hold(editor_client, staged) -> None:
    client, _ = editor_client()
    assert client.put(GOLDEN, {"queries": [
        {"id": "en-1", "language": "en", "query": "teleport in silvery mist", "expected": ["nope/nope"]},
        # Held but not found: a miss of the retrieval, not of the golden set.
        {"id": "ru-1", "language": "ru", "query": "зззз кккк", "expected": ["Conditions/blinded"]},
    ]}, format="json").status_code == 200
    ran = client.post("/api/v1/worlds/dnd5e/domains/srd/versions/1.0.0/smoke", {}, format="json").json()
    misses = {m["id"]: m for m in ran["misses"]}
    assert (misses["en-1"]["language"], misses["en-1"]["missing"]) == ("en", ["nope/nope"])
    assert misses["ru-1"]["missing"] == []

    refused = client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert refused.status_code == 409
    failures = refused.json()["error"]["failures"]
    [en] = [f for f in failures if f.startswith("en: hit@5")]
    assert "does not hold: en-1 (nope/nope)" in en and "check the golden set" in en, failures
    assert not any("Conditions/blinded" in f or "ru-1" in f for f in failures), failures

    # The admin's smoke action says the same.
    admin = Client()
    admin.force_login(get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456"))
    page = admin.post("/admin/lore/knowledgeversion/", {"action": "run_smoke", "_selected_action": [staged.pk]},
                      follow=True).content.decode()
    assert "smoke failed" in page and "en-1 (nope/nope)" in page


def test_a_passing_smoke_run_is_not_failed_by_a_query_expecting_an_entry_the_version_lacks(staged,
                                                                                          golden_dir) -> None:
    """The missing ids explain a failure; they are no failure of their own: a query may name an entry of a
    later version beside one this version answers with."""
    golden_dir([{"id": "en-1", "language": "en", "query": "teleport in silvery mist",
                 "expected": ["Spells/misty-step", "Spells/blink"]}])
    result = smoke.version_smoke(version=staged)
    assert result["misses"] == [] and services.smoke_failures(staged) == []


def test_publish_without_golden_queries_says_to_send_them_or_force_not_to_run_the_smoke(editor_client, staged,
                                                                                       settings, tmp_path) -> None:
    """Publish said "no smoke run: POST …/smoke", and that call answered 409 no_golden: an editor went in a
    circle."""
    settings.LORE_GOLDEN_DIR = tmp_path
    client, _ = editor_client()
    refused = client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert refused.status_code == 409
    message = refused.json()["error"]["message"]
    assert "no golden queries" in message and f"PUT {GOLDEN}" in message
    assert "force and a reason" in message
    assert message.index("PUT") < message.index("/smoke")  # what comes first, first
    assert client.post("/api/v1/worlds/dnd5e/domains/srd/versions/1.0.0/smoke", {},
                       format="json").json()["error"]["code"] == "no_golden"

    # With golden queries but no run yet, the smoke run is what to do.
    assert client.put(GOLDEN, {"queries": [{"id": "en-1", "language": "en", "query": "teleport in silvery mist",
                                            "expected": ["Spells/misty-step"]}]}, format="json").status_code == 200
    again = client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert "no smoke run: POST" in again.json()["error"]["message"]
    assert "no golden queries" not in again.json()["error"]["message"]
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.STAGED
