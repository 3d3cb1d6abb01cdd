"""A question in the base form finds the turn that told it in the past (memoryhub/verbforms.py): "How did my
run go?" finds "Ran my first 10k today!", which Snowball stems apart from "run"."""

from __future__ import annotations

import gzip
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memoryhub import verbforms
from rag.selectors import chunks_search
from tests.factories import append_messages

START = datetime(2026, 9, 1, 18, 0, tzinfo=UTC)


@pytest.mark.parametrize(("verb", "forms"), [
    ("run", ("ran",)), ("buy", ("bought",)), ("begin", ("began", "begun")), ("win", ("won",)),
    ("meet", ("met",)), ("fly", ("flew", "flown")),
])
def test_the_table_gives_a_verbs_irregular_past_forms(verb: str, forms: tuple[str, ...]) -> None:
    assert verbforms.past_forms(verb) == forms


@pytest.mark.parametrize("verb", ["walk", "visit", "read", "cut", "carry", "paint"])
def test_a_regular_verb_or_one_whose_past_stems_alike_has_none(verb: str) -> None:
    # "read"/"read" and "cut"/"cut" stem alike; "carried" and "painted" are the regular spelling.
    assert verbforms.past_forms(verb) == ()


def test_a_question_asks_for_its_verbs_past_forms_but_not_the_light_verbs() -> None:
    assert verbforms.past_terms("How did my run go?") == ["ran"]
    assert verbforms.past_terms("What did Melanie buy for her kids?") == ["bought"]
    # The frame of a question ("did she say", "how did it go", "what did he make") asks for nothing more.
    assert verbforms.past_terms("What did she say when it was time to go and make dinner?") == []
    assert verbforms.past_terms("I ran yesterday") == []  # no base form said


def test_the_table_is_built_from_the_inflection_lookup(tmp_path: Path) -> None:
    lookup = tmp_path / "infl_lu.csv.gz"
    with gzip.open(lookup, "wt", encoding="utf-8") as fh:
        fh.write("run,noun,runs\n"
                 "run,verb,ran,ran,running,runs\n"
                 "alias,verb,aliased,,aliasing,aliases\n"  # regular: left out
                 "walk,verb,walked,walked,walking,walks\n"
                 "Bob,verb,Bobbed,,,\n"  # not a lowercase word
                 "go,verb,went,gone,going,goes\n"
                 "burn,verb,burned/burnt,burnt,burning,burns\n")
    (tmp_path / "infl_overrides.csv").write_text("run,VBN,run\n", encoding="utf-8")
    rows = verbforms.build_table(lookup)
    assert rows == [("burn", ("burnt",)), ("go", ("gone", "went")), ("run", ("ran",))]
    out = tmp_path / "table.tsv"
    verbforms.write_table(rows, out)
    assert out.read_text(encoding="utf-8") == "burn\tburnt\ngo\tgone went\nrun\tran\n"


@pytest.mark.django_db
def test_how_did_my_run_go_finds_the_turn_that_says_ran(tenant) -> None:
    """QA as a chat app: "Ran my first 10k today! 52 minutes." was not in the context for "How did my run go?",
    which showed the user's introduction (its "How's the first week going?") instead."""
    append_messages(tenant, "u1", "s1", [
        "Hey! I'm Mark. I just started a new job as a backend developer, remote.",
        ("assistant", "Congrats on the new job, Mark! How's the first week going?"),
        "Good so far. The codebase is huge though."], start=START)
    append_messages(tenant, "u1", "s2", ["Ran my first 10k today! 52 minutes.",
                                         ("assistant", "Congratulations! That's a solid time.")],
                    start=datetime(2026, 11, 8, 11, 0, tzinfo=UTC))
    append_messages(tenant, "u1", "s3", ["Went to the gym this morning, back to deadlifts."],
                    start=datetime(2026, 11, 9, 8, 0, tzinfo=UTC))
    result = chunks_search(tenant_id=tenant.pk, user_id="u1", query="How did my run go?", k=3, mode="hybrid")
    assert result.items[0].chunk["text"] == "Ran my first 10k today! 52 minutes."


@pytest.mark.django_db
def test_a_conversation_given_as_the_query_asks_for_no_past_forms(tenant) -> None:
    """Dialogue queries are read as they are (MADial's memories say "felt", "made", "went" in every line)."""
    append_messages(tenant, "u1", "m1", ["He won the prize."], start=START)
    append_messages(tenant, "u1", "m2", ["We ate dinner outside."], start=START)
    question = chunks_search(tenant_id=tenant.pk, user_id="u1", query="Did he win?", k=2, mode="bm25")
    assert [i.chunk["text"] for i in question.items] == ["He won the prize."]
    dialogue = "<Bart>: I want to win!\n<Assistant>: You will.\n<Bart>: Then I eat."
    assert chunks_search(tenant_id=tenant.pk, user_id="u1", query=dialogue, k=2, mode="bm25").items == []
