"""The typed memories API: write, list, filters in search, validation naming fields and values."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from rag.memories.consolidation import emotion_scores
from rag.models import Chunk
from tests.openapi import schema_body, schema_parameter

MEMORY = {"user_id": "alex", "text": "Alex loves rock music", "kind": "user", "category": "FactsAboutUser",
          "history_uid": "stream1", "importance": 0.7, "tags": ["music"], "emotion": "интерес",
          "context_window": "talking about music"}


def test_memory_is_written_with_its_own_id_and_typed_columns(client_a) -> None:
    client, tenant = client_a
    first = client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    second = client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    assert first.status_code == 201, first.content
    body = first.json()
    # The same text twice is two memories: ids never collide and nothing is overwritten.
    assert body["id"] != second.json()["id"]
    assert body["emotion"] == "interest" and body["category"] == "FactsAboutUser" and body["conf_uid"] == "neiri"
    chunk = Chunk.objects.get(pk=body["chunk_id"])
    assert (chunk.type, chunk.kind, chunk.category, chunk.history_uid, chunk.context_window) == (
        "memory", "user", "FactsAboutUser", "stream1", "talking about music")
    assert chunk.namespace == "user:alex" and chunk.tenant_id == tenant.pk

    listed = client.get("/api/v1/characters/neiri/memories", {"category": "FactsAboutUser"}).json()
    assert (listed["conf_uid"], listed["count"]) == ("neiri", 2)
    assert {m["id"] for m in listed["memories"]} == {body["id"], second.json()["id"]}


@pytest.mark.parametrize(("said", "stored"), [
    ("sad", "sadness"), ("grateful", "gratitude"), ("开心", "joy"), ("печаль", "sadness"), ("jealous", "envy"),
])
def test_an_everyday_word_for_the_feeling_is_its_emotion(client_a, said: str, stored: str) -> None:
    # A client writes "sad", a model "grateful": the feeling is meant, not a 400 or a dropped emotion.
    client, _ = client_a
    response = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "emotion": said}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["emotion"] == stored
    assert emotion_scores({"emotions": [{"name": said, "score": 0.6}]}) == {stored: 0.6}


def test_missing_timestamp_is_stored_as_now_not_1970(client_a) -> None:
    client, _ = client_a
    body = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": 0}, format="json").json()
    chunk = Chunk.objects.get(pk=body["chunk_id"])
    assert abs((timezone.now() - chunk.created_ts).total_seconds()) < 60
    assert chunk.meta["timestamp_given"] is False


def test_a_timestamp_is_unix_seconds_or_iso_8601_as_a_messages_created_at_is(client_a) -> None:
    """Messages are dated in ISO 8601 and typed memories in Unix seconds: a client wrote the one form
    to the other endpoint and got a 400 for the form it reads back everywhere."""
    client, _ = client_a
    written = [client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": when}, format="json")
               for when in (1714557600, 1714557600.0, "2024-05-01T10:00:00Z", "2024-05-01T12:00:00+02:00",
                            "2024-05-01T10:00:00")]
    assert [r.status_code for r in written] == [201] * 5, [r.content for r in written]
    assert {r.json()["timestamp"] for r in written} == {"2024-05-01T10:00:00Z"}
    assert all(Chunk.objects.get(pk=r.json()["chunk_id"]).meta["timestamp_given"] for r in written)
    for bad, says in (("yesterday", "format"), ("2999-01-01T00:00:00Z", "future"), ([1], "number"),
                      (1714557600000, "milliseconds (1714557600000 ms = 1714557600 s)"), (-5, "between 0")):
        refused = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": bad}, format="json")
        assert refused.status_code == 400 and says in refused.json()["error"]["fields"]["timestamp"][0], \
            refused.content


def test_an_iso_timestamp_has_the_range_of_unix_seconds_and_its_epoch_means_unknown(client_a) -> None:
    """"0001-01-01T00:00:00Z" was taken (201) where -5 was refused (found by a QA session); the epoch in
    ISO 8601 is the same moment as 0, which means unknown, not 1970."""
    client, _ = client_a
    for bad in ("0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "3000-01-01T00:00:01Z", -1):
        refused = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": bad}, format="json")
        assert refused.status_code == 400, refused.content
        [said] = refused.json()["error"]["fields"]["timestamp"]
        assert said.startswith("Must be from 1970-01-01T00:00:00Z to 3000-01-01T00:00:00Z: Unix seconds between 0 "
                               "and 32503680000"), said
    for unknown in (0, "1970-01-01T00:00:00Z", "1970-01-01T01:00:00+01:00"):
        written = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": unknown}, format="json")
        assert written.status_code == 201, written.content
        assert not Chunk.objects.get(pk=written.json()["chunk_id"]).meta["timestamp_given"], unknown
        assert not written.json()["timestamp"].startswith("1970"), written.json()
    # Where 0 is a moment (a search's `created_after`), so is the epoch written in ISO 8601.
    for after in (0, "1970-01-01T00:00:00Z"):
        found = client.post("/api/v1/search", {"user_id": "u1", "query": "x", "filters": {"created_after": after}},
                            format="json")
        assert found.status_code == 200, found.content
    refused = client.post("/api/v1/search", {"user_id": "u1", "query": "x",
                                             "filters": {"created_before": "0001-01-01T00:00:00Z"}}, format="json")
    assert refused.status_code == 400 and "created_before" in refused.json()["error"]["fields"]["filters"]


def test_importance_is_calculated_when_not_given(client_a) -> None:
    client, _ = client_a
    body = client.post("/api/v1/characters/neiri/memories",
                       {**MEMORY, "importance": None, "text": "ok"}, format="json").json()
    assert body["importance"] < 0.5


@pytest.mark.parametrize(("patch", "field", "allowed"), [
    ({"kind": "friend"}, "kind", "third_party"),
    ({"category": "Gossip"}, "category", "SessionEvent"),
    ({"emotion": "smug"}, "emotion", "gratitude"),
    ({"importance": 1.5}, "importance", None),
    ({"importance": -0.1}, "importance", None),
])
def test_bad_memory_is_400_naming_the_field_and_allowed_values(client_a, patch: dict, field: str,
                                                               allowed: str | None) -> None:
    client, _ = client_a
    response = client.post("/api/v1/characters/neiri/memories", {**MEMORY, **patch}, format="json")
    assert response.status_code == 400
    message = " ".join(response.json()["error"]["fields"][field])
    if allowed:
        assert allowed in message


def test_bad_list_filter_is_400(client_a) -> None:
    client, _ = client_a
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    response = client.get("/api/v1/characters/neiri/memories", {"kind": "alien"})
    assert response.status_code == 400 and "kind" in response.json()["error"]["fields"]


def test_another_tenants_character_is_404(client_a, client_b) -> None:
    client, _ = client_a
    other, _ = client_b
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    assert other.get("/api/v1/characters/neiri/memories").status_code == 404
    assert other.get("/api/v1/characters/neiri/mood").status_code == 404
    assert client.get("/api/v1/characters/neiri/mood").status_code == 200


def test_search_filters_by_kind_category_emotion_character_and_history(client_a) -> None:
    client, _ = client_a
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    client.post("/api/v1/characters/neiri/memories",
                {**MEMORY, "text": "Neiri loves rock music too", "kind": "self", "category": "SelfBeliefs",
                 "emotion": "joy", "history_uid": "stream2"}, format="json")
    client.post("/api/v1/characters/other/memories", {**MEMORY, "text": "Alex loves rock music a lot"}, format="json")

    def search(filters: dict) -> list[str]:
        response = client.post("/api/v1/search", {"query": "rock music", "user_id": "alex", "filters": filters},
                               format="json")
        assert response.status_code == 200, response.content
        return [i["text"] for i in response.json()["items"]]

    assert search({"kinds": ["self"]}) == ["Neiri loves rock music too"]
    assert search({"categories": ["FactsAboutUser"], "conf_uids": ["neiri"]}) == ["Alex loves rock music"]
    assert search({"emotions": ["радость"]}) == ["Neiri loves rock music too"]
    assert search({"history_uids": ["stream1"], "conf_uids": ["other"]}) == ["Alex loves rock music a lot"]
    bad = client.post("/api/v1/search", {"query": "x", "user_id": "alex", "filters": {"categories": ["Nope"]}},
                      format="json")
    assert bad.status_code == 400 and "KeyFacts" in str(bad.json()["error"]["fields"])


def test_memories_are_erased_with_the_user(client_a) -> None:
    client, tenant = client_a
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    assert client.delete("/api/v1/users/alex").status_code == 200
    assert not Chunk.objects.filter(tenant=tenant, type="memory").exists()


def test_old_list_order_is_importance_first(client_a) -> None:
    client, _ = client_a
    old = (timezone.now() - timedelta(days=3)).timestamp()
    client.post("/api/v1/characters/neiri/memories", {**MEMORY, "importance": 0.2, "text": "minor"}, format="json")
    client.post("/api/v1/characters/neiri/memories", {**MEMORY, "importance": 0.9, "timestamp": old,
                                                      "text": "major"}, format="json")
    assert [m["text"] for m in client.get("/api/v1/characters/neiri/memories").json()["memories"]] == [
        "major", "minor"]


def test_the_list_pages_with_limit_and_offset_and_counts_all_that_match(client_a) -> None:
    client, _ = client_a
    for n in range(5):
        client.post("/api/v1/characters/neiri/memories",
                    {**MEMORY, "text": f"memory {n}", "importance": 0.9 - n / 10}, format="json")
    client.post("/api/v1/characters/neiri/memories", {**MEMORY, "user_id": "bob", "text": "bob's"}, format="json")
    pages = [client.get("/api/v1/characters/neiri/memories", {"user_id": "alex", "limit": 2, "offset": offset}).json()
             for offset in (0, 2, 4, 6)]
    assert [p["count"] for p in pages] == [5, 5, 5, 5]
    assert [[m["text"] for m in p["memories"]] for p in pages] == [
        ["memory 0", "memory 1"], ["memory 2", "memory 3"], ["memory 4"], []]
    assert client.get("/api/v1/characters/neiri/memories").json()["count"] == 6


# --- the schema and the validation agree (found by `make fuzz`) -------------------------------------
MEMORIES = "/api/v1/characters/{conf_uid}/memories"


@pytest.mark.parametrize(("name", "good", "bad"), [
    ("emotion", "радость", "0"), ("kind", "third_party", "friend"), ("category", "PastEvents", "Gossip"),
    ("emotion", "joy", ""), ("tag", "music", " "),
])
def test_list_parameters_allow_in_the_schema_what_the_api_takes(client_a, schema, schema_allows, name: str,
                                                                good: str, bad: str) -> None:
    client, _ = client_a
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    part = schema_parameter(schema, MEMORIES, "get", name)
    assert schema_allows(part, good) and not schema_allows(part, bad)
    assert client.get("/api/v1/characters/neiri/memories", {name: good}).status_code == 200
    response = client.get("/api/v1/characters/neiri/memories", {name: bad})
    assert response.status_code == 400 and name in response.json()["error"]["fields"]


def test_mood_user_id_pattern_is_in_the_schema(client_a, schema, schema_allows) -> None:
    client, _ = client_a
    client.post("/api/v1/characters/neiri/memories", MEMORY, format="json")
    part = schema_parameter(schema, "/api/v1/characters/{conf_uid}/mood", "get", "user_id")
    assert not schema_allows(part, ",") and schema_allows(part, "alex")
    assert client.get("/api/v1/characters/neiri/mood", {"user_id": ","}).status_code == 400
    assert client.get("/api/v1/characters/neiri/mood", {"user_id": "alex"}).status_code == 200


@pytest.mark.parametrize(("patch", "field"), [
    ({"context_window": 0}, "context_window"),
    ({"text": 5}, "text"),
    ({"importance": "0.5"}, "importance"),
    ({"tags": [" "]}, "tags"),
    ({"tags": ["\u00a0"]}, "tags"),
    ({"timestamp": 5e16}, "timestamp"),
    ({"timestamp": -1}, "timestamp"),
    ({"timestamp": True}, "timestamp"),
    ({"emotion": 0}, "emotion"),
    ({"history_uid": 7}, "history_uid"),
    ({"on_duplicate": "merge"}, "on_duplicate"),
])
def test_memory_the_schema_forbids_is_400_naming_the_field(client_a, schema, schema_allows, patch: dict,
                                                           field: str) -> None:
    client, _ = client_a
    body = {**MEMORY, **patch}
    assert not schema_allows(schema_body(schema, MEMORIES, "post"), body)
    response = client.post("/api/v1/characters/neiri/memories", body, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]


@pytest.mark.parametrize("patch", [{"emotion": ""}, {"emotion": "兴趣"}, {"timestamp": 1700000000.0},
                                   {"timestamp": "2023-11-14T22:13:20Z"}, {"timestamp": 1700000000},
                                   {"tags": ["music", "🎸"]}, {"on_duplicate": "reinforce"}])
def test_memory_the_schema_allows_is_written(client_a, schema, schema_allows, patch: dict) -> None:
    client, _ = client_a
    body = {**MEMORY, **patch}
    assert schema_allows(schema_body(schema, MEMORIES, "post"), body)
    response = client.post("/api/v1/characters/neiri/memories", body, format="json")
    assert response.status_code == 201, response.content


@pytest.mark.parametrize(("url", "key"), [("/api/v1/context", "memory_filters"), ("/api/v1/search", "filters")])
@pytest.mark.parametrize(("filters", "allowed"), [
    ({"history_uids": [0]}, False), ({"conf_uids": [1.5]}, False), ({"emotions": ["smug"]}, False),
    ({"emotions": ["joy", "гнев"]}, True), ({"history_uids": ["stream1"]}, True),
])
def test_memory_filters_the_schema_forbids_are_refused(client_a, schema, schema_allows, url: str, key: str,
                                                       filters: dict, allowed: bool) -> None:
    client, _ = client_a
    body = {"user_id": "alex", "query": "music", key: filters}
    assert schema_allows(schema_body(schema, url, "post"), body) is allowed
    response = client.post(url, body, format="json")
    assert response.status_code == (200 if allowed else 400), response.content
    if not allowed:
        assert key in response.json()["error"]["fields"]


def test_a_huge_list_offset_is_a_400_naming_it(client_a) -> None:
    client, _ = client_a
    response = client.get("/api/v1/characters/c1/memories?offset=379609580411578674955700666368")
    assert response.status_code == 400 and "offset" in response.json()["error"]["fields"]


def test_one_memory_is_read_corrected_and_forgotten_by_its_id(client_a, client_b) -> None:
    """A chat app's "that's wrong" and "forget that": only the admin or erasing the whole user could."""
    client, _ = client_a
    body = client.post("/api/v1/characters/neiri/memories", MEMORY, format="json").json()
    url = f"/api/v1/characters/neiri/memories/{body['id']}"
    assert client.get(url).json()["text"] == "Alex loves rock music"

    fixed = client.patch(url, {"category": "Objectives", "importance": 0.9, "tags": ["music", "goal"]}, format="json")
    assert fixed.status_code == 200, fixed.content
    assert (fixed.json()["category"], fixed.json()["importance"], fixed.json()["kind"]) == ("Objectives", 0.9, "user")
    found = client.post("/api/v1/search", {"user_id": "alex", "query": "rock music",
                                           "filters": {"categories": ["Objectives"]}}, format="json").json()
    assert [item["text"] for item in found["items"]] == ["Alex loves rock music"]
    assert client.patch(url, {}, format="json").json() == fixed.json()  # nothing to change
    for bad, field in (({"importance": 2}, "importance"), ({"category": "Nope"}, "category"),
                       ({"text": "Alex hates rock"}, "text")):
        refused = client.patch(url, bad, format="json")
        assert refused.status_code == 400 and field in refused.json()["error"]["fields"], (bad, refused.content)

    other, _ = client_b  # another tenant: as if it did not exist
    assert other.get(url).status_code == 404 and other.delete(url).status_code == 404
    assert client.get(f"/api/v1/characters/other/memories/{body['id']}").status_code == 404

    assert client.delete(url).status_code == 204
    missing = client.get(url)
    assert missing.status_code == 404 and "memory_id" in missing.json()["error"]["fields"]
    assert client.delete(url).status_code == 404
    assert client.get("/api/v1/characters/neiri/memories").json() == {"conf_uid": "neiri", "count": 0, "memories": []}
    gone = client.post("/api/v1/search", {"user_id": "alex", "query": "rock music"}, format="json").json()
    assert gone["items"] == []


def test_a_memory_dated_in_the_future_is_refused_as_a_message_is(client_a) -> None:
    """Dated 2999, a memory kept a recency of 1 for ever and showed "[2999-12-24]" in every context."""
    client, _ = client_a
    for future in (4102444800.0, (timezone.now() + timedelta(hours=1)).timestamp()):
        response = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": future}, format="json")
        assert response.status_code == 400 and "timestamp" in response.json()["error"]["fields"], response.content
    now = client.post("/api/v1/characters/neiri/memories", {**MEMORY, "timestamp": timezone.now().timestamp()},
                      format="json")
    assert now.status_code == 201, now.content


def test_a_repeat_written_to_reinforce_reinforces_the_held_memory_and_says_which(client_a, schema) -> None:
    """Consolidation reinforces a near-duplicate; a client writing one got a second row. Writing stays a new
    memory by default (the first test above), and `on_duplicate: "reinforce"` asks for what consolidation does."""
    client, tenant = client_a
    held = client.post(MEMORIES.format(conf_uid="neiri"), MEMORY, format="json").json()
    repeat = {**MEMORY, "text": "Alex loves rock music a lot", "importance": None, "on_duplicate": "reinforce"}
    response = client.post(MEMORIES.format(conf_uid="neiri"), repeat, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert (body["id"], body["text"], body["reinforced"]) == (held["id"], "Alex loves rock music", True)
    assert body["similarity"] >= 0.9 and body["importance"] == pytest.approx(0.8) and body["last_seen_at"]
    assert Chunk.objects.filter(tenant=tenant, type="memory").count() == 1
    # Another character's memories, or a text that repeats none, are written anew.
    other = client.post(MEMORIES.format(conf_uid="other"), repeat, format="json")
    new = client.post(MEMORIES.format(conf_uid="neiri"), {**repeat, "text": "Alex has a dog called Rex"},
                      format="json")
    assert (other.status_code, other.json()["reinforced"], new.status_code, new.json()["reinforced"]) == (
        201, False, 201, False)
    assert Chunk.objects.filter(tenant=tenant, type="memory").count() == 3
    operation = schema["paths"][MEMORIES]["post"]
    assert {"200", "201"} <= set(operation["responses"]) and "on_duplicate" in schema_body(schema, MEMORIES, "post")[
        "properties"]
    created = operation["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    assert {"reinforced", "similarity"} <= set(schema["components"]["schemas"][created]["properties"])


@pytest.mark.parametrize("query", ["what food does Alex like?", "Какую еду любит Alex?", "Alex喜欢吃什么？"])
def test_typed_memory_search_leaves_the_name_of_the_memories_subject_out(client_a, query: str) -> None:
    """"what food does Alex like?" (kinds user, FactsAboutUser) put "Alex loves rock music" first: the user's
    name is in nearly every memory about them, and matched where nothing else did."""
    client, _ = client_a
    for text in ("Alex loves rock music", "Alex plays the guitar", "Alex lives in Berlin",
                 "User: My favourite food is ramen. 我最喜欢吃拉面。Моя любимая еда — рамен."):
        client.post(MEMORIES.format(conf_uid="neiri"), {**MEMORY, "text": text}, format="json")
    filters = {"kinds": ["user"], "categories": ["FactsAboutUser"]}
    items = client.post("/api/v1/search", {"query": query, "user_id": "alex", "filters": filters},
                        format="json").json()["items"]
    matched = [i["text"] for i in items if i["components"].get("bm25")]
    assert matched == ["User: My favourite food is ramen. 我最喜欢吃拉面。Моя любимая еда — рамен."], items
    # Without typed-memory filters the search is the dialog domain's as before: a name it knows only as an id stays.
    plain = client.post("/api/v1/search", {"query": query, "user_id": "alex"}, format="json").json()["items"]
    assert any(i["components"].get("bm25") and i["text"].startswith("Alex ") for i in plain)
