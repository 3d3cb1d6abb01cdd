"""People search reads a small population whole and scores it in process; a large one is scored by
the database. Both must give the same people, in the same order, with the same scores."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from memoryhub import vector_io
from memoryhub.models import Tenant
from people import selectors
from people.models import Person
from people.services.vectors import people_embed_pending

pytestmark = pytest.mark.django_db

PEOPLE = [
    ("Петров", "Work_Inner", "Руководитель проекта X, мой начальник."),
    ("Сидоров", "Work_Outer", "Коллега по проекту Y, сидит напротив."),
    ("Анна Сергеевна", "Other", "Соседка по даче, выращивает розы."),
    ("Маша", "Friends", "Подруга детства, живёт в Казани."),
    ("Оля", "Family", "Моя сестра, врач."),
    ("Tom", "Family", "My brother, has a golden retriever called Biscuit."),
    ("Jake Ross", "Friends", "Climbing buddy from the gym."),
    ("Marie Dubois", "Work_Outer", "Colleague from the Lyon office, loves hiking in the Alps."),
    ("Dr. Patel", "Other", "My dentist on Baker Street."),
    ("张伟", "Work_Inner", "我的项目经理，很严格。"),
    ("小张", "Friends", "我的好朋友，喜欢打篮球。"),
    ("李老师", "Other", "女儿的钢琴老师。"),
    ("Jake Miller", "Other", "Neighbour with the noisy dog."),
    ("Sam", "Friends", ""),
]
QUERIES = [
    "Помнишь, мы с Петровым обсуждали проект?", "начальник из проекта X", "что там у Машей?",
    "встреча с Анной Сергеевной", "Did Petorv reply?", "Сидорв опять опоздал", "张伟明天来吗？",
    "ping @Jake_R please", "who is my dentist", "my brother's dog", "hiking colleague", "Jake",
    "钢琴老师", "篮球", "сестра врач", "what's the weather", "", "🙂", "Sam and Tom went climbing",
    "Did Masha call?", "вечером с Томом и Джейком Россом", "Petrov's project",
]


@pytest.fixture
def population(make_person: Callable[..., Person], tenant: Tenant) -> Tenant:
    for name, circle, bio in PEOPLE:
        make_person(name, circle=circle, **({"bio": bio} if bio else {}),
                    **({"username": "jake_r"} if name == "Jake Ross" else {}))
    people_embed_pending(tenant_id=tenant.pk, user_id="u1")
    Person.objects.filter(display_name="Sam").update(embedding=None)  # not embedded yet: names still find it
    return tenant


def _run(tenant: Tenant, query: str, **options: object) -> list[tuple[int, float, dict[str, float]]]:
    hits = selectors.people_search(tenant_id=tenant.pk, user_id="u1", query=query, **options).hits
    return [(h.person.pk, h.score, h.components) for h in hits]


@pytest.mark.parametrize("options", [
    {}, {"threshold": 0.0, "max_results": 50}, {"mode": "vector", "threshold": 0.0},
    {"exclude_circles": ["Family", "Work_Inner"], "threshold": 0.2},
])
def test_the_in_process_and_database_paths_agree(population: Tenant, monkeypatch, options: dict) -> None:
    compared = 0
    for query in QUERIES:
        in_process = _run(population, query, **options)
        monkeypatch.setattr(selectors, "SMALL_POPULATION", 0)
        in_database = _run(population, query, **options)
        monkeypatch.setattr(selectors, "SMALL_POPULATION", 300)
        assert [pk for pk, *_ in in_process] == [pk for pk, *_ in in_database], query
        for (_, score, parts), (_, db_score, db_parts) in zip(in_process, in_database, strict=True):
            assert score == pytest.approx(db_score, abs=1e-5) and parts.keys() == db_parts.keys(), query
        compared += len(in_process)
    assert compared >= 10  # the queries do find people: the comparison is not of empty lists


def test_a_small_population_costs_three_statements(population: Tenant, monkeypatch) -> None:
    # The vectors are read in binary on psycopg's own cursor, which Django's capture does not see.
    binary_reads = []
    read = vector_io.read_vectors
    monkeypatch.setattr(vector_io, "read_vectors", lambda *a: binary_reads.append(a) or read(*a))
    with CaptureQueriesContext(connection) as queries:
        hits = selectors.people_search(tenant_id=population.pk, user_id="u1", query="Is Tom coming?").hits
    assert [h.person.display_name for h in hits][:1] == ["Tom"]
    assert len(queries) + len(binary_reads) == 3, [q["sql"][:80] for q in queries]  # rows, vectors, hits
