"""A question that names someone is answered by what they said: in a group chat or a game session
"what does Melanie paint?" wants Melanie's turn before Caroline's turn that names Melanie; asked of
the user by their own name, the user's turns before the assistant's."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime, timedelta

import pytest

from memoryhub import services
from memoryhub.search import config as search_config
from profiles.services import fact_upsert
from rag import selectors
from rag.selectors import chunks_search
from tests.knowledge_config import assert_rejected

pytestmark = pytest.mark.django_db
START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def _said(tenant, user_id: str, turns: list[tuple[str, str, str]]) -> None:
    """(role, speaker, text) turns of one session, indexed as a worker would."""
    messages = [services.IncomingMessage(role=role, speaker=speaker, text=text, created_at=START + timedelta(minutes=i))
                for i, (role, speaker, text) in enumerate(turns)]
    result = services.messages_append(tenant=tenant, user_id=user_id, session_id="s1", messages=messages)
    services.archival_job_run(job_id=result.job.pk)


def _first(tenant, user_id: str, query: str):
    return chunks_search(tenant_id=tenant.pk, user_id=user_id, query=query, k=5).items[0]


@pytest.fixture
def without_speaker_boost(monkeypatch):
    real = selectors.retrieval_config

    def config(domain: str = "default"):
        return dataclasses.replace(real(domain), speaker_boost=0.0)

    monkeypatch.setattr(selectors, "retrieval_config", config)


# Small talk first, so that a speaker's name is on half the turns, as in a real chat (its idf is low).
SMALL_TALK = ["How was your week?", "Pretty busy with work", "The kids are fine", "Как прошла неделя?",
              "Много работы", "这周过得怎么样？", "工作很忙"]


def _chat(first: str, second: str, said_first: str, said_second: str, closer: str) -> list[tuple[str, str, str]]:
    talk = [("user", first if i % 2 == 0 else second, text) for i, text in enumerate(SMALL_TALK)]
    return [*talk, ("user", first, said_first), ("user", second, said_second), ("user", closer, "OK")]


# (turns, question, the answer's words): in the first three the other speaker's turn says the name and
# the question's words, and wins on words alone; in the last "Jake" names "Jake Miller" (a label's
# first word is enough).
GROUP_CHATS = [
    (_chat("Caroline", "Melanie", "Melanie, you should see the landscapes I paint, painting is my whole weekend",
           "I paint landscapes too, mostly sunsets by the lake", "Caroline"),
     "What does Melanie paint?", "sunsets"),
    (_chat("Маша", "Света", "Моё хобби — вязание носков", "Маша, вязание — классное хобби!", "Света"),
     "Какое хобби у Маши?", "носков"),
    (_chat("小李", "小王", "小王，我的爱好是做饭", "我的爱好也是做饭，拿手菜是红烧肉", "小李"),
     "小王的爱好是什么？", "红烧肉"),
    (_chat("Anna", "Jake Miller", "Jake collects records, I collect stamps and records", "I collect vinyl records",
           "Anna"),
     "What records does Jake collect?", "vinyl"),
]


@pytest.mark.parametrize(("turns", "query", "answer"), GROUP_CHATS)
def test_a_question_naming_a_speaker_finds_what_they_said_first(tenant, turns, query, answer) -> None:
    _said(tenant, "room", turns)
    top = _first(tenant, "room", query)
    assert answer in top.chunk["text"]
    assert top.components["speaker"] == pytest.approx(1 + search_config.retrieval_config("dialog").speaker_boost)


@pytest.mark.parametrize(("turns", "query", "answer"), GROUP_CHATS[:3])
def test_without_the_factor_the_turn_that_names_them_wins(tenant, without_speaker_boost, turns, query,
                                                           answer) -> None:
    """What the factor is for."""
    _said(tenant, "room", turns)
    top = _first(tenant, "room", query)
    assert answer not in top.chunk["text"]
    assert "speaker" not in top.components


def test_the_users_own_name_favours_the_users_turns(tenant) -> None:
    _said(tenant, "u1", [
        ("assistant", "", "Kate, climbing is a great sport, climbing gyms are everywhere now"),
        ("user", "", "I go climbing on weekends"),
        ("assistant", "", "Have fun!"),
    ])
    fact_upsert(tenant=tenant, user_id="u1", key="name", value="Kate", source="api")
    top = _first(tenant, "u1", "Does Kate do any climbing?")
    assert top.chunk["text"] == "I go climbing on weekends"
    assert "speaker" in top.components
    # Not named, not favoured: the same question about someone else leaves the order to the words.
    other = chunks_search(tenant_id=tenant.pk, user_id="u1", query="Does Priya do any climbing?", k=5).items
    assert all("speaker" not in item.components for item in other)


def test_a_conversation_as_the_query_favours_no_one(tenant) -> None:
    _said(tenant, "room", GROUP_CHATS[0][0])
    query = "Melanie: I want to paint something new\nCaroline: Maybe landscapes?"
    items = chunks_search(tenant_id=tenant.pk, user_id="room", query=query, k=5).items
    assert items
    assert all("speaker" not in item.components for item in items)


@pytest.mark.parametrize(("written", "wrong", "named"), [
    ("speaker: 0.0 ", "speaker: -1 ", r"boosts\.speaker"),
    # The assistant's factor lies in (0, 1]: 0 would hide its turns, above 1 favour them.
    ("assistant: 0.8,", "assistant: 0,", r"boosts\.assistant"),
    ("assistant: 0.8,", "assistant: 1.5,", r"boosts\.assistant"),
    ("assistant: 0.8,", "assistant: -0.2,", r"boosts\.assistant"),
    # So does the filler's: 0 would hide a thanks even from a search for it.
    ("filler: 0.5}", "filler: 0}", r"boosts\.filler"),
    ("filler: 0.5}", "filler: 1.5}", r"boosts\.filler"),
])
def test_a_factor_out_of_its_range_is_a_configuration_error(tmp_path, settings, written: str, wrong: str,
                                                            named: str) -> None:
    assert_rejected(settings, tmp_path, written, wrong, named)


def test_the_assistants_echo_of_a_statement_weighs_less_than_the_statement(tenant) -> None:
    """The reply echoing what the user said is short and carries the user's turn before it, so it
    outranked the statement; its factor shows as the `assistant` component, whatever the question."""
    _said(tenant, "u1", [("user", "", "Good morning!"), ("user", "", "We went hiking in the hills on Sunday."),
                         ("user", "", "I started learning the violin last month, my teacher is great."),
                         ("assistant", "", "That sounds fun, how is the violin going?"),
                         ("user", "", "Work was busy this week.")])
    for query in ("violin", "What did I say about the violin?",
                  "Me: I want to practise more\nAssistant: How is the violin going?"):
        items = chunks_search(tenant_id=tenant.pk, user_id="u1", query=query, k=5).items
        reply = next(i for i in items if i.chunk["role"] == "assistant")
        assert reply.components["assistant"] == 0.8, query
        assert all("assistant" not in i.components for i in items if i.chunk["role"] == "user")
