"""People API contract: list, detail, search, patch, delete; auth, validation, tenant and user isolation,
erasure."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import transaction
from django.db.models import Q
from rest_framework.test import APIClient

from memoryhub.exceptions import ApplicationError
from memoryhub.models import ApiKey, Tenant
from people import services
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMention, PersonMerge, PersonRelation
from people.ops import PersonDraft
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]
ClientAndTenant = tuple[APIClient, Tenant]


@pytest.fixture
def people(client_a: ClientAndTenant, make_person: MakePerson) -> dict[str, Person]:
    _, tenant = client_a
    return {
        "petrov": make_person("Петров", tenant=tenant, circle="Work_Inner", bio="Руководитель проекта X.",
                              mentions=12, username="petrov"),
        "maria": make_person("Мария", tenant=tenant, circle="Friends", bio="Жена Петрова.", mentions=3),
        "other_user": make_person("Петров", tenant=tenant, user_id="u2", bio="Сосед."),
    }


def test_requests_need_an_api_key(people: dict[str, Person]) -> None:
    response = APIClient().get("/api/v1/users/u1/people")
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"


def test_list_returns_the_users_people_most_mentioned_first(client_a: ClientAndTenant,
                                                            people: dict[str, Person]) -> None:
    client, _ = client_a
    body = client.get("/api/v1/users/u1/people").json()
    assert body["count"] == 2
    assert [p["display_name"] for p in body["results"]] == ["Петров", "Мария"]
    assert set(body["results"][0]) == {"id", "display_name", "aliases", "username", "telegram_id", "circle",
                                       "circle_locked", "bio", "first_seen", "last_seen", "mention_count"}


def test_list_filters_by_circle_mentions_and_name(client_a: ClientAndTenant, people: dict[str, Person]) -> None:
    client, _ = client_a

    def listed(query: str) -> list[str]:
        return [p["display_name"] for p in client.get(f"/api/v1/users/u1/people?{query}").json()["results"]]

    assert listed("circle=Friends") == ["Мария"]
    assert listed("circle=Friends&circle=Work_Inner") == ["Петров", "Мария"]
    assert listed("min_mentions=5") == ["Петров"]
    assert listed("q=мари") == ["Мария"]
    bad = client.get("/api/v1/users/u1/people?circle=Enemies")
    assert bad.status_code == 400 and "circle" in bad.json()["error"]["fields"]


def test_detail_includes_relations(client_a: ClientAndTenant, people: dict[str, Person]) -> None:
    client, _ = client_a
    services.relation_upsert(subject=people["maria"], object=people["petrov"], kind="spouse", label="жена")
    body = client.get(f"/api/v1/users/u1/people/{people['petrov'].pk}").json()
    assert body["relations"] == [{"kind": "spouse", "label": "жена", "direction": "in",
                                  "person_id": people["maria"].pk, "display_name": "Мария"}]


def test_a_merged_persons_id_says_where_it_went(client_a: ClientAndTenant, people: dict[str, Person],
                                                make_person: MakePerson) -> None:
    client, tenant = client_a
    masha = make_person("Маша", tenant=tenant)
    services.person_merge(source=masha, target=people["maria"], reviewer=None)
    response = client.get(f"/api/v1/users/u1/people/{masha.pk}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "merged" and response.json()["error"]["merged_into"] == \
        people["maria"].pk


def test_other_tenants_and_users_cannot_see_a_person(client_a: ClientAndTenant, client_b: ClientAndTenant,
                                                     people: dict[str, Person]) -> None:
    client, _ = client_a
    other_client, _ = client_b
    pk = people["petrov"].pk
    assert other_client.get(f"/api/v1/users/u1/people/{pk}").status_code == 404
    assert other_client.get("/api/v1/users/u1/people").json()["count"] == 0
    assert other_client.patch(f"/api/v1/users/u1/people/{pk}", {"circle": "Family"}, format="json").status_code == 404
    assert client.get(f"/api/v1/users/u2/people/{pk}").status_code == 404
    found = other_client.post("/api/v1/users/u1/people/search", {"query": "Петров"}, format="json").json()
    assert found["results"] == []


def test_search_returns_scored_people(client_a: ClientAndTenant, people: dict[str, Person]) -> None:
    client, _ = client_a
    response = client.post("/api/v1/users/u1/people/search", {"query": "начальник из проекта X"}, format="json")
    body = response.json()
    assert response.status_code == 200 and body["mode"] == "hybrid"
    assert [r["display_name"] for r in body["results"]] == ["Петров"]
    assert body["results"][0]["score"] >= 0.65 and "lexical" in body["results"][0]["components"]
    excluded = client.post("/api/v1/users/u1/people/search",
                           {"query": "Петров", "exclude_circles": ["Work_Inner"]}, format="json").json()
    assert [r["display_name"] for r in excluded["results"]] == ["Мария"]  # her bio names him


def test_search_validates_its_input(client_a: ClientAndTenant) -> None:
    client, _ = client_a
    response = client.post("/api/v1/users/u1/people/search", {"query": "x", "threshold": 2}, format="json")
    assert response.status_code == 400 and "threshold" in response.json()["error"]["fields"]
    response = client.post("/api/v1/users/u1/people/search", {"query": "x", "mode": "bm25"}, format="json")
    assert response.status_code == 400


def test_patch_sets_circle_aliases_and_bio_and_is_audited(client_a: ClientAndTenant,
                                                          people: dict[str, Person]) -> None:
    client, _ = client_a
    pk = people["maria"].pk
    response = client.patch(f"/api/v1/users/u1/people/{pk}",
                            {"circle": "Family", "aliases": ["Маша", "Маша"], "bio": "Сестра."}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert (body["circle"], body["circle_locked"], body["aliases"], body["bio"]) == ("Family", True, ["Маша"],
                                                                                    "Сестра.")
    entry = PeopleAuditEntry.objects.get()
    key = "api-key:" + ApiKey.objects.get(tenant=client_a[1]).prefix + " (default)"
    assert (entry.action, entry.actor_label, entry.person_id) == ("person_edited", key, pk)
    assert entry.details["changed"]["circle"] == {"from": "Friends", "to": "Family"}


def test_patch_validates_its_input(client_a: ClientAndTenant, people: dict[str, Person]) -> None:
    client, _ = client_a
    url = f"/api/v1/users/u1/people/{people['maria'].pk}"
    assert client.patch(url, {}, format="json").status_code == 400
    bad = client.patch(url, {"circle": "Enemies"}, format="json")
    assert bad.status_code == 400 and "circle" in bad.json()["error"]["fields"]
    assert client.patch("/api/v1/users/u1/people/999999", {"bio": "x"}, format="json").status_code == 404


def test_patch_without_a_body_is_refused_and_the_schema_requires_one(client_a: ClientAndTenant,
                                                                     people: dict[str, Person], schema: dict) -> None:
    client, _ = client_a
    response = client.patch(f"/api/v1/users/u1/people/{people['maria'].pk}")
    assert response.status_code == 400
    assert schema["paths"]["/api/v1/users/{user_id}/people/{person_id}"]["patch"]["requestBody"]["required"] is True


def api_key_label(tenant: Tenant) -> str:
    return "api-key:" + ApiKey.objects.get(tenant=tenant).prefix + " (default)"


def test_patch_renames_and_the_old_name_still_finds_the_person(client_a: ClientAndTenant,
                                                               people: dict[str, Person]) -> None:
    client, tenant = client_a
    pk = people["maria"].pk
    response = client.patch(f"/api/v1/users/u1/people/{pk}", {"display_name": "  Мария Петрова "}, format="json")
    body = response.json()
    assert response.status_code == 200
    assert (body["display_name"], body["aliases"]) == ("Мария Петрова", ["Мария"])
    # A later mention of the old name is still her, for the archivist and for search.
    assert services.find_identity(tenant_id=tenant.pk, user_id="u1", draft=PersonDraft(display_name="Мария")).pk == pk
    found = client.post("/api/v1/users/u1/people/search", {"query": "Мария"}, format="json").json()["results"]
    assert found[0]["id"] == pk
    entry = PeopleAuditEntry.objects.get()
    assert (entry.action, entry.actor_label, entry.person_id) == ("person_edited", api_key_label(tenant), pk)
    assert entry.details["changed"]["display_name"] == {"from": "Мария", "to": "Мария Петрова"}


def test_patch_renames_without_the_old_name_when_aliases_are_given(client_a: ClientAndTenant,
                                                                   people: dict[str, Person]) -> None:
    client, tenant = client_a
    url = f"/api/v1/users/u1/people/{people['maria'].pk}"
    body = client.patch(url, {"display_name": "Марина", "aliases": ["Мариша"]}, format="json").json()
    assert (body["display_name"], body["aliases"]) == ("Марина", ["Мариша"])
    assert services.find_identity(tenant_id=tenant.pk, user_id="u1", draft=PersonDraft(display_name="Мария")) is None


@pytest.mark.parametrize(("name", "message"), [
    ("", "This field may not be blank."),
    ("   ", "This field may not be blank."),
    ("«»!?", "The display name must not be empty."),  # nothing left once cleaned as every name is
    ("x" * 201, "Ensure this field has no more than 200 characters."),
    (5, "Must be a string, not int."),
    (None, "This field may not be null."),
])
def test_patch_refuses_a_display_name_that_is_no_name(client_a: ClientAndTenant, people: dict[str, Person],
                                                      name: object, message: str) -> None:
    client, _ = client_a
    response = client.patch(f"/api/v1/users/u1/people/{people['maria'].pk}", {"display_name": name}, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"display_name": [message]}
    assert Person.objects.get(pk=people["maria"].pk).display_name == "Мария"


def test_delete_removes_the_person_and_everything_derived_from_them(client_a: ClientAndTenant,
                                                                     people: dict[str, Person],
                                                                     make_person: MakePerson) -> None:
    client, tenant = client_a
    maria, petrov = people["maria"], people["petrov"]
    created = append_messages(tenant, "u1", "s1", ["Мария — жена Петрова."]).created
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=created)
    assert PersonMention.objects.filter(person=maria).exists()
    assert PersonRelation.objects.filter(subject=maria, object=petrov).exists()
    masha = make_person("Маша", tenant=tenant)
    services.person_merge(source=masha, target=maria, reviewer=None)  # a tombstone merged into her
    marusya = make_person("Маруся", tenant=tenant)
    with transaction.atomic():
        services.merge_proposal_create(source=marusya, target=maria, rule="diminutive", score=0.8, evidence=[])
    services.people_embed_pending(tenant_id=tenant.pk, user_id="u1")  # as after the merge's commit

    def found(mode: str) -> list[int]:
        body = client.post("/api/v1/users/u1/people/search", {"query": "Мария", "mode": mode, "threshold": 0},
                           format="json").json()
        return [r["id"] for r in body["results"]]

    assert maria.pk in found("vector") and maria.pk in found("hybrid")

    response = client.delete(f"/api/v1/users/u1/people/{maria.pk}")
    assert response.status_code == 204 and response.content == b""

    gone = [maria.pk, masha.pk]
    assert not Person.objects.filter(pk__in=gone).exists()
    assert not PersonMention.objects.filter(person_id__in=gone).exists()
    assert not PersonRelation.objects.filter(Q(subject_id__in=gone) | Q(object_id__in=gone)).exists()
    assert not PersonMerge.objects.filter(Q(source_id__in=gone) | Q(target_id__in=gone)).exists()
    assert not MergeProposal.objects.filter(Q(source_id__in=gone) | Q(target_id__in=gone)).exists()
    assert set(Person.objects.values_list("display_name", flat=True)) == {"Петров", "Маруся"}  # u1's and u2's
    assert client.get(f"/api/v1/users/u1/people/{maria.pk}").status_code == 404
    assert client.get(f"/api/v1/users/u1/people/{petrov.pk}").json()["relations"] == []
    assert maria.pk not in found("vector") and maria.pk not in found("hybrid")
    entry = PeopleAuditEntry.objects.get(action="person_deleted")
    assert (entry.actor_label, entry.person_id, entry.user_id) == (api_key_label(tenant), None, "u1")
    assert entry.details["person_id"] == maria.pk and entry.details["display_name"] == "Мария"
    assert entry.details["merged_ids"] == [masha.pk]
    assert entry.details["deleted"]["people"] == 2 and entry.details["deleted"]["merge_proposals_pending"] == 1


def test_delete_of_an_unknown_or_someone_elses_person_is_a_404(client_a: ClientAndTenant,
                                                               client_b: ClientAndTenant,
                                                               people: dict[str, Person]) -> None:
    client, _ = client_a
    other_client, _ = client_b
    missing = client.delete("/api/v1/users/u1/people/999999")
    assert missing.status_code == 404
    assert (missing.json()["error"]["code"], list(missing.json()["error"]["fields"])) == ("not_found", ["person_id"])
    pk = people["petrov"].pk
    assert other_client.delete(f"/api/v1/users/u1/people/{pk}").status_code == 404  # another tenant
    assert client.delete(f"/api/v1/users/u2/people/{pk}").status_code == 404  # another user
    assert Person.objects.filter(pk=pk).exists()
    assert not PeopleAuditEntry.objects.exists()
    assert client.delete(f"/api/v1/users/u1/people/{pk}").status_code == 204
    assert client.delete(f"/api/v1/users/u1/people/{pk}").status_code == 404  # once


def test_delete_of_a_merged_persons_id_says_where_it_went(client_a: ClientAndTenant, people: dict[str, Person],
                                                          make_person: MakePerson) -> None:
    client, tenant = client_a
    masha = make_person("Маша", tenant=tenant)
    services.person_merge(source=masha, target=people["maria"], reviewer=None)
    response = client.delete(f"/api/v1/users/u1/people/{masha.pk}")
    assert response.status_code == 404 and response.json()["error"]["merged_into"] == people["maria"].pk
    assert Person.objects.filter(pk=masha.pk).exists()


def test_erasing_a_user_removes_their_people(client_a: ClientAndTenant, people: dict[str, Person],
                                             make_person: MakePerson) -> None:
    client, tenant = client_a
    masha = make_person("Маша", tenant=tenant)
    services.person_merge(source=masha, target=people["maria"], reviewer=None)
    services.relation_upsert(subject=people["maria"], object=people["petrov"], kind="spouse")
    response = client.delete("/api/v1/users/u1")
    deleted = response.json()["deleted"]
    assert response.status_code == 200
    assert (deleted["people"], deleted["people_merges"], deleted["people_relations"]) == (3, 1, 1)
    assert list(Person.objects.values_list("user_id", flat=True)) == ["u2"]
    assert not PeopleAuditEntry.objects.filter(user_id="u1").exists()


def test_the_schema_documents_the_people_operations(client_a: ClientAndTenant) -> None:
    client, _ = client_a
    schema = client.get("/api/schema/?format=json").json()
    operations = {op["operationId"] for path in schema["paths"].values() for op in path.values()
                  if isinstance(op, dict) and "operationId" in op}
    assert {"people_list", "person_get", "person_update", "person_delete", "people_search"} <= operations
    detail = schema["paths"]["/api/v1/users/{user_id}/people/{person_id}"]
    patch = detail["patch"]["requestBody"]["content"]["application/json"]
    assert "display_name" in patch["examples"]["RenameKeepingTheOldNameAsAnAlias"]["value"]
    responses = detail["delete"]["responses"]
    assert set(responses) >= {"204", "404"} and "content" not in responses["204"]
    not_found = responses["404"]["content"]["application/json"]
    assert not_found["schema"] == {"$ref": "#/components/schemas/Error"}  # the one error body, with an example
    assert not_found["examples"]["UnknownId"]["value"]["error"]["fields"] == {"person_id": ["User 'u1' has no "
                                                                                           "person 999."]}


@pytest.mark.parametrize(("text", "subject", "obj"), [
    ("Anna came with Tom, her husband.", "Tom", "Anna"),
    ("Лена с мужем Игорем пригласили нас в гости.", "Игорь", "Лена"),
    ("刘洋和她老公邓亮请我们吃饭。", "邓亮", "刘洋"),
])
def test_a_relation_stated_in_a_message_shows_in_both_peoples_details(client_a: ClientAndTenant, text: str,
                                                                     subject: str, obj: str) -> None:
    client, tenant = client_a
    created = append_messages(tenant, "u1", "s1", [text]).created
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=created)
    husband, wife = Person.objects.get(display_name=subject), Person.objects.get(display_name=obj)
    body = client.get(f"/api/v1/users/u1/people/{husband.pk}").json()
    assert [(r["kind"], r["direction"], r["display_name"]) for r in body["relations"]] == [("spouse", "out", obj)]
    body = client.get(f"/api/v1/users/u1/people/{wife.pk}").json()
    assert [(r["kind"], r["direction"], r["display_name"]) for r in body["relations"]] == [("spouse", "in", subject)]


@pytest.mark.parametrize(("existing", "renamed_to", "rule"), [
    ("Петров", "  Петров ", "name"),
    ("Tom Baker", "tom baker", "name"),
    ("张伟", "张伟", "name"),
    ("Мария Петрова", "Маша", "alias"),  # another person's alias
])
def test_a_rename_to_another_persons_name_opens_a_merge_proposal_the_response_names(
    client_a: ClientAndTenant, make_person: MakePerson, existing: str, renamed_to: str, rule: str
) -> None:
    """Found by a QA trial: renaming a person to the name of another of the user's people was silent.
    The design lets it through (an edit never merges, so it never makes a person disappear) and asks a
    reviewer: the proposal is opened and the response says which, with whom."""
    client, tenant = client_a
    other = make_person(existing, tenant=tenant, aliases=["Маша"] if rule == "alias" else [])
    renamed = make_person("Сидоров", tenant=tenant)
    response = client.patch(f"/api/v1/users/u1/people/{renamed.pk}", {"display_name": renamed_to}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    proposal = MergeProposal.objects.get(status=MergeProposal.Status.PENDING)
    assert {proposal.source_id, proposal.target_id} == {renamed.pk, other.pk}
    assert proposal.origin == MergeProposal.Origin.EDIT
    assert body["merge_proposals"] == [{"id": proposal.pk, "person_id": other.pk, "display_name": existing,
                                        "rule": rule, "score": 1.0}]
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 2  # nothing merged
    # Any later edit of either of the two still shows the question waiting; a rename that meets no one
    # answers an empty list.
    later = client.patch(f"/api/v1/users/u1/people/{other.pk}", {"bio": "Сосед."}, format="json").json()
    assert [p["id"] for p in later["merge_proposals"]] == [proposal.pk]
    fresh = make_person("Олег", tenant=tenant)
    assert client.patch(f"/api/v1/users/u1/people/{fresh.pk}", {"display_name": "Олег Иванов"},
                        format="json").json()["merge_proposals"] == []


def test_the_schema_documents_that_a_rename_may_open_a_merge_proposal(schema: dict) -> None:
    patch = schema["paths"]["/api/v1/users/{user_id}/people/{person_id}"]["patch"]
    assert "merge proposal" in patch["description"]
    ok = patch["responses"]["200"]["content"]["application/json"]
    output = schema["components"]["schemas"][ok["schema"]["$ref"].rsplit("/", 1)[1]]
    assert "merge_proposals" in output["properties"]
    example = next(iter(ok["examples"].values()))["value"]
    assert example["merge_proposals"][0]["rule"] == "name"


@pytest.mark.parametrize(("own", "other"), [
    ("Priya Shah", "Karen Lee"),
    ("Мария Петрова", "Ольга Иванова"),
    ("张伟", "李娜"),
])
def test_a_rename_undone_closes_the_merge_proposal_it_opened(client_a: ClientAndTenant, make_person: MakePerson,
                                                              own: str, other: str) -> None:
    """Found by a QA trial: renaming Priya to "Karen Lee" proposed merging the real Karen Lee into her;
    renaming her back left the proposal pending, and approving it would merge two different people."""
    client, tenant = client_a
    person = make_person(own, tenant=tenant, mentions=5)
    namesake = make_person(other, tenant=tenant)
    url = f"/api/v1/users/u1/people/{person.pk}"
    opened = client.patch(url, {"display_name": other}, format="json").json()["merge_proposals"]
    assert [(p["person_id"], p["rule"]) for p in opened] == [(namesake.pk, "name")]
    back = client.patch(url, {"display_name": own}, format="json").json()
    # The name left was the mistake: no alias keeps calling her by it, and the proposal it made is closed.
    assert (back["display_name"], back["aliases"], back["merge_proposals"]) == (own, [], [])
    proposal = MergeProposal.objects.get(pk=opened[0]["id"])
    assert proposal.status == MergeProposal.Status.SUPERSEDED
    assert "rule 'name' no longer holds" in proposal.evidence[-1]["detail"]
    entry = PeopleAuditEntry.objects.filter(person_id=person.pk).latest("pk")
    assert [(s["id"], s["person_id"]) for s in entry.details["superseded_proposals"]] == [(proposal.pk, namesake.pk)]
    assert not MergeProposal.objects.filter(status=MergeProposal.Status.PENDING).exists()
    with pytest.raises(ApplicationError, match="already superseded"):
        services.merge_proposal_approve(proposal=proposal, reviewer=None)
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 2
