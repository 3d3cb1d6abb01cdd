"""A relative's name said through "name is" ("My sister's name is Emma", "我姐姐的名字是小美"), and questions
about relatives ("what's my sister's name?"), which state nothing: no unnamed-kin person, nothing in a bio."""

from __future__ import annotations

import pytest

from memoryhub.models import Tenant
from people.archivist.tokens import is_question
from people.models import Person
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


def say(tenant: Tenant, *texts: str) -> None:
    """Each text a message of its own, extracted as it arrives (as a chat would)."""
    for text in texts:
        append_messages(tenant, "u1", "s1", [text], auto_extract=True)


def people(tenant: Tenant) -> dict[str, Person]:
    return {p.display_name: p for p in Person.objects.filter(tenant=tenant, user_id="u1",
                                                              status=Person.Status.ACTIVE)}


# --- "my sister's name is Emma": one person, the relative ---------------------------------------------------


# The kin word becomes an alias only for a relative the user has one of ("Mom", "мама", "妈妈"), as "my mom
# Olga" makes it: "Sister" would name every sister.
@pytest.mark.parametrize(("text", "name", "aliases"), [
    ("My sister's name is Emma.", "Emma", []),
    ("My brother's name is Tom", "Tom", []),
    ("my mom's name is Olga", "Olga", ["Mom"]),
    ("My dad's name's Viktor.", "Viktor", ["Dad"]),
    ("My sister Emma lives in Portland.", "Emma", []),
    ("Мою сестру зовут Аня", "Аня", []),
    ("Сестру мою зовут Аня", "Аня", []),
    ("Мою маму зовут Ольга", "Ольга", ["мама"]),
    ("我姐姐叫小美", "小美", []),
    ("我姐姐的名字是小美", "小美", []),
    ("我姐姐的名字叫小美", "小美", []),
    ("我妈妈的名字是王丽", "王丽", ["妈妈"]),
])
def test_a_relatives_stated_name_makes_one_family_person(tenant: Tenant, text: str, name: str,
                                                         aliases: list[str]) -> None:
    say(tenant, text)
    found = people(tenant)
    assert set(found) == {name}
    assert found[name].circle == "Family"
    assert found[name].aliases == aliases


def test_someone_elses_relatives_name_is_a_relation_not_the_users_family(tenant: Tenant) -> None:
    say(tenant, "Tom's wife's name is Maria.")
    found = people(tenant)
    assert "Maria" in found
    assert found["Maria"].circle != "Family"


# --- questions state nothing -------------------------------------------------------------------------------


@pytest.mark.parametrize("question", [
    "what's my sister's name?",
    "Does my brother know about this?",
    "Как зовут мою сестру?",
    "Брат уже знает?",
    "我姐姐叫什么名字？",
    "我哥哥知道这件事吗",
])
def test_a_question_about_an_unnamed_relative_makes_no_person(tenant: Tenant, question: str) -> None:
    say(tenant, question)
    assert people(tenant) == {}


@pytest.mark.parametrize(("statement", "question", "name"), [
    ("My sister Emma lives in Portland.", "what's my sister's name?", "Emma"),
    ("My mom Olga is a nurse.", "Did my mom call today?", "Olga"),
    ("Мою маму зовут Ольга, она врач.", "Мама уже звонила?", "Ольга"),
    ("我妈妈叫王丽，她是医生。", "我妈妈今天打电话了吗？", "王丽"),
])
def test_a_question_adds_nothing_to_a_relatives_bio(tenant: Tenant, statement: str, question: str,
                                                    name: str) -> None:
    say(tenant, statement)
    before = people(tenant)[name].bio
    say(tenant, question)
    found = people(tenant)
    assert set(found) == {name}
    assert found[name].bio == before


@pytest.mark.parametrize(("question", "name"), [
    ("Did Anna call?", "Anna"),
    ("Маша уже звонила?", "Маша"),
    ("王芳打电话了吗？", "王芳"),
])
def test_a_named_person_in_a_question_counts_a_mention_without_a_bio(tenant: Tenant, question: str,
                                                                      name: str) -> None:
    say(tenant, question)
    found = people(tenant)
    assert set(found) == {name}
    assert found[name].mention_count == 1
    assert found[name].bio == name  # the default bio of a person nothing was said about


def test_a_bot_question_the_user_confirms_states_what_it_asks(tenant: Tenant) -> None:
    append_messages(tenant, "u1", "s1", [("assistant", "Did Anna call you from Berlin?"), "Yes"],
                    auto_extract=True)
    assert "Did Anna call you from Berlin?" in people(tenant)["Anna"].bio


@pytest.mark.parametrize(("sentence", "asks"), [
    ("what's my sister's name?", True),
    ("Как зовут мою сестру?", True),
    ("我姐姐叫什么名字？", True),
    ("我哥哥知道这件事吗", True),
    ("Does my brother know about this?\u201d", True),
    ("My sister Emma is coming, right?", False),
    ("Сестра Аня приедет в субботу, да?", False),
    ("我姐姐小美下周来，对吧？", False),
    ("My sister's name is Emma.", False),
    ("吗啡是一种药", False),
])
def test_is_question(sentence: str, asks: bool) -> None:
    assert is_question(sentence) is asks
