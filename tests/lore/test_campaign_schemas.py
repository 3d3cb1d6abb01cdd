"""The seed's documents (schemas/*.schema.json) accept the seed's examples and name each bad path."""

from __future__ import annotations

import copy

import pytest

from lore.campaigns.api import ARTCARD_EXAMPLE, NPC_EXAMPLE, SUMMARY_EXAMPLE
from lore.campaigns.schemas import document_errors, document_validate
from memoryhub.exceptions import ApplicationError


@pytest.mark.parametrize(("name", "document"), [
    ("episodic_summary", SUMMARY_EXAMPLE), ("npc_profile", NPC_EXAMPLE), ("artcard", ARTCARD_EXAMPLE),
])
def test_seed_examples_are_valid(name, document):
    assert document_errors(name, document) == {}


def test_npc_profile_with_the_seeds_dynamic_part_is_valid():
    document = {**NPC_EXAMPLE, "dynamic": {"disposition": {"party_id:pty_001": 2},
                                           "memory": [{"summary_id": "sum_2025_08_27_0142", "impact": "trust+1"}]}}
    assert document_errors("npc_profile", document) == {}
    document["dynamic"]["disposition"] = {"pty_001": 2}
    assert "/dynamic/disposition" in document_errors("npc_profile", document)


def test_summary_errors_name_every_json_path():
    document = copy.deepcopy(SUMMARY_EXAMPLE)
    document["relations_delta"][0]["delta"] = "+1"
    document["what"]["rolls"][0]["d20"] = 21
    document["when"] = "yesterday"
    del document["where"]["location_id"]
    document["extra"] = True
    errors = document_errors("episodic_summary", document)
    assert set(errors) == {"/relations_delta/0/delta", "/what/rolls/0/d20", "/when", "/where/location_id", "/"}
    assert "additional" in errors["/"][0].lower()
    with pytest.raises(ApplicationError) as caught:
        document_validate("episodic_summary", document)
    assert caught.value.extra["fields"] == errors


@pytest.mark.parametrize(("mutate", "path"), [
    (lambda d: d.update(visual_tags=[]), "/visual_tags"),
    (lambda d: d["moderation"].update(safe="yes"), "/moderation/safe"),
    (lambda d: d.update(cdn_url="ftp://x"), "/cdn_url"),
    (lambda d: d["entities"].pop("npc"), "/entities/npc"),
    (lambda d: d.update(created_at="2025-08-27"), "/created_at"),
])
def test_artcard_errors(mutate, path):
    document = copy.deepcopy(ARTCARD_EXAMPLE)
    mutate(document)
    assert path in document_errors("artcard", document)


def test_a_document_that_is_not_an_object_is_refused_at_the_root():
    assert "/" in document_errors("episodic_summary", ["not", "an", "object"])


def test_nul_in_a_string_is_refused_not_stored():
    document = {**NPC_EXAMPLE, "static": {**NPC_EXAMPLE["static"], "name": "Li\x00Shen"}}
    with pytest.raises(ApplicationError) as caught:
        document_validate("npc_profile", document)
    assert "/" in caught.value.extra["fields"]


def test_published_request_schemas_are_openapi_30_without_references():
    import json

    from lore.campaigns.schemas import openapi_schema

    summary = openapi_schema("episodic_summary")
    text = json.dumps(summary)
    assert "$ref" not in text and "$defs" not in text and "const" not in text and "seed 0" not in text
    delta = summary["properties"]["relations_delta"]["items"]["properties"]
    # "party" as before, or one hero of it: a pattern, which OpenAPI 3.0 says as it is.
    assert delta["towards"]["type"] == "string" and delta["towards"]["pattern"].startswith("^(party|hero_id:")
    assert summary["properties"]["party_id"]["pattern"].startswith("^[A-Za-z0-9]")
    vec = openapi_schema("artcard")["properties"]["embedding"]["properties"]["vec"]
    assert "type" not in vec
