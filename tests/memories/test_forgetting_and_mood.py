"""Forgetting on beat, and mood / affinity / trust."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from rag.memories import mood
from rag.memories.forgetting import PRUNED, memories_forget
from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk
from tests.factories import append_messages


def _memory(tenant, text: str, *, category: str, importance: float, days_old: float | None,
            history: str = "h-old") -> str:
    [chunk] = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[MemoryInput(
        text=text, kind="user", category=category, importance=importance, history_uid=history,
        occurred_at=timezone.now() - timedelta(days=days_old) if days_old is not None else None)])
    return chunk.text


def _left(tenant) -> set[str]:
    return set(Chunk.objects.filter(tenant=tenant, type="memory").values_list("text", flat=True))


def test_forgetting_prunes_by_age_importance_and_history(tenant) -> None:
    append_messages(tenant, "anna", "h-live", ["still talking"])  # an active history
    _memory(tenant, "old chat", category="chat", importance=0.5, days_old=10)
    _memory(tenant, "old chat, live history", category="chat", importance=0.5, days_old=10, history="h-live")
    _memory(tenant, "fresh chat", category="chat", importance=0.5, days_old=2)
    _memory(tenant, "old trivial fact", category="KeyFacts", importance=0.2, days_old=40)
    _memory(tenant, "old fair fact", category="KeyFacts", importance=0.3, days_old=40)
    _memory(tenant, "young trivial fact", category="KeyFacts", importance=0.1, days_old=20)
    _memory(tenant, "protected old chat", category="SessionEvent", importance=0.9, days_old=300)
    _memory(tenant, "no timestamp", category="KeyFacts", importance=0.05, days_old=None)
    before = PRUNED.labels("low_importance")._value.get()
    assert memories_forget() == {"session": 1, "long_term": 1}
    assert _left(tenant) == {"old chat, live history", "fresh chat", "old fair fact", "young trivial fact",
                             "protected old chat", "no timestamp"}
    assert PRUNED.labels("low_importance")._value.get() == before + 1
    assert memories_forget() == {"session": 0, "long_term": 0}  # idempotent


def test_nothing_protected_is_pruned_even_when_the_floor_is_high(tenant, settings) -> None:
    settings.MEMORY_PRUNE_IMPORTANCE_FLOOR = 0.95
    settings.MEMORY_PROTECTED_IMPORTANCE = 0.8
    _memory(tenant, "precious", category="KeyFacts", importance=0.85, days_old=400)
    _memory(tenant, "ordinary", category="KeyFacts", importance=0.5, days_old=400)
    memories_forget()
    assert _left(tenant) == {"precious"}


def test_mood_is_a_moving_average_and_relations_decay_to_neutral(tenant) -> None:
    now = timezone.now()
    row = mood.mood_update(tenant=tenant, user_id="anna", conf_uid="neiri", emotions={"joy": 1.0}, now=now)
    assert row.mood == 1.0 and row.affinity == 10.0 and row.trust == 52.0
    row = mood.mood_update(tenant=tenant, user_id="anna", conf_uid="neiri", emotions={"sadness": -1.0}, now=now)
    assert row.mood == pytest.approx(0.7 * 1.0 + 0.3 * -1.0)
    assert row.trust == 47.0  # trust is lost faster than won
    # 14 days (the half-life) of silence: affinity and trust are halfway back to 0 and 50.
    row.last_interaction_at = now - timedelta(days=14)
    row.save()
    [figures] = mood.character_mood(tenant_id=tenant.pk, conf_uid="neiri", user_id="anna")["relationships"]
    assert figures["affinity"] == pytest.approx(0.0 + (row.affinity - 0.0) / 2, abs=0.05)
    assert figures["trust"] == pytest.approx(50 + (47 - 50) / 2, abs=0.05)


def test_mood_api_gives_aggregate_and_per_user_figures(client_a) -> None:
    client, tenant = client_a
    client.post("/api/v1/characters/neiri/memories",
                {"user_id": "anna", "text": "Anna likes tea", "kind": "user"}, format="json")
    mood.mood_update(tenant=tenant, user_id="anna", conf_uid="neiri", emotions={"joy": 0.8})
    mood.mood_update(tenant=tenant, user_id="bob", conf_uid="neiri", emotions={"anger": -0.4})
    body = client.get("/api/v1/characters/neiri/mood").json()
    assert body["users"] == 2 and body["mood"] == pytest.approx(0.2)
    only = client.get("/api/v1/characters/neiri/mood", {"user_id": "bob"}).json()
    assert [r["user_id"] for r in only["relationships"]] == ["bob"] and only["relationships"][0]["trust"] == 45.0
    assert client.get("/api/v1/characters/neiri/mood", {"user_id": "bad id"}).status_code == 400


def test_a_memory_reinforced_up_to_the_protected_importance_is_protected(tenant) -> None:
    """0.7 + 0.1 in floating point is 0.7999999999999999: a session memory said twice showed
    importance 0.8 and was still pruned, below MEMORY_PROTECTED_IMPORTANCE."""
    from rag.memories.services import Reinforcement, memories_reinforce

    [chunk] = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[MemoryInput(
        text="Anna is streaming from Lisbon tonight", kind="user", category="SessionEvent", importance=0.7,
        history_uid="h-old", occurred_at=timezone.now() - timedelta(days=20))])
    memories_reinforce(tenant=tenant, reinforcements=[Reinforcement(chunk.pk, 0.95, None)],
                       now=timezone.now() - timedelta(days=10))
    chunk.refresh_from_db()
    assert chunk.importance == 0.8
    assert memories_forget() == {"session": 0, "long_term": 0}
