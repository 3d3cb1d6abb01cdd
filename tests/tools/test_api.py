"""The tools over DRF: listing, each tool, argument validation naming the field, scopes, the call log."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from rest_framework.test import APIClient

from memoryhub.models import Tenant
from profiles.services import fact_upsert
from rag.memories.services import MemoryInput, memories_create
from tests.factories import append_messages
from tools.models import ToolCall

pytestmark = pytest.mark.django_db


def call(client: APIClient, name: str, args: object) -> tuple[int, dict]:
    response = client.post(f"/api/v1/tools/{name}", args, format="json")
    return response.status_code, response.json()


def test_list_names_descriptions_and_schemas(tools_client: tuple[APIClient, Tenant]) -> None:
    client, _ = tools_client
    response = client.get("/api/v1/tools")
    assert response.status_code == 200
    tools = {t["name"]: t for t in response.json()["tools"]}
    assert set(tools) == {"rules_lookup", "lore_search", "lore_assert", "memory_search", "memory_context",
                          "profile_get", "session_fetch", "episode_search", "npc_profile", "art_suggest"}
    assert tools["lore_search"]["input_schema"]["required"] == ["query"]
    assert all(t["read_only"] and t["description"] for t in tools.values())


def test_scope_and_authentication(key_for: Callable[..., tuple[str, Tenant]]) -> None:
    client = APIClient()
    assert client.get("/api/v1/tools").status_code == 401
    raw, _ = key_for(scopes=("memory",))
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.post("/api/v1/tools/lore_search", {"query": "fire"}, format="json")
    assert response.status_code == 403
    assert "'tools'" in response.json()["error"]["message"]


def test_rules_lookup_by_id_and_term(tools_client: tuple[APIClient, Tenant]) -> None:
    client, _ = tools_client
    status, body = call(client, "rules_lookup", {"rule_id": "Conditions/blinded"})
    assert status == 200 and body["matched_by"] == "rule_id"
    assert body["world"] == "dnd5e"  # the default world, named: a model could not tell which it got
    assert {r["language"] for r in body["rules"]} == {"en", "ru"}
    assert body["sources"] == ["srd:Conditions/blinded@1.0.0", "srd:Conditions/blinded@1.0.0"]
    status, body = call(client, "rules_lookup", {"term": "misty step", "language": "en"})
    assert status == 200 and body["matched_by"] == "title"
    assert [r["rule_id"] for r in body["rules"]] == ["Spells/misty-step"]
    assert "30 feet" in body["rules"][0]["text"]
    status, body = call(client, "rules_lookup", {"term": "teleport in silvery mist"})
    assert body["matched_by"] == "search" and body["rules"][0]["rule_id"] == "Spells/misty-step"
    # An id the world does not hold is a 404 with what was meant, as an unknown NPC's is, not an empty 200.
    for wrong, meant in (("Spells/misty-stp", "'Spells/misty-step'"), ("Conditions/misty-step", "'Spells/misty-step'"),
                         ("Conditions/nope", "by `term`")):
        status, body = call(client, "rules_lookup", {"rule_id": wrong})
        assert status == 404 and body["error"]["code"] == "not_found", body
        assert list(body["error"]["fields"]) == ["rule_id"] and meant in body["error"]["message"], body
    # A control character its schema's dialect (ECMA-262) counts as no space is an id to look up, not a 400:
    # Python's `\s` took \x1f for a space and refused what the published schema allows.
    status, body = call(client, "rules_lookup", {"rule_id": "X\x1f/V"})
    assert status == 404 and list(body["error"]["fields"]) == ["rule_id"], body


def test_lore_search_ranks_and_filters(tools_client: tuple[APIClient, Tenant]) -> None:
    client, _ = tools_client
    status, body = call(client, "lore_search", {"query": "explosion of flame", "k": 2})
    assert status == 200
    assert body["items"][0]["entry_id"] == "Spells/fireball" and len(body["items"]) <= 2
    assert body["versions"] == {"srd": "1.0.0"} and body["world"] == "dnd5e"
    status, body = call(client, "lore_search", {"query": "существо не видит", "filters": {"languages": ["ru"]}})
    assert status == 200 and {i["language"] for i in body["items"]} == {"ru"}


@pytest.mark.parametrize(("fact", "verdict"), [
    ("Fireball deals 8d6 fire damage.", "supported"),
    ("Fireball has a range of 150 feet.", "supported"),
    ("Fireball has a range of 60 feet.", "contradicted"),
    ("A blinded creature can see.", "contradicted"),
    # This world's Misty Step states no school: the lore does not say which it is (it says nothing else of one).
    ("Misty Step is an evocation spell.", "unknown"),
    ("Ослеплённое существо не видит.", "supported"),
    ("Gandalf the Grey is a wizard of the Istari.", "unknown"),
])
def test_lore_assert_offline(tools_client: tuple[APIClient, Tenant], fact: str, verdict: str) -> None:
    client, _ = tools_client
    status, body = call(client, "lore_assert", {"fact": fact})
    assert status == 200, body
    assert (body["verdict"], body["method"]) == (verdict, "offline"), body["hint"]
    assert body["hint"]
    if verdict != "unknown":
        assert body["sources"]


def test_memory_tools(tools_client: tuple[APIClient, Tenant]) -> None:
    client, tenant = tools_client
    append_messages(tenant, "u1", "s1", ["I adopted a grey cat named Pixel last spring.",
                                         ("assistant", "Pixel is a lovely name for a cat!")])
    memories_create(tenant=tenant, user_id="u1", conf_uid="neiri", items=[MemoryInput(
        text="Dana's cat Pixel is grey", kind="user", category="FactsAboutUser", emotion="joy")])
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Dana", confidence=0.95, source="test")
    status, body = call(client, "memory_search", {"user_id": "u1", "query": "cat Pixel", "k": 3})
    assert status == 200 and "Pixel" in body["items"][0]["text"]
    # Who said a turn, and what a typed memory is: the model cannot tell otherwise.
    said = {i["text"]: i.get("said_by") for i in body["items"] if i["type"] == "dialog"}
    assert said == {"I adopted a grey cat named Pixel last spring.": "user",
                    "Pixel is a lovely name for a cat!": "assistant"}
    typed = next(i for i in body["items"] if i["type"] == "memory")
    assert (typed["kind"], typed["category"], typed["emotion"]) == ("user", "FactsAboutUser", "joy")
    assert body["sources"][0] == f"chunk:{body['items'][0]['id']}"
    # Times as every response writes them (the serializers' "Z", not "+00:00").
    assert all(i["created_at"].endswith("Z") for i in body["items"]), body["items"]
    status, body = call(client, "profile_get", {"user_id": "u1"})
    assert status == 200 and {"key": "name", "value": "Dana", "confidence": 0.95,
                              "as_of": timezone.now().date().isoformat()} in body["facts"]
    status, body = call(client, "memory_context", {"user_id": "u1", "query": "what pet do I have?",
                                                   "session_id": "s1", "budget_tokens": 500})
    assert status == 200 and "Pixel" in body["text"] and "Dana" in body["text"]
    assert body["used_tokens"] <= 500 and any(s.startswith("fact:") or s.startswith("chunk:") or
                                               s.startswith("message:") for s in body["sources"])
    # Another user's memory stays out.
    status, body = call(client, "memory_search", {"user_id": "u2", "query": "cat Pixel"})
    assert status == 200 and body["items"] == []


@pytest.mark.parametrize(("name", "args", "field"), [
    ("lore_search", {}, "query"),
    ("lore_search", {"query": "x", "k": 0}, "k"),
    ("lore_search", {"query": "x", "k": "5"}, "k"),
    ("lore_search", {"query": "x", "k": 5.0}, "k"),
    ("lore_search", {"query": "x", "filters": {"languages": ["EN!"]}}, "filters.languages.0"),
    ("lore_search", {"query": "x", "filters": {"domains": ["maps"]}}, "filters.domains.0"),
    ("lore_search", {"query": "x", "colour": "red"}, "colour"),
    ("rules_lookup", {}, "term"),
    ("rules_lookup", {"rule_id": "no-slash"}, "rule_id"),
    ("rules_lookup", {"rule_id": "Conditions/blinded", "term": "deafened"}, "term"),  # it dropped the term
    ("memory_search", {"user_id": "bad id!", "query": "x"}, "user_id"),
    ("memory_search", {"user_id": "u1", "query": "  \n "}, "query"),
    ("memory_context", {"user_id": "u1", "query": " "}, "query"),
    ("lore_search", {"query": "\t"}, "query"),
    ("lore_assert", {"fact": 42}, "fact"),
    ("lore_search", [1, 2], "arguments"),
    ("lore_search", {"query": "fire\u0000ball"}, "arguments"),
])
def test_bad_arguments_name_the_field(tools_client: tuple[APIClient, Tenant], name: str, args: object,
                                      field: str) -> None:
    client, _ = tools_client
    status, body = call(client, name, args)
    assert status == 400, body
    assert list(body["error"]["fields"]) == [field]
    assert not body["error"]["message"].startswith(f"{field}: Give")  # "term: Give term or rule_id." said it twice
    if "rule_id" in args and "term" in args:
        assert body["error"]["message"] == "Give term or rule_id, not both."


def test_unknown_tool_and_world_are_404(tools_client: tuple[APIClient, Tenant],
                                        key_for: Callable[..., tuple[str, Tenant]]) -> None:
    client, _ = tools_client
    assert call(client, "session_teleport", {})[0] == 404
    status, body = call(client, "lore_search", {"query": "fire", "world": "middle-earth"})
    assert status == 404 and "middle-earth" in body["error"]["message"]
    # The argument at fault is named, as an unknown campaign_id is: a model correcting its call
    # needs to know which one.
    assert list(body["error"]["fields"]) == ["world"]
    for name, args in (("rules_lookup", {"term": "захват", "world": "sredizemye"}),
                       ("lore_assert", {"fact": "Огненный шар наносит 8к6 урона.", "world": "sredizemye"})):
        status, body = call(client, name, args)
        assert status == 404 and list(body["error"]["fields"]) == ["world"], (name, body)
    # And a campaign by the argument's own name (it said "campaign", which the call has no argument of).
    for name in ("npc_profile", "session_fetch"):
        status, body = call(client, name, {"campaign_id": "nope", "party_id": "p", "npc_id": "n"}
                            if name == "npc_profile" else {"campaign_id": "nope", "party_id": "p"})
        assert status == 404 and list(body["error"]["fields"]) == ["campaign_id"], (name, body)
    # The world of a path is named too (/worlds/{world}/search).
    path = client.post("/api/v1/worlds/sredizemye/search", {"query": "захват"}, format="json")
    assert path.status_code == 404 and list(path.json()["error"]["fields"]) == ["world"]
    # Another tenant's key does not reach tenant-a's world.
    raw, _ = key_for(name="tenant-b")
    other = APIClient()
    other.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert call(other, "lore_search", {"query": "fire"})[0] == 404


def test_every_call_is_logged(tools_client: tuple[APIClient, Tenant]) -> None:
    client, tenant = tools_client
    call(client, "lore_search", {"query": "explosion of flame", "k": 1})
    call(client, "lore_search", {"query": "x", "k": 0})
    ok, invalid = ToolCall.objects.filter(tenant=tenant).order_by("id")
    assert (ok.tool, ok.transport, ok.outcome, ok.arguments) == (
        "lore_search", "api", "ok", {"query": "explosion of flame", "k": 1})
    assert ok.sources == ["srd:Spells/fireball@1.0.0"] and ok.latency_ms > 0
    assert (invalid.outcome, invalid.sources) == ("invalid", []) and "k" in invalid.error
    # Arguments jsonb cannot store are refused, and logged as their repr.
    assert call(client, "lore_search", {"query": "nul\u0000"})[0] == 400
    assert "nul" in ToolCall.objects.filter(tenant=tenant).latest("id").arguments["_unstorable"]


def test_call_log_is_read_only_in_admin(tools_client: tuple[APIClient, Tenant], client) -> None:  # type: ignore[no-untyped-def]
    api, _ = tools_client
    call(api, "lore_search", {"query": "fire"})
    admin = User.objects.create_superuser("root", "root@example.com", "pw-long-enough-1")
    client.force_login(admin)
    response = client.get("/admin/tools/toolcall/")
    assert response.status_code == 200 and b"lore_search" in response.content
    row = ToolCall.objects.get()
    assert client.get(f"/admin/tools/toolcall/{row.pk}/change/").status_code == 200
    assert client.get("/admin/tools/toolcall/add/").status_code == 403
    assert client.post(f"/admin/tools/toolcall/{row.pk}/delete/", {"post": "yes"}).status_code == 403


def test_erasing_a_user_deletes_the_logged_calls_that_asked_about_them(tools_client: tuple[APIClient, Tenant]) -> None:
    """The call log keeps each call's arguments: a question about the user ("на что у Маши аллергия?")
    and the chunks that answered it must not outlive the user's erasure."""
    from memoryhub.services import user_erase

    client, tenant = tools_client
    append_messages(tenant, "masha", "s1", ["У меня аллергия на арахис."])
    assert call(client, "memory_search", {"user_id": "masha", "query": "на что у Маши аллергия?"})[0] == 200
    assert call(client, "profile_get", {"user_id": "masha"})[0] == 200
    assert call(client, "memory_search", {"user_id": "other", "query": "арахис"})[0] == 200
    assert call(client, "lore_search", {"query": "explosion of flame", "k": 1})[0] == 200
    receipt = user_erase(tenant=tenant, user_id="masha")
    assert receipt["deleted"]["tool_calls"] == 2
    left = ToolCall.objects.filter(tenant=tenant)
    assert not [c for c in left if "masha" in str(c.arguments) or "Маш" in str(c.arguments)]
    assert sorted(c.arguments.get("user_id", "") for c in left) == ["", "other"]


def test_an_erasure_while_a_call_runs_leaves_no_log_of_it(tools_client: tuple[APIClient, Tenant],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The erasure comes after the tool has read the user's chunks and before the call is logged:
    a log written at the end kept the question and the erased chunks' ids."""
    import dataclasses

    from memoryhub.services import user_erase
    from tools import registry
    from tools.services import tool_call

    _client, tenant = tools_client
    append_messages(tenant, "masha", "s1", ["У меня аллергия на арахис."])
    real = registry.tool_get("memory_search")

    def erased_meanwhile(t: Tenant, args: dict) -> dict:
        result = real.function(t, args)
        assert result["sources"]  # it read the user's memories
        user_erase(tenant=t, user_id="masha")
        return result

    monkeypatch.setitem(registry._REGISTRY, "memory_search", dataclasses.replace(real, function=erased_meanwhile))
    tool_call(tenant=tenant, name="memory_search", arguments={"user_id": "masha", "query": "аллергия"},
              transport="api")
    assert not ToolCall.objects.filter(tenant=tenant).exists()

    # Without an erasure the row holds the outcome.
    monkeypatch.setitem(registry._REGISTRY, "memory_search", real)
    tool_call(tenant=tenant, name="memory_search", arguments={"user_id": "other", "query": "x"}, transport="api")
    row = ToolCall.objects.get(tenant=tenant)
    assert (row.outcome, row.error) == (ToolCall.Outcome.OK, "")
    assert row.latency_ms > 0


def test_memory_search_leaves_out_greetings_and_thanks(tools_client: tuple[APIClient, Tenant]) -> None:
    """A chat user's top 5 for "allergic" held "Thanks!" and "lol ok", found by the turns before them
    (a dialog chunk carries two), which the model never sees: noise in its tool result."""
    client, tenant = tools_client
    append_messages(tenant, "u1", "s1", [
        "Also, I'm allergic to peanuts, so please never suggest recipes with peanuts.",
        ("assistant", "Noted, no peanuts."),
        "Thanks!",
        "The pediatrician found out Noah is allergic to shellfish.",
        "lol ok",
    ])
    status, body = call(client, "memory_search", {"user_id": "u1", "query": "allergic", "k": 5})
    assert status == 200
    texts = [i["text"] for i in body["items"]]
    assert texts[0].startswith("Also, I'm allergic") and any("shellfish" in t for t in texts)
    assert "Thanks!" not in texts and "lol ok" not in texts
    assert body["sources"] == [f"chunk:{i['id']}" for i in body["items"]]


def test_profile_get_dates_each_fact_by_the_day_it_was_said(tools_client: tuple[APIClient, Tenant]) -> None:
    """A chat app sent weeks of history at once: every fact looked as new as today, so the model could
    not tell that she said "we moved to Seattle" a month after "I live in Portland"."""
    from datetime import UTC, datetime

    client, tenant = tools_client
    append_messages(tenant, "u1", "s1", ["I live in Portland with my partner."],
                    start=datetime(2026, 9, 8, 19, 0, tzinfo=UTC), auto_extract=True)
    append_messages(tenant, "u1", "s2", ["And we moved to Seattle last weekend."],
                    start=datetime(2026, 10, 26, 19, 0, tzinfo=UTC), auto_extract=True)
    status, body = call(client, "profile_get", {"user_id": "u1"})
    assert status == 200
    assert {"key": "location", "value": "Seattle", "confidence": 0.8, "as_of": "2026-10-26"} in body["facts"]


def test_memory_search_marks_a_turn_whose_fact_the_user_changed_since(tools_client: tuple[APIClient, Tenant]) -> None:
    """"where do I live?" finds "I live in Portland" first: the model answered Portland from it though the
    user had moved. The turn now says what changed, and when."""
    from datetime import UTC, datetime

    client, tenant = tools_client
    append_messages(tenant, "u1", "s1", ["I live in Portland with my partner."],
                    start=datetime(2026, 9, 8, 19, 0, tzinfo=UTC), auto_extract=True)
    append_messages(tenant, "u1", "s2", ["Мы переехали в Сиэтл на прошлой неделе."],
                    start=datetime(2026, 10, 26, 19, 0, tzinfo=UTC), auto_extract=True)
    status, body = call(client, "memory_search", {"user_id": "u1", "query": "where do I live?", "k": 5})
    assert status == 200
    portland = next(i for i in body["items"] if "Portland" in i["text"])
    assert portland["changed_since"] == {"key": "location", "now": "Сиэтл", "said_at": "2026-10-26T19:00:00Z"}
    seattle = next(i for i in body["items"] if "Сиэтл" in i["text"])
    assert "changed_since" not in seattle
    # Read right after the old turn (or before it, where it ranked above).
    at = body["items"].index(portland)
    assert body["items"].index(seattle) < at or (body["items"][at + 1] == seattle
                                                 and seattle["corrects"] == portland["id"])
