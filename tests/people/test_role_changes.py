"""Roles that change (rule archivist, no LLM): a work person who leaves the job leaves the inner circle, an ex
loses the kin word that named the partner, and "I work for <company>" adds no person."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memoryhub.models import Tenant
from people import selectors, services
from people.archivist import rules
from people.archivist.tokens import KnownIndex, KnownPerson
from people.models import Person
from tests.factories import append_messages
from tests.people.test_archivist_rules import Msg

pytestmark = pytest.mark.django_db


def say(tenant: Tenant, *texts: str) -> None:
    """Each text a message of its own, extracted as it arrives (as a chat would)."""
    for text in texts:
        append_messages(tenant, "u1", "s1", [text], auto_extract=True)


def person(name: str) -> Person:
    return Person.objects.get(display_name=name, status=Person.Status.ACTIVE)


def inner_names(tenant: Tenant) -> set[str]:
    people = Person.objects.filter(tenant=tenant, user_id="u1", circle__in=Person.INNER_CIRCLES)
    lines = selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1")
    names = {p.display_name for p in people}
    assert all(any(f"] {n} |" in line for line in lines) for n in names)
    return names


# --- a work person who leaves the job ------------------------------------------------------------------


@pytest.mark.parametrize(("texts", "old", "new", "history"), [
    (["My boss is Tom Baker.", "Tom left the company. My new manager is Kate Lee."], "Tom Baker", "Kate Lee",
     "Tom left the company."),
    (["Мой начальник — Петров.", "Петров уволился, теперь мой руководитель Сидорова."], "Петров", "Сидорова",
     "Петров уволился"),
    (["我的老板是王强。", "王强离职了，我的新经理是李娜。"], "王强", "李娜", "王强离职了"),
])
def test_a_boss_who_left_leaves_the_inner_circle_to_the_new_one(tenant: Tenant, texts: list[str], old: str,
                                                                new: str, history: str) -> None:
    say(tenant, *texts)
    assert inner_names(tenant) == {new}
    assert person(new).circle == Person.Circle.WORK_INNER
    assert person(old).circle == Person.Circle.OTHER  # the work tie ended, as an ex's (role:ex)
    assert history in person(old).bio


@pytest.mark.parametrize(("first", "departure"), [
    ("My boss is Tom Baker.", "Tom has finally retired."),
    ("My boss is Tom Baker.", "Tom was fired yesterday."),
    ("My boss is Tom Baker.", "Tom quit last week."),
    ("My colleague Tom Baker is great.", "Tom and Anna got laid off."),
    ("Мой начальник — Петров.", "Петров ушёл на пенсию."),
    ("Мой начальник — Петров.", "Петров ушёл из нашей компании."),
    ("Моя коллега Сидорова очень помогает.", "Сидорова уволилась в прошлом месяце."),
    ("我的老板是王强。", "王强上个月辞职了。"),
    ("我的老板是王强。", "王强退休了。"),
    ("我的老板是王强。", "王强被开除了。"),
])
def test_stated_departures_move_a_work_person_out(tenant: Tenant, first: str, departure: str) -> None:
    say(tenant, first, departure)
    assert not inner_names(tenant)


@pytest.mark.parametrize(("first", "move", "name"), [
    ("My colleague Tom Baker is great.", "Tom moved to another team.", "Tom Baker"),
    ("Мой коллега Петров очень помогает.", "Петров перешёл в другой отдел.", "Петров"),
    ("我的同事王强很好。", "王强调到别的部门了。", "王强"),
])
def test_a_colleague_moved_to_another_team_is_outer_work(tenant: Tenant, first: str, move: str, name: str) -> None:
    say(tenant, first, move)
    assert person(name).circle == Person.Circle.WORK_OUTER  # as "Anna from another team"


@pytest.mark.parametrize(("first", "then", "name"), [
    ("My boss is Tom Baker.", "Tom left early today.", "Tom Baker"),
    ("My boss is Tom Baker.", "Tom left the office at five.", "Tom Baker"),
    ("My boss is Tom Baker.", "Tom quit smoking.", "Tom Baker"),
    ("My boss is Tom Baker.", "Tom didn't quit.", "Tom Baker"),
    ("My boss is Tom Baker.", "Tom fired Anna.", "Tom Baker"),
    ("Мой начальник — Петров.", "Петров ушёл домой.", "Петров"),
    ("Мой начальник — Петров.", "Петров ушёл в отпуск.", "Петров"),
    ("Мой начальник — Петров.", "Петров не уволился.", "Петров"),
    ("我的老板是王强。", "王强今天很早就走了。", "王强"),
    ("我的老板是王强。", "我见到王强了。他走了。", "王强"),
    ("我的老板是王强。", "王强没离职。", "王强"),
])
def test_leaving_a_place_or_a_habit_is_no_departure(tenant: Tenant, first: str, then: str, name: str) -> None:
    say(tenant, first, then)
    assert person(name).circle == Person.Circle.WORK_INNER


@pytest.mark.parametrize(("first", "then", "name", "circle"), [
    ("My friend Tom Baker is funny.", "Tom quit his job.", "Tom Baker", "Friends"),
    ("My dad finally retired last month.", "My dad is happy.", "Dad", "Family"),
    ("Мой друг Петров весёлый.", "Петров уволился.", "Петров", "Friends"),
    ("我的朋友王强很幽默。", "王强辞职了。", "王强", "Friends"),
])
def test_a_departure_changes_nothing_for_someone_not_at_work_with_the_user(
        tenant: Tenant, first: str, then: str, name: str, circle: str) -> None:
    say(tenant, first, then)
    assert person(name).circle == circle


@pytest.mark.parametrize(("texts", "name"), [
    (["My boss is Tom Baker.", "Tom left the company."], "Tom Baker"),
    (["Мой начальник — Петров.", "Петров уволился."], "Петров"),
    (["我的老板是王强。", "王强离职了。"], "王强"),
])
def test_a_circle_an_editor_locked_stays(tenant: Tenant, texts: list[str], name: str) -> None:
    say(tenant, texts[0])
    services.person_update(person=person(name), actor=None, actor_label="api", circle="Work_Inner")
    say(tenant, texts[1])
    assert (person(name).circle, person(name).circle_locked) == ("Work_Inner", True)


@pytest.mark.parametrize(("sentence", "name", "circle"), [
    ("My boss Tom retired last month.", "Tom", "Other"),
    ("Tom, my boss, resigned yesterday.", "Tom", "Other"),
    ("My colleague Tom switched teams.", "Tom", "Work_Outer"),
    ("Мой начальник Петров уволился.", "Петров", "Other"),
    ("我同事小刘上周辞职了。", "小刘", "Other"),
    ("我的老板王强离职了。", "王强", "Other"),
])
def test_a_departure_outweighs_the_cue_of_its_own_sentence(sentence: str, name: str, circle: str) -> None:
    """As a break-up does ("my boyfriend Tom and I broke up"): the role the sentence names is the one that
    ended."""
    drafts = {op.person.display_name: op.person for op in rules.extract([Msg(sentence)]).ops}
    assert drafts[name].circle == circle


def test_a_pronoun_departs_for_the_person_before_it(tenant: Tenant) -> None:
    say(tenant, "My boss is Tom Baker. He left the company last month.")
    assert person("Tom Baker").circle == Person.Circle.OTHER


@pytest.mark.parametrize(("sentence", "who", "not_who"), [
    ("王强离职了，我的新经理是李娜。", "李娜", "王强"),
    ("Tom said my boss is Anna.", "Anna", "Tom"),
    ("Петров ушёл, теперь мой новый начальник — Сидорова.", "Сидорова", "Петров"),
])
def test_the_name_after_the_copula_is_who_the_cue_is(sentence: str, who: str, not_who: str) -> None:
    mentions, _ = rules.sentence_mentions(sentence, KnownIndex([]))
    circles = {m.name: m.circle for m in mentions}
    assert circles[who] == "Work_Inner" and circles[not_who] is None


# --- an ex loses the kin word that named the partner ------------------------------------------------------


@pytest.mark.parametrize(("texts", "name", "kin"), [
    (["My husband Mark loves fishing.", "Mark and I got divorced last year."], "Mark", "Husband"),
    (["My wife Anna loves fishing.", "I divorced Anna last year."], "Anna", "Wife"),
    (["Мой муж Марк любит рыбалку.", "Мы с Марком развелись в прошлом году."], "Марк", "муж"),
    (["Моя жена Анна любит рыбалку.", "Мы с Анной развелись."], "Анна", "жена"),
    (["我老公张伟喜欢钓鱼。", "我和张伟去年离婚了。"], "张伟", "老公"),
    (["我老婆李娜喜欢钓鱼。", "我和李娜离婚了。"], "李娜", "老婆"),
])
def test_an_ex_spouse_loses_the_kin_alias(tenant: Tenant, texts: list[str], name: str, kin: str) -> None:
    say(tenant, texts[0])
    assert person(name).aliases == [kin]
    say(tenant, texts[1])
    ex = person(name)
    assert (ex.circle, ex.aliases) == ("Other", [])
    assert not any(key.startswith("kin:") for key in ex.name_keys)  # "my husband" finds no one now
    assert texts[0] in ex.bio  # the history stays


@pytest.mark.parametrize(("text", "name"), [
    ("My husband Mark loves fishing. I divorced Mark last year.", "Mark"),
    ("Мой муж Марк любит рыбалку. Мы с Марком развелись.", "Марк"),
    ("我老公张伟喜欢钓鱼。我和张伟离婚了。", "张伟"),
])
def test_an_ex_named_as_the_partner_in_the_same_message_gets_no_kin_alias(tenant: Tenant, text: str,
                                                                          name: str) -> None:
    say(tenant, text)
    assert (person(name).circle, person(name).aliases) == ("Other", [])


@pytest.mark.parametrize(("name", "alias", "ending"), [
    ("Tom", "Boyfriend", "Tom and I broke up."),
    ("Kate", "Girlfriend", "I broke up with Kate."),
    ("Дима", "парень", "Мы с Димой расстались."),
    ("Катя", "девушка", "Мы с Катей расстались."),
    ("张伟", "男朋友", "我和张伟分手了。"),
    ("李娜", "女朋友", "我和李娜分手了。"),
])
def test_an_ex_partner_loses_a_partner_alias(tenant: Tenant, make_person: Callable[..., Person], name: str,
                                             alias: str, ending: str) -> None:
    """The rules name no boyfriend by the kin word, but an LLM or an editor may have."""
    make_person(name, circle="Family", aliases=[alias, "Sunshine"])
    say(tenant, ending)
    assert (person(name).circle, person(name).aliases) == ("Other", ["Sunshine"])


def test_a_family_circle_an_editor_locked_keeps_the_alias(tenant: Tenant) -> None:
    say(tenant, "My husband Mark loves fishing.")
    services.person_update(person=person("Mark"), actor=None, actor_label="api", circle="Family")
    say(tenant, "Mark and I got divorced.")
    assert (person("Mark").circle, person("Mark").aliases) == ("Family", ["Husband"])


def test_a_mother_who_is_also_a_friend_keeps_her_kin_alias(tenant: Tenant) -> None:
    say(tenant, "My mom Olga is lovely.", "Olga is my best friend.")
    assert "Mom" in person("Olga").aliases


# --- "I work for X" ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("sentence", [
    "I work for Stripe now.",
    "I work for Target.",
    "I work for PayPal.",
    "I work for IBM.",
    "I work for Acme Co.",
    "I work for Globex Inc.",
    "I worked for Zorblax Systems for years.",
    "I work for Zorblax.",  # an unknown word, not a first name: read as the workplace
    "I work for Stripe's payments team.",
])
def test_work_for_a_company_adds_no_person(tenant: Tenant, sentence: str) -> None:
    say(tenant, sentence)
    assert not Person.objects.exists()


@pytest.mark.parametrize(("sentence", "name"), [
    ("I work for Dana, she runs a bakery.", "Dana"),
    ("I work for Mike Ross.", "Mike Ross"),
    ("I work for Mr. Hughes.", "Hughes"),
    ("I work for Masha.", "Masha"),
    ("I work for Bob now.", "Bob"),
])
def test_work_for_a_person_names_the_boss(tenant: Tenant, sentence: str, name: str) -> None:
    say(tenant, sentence)
    assert person(name).circle == Person.Circle.WORK_INNER


def test_work_for_someone_the_user_already_has_stays_them() -> None:
    known = KnownIndex([KnownPerson(id=1, display_name="Zorblax")])
    mentions, _ = rules.sentence_mentions("I work for Zorblax.", known)
    assert [(m.name, m.circle, m.known_id) for m in mentions] == [("Zorblax", "Work_Inner", 1)]

