"""The profile API's contract: reads, manual saves, deletions, history, refusals, auth, tenancy, erasure."""

from __future__ import annotations

import pytest
from rest_framework.response import Response
from rest_framework.test import APIClient

from memoryhub.models import ApiKey, Message
from profiles import services
from profiles.models import FactEvent, UserProfile
from tests.factories import append_messages
from tests.profiles.conftest import metric


def put(client: APIClient, key: str, body: dict, user: str = "u1") -> Response:
    return client.put(f"/api/v1/users/{user}/profile/{key}", body, format="json")


def get_profile(client: APIClient, user: str = "u1", **params: str) -> dict:
    response = client.get(f"/api/v1/users/{user}/profile", params)
    assert response.status_code == 200, response.content
    return response.json()


def values(body: dict) -> dict[str, str]:
    return {f["key"]: f["value"] for f in body["facts"]}


# --- read and save ---------------------------------------------------------------------------
def test_put_saves_a_fact_and_get_returns_the_active_profile(client_a) -> None:
    client, _ = client_a
    response = put(client, "name", {"value": "Anna"})
    assert response.status_code == 201
    body = response.json()
    assert (body["key"], body["outcome"], body["replaced"]) == ("name", "created", None)
    assert body["fact"] | {"id": 0, "created_at": "", "updated_at": "", "confirmed_at": ""} == {
        "id": 0, "key": "name", "value": "Anna", "confidence": 1.0, "status": "active", "source": "api", "multi": False,
        "competes_with": None, "source_message_id": None, "meta": {},
        "created_at": "", "updated_at": "", "confirmed_at": "",
    }
    assert put(client, "location", {"value": "Berlin", "confidence": 0.8}).status_code == 201
    assert get_profile(client) | {"facts": None} == {"user_id": "u1", "status": "active", "facts": None}
    assert values(get_profile(client)) == {"name": "Anna", "location": "Berlin"}


def test_put_on_a_synonym_saves_under_the_canonical_key(client_a) -> None:
    client, _ = client_a
    assert put(client, "имя", {"value": "Анна"}).json()["key"] == "name"
    assert put(client, "年龄", {"value": "30岁"}).json()["fact"]["value"] == "30"
    assert values(get_profile(client)) == {"name": "Анна", "age": "30"}


def test_british_and_american_spellings_of_a_key_are_one_key(client_a) -> None:
    """`PUT profile/favourite_colour` made a key beside the rules' `favorite_*` ("my favourite colour is…")."""
    client, _ = client_a
    assert put(client, "favourite_colour", {"value": "green"}).json()["key"] == "favorite_color"
    response = put(client, "Favorite Color", {"value": "blue"})
    assert (response.json()["key"], response.json()["replaced"]) == ("favorite_color", "green")
    assert client.get("/api/v1/users/u1/profile/favourite-colour").json()["facts"][0]["value"] == "blue"
    assert put(client, "favourite_flavours", {"value": "mint"}).json()["key"] == "favorite_flavors"
    # Words that only end like British spellings are left as they are.
    assert put(client, "tour_hour", {"value": "9"}).json()["key"] == "tour_hour"
    assert put(client, "exercise", {"value": "yoga"}).json()["key"] == "exercise"
    assert set(values(get_profile(client))) == {"favorite_color", "favorite_flavors", "tour_hour", "exercise"}


def test_a_new_value_replaces_the_old_one_and_reports_it(client_a) -> None:
    client, _ = client_a
    put(client, "location", {"value": "Berlin"})
    response = put(client, "location", {"value": "Paris", "reason": "moved"})
    assert response.status_code == 200
    assert (response.json()["outcome"], response.json()["replaced"]) == ("replaced", "Berlin")
    assert values(get_profile(client)) == {"location": "Paris"}


def test_an_uncertain_value_waits_for_review_and_is_listed_as_pending(client_a) -> None:
    client, _ = client_a
    put(client, "location", {"value": "Berlin", "confidence": 0.9})
    response = put(client, "location", {"value": "Paris", "confidence": 0.5})
    assert (response.status_code, response.json()["outcome"]) == (200, "pending")
    assert values(get_profile(client)) == {"location": "Berlin"}
    pending = get_profile(client, status="pending")
    assert pending["status"] == "pending" and values(pending) == {"location": "Paris"}
    assert pending["facts"][0]["competes_with"] == "Berlin"
    assert response.json()["fact"]["competes_with"] == "Berlin"
    assert get_profile(client)["facts"][0]["competes_with"] is None


def test_put_can_name_the_message_the_fact_came_from(client_a) -> None:
    client, tenant = client_a
    message = append_messages(tenant, "u1", "s1", ["I live in Berlin"], run_job=False).created[0]
    response = put(client, "location", {"value": "Berlin", "source_message_id": message.pk})
    assert response.json()["fact"]["source_message_id"] == message.pk
    other = append_messages(tenant, "u2", "s1", ["I live in Rome"], run_job=False).created[0]
    response = put(client, "location", {"value": "Rome", "source_message_id": other.pk})
    assert response.status_code == 400
    assert response.json()["error"]["fields"] == {"source_message_id": ["No such message of this user."]}


@pytest.mark.parametrize(("key", "body", "field"), [
    ("name", {"value": ""}, "value"),
    ("name", {}, "value"),
    ("name", {"value": "Anna", "confidence": 1.5}, "confidence"),
    ("age", {"value": "very old"}, "value"),
    ("preferred_timezone", {"value": "Mars/Olympus"}, "value"),
    ("name", {"value": "x" * 600}, "value"),
    ("狗的名字", {"value": "Rex"}, "key"),
])
def test_invalid_saves_are_refused_with_the_field_at_fault(client_a, key: str, body: dict, field: str) -> None:
    client, _ = client_a
    response = put(client, key, body)
    assert response.status_code == 400
    error = response.json()["error"]
    assert set(error) >= {"code", "message", "fields"} and field in error["fields"]
    assert not UserProfile.objects.exists()


@pytest.mark.parametrize("status", ["maybe", ""])
def test_get_with_an_unknown_status_is_refused(client_a, status: str) -> None:
    # An empty value is a value outside the documented enum too, not "the default".
    client, _ = client_a
    response = client.get("/api/v1/users/u1/profile", {"status": status})
    assert response.status_code == 400 and "status" in response.json()["error"]["fields"]


# --- sensitive numbers -----------------------------------------------------------------------
SENSITIVE = [
    ("card_number", "4111 1111 1111 1111"),
    ("card_number", "my visa is 4012-8888-8888-1881"),
    ("cn_resident_id", "11010519491231002X"),
    ("ru_passport", "45 06 123456"),
    ("ru_passport", "паспорт 4506123456"),
    ("ru_snils", "112-233-445 95"),
    ("iban", "DE89 3704 0044 0532 0130 00"),
    ("iban", "GB82WEST12345698765432"),
    ("us_ssn", "536-90-4399"),
    ("uk_nino", "AB 12 34 56 C"),
    ("ru_inn", "ИНН 7707083893"),
    ("ru_inn", "500100732259"),
    # What intake masking left: a fact holding it would still say "a card number was given here".
    ("card_number", "[card •••• 1111]"),
    ("us_ssn", "[us_ssn]"),
]
NEAR_MISSES = [
    ("order", "1234 5678 1234 5678"),  # 16 digits, fails Luhn
    ("cn_id", "110105194912310021"),  # wrong check character
    ("room", "0006 123456"),  # no such passport region "00"
    ("phone", "4506123456"),  # ten bare digits without a word about a passport
    ("code", "112-233-445 96"),  # SNILS shape, wrong check number
    ("ref", "DE88 3704 0044 0532 0130 00"),  # IBAN shape, fails mod-97
    ("zip", "941071234"),  # nine bare digits, nothing says SSN
    ("ref", "666-12-3456"),  # SSN shape, area 666 never issued
    ("phone", "+1 415 555 0132"),
]


@pytest.mark.parametrize(("kind", "value"), SENSITIVE)
def test_sensitive_numbers_are_refused_and_counted(client_a, kind: str, value: str) -> None:
    client, _ = client_a
    before = metric("memoryhub_profile_sensitive_refused_total", kind=kind, source="api")
    response = put(client, "note", {"value": value})
    assert response.status_code == 400
    error = response.json()["error"]
    assert (error["code"], error["kind"]) == ("sensitive_value", kind)
    assert list(error["fields"]) == ["value"] and "never stored" in error["message"]
    assert not UserProfile.objects.exists() and not FactEvent.objects.exists()
    assert metric("memoryhub_profile_sensitive_refused_total", kind=kind, source="api") == before + 1


@pytest.mark.parametrize(("key", "kind", "value"), [("ssn", "us_ssn", "536904399"),
                                                     ("social_security_number", "us_ssn", "536 90 4399"),
                                                     ("inn", "ru_inn", "7707083893")])
def test_the_key_names_a_number_that_has_no_format_of_its_own(client_a, key: str, kind: str, value: str) -> None:
    client, _ = client_a
    response = put(client, key, {"value": value})
    assert (response.status_code, response.json()["error"]["kind"]) == (400, kind)


@pytest.mark.parametrize(("key", "value"), NEAR_MISSES)
def test_numbers_that_only_look_sensitive_are_saved(client_a, key: str, value: str) -> None:
    client, _ = client_a
    assert put(client, key, {"value": value}).status_code == 201


# --- delete and history ----------------------------------------------------------------------
def test_delete_forgets_a_key_or_one_value_of_it(client_a) -> None:
    client, _ = client_a
    put(client, "likes", {"value": "jazz"})
    put(client, "likes", {"value": "tea"})
    put(client, "name", {"value": "Anna"})
    response = client.delete("/api/v1/users/u1/profile/likes?value=tea")
    assert (response.status_code, response.json()) == (200, {"user_id": "u1", "key": "likes", "deleted": 1})
    assert client.delete("/api/v1/users/u1/profile/LIKES").json()["deleted"] == 1
    assert values(get_profile(client)) == {"name": "Anna"}
    response = client.delete("/api/v1/users/u1/profile/likes")
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_deleting_a_value_the_key_does_not_hold_names_the_value_and_what_the_key_holds(client_a, schema) -> None:
    """`?value=nothing` under a key with facts answered "User 'u1' has no fact under 'allergies'." naming
    the key (found by a QA session): the value was what did not match."""
    client, _ = client_a
    put(client, "allergies", {"value": "peanuts"})
    put(client, "allergies", {"value": "cats"})
    response = client.delete("/api/v1/users/u1/profile/allergies?value=nothing")
    assert response.status_code == 404, response.content
    error = response.json()["error"]
    assert error["code"] == "not_found" and list(error["fields"]) == ["value"], error
    assert error["message"] == "No value 'nothing' under 'allergies'; it holds: 'peanuts', 'cats'.", error
    assert sorted(f["value"] for f in get_profile(client)["facts"] if f["key"] == "allergies") == ["cats", "peanuts"]
    # A key without facts is still the key's 404.
    response = client.delete("/api/v1/users/u1/profile/pets?value=cat")
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["key"], response.content
    documented = schema["paths"]["/api/v1/users/{user_id}/profile/{key}"]["delete"]["responses"]["404"]
    assert "`error.fields.value`" in documented["description"]


def test_history_tells_the_keys_story_newest_first(client_a, reviewer) -> None:
    client, tenant = client_a
    put(client, "location", {"value": "Berlin"})
    put(client, "location", {"value": "Paris", "reason": "moved"})
    fact = UserProfile.objects.get(key="location")
    services.fact_reject(fact=fact, reviewer=reviewer, reason="user was joking")
    client.delete("/api/v1/users/u1/profile/location")
    response = client.get("/api/v1/users/u1/profile/location/history")
    assert response.status_code == 200
    events = response.json()["events"]
    # An API write names the key that made it, as an API review decision does.
    key = "api-key:" + ApiKey.objects.get(tenant=tenant).prefix + " (default)"
    assert [(e["action"], e["who"], e["old_value"], e["new_value"], e["reason"]) for e in events] == [
        ("deleted", key, "Paris", "", ""),
        ("rejected", "admin:alice", "Paris", "Paris", "user was joking"),
        ("replaced", key, "Berlin", "Paris", "moved"),
        ("created", key, "", "Berlin", ""),
    ]
    assert {e["actor"] for e in events} == {"api", "admin"}
    assert events[1]["old_status"] == "active" and events[1]["new_status"] == "rejected"
    assert client.get("/api/v1/users/u1/profile/city/history").json()["key"] == "location"  # a synonym
    assert client.get("/api/v1/users/u1/profile/pets/history").status_code == 404


# --- auth and tenancy ------------------------------------------------------------------------
def test_profile_endpoints_need_an_api_key(db: None) -> None:
    anonymous = APIClient()
    assert anonymous.get("/api/v1/users/u1/profile").status_code == 401
    assert put(anonymous, "name", {"value": "Anna"}).status_code == 401
    assert anonymous.delete("/api/v1/users/u1/profile/name").status_code == 401
    assert anonymous.get("/api/v1/users/u1/profile/name/history").status_code == 401


def test_a_tenant_neither_sees_nor_changes_another_tenants_facts(client_a, client_b) -> None:
    a, _ = client_a
    b, _ = client_b
    put(a, "name", {"value": "Anna"})
    assert get_profile(b)["facts"] == []
    assert b.get("/api/v1/users/u1/profile/name/history").status_code == 404
    assert b.delete("/api/v1/users/u1/profile/name").status_code == 404
    put(b, "name", {"value": "Boris"})
    assert values(get_profile(a)) == {"name": "Anna"} and values(get_profile(b)) == {"name": "Boris"}


# --- erasure through the kernel endpoint -----------------------------------------------------
def test_user_erasure_removes_every_fact_and_event_of_the_user_and_nothing_else(client_a, client_b, reviewer) -> None:
    a, tenant_a = client_a
    b, tenant_b = client_b
    for client in (a, b):
        for user in ("u1", "u2"):
            put(client, "name", {"value": f"name-of-{user}"}, user=user)
            put(client, "likes", {"value": "jazz"}, user=user)
            put(client, "location", {"value": "Somewhere", "confidence": 0.3}, user=user)  # pending
    append_messages(tenant_a, "u1", "s1", ["I live in Berlin"], run_job=False)
    rejected = UserProfile.objects.get(tenant=tenant_a, user_id="u1", key="likes")
    services.fact_reject(fact=rejected, reviewer=reviewer)

    response = a.delete("/api/v1/users/u1")
    assert response.status_code == 200
    deleted = response.json()["deleted"]
    assert deleted["facts"] == 3 and deleted["fact_events"] == 4 and deleted["messages"] == 1

    assert not UserProfile.objects.filter(tenant=tenant_a, user_id="u1").exists()
    assert not FactEvent.objects.filter(tenant=tenant_a, user_id="u1").exists()
    assert not Message.objects.filter(tenant=tenant_a, user_id="u1").exists()
    assert a.get("/api/v1/users/u1/profile/name/history").status_code == 404
    # The same tenant's other user and the other tenant's same user id are untouched.
    assert UserProfile.objects.filter(tenant=tenant_a, user_id="u2").count() == 3
    assert UserProfile.objects.filter(tenant=tenant_b, user_id="u1").count() == 3
    assert FactEvent.objects.filter(tenant=tenant_b, user_id="u1").count() == 3
    assert values(get_profile(b)) == {"name": "name-of-u1", "likes": "jazz"}


def test_openapi_schema_documents_the_profile_operations(db: None) -> None:
    paths = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    assert set(paths["/api/v1/users/{user_id}/profile/{key}"]) >= {"put", "delete"}
    assert "get" in paths["/api/v1/users/{user_id}/profile"]
    assert "get" in paths["/api/v1/users/{user_id}/profile/{key}/history"]
    assert paths["/api/v1/users/{user_id}/profile/{key}"]["put"]["operationId"] == "profile_fact_save"
