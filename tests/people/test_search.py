"""People search: seed 000's examples, names in other case forms and with typos, filters, isolation."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from memoryhub.models import Tenant
from people import selectors, services
from people.models import Person
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]


def search(tenant: Tenant, query: str, user_id: str = "u1", **options: object) -> list[selectors.PersonHit]:
    return selectors.people_search(tenant_id=tenant.pk, user_id=user_id, query=query, **options).hits


def names(hits: list[selectors.PersonHit]) -> list[str]:
    return [h.person.display_name for h in hits]


def test_russian_example_finds_petrov_in_work_inner(tenant: Tenant) -> None:
    """Seed 000: "Помнишь, мы с Петровым обсуждали проект?" → the bot sees Петров in Work_Inner."""
    earlier = append_messages(tenant, "u1", "s1", ["Мой близкий коллега Петров ведёт со мной проект X.",
                                                    "Вечером созвонилась с Машей, она передаёт привет."])
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=earlier.created)
    hits = search(tenant, "Помнишь, мы с Петровым обсуждали проект?")
    assert names(hits) == ["Петров"]
    assert hits[0].person.circle == Person.Circle.WORK_INNER and hits[0].components["name"] == 1.0
    inner = selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1")
    assert inner == [f"[Person:{hits[0].person.pk}] Петров | Work_Inner | 1 mention | "
                     "Мой близкий коллега Петров ведёт со мной проект X."]


def test_semantic_example_finds_the_project_lead_by_bio(make_person: MakePerson, tenant: Tenant) -> None:
    """Seed 000: "начальник из проекта X" → Петров (bio: "Руководитель проекта X")."""
    petrov = make_person("Петров", bio="Руководитель проекта X.")
    make_person("Сидоров", bio="Коллега по проекту Y, сидит напротив.")
    make_person("Анна", bio="Подруга детства, живёт в Казани.")
    make_person("Tom", bio="My boss at the bakery.")
    hits = search(tenant, "начальник из проекта X")
    assert names(hits) == ["Петров"]
    # A synonym, not the bio's own word: found, under the 1.0 of "руководитель" (the seed shows 0.87).
    assert hits[0].person == petrov and 0.65 <= hits[0].components["lexical"] < 1.0


@pytest.mark.parametrize(("query", "name"), [
    ("что там у Машей?", "Маша"),
    ("встреча с Анной Сергеевной", "Анна Сергеевна"),
    ("Did Petorv reply?", "Petrov"),
    ("Сидорв опять опоздал", "Сидоров"),
    ("张伟明天来吗？", "张伟"),
    ("ping @Jake_R please", "Jake Ross"),
])
def test_a_name_in_another_case_form_or_with_a_typo_finds_the_person(
    make_person: MakePerson, tenant: Tenant, query: str, name: str
) -> None:
    for person in ("Маша", "Анна Сергеевна", "Petrov", "Сидоров", "张伟", "Анна Петрова"):
        make_person(person)
    make_person("Jake Ross", username="jake_r")
    assert names(search(tenant, query))[:1] == [name]


@pytest.mark.parametrize(("stored", "query", "score"), [
    ("Маша", "Did Masha call?", 1.0),
    ("Masha", "Что сказала Маша?", 1.0),
    ("Masha", "вечером созвонилась с Машей", 1.0),
    ("Юлия", "Julia sends her regards", 1.0),
    ("Сергей Петров", "Did Sergey Petrov reply?", 1.0),
    ("Sergei Petrov", "Помнишь, мы с Петровым обсуждали проект?", 0.85),
    ("Дмитрий", "Dmitriy is late again", 1.0),
])
def test_a_name_written_in_the_other_script_finds_the_person(
    make_person: MakePerson, tenant: Tenant, stored: str, query: str, score: float
) -> None:
    """Found by a QA trial: dedup paired "Маша" and "Masha", search did not. Latin and Cyrillic meet by
    the transliteration dedup folds both into; a whole name scores as a whole name, a surname as a part."""
    person = make_person(stored)
    make_person("Анна", bio="Подруга детства, живёт в Казани.")
    make_person("Tom", bio="My brother.")
    hits = search(tenant, query)
    assert [h.person for h in hits] == [person]
    assert hits[0].components["name"] == score


@pytest.mark.parametrize(("stored", "query"), [
    ("Сергей Петров", "Что Серёжа сказал про отпуск?"),
    ("Мария Иванова", "Маша звонила?"),
    ("Alexander Brown", "Did Sasha call back?"),
    ("Александр", "Did Sasha call back?"),
])
def test_a_diminutive_finds_the_person_by_the_full_name_as_a_part(make_person: MakePerson, tenant: Tenant,
                                                                    stored: str, query: str) -> None:
    """QA: "Серёжа" found nothing while Сергей Петров had never been called that. A diminutive may stand
    for more than one name ("Саша": Alexander, Alexandra), so it scores as a part of the name."""
    person = make_person(stored)
    make_person("Анна Сергеевна", bio="Подруга детства, живёт в Казани.")
    make_person("Tom", bio="My brother.")
    hits = search(tenant, query)
    assert [h.person for h in hits] == [person]
    assert hits[0].components["name"] == 0.85


def test_another_name_in_the_other_script_is_not_found(make_person: MakePerson, tenant: Tenant) -> None:
    """Equal transliterations only: "Misha" is not "Маша" (dedup may propose such a pair for review,
    a search answers at once), nor does a Chinese name meet pinyin (nothing transliterates it)."""
    make_person("Маша")
    make_person("张伟")
    assert search(tenant, "Did Misha call?") == []
    assert search(tenant, "Did Zhang Wei call?") == []


def test_vector_mode_is_seeds_cosine_search_with_threshold_and_max_results(
    make_person: MakePerson, tenant: Tenant
) -> None:
    for i in range(12):
        make_person(f"Person{i}", bio=f"Коллега номер {i} по проекту X.")
    assert search(tenant, "Коллега по проекту X", mode="vector", threshold=0.99) == []
    hits = search(tenant, "Коллега по проекту X", mode="vector", threshold=0.0, max_results=10)
    assert len(hits) == 10  # k rows come back
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True) and set(hits[0].components) == {"vector"}


def test_excluded_circles_are_left_out(make_person: MakePerson, tenant: Tenant) -> None:
    make_person("Tom", circle="Family", bio="Brother.")
    make_person("Tom Baker", circle="Friends", bio="Climbing partner.")
    assert names(search(tenant, "Tom", exclude_circles=["Family"])) == ["Tom Baker"]
    assert names(search(tenant, "Tom")) == ["Tom", "Tom Baker"]  # whole name before part of one


def test_merged_people_are_not_found(make_person: MakePerson, tenant: Tenant) -> None:
    target, source = make_person("Мария"), make_person("Маша")
    services.person_merge(source=source, target=target, reviewer=None)
    assert [h.person.pk for h in search(tenant, "Маша")] == [target.pk]


def test_search_sees_only_the_users_own_people(make_person: MakePerson, tenant: Tenant,
                                              api_client_for: Callable) -> None:
    _, other = api_client_for("tenant-other")
    make_person("Петров", bio="Руководитель проекта X.")
    make_person("Петров", bio="Руководитель проекта X.", user_id="u2")
    make_person("Петров", bio="Руководитель проекта X.", tenant=other)
    for query in ("Петров", "начальник из проекта X"):
        hits = search(tenant, query)
        assert [(h.person.tenant_id, h.person.user_id) for h in hits] == [(tenant.pk, "u1")]


def test_unrelated_queries_find_no_one(make_person: MakePerson, tenant: Tenant) -> None:
    make_person("Петров", bio="Руководитель проекта X.")
    make_person("Tom", bio="My boss at the bakery.")
    assert search(tenant, "What should I cook for dinner tonight?") == []
    assert search(tenant, "Как дела?") == []


def test_searches_are_measured(make_person: MakePerson, tenant: Tenant) -> None:
    from prometheus_client import REGISTRY

    make_person("Петров", bio="Руководитель проекта X.")
    labels = {"tenant": str(tenant.pk)}
    before = REGISTRY.get_sample_value("memoryhub_people_search_results_sum", labels) or 0
    result = selectors.people_search(tenant_id=tenant.pk, user_id="u1", query="Петров")
    assert REGISTRY.get_sample_value("memoryhub_people_search_results_sum", labels) == before + 1
    assert REGISTRY.get_sample_value("memoryhub_people_search_duration_seconds_count",
                                     {**labels, "mode": "hybrid"}) >= 1
    assert set(result.timings_ms) == {"vector", "name", "typo", "lexical"}


@pytest.mark.parametrize(("bio", "query"), [
    ("Работает врачом в городской поликлинике.", "кто врач?"),
    ("Работает врачом в городской поликлинике.", "кто работает врачом?"),
    ("Работает врачом в городской поликлинике.", "Кто у нас врач?"),
    ("Работает врачом в городской поликлинике.", "кто мой врач?"),
    ("Works as a doctor at the city clinic.", "who is the doctor?"),
    ("Works as a doctor at the city clinic.", "who's my doctor?"),
    ("Works as a doctor at the city clinic.", "Which of them is our doctor?"),
    ("在市医院当医生。", "谁是医生？"),
    ("在市医院当医生。", "哪位是医生？"),
    ("在市医院当医生。", "谁是我们的医生？"),
])
def test_question_and_function_words_do_not_count_against_a_bio_match(
    make_person: MakePerson, tenant: Tenant, bio: str, query: str
) -> None:
    """A question's frame ("кто", "who is my", "哪位是") names no one: only its content words must be
    found in the bio. Unknown to every bio, a frame word had the highest idf of the query and pushed
    the person under the threshold."""
    igor = make_person("Игорь", bio=bio)
    make_person("Маша", bio="Подруга детства, живёт в Казани.")
    hits = search(tenant, query)
    assert [h.person for h in hits] == [igor], query
    assert hits[0].components["lexical"] == 1.0


@pytest.mark.parametrize(("nurse_bio", "doctor_bio", "nurse_queries", "doctor_queries"), [
    ("Works as a nurse at the city hospital.", "Works as a doctor at the city hospital.",
     ("nurse", "who is the nurse?"), ("doctor", "who is the doctor?")),
    ("Работает медсестрой в городской больнице.", "Работает врачом в городской больнице.",
     ("медсестра", "кто медсестра?"), ("врач", "кто врач?", "кто работает врачом?")),
    ("在市医院当护士。", "在市医院当医生。", ("护士", "谁是护士？"), ("医生", "谁是医生？")),
])
def test_the_persons_own_word_ranks_above_a_related_role(
    make_person: MakePerson, tenant: Tenant, nurse_bio: str, doctor_bio: str,
    nurse_queries: tuple[str, ...], doctor_queries: tuple[str, ...]
) -> None:
    """A nurse and a doctor are related roles, not one: asked for a nurse, search puts the nurse first
    and the doctor after her, still found but lower, and the other way round."""
    anna = make_person("Анна", bio=nurse_bio)
    igor = make_person("Игорь", bio=doctor_bio)
    for queries, exact, related in ((nurse_queries, anna, igor), (doctor_queries, igor, anna)):
        for query in queries:
            hits = search(tenant, query)
            assert [h.person for h in hits] == [exact, related], query
            assert hits[0].score == 1.0 and hits[0].score > hits[1].score >= 0.65, query


@pytest.mark.parametrize(("doctor_bio", "nurse_bio", "queries"), [
    ("My doctor, Dr. Green.", "Nurse at the clinic.", ("physician", "who is my physician?", "врач", "医生")),
    ("Доктор, хирург в областной больнице.", "Медсестра в поликлинике.", ("врач", "кто врач?", "doctor", "大夫")),
    ("我的医生。", "社区医院的护士。", ("大夫", "physician", "врач")),
])
def test_the_same_role_in_other_words_ranks_above_a_related_one(make_person: MakePerson, tenant: Tenant,
                                                                 doctor_bio: str, nurse_bio: str,
                                                                 queries: tuple[str, ...]) -> None:
    """"physician" found a doctor and a nurse at one score, and the tie put the nurse first: a synonym or
    a translation of the role is the role, a nurse only a related one."""
    doctor, nurse = make_person("Green", bio=doctor_bio), make_person("Kelly", bio=nurse_bio)
    for query in queries:
        hits = search(tenant, query)
        assert [h.person for h in hits] == [doctor, nurse], query
        assert hits[0].score > hits[1].score >= 0.65, query


def test_a_synonym_or_translation_finds_the_person_below_the_own_word(make_person: MakePerson,
                                                                      tenant: Tenant) -> None:
    """A cue's concept still matches across words and languages ("начальник" finds a "Руководитель",
    "boss" an "老板"), below a bio that says the query's own word."""
    petrov = make_person("Петров", bio="Руководитель проекта X.")
    zhang = make_person("张伟", bio="我的老板，很严格。")
    tom = make_person("Tom", bio="My boss at the bakery.")
    hits = search(tenant, "boss")
    assert [h.person for h in hits][:1] == [tom] and {h.person for h in hits} == {tom, petrov, zhang}
    assert hits[0].components["lexical"] == 1.0 > hits[1].components["lexical"] >= 0.65
    assert names(search(tenant, "начальник из проекта X")) == ["Петров"]


def test_a_workplace_is_neither_a_person_nor_found_as_the_boss(tenant: Tenant) -> None:
    """Found by a QA trial: "Теперь работаю в Тинькофф…" made Тинькофф a person of the inner circle, found
    at 0.9 by a search for "начальник"."""
    said = append_messages(tenant, "u1", "s1", ["Теперь работаю в Тинькофф, мой начальник там — Петров.",
                                                 "I work at Tim Hortons now.", "我现在在周大福上班。"])
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=said.created)
    assert list(Person.objects.values_list("display_name", "circle")) == [("Петров", "Work_Inner")]
    assert names(search(tenant, "начальник")) == ["Петров"]
    assert [line.split(" | ")[0] for line in selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1")] \
        == [f"[Person:{Person.objects.get().pk}] Петров"]
