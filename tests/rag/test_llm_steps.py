"""Optional LLM query expansion and rerank, through the loopback OpenAI-compatible server."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from rag.selectors import chunks_search
from tests.factories import append_messages
from tests.llm_server import Delay

pytestmark = pytest.mark.django_db

TURNS = ["My daughter plays the cello in the school orchestra.", "We bought a new sofa last week.",
         "The car needs new tyres before winter."]



def ids_by_text(result) -> dict[str, int]:
    return {i.chunk["text"]: i.chunk["id"] for i in result.items}


def test_steps_are_skipped_when_the_llm_is_off(tenant) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=datetime(2024, 1, 1, tzinfo=UTC))
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query="music instrument", expand=True, rerank=True)
    assert result.llm_steps == []


def test_expansion_adds_the_words_the_answer_uses(tenant, llm) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=datetime(2024, 1, 1, tzinfo=UTC))
    plain = chunks_search(tenant_id=tenant.pk, user_id="u1", query="which instrument", mode="bm25")
    assert plain.items == []  # no shared word at all
    llm.script_chat({"queries": ["cello violin piano", "music lessons orchestra"]})
    expanded = chunks_search(tenant_id=tenant.pk, user_id="u1", query="which instrument", mode="bm25", expand=True)
    assert expanded.llm_steps == ["expand"]
    assert expanded.items[0].chunk["text"] == TURNS[0]
    assert llm.chat_requests[-1]["model"]


def test_rerank_reorders_the_top_and_drops_invented_ids(tenant, llm) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=datetime(2024, 1, 1, tzinfo=UTC))
    baseline = chunks_search(tenant_id=tenant.pk, user_id="u1", query="new sofa tyres cello", k=3)
    ids = ids_by_text(baseline)
    llm.script_chat({"ranking": [{"id": f"Chunk:{ids[TURNS[2]]}", "score": 9}, {"id": 999999, "score": 10},
                                 {"id": ids[TURNS[1]], "score": 4}]})
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query="new sofa tyres cello", k=3, rerank=True)
    assert result.llm_steps == ["rerank"]
    assert [i.chunk["text"] for i in result.items] == [TURNS[2], TURNS[1], TURNS[0]]
    assert result.items[0].components["rerank"] == 9 and result.items[2].components["rerank"] == 0


def test_a_slow_or_malformed_llm_falls_back_to_the_fused_order(tenant, llm) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=datetime(2024, 1, 1, tzinfo=UTC))
    baseline = [i.chunk["id"] for i in chunks_search(tenant_id=tenant.pk, user_id="u1", query="sofa week").items]
    llm.script_chat(Delay(2.0))
    slow = chunks_search(tenant_id=tenant.pk, user_id="u1", query="sofa week", rerank=True)
    assert slow.llm_steps == [] and [i.chunk["id"] for i in slow.items] == baseline
    llm.script_chat("not json at all", "still not json")
    broken = chunks_search(tenant_id=tenant.pk, user_id="u1", query="sofa week", rerank=True, expand=False)
    assert broken.llm_steps == [] and [i.chunk["id"] for i in broken.items] == baseline
