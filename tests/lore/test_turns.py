"""A turn's records (seed 003 §8.10): scene-context answers carry an id and the ranks of what search
returned; the engine reports which sources the narration used and what its model call cost."""

from __future__ import annotations

import pytest

from lore import services as lore_services
from lore.campaigns.api import ARTCARD_EXAMPLE
from lore.campaigns.models import SceneAssembly
from lore.models import KnowledgeVersion
from memoryhub import services as kernel_services
from tests.kernel.test_metrics import sample, scrape
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client, summary_document

BASE = CAMPAIGN_BASE
SCENE = {"party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
         "scene_text": "Mist over the moon bridge.",
         "user_input": "I make a dexterity saving throw against the fireball"}


@pytest.fixture
def played(engine, staged: KnowledgeVersion):
    """The campaign with a summary, an art card and a published SRD: a scene has rules to return."""
    lore_services.lore_version_publish(version=staged, actor="test", force=True, reason="test fixture")
    assert engine.post(f"{BASE}/summaries", summary_document(), format="json").status_code == 201
    assert engine.post(f"{BASE}/artcards", ARTCARD_EXAMPLE, format="json").status_code == 201
    return engine


def test_scene_context_is_recorded_with_its_sources_ranks_and_tokens(played):
    scene = played.post(f"{BASE}/scene-context", SCENE, format="json").json()
    assembly = SceneAssembly.objects.get(pk=scene["assembly_id"])
    rules = next(b for b in scene["blocks"] if b["name"] == "rules")["items"]
    assert rules and rules[0]["ranks"]["fused"] == 1 and "bm25" in rules[0]["ranks"]
    refs = [(s["block"], s["ref"]) for s in assembly.sources]
    assert ("rules", rules[0]["source"]) in refs and ("episode", "summary:sum_1") in refs
    assert ("npc", "npc:npc_LiShen") in refs and not any(block in ("system", "user") for block, _ in refs)
    assert len(refs) == len(set(refs))  # one entry per (block, ref), even when two languages share a ref
    ranked = next(s for s in assembly.sources if s["ref"] == rules[0]["source"])
    assert ranked["rank"] == 1 and ranked["bm25_rank"] == rules[0]["ranks"]["bm25"]
    assert assembly.context_tokens == scene["tokens"]["without_user"] and assembly.tokens["rules"] == sum(
        i["tokens"] for i in rules)
    assert assembly.used is None and assembly.llm_tokens == 0  # offline: no LLM while assembling


def test_the_engine_reports_the_turn_once(played, settings):
    settings.LLM_PRICES = {"gm-mini": [1.0, 2.0]}  # USD per 1M prompt / completion tokens
    scene = played.post(f"{BASE}/scene-context", SCENE, format="json").json()
    url = f"{BASE}/scene-context/{scene['assembly_id']}/feedback"
    rules = next(b for b in scene["blocks"] if b["name"] == "rules")["items"]
    used = [rules[0]["source"], "npc:npc_LiShen"]
    report = {"used": used, "llm_usage": {"model": "gm-mini", "prompt_tokens": 1000, "completion_tokens": 200}}
    before = scrape()

    response = played.post(url, report, format="json")
    assert response.status_code == 201, response.json()
    body = response.json()
    returned = SceneAssembly.objects.get(pk=scene["assembly_id"]).sources
    retrieved = [s for s in returned if s["block"] in ("rules", "lore")]
    assert body["used"] == sorted(used) and body["returned"] == len(returned)
    assert body["hit_rate"] == round(2 / len(returned), 4)
    assert body["retrieval_hit_rate"] == round(1 / len(retrieved), 4)
    bm25 = rules[0]["ranks"].get("bm25")
    assert body["fusion"] == {"used_retrieved": 1, "mrr_fused": 1.0, "mrr_bm25": round(1 / bm25, 4) if bm25 else 0.0}
    assert body["llm"]["engine_tokens"] == 1200 and body["llm"]["engine_cost_usd"] == pytest.approx(0.0014)
    after = scrape()
    # At least: /metrics merges every process's files, and another test process may count meanwhile.
    for labels, n in ((("npc", "yes"), 1), (("rules", "yes"), 1), (("episode", "no"), 2)):
        was = sample(before, "memoryhub_gm_scene_sources_total", block=labels[0], used=labels[1]) or 0
        assert (sample(after, "memoryhub_gm_scene_sources_total", block=labels[0], used=labels[1]) or 0) >= was + n, \
            labels
    was = sample(before, "memoryhub_gm_turn_llm_tokens_total", side="engine", kind="prompt") or 0
    assert (sample(after, "memoryhub_gm_turn_llm_tokens_total", side="engine", kind="prompt") or 0) >= was + 1000

    # The same report again: the same answer; another one: a turn happened once.
    replay = played.post(url, report, format="json")
    assert replay.status_code == 200 and replay.json() == body
    changed = played.post(url, {"used": used[:1]}, format="json")
    assert changed.status_code == 409 and changed.json()["error"]["code"] == "conflict"
    # Without a price and without a cost the tokens count, the cost is unknown.
    other = played.post(f"{BASE}/scene-context", SCENE, format="json").json()
    usage = {"model": "elsewhere", "prompt_tokens": 5, "completion_tokens": 1}
    unpriced = played.post(f"{BASE}/scene-context/{other['assembly_id']}/feedback", {"used": [], "llm_usage": usage},
                           format="json").json()
    assert unpriced["llm"]["engine_tokens"] == 6 and unpriced["llm"]["engine_cost_usd"] is None
    assert unpriced["hit_rate"] == 0.0 and unpriced["fusion"]["mrr_fused"] is None


def test_bad_reports_name_the_field_and_other_keys_are_refused(played, world):
    scene = played.post(f"{BASE}/scene-context", SCENE, format="json").json()
    url = f"{BASE}/scene-context/{scene['assembly_id']}/feedback"
    unknown = played.post(url, {"used": ["npc:npc_LiShen", "lore:invented@1.0.0"]}, format="json")
    assert unknown.status_code == 400 and "used/1" in unknown.json()["error"]["fields"]
    for bad in ({}, {"used": "npc:npc_LiShen"}, {"used": [], "llm_usage": {"model": "m", "prompt_tokens": -1,
                                                                              "completion_tokens": 0}},
                {"used": [], "extra": 1}):
        response = played.post(url, bad, format="json")
        assert response.status_code == 400, bad
    missing = played.post(f"{BASE}/scene-context/999999/feedback", {"used": []}, format="json")
    assert missing.status_code == 404 and "assembly_id" in missing.json()["error"]["fields"]
    for scope in ("memory", "editor", "tools"):
        assert scoped_client(world.tenant, scope).post(url, {"used": []}, format="json").status_code == 403, scope
    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    assert scoped_client(other_tenant, "engine").post(url, {"used": []}, format="json").status_code == 404
    assert SceneAssembly.objects.get(pk=scene["assembly_id"]).used is None
