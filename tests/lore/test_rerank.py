"""The LLM rerank of the world search (seed 003 §8.7: a small model over the fused top 12–20), through the
loopback OpenAI-compatible server: off offline, per domain in config/knowledge.yaml, per request, and every
fault of the model falling back to the fused order."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured

from lore import config as lore_config
from lore import selectors, smoke
from lore.models import KnowledgeVersion
from tests.llm_server import Delay, HTTPError, Malformed

pytestmark = pytest.mark.django_db

QUERY = "a creature in flame or mist that cannot see"


@pytest.fixture
def knowledge_yaml(settings, tmp_path) -> Iterator[Any]:  # type: ignore[no-untyped-def]
    """Writes config/knowledge.yaml with the `srd` domain's `rerank` set, and loads it."""

    def write(rerank: dict[str, Any]) -> None:
        raw = yaml.safe_load((settings.BASE_DIR / "config" / "knowledge.yaml").read_text())
        raw["knowledge"]["srd"]["rerank"] = rerank
        path = tmp_path / "knowledge.yaml"
        path.write_text(yaml.safe_dump(raw))
        settings.KNOWLEDGE_CONFIG = path
        lore_config.reload()

    yield write
    lore_config.reload()


def _search(staged: KnowledgeVersion, **kwargs: Any) -> selectors.KnowledgeResult:
    targets = selectors.targets_resolve(tenant_id=staged.tenant_id, world_slug="dnd5e", domains=["srd"],
                                        alias="stage")
    return selectors.knowledge_search(tenant_id=staged.tenant_id, targets=targets, query=QUERY, **kwargs)


def _listed(request: dict[str, Any]) -> list[int]:
    """The chunk ids the rerank prompt lists, in its order."""
    return [int(pk) for pk in re.findall(r"\[Chunk:(\d+)\]", request["messages"][-1]["content"])]


def _reversed_ranking(request: dict[str, Any]) -> dict[str, Any]:
    listed = _listed(request)
    return {"ranking": [{"id": f"Chunk:{pk}", "score": 10 - n} for n, pk in enumerate(reversed(listed))]}


def test_the_rerank_settings_are_validated_naming_the_key() -> None:
    raw = {name: {"store": "pgvector", "embedding": "default", "dims": 64,
                  "retrieval": {"mode": "vector", "k_vector": 8}} for name in ("srd", "lore", "episode", "artcards")}
    assert lore_config.validate(raw)["srd"].rerank is False  # absent: off
    raw["srd"]["rerank"] = {"enabled": True, "candidates": 25}  # the seed's 12–20
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.srd\.rerank\.candidates"):
        lore_config.validate(raw)
    raw["srd"]["rerank"] = {"candidates": 16}
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.srd\.rerank: 'enabled' is a required property"):
        lore_config.validate(raw)
    raw["srd"]["rerank"] = {"enabled": "yes"}
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.srd\.rerank\.enabled"):
        lore_config.validate(raw)
    raw["srd"]["rerank"] = {"enabled": True, "candidates": 12}
    assert (lore_config.validate(raw)["srd"].rerank, lore_config.validate(raw)["srd"].rerank_candidates) == (True, 12)
    raw["artcards"]["rerank"] = {"enabled": True}  # art_suggest is not the world search
    with pytest.raises(ImproperlyConfigured, match=r"knowledge\.artcards\.rerank"):
        lore_config.validate(raw)
    shipped = lore_config.domain_config("srd")
    assert shipped.rerank is False and 12 <= shipped.rerank_candidates <= 20


def test_offline_the_rerank_is_skipped_and_says_so(staged) -> None:
    plain = _search(staged)
    assert plain.llm_steps == [] and not [s for s in plain.skipped_steps if s["step"] == "rerank"]
    asked = _search(staged, rerank=True)
    assert asked.llm_steps == [] and {"step": "rerank", "reason": "llm_off"} in asked.skipped_steps
    assert [h.chunk_id for h in asked.hits] == [h.chunk_id for h in plain.hits]


def test_the_model_s_order_is_applied(staged, llm) -> None:
    baseline = [h.chunk_id for h in _search(staged).hits]
    assert len(baseline) >= 3
    assert llm.chat_requests == []  # off by default: no call
    llm.script_chat(_reversed_ranking)
    result = _search(staged, rerank=True)
    assert result.llm_steps == ["rerank"] and not result.skipped_steps
    assert _listed(llm.chat_requests[-1]) == baseline  # the fused order, as the model saw it
    assert [h.chunk_id for h in result.hits] == baseline[::-1]
    assert result.hits[0].components["rerank"] == 10


def test_a_candidate_the_model_leaves_out_goes_below_and_invented_ids_are_dropped(staged, llm) -> None:
    baseline = [h.chunk_id for h in _search(staged).hits]
    llm.script_chat({"ranking": [{"id": baseline[2], "score": 9}, {"id": 999999, "score": 10}]})
    result = _search(staged, rerank=True)
    assert [h.chunk_id for h in result.hits] == [baseline[2], *baseline[:2], *baseline[3:]]
    assert result.hits[1].components["rerank"] == 0


@pytest.mark.parametrize("fault", [
    pytest.param((HTTPError(429), HTTPError(429)), id="429"),
    pytest.param((HTTPError(500), HTTPError(500)), id="500"),
    pytest.param((Delay(2.0), Delay(2.0)), id="timeout"),
    pytest.param(("not json at all", "still not json"), id="garbage"),
    pytest.param((Malformed(), Malformed()), id="malformed-body"),
    pytest.param(({"ranking": [{"id": 1, "score": 99}]},) * 2, id="out-of-range"),
])
def test_a_failing_model_leaves_the_fused_order_and_says_so(staged, llm, fault) -> None:
    baseline = [h.chunk_id for h in _search(staged).hits]
    llm.script_chat(*fault)
    result = _search(staged, rerank=True)
    assert [h.chunk_id for h in result.hits] == baseline
    assert result.llm_steps == [] and {"step": "rerank", "reason": "llm_failed"} in result.skipped_steps
    assert all("rerank" not in h.components for h in result.hits)


def test_the_domain_setting_turns_it_on_and_a_request_overrides_it(staged, llm, knowledge_yaml, golden_dir) -> None:
    knowledge_yaml({"enabled": True, "candidates": 12})
    llm.script_chat(_reversed_ranking)
    assert _search(staged).llm_steps == ["rerank"]
    assert len(_listed(llm.chat_requests[-1])) <= 12
    calls = len(llm.chat_requests)
    assert _search(staged, rerank=False).llm_steps == []
    assert len(llm.chat_requests) == calls
    # The publish gate measures the version's retrieval, never a model's.
    smoke.version_smoke(version=staged, split="all")
    assert len(llm.chat_requests) == calls


def test_the_world_search_api_takes_rerank_and_reports_it(editor_client, staged, llm) -> None:
    client, _ = editor_client()
    body = {"query": QUERY, "alias": "stage"}
    plain = client.post("/api/v1/worlds/dnd5e/search", body, format="json").json()
    assert plain["llm_steps"] == [] and "skipped_steps" not in plain
    llm.script_chat(_reversed_ranking)
    reranked = client.post("/api/v1/worlds/dnd5e/search", {**body, "rerank": True}, format="json")
    assert reranked.status_code == 200 and reranked.json()["llm_steps"] == ["rerank"]
    assert [i["entry_id"] for i in reranked.json()["items"]] == [i["entry_id"] for i in plain["items"]][::-1]
    assert "rerank" in reranked.json()["items"][0]["components"]
    llm.script_chat(HTTPError(500), HTTPError(500))
    failed = client.post("/api/v1/worlds/dnd5e/search", {**body, "rerank": True}, format="json")
    assert failed.status_code == 200
    assert [i["entry_id"] for i in failed.json()["items"]] == [i["entry_id"] for i in plain["items"]]
    assert failed.json()["skipped_steps"] == [{"step": "rerank", "reason": "llm_failed"}]
    bad = client.post("/api/v1/worlds/dnd5e/search", {**body, "rerank": "sometimes"}, format="json")
    assert bad.status_code == 400 and "rerank" in bad.json()["error"]["fields"]


def test_openapi_documents_the_rerank(schema) -> None:
    request = schema["paths"]["/api/v1/worlds/{world}/search"]["post"]["requestBody"]["content"]["application/json"]
    ref = request["schema"]["$ref"].rsplit("/", 1)[-1]
    assert schema["components"]["schemas"][ref]["properties"]["rerank"]["type"] == "boolean"
    answer = schema["paths"]["/api/v1/worlds/{world}/search"]["post"]["responses"]["200"]["content"]
    out = answer["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "llm_steps" in schema["components"]["schemas"][out]["properties"]
