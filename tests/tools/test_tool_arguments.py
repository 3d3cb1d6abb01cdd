"""Arguments a tool cannot serve are errors naming them, not silent 200s (QA pass on the demo campaign):
npc_profile's `hero_id` for a hero the party does not have, and a `language` that is no language code; over
REST and over MCP alike (the same registry and `tool_call`)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from django.utils import timezone
from rest_framework.test import APIClient

from lore.campaigns.demo import demo_campaign_create
from lore.campaigns.models import EpisodicSummary
from lore.models import World
from memoryhub.models import Tenant
from tools.mcp_server import _call_sync
from tools.models import ToolCall

PROFILE = {"campaign_id": "demo_moon", "party_id": "pty_demo", "npc_id": "npc_LiShen"}


@pytest.fixture
def campaign_client(tools_client: tuple[APIClient, Tenant]) -> tuple[APIClient, Tenant]:
    client, tenant = tools_client
    demo_campaign_create(world=World.objects.get(tenant=tenant, slug="dnd5e"))
    return client, tenant


def call(client: APIClient, name: str, args: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    response = client.post(f"/api/v1/tools/{name}", args, format="json")
    return response.status_code, response.json()


@pytest.mark.django_db
def test_a_hero_the_party_does_not_have_is_a_404_naming_hero_id(campaign_client) -> None:
    """QA: hero_id p_Q answered 200 with "hero_id:p_Q": 0, a disposition the model took for a fact."""
    client, tenant = campaign_client
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "p_Q"})
    assert status == 404, body
    assert body["error"]["code"] == "not_found" and list(body["error"]["fields"]) == ["hero_id"]
    assert "'pty_demo' has no hero 'p_Q'" in body["error"]["message"]
    assert "Did you mean" in body["error"]["message"]  # both, by difflib's order
    assert "'p_A'" in body["error"]["message"] and "'p_B'" in body["error"]["message"]
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "the_monk"})
    assert status == 404 and "Its heroes: p_A, p_B." in body["error"]["message"]
    assert ToolCall.objects.filter(tenant=tenant, tool="npc_profile", outcome="error").count() == 2
    # The party's heroes still answer: p_B, whom Li Shen holds no disposition towards, with 0.
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "p_B"})
    assert status == 200 and body["dynamic"]["disposition"] == {"party_id:pty_demo": 1, "hero_id:p_B": 0}
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "p_A"})
    assert status == 200 and body["dynamic"]["disposition"] == {"party_id:pty_demo": 1, "hero_id:p_A": 1}


@pytest.mark.django_db
def test_a_hero_known_by_a_disposition_outlives_the_summaries_that_named_it(campaign_client) -> None:
    """Expired summaries lose their `who.players`; a disposition towards the hero is engine state and stays."""
    client, _ = campaign_client
    EpisodicSummary.objects.update(document={}, chunk=None, expired_at=timezone.now())
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "p_A"})
    assert status == 200 and body["dynamic"]["disposition"]["hero_id:p_A"] == 1
    status, body = call(client, "npc_profile", {**PROFILE, "hero_id": "p_B"})
    assert status == 404 and "Did you mean 'p_A'?" in body["error"]["message"]


@pytest.mark.django_db
def test_the_rest_npc_read_names_its_own_argument(campaign_client) -> None:
    client, _ = campaign_client
    response = client.get("/api/v1/campaigns/demo_moon/npcs/npc_LiShen", {"party": "pty_demo", "hero": "p_Q"})
    assert response.status_code == 404 and list(response.json()["error"]["fields"]) == ["hero"]
    response = client.get("/api/v1/campaigns/demo_moon/npcs/npc_LiShen", {"party": "pty_demo", "hero": "p_B"})
    assert response.status_code == 200


@pytest.mark.django_db
@pytest.mark.parametrize("code", ["xx", "qq", "eng"])
def test_a_language_code_that_is_no_language_is_a_400_naming_language(tools_client, code: str) -> None:
    """QA: {"term": "fireball", "language": "xx"} answered 200 with the English rule and a note."""
    client, tenant = tools_client
    status, body = call(client, "rules_lookup", {"term": "fireball", "language": code})
    assert status == 400, body
    assert list(body["error"]["fields"]) == ["language"]
    assert f"{code!r} is not a language code" in body["error"]["message"]
    assert "the world is written in en, ru" in body["error"]["message"]
    status, body = call(client, "rules_lookup", {"rule_id": "Spells/fireball", "language": code})
    assert status == 400 and list(body["error"]["fields"]) == ["language"]
    status, body = call(client, "lore_search", {"query": "fireball", "filters": {"languages": ["en", code]}})
    assert status == 400 and list(body["error"]["fields"]) == ["filters.languages.1"]
    assert ToolCall.objects.filter(tenant=tenant, outcome="invalid").count() == 3


@pytest.mark.django_db
@pytest.mark.parametrize(("code", "term", "rule_id"), [
    ("zh", "fireball", "Spells/fireball"),
    ("de", "Ослепление", "Conditions/blinded"),
    ("zh", "失明", None),  # nothing found: no note of a language either
])
def test_a_language_the_world_is_not_written_in_answers_in_its_own_with_a_note(tools_client, code: str, term: str,
                                                                               rule_id: str | None) -> None:
    """A real language the world lacks is no mistake of the caller's: the rule is there, in the world's
    languages, and the model can translate it; the note says the world has none of the asked."""
    client, _ = tools_client
    status, body = call(client, "rules_lookup", {"term": term, "language": code})
    assert status == 200, body
    if rule_id is None:
        assert body["rules"] == [] and "note" not in body
        return
    assert body["rules"][0]["rule_id"] == rule_id and body["rules"][0]["language"] in ("en", "ru")
    assert body["note"].startswith(f"World 'dnd5e' is not written in {code!r} (its languages: en, ru); given in ")


@pytest.mark.django_db
def test_lore_search_says_why_a_language_the_world_lacks_finds_nothing(tools_client) -> None:
    client, _ = tools_client
    status, body = call(client, "lore_search", {"query": "explosion of flame", "filters": {"languages": ["zh"]}})
    assert status == 200 and body["items"] == []
    assert body["note"] == "World 'dnd5e' is not written in 'zh' (its languages: en, ru)."
    status, body = call(client, "lore_search", {"query": "существо не видит", "filters": {"languages": ["ru"]}})
    assert status == 200 and body["items"] and "note" not in body


@pytest.mark.django_db
def test_the_schemas_say_so(tools_client) -> None:
    client, _ = tools_client
    tools = {t["name"]: t for t in client.get("/api/v1/tools").json()["tools"]}
    hero = tools["npc_profile"]["input_schema"]["properties"]["hero_id"]["description"]
    assert "not_found" in hero and "hero_id" in hero
    language = tools["rules_lookup"]["input_schema"]["properties"]["language"]["description"]
    assert "error naming language" in language and "not written in" in language
    schema = client.get("/api/schema/", {"format": "json"}).json()
    errors = schema["paths"]["/api/v1/tools/npc_profile"]["post"]["responses"]
    assert "hero" in errors["404"]["description"] and "language" in errors["400"]["description"]


@pytest.mark.django_db(transaction=True)
def test_over_mcp_the_same_arguments_are_errors_naming_them(campaign_client) -> None:
    """MCP serves the same registry: a refused call is a tool result with isError and the field at fault."""
    _, tenant = campaign_client
    for name, args, field, code in [("npc_profile", {**PROFILE, "hero_id": "p_Q"}, "hero_id", "not_found"),
                                    ("rules_lookup", {"term": "fireball", "language": "xx"}, "language", "invalid")]:
        result = _call_sync(tenant, name, args, ToolCall.Transport.MCP_STDIO)
        assert result.is_error, (name, result.content)
        error = json.loads(result.content[0].text)["error"]
        assert (error["field"], error["code"]) == (field, code)
    result = _call_sync(tenant, "npc_profile", {**PROFILE, "hero_id": "p_A"}, ToolCall.Transport.MCP_STDIO)
    assert not result.is_error and result.structured_content["dynamic"]["disposition"]["hero_id:p_A"] == 1
    assert list(ToolCall.objects.filter(tenant=tenant, transport="mcp-stdio").order_by("id")
                .values_list("tool", "outcome")) == [("npc_profile", "error"), ("rules_lookup", "invalid"),
                                                     ("npc_profile", "ok")]
