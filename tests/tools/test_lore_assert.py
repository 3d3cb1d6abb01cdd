"""lore_assert with the LLM (through the loopback server) and its fallback, and the bench command."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from memoryhub.models import Tenant
from tests.llm_server import HTTPError, OpenAICompatServer

pytestmark = pytest.mark.django_db


def test_llm_verdict_over_the_retrieved_sources(tools_client: tuple[APIClient, Tenant],
                                                llm: OpenAICompatServer) -> None:
    client, _ = tools_client
    llm.script_chat({"verdict": "contradicted", "hint": "Fireball deals 8d6, per Spells/fireball.",
                     "source_ids": ["Spells/fireball"]})
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball deals 10d6 fire damage."}, format="json").json()
    assert (body["verdict"], body["method"]) == ("contradicted", "llm")
    assert body["sources"][0] == "srd:Spells/fireball@1.0.0"
    prompt = llm.chat_requests[-1]["messages"][-1]["content"]
    assert "[Spells/fireball]" in prompt and "8d6" in prompt and "STATEMENT: Fireball deals 10d6" in prompt


def test_llm_failure_keeps_the_offline_verdict(tools_client: tuple[APIClient, Tenant],
                                               llm: OpenAICompatServer) -> None:
    client, _ = tools_client
    llm.script_chat(HTTPError(500), HTTPError(500))
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 60 feet."},
                       format="json").json()
    assert (body["verdict"], body["method"]) == ("contradicted", "offline")
    assert "the LLM failed" in body["hint"]
    # use_llm=false never asks.
    asked = len(llm.chat_requests)
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 150 feet.", "use_llm": False},
                       format="json").json()
    assert (body["verdict"], body["method"]) == ("supported", "offline") and len(llm.chat_requests) == asked


def test_bench_prints_accuracy_and_gates(tools_client: tuple[APIClient, Tenant], tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    golden = {"world": "dnd5e", "facts": [
        {"id": "a", "language": "en", "expected": "supported", "fact": "Fireball has a range of 150 feet."},
        {"id": "b", "language": "en", "expected": "contradicted", "fact": "Fireball has a range of 60 feet."},
        {"id": "c", "language": "en", "expected": "supported", "fact": "Gandalf is a wizard of the Istari."},
    ]}
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(golden))
    call_command("lore_assert_bench", file=str(path), offline=True)
    out = capsys.readouterr().out
    assert "all                      2/3   66.7%" in out and "MISS c" in out
    with pytest.raises(CommandError, match="below"):
        call_command("lore_assert_bench", file=str(path), offline=True, min_accuracy=0.9)
