"""Who a context's question asks about comes first in the inner circle, when the people's bios share the sentence
that introduced them (QA, `make run`, a Russian user: "У меня сын Тимофей, ему 7, и муж Артём." is in both bios,
and "Что приготовить сыну на ужин?" put the husband, with more mentions, first, his bio using the room the son's
allergy needed), or when the question calls them by a diminutive ("Когда у Тимохи плавание?")."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from people.selectors import relation_name_terms
from rag.context import context_assemble
from tests.factories import append_messages

pytestmark = pytest.mark.django_db
START = datetime(2026, 10, 1, 10, 0, tzinfo=UTC)

FAMILY = {
    "en": (["My son Tim is 7 and my husband Tom is a chef.", "Tom cooked paella on Sunday.",
            "Tom is opening a bistro.", "Tim is allergic to peanuts."],
           "What should I cook for my son tonight?", "Tim"),
    "ru": (["У меня сын Тимофей, ему 7, и муж Артём.", "Артём вчера приготовил плов.",
            "Артёму предложили работу в Яндексе.", "У Тимофея аллергия на арахис."], "Что приготовить сыну на ужин?",
           "Тимофей"),
    "zh": (["我儿子小明七岁，我老公张伟是厨师。", "张伟昨天做了红烧肉。", "张伟要开一家餐厅。", "小明对花生过敏。"],
           "给儿子做什么晚饭好？", "小明"),
}


def _circle(context) -> list[str]:
    return [i.text for b in context.blocks if b.name == "inner_circle" for i in b.items]


@pytest.mark.parametrize("lang", FAMILY)
def test_the_relative_a_question_names_by_kin_comes_first(tenant, lang: str) -> None:
    turns, question, child = FAMILY[lang]
    append_messages(tenant, "u1", "s1", turns, start=START, auto_extract=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=question, session_id=None, budget_tokens=90)
    assert _circle(context) and f"] {child} " in _circle(context)[0], context.render()


def test_the_relative_beside_the_kin_word_is_the_one_it_names(tenant) -> None:
    turns, question, _ = FAMILY["en"]
    append_messages(tenant, "u1", "s1", turns, start=START, auto_extract=True)
    assert relation_name_terms(tenant_id=tenant.pk, user_id="u1", query=question) == ["tim"]


@pytest.mark.parametrize(("question", "terms"), [
    ("Когда у Тимохи плавание?", {"тимоф"}),
    ("Is Mike coming to the party?", {"michael"}),
    ("Когда у Тимофея плавание?", {"тимоф"}),  # a full name stands for itself
    ("周末小明有什么安排？", set()),  # Chinese names have no diminutives in the table
])
def test_a_diminutive_in_a_question_asks_about_the_full_name(question: str, terms: set[str]) -> None:
    from people.selectors import full_name_terms

    assert full_name_terms(question) == terms


def test_the_person_a_diminutive_names_comes_first(tenant) -> None:
    turns, _, _ = FAMILY["ru"]
    append_messages(tenant, "u1", "s1", [*turns, "Тимофей записался на плавание, ходит по вторникам.",
                                         "Артём купил новую машину.", "Артём теперь встаёт в шесть утра."],
                    start=START, auto_extract=True)
    # No word of the question is in his bio: only the diminutive names him.
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query="Что нового у Тимохи?", session_id=None,
                               budget_tokens=90)
    assert _circle(context) and "] Тимофей " in _circle(context)[0], context.render()


NAMED_FRIEND = {
    "en": (["My wife Jess teaches 3rd grade and coaches the school's chess club on Thursdays after class.",
            "Our son Leo turns 4 next week, and he is allergic to eggs, which makes birthday cakes tricky.",
            "Had coffee with Priyanka, my old roommate from college."], "Who is Priyanka?", "Priyanka"),
    "ru": (["Моя жена Лена преподаёт в третьем классе и по четвергам ведёт шахматный кружок после уроков.",
            "Нашему сыну Лёве в следующем месяце четыре, у него аллергия на яйца, торт на день рождения печь сложно.",
            "Пили кофе с Полиной, моей соседкой по общежитию в универе."], "Кто такая Полина?", "Полина"),
    "zh": (["我老婆王芳是小学三年级的老师，每周四下课后还带学校的象棋社团。",
            "我们儿子乐乐下周满四岁，他对鸡蛋过敏，生日蛋糕很难做。",
            "和大学室友林晓喝了咖啡。"], "林晓是谁？", "林晓"),
}


@pytest.mark.parametrize("lang", NAMED_FRIEND)
def test_someone_the_question_names_comes_before_the_rest_of_the_inner_circle(tenant, lang: str) -> None:
    """QA (`make run`, an English user): "Who is Priyanka?" at 150 tokens gave the room the memories left to the
    wife's and the son's whole bios, and Priyanka's line stayed cut (here at 100: no profile facts)."""
    turns, question, name = NAMED_FRIEND[lang]
    append_messages(tenant, "u1", "s1", turns, start=START, auto_extract=True)
    context = context_assemble(tenant_id=tenant.pk, user_id="u1", query=question, session_id=None, budget_tokens=100)
    people = [i.text for b in context.blocks if b.name == "relevant_people" for i in b.items]
    assert any(f"] {name} " in line for line in people), context.render()
