"""Lore edits reviewed by editors: propose, approve into a new staged version, reject; API and admin."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lore import edits, selectors, services
from lore.edit_apply import edit_entry
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent
from lore.models import Alias, KnowledgeVersion
from lore.normalize import SourceOptions, normalize
from memoryhub import registry
from memoryhub.exceptions import ApplicationError
from tests.concurrency import at_once, errors_of

NEW_FIREBALL = "A tiny ember drifts from your fingertip and sets one candle alight. No damage."


def _search(tenant_id: int, query: str, alias: str = "latest", version: str | None = None) -> list:
    targets = selectors.targets_resolve(tenant_id=tenant_id, world_slug="dnd5e", domains=["srd"],
                                        alias=None if version else alias, version=version)
    return selectors.knowledge_search(tenant_id=tenant_id, targets=targets, query=query, k=5).hits


@pytest.fixture
def live(staged: KnowledgeVersion) -> KnowledgeVersion:
    services.lore_version_publish(version=staged, actor="test", force=True, reason="fixture")
    staged.refresh_from_db()
    return staged


def test_approved_update_builds_staged_version_while_latest_keeps_old_text(live):
    world = live.world
    edit = edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                        entry_id="Spells/fireball", text=NEW_FIREBALL, reason="house rule",
                                        actor="alice")
    assert edit.status == "pending" and "8d6 fire damage" in edit.old_text and edit.base_version == live
    assert "8d6" in edits.edit_diff_html(edit) and "ember" in edits.edit_diff_html(edit)
    approved = edits.knowledge_edit_approve(edit=edit, actor="bob")
    produced = approved.produced_version
    assert (approved.status, approved.decided_by, produced.version, produced.status) == (
        "approved", "bob", "1.0.1", "staged")
    assert produced.edits == [edit.pk] and produced.entry_count == live.entry_count
    # Every other chunk keeps its vector: only the edited entry is embedded again.
    assert produced.reused_chunks == produced.chunk_count - 1
    assert Alias.objects.get(world=world, domain="srd", name="stage").version == produced
    stage_hit = _search(world.tenant_id, "ember candle fingertip", alias="stage")[0]
    assert (stage_hit.entry_id, stage_hit.version) == ("Spells/fireball", "1.0.1") and "ember" in stage_hit.text
    live_hit = _search(world.tenant_id, "fireball explosion", alias="latest")[0]
    assert (live_hit.entry_id, live_hit.version) == ("Spells/fireball", "1.0.0") and "8d6" in live_hit.text
    assert list(KnowledgeEditEvent.objects.filter(edit=edit).values_list("action", "actor", "version")) == [
        ("proposed", "alice", ""), ("approved", "bob", "1.0.1")]
    # The edit stays in the versions built on top of it (a later ingest keeps it).
    later = services.knowledge_ingest(world=world, domain="srd", files=[services.UploadedFile(
        "Extra.json", b'[{"index": "x", "name": "X", "desc": ["Something else."]}]', "en")], actor="t")
    assert later.edits == [edit.pk]
    assert "ember" in _search(world.tenant_id, "fireball", version=later.version)[0].text


def test_approved_delete_and_create(live):
    world = live.world
    delete = edits.knowledge_edit_propose(world=world, domain="srd", action="delete", language="en",
                                          entry_id="Spells/misty-step", reason="not in this world", actor="a")
    first = edits.knowledge_edit_approve(edit=delete, actor="b").produced_version
    assert first.entry_count == live.entry_count - 1
    assert "Spells/misty-step" not in {h.entry_id for h in _search(world.tenant_id, "teleport mist", version="1.0.1")}
    assert "Spells/misty-step" in {h.entry_id for h in _search(world.tenant_id, "teleport mist")}
    create = edits.knowledge_edit_propose(world=world, domain="srd", action="create", language="en",
                                          entry_id="Spells/ember-bolt", title="Ember Bolt",
                                          text="Hurl a glowing ember; 2d4 fire damage.", reason="new spell", actor="a")
    second = edits.knowledge_edit_approve(edit=create, actor="b").produced_version
    assert second.version == "1.0.2" and second.edits == [delete.pk, create.pk]
    hit = _search(world.tenant_id, "glowing ember", version="1.0.2")[0]
    assert (hit.entry_id, hit.title, hit.heading_path) == ("Spells/ember-bolt", "Ember Bolt", ["Spells", "Ember Bolt"])


def test_reject_needs_reason_and_is_final(live):
    edit = edits.knowledge_edit_propose(world=live.world, domain="srd", action="update", language="en",
                                        entry_id="Spells/fireball", text="Nerfed.", reason="balance", actor="a")
    with pytest.raises(ApplicationError) as missing:
        edits.knowledge_edit_reject(edit=edit, actor="b", reason=" ")
    assert missing.value.field == "reason"
    rejected = edits.knowledge_edit_reject(edit=edit, actor="b", reason="contradicts canon")
    assert (rejected.status, rejected.decision_reason, rejected.produced_version) == (
        "rejected", "contradicts canon", None)
    with pytest.raises(ApplicationError) as again:
        edits.knowledge_edit_approve(edit=edit, actor="c")
    assert again.value.status_code == 409
    assert KnowledgeVersion.objects.filter(world=live.world).count() == 1
    assert [d.what for d in edits.review_decided_since(rejected.decided_at)] == [
        "lore edit rejected: update Spells/fireball (contradicts canon)"]


def test_proposal_checks_the_entry(live):
    kwargs = {"world": live.world, "domain": "srd", "language": "en", "reason": "r", "actor": "a"}
    with pytest.raises(ApplicationError) as unknown:
        edits.knowledge_edit_propose(action="update", entry_id="Spells/wish", text="x", **kwargs)
    assert unknown.value.field == "entry_id" and "no en entry 'Spells/wish'" in unknown.value.message
    with pytest.raises(ApplicationError) as exists:
        edits.knowledge_edit_propose(action="create", entry_id="Spells/fireball", text="x", **kwargs)
    assert exists.value.field == "entry_id"
    with pytest.raises(ApplicationError) as no_text:
        edits.knowledge_edit_propose(action="update", entry_id="Spells/fireball", text="", **kwargs)
    assert no_text.value.field == "text"
    # A delete's text was taken and ignored; an update to the text the entry has built an identical version.
    with pytest.raises(ApplicationError) as delete_text:
        edits.knowledge_edit_propose(action="delete", entry_id="Spells/fireball", text="gone", **kwargs)
    assert delete_text.value.field == "text"
    current = next(e for e in edits.version_entries(live) if e.entry_id == "Spells/fireball" and e.language == "en")
    with pytest.raises(ApplicationError) as same:
        edits.knowledge_edit_propose(action="update", entry_id="Spells/fireball", text=current.text + "\n", **kwargs)
    assert (same.value.code, same.value.field) == ("unchanged", "text")
    renamed = edits.knowledge_edit_propose(action="update", entry_id="Spells/fireball", text=current.text,
                                           title="Fireball (revised)", **kwargs)
    assert renamed.status == "pending"  # a new title is a change


def test_review_queue_is_on_the_dashboard(live):
    edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                 entry_id="Spells/fireball", reason="r", actor="alice")
    queue = registry.review_queues["lore_edits"]
    assert queue.pending().count() == 1
    assert queue.describe(queue.pending().first()) == "dnd5e/srd: delete en Spells/fireball (alice)"


# --- API -----------------------------------------------------------------------------------------
def test_api_propose_list_approve_reject(editor_client, live):
    client, tenant = editor_client()
    assert live.tenant == tenant
    proposed = client.post("/api/v1/worlds/dnd5e/edits", {
        "domain": "srd", "action": "update", "language": "en", "entry_id": "Spells/fireball",
        "text": NEW_FIREBALL, "reason": "house rule"}, format="json")
    assert proposed.status_code == 201, proposed.json()
    body = proposed.json()
    assert body["status"] == "pending" and body["proposed_by"].startswith("api-key:") and "8d6" in body["old_text"]
    other = client.post("/api/v1/worlds/dnd5e/edits", {
        "domain": "srd", "action": "delete", "entry_id": "Spells/misty-step", "reason": "no"}, format="json")
    assert other.status_code == 201
    listing = client.get("/api/v1/worlds/dnd5e/edits", {"status": "pending"})
    assert [e["entry_id"] for e in listing.json()["items"]] == ["Spells/fireball", "Spells/misty-step"]
    assert client.get(f"/api/v1/worlds/dnd5e/edits/{body['id']}").json() == body  # where it stands
    approved = client.post(f"/api/v1/worlds/dnd5e/edits/{body['id']}/approve", {}, format="json")
    assert approved.status_code == 200 and approved.json()["produced_version"] == "1.0.1"
    assert client.get(f"/api/v1/worlds/dnd5e/edits/{body['id']}").json() == approved.json()
    again = client.post(f"/api/v1/worlds/dnd5e/edits/{body['id']}/approve", {}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"
    no_reason = client.post(f"/api/v1/worlds/dnd5e/edits/{other.json()['id']}/reject", {}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["error"]["fields"]
    rejected = client.post(f"/api/v1/worlds/dnd5e/edits/{other.json()['id']}/reject", {"reason": "canon"},
                           format="json")
    assert rejected.status_code == 200 and rejected.json()["status"] == "rejected"
    latest = client.post("/api/v1/worlds/dnd5e/search", {"query": "fireball", "k": 1}, format="json").json()
    assert latest["versions"] == {"srd": "1.0.0"} and "8d6" in latest["items"][0]["text"]


def test_a_rollback_says_which_approved_edits_it_leaves_out_and_each_edit_whether_it_is_live(editor_client, live):
    """After a rollback the next approved edit builds on the version rolled back to: edits approved and
    published before silently left every later version, and still read "approved"."""
    client, _ = editor_client()

    def approve(entry_id: str, text: str) -> dict:
        proposed = client.post("/api/v1/worlds/dnd5e/edits", {
            "domain": "srd", "action": "update", "language": "en", "entry_id": entry_id, "text": text,
            "reason": "house rule"}, format="json").json()
        return client.post(f"/api/v1/worlds/dnd5e/edits/{proposed['id']}/approve", {}, format="json").json()

    fireball = approve("Spells/fireball", NEW_FIREBALL)
    assert fireball["live"] is False  # staged, not yet published
    published = client.post("/api/v1/worlds/dnd5e/domains/srd/publish",
                            {"version": fireball["produced_version"], "force": True, "reason": "house rules"},
                            format="json")
    assert published.status_code == 200 and published.json()["edits_left_out"] == []
    assert client.get(f"/api/v1/worlds/dnd5e/edits/{fireball['id']}").json()["live"] is True

    rolled = client.post("/api/v1/worlds/dnd5e/domains/srd/rollback", {"reason": "oops"}, format="json")
    assert rolled.status_code == 200, rolled.content
    assert rolled.json()["edits_left_out"] == [fireball["id"]]
    after = client.get(f"/api/v1/worlds/dnd5e/edits/{fireball['id']}").json()
    assert (after["status"], after["live"]) == ("approved", False)
    listed = client.get("/api/v1/worlds/dnd5e/edits", {"status": "approved"}).json()["items"]
    assert [(e["id"], e["live"]) for e in listed] == [(fireball["id"], False)]
    changes = client.get("/api/v1/worlds/dnd5e/versions").json()["changes"]
    assert changes[0]["action"] == "rollback" and changes[0]["edits_left_out"] == [fireball["id"]]


def test_an_edit_of_an_entry_changed_since_it_was_proposed_is_refused_not_approved_over_the_change(
        editor_client, live):
    """Two editors fix one entry from the same text; approving the second after the first would have
    replaced the first fix with a text that never contained it (the first edit lost, silently)."""
    client, _ = editor_client()

    def propose(action: str, text: str = "", entry_id: str = "Conditions/blinded", language: str = "ru") -> int:
        answer = client.post("/api/v1/worlds/dnd5e/edits", {
            "domain": "srd", "action": action, "language": language, "entry_id": entry_id, "text": text,
            "reason": "правка"}, format="json")
        assert answer.status_code == 201, answer.json()
        return answer.json()["id"]

    other = propose("update", "A 20-foot-radius sphere of flame.", entry_id="Spells/fireball", language="en")
    first = propose("update", "Ослеплённое существо ничего не видит. Атаки по нему совершаются с преимуществом.")
    second = propose("update", "Ослеплённое существо не видит и проваливает проверки зрения. Длится минуту.")
    gone = propose("delete")
    assert client.post(f"/api/v1/worlds/dnd5e/edits/{first}/approve", {}, format="json").json()[
        "produced_version"] == "1.0.1"
    for stale in (second, gone):
        refused = client.post(f"/api/v1/worlds/dnd5e/edits/{stale}/approve", {}, format="json")
        assert refused.status_code == 409, refused.json()
        error = refused.json()["error"]
        assert error["code"] == "stale" and "entry_id" in error["fields"] and "1.0.1" in error["message"]
        # What the entry is now, to propose again against (as a stale fact's 409 says the current value).
        assert error["current"]["version"] == "1.0.1" and "преимуществом" in error["current"]["text"]
        # Still pending: the editor rejects it and proposes again against the current text.
        assert client.get(f"/api/v1/worlds/dnd5e/edits/{stale}").json()["status"] == "pending"
    assert Alias.objects.get(world=live.world, domain="srd", name="stage").version.version == "1.0.1"
    stage = _search(live.tenant_id, "ослеплённое существо", alias="stage")
    assert "преимуществом" in next(h.text for h in stage if h.entry_id == "Conditions/blinded")
    # A proposal made against the current text goes through, and so does an edit of another entry
    # proposed before the first approval.
    again = propose("update", "Ослеплённое существо не видит; атаки по нему с преимуществом. Длится минуту.")
    assert client.post(f"/api/v1/worlds/dnd5e/edits/{again}/approve", {}, format="json").status_code == 200
    assert client.post(f"/api/v1/worlds/dnd5e/edits/{other}/approve", {}, format="json").status_code == 200
    # A create of an entry someone else created meanwhile is stale too.
    create_a = propose("create", "Новое.", entry_id="Conditions/dazed")
    create_b = propose("create", "Другое.", entry_id="Conditions/dazed")
    assert client.post(f"/api/v1/worlds/dnd5e/edits/{create_a}/approve", {}, format="json").status_code == 200
    refused = client.post(f"/api/v1/worlds/dnd5e/edits/{create_b}/approve", {}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "stale"


def test_api_bad_input_names_the_field(editor_client, live):
    client, _ = editor_client()
    bad = client.post("/api/v1/worlds/dnd5e/edits", {"domain": "srd", "action": "rename", "entry_id": 5,
                                                     "reason": "r"}, format="json")
    assert bad.status_code == 400 and {"action", "entry_id"} <= set(bad.json()["error"]["fields"])
    unknown = client.post("/api/v1/worlds/dnd5e/edits", {"domain": "srd", "action": "update", "entry_id": "Spells/x",
                                                         "text": "t", "reason": "r"}, format="json")
    assert unknown.status_code == 400 and "entry_id" in unknown.json()["error"]["fields"]
    assert client.post("/api/v1/worlds/dnd5e/edits/999999/approve", {}, format="json").status_code == 404


def test_api_scope_and_tenant_isolation(editor_client, live):
    reader, _ = editor_client(scopes=("memory",))
    refused = reader.get("/api/v1/worlds/dnd5e/edits")
    assert refused.status_code == 403 and "editor" in refused.json()["error"]["message"]
    assert reader.post("/api/v1/worlds/dnd5e/edits", {}, format="json").status_code == 403
    stranger, _ = editor_client(name="tenant-b")
    assert stranger.get("/api/v1/worlds/dnd5e/edits").status_code == 404
    proposal = stranger.post("/api/v1/worlds/dnd5e/edits", {"domain": "srd", "action": "delete",
                                                             "entry_id": "Spells/fireball", "reason": "r"},
                             format="json")
    assert proposal.status_code == 404
    edit = edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                        entry_id="Spells/fireball", reason="r", actor="a")
    assert stranger.post(f"/api/v1/worlds/dnd5e/edits/{edit.pk}/approve", {}, format="json").status_code == 404
    assert stranger.get(f"/api/v1/worlds/dnd5e/edits/{edit.pk}").status_code == 404
    assert reader.get(f"/api/v1/worlds/dnd5e/edits/{edit.pk}").status_code == 403
    assert KnowledgeEdit.objects.get(pk=edit.pk).status == "pending"


# --- Admin ---------------------------------------------------------------------------------------
def test_admin_shows_diff_and_approves_and_rejects(live):
    admin = User.objects.create_superuser("editor", "e@example.org", "pw")
    client = Client()
    client.force_login(admin)
    update = edits.knowledge_edit_propose(world=live.world, domain="srd", action="update", language="en",
                                          entry_id="Spells/fireball", text=NEW_FIREBALL, reason="r", actor="a")
    delete = edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                          entry_id="Spells/misty-step", reason="r", actor="a")
    listing = client.get("/admin/lore/knowledgeedit/?status__exact=pending")
    assert listing.status_code == 200 and b"Spells/fireball" in listing.content and b"2 pending" in listing.content
    page = client.get(f"/admin/lore/knowledgeedit/{update.pk}/change/")
    assert page.status_code == 200 and b"<table class=\"diff\"" in page.content
    assert b"ember" in page.content and b"8d6" in page.content
    done = client.post("/admin/lore/knowledgeedit/", {"action": "approve", "_selected_action": [update.pk]},
                       follow=True)
    assert b"1 edit(s) approved" in done.content and b"in the background" not in done.content
    # The version it made, and that it is not live yet (a QA pass: the message said neither).
    made = KnowledgeEdit.objects.get(pk=update.pk).produced_version.version
    assert f"staged as {live.world.slug}/srd {made}, not live until published" in done.content.decode()
    assert KnowledgeEdit.objects.get(pk=update.pk).decided_by == "admin:editor"
    again = client.post("/admin/lore/knowledgeedit/", {"action": "approve", "_selected_action": [update.pk]},
                        follow=True).content.decode()
    assert "0 edit(s) approved" not in again and "Already decided, left as they are" in again
    # The confirmation posts the same action back for the same rows, with the reason.
    confirmation = client.post("/admin/lore/knowledgeedit/", {"action": "reject", "_selected_action": [delete.pk]})
    page = confirmation.content.decode()
    assert confirmation.status_code == 200 and "Reject 1 edit(s)" in page and "Reject lore edits" in page
    assert f'name="_selected_action" value="{delete.pk}"' in page and 'name="action" value="reject"' in page
    assert KnowledgeEdit.objects.get(pk=delete.pk).status == KnowledgeEdit.Status.PENDING
    rejected = client.post("/admin/lore/knowledgeedit/", {"action": "reject", "_selected_action": [delete.pk],
                                                          "apply": "1", "reason": "keep it"}, follow=True)
    assert b"1 edit(s) rejected" in rejected.content
    assert KnowledgeEdit.objects.get(pk=delete.pk).decision_reason == "keep it"


def test_admin_proposal_is_checked_and_audited(live):
    admin = User.objects.create_superuser("editor", "e@example.org", "pw")
    client = Client()
    client.force_login(admin)
    form = {"world": live.world.pk, "domain": "srd", "action": "update", "language": "en",
            "entry_id": "Spells/wish", "title": "", "text": "x", "reason": "r",
            "events-TOTAL_FORMS": "0", "events-INITIAL_FORMS": "0"}
    refused = client.post("/admin/lore/knowledgeedit/add/", form)
    assert refused.status_code == 200 and b"no en entry" in refused.content
    assert not KnowledgeEdit.objects.exists()
    created = client.post("/admin/lore/knowledgeedit/add/", {**form, "entry_id": "Spells/fireball"})
    assert created.status_code == 302, created.content[:2000]
    edit = KnowledgeEdit.objects.get()
    assert (edit.proposed_by, edit.status, "8d6" in edit.old_text) == ("admin:editor", "pending", True)
    assert list(edit.events.values_list("action", "actor")) == [("proposed", "admin:editor")]
    saved = client.post(f"/admin/lore/knowledgeedit/{edit.pk}/change/", {
        "events-TOTAL_FORMS": "1", "events-INITIAL_FORMS": "1", "events-0-id": edit.events.get().pk,
        "events-0-edit": edit.pk})
    assert saved.status_code == 302 and KnowledgeEdit.objects.count() == 1


def test_api_list_refuses_an_empty_or_unknown_status(editor_client, live):
    client, _ = editor_client()
    for value in ("", "done"):
        refused = client.get("/api/v1/worlds/dnd5e/edits", {"status": value})
        assert refused.status_code == 400 and "status" in refused.json()["error"]["fields"]


def test_admin_dashboard_lists_the_lore_edit_queue(live):
    admin = User.objects.create_superuser("editor", "e@example.org", "pw")
    client = Client()
    client.force_login(admin)
    edit = edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                        entry_id="Spells/fireball", reason="r", actor="alice")
    page = client.get("/admin/")
    assert b"Lore edits waiting for an editor" in page.content
    assert b"/admin/lore/knowledgeedit/?status__exact=pending" in page.content
    edits.knowledge_edit_reject(edit=edit, actor="bob", reason="keep")
    assert b"lore edit rejected: delete Spells/fireball (keep)" in client.get("/admin/").content


# --- The review API (memoryhub.review_api): the same services and events as the edits API --------
def test_review_api_lists_approves_and_rejects_lore_edits_like_the_edits_api(editor_client, live):
    client, _ = editor_client()
    stranger, _ = editor_client(name="tenant-b")
    by_edits_api = client.post("/api/v1/worlds/dnd5e/edits", {
        "domain": "srd", "action": "update", "language": "en", "entry_id": "Spells/fireball",
        "text": NEW_FIREBALL, "reason": "house rule"}, format="json").json()
    by_review_api = edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                                 entry_id="Spells/misty-step", reason="too strong", actor="alice")
    listed = client.get("/api/v1/review/lore_edits").json()
    assert [item["id"] for item in listed["items"]] == [by_edits_api["id"], by_review_api.pk]
    evidence = listed["items"][0]["evidence"]
    assert evidence["entry_id"] == "Spells/fireball" and "8d6" in evidence["old_text"] and "ember" in evidence["text"]
    assert listed["items"][1]["summary"] == "dnd5e/srd: delete en Spells/misty-step (alice)"
    assert stranger.get("/api/v1/review/lore_edits").json()["count"] == 0
    assert stranger.post(f"/api/v1/review/lore_edits/{by_review_api.pk}/approve", {},
                         format="json").status_code == 404

    client.post(f"/api/v1/worlds/dnd5e/edits/{by_edits_api['id']}/approve", {"reason": "ok"}, format="json")
    approved = client.post(f"/api/v1/review/lore_edits/{by_review_api.pk}/approve", {"reason": "ok"}, format="json")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["evidence"]["produced_version"] == "1.0.2" and approved.json()["status"] == "approved"
    rows = [list(KnowledgeEditEvent.objects.filter(edit_id=pk).order_by("id").values_list("action", "actor", "reason"))
            for pk in (by_edits_api["id"], by_review_api.pk)]
    label = rows[0][1][1]
    assert label.startswith("api-key:mh_") and rows[0][1] == rows[1][1] == ("approved", label, "ok")
    again = client.post(f"/api/v1/review/lore_edits/{by_review_api.pk}/reject", {"reason": "no"}, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"

    third = edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                         entry_id="Conditions/prone", reason="r", actor="alice")
    no_reason = client.post(f"/api/v1/review/lore_edits/{third.pk}/reject", {}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["error"]["fields"]
    assert client.post(f"/api/v1/review/lore_edits/{third.pk}/reject", {"reason": "canon"},
                       format="json").json()["evidence"]["decision_reason"] == "canon"
    assert client.post(f"/api/v1/review/lore_edits/{third.pk}/undo", {}, format="json").status_code == 404


@pytest.mark.django_db(transaction=True)
def test_two_edits_approved_at_once_both_reach_the_staged_version(live):
    """Two reviewers approving edits of different entries at once: both builds took the same next patch
    number (one a 409) or the one written second left the other's edit out of `stage`."""
    world = live.world
    pending = [edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                            entry_id=entry_id, text=text, reason="fix", actor="alice")
               for entry_id, text in (("Spells/fireball", NEW_FIREBALL),
                                      ("Spells/misty-step", "You step through silver mist, up to 60 feet."))]
    errors = errors_of(at_once(*(lambda e=edit: edits.knowledge_edit_approve(edit=e, actor="bob")
                                 for edit in pending)))
    assert not errors, errors
    stage = Alias.objects.get(world=world, domain="srd", name="stage").version
    assert stage.version == "1.0.2" and sorted(stage.edits) == sorted(edit.pk for edit in pending)
    assert "60 feet" in _search(world.tenant_id, "misty step", version="1.0.2")[0].text


@pytest.mark.django_db(transaction=True)
def test_an_edit_whose_entry_another_approval_changed_during_its_build_is_refused_and_pending_again(live):
    world = live.world
    first, second = (edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                                  entry_id="Spells/fireball", text=text, reason="fix", actor=who)
                     for text, who in ((NEW_FIREBALL, "alice"), ("Fireball now deals 10d6.", "carol")))
    original = services.knowledge_ingest

    def other_approval(done: int, total: int) -> None:
        if done == total and first.status == "pending":
            services.knowledge_ingest = original
            first.status = edits.knowledge_edit_approve(edit=first, actor="bob").status

    def ingest_after_the_other_approval(**kwargs):  # the other approval lands while this build embeds
        return original(**kwargs, progress=other_approval)

    services.knowledge_ingest = ingest_after_the_other_approval
    try:
        with pytest.raises(ApplicationError) as refused:
            edits.knowledge_edit_approve(edit=second, actor="dave")
    finally:
        services.knowledge_ingest = original
    assert (refused.value.code, refused.value.status_code) == ("stale", 409)
    second.refresh_from_db()
    assert second.status == "pending" and second.produced_version is None
    stage = Alias.objects.get(world=world, domain="srd", name="stage").version
    assert stage.edits == [first.pk]


def test_in_a_large_world_an_approval_builds_in_the_background_and_a_stale_one_goes_back_to_pending(
        editor_client, live, settings, django_capture_on_commit_callbacks):
    """An approval copied every chunk of the world's version within its request (41,000 chunks: 44 s)."""
    settings.LORE_BACKGROUND_CHUNKS = 2  # the live version has 6
    world = live.world
    client, _ = editor_client(world.tenant.name)
    first, second = (edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                                  entry_id="Spells/fireball", text=text, reason="fix", actor=who)
                     for text, who in ((NEW_FIREBALL, "alice"), ("Fireball now deals 10d6.", "carol")))
    with django_capture_on_commit_callbacks() as callbacks:
        approved = client.post(f"/api/v1/worlds/dnd5e/edits/{first.pk}/approve", {"reason": "ok"}, format="json")
        other = client.post(f"/api/v1/worlds/dnd5e/edits/{second.pk}/approve", {}, format="json")
    assert approved.status_code == other.status_code == 200, approved.content
    body = approved.json()
    assert (body["status"], body["produced_version"]) == ("approved", None) and body["build"]

    for callback in callbacks:  # the builds, in-process, in the order they were approved
        callback()
    done = client.get(f"/api/v1/worlds/dnd5e/edits/{first.pk}").json()
    assert (done["status"], done["produced_version"]) == ("approved", "1.0.1")
    assert client.get(done["build"]).json()["status"] == "done"
    assert list(KnowledgeEditEvent.objects.filter(edit=first).values_list("action", "actor", "reason", "version")) == [
        ("proposed", "alice", "fix", ""), ("approved", done["decided_by"], "ok", "1.0.1")]
    # The second was approved against the version before the first: its build finds the entry changed.
    stale = client.get(f"/api/v1/worlds/dnd5e/edits/{second.pk}").json()
    assert (stale["status"], stale["produced_version"]) == ("pending", None)
    failed = client.get(stale["build"]).json()
    assert (failed["status"], failed["error_code"], failed["error_field"]) == ("failed", "stale", "entry_id")
    assert Alias.objects.get(world=world, domain="srd", name="stage").version.edits == [first.pk]


def test_the_admin_says_when_an_approved_edit_builds_in_the_background(live, settings, admin_client):
    settings.LORE_BACKGROUND_CHUNKS = 2
    edit = edits.knowledge_edit_propose(world=live.world, domain="srd", action="update", language="en",
                                        entry_id="Spells/fireball", text=NEW_FIREBALL, reason="r", actor="a")
    done = admin_client.post("/admin/lore/knowledgeedit/", {"action": "approve", "_selected_action": [edit.pk]},
                             follow=True)
    assert "1 edit(s) approved; 1 of them build their version in the background" in done.content.decode()
    assert edit.builds.count() == 1


RULES_MD = b"# Combat\n\n## Initiative\nRoll Dexterity.\n\n## Surprise\nA surprised creature cannot move.\n"


@pytest.mark.parametrize(("entry_id", "path"), [
    ("rules/combat/flanking", ["rules", "Combat", "Flanking"]),  # beside rules/combat/initiative
    ("rules/combat/initiative/ties", ["rules", "Combat", "Initiative", "Ties"]),  # under rules/combat/initiative
    ("rules/flanking", ["rules", "Flanking"]),  # at the top: as before
])
def test_a_created_entry_continues_its_parents_heading_path(entry_id, path):
    entries = normalize(content=RULES_MD, filename="rules.md", language="en", options=SourceOptions())
    assert entries[0].heading_path == ("rules", "Combat", "Initiative")
    edit = KnowledgeEdit(action="create", language="en", entry_id=entry_id, title=path[-1], text="Text.")
    assert list(edit_entry(edit, None, entries).heading_path) == path
