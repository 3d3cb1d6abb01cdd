"""rules_lookup across a world's languages: the asked language's text where the world has it, another's
(said so) where it does not, and nothing rather than unrelated entries."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memoryhub.models import Tenant
from tests.tools.test_api import call

pytestmark = pytest.mark.django_db


def test_a_title_in_another_language_finds_the_rule_in_the_one_asked(tools_client: tuple[APIClient, Tenant]) -> None:
    """{"term": "blinded", "language": "ru"} searched the Russian text for an English word and answered
    with whatever lay nearest, although the condition has its Russian entry, "Ослепление"."""
    client, _ = tools_client
    status, body = call(client, "rules_lookup", {"term": "blinded", "language": "ru"})
    assert status == 200 and body["matched_by"] == "title"
    assert [(r["rule_id"], r["language"], r["title"]) for r in body["rules"]] == [
        ("Conditions/blinded", "ru", "Ослепление")]
    assert "note" not in body
    status, body = call(client, "rules_lookup", {"term": "Ослепление", "language": "en"})
    assert [(r["rule_id"], r["language"]) for r in body["rules"]] == [("Conditions/blinded", "en")]


@pytest.mark.parametrize("args", [{"term": "fireball", "language": "ru"},
                                  {"rule_id": "Spells/fireball", "language": "ru"},
                                  {"term": "teleport in silvery mist", "language": "ru"}],
                         ids=["title", "rule_id", "search"])
def test_a_rule_the_asked_language_lacks_comes_in_another_said_so(tools_client: tuple[APIClient, Tenant],
                                                                  args: dict[str, str]) -> None:
    """The Russian SRD is a subset (no spells): the English rule, with a note, is what a model can use."""
    client, _ = tools_client
    status, body = call(client, "rules_lookup", args)
    assert status == 200 and body["rules"]
    rule = body["rules"][0]
    assert rule["language"] == "en" and rule["rule_id"] in ("Spells/fireball", "Spells/misty-step")
    assert body["note"] == f"The world has no 'ru' text of {rule['rule_id']}; given in en."


def test_a_term_the_world_does_not_hold_finds_nothing(tools_client: tuple[APIClient, Tenant]) -> None:
    """"失明" (blinded) in a world without Chinese answered with the vectors' three nearest entries."""
    client, _ = tools_client
    status, body = call(client, "rules_lookup", {"term": "失明"})
    assert status == 200
    assert body["matched_by"] == "none" and body["rules"] == [] and body["sources"] == []
