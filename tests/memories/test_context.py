"""The typed-memories block of the context."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from rag.context import context_assemble
from rag.memories.services import MemoryInput, memories_create
from rag.selectors import SearchFilters


def test_typed_memories_block_orders_by_adjusted_score_and_shows_emotion_and_window(tenant) -> None:
    memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna plays guitar, guitar every day", kind="user", category="chat", importance=0.2,
                    occurred_at=timezone.now() - timedelta(days=60)),
        MemoryInput(text="Anna's guitar was a gift from her late father", kind="third_party",
                    category="KeyFacts", importance=0.95, emotion="nostalgia", context_window="music talk"),
    ])
    memories_create(tenant=tenant, user_id="anna", conf_uid="other", items=[
        MemoryInput(text="Anna tunes her guitar", kind="user", category="KeyFacts", importance=0.9)])
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", query="guitar", session_id=None,
                               memory_filters=SearchFilters(conf_uids=("neiri",)))
    block = next(b for b in context.blocks if b.name == "typed_memories")
    lines = [i.text for i in block.items]
    assert len(lines) == 2
    assert lines[0].startswith("- [") and "late father" in lines[0]
    assert "(third_party/KeyFacts; emotion: nostalgia; context: music talk)" in lines[0]
    assert "<typed_memories>" in context.render()
    # Shown once: the general memories block does not repeat them.
    general = next(b for b in context.blocks if b.name == "memories")
    assert not {i.ref for i in general.items} & {i.ref for i in block.items}


def test_typed_memories_stay_within_their_share(tenant) -> None:
    memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text=f"Anna's guitar lesson number {n} covered scales and chords at length", kind="user",
                    category="PastEvents") for n in range(30)])
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", query="guitar lesson", session_id=None,
                               budget_tokens=400)
    block = next(b for b in context.blocks if b.name == "typed_memories")
    assert block.items and block.tokens <= 0.2 * 400
    assert any(c["reason"] == "budget" for c in block.cut)


def test_context_api_takes_memory_filters(client_a) -> None:
    client, _ = client_a
    ok = client.post("/api/v1/context", {"user_id": "anna", "query": "x",
                                         "memory_filters": {"categories": ["KeyFacts"]}}, format="json")
    assert ok.status_code == 200, ok.content
    bad = client.post("/api/v1/context", {"user_id": "anna", "query": "x",
                                          "memory_filters": {"kinds": ["robot"]}}, format="json")
    assert bad.status_code == 400 and "memory_filters" in bad.json()["error"]["fields"]
