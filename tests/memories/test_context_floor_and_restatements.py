"""The typed memories' floor and what the context says twice, found by a QA pass acting as a companion app."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryhub.models import Message
from rag import services
from rag.context import context_assemble
from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk
from tests.factories import append_messages

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def _blocks(tenant, user_id: str, query: str, **kwargs) -> dict:
    context = context_assemble(tenant_id=tenant.pk, user_id=user_id, query=query, session_id=None, **kwargs)
    return {b.name: b for b in context.blocks}


MENU = {
    "en": ("I am allergic to seafood.", "I love hotpot.", "Let's have seafood hotpot tonight?",
           "# Menu\n\n## Seafood hotpot\nOur seafood hotpot: seafood broth, seafood balls and fresh seafood."),
    "ru": ("У меня аллергия на морепродукты.", "Я обожаю хотпот.", "Может, закажем хотпот с морепродуктами?",
           "# Меню\n\n## Хотпот с морепродуктами\nНаш хотпот: бульон из морепродуктов, морепродукты, снова "
           "морепродукты и свежие морепродукты."),
    "zh": ("我对海鲜过敏。", "我喜欢吃火锅。", "今晚吃海鲜火锅吧？",
           "# 菜单\n\n## 海鲜火锅\n我们的海鲜火锅：海鲜汤底、海鲜丸和新鲜海鲜。"),
}


@pytest.mark.parametrize("lang", sorted(MENU))
def test_a_tenant_document_does_not_push_a_users_memories_out(tenant, lang: str) -> None:
    """A tenant menu saying "seafood" six times set the typed memories' floor (half the best result's BM25
    score): "I am allergic to seafood" was cut `below_floor` from the context of "seafood hotpot tonight?"."""
    allergy, likes, query, menu = MENU[lang]
    memories_create(tenant=tenant, user_id="dana", conf_uid="neiri", items=[
        MemoryInput(text=allergy, kind="user", category="KeyFacts", importance=0.9, tags=["health"]),
        MemoryInput(text=likes, kind="user", category="FactsAboutUser")])
    # A tenant's knowledge base: the menu among other pages, so its words are rare there.
    for title, text in [("Refunds", "Refunds are paid within 14 days of a written request."),
                        ("Delivery", "Couriers deliver from noon to midnight every day."),
                        ("Opening hours", "The restaurant opens at 11:00 and closes at 23:00."),
                        ("Allergens", "Ask the staff about the allergens in each dish."),
                        ("Menu", menu)]:
        services.document_ingest(tenant=tenant, user_id=None, document=services.DocumentInput(text=text,
                                                                                              title=title))
    assert Chunk.objects.filter(tenant=tenant, type="document").count() >= 5
    blocks = _blocks(tenant, "dana", query)
    shown = [i.text for name in ("typed_memories", "memories") for i in blocks[name].items]
    assert any(allergy in line for line in shown), shown


def test_a_typed_memory_is_weighed_on_its_own_searchs_scale(tenant) -> None:
    """"Alex has a severe peanut allergy" answered every word of "Does Alex have a peanut allergy?" and
    was cut `below_floor`: its own search (memories alone) scored it 1.03, held against half the general
    search's 2.18 for the same memory. Shares of each search's ceiling are compared now."""
    append_messages(tenant, "alex", "s1", [
        "I baked oatmeal cookies for the school fair yesterday.",
        ("assistant", "Then no peanut butter cookies for you! Your peanut allergy is noted."),
    ], start=START)
    memories_create(tenant=tenant, user_id="alex", conf_uid="neiri", items=[MemoryInput(
        text="Alex has a severe peanut allergy", kind="user", category="KeyFacts", occurred_at=START)])
    blocks = _blocks(tenant, "alex", "Does Alex have a peanut allergy?", budget_tokens=2000, k=1)
    assert [i.text for i in blocks["typed_memories"].items] == [
        "- [2024-05-01] Alex has a severe peanut allergy (user/KeyFacts)"]


TURNS = [
    "I baked oatmeal cookies for the school fair yesterday.",
    ("assistant", "Lovely! Did they sell well?"),
    "Yes! Oh, and nuts make my throat swell up, so I skip them.",
    ("assistant", "Then no peanut butter cookies for you! Your peanut allergy is noted."),
    "Raisins are fine though.",
]


def test_a_typed_memory_whose_turn_came_after_all_is_dropped(tenant) -> None:
    """The typed block leaves out a memory whose turn the memories block will show, judged by the search's
    ranking; the turn can still come as the one a reply answers, and the allergy was said twice."""
    append_messages(tenant, "alex", "s1", TURNS, start=START)
    turn = Message.objects.get(tenant=tenant, text__startswith="Yes! Oh")
    [memory] = memories_create(tenant=tenant, user_id="alex", conf_uid="neiri", items=[MemoryInput(
        text="Alex has a severe peanut allergy", kind="user", category="KeyFacts", occurred_at=START,
        meta={"source_message_ids": [turn.pk]})])
    blocks = _blocks(tenant, "alex", "Does Alex have a peanut allergy?", budget_tokens=2000, k=2)
    memories = [i.text for i in blocks["memories"].items]
    assert any(line.endswith("- user: Yes! Oh, and nuts make my throat swell up, so I skip them.") for line in memories)
    assert blocks["typed_memories"].items == []
    chunk = Chunk.objects.get(tenant=tenant, memory_uid=memory.memory_uid)
    assert {"ref": f"chunk:{chunk.pk}", "tokens": 0, "reason": "turn_in_memories"} in blocks["typed_memories"].cut
