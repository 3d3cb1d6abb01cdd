"""Edges of the API found by fuzzing (issue 10): inputs that used to answer 500 now answer a 4xx
naming the field, or a 200 with what can honestly be returned."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from django.test import override_settings

from memoryhub.models import Message
from tests.factories import append_messages

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
MESSAGES = "/api/v1/users/alice/sessions/s1/messages"


def _raw_post(client, url: str, body: str | bytes):
    return client.generic("POST", url, body, content_type="application/json")


# --- item 1: a query with no words --------------------------------------------------------------
@pytest.mark.parametrize("query", ["🙂", "?", "...", " - "])
@pytest.mark.parametrize("mode", ["hybrid", "vector", "bm25"])
def test_search_with_a_query_without_words_answers_200_with_nothing(client_a, query: str, mode: str) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring.", "My dog is called Pixel."], start=START)
    response = client.post("/api/v1/search", {"query": query, "user_id": "alice", "mode": mode}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["items"] == []


@pytest.mark.parametrize("query", ["🙂", "?", "..."])
def test_context_with_a_query_without_words_still_gives_recent_turns(client_a, query: str) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring."], start=START)
    response = client.post("/api/v1/context", {"query": query, "user_id": "alice", "session_id": "s1"},
                           format="json")
    assert response.status_code == 200, response.content
    blocks = {b["name"]: b for b in response.json()["blocks"]}
    assert "Lisbon" in blocks["recent_turns"]["text"]
    assert blocks["memories"]["items"] == []


# --- item 4: body size ------------------------------------------------------------------------
def test_a_batch_at_the_documented_limits_is_accepted(client_a, settings) -> None:
    client, _ = client_a
    # 200 messages of 16,000 characters of two-byte UTF-8: 6.4 MB on the wire, past Django's 2.5 MiB.
    settings.MESSAGE_BATCH_MAX = 200
    text = "я" * settings.MESSAGE_MAX_CHARS
    body = json.dumps({"messages": [{"role": "user", "text": text}] * 200}, ensure_ascii=False).encode()
    assert len(body) > 2.5 * 1024 * 1024
    response = _raw_post(client, MESSAGES, body)
    assert response.status_code == 202, response.content[:300]
    assert response.json()["accepted"] == 200


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=1000)
def test_a_body_over_the_limit_answers_413_with_the_error_body(client_a) -> None:
    client, _ = client_a
    response = _raw_post(client, MESSAGES, json.dumps({"messages": [{"role": "user", "text": "x" * 2000}]}))
    assert response.status_code == 413
    error = response.json()["error"]
    assert error["code"] == "too_large" and "1000" in error["message"]


def test_upload_limit_covers_the_documented_limits(settings) -> None:
    from memoryhub.settings import max_request_bytes

    expected = max_request_bytes(settings.MESSAGE_BATCH_MAX, settings.MESSAGE_MAX_CHARS)
    assert expected == settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    assert settings.DATA_UPLOAD_MAX_MEMORY_SIZE >= settings.MESSAGE_BATCH_MAX * settings.MESSAGE_MAX_CHARS * 4


# --- item 5: what PostgreSQL or Python cannot take --------------------------------------------
@pytest.mark.parametrize("meta", [
    '{"a": "x\\u0000y"}', '{"a\\u0000": 1}', '{"a": "\\ud800"}', '{"a": ["\\udfff"]}', '{"a": 1e400}',
    '{"a": ' + "[" * 40 + "]" * 40 + "}",
])
def test_message_meta_postgres_cannot_store_is_400_naming_meta(client_a, meta: str) -> None:
    client, _ = client_a
    response = _raw_post(client, MESSAGES, '{"messages": [{"role": "user", "text": "hi", "meta": ' + meta + "}]}")
    assert response.status_code == 400, response.content
    assert "meta" in response.json()["error"]["fields"]["messages"]["0"]


def test_document_meta_with_nul_is_400_naming_meta(client_a) -> None:
    client, _ = client_a
    response = _raw_post(client, "/api/v1/users/alice/documents", '{"text": "# A\\nbody", "meta": {"k": "\\u0000"}}')
    assert response.status_code == 400, response.content
    assert "meta" in response.json()["error"]["fields"]


def test_json_nested_a_thousand_deep_is_400(client_a) -> None:
    client, _ = client_a
    response = _raw_post(client, MESSAGES, "[" * 100_000 + "]" * 100_000)
    assert response.status_code == 400, response.content[:300]
    assert response.json()["error"]["code"] == "parse_error"


def test_nul_in_the_value_query_parameter_is_400_naming_value(client_a) -> None:
    client, _ = client_a
    response = client.delete("/api/v1/users/alice/profile/city?value=a%00b")
    assert response.status_code == 400, response.content
    assert "value" in response.json()["error"]["fields"]


@pytest.mark.parametrize("offset", ["100000000000000000000", "1e20"])
def test_huge_offset_is_400_naming_offset(client_a, offset: str) -> None:
    client, _ = client_a
    response = client.get(f"/api/v1/users/alice/people?offset={offset}")
    assert response.status_code == 400, response.content
    assert "offset" in response.json()["error"]["fields"]


def test_huge_fusion_weights_are_400_naming_weights(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring."], start=START)
    response = client.post("/api/v1/search", {"query": "Lisbon", "user_id": "alice", "fusion": "weighted",
                                              "weights": {"bm25": 1e308, "vector": 1e308}}, format="json")
    assert response.status_code == 400, response.content
    assert "weights" in response.json()["error"]["fields"]


# --- item 6: profile keys ----------------------------------------------------------------------
@pytest.mark.parametrize("key", ["ci%00ty", "a'--", "a%27--", "city;", "_", "a__b", "-city"])
def test_invalid_profile_keys_are_refused_not_rewritten(client_a, key: str) -> None:
    client, _ = client_a
    response = client.put(f"/api/v1/users/alice/profile/{key}", {"value": "Berlin"}, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["fields"] == {"key": [response.json()["error"]["message"]]}
    assert client.get("/api/v1/users/alice/profile").json()["facts"] == []


@pytest.mark.parametrize(("key", "canonical"), [
    ("city", "location"), ("Favourite Colour", "favorite_color"), ("favourite-colour", "favorite_color"),
    ("любимый цвет", "lyubimyj_cvet"), ("姓名", "name"), ("Full_Name", "name"),
])
def test_valid_profile_keys_still_normalise(client_a, key: str, canonical: str) -> None:
    client, _ = client_a
    response = client.put(f"/api/v1/users/alice/profile/{key}", {"value": "Berlin"}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["key"] == canonical


# --- item 7: the schema says what the API does ---------------------------------------------------
def _operations(schema: dict):
    for path, item in schema["paths"].items():
        for method, operation in item.items():
            yield path, method, operation


@pytest.mark.django_db
def test_every_operation_documents_its_errors_with_the_error_body(schema: dict) -> None:
    error = schema["components"]["schemas"]["Error"]
    assert error["properties"]["error"]["required"] == ["code", "message", "fields"]
    operations = list(_operations(schema))
    assert len(operations) >= 15
    for path, method, operation in operations:
        responses = operation["responses"]
        for status in ("400", "401", "404", "429"):
            ref = responses[status]["content"]["application/json"]["schema"]["$ref"]
            assert ref == "#/components/schemas/Error", (path, method, status)
        if "requestBody" in operation:
            assert {"413", "415"} <= set(responses), (path, method)


@pytest.mark.django_db
def test_schema_carries_the_constraints_the_views_enforce(schema: dict) -> None:
    from profiles.api import KEY_PATTERN

    params = {(path, method, p["name"]): p["schema"] for path, method, op in _operations(schema)
              for p in op.get("parameters", [])}
    messages = "/api/v1/users/{user_id}/sessions/{session_id}/messages"
    assert params[(messages, "get", "limit")] == {"type": "integer", "minimum": 1, "maximum": 200, "default": 20}
    people = "/api/v1/users/{user_id}/people"
    assert params[(people, "get", "min_mentions")]["minimum"] == 0
    assert params[(people, "get", "offset")]["maximum"] == 1_000_000
    for method in ("put", "delete"):
        assert params[("/api/v1/users/{user_id}/profile/{key}", method, "key")]["pattern"] == KEY_PATTERN
    assert params[("/api/v1/users/{user_id}/profile/{key}/history", "get", "key")]["pattern"] == KEY_PATTERN


def test_schema_error_example_is_what_the_api_answers(client_a, schema: dict) -> None:
    import jsonschema

    client, _ = client_a
    body = client.post("/api/v1/search", {"user_id": "alice"}, format="json").json()
    jsonschema.validate(body, schema["components"]["schemas"]["Error"])


@pytest.mark.parametrize(("url", "body", "path"), [
    (MESSAGES, {"messages": [{"role": "user", "text": 123}]}, ("messages", "0", "text")),
    (MESSAGES, {"messages": [{"role": "user", "text": "hi"}], "enable_auto_extract": 1}, ("enable_auto_extract",)),
    ("/api/v1/search", {"query": "x", "user_id": "a", "filters": {"tags": [1]}}, ("filters", "tags")),
    ("/api/v1/search", {"query": "x", "user_id": 123}, ("user_id",)),
    ("/api/v1/search", {"query": "x", "user_id": "a", "k": "5"}, ("k",)),
    ("/api/v1/search", {"query": "x", "user_id": "a", "k": True}, ("k",)),
    ("/api/v1/context", {"query": 1.5, "user_id": "a"}, ("query",)),
    ("/api/v1/users/a/documents", {"text": "# t", "tags": [7]}, ("tags",)),
    ("/api/v1/users/a/people/search", {"query": ["x"]}, ("query",)),
])
def test_values_of_another_json_type_are_refused_not_coerced(client_a, url: str, body: dict, path: tuple) -> None:
    client, _ = client_a
    response = client.post(url, body, format="json")
    assert response.status_code == 400, response.content
    fields = response.json()["error"]["fields"]
    for part in path:
        fields = fields[part]
    assert "Must be" in json.dumps(fields)


def test_a_blank_value_to_delete_is_refused_and_deletes_nothing(client_a) -> None:
    client, _ = client_a
    assert client.put("/api/v1/users/alice/profile/likes", {"value": "tea"}, format="json").status_code == 201
    response = client.delete("/api/v1/users/alice/profile/likes?value=")
    assert response.status_code == 400 and "value" in response.json()["error"]["fields"]
    assert [f["value"] for f in client.get("/api/v1/users/alice/profile").json()["facts"]] == ["tea"]


@pytest.mark.django_db
def test_schema_says_a_person_patch_needs_a_field_and_weights_need_both(schema: dict) -> None:
    components = schema["components"]["schemas"]
    assert components["PatchedPersonDetailApiPatchInputRequest"]["minProperties"] == 1
    assert set(components["WeightsRequest"]["required"]) == {"bm25", "vector"}


# --- also found -----------------------------------------------------------------------------------
@pytest.mark.django_db
@pytest.mark.parametrize("url", ["/", "/api/"])
def test_landing_page_links_docs_admin_health_and_metrics(client, url: str) -> None:
    response = client.get(url)
    assert response.status_code == 200 and response["Content-Type"].startswith("text/html")
    for link in ('href="/api/docs/"', 'href="/admin/"', 'href="/healthz"', 'href="/metrics"'):
        assert link in response.content.decode()


@pytest.mark.parametrize("body", [{"rerank": True}, {"expand": True, "rerank": True}])
def test_search_says_which_requested_llm_steps_were_skipped_without_an_llm(client_a, body: dict) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring."], start=START)
    response = client.post("/api/v1/search", {"query": "Lisbon", "user_id": "alice", **body}, format="json")
    assert response.status_code == 200
    assert response.json()["llm_steps"] == []
    assert response.json()["skipped_steps"] == [{"step": s, "reason": "llm_off"} for s in body]


def test_search_reports_no_skipped_steps_when_none_was_asked_for(client_a) -> None:
    client, _ = client_a
    response = client.post("/api/v1/search", {"query": "Lisbon", "user_id": "alice", "mode": "vector",
                                              "expand": True}, format="json")
    assert response.json()["skipped_steps"] == [{"step": "expand", "reason": "not_applicable"}]
    response = client.post("/api/v1/search", {"query": "Lisbon", "user_id": "alice"}, format="json")
    assert response.json()["skipped_steps"] == []


def test_get_one_profile_key(client_a) -> None:
    client, _ = client_a
    client.put("/api/v1/users/alice/profile/likes", {"value": "tea"}, format="json")
    client.put("/api/v1/users/alice/profile/loves", {"value": "chess"}, format="json")
    response = client.get("/api/v1/users/alice/profile/likes")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["key"], sorted(f["value"] for f in body["facts"])) == ("likes", ["chess", "tea"])
    assert client.get("/api/v1/users/alice/profile/city").status_code == 404
    assert client.get("/api/v1/users/bob/profile/likes").status_code == 404


@pytest.mark.django_db
def test_public_api_docs_describe_operations_not_specifications(schema: dict) -> None:
    assert "seed 0" not in json.dumps(schema).lower()


def test_the_not_blank_pattern_matches_what_strip_keeps_in_python_and_ecma_regexes() -> None:
    import re

    import jsonschema_rs

    from memoryhub.validation import NOT_BLANK_REGEX

    ecma = jsonschema_rs.validator_for({"type": "string", "pattern": NOT_BLANK_REGEX})
    for code in [*range(0xD800), *range(0xE000, 0x30000)]:
        char = chr(code)
        assert bool(re.search(NOT_BLANK_REGEX, char)) is (char.strip() != "") is ecma.is_valid(char), hex(code)


@pytest.mark.django_db
def test_a_string_that_trims_to_nothing_is_outside_the_schema(schema: dict, schema_allows) -> None:
    text = schema["components"]["schemas"]["DocumentInputRequest"]["properties"]["text"]
    for blank in (" ", "\u001d", "\u00a0", "\u3000\n"):
        assert not schema_allows(text, blank), repr(blank)
    assert schema_allows(text, "\ufeffa") and schema_allows(text, " a ")


# --- the error message names the item at fault ---------------------------------------------------
@pytest.mark.parametrize(("messages", "expected"), [
    ([{"role": "user", "text": "ok"}, {"role": "user", "body": "Hi"}],
     "messages[1].text: This field is required (or `content`, as OpenAI's chat format gives it)."),
    ([{"role": "robot", "text": "beep"}], "messages[0].role: "),
    ([], "messages: "),
])
def test_a_bad_item_of_a_batch_is_named_with_its_path_in_the_message(client_a, messages, expected: str) -> None:
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": messages}, format="json")
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["message"].startswith(expected), error
    assert "messages" in error["fields"]


@pytest.mark.parametrize(("url", "body", "expected"), [
    (MESSAGES, "[]", "The request body must be a JSON object, not list."),
    (MESSAGES, "null", "The request body must be a JSON object, not null."),
    ("/api/v1/search", '"alice"', "The request body must be a JSON object, not str."),
    (MESSAGES, '{"messages": ["hi"]}', "messages[0]: Must be a JSON object, not str."),
    ("/api/v1/search", '{"query": "x", "user_id": "alice", "filters": [1]}',
     "filters: Must be a JSON object, not list."),
])
def test_a_body_or_item_that_is_no_object_is_named_in_plain_words(client_a, url: str, body: str, expected: str) -> None:
    # DRF said "non_field_errors: Invalid data. Expected a dictionary, but got list.": its own key as the
    # place and Python's words for the fault.
    client, _ = client_a
    response = _raw_post(client, url, body)
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == expected


def test_an_error_of_the_request_as_a_whole_has_no_key_in_its_message(client_a) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["My colleague Petrov is planning the migration."], start=START)
    response = client.patch("/api/v1/users/alice/people/999999", {}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"] == "Give at least one of display_name, circle, aliases, bio.", error
    assert error["fields"] == {"non_field_errors": ["Give at least one of display_name, circle, aliases, bio."]}


@pytest.mark.parametrize(("method", "url", "field"), [
    ("get", "/api/v1/jobs/999999", "job_id"),
    ("get", "/api/v1/documents/999999", "document_id"),
    ("get", "/api/v1/users/alice/people/999999", "person_id"),
    ("delete", "/api/v1/users/alice/people/999999", "person_id"),
    ("get", "/api/v1/users/alice/profile/location", "key"),
    ("get", "/api/v1/users/alice/profile/location/history", "key"),
    ("delete", "/api/v1/users/alice/profile/location", "key"),
    ("get", "/api/v1/users/alice/sessions/nope/messages", "session_id"),
    ("post", "/api/v1/users/alice/sessions/nope/extract", "session_id"),
    ("get", f"{MESSAGES}?before_id=999999", "before_id"),
    ("get", "/api/v1/review/nope", "queue"),
    ("get", "/api/v1/review/profiles/999999", "item_id"),
    ("delete", "/api/v1/documents/999999", "document_id"),
    ("get", "/api/v1/characters/nobody/memories", "conf_uid"),
    ("get", "/api/v1/characters/nobody/memories/00000000-0000-4000-8000-000000000000", "conf_uid"),
])
def test_a_404_names_the_path_or_query_parameter_at_fault(client_a, method: str, url: str, field: str) -> None:
    # "No such session." left a client to guess whether the user or the session was wrong.
    client, tenant = client_a
    tenant.api_keys.update(scopes=["memory", "editor"])
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring."], start=START)
    response = getattr(client, method)(url)
    assert response.status_code == 404, response.content
    assert list(response.json()["error"]["fields"]) == [field], response.json()


def test_a_review_status_outside_its_choices_lists_them(client_a) -> None:
    client, tenant = client_a
    tenant.api_keys.update(scopes=["memory", "editor"])
    response = client.get("/api/v1/review/profiles?status=bogus")
    assert response.status_code == 400
    assert "allowed: " in response.json()["error"]["message"] and "pending" in response.json()["error"]["message"]


# --- a chat app's turns in the OpenAI format ------------------------------------------------------
def test_messages_in_the_openai_format_are_taken_with_content_as_text(client_a) -> None:
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [{"role": "user", "content": "I moved to Porto."},
                                                   {"role": "assistant", "content": "How exciting!"}]},
                           format="json")
    assert response.status_code == 202, response.content
    stored = client.get(MESSAGES).json()
    texts = [m["text"] for m in (stored["messages"] if isinstance(stored, dict) else stored)]
    assert sorted(texts) == ["How exciting!", "I moved to Porto."]


def test_content_as_a_list_of_parts_keeps_the_text_and_counts_the_rest(client_a) -> None:
    """What SDKs send, even for text alone: [{"type": "text", "text": …}, {"type": "image_url", …}]."""
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [
        {"role": "user", "external_id": "p1", "content": [
            {"type": "text", "text": "This is my new puppy Biscuit."},
            {"type": "image_url", "image_url": {"url": "https://example.com/biscuit.png"}},
            {"type": "text", "text": "He is ten weeks old."}]},
        {"role": "assistant", "external_id": "p2", "content": [{"type": "output_text", "text": "Adorable!"}]},
        {"role": "developer", "external_id": "p0", "content": "Be brief."},
    ]}, format="json")
    assert response.status_code == 202, response.content
    stored = {m["external_id"]: m for m in client.get(MESSAGES).json()["messages"]}
    assert stored["p1"]["text"] == "This is my new puppy Biscuit.\nHe is ten weeks old."
    assert stored["p1"]["meta"] == {"skipped_content_parts": {"image_url": 1}}
    assert stored["p2"]["text"] == "Adorable!" and stored["p2"]["meta"] == {}
    assert stored["p0"]["role"] == "system"  # OpenAI's newer name of the system turn
    # However many kinds of part a client sends, eight are named and the rest counted together.
    many = [{"type": "text", "text": "Files."}, *({"type": f"kind{i}"} for i in range(12))]
    assert client.post(MESSAGES, {"messages": [{"role": "user", "external_id": "p3", "content": many}]},
                       format="json").status_code == 202
    skipped = {m["external_id"]: m for m in client.get(MESSAGES).json()["messages"]}["p3"]["meta"]
    assert len(skipped["skipped_content_parts"]) == 9 and skipped["skipped_content_parts"]["other"] == 4


def test_openai_participant_name_is_the_speaker(client_a) -> None:
    """{"role": "user", "name": "Borin", …} as OpenAI-format turns carry it; the name was dropped."""
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [
        {"role": "user", "name": "Borin", "external_id": "n1", "content": "I forge axes."},
        {"role": "user", "name": "Elda", "speaker": "Elda", "external_id": "n2", "text": "I forge arrowheads."},
        {"role": "assistant", "external_id": "n3", "content": "Both fine crafts."},
    ]}, format="json")
    assert response.status_code == 202, response.content
    stored = {m["external_id"]: m["speaker"] for m in client.get(MESSAGES).json()["messages"]}
    assert stored == {"n1": "Borin", "n2": "Elda", "n3": ""}


@pytest.mark.parametrize(("message", "field"), [
    ({"role": "user", "text": "a", "speaker": "Borin", "name": "Elda"}, "name"),
    ({"role": "user", "text": "a", "name": 5}, "name"),
    ({"role": "user", "text": "a", "name": "x" * 129}, "name"),
    ({"role": "user", "text": "a", "content": "b"}, "content"),
    ({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://x/y.png"}}]}, "content"),
    ({"role": "user", "content": [{"type": "text"}]}, "content"),
    ({"role": "user", "content": [{"text": "hi"}]}, "content"),
    ({"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "text": 5}]}, "content"),
    ({"role": "user", "content": []}, "content"),
    ({"role": "user", "content": [{"type": "text", "text": "a\u0000b"}]}, "content"),
    ({"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image\u0000"}]}, "content"),
    ({"role": "user", "content": None}, "content"),
    ({"role": "user", "content": 5}, "content"),
    ({"role": "user"}, "text"),
])
def test_text_and_content_are_one_field(client_a, message: dict, field: str) -> None:
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [message]}, format="json")
    assert response.status_code == 400
    assert field in response.json()["error"]["fields"]["messages"]["0"], response.json()


TOOL_CALL = {"id": "call_1", "type": "function", "function": {"name": "get_weather", "arguments": "{}"}}


@pytest.mark.parametrize("call", [
    {"role": "assistant", "content": None, "tool_calls": [TOOL_CALL]},
    {"role": "assistant", "content": "", "tool_calls": [TOOL_CALL]},
    {"role": "assistant", "tool_calls": [TOOL_CALL]},
    {"role": "assistant", "content": None, "function_call": {"name": "get_weather", "arguments": "{}"}},
])
def test_an_assistants_tool_call_is_refused_with_the_reason_a_tool_turn_gets(client_a, call: dict) -> None:
    """README: a tool turn or an assistant's tool call is refused, "leave them out of what you send"; the
    tool call said only "This field may not be null." (found by a QA session)."""
    client, _ = client_a
    history = [{"role": "user", "content": "Weather in Porto?"}, {"role": "assistant", "content": "Checking."}]
    response = client.post(MESSAGES, {"messages": [*history, call]}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["message"] == ("messages[2].content: An assistant's tool call (`tool_calls` without content) is "
                                "refused: a tool turn or call is not the conversation's words: leave it out of the "
                                "batch."), error
    tool_turn = client.post(MESSAGES, {"messages": [
        *history, {"role": "tool", "tool_call_id": "call_1", "content": "18 °C"}]}, format="json")
    assert "leave it out of the batch" in tool_turn.json()["error"]["message"]
    # A null content without a tool call says why too; a call with words keeps the words.
    null = client.post(MESSAGES, {"messages": [{"role": "user", "content": None}]}, format="json")
    assert "leave it out of the batch" in null.json()["error"]["fields"]["messages"]["0"]["content"][0]
    assert Message.objects.count() == 0
    said = client.post(MESSAGES, {"messages": [{"role": "assistant", "content": "Let me check.",
                                                "tool_calls": [TOOL_CALL]}]}, format="json")
    assert said.status_code == 202, said.content


# --- a misspelt field is an error, not a setting silently dropped ----------------------------------
@pytest.mark.parametrize(("url", "body", "expected"), [
    ("/api/v1/search", {"query": "dog", "user_id": "alice", "filters": {"kind": ["fact"]}},
     "filters.kind: Unknown field."),
    ("/api/v1/search", {"query": "dog", "user_id": "alice", "limit": 3}, "limit: Unknown field."),
    ("/api/v1/search", {"query": "dog", "user_id": "alice", "weights": {"bm25": 1, "vectors": 1}},
     "weights.vectors: Unknown field."),
    ("/api/v1/context", {"query": "dog", "user_id": "alice", "budget": 300}, "budget: Unknown field."),
    ("/api/v1/users/alice/people/search", {"query": "Tom", "treshold": 0.5}, "treshold: Unknown field."),
    (MESSAGES, {"messages": [{"role": "user", "text": "hi"}], "auto_extract": True}, "auto_extract: Unknown field."),
])
def test_an_unknown_field_is_400_naming_it(client_a, url: str, body: dict, expected: str) -> None:
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["My dog is called Pixel."], start=START)
    response = client.post(url, body, format="json")
    assert response.status_code == 400, response.content
    assert response.json()["error"]["message"] == expected


def test_a_turn_may_carry_the_other_keys_of_the_openai_format(client_a) -> None:
    # Chat apps send their stored turns as they are: {"role", "content", "name", ...} stays accepted.
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [{"role": "user", "content": "I moved to Porto.", "name": "sam"}]},
                           format="json")
    assert response.status_code == 202, response.content


def test_schema_says_request_bodies_and_filters_are_closed(schema: dict) -> None:
    components = schema["components"]["schemas"]
    search = schema["paths"]["/api/v1/search"]["post"]["requestBody"]["content"]["application/json"]["schema"]
    body = components[search["$ref"].rsplit("/", 1)[1]]
    assert body.get("additionalProperties") is False
    filters = body["properties"]["filters"]
    filters = components[(filters.get("$ref") or filters["allOf"][0]["$ref"]).rsplit("/", 1)[1]]
    assert filters.get("additionalProperties") is False


# --- a host outside ALLOWED_HOSTS -------------------------------------------------------------
def test_a_host_outside_allowed_hosts_is_a_400_in_the_error_format_naming_the_setting(client) -> None:
    # It was Django's empty HTML "Bad Request (400)": nothing told the operator about ALLOWED_HOSTS.
    response = client.get("/healthz", HTTP_HOST="memory.example.com")
    assert response.status_code == 400
    assert response.json() == {"error": {
        "code": "disallowed_host", "fields": {},
        "message": "This service does not answer to the host 'memory.example.com': add it to ALLOWED_HOSTS."}}


# --- a path parameter outside its pattern ----------------------------------------------------------
@pytest.mark.parametrize(("method", "path", "name"), [
    ("post", "/api/v1/worlds/DnD5e/search", "world"),
    ("post", "/api/v1/users/бoб/sessions/s1/messages", "user_id"),
    ("get", f"/api/v1/users/{'a' * 129}/sessions", "user_id"),
    ("get", "/api/v1/jobs/abc", "job_id"),
    ("post", "/api/v1/worlds/dnd5e/domains/rules/publish", "domain"),
])
def test_a_path_parameter_outside_its_pattern_is_named_in_the_404(client_a, method: str, path: str, name: str) -> None:
    """It was a bare 404 "Not found.", which reads as a wrong route (found by a QA trial)."""
    client, _ = client_a
    response = getattr(client, method)(path, {}, format="json")
    assert response.status_code == 404, response.content
    error = response.json()["error"]
    assert list(error["fields"]) == [name] and "pattern" in error["message"], error


def test_a_path_that_is_no_route_is_still_a_404(client_a) -> None:
    client, _ = client_a
    for path in ("/api/v1/nothing/here", "/api/v1/users/bob/sessions/s1/nothing"):
        response = client.get(path)
        assert response.status_code == 404 and response.json()["error"] == {
            "code": "not_found", "message": "Not found.", "fields": {}}, path


def test_the_schema_path_patterns_admit_only_what_the_routes_take(schema, schema_allows) -> None:
    """"^srd|lore$" read "^srd" or "lore$": the schema admitted "srdTRUE", which no route takes."""
    operation = schema["paths"]["/api/v1/worlds/{world}/domains/{domain}/publish"]["post"]
    domain = next(p["schema"] for p in operation["parameters"] if p["name"] == "domain")
    assert schema_allows(domain, "srd") and schema_allows(domain, "lore")
    assert not schema_allows(domain, "srdTRUE") and not schema_allows(domain, "llore")
    job = next(p["schema"] for p in schema["paths"]["/api/v1/jobs/{job_id}"]["get"]["parameters"]
               if p["name"] == "job_id")
    assert schema_allows(job, 7) and not schema_allows(job, -7)


@pytest.mark.parametrize(("message", "field", "said"), [
    ({"role": "user", "text": "hi", "meta": {"conf_uid": "bad uid!"}}, "meta", "conf_uid"),
    ({"role": "user", "text": "hi", "meta": {"conf_uid": 123}}, "meta", "conf_uid"),
    ({"role": "user", "text": "\u200b \u200d\ufeff"}, "text", "no visible character"),
])
def test_a_turn_consolidation_or_search_could_not_use_is_400_naming_the_field(client_a, message, field, said) -> None:
    """A conf_uid no route can address filed typed memories nobody could list; an invisible turn was
    indexed and ranked in unrelated searches."""
    client, _ = client_a
    response = client.post(MESSAGES, {"messages": [message]}, format="json")
    assert response.status_code == 400, response.content
    assert said in str(response.json()["error"]["fields"]["messages"]["0"][field])
    turn = {"role": "user", "text": "Mos\u200bcow", "meta": {"conf_uid": "neiri"}}
    fine = client.post(MESSAGES, {"messages": [turn]}, format="json")
    assert fine.status_code == 202, fine.content


@pytest.mark.parametrize(("path", "misspelt"), [
    ("/api/v1/users/alice/sessions/s1/messages", "limitt"),
    ("/api/v1/users/alice/sessions", "limitt"),
    ("/api/v1/users/alice/people", "circel"),
    ("/api/v1/users/alice/profile", "statuss"),
    ("/api/v1/characters/neiri/memories", "kindd"),
])
def test_a_misspelt_query_parameter_is_a_400_naming_it_as_a_misspelt_body_key_is(client_a, path: str,
                                                                                misspelt: str) -> None:
    """`?limitt=2` was ignored: the client got the default page and no word of its mistake."""
    client, tenant = client_a
    append_messages(tenant, "alice", "s1", ["I moved to Lisbon last spring."], start=START)
    client.post("/api/v1/characters/neiri/memories", {"user_id": "alice", "text": "Alice moved to Lisbon.",
                                                      "kind": "user"}, format="json")
    assert client.get(path).status_code == 200
    refused = client.get(path, {misspelt: "2"})
    assert refused.status_code == 400, refused.content
    assert refused.json()["error"]["fields"] == {misspelt: ["Unknown field."]}


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/search", {"user_id": "alice"}),
    ("/api/v1/context", {"user_id": "alice"}),
    ("/api/v1/users/alice/people/search", {}),
])
def test_a_query_of_invisible_characters_is_a_400_naming_it(client_a, path: str, body: dict) -> None:
    """QA: a search for "\\u200b" alone was a 200 with nothing found, while a message of it was refused."""
    client, _ = client_a
    response = client.post(path, {**body, "query": "\u200b\ufeff "}, format="json")
    assert response.status_code == 400, response.content
    assert "no visible character" in str(response.json()["error"]["fields"]["query"])
    assert client.post(path, {**body, "query": "Mos\u200bcow"}, format="json").status_code == 200
