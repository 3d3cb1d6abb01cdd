"""Work roles in the rule archivist (and the LLM's reply): whom the user works for is a person or a company by
the name's shape ("I work for Kowalski" / "I work for Stripe"), and a relative who is also the user's boss stays
in Family ("My sister Anna … Anna is my manager now")."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest

from memoryhub.models import Tenant
from people import services
from people.models import Person
from tests.factories import append_messages
from tests.llm_server import OpenAICompatServer

pytestmark = pytest.mark.django_db


def say(tenant: Tenant, *texts: str) -> None:
    """Each text a message of its own, extracted as it arrives (as a chat would)."""
    for text in texts:
        append_messages(tenant, "u1", "s1", [text], auto_extract=True)


def say_at_once(tenant: Tenant, *texts: str) -> None:
    """The texts as messages of one batch, extracted together (as the session-size or idle trigger does)."""
    append_messages(tenant, "u1", "s1", list(texts), auto_extract=True)


def circles(tenant: Tenant) -> dict[str, str]:
    return dict(Person.objects.filter(tenant=tenant, user_id="u1", status=Person.Status.ACTIVE)
                .values_list("display_name", "circle"))


def person(name: str) -> Person:
    return Person.objects.get(display_name=name, status=Person.Status.ACTIVE)


# --- whom the user works for ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("texts", "expected"), [
    # A surname's shape is the boss; a firm's word, a firm wearing a surname, an English word are no one.
    (["I work for Kowalski.", "Before that I worked for Kaspersky.", "I worked for Zorblax Labs too.",
      "I also worked for Virgin."], {"Kowalski": "Work_Inner"}),
    (["I work for Jan Kowalski now."], {"Jan Kowalski": "Work_Inner"}),
    (["I work for Ivanova.", "I worked for Alaska before."], {"Ivanova": "Work_Inner"}),
    # Russian says it by the case: a person in the accusative, a firm in the nominative's form.
    (["Я работаю на Ковальчука.", "Раньше работал на Тинькофф.", "Ещё работал на Зорбликс."],
     {"Ковальчук": "Work_Inner"}),
    # Chinese by the frame, said of the user: a company is no name the finders take, a brother's boss no one's.
    (["我给王强打工。", "以前我给腾讯打工。", "我弟弟在李总手下工作。"], {"王强": "Work_Inner", "弟弟": "Family"}),
    (["我在李总手下工作。"], {"李总": "Work_Inner"}),
    (["我现在给老王干活。"], {"老王": "Work_Inner"}),
])
def test_whom_the_user_works_for_is_a_person_by_the_names_shape(tenant: Tenant, texts: list[str],
                                                                 expected: dict[str, str]) -> None:
    say(tenant, *texts)
    assert circles(tenant) == expected


@pytest.mark.parametrize("texts", [
    ["I work for Harrison.", "She is tough but fair."],
    ["I work for Harrison now, he is tough but fair."],
    ["Harrison yelled at me again, he never listens.", "I work for Harrison."],
])
def test_a_name_the_conversation_calls_he_or_she_is_the_boss(tenant: Tenant, texts: list[str]) -> None:
    """Within the batch the archivist reads: an earlier batch's "I work for Harrison" added no one to refer to."""
    say_at_once(tenant, *texts)
    assert circles(tenant) == {"Harrison": "Work_Inner"}


def test_it_or_they_or_someone_else_between_leaves_the_word_a_workplace(tenant: Tenant) -> None:
    say_at_once(tenant, "I work for Harrison. She is tough but fair.", "My husband works for Zorblax, they make games.",
                "Dana works for Brennan, and my sister says she is nice.")
    assert circles(tenant) == {"Harrison": "Work_Inner", "Husband": "Family", "Dana": "Other", "Sister": "Family"}


# --- kin is who she is ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("texts", [
    # a later batch, by the name
    ["My sister Anna lives nearby.", "Anna is my manager now."],
    ["Моя сестра Анна живёт рядом.", "Анна теперь мой начальник."],
    ["我姐姐李娜很聪明。", "李娜现在是我的经理。"],
    # the same batch
    ["My sister Anna lives nearby. Anna is my manager now."],
    ["Моя сестра Анна живёт рядом. Анна теперь мой начальник."],
    ["我姐姐李娜很聪明。李娜现在是我的经理。"],
    # the same sentence, through a pronoun
    ["My sister Anna lives nearby, and she is my manager now."],
    ["Моя сестра Анна живёт рядом, она теперь мой начальник."],
    ["我的姐姐安娜住在附近，她现在是我的经理。"],
])
def test_a_relative_who_is_also_the_boss_stays_family(tenant: Tenant, texts: list[str]) -> None:
    say(tenant, *texts)
    ((name, circle),) = circles(tenant).items()
    assert circle == Person.Circle.FAMILY
    assert any(word in person(name).bio for word in ("manager", "начальник", "经理"))  # the role is in the bio


def test_kin_ranks_over_work_but_an_editors_circle_holds(tenant: Tenant, make_person: Callable[..., Person]) -> None:
    maria = make_person("Maria", circle="Work_Inner")
    services.person_update(person=maria, actor=None, actor_label="api", circle="Work_Inner")  # locks it
    say(tenant, "My sister Anna lives nearby.", "Anna is my manager now.", "Maria is my sister.")
    assert circles(tenant) == {"Anna": "Family", "Maria": "Work_Inner"}


def test_a_relative_who_left_the_job_stays_family_and_an_ex_leaves(tenant: Tenant) -> None:
    say(tenant, "My sister Anna is my manager now.", "Anna left the company.",
        "My husband Mark is my colleague.", "Mark and I got divorced.")
    assert circles(tenant) == {"Anna": "Family", "Mark": "Other"}


def test_the_models_work_circle_for_a_relative_keeps_her_in_family(tenant: Tenant, make_person: Callable[..., Person],
                                                                   llm: OpenAICompatServer) -> None:
    anna = make_person("Anna", circle="Family", bio="The user's sister.")
    tom = make_person("Tom", circle="Work_Outer", bio="From another team.")
    llm.script_chat({"people_operations": [
        {"op": "Updated", "id": f"Person:{anna.pk}", "person": {"circle": "Work_Inner", "bio": "Now the manager."}},
        {"op": "Updated", "id": f"Person:{tom.pk}", "person": {"circle": "Work_Inner", "bio": "Joined the team."}},
    ]})
    result = append_messages(tenant, "u1", "s1", ["She is my manager now. Tom joined my team."],
                             start=datetime(2025, 3, 1, 9, 30, tzinfo=UTC))
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=result.created)
    anna.refresh_from_db()
    tom.refresh_from_db()
    assert (anna.circle, anna.bio) == ("Family", "The user's sister. Now the manager.")
    assert tom.circle == "Work_Inner"  # a work circle for anyone else is the model's to give
    assert "A relative stays Family" in llm.chat_requests[0]["messages"][0]["content"]
