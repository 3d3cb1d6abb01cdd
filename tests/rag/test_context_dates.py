"""A question that asks when gets a remembered turn's relative dates written out: "I went to a support group
yesterday", shown months later under its day, left the model to count back from the day header; asked "When did
I go?", it answered "yesterday". Other questions get the turn as said, since the dates cost budget."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryhub.dates import without_dates
from rag.context import context_assemble
from rag.memories.services import MemoryInput, memories_create
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
SAID = datetime(2023, 5, 8, 13, 56, tzinfo=UTC)  # a Monday

CASES = {
    "en": ("I went to a support group yesterday and it was so powerful.", "When did I go to the support group?",
           "What was the support group like?", "yesterday (2023-05-07) and it was so powerful"),
    "ru": ("Вчера я ходил в группу поддержки, и это было очень сильно.", "Когда я ходил в группу поддержки?",
           "Как прошла группа поддержки?", "Вчера (2023-05-07) я ходил в группу поддержки"),
    "zh": ("我昨天去了互助小组，感觉很有力量。", "我什么时候去的互助小组？", "互助小组怎么样？",
           "我昨天(2023-05-07)去了互助小组"),
}


def _memories(context) -> list[str]:
    return [i.text for b in context.blocks if b.name == "memories" for i in b.items]


@pytest.mark.parametrize("lang", CASES)
def test_a_when_question_gets_the_days_a_turns_relative_date_meant(tenant, lang: str) -> None:
    turn, when, what, anchored = CASES[lang]
    append_messages(tenant, "u1", "s1", [turn], start=SAID)
    dated = context_assemble(tenant_id=tenant.pk, user_id="u1", query=when, session_id=None, budget_tokens=300)
    assert any(anchored in line for line in _memories(dated)), dated.render()
    # The day header stays: the dates follow the words, they do not replace the day the turn was said.
    assert "8 May 2023:" in dated.render()
    # Asked something else, the turn is shown as said.
    plain = context_assemble(tenant_id=tenant.pk, user_id="u1", query=what, session_id=None, budget_tokens=300)
    assert any(turn in line for line in _memories(plain)), plain.render()
    assert "2023-05-07" not in plain.render()


def test_how_long_ago_is_a_when_question_too(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["I started playing acoustic guitar about five years ago."], start=SAID)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="How long ago did I start playing guitar?",
                               session_id=None, budget_tokens=300)
    assert any("five years ago (2018)" in line for line in _memories(context)), context.render()


def test_a_recurring_time_and_an_absolute_date_are_left_as_said(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["We go hiking every Sunday.", "My sister's wedding was on June 3, 2022."],
                    start=SAID)
    for query in ("When do we go hiking?", "When was my sister's wedding?"):
        context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=query, session_id=None,
                                   budget_tokens=300)
        assert "(20" not in "\n".join(_memories(context)), context.render()


@pytest.mark.parametrize(("said", "asked"), [
    ("We met at the café on Monday and will talk again on Friday.", "When did we meet at the café?"),
    ("В понедельник виделись в кафе, а в пятницу созвонимся.", "Когда мы виделись в кафе?"),
    ("周一我们在咖啡馆见面了，周五再打电话。", "我们什么时候在咖啡馆见面的？"),
])
def test_a_bare_weekday_is_left_as_said(tenant, said: str, asked: str) -> None:
    """A bare weekday or weekend is read by its sentence's tense, and a sentence that tells of both the past and
    what is ahead has none to go by: written out, one of its days would be wrong. A wrong date misleads more than
    none."""
    append_messages(tenant, "u1", "s1", [said], start=datetime(2024, 3, 6, 9, 0, tzinfo=UTC))  # a Wednesday
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=asked, session_id=None, budget_tokens=300)
    assert any(said in line for line in _memories(context)), context.render()


@pytest.mark.parametrize(("said", "asked", "written"), [
    ("I booked a dentist appointment for Monday at 9 at Bright Smile.", "When is my dentist appointment?",
     "for Monday (2024-03-04) at 9"),
    ("Я записался к стоматологу на понедельник в 9 утра.", "Когда у меня запись к стоматологу?",
     "на понедельник (2024-03-04) в 9"),
    ("我预约了周一上午九点看牙医。", "我什么时候看牙医？", "预约了周一(2024-03-04)上午"),
])
def test_a_day_something_was_booked_for_is_the_coming_one(tenant, said: str, asked: str, written: str) -> None:
    """"Booked … for Monday" is past in its verb and ahead in its day: the day booked is the coming one, read
    with certainty (it was left as said, and before that written as the Monday gone)."""
    append_messages(tenant, "u1", "s1", [said], start=datetime(2024, 3, 1, 9, 0, tzinfo=UTC))  # a Friday
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=asked, session_id=None, budget_tokens=300)
    assert any(written in line for line in _memories(context)), context.render()


def test_a_typed_memory_gets_them_too_and_a_plans_are_not_written_twice(tenant) -> None:
    memories_create(tenant=tenant, user_id="u1", conf_uid="neiri", items=[
        MemoryInput(text="Anna adopted a kitten last week", kind="user", category="PastEvents", occurred_at=SAID),
        MemoryInput(text="Anna flies to Paris next Friday (2023-05-12)", kind="user", category="FactsAboutUser",
                    occurred_at=SAID),
    ])
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="When did Anna adopt a kitten?",
                               session_id=None, budget_tokens=300)
    typed = [i.text for b in context.blocks if b.name == "typed_memories" for i in b.items]
    assert any("adopted a kitten last week (2023-05-01 – 2023-05-07)" in line for line in typed), typed
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="When does Anna fly to Paris?",
                               session_id=None, budget_tokens=300)
    typed = [i.text for b in context.blocks if b.name == "typed_memories" for i in b.items]
    assert any("next Friday (2023-05-12) " in line and line.count("(2023") == 1 for line in typed), typed
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="Did Anna adopt a kitten?",
                               session_id=None, budget_tokens=300)
    assert "2023-05-01" not in context.render()


def test_without_dates_gives_back_the_turn_as_said() -> None:
    for turn, _, _, anchored in CASES.values():
        assert without_dates(anchored) in turn
    assert without_dates("last week (2023-05-01 – 2023-05-07) and last month (2023-04)") == "last week and last month"


@pytest.mark.django_db(transaction=True)  # the evaluation indexes on commit, as the API does
def test_the_evaluation_counts_a_turn_shown_with_its_dates_as_shown() -> None:
    """`eval_retrieval --context`: evidence in context is the turn's text in the context; written out with dates
    for a "when" question, the turn is shown all the same."""
    from rag.evaluation import evaluate
    from tests.rag.test_golden import _NoProgress

    turn = CASES["en"][0]
    data = {"conversations": [{"user_id": "u1", "sessions": [{
        "session_id": "s1", "started_at": SAID.isoformat(),
        "turns": [{"id": "D1:1", "speaker": "Caroline", "text": turn},
                  {"id": "D1:2", "speaker": "Melanie", "text": "Glad it helped! The weather is lovely today."}]}]}],
        "queries": [{"user_id": "u1", "question": "When did Caroline go to the support group?", "evidence": ["D1:1"],
                     "category": "temporal"}]}
    report = evaluate(data, ks=[1], mode="hybrid", progress_factory=_NoProgress, context_budgets=[300])
    assert report.context == {300: 1.0}
