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





# Turns about the question, each about 25 tokens: at 140 tokens all five fit, but not beside a typed memory.
TOURNAMENTS = [
    "Nate went to a chess tournament in Oslo in March, and he says the hotel was freezing the whole week.",
    "Nate says the tournament bus broke down twice on the way, so they arrived after midnight.",
    "Before every tournament Nate practises all evening and goes to bed early, even on Fridays.",
    "Nate won the Valorant tournament last Saturday, and his whole team went out for pizza after!",
    "Nate lost the tournament final in Bergen last year by a single point, and he still talks about it.",
]
SMALL_TALK = ["I bought new running shoes.", "The weather was lovely today.", "My sister called me this morning.",
              "We had pasta for dinner.", "I finished a book about bees.", "The train was late again.",
              "My cat knocked over a plant.", "I started learning to knit.", "Work was busy this week.",
              "I watched a documentary about whales."]


@pytest.mark.parametrize(("memory", "shown"), [
    # One word of the question (twice, so it passes half the best turn's share): less than every turn says.
    ("What a tournament, the tournament of the year!", False),
    # More of the question than the weakest turn it would push out.
    ("Nate won the Valorant tournament, his first win.", True),
])
def test_a_typed_memory_takes_a_turns_room_only_if_it_answers_as_much(tenant, memory: str, shown: bool) -> None:
    """LoCoMo at 200 tokens: "Joanna: It must be really awesome!" (user/KeyFacts), found by the date, took the
    room of Nate's turn saying which tournament he won. A typed memory shown instead of turns must answer
    the query's words as well as the weakest of the turns it pushes out of the memories block."""
    append_messages(tenant, "anna", "s0", SMALL_TALK, start=START)
    append_messages(tenant, "anna", "s1", TOURNAMENTS, start=START)
    [created] = memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text=memory, kind="user", category="KeyFacts", occurred_at=START)])
    blocks = _blocks(tenant, "anna", "Which tournament did Nate win?", budget_tokens=140)
    typed = [i.text for i in blocks["typed_memories"].items]
    turns = [i.text.rsplit("- user: ", 1)[-1] for i in blocks["memories"].items]
    if shown:
        assert typed == [f"- [2024-05-01] {memory} (user/KeyFacts)"]
        assert len(turns) == 4, turns  # it took the room of one
    else:
        chunk = Chunk.objects.get(tenant=tenant, memory_uid=created.memory_uid)
        assert typed == []
        assert {"ref": f"chunk:{chunk.pk}", "tokens": 0, "reason": "below_floor"} in blocks["typed_memories"].cut
        assert sorted(turns) == sorted(TOURNAMENTS)
