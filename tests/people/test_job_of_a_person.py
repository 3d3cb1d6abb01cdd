"""A job said of a person ("she is a doctor", "она врач", "她是医生") is what they do, not what they are to the
user: it leaves the circle the user's own cue gave them. "She is my doctor" is the user's cue, and still places
them (rule archivist, no LLM)."""

from __future__ import annotations

import pytest

from memoryhub.models import Tenant
from people.models import Person
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


def say(tenant: Tenant, *texts: str) -> None:
    """Each text a message of its own, extracted as it arrives (as a chat would)."""
    for text in texts:
        append_messages(tenant, "u1", "s1", [text], auto_extract=True)


def circle_of(tenant: Tenant, name: str) -> str:
    return Person.objects.get(tenant=tenant, user_id="u1", display_name=name, status=Person.Status.ACTIVE).circle


@pytest.mark.parametrize(("text", "names"), [
    ("My mom Olga is a doctor.", ["Olga"]),
    ("My mom is Olga, she is a doctor.", ["Olga"]),
    ("My brother Tom, he's a lawyer.", ["Tom"]),
    ("My brothers Tom and Ben, they are lawyers.", ["Tom", "Ben"]),
    ("Мою маму зовут Ольга, она врач.", ["Ольга"]),
    ("Мой брат Петя, он юрист.", ["Петя"]),
    ("我妈妈叫王丽，她是医生。", ["王丽"]),
    ("我哥哥叫张伟，他是律师。", ["张伟"]),
])
def test_a_job_keeps_the_family_circle_of_the_same_message(tenant: Tenant, text: str, names: list[str]) -> None:
    say(tenant, text)
    assert [circle_of(tenant, name) for name in names] == [Person.Circle.FAMILY] * len(names)


@pytest.mark.parametrize(("first", "then", "name"), [
    ("My mom is Olga.", "Olga, she is a doctor.", "Olga"),
    ("Мою маму зовут Ольга.", "Ольга, она врач.", "Ольга"),
    ("我妈妈叫王丽。", "王丽，她是医生。", "王丽"),
])
def test_a_job_said_later_keeps_the_known_circle(tenant: Tenant, first: str, then: str, name: str) -> None:
    say(tenant, first, then)
    assert circle_of(tenant, name) == Person.Circle.FAMILY


@pytest.mark.parametrize(("text", "name"), [
    ("My mom is Olga, she is my doctor.", "Olga"),
    ("Мою маму зовут Ольга, она мой врач.", "Ольга"),
    ("我妈妈叫王丽，她是我的医生。", "王丽"),
])
def test_the_users_own_doctor_still_takes_the_doctors_circle(tenant: Tenant, text: str, name: str) -> None:
    say(tenant, text)
    assert circle_of(tenant, name) == Person.Circle.OTHER


@pytest.mark.parametrize(("text", "name", "circle"), [
    ("Tom Baker, he is my doctor.", "Tom Baker", Person.Circle.OTHER),
    ("Утром заходил Олег Борисович, он руководитель проекта.", "Олег Борисович", Person.Circle.WORK_INNER),
    ("张伟，他是我的医生。", "张伟", Person.Circle.OTHER),
])
def test_a_role_still_places_a_person_without_a_circle(tenant: Tenant, text: str, name: str, circle: str) -> None:
    say(tenant, text)
    assert circle_of(tenant, name) == circle
