"""The message API's contract: auth, tenant isolation, validation, idempotency, error format."""

from __future__ import annotations

import pytest
from django.test import override_settings
from django.utils import timezone
from rest_framework.test import APIClient

from memoryhub import services
from memoryhub.models import ApiKey, ArchivalJob, Conversation, Message
from rag.models import Chunk

URL = "/api/v1/users/{user}/sessions/{session}/messages"


def url(user: str = "u1", session: str = "s1") -> str:
    return URL.format(user=user, session=session)


def post(client: APIClient, body: dict, **kw: str) -> object:
    return client.post(url(**kw), body, format="json")


TURNS = {"messages": [{"role": "user", "text": "I live in Lisbon."}, {"role": "assistant", "text": "Lovely city!"}]}


# --- authentication -------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("header", [None, "Bearer mh_nope_nope", "Token abc", "Bearer "])
def test_missing_or_wrong_key_is_401(header: str | None) -> None:
    client = APIClient()
    if header is not None:
        client.credentials(HTTP_AUTHORIZATION=header)
    response = client.get(url())
    assert response.status_code == 401
    assert response.json()["error"]["code"] in {"not_authenticated", "authentication_failed"}


def _unknown_key_answer() -> tuple[int, dict]:
    unknown = APIClient()
    unknown.credentials(HTTP_AUTHORIZATION="Bearer mh_0000_unknown")
    response = unknown.get(url())
    return response.status_code, response.json()


def test_revoked_key_gets_the_same_answer_as_an_unknown_key(client_a) -> None:
    client, tenant = client_a
    assert post(client, TURNS).status_code == 202
    services.api_key_revoke(api_key=ApiKey.objects.get(tenant=tenant))
    response = client.get(url())
    assert (response.status_code, response.json()) == _unknown_key_answer()
    assert response.status_code == 401 and "revoked" not in response.content.decode().lower()


def test_key_of_a_deactivated_tenant_gets_the_same_answer_as_an_unknown_key(client_a) -> None:
    client, tenant = client_a
    tenant.is_active = False
    tenant.save(update_fields=["is_active"])
    response = client.get(url())
    assert (response.status_code, response.json()) == _unknown_key_answer()


def test_key_is_stored_hashed_and_last_use_recorded(client_a) -> None:
    client, tenant = client_a
    key = ApiKey.objects.get(tenant=tenant)
    raw = client._credentials["HTTP_AUTHORIZATION"].split()[1]
    assert raw not in (key.key_hash, key.prefix) and raw.startswith(key.prefix)
    assert key.last_used_at is None
    post(client, TURNS)
    key.refresh_from_db()
    assert key.last_used_at is not None


# --- tenant isolation -----------------------------------------------------------------------
def test_tenant_cannot_read_another_tenants_session(client_a, client_b) -> None:
    a, _ = client_a
    b, _ = client_b
    assert post(a, TURNS).status_code == 202
    response = b.get(url())
    assert response.status_code == 404  # not 403: existence does not leak
    assert response.json()["error"]["code"] == "not_found"


def test_tenant_write_to_same_ids_stays_in_its_own_tenant(client_a, client_b) -> None:
    a, tenant_a = client_a
    b, tenant_b = client_b
    post(a, TURNS)
    post(b, {"messages": [{"role": "user", "text": "tenant B's secret"}]})
    a_texts = [m["text"] for m in a.get(url()).json()["messages"]]
    assert a_texts == ["I live in Lisbon.", "Lovely city!"]
    assert Message.objects.filter(tenant=tenant_a).count() == 2
    assert Message.objects.filter(tenant=tenant_b).count() == 1


# --- intake, outbox, idempotency ------------------------------------------------------------
def test_batch_is_stored_with_a_job_that_completes(client_a, django_capture_on_commit_callbacks) -> None:
    client, _ = client_a
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        response = post(client, TURNS | {"enable_auto_extract": True})
    assert response.status_code == 202
    body = response.json()
    assert body["accepted"] == 2 and body["duplicates"] == 0
    # The batch's index job and the session's extraction, then the index job's fill of the reranker vectors.
    assert len(callbacks) == 3
    assert not Chunk.objects.filter(rerank_pending=True).exists()
    job = ArchivalJob.objects.get(pk=body["job_id"])
    assert job.status == ArchivalJob.Status.DONE and job.kind == ArchivalJob.Kind.INDEX
    assert sorted(job.message_ids) == sorted(body["message_ids"])
    extract = ArchivalJob.objects.get(pk=body["extract_job_id"])
    assert extract.status == ArchivalJob.Status.DONE and extract.kind == ArchivalJob.Kind.EXTRACT
    assert sorted(extract.message_ids) == sorted(body["message_ids"])


def test_retried_batch_is_idempotent_on_external_ids(client_a) -> None:
    client, _ = client_a
    batch = {"messages": [{"role": "user", "text": "one", "external_id": "x1"},
                          {"role": "user", "text": "two", "external_id": "x2"}]}
    first = post(client, batch).json()
    assert first["accepted"] == 2 and first["duplicate_ids"] == {} and first["duplicates_changed"] == []
    again = post(client, batch | {"messages": [*batch["messages"], {"role": "user", "text": "3", "external_id": "x3"}]})
    assert again.json() | {"job_id": None, "message_ids": []} == {
        "accepted": 1, "duplicates": 2, "job_id": None, "extract_job_id": None, "message_ids": [], "masked": {},
        "duplicate_ids": dict(zip(["x1", "x2"], first["message_ids"], strict=True)), "duplicates_changed": []}
    assert Message.objects.count() == 3
    assert ArchivalJob.objects.count() == 2
    # Re-sent with another text, a message is still the one stored, and the client is told so.
    edited = post(client, {"messages": [{"role": "user", "text": "one, edited", "external_id": "x1"}]}).json()
    assert (edited["accepted"], edited["duplicates_changed"]) == (0, ["x1"])
    assert edited["duplicate_ids"] == {"x1": first["message_ids"][0]}
    assert Message.objects.get(external_id="x1").text == "one"


def test_recent_messages_are_the_newest_n_in_order(client_a) -> None:
    client, _ = client_a
    msgs = [{"role": "user", "text": f"turn {i}", "created_at": f"2025-01-01T10:{i:02d}:00Z"} for i in range(30)]
    post(client, {"messages": msgs})
    body = client.get(url() + "?limit=5").json()
    assert [m["text"] for m in body["messages"]] == [f"turn {i}" for i in range(25, 30)]
    assert Conversation.objects.get().message_count == 30


def test_a_message_is_dated_in_iso_8601_or_unix_seconds_as_a_typed_memory_is(client_a) -> None:
    client, _ = client_a
    post(client, {"messages": [{"role": "user", "text": "seconds", "created_at": 1714557600},
                               {"role": "user", "text": "iso", "created_at": "2024-05-01T10:00:01Z"}]})
    assert [(m["text"], m["created_at"]) for m in client.get(url()).json()["messages"]] == [
        ("seconds", "2024-05-01T10:00:00Z"), ("iso", "2024-05-01T10:00:01Z")]
    for bad in (True, 1714557600000, "2999-01-01T00:00:00Z", "1714557600"):
        refused = post(client, {"messages": [{"role": "user", "text": "x", "created_at": bad}]})
        assert refused.status_code == 400 and "messages" in refused.json()["error"]["fields"], refused.content
    assert "not a string" in post(client, {"messages": [{"role": "user", "text": "x", "created_at": "1714557600"}]}
                                  ).json()["error"]["message"]
    # 0 is "unknown", as a typed memory's timestamp 0 is: the time it is received, never 1970.
    post(client, {"messages": [{"role": "user", "text": "zero", "created_at": 0}]})
    zero = next(m for m in client.get(url()).json()["messages"] if m["text"] == "zero")
    assert zero["created_at"][:4] == str(timezone.now().year)
    # The search's time filters take either form too.
    for after in (1714557600, "2024-05-01T10:00:00Z"):
        found = client.post("/api/v1/search", {"user_id": "u1", "query": "seconds iso",
                                               "filters": {"created_after": after}}, format="json")
        assert found.status_code == 200, found.content
        assert {i["text"] for i in found.json()["items"]} <= {"seconds", "iso", "zero"}


# --- validation: each rule names its field and stores nothing -------------------------------
@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "messages"),
        ({"messages": []}, "messages"),
        ({"messages": "hello"}, "messages"),
        ({"messages": [{"role": "robot", "text": "hi"}]}, "messages"),
        ({"messages": [{"role": "user", "text": "   "}]}, "messages"),
        ({"messages": [{"role": "user"}]}, "messages"),
        ({"messages": [{"role": "user", "text": "x" * 101}]}, "messages"),
        ({"messages": [{"role": "user", "text": "ok", "created_at": "yesterday"}]}, "messages"),
        ({"messages": [{"role": "user", "text": "a", "external_id": "d"},
                       {"role": "user", "text": "b", "external_id": "d"}]}, "messages"),
        ({"messages": [{"role": "user", "text": "ok"}], "enable_auto_extract": "maybe"}, "enable_auto_extract"),
    ],
)
@override_settings(MESSAGE_MAX_CHARS=100)
def test_invalid_batch_is_400_naming_the_field_and_stores_nothing(client_a, body: dict, field: str) -> None:
    client, _ = client_a
    response = post(client, body)
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid"
    assert field in error["fields"]
    assert Message.objects.count() == 0 and ArchivalJob.objects.count() == 0


def test_field_errors_point_at_the_message_and_key(client_a) -> None:
    client, _ = client_a
    response = post(client, {"messages": [{"role": "user", "text": "fine"}, {"role": "robot", "text": "x"}]})
    fields = response.json()["error"]["fields"]
    # Errors are keyed by the index of the message at fault; the valid one is not mentioned.
    [said] = fields["messages"]["1"]["role"]
    assert said.startswith('"robot" is not a valid choice; allowed: user, assistant, system, developer'), said
    assert "0" not in fields["messages"]


@override_settings(MESSAGE_BATCH_MAX=3)
def test_batch_over_the_limit_is_400(client_a) -> None:
    client, _ = client_a
    response = post(client, {"messages": [{"role": "user", "text": str(i)} for i in range(4)]})
    assert response.status_code == 400
    assert "at most 3" in response.json()["error"]["fields"]["messages"][0]
    assert Message.objects.count() == 0


def test_bad_limit_and_bad_ids_are_4xx(client_a) -> None:
    client, _ = client_a
    post(client, TURNS)
    response = client.get(url() + "?limit=0")
    assert response.status_code == 400 and "limit" in response.json()["error"]["fields"]
    response = client.get("/api/v1/users/bad%20id/sessions/s1/messages")
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["user_id"]


def test_malformed_json_is_400_in_the_one_format(client_a) -> None:
    client, _ = client_a
    response = client.post(url(), data="{not json", content_type="application/json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "parse_error"


def test_throttle_answers_429_in_the_one_format(client_a) -> None:
    from memoryhub.auth import ApiKeyRateThrottle

    client, _ = client_a
    old = ApiKeyRateThrottle.THROTTLE_RATES
    ApiKeyRateThrottle.THROTTLE_RATES = {"api_key": "2/min"}
    try:
        responses = [client.get(url()) for _ in range(3)]
    finally:
        ApiKeyRateThrottle.THROTTLE_RATES = old
    assert responses[-1].status_code == 429
    assert responses[-1].json()["error"]["code"] == "throttled"
    assert 0 < int(responses[-1]["Retry-After"]) <= 60
    assert client.get(url()).status_code != 429
