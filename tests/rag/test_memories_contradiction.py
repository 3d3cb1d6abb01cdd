"""Typed memories that a newer one contradicts: consolidation supersedes the older (kept as a record in the
newer memory, gone from search and context), en/ru/zh, and leaves unrelated memories alone."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from memoryhub.models import Conversation
from rag.context import context_assemble
from rag.memories import consolidation
from rag.memories.contradiction import statement, supersedes
from rag.memories.services import MemoryInput, memories_create
from rag.models import Chunk, MemoryConsolidation
from rag.selectors import SearchFilters, chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

EARLY = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)
LATER = datetime(2024, 6, 1, 8, 0, tzinfo=UTC)
MEMORIES = SearchFilters(types=("memory",))

# (older statement, newer statement that says the opposite, a query about them)
CHANGES = [
    ("I love rock music.", "I don't like rock music anymore.", "rock music"),
    ("Я люблю рок-музыку.", "Я больше не люблю рок-музыку.", "рок-музыка"),
    ("我喜欢摇滚音乐。", "我不再喜欢摇滚音乐了。", "摇滚音乐"),
]
# (a held memory the run contradicts, one it must leave alone, the contradiction, a near but other statement)
UNRELATED = [
    ("I love rock music.", "I love jazz.", "I don't like rock music anymore.", "Remember that my sister hates jazz."),
    ("I love rock music.", "I love jazz.", "I don't like rock music anymore.", "I don't like jazz concerts anymore."),
    ("Я люблю рок-музыку.", "Я люблю джаз.", "Я больше не люблю рок-музыку.", "Я больше не люблю джазовые концерты."),
    ("我喜欢摇滚音乐。", "我喜欢爵士乐。", "我不再喜欢摇滚音乐了。", "我姐姐不喜欢爵士乐。"),
]

def _consolidate(tenant, session: str, texts: list[str], start: datetime) -> MemoryConsolidation:
    append_messages(tenant, "alex", session, texts, start=start)
    conversation = Conversation.objects.get(tenant=tenant, user_id="alex", session_id=session)
    run_id = consolidation.consolidation_request(conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    return MemoryConsolidation.objects.get(pk=run_id)


def _facts(tenant) -> list[Chunk]:
    return list(Chunk.objects.filter(tenant=tenant, type="memory", category="FactsAboutUser").order_by("id"))


@pytest.mark.parametrize(("older", "newer", "query"), CHANGES)
def test_a_newer_statement_supersedes_the_older_in_search_and_context(tenant, older, newer, query) -> None:
    _consolidate(tenant, "s1", [older], EARLY)
    [old] = _facts(tenant)
    # Searched once before, so the in-process caches hold the old memory and must drop it.
    before = chunks_search(tenant_id=tenant.pk, user_id="alex", query=query, k=10, filters=MEMORIES)
    assert old.pk in {i.chunk["id"] for i in before.items}

    run = _consolidate(tenant, "s2", [newer], LATER)

    [new] = _facts(tenant)
    assert new.text.endswith(newer) and not Chunk.objects.filter(pk=old.pk).exists()
    found = chunks_search(tenant_id=tenant.pk, user_id="alex", query=query, k=10, filters=MEMORIES)
    assert new.pk in {i.chunk["id"] for i in found.items}
    assert old.pk not in {i.chunk["id"] for i in found.items}
    context = context_assemble(tenant_id=tenant.pk, user_id="alex", query=query, session_id=None)
    typed = next(b for b in context.blocks if b.name == "typed_memories")
    assert any(newer in item.text for item in typed.items)
    assert f"chunk:{old.pk}" not in {item.ref for block in context.blocks for item in block.items}
    # Kept as history: the newer memory's record of the older says what superseded it and why.
    [record] = new.meta["supersedes"]
    assert record["memory_id"] == str(old.memory_uid) and record["text"] == old.text
    assert record["superseded_by"] == str(new.memory_uid) and newer in record["reason"]
    assert record["said_at"] == EARLY.isoformat() and record["category"] == "FactsAboutUser"
    [audit] = run.result["superseded"]
    assert audit["memory_id"] == str(old.memory_uid) and audit["superseded_by"] == str(new.memory_uid)


@pytest.mark.parametrize(("older", "kept", "newer", "other"), UNRELATED)
def test_only_the_contradicted_memory_goes(tenant, older, kept, newer, other) -> None:
    """Something or someone else ("jazz concerts", "my sister") hides nothing, in the run that supersedes."""
    _consolidate(tenant, "s1", [older, kept], EARLY)
    run = _consolidate(tenant, "s2", [newer, other], LATER)
    texts = list(Chunk.objects.filter(tenant=tenant, type="memory").values_list("text", flat=True))
    assert not any(t.endswith(older) for t in texts)
    assert all(any(t.endswith(said) for t in texts) for said in (kept, newer, other))
    assert [entry["text"] for entry in run.result["superseded"]] == [f"User: {older}"]


def test_the_models_memories_the_newer_wins_and_the_run_records_it(tenant, llm) -> None:
    """The QA pass's pair, as a model writes them (no speaker label, the user's nickname as the subject)."""
    empty = {"past_events": [], "self_beliefs": [], "objectives": [], "emotions": [], "key_facts": []}
    llm.script_chat({**empty, "facts_about_user": ["Alex loves rock music."]},
                    {**empty, "facts_about_user": ["Alex does not like rock music anymore."]})
    _consolidate(tenant, "s1", ["Rock is my thing!"], EARLY)
    [old] = _facts(tenant)
    run = _consolidate(tenant, "s2", ["Honestly, rock bores me now."], LATER)
    [new] = _facts(tenant)
    assert new.text == "Alex does not like rock music anymore."
    assert new.meta["supersedes"][0]["text"] == "Alex loves rock music."
    assert run.result["superseded"][0]["memory_id"] == str(old.memory_uid)


def test_in_one_window_the_later_statement_is_the_memory(tenant) -> None:
    _consolidate(tenant, "s1", ["Я люблю рок-музыку.", "Но за этот год всё изменилось.",
                                "Я больше не люблю рок-музыку."], EARLY)
    [fact] = _facts(tenant)
    assert fact.text.endswith("Я больше не люблю рок-музыку.")
    assert fact.meta["supersedes"][0]["text"].endswith("Я люблю рок-музыку.")
    assert fact.meta["supersedes"][0]["memory_id"] is None  # it never was a memory of its own


def test_an_older_conversation_consolidated_late_does_not_undo_a_newer_memory(tenant) -> None:
    """A history imported after the fact: the memory said later stays, the older statement is history."""
    [held] = memories_create(tenant=tenant, user_id="alex", conf_uid="default", items=[MemoryInput(
        text="User: 我不再喜欢摇滚音乐了。", kind="user", category="FactsAboutUser", occurred_at=LATER)])
    run = _consolidate(tenant, "s-old", ["我喜欢摇滚音乐。"], EARLY)
    assert [c.pk for c in _facts(tenant)] == [held.pk]
    [audit] = run.result["superseded"]
    assert audit["text"] == "User: 我喜欢摇滚音乐。" and audit["superseded_by"] == str(held.memory_uid)


@pytest.mark.parametrize(("older", "newer", "why"), [
    ("User: I love rock music.", "User: I hate rock music now.", "says the opposite"),
    ("User: I smoke.", "User: I quit smoking.", "says the opposite"),
    ("User: I love rock music.", "User: I used to love rock music.", "says the opposite"),
    ("Alex prefers black tea.", "Alex now prefers green tea to black tea.", "states a new preference"),
    ("User: Я терпеть не могу рок.", "User: Теперь я люблю рок.", "says the opposite"),
    ("User: Я курю.", "User: Я бросил курить.", "says the opposite"),
    ("User: 我爱喝咖啡。", "User: 我已经不爱喝咖啡了。", "says the opposite"),
    ("User: 我讨厌摇滚。", "User: 我现在喜欢摇滚。", "says the opposite"),
    # Both stand: a restatement, another object, a preference that does not name the old one, two claims.
    ("User: I love rock music.", "User: I really love rock music!", ""),
    ("Alex prefers black tea.", "Alex now prefers green tea.", ""),
    ("User: I'm used to rock music.", "User: I love rock music.", ""),
    ("User: I love rock music.", "User: I don't love rock music, but I like jazz.", ""),
    ("User: Я люблю рок.", "User: Я не люблю рок-музыку?", ""),
    ("User: 我喜欢摇滚音乐。", "User: 我不喜欢摇滚音乐，但是喜欢爵士乐。", ""),
])
def test_what_counts_as_a_contradiction(older, newer, why) -> None:
    subjects = frozenset({"alex"})
    assert supersedes(statement(newer, subjects), statement(older, subjects)) == why


def test_the_admin_shows_what_a_memory_superseded(tenant) -> None:
    _consolidate(tenant, "s1", ["Я люблю рок-музыку."], EARLY)
    _consolidate(tenant, "s2", ["Я больше не люблю рок-музыку."], LATER)
    [new] = _facts(tenant)
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("editor", "editor@example.com", "pw"))
    page = client.get(f"/admin/rag/typedmemory/{new.pk}/change/").content.decode()
    assert "“User: Я люблю рок-музыку.” (said 2024-05-01" in page
