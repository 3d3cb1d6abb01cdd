"""The review API: the dashboard's queues for a console of the tenant's own (`editor` scope).

Facts, merge proposals and typed memories here; lore edits in tests/lore/test_edits.py (they need
the lore fixtures). Each decision must write the audit row the admin's action writes."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from memoryhub import services as kernel_services
from memoryhub.exceptions import ApplicationError
from memoryhub.models import Tenant
from people import services as people_services
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMention
from people.ops import PersonDraft
from profiles import services as profile_services
from profiles.models import FactEvent, UserProfile
from rag.memory_models import MemoryReview
from rag.models import Chunk
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
RULES = UserProfile.Source.RULES


@pytest.fixture
def editor(db: None) -> Callable[..., tuple[APIClient, Tenant]]:
    """`editor("tenant-a", scopes=...)`: an API client with a new key of that tenant (created if new)."""

    def factory(name: str = "tenant-a", scopes: tuple[str, ...] = ("memory", "editor")) -> tuple[APIClient, Tenant]:
        tenant = Tenant.objects.filter(name=name).first() or kernel_services.tenant_create(name=name)[0]
        _, raw = kernel_services.api_key_create(tenant=tenant, name="console", scopes=scopes)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client, tenant

    return factory


@pytest.fixture
def admin(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("alice", "alice@example.org", "pw"))
    return client


def fact(tenant: Tenant, key: str, value: str, confidence: float = 0.4, message: Any = None) -> UserProfile:
    return profile_services.fact_upsert(tenant=tenant, user_id="u1", key=key, value=value, confidence=confidence,
                                        source=RULES, source_message=message).fact


def person(tenant: Tenant, name: str, *, mentioned_in: tuple[str, ...] = ()) -> Person:
    found = people_services.person_create_from_draft(tenant_id=tenant.pk, user_id="u1",
                                                     draft=PersonDraft(display_name=name))
    if mentioned_in:
        for message in append_messages(tenant, "u1", "s1", list(mentioned_in), run_job=False).created:
            PersonMention.objects.create(tenant=tenant, user_id="u1", person=found, message=message)
    return found


def proposal(tenant: Tenant, source: str = "Маша", target: str = "Мария", **kwargs: Any) -> MergeProposal:
    made = people_services.merge_proposal_create(source=person(tenant, source, **kwargs), target=person(tenant, target),
                                                 rule="diminutive", score=0.85,
                                                 evidence=[{"rule": "diminutive", "detail": "маша ↔ мария"}])
    assert made is not None
    return made


def memory(tenant: Tenant, text: str = "Alex might move to Oslo") -> MemoryReview:
    return MemoryReview.objects.create(tenant=tenant, user_id="alex", conf_uid="neiri", text=text, kind="user",
                                       category="FactsAboutUser", confidence=0.4)


@pytest.fixture
def answers_as_documented(schema: dict) -> Callable[[str, str, Any], None]:
    """Checks a 200 body against the operation's documented response, reading OpenAPI 3.0's
    `nullable` as JSON Schema's null type (as a schema-driven client does)."""
    import jsonschema

    def as_json_schema(node: Any) -> Any:
        if isinstance(node, list):
            return [as_json_schema(item) for item in node]
        if not isinstance(node, dict):
            return node
        converted = {key: as_json_schema(value) for key, value in node.items() if key != "nullable"}
        return {"anyOf": [converted, {"type": "null"}]} if node.get("nullable") else converted

    def check(path: str, method: str, body: Any) -> None:
        part = schema["paths"][path][method]["responses"]["200"]["content"]["application/json"]["schema"]
        jsonschema.validate(body, as_json_schema({**part, "components": schema["components"]}))

    return check


def audit(rows: Any, *fields: str) -> list[tuple]:
    return [tuple(row[f] for f in fields) for row in rows.order_by("id").values(*fields)]


# --- Listing -----------------------------------------------------------------------------------------
def test_the_queues_show_this_tenants_pending_counts_and_oldest_item(editor) -> None:
    client, tenant = editor()
    _, other = editor("tenant-b")
    old = fact(tenant, "hometown", "Kiev")
    UserProfile.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    fact(tenant, "pet", "cat", 0.5)
    fact(other, "pet", "dog", 0.5)
    proposal(other)
    memory(tenant)

    response = client.get("/api/v1/review")
    assert response.status_code == 200
    queues = {q["name"]: q for q in response.json()["queues"]}
    assert set(queues) == {"profiles", "people", "lore_edits", "memories"}
    assert queues["profiles"]["pending"] == 2
    assert queues["profiles"]["oldest"]["id"] == old.pk
    assert queues["profiles"]["oldest"]["summary"] == "u1: hometown = Kiev (0.40)"
    assert queues["people"] == {"name": "people", "label": "Merge proposals", "pending": 0, "oldest": None,
                                "decisions": ["approve", "reject", "undo"]}
    assert queues["memories"]["pending"] == 1 and queues["lore_edits"]["pending"] == 0


def test_a_queue_pages_its_items_with_the_evidence_an_editor_needs(editor, answers_as_documented) -> None:
    client, tenant = editor()
    fact(tenant, "location", "Berlin", 0.9)
    said = append_messages(tenant, "u1", "s1", ["Actually I moved to Paris last month"], run_job=False).created[0]
    paris = fact(tenant, "location", "Paris", 0.6, message=said)
    others = [fact(tenant, f"note {i}", f"value {i}") for i in range(4)]

    first = client.get("/api/v1/review/profiles", {"limit": 2})
    assert first.status_code == 200, first.json()
    body = first.json()
    assert body["count"] == 5 and [item["id"] for item in body["items"]] == [paris.pk, others[0].pk]
    item = body["items"][0]
    assert item["status"] == "pending" and item["decisions"] == ["approve", "reject"]
    evidence = item["evidence"]
    assert (evidence["value"], evidence["current_value"], evidence["current_confidence"]) == ("Paris", "Berlin", 0.9)
    assert evidence["source_message"]["text"] == "Actually I moved to Paris last month"
    assert evidence["source_message"]["session_id"] == "s1"
    assert [e["action"] for e in evidence["history"]] == ["proposed"]
    answers_as_documented("/api/v1/review/{queue}", "get", body)

    # Deciding an item does not move the next page.
    assert client.post(f"/api/v1/review/profiles/{paris.pk}/approve", {}, format="json").status_code == 200
    second = client.get("/api/v1/review/profiles", {"limit": 2, "after_id": body["next_after_id"]}).json()
    assert [item["id"] for item in second["items"]] == [others[1].pk, others[2].pk]
    last = client.get("/api/v1/review/profiles", {"limit": 2, "after_id": second["next_after_id"]}).json()
    assert [item["id"] for item in last["items"]] == [others[3].pk] and last["next_after_id"] is None
    decided = client.get("/api/v1/review/profiles", {"status": "active"}).json()
    assert [item["id"] for item in decided["items"]] == [paris.pk] and decided["items"][0]["decisions"] == []


def test_merge_proposals_show_both_people_with_the_messages_that_mention_them(editor, answers_as_documented) -> None:
    client, tenant = editor()
    made = proposal(tenant, mentioned_in=("Маша sent me a postcard", "I met Маша at the station"))
    single = client.get(f"/api/v1/review/people/{made.pk}")
    assert single.status_code == 200
    evidence = single.json()["evidence"]
    assert evidence["source"]["display_name"] == "Маша" and evidence["target"]["display_name"] == "Мария"
    assert [m["text"] for m in evidence["source"]["mentions"]] == ["I met Маша at the station",
                                                                   "Маша sent me a postcard"]
    assert evidence["target"]["mentions"] == [] and evidence["evidence"][0]["detail"] == "маша ↔ мария"
    assert single.json()["summary"] == "u1: merge Маша into Мария (diminutive, 0.85)"
    answers_as_documented("/api/v1/review/{queue}/{item_id}", "get", single.json())
    memory(tenant)
    listed = client.get("/api/v1/review/memories").json()
    assert listed["items"][0]["evidence"]["conf_uid"] == "neiri"
    answers_as_documented("/api/v1/review/{queue}", "get", listed)
    answers_as_documented("/api/v1/review", "get", client.get("/api/v1/review").json())


# --- Decisions and their audit rows --------------------------------------------------------------------
FACT_AUDIT = ("action", "actor", "old_status", "new_status", "old_confidence", "new_confidence", "reason")


def test_fact_decisions_write_the_rows_the_admin_writes(editor, admin) -> None:
    client, tenant = editor()
    by_admin, by_api = fact(tenant, "pet", "cat"), fact(tenant, "hobby", "chess")
    wrong_admin, wrong_api = fact(tenant, "age", "12"), fact(tenant, "occupation", "astronaut")
    admin.post("/admin/profiles/userprofile/", {"action": "approve", "_selected_action": [by_admin.pk]})
    admin.post("/admin/profiles/userprofile/", {"action": "reject", "_selected_action": [wrong_admin.pk],
                                                "apply": "1", "reason": "a joke"})
    approved = client.post(f"/api/v1/review/profiles/{by_api.pk}/approve", {"reason": "approved in the admin"},
                           format="json")
    assert approved.status_code == 200 and approved.json()["status"] == "active"
    assert client.post(f"/api/v1/review/profiles/{wrong_api.pk}/reject", {"reason": "a joke"},
                       format="json").json()["status"] == "rejected"

    for admin_fact, api_fact in ((by_admin, by_api), (wrong_admin, wrong_api)):
        admin_rows = FactEvent.objects.filter(fact=admin_fact)
        api_rows = FactEvent.objects.filter(fact=api_fact)
        # Same rows, but for who decided: a staff user in the admin, the API key over the API.
        assert [row[:1] + row[2:] for row in audit(admin_rows, *FACT_AUDIT)] == \
            [row[:1] + row[2:] for row in audit(api_rows, *FACT_AUDIT)]
        decided_admin, decided_api = admin_rows.latest("id"), api_rows.latest("id")
        assert (decided_admin.actor, decided_admin.who) == ("admin", "admin:alice")
        assert decided_api.actor == "api" and decided_api.reviewer is None
        assert decided_api.who.startswith("api-key:mh_") and decided_api.who.endswith(" (console)")
    assert UserProfile.objects.get(pk=by_api.pk).confidence == UserProfile.objects.get(pk=by_admin.pk).confidence

    # The dashboard names the key as who decided.
    assert decided_api.who in admin.get("/admin/").content.decode()


def test_merge_approve_and_undo_write_the_rows_the_admin_writes(editor, admin) -> None:
    client, tenant = editor()
    by_admin = proposal(tenant)
    by_api = proposal(tenant, "Саша", "Александр")
    admin.post("/admin/people/mergeproposal/", {"action": "approve", "_selected_action": [by_admin.pk]})
    admin.post("/admin/people/mergeproposal/", {"action": "undo", "_selected_action": [by_admin.pk]})
    approved = client.post(f"/api/v1/review/people/{by_api.pk}/approve", {"reason": "same person"}, format="json")
    assert approved.status_code == 200, approved.json()
    assert approved.json()["status"] == "approved" and approved.json()["decisions"] == ["undo"]
    assert Person.objects.get(pk=by_api.source_id).status == Person.Status.MERGED
    undone = client.post(f"/api/v1/review/people/{by_api.pk}/undo", {"reason": "they are twins"}, format="json")
    assert undone.status_code == 200 and undone.json()["status"] == "undone"
    assert Person.objects.get(pk=by_api.source_id).status == Person.Status.ACTIVE

    def rows(p: MergeProposal) -> list[tuple]:
        entries = PeopleAuditEntry.objects.filter(person_id=p.target_id)
        return [(action, sorted(set(details) - {"reason"})) for action, details in audit(entries, "action", "details")]

    assert rows(by_admin) == rows(by_api) == [("merge_approved", ["rule", "source", "source_name"]),
                                              ("merge_undone", ["discarded", "forced", "source"])]
    api_entries = PeopleAuditEntry.objects.filter(person_id=by_api.target_id).order_by("id")
    assert [e.details["reason"] for e in api_entries] == ["same person", "they are twins"]
    assert len({e.actor_label for e in api_entries}) == 1 and {e.actor for e in api_entries} == {None}
    assert api_entries[0].actor_label.startswith("api-key:mh_") and api_entries[0].actor_label.endswith("(console)")
    home = admin.get("/admin/").content.decode()
    assert "merge undone: u1 Саша ↔ Александр" in home and api_entries[0].actor_label in home
    assert "admin:alice" in home

    rejected = proposal(tenant, "Женя", "Евгений")
    assert client.post(f"/api/v1/review/people/{rejected.pk}/reject", {"reason": "different people"},
                       format="json").json()["status"] == "rejected"
    entry = PeopleAuditEntry.objects.filter(proposal=rejected).get()
    assert (entry.action, entry.details["reason"]) == ("merge_rejected", "different people")


def test_typed_memory_decisions_are_recorded_with_who_and_why(editor, admin) -> None:
    client, tenant = editor()
    by_admin, by_api, rejected = memory(tenant), memory(tenant, "Alex has a cat"), memory(tenant, "Alex is 300")
    admin.post("/admin/rag/memoryreview/", {"action": "approve", "_selected_action": [by_admin.pk]})
    answer = client.post(f"/api/v1/review/memories/{by_api.pk}/approve", {}, format="json")
    assert answer.status_code == 200 and answer.json()["evidence"]["chunk_id"] is not None
    assert client.post(f"/api/v1/review/memories/{rejected.pk}/reject", {"reason": "nonsense"},
                       format="json").status_code == 200
    decided = {r.pk: r for r in MemoryReview.objects.all()}
    assert decided[by_admin.pk].decided_by == "admin:alice"
    assert decided[by_api.pk].decided_by.startswith("api-key:mh_") and decided[by_api.pk].status == "approved"
    assert (decided[rejected.pk].status, decided[rejected.pk].decision_reason) == ("rejected", "nonsense")
    assert Chunk.objects.filter(type=Chunk.Type.MEMORY, pk=decided[by_api.pk].chunk_id).exists()


# --- Refusals ------------------------------------------------------------------------------------------
def test_an_editor_scope_is_needed_and_named(editor) -> None:
    client, tenant = editor(scopes=("memory",))
    item = fact(tenant, "pet", "cat")
    for response in (client.get("/api/v1/review"), client.get("/api/v1/review/profiles"),
                     client.post(f"/api/v1/review/profiles/{item.pk}/approve", {}, format="json")):
        assert response.status_code == 403 and "'editor'" in response.json()["error"]["message"]
    assert UserProfile.objects.get(pk=item.pk).status == "pending"
    assert APIClient().get("/api/v1/review").status_code == 401


def test_another_tenants_item_is_not_found_and_stays_pending(editor) -> None:
    client, _ = editor()
    _, other = editor("tenant-b")
    theirs, their_proposal, their_memory = fact(other, "pet", "dog"), proposal(other), memory(other)
    for queue, item in (("profiles", theirs), ("people", their_proposal), ("memories", their_memory)):
        assert client.get(f"/api/v1/review/{queue}/{item.pk}").status_code == 404
        for decision, body in (("approve", {}), ("reject", {"reason": "r"})):
            refused = client.post(f"/api/v1/review/{queue}/{item.pk}/{decision}", body, format="json")
            assert refused.status_code == 404 and refused.json()["error"]["code"] == "not_found"
    assert client.get("/api/v1/review/profiles").json()["items"] == []
    assert [UserProfile.objects.get(pk=theirs.pk).status, MergeProposal.objects.get(pk=their_proposal.pk).status,
            MemoryReview.objects.get(pk=their_memory.pk).status] == ["pending"] * 3


def test_bad_queue_bad_input_and_decided_items_are_refused(editor) -> None:
    client, tenant = editor()
    item, made = fact(tenant, "pet", "cat"), proposal(tenant)
    unknown = client.get("/api/v1/review/facts")
    assert unknown.status_code == 404 and "profiles" in unknown.json()["error"]["message"]
    assert client.post(f"/api/v1/review/facts/{item.pk}/approve", {}, format="json").status_code == 404
    assert client.post(f"/api/v1/review/profiles/{item.pk}/undo", {}, format="json").status_code == 404

    no_reason = client.post(f"/api/v1/review/profiles/{item.pk}/reject", {}, format="json")
    assert no_reason.status_code == 400 and "reason" in no_reason.json()["error"]["fields"]
    blank = client.post(f"/api/v1/review/profiles/{item.pk}/reject", {"reason": "  "}, format="json")
    assert blank.status_code == 400 and "reason" in blank.json()["error"]["fields"]
    wrong_type = client.post(f"/api/v1/review/people/{made.pk}/undo", {"force": "yes"}, format="json")
    assert wrong_type.status_code == 400 and "force" in wrong_type.json()["error"]["fields"]
    for query, field in (({"status": "maybe"}, "status"), ({"limit": 0}, "limit"), ({"after_id": -1}, "after_id")):
        bad = client.get("/api/v1/review/profiles", query)
        assert bad.status_code == 400 and field in bad.json()["error"]["fields"]

    assert client.post(f"/api/v1/review/profiles/{item.pk}/approve", {}, format="json").status_code == 200
    for decision, body in (("approve", {}), ("reject", {"reason": "r"})):
        again = client.post(f"/api/v1/review/profiles/{item.pk}/{decision}", body, format="json")
        assert again.status_code == 409 and again.json()["error"]["code"] == "already_decided"
    assert FactEvent.objects.filter(fact=item, action="approved").count() == 1

    pending_undo = client.post(f"/api/v1/review/people/{made.pk}/undo", {}, format="json")
    assert pending_undo.status_code == 409 and pending_undo.json()["error"]["code"] == "not_undoable"


def test_a_fact_no_longer_stored_answers_410_saying_what_became_of_it(editor, admin) -> None:
    """Approving "Seattle" replaces the approved "Boston" row: its id used to answer 404, "no such item",
    to the editor who had just approved it."""
    client, tenant = editor()
    boston = fact(tenant, "location", "Boston")
    assert client.post(f"/api/v1/review/profiles/{boston.pk}/approve", {}, format="json").status_code == 200
    seattle = fact(tenant, "location", "Seattle", confidence=0.3)
    assert client.post(f"/api/v1/review/profiles/{seattle.pk}/approve", {}, format="json").status_code == 200
    for gone in (client.get(f"/api/v1/review/profiles/{boston.pk}"),
                 client.post(f"/api/v1/review/profiles/{boston.pk}/reject", {"reason": "r"}, format="json")):
        assert gone.status_code == 410, gone.content
        error = gone.json()["error"]
        assert error["code"] == "item_gone" and list(error["fields"]) == ["item_id"]
        assert error["replaced_by"] == seattle.pk and error["history"] == "/api/v1/users/u1/profile/location/history"
        assert f"Fact {boston.pk} (location = 'Boston') was replaced by fact {seattle.pk} (location = 'Seattle')" \
            in error["message"] and "api-key:mh_" in error["message"]

    # Replaced by a statement of change, merged by an editor's correction, deleted: each said as such.
    moved = profile_services.fact_upsert(tenant=tenant, user_id="u1", key="location", value="Lisbon",
                                         confidence=0.9, source=RULES, change=True).fact
    error = client.get(f"/api/v1/review/profiles/{seattle.pk}").json()["error"]
    assert error["replaced_by"] == moved.pk and "'Lisbon'" in error["message"]
    cat, kitten = fact(tenant, "pet", "cat", confidence=0.9), fact(tenant, "pet", "kitten", confidence=0.3)
    profile_services.fact_edit_approve(fact=UserProfile.objects.get(pk=kitten.pk),
                                       reviewer=User.objects.get(username="alice"), value="cat")
    merged = client.get(f"/api/v1/review/profiles/{kitten.pk}")
    assert merged.status_code == 410 and merged.json()["error"]["replaced_by"] == cat.pk
    assert "was merged into fact" in merged.json()["error"]["message"]
    profile_services.fact_delete(tenant=tenant, user_id="u1", key="pet")
    deleted = client.get(f"/api/v1/review/profiles/{cat.pk}").json()["error"]
    assert "was deleted" in deleted["message"] and "replaced_by" not in deleted

    # Another tenant's, or an id never used: still 404; a user's erasure leaves no trace either.
    _, other = editor("tenant-b")
    theirs = fact(other, "location", "Oslo")
    assert client.get(f"/api/v1/review/profiles/{theirs.pk}").status_code == 404
    profile_services.fact_delete(tenant=other, user_id="u1", key="location")
    assert client.get(f"/api/v1/review/profiles/{theirs.pk}").status_code == 404
    from memoryhub.services import user_erase
    user_erase(tenant=tenant, user_id="u1")
    assert client.get(f"/api/v1/review/profiles/{boston.pk}").status_code == 404


def test_a_proposal_the_keys_value_moved_past_is_refused_as_stale(editor, admin) -> None:
    """"age 30" waited for review while the user said "I am 31"; approving it put 30 back silently."""
    client, tenant = editor()
    fact(tenant, "age", "29", confidence=0.9)
    proposed = fact(tenant, "age", "30", confidence=0.4)
    assert proposed.status == "pending"
    newer = profile_services.fact_upsert(tenant=tenant, user_id="u1", key="age", value="31", confidence=0.9,
                                         source=RULES, change=True).fact
    refused = client.post(f"/api/v1/review/profiles/{proposed.pk}/approve", {}, format="json")
    assert refused.status_code == 409, refused.content
    error = refused.json()["error"]
    assert error["code"] == "stale" and error["current"] == {"fact_id": newer.pk, "value": "31"}
    assert "'31'" in error["message"]
    admin.post("/admin/profiles/userprofile/", {"action": "approve", "_selected_action": [proposed.pk]})
    assert (UserProfile.objects.get(pk=proposed.pk).status, UserProfile.objects.get(pk=newer.pk).status) == (
        "pending", "active")
    # Rejecting it is still the editor's to do; and a proposal younger than the value is approved as before.
    assert client.post(f"/api/v1/review/profiles/{proposed.pk}/reject", {"reason": "older"},
                       format="json").status_code == 200
    later = fact(tenant, "age", "32", confidence=0.4)
    approved = client.post(f"/api/v1/review/profiles/{later.pk}/approve", {}, format="json")
    assert approved.status_code == 200 and approved.json()["status"] == "active"


def test_the_second_of_two_simultaneous_decisions_is_refused_under_the_lock(editor) -> None:
    """Both editors read the item as pending; the service finds it decided when it locks it."""
    from people import api as people_api
    from profiles import api as profiles_api
    from rag.memories import api as memories_api

    _, tenant = editor()
    cases = [(profiles_api, fact(tenant, "pet", "cat")), (people_api, proposal(tenant)),
             (memories_api, memory(tenant))]
    for module, stale in cases:
        module.review_approve(type(stale).objects.get(pk=stale.pk), actor="api-key:first", reason="")
        with pytest.raises(ApplicationError) as refused:
            module.review_reject(stale, actor="api-key:second", reason="no")
        assert (refused.value.status_code, refused.value.code) == (409, "already_decided")


def test_the_schema_documents_the_review_operations(schema) -> None:
    paths = schema["paths"]
    queue = next(p for p in paths["/api/v1/review/{queue}"]["get"]["parameters"] if p["name"] == "queue")
    assert set(queue["schema"]["enum"]) == {"profiles", "people", "lore_edits", "memories"}
    for decision in ("approve", "reject", "undo"):
        operation = paths[f"/api/v1/review/{{queue}}/{{item_id}}/{decision}"]["post"]
        assert {"200", "400", "403", "404", "409", "410"} <= set(operation["responses"])
    reject = schema["components"]["schemas"]["ReviewRejectApiInputRequest"]
    assert reject["required"] == ["reason"]
    undo_queue = next(p for p in paths["/api/v1/review/{queue}/{item_id}/undo"]["post"]["parameters"]
                      if p["name"] == "queue")
    assert undo_queue["schema"]["enum"] == ["people"]


def test_a_page_costs_the_same_queries_whatever_its_size(editor) -> None:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    client, tenant = editor()
    for i in range(4):
        fact(tenant, f"note {i}", "x", message=append_messages(tenant, "u1", "s1", [f"note {i}"], run_job=False)
             .created[0])
        proposal(tenant, f"Аня{i}", f"Анна{i}", mentioned_in=(f"Аня{i} called", f"Аня{i} wrote"))
        memory(tenant, f"memory {i}")
    client.get("/api/v1/review")  # the key is looked up once, then cached

    def queries(queue: str, limit: int) -> int:
        with CaptureQueriesContext(connection) as captured:
            assert len(client.get(f"/api/v1/review/{queue}", {"limit": limit}).json()["items"]) == limit
        return len(captured)

    for queue in ("profiles", "people", "memories"):
        assert queries(queue, 1) == queries(queue, 4), queue
