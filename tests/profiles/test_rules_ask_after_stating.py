"""A fact stated before a question in one sentence is a fact: chat states its context, then asks.

Found by a QA pass: "I'm allergic to shellfish, can you suggest a Halloween party dish?" gave no allergy, the
sentence being a question as a whole; so did "У меня аллергия на орехи, что можно приготовить?" and
"我对芒果过敏，有什么水果推荐吗？".
"""

from __future__ import annotations

import pytest

from profiles.rules import extract


def facts(text: str) -> set[tuple[str, str]]:
    return {(f.key, f.value) for f in extract(text)}


@pytest.mark.parametrize(("text", "fact"), [
    ("I'm allergic to shellfish, can you suggest a Halloween party dish?", ("allergies", "shellfish")),
    ("I'm vegetarian, any ideas for dinner?", ("diet", "vegetarian")),
    ("I live in Denver, what should I do this weekend?", ("location", "Denver")),
    ("У меня аллергия на орехи, что можно приготовить?", ("allergies", "орехи")),
    ("Я живу в Казани, куда сходить в выходные?", ("location", "Казань")),
    ("我对芒果过敏，有什么水果推荐吗？", ("allergies", "芒果")),
    ("我住在杭州，周末去哪儿玩好？", ("location", "杭州")),
])
def test_what_is_stated_before_the_question_is_a_fact(text: str, fact: tuple[str, str]) -> None:
    assert facts(text) == {fact}


@pytest.mark.parametrize("text", [
    "Are you allergic to shellfish?", "Do you think I'm allergic to nuts, or is it something else?",
    "What if I'm allergic to shellfish, should I worry?", "My sister is vegan, what should I cook for her?",
    "Как думаешь, у меня аллергия на орехи?", "Если я живу в Казани, куда сходить?",
    "你觉得我是不是对芒果过敏，还是别的原因？", "So, what do you think?",
])
def test_a_question_about_the_fact_is_none(text: str) -> None:
    assert facts(text) == set()
