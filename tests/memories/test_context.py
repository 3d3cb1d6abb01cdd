"""The typed-memories block of the context."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.utils import timezone

from rag.context import context_assemble
from rag.memories.services import MemoryInput, memories_create
from rag.selectors import SearchFilters
from tests.factories import append_messages

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


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
    assert all(i.meta["at"].endswith("Z") for i in block.items)
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


def test_a_consolidated_memory_does_not_repeat_a_turn_the_context_shows(tenant) -> None:
    """Found trying the demo: the turn, the memory consolidated from it and the run's insight all
    said "I am allergic to peanuts" in one memories block."""
    from rag.memories import consolidation
    from rag.models import Chunk

    result = append_messages(tenant, "kate", "s1", [
        "Hi! I am Kate, I work as a nurse at St Mary hospital in Leeds.",
        ("assistant", "Nice to meet you, Kate! How long have you been a nurse?"),
        "Yes. On weekends I go climbing with my friend Priya. I am allergic to peanuts, so restaurants are tricky.",
    ], start=START)
    run_id = consolidation.consolidation_request(result.conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    restating = list(Chunk.objects.filter(tenant=tenant, type__in=["memory", "insight"], text__contains="peanuts"))
    assert restating and all(c.meta.get("source_message_ids") for c in restating)
    # Dated when it was said, as the memories are: a context shows it under that day, not today's.
    assert {c.created_ts.date() for c in restating} == {START.date()}
    context = context_assemble(tenant_id=tenant.pk, user_id="kate", query="a safe restaurant for a nurse with a "
                               "peanut allergy in Leeds?", session_id=None, budget_tokens=500)
    memories = next(b for b in context.blocks if b.name == "memories")
    shown = "\n".join(i.text for i in memories.items)
    assert shown.count("allergic to peanuts") == 1 and shown.count("work as a nurse") == 1
    assert {c["ref"] for c in memories.cut if c["reason"] == "turn_in_memories"} >= {
        f"chunk:{c.pk}" for c in restating}
    # Where a turn does not fit, what was consolidated from it still speaks for it.
    small = context_assemble(tenant_id=tenant.pk, user_id="kate", query="a safe restaurant for a nurse with a "
                             "peanut allergy in Leeds?", session_id=None, budget_tokens=30).render()
    assert "User: I am allergic to peanuts" in small and "climbing" not in small


def test_memory_filters_keep_other_typed_memories_out_of_the_whole_context(tenant) -> None:
    """memory_filters applied to the typed-memories block only: the general memories block searched
    every chunk, so another character's memory (here one it was told in confidence) reached the
    prompt of the character the filters named."""
    memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna loves rock music", kind="user", category="FactsAboutUser")])
    memories_create(tenant=tenant, user_id="anna", conf_uid="rival", items=[
        MemoryInput(text="Anna told Rival a secret: she hates rock music concerts", kind="user",
                    category="KeyFacts", importance=0.9)])
    append_messages(tenant, "anna", "s1", ["I went to a rock music festival"], start=START)
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", query="rock music", session_id=None,
                               memory_filters=SearchFilters(conf_uids=("neiri",)))
    assert "Anna loves rock music" in context.render()
    assert "rock music festival" in context.render()  # the filters are of typed memories, not of turns
    assert "secret" not in context.render()
    unfiltered = context_assemble(tenant_id=tenant.pk, user_id="anna", query="rock music", session_id=None)
    assert "secret" in unfiltered.render()


INSIGHT = "Anna visited Potsdam with her sister; Anna likes oolong tea"


@pytest.mark.parametrize(("memory", "block", "speaks"), [
    # The insight ranks above the memory in the memories block: it speaks for the Potsdam turn.
    ("Anna visited Potsdam with her sister Masha", "memories", INSIGHT),
    # The memory is in the typed-memories block: with the tea turn shown, the insight says nothing new.
    ("Anna visited Potsdam with her sister Masha and drank oolong tea there", "typed_memories", None),
])
def test_a_turn_is_not_restated_twice_by_an_insight_and_a_memory(tenant, memory, block, speaks) -> None:
    """Found trying the demo: the memories block showed a consolidation's insight beside one of its
    turns and, in the typed-memories block, the memory made from the other: all of it said twice."""
    from memoryhub.models import Message
    from rag import services
    from rag.models import user_namespace

    append_messages(tenant, "anna", "weekend", ["Мы с сестрой Машей ездили в Потсдам и пили там улун.",
                                                "I like oolong tea and running in the park."], start=START)
    potsdam, tea = Message.objects.filter(tenant=tenant).order_by("id")
    memories_create(tenant=tenant, user_id="anna", conf_uid="default", items=[
        MemoryInput(text=memory, kind="third_party", category="PastEvents", importance=0.9, occurred_at=START,
                    meta={"source_message_ids": [potsdam.pk]})])
    [insight] = services.chunks_create(tenant=tenant, namespace=user_namespace("anna"), drafts=[services.ChunkDraft(
        type="insight", text=INSIGHT, source_id="consolidation:1", user_id="anna", created_ts=START,
        meta={"source_message_ids": [potsdam.pk, tea.pk]})])
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", query="Potsdam and oolong tea",
                               session_id=None, budget_tokens=500)
    blocks = {b.name: b for b in context.blocks}
    rendered = context.render()
    assert rendered.count("Potsdam") == 1, rendered
    assert "I like oolong tea" in rendered and "Потсдам" not in rendered
    if speaks:
        assert speaks in rendered and memory not in rendered
    else:
        assert memory in "\n".join(i.text for i in blocks[block].items)
        assert {"ref": f"chunk:{insight.pk}", "tokens": 0, "reason": "turn_in_memories"} in blocks["memories"].cut


def test_a_typed_memory_near_the_question_in_neither_space_stays_out(tenant) -> None:
    """Found trying the demo: "What should I cook for dinner tonight?" showed "User: My name is Anna, I
    live in Berlin…" in the typed-memories block: its floor was a share of the general search's best
    BM25 score, which is 0 when no memory shares a word with the question."""
    memories_create(tenant=tenant, user_id="anna", conf_uid="default", items=[
        MemoryInput(text="User: My name is Anna, I live in Berlin and I work as a data engineer.", kind="user",
                    category="FactsAboutUser", importance=0.8, occurred_at=START)])
    unrelated = context_assemble(tenant_id=tenant.pk, user_id="anna", query="What should I cook for dinner tonight?",
                                 session_id=None, budget_tokens=500)
    typed = next(b for b in unrelated.blocks if b.name == "typed_memories")
    assert typed.items == [] and [c["reason"] for c in typed.cut] == ["below_floor"]
    related = context_assemble(tenant_id=tenant.pk, user_id="anna", query="Where does Anna live and work?",
                               session_id=None, budget_tokens=500)
    assert "Berlin" in "\n".join(i.text for b in related.blocks if b.name == "typed_memories" for i in b.items)


def test_a_typed_memory_below_its_floor_does_not_come_back_through_the_memories_block(tenant) -> None:
    """The response said `below_floor` in the typed-memories block, and the memories block, whose floor
    is lower, showed that memory all the same."""
    append_messages(tenant, "anna", "s1", ["This weekend we should hike the ridge trail and picnic by the lake."],
                    start=START)
    memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Neiri thinks a weekend is too short.", kind="self", category="SelfBeliefs",
                    importance=0.6, occurred_at=START)])
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", session_id=None, budget_tokens=500,
                               query="this weekend: hike the ridge trail, picnic by the lake?",
                               memory_filters=SearchFilters(conf_uids=("neiri",)))
    blocks = {b.name: b for b in context.blocks}
    below = {c["ref"] for c in blocks["typed_memories"].cut if c["reason"] == "below_floor"}
    assert below, blocks["typed_memories"].cut  # the weak match the case is about
    assert not below & {i.ref for i in blocks["memories"].items}
    assert below <= {c["ref"] for c in blocks["memories"].cut if c["reason"] == "below_floor"}
    assert "too short" not in context.render() and "ridge trail" in context.render()


def test_a_memory_of_a_fact_the_user_changed_comes_with_the_turn_that_changed_it(tenant) -> None:
    """A consolidated memory of "I live in Boston" reads as current as the turn did: the turn that
    states the new value comes with it (rag.context._with_corrections)."""
    from memoryhub.models import Message

    append_messages(tenant, "anna", "s1", ["I live in Boston, near the harbor."], start=START, auto_extract=True)
    append_messages(tenant, "anna", "s2", ["Big news: I moved to Seattle last week!"],
                    start=START + timedelta(days=60), auto_extract=True)
    boston = Message.objects.get(tenant=tenant, text__contains="Boston")
    memories_create(tenant=tenant, user_id="anna", conf_uid="neiri", items=[
        MemoryInput(text="Anna's home city: Boston, Massachusetts.", kind="user", occurred_at=START,
                    meta={"source_message_ids": [boston.pk]})])
    context = context_assemble(tenant_id=tenant.pk, user_id="anna", query="What is Anna's home city?",
                               session_id=None, budget_tokens=300).render()
    assert "home city: Boston" in context and "I moved to Seattle" in context, context


def test_a_turn_a_reply_brings_is_not_said_again_by_its_memory_and_insight(tenant) -> None:
    """QA (`make run`, the demo user, "Кто мой коллега?" at 150 tokens): "My colleague Petrov and I are planning
    the Q3 migration project." three times: the turn, fetched for the assistant's reply to it, then the typed
    memory and the insight restating it, which were weighed against the turns shown before the reply brought it."""
    from rag.memories import consolidation

    welcome = ["Hi! My name is Anna, I live in Berlin and I work as a data engineer.",
               ("assistant", "Nice to meet you, Anna! How can I help today?"),
               "My colleague Petrov and I are planning the Q3 migration project.",
               ("assistant", "Sounds like a big project. What is the first milestone?")]
    result = append_messages(tenant, "anna", "welcome", welcome, start=START, auto_extract=True)
    run_id = consolidation.consolidation_request(result.conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    said = "My colleague Petrov and I are planning the Q3 migration project."
    for query in ("Кто мой коллега?", "Who is my colleague?", "What project am I planning?"):
        context = context_assemble(tenant_id=tenant.pk, user_id="anna", query=query, session_id=None,
                                   budget_tokens=150)
        memories = next(b for b in context.blocks if b.name == "memories")
        assert memories.render().count(said) <= 1, (query, context.render())


@pytest.mark.parametrize(("turns", "queries", "said", "answer", "beside"), [
    (["Привет! Меня зовут Олег, я живу в Казани и работаю учителем физики.",
      ("assistant", "Приятно познакомиться, Олег! Чем могу помочь?"),
      "У меня есть дочка Аня, ей семь лет, она ходит в первый класс.", ("assistant", "Здорово! Как ей в школе?"),
      "Нравится, но она боится учительницы музыки.", ("assistant", "Понимаю, это бывает.")],
     ("Чего боится моя дочь?", "Где я живу?"), ("У меня есть дочка Аня, ей семь лет", "Меня зовут Олег"),
     "боится учительницы музыки", None),
    (["我对青霉素过敏，今天差点用错药。", ("assistant", "太危险了，一定要告诉医生。"), "我儿子豆豆开始学钢琴了。",
      ("assistant", "真棒！他几岁了？"), "六岁。"],
     ("我儿子在学什么？",), ("我儿子豆豆开始学钢琴了",), "学钢琴", "青霉素"),
])
def test_an_insight_of_turns_said_elsewhere_adds_nothing_the_query_asks(
        tenant, turns: list, queries: tuple[str, ...], said: tuple[str, ...], answer: str, beside: str | None) -> None:
    """QA as new users, offline extractors: "Чего боится моя дочь?" at 400 tokens showed the insight of the user's
    introduction and of "У меня есть дочка Аня…", which Anna's bio in the inner circle quotes whole, and "Где я
    живу?" the same insight beside the introduction; "我儿子在学什么？" the insight of the piano lessons (quoted by
    the son's bio) and of the user's penicillin allergy. What each adds beside its turns said is no word of the
    query."""
    from rag.memories import consolidation

    result = append_messages(tenant, "u1", "s1", turns, start=START, auto_extract=True)
    run_id = consolidation.consolidation_request(result.conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    for query in queries:
        context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None, budget_tokens=400)
        rendered = context.render()
        assert all(rendered.count(line) <= 1 for line in said), (query, rendered)
        memories = "\n".join(i.text for b in context.blocks if b.name == "memories" for i in b.items)
        assert beside is None or beside not in memories, (query, rendered)
    assert answer in context_assemble(tenant_id=tenant.pk, user_id="u1", query=queries[0], session_id=None,
                                      budget_tokens=400).render()
