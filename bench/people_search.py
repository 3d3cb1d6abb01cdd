"""People-search latency at 10,000 people of one user, against the embedded database.

Creates a throwaway tenant, fills it with synthetic people (Russian, English and Chinese names,
bios from templates, hashing embeddings and the derived lookup columns) through psycopg COPY, runs
a mix of queries through `people.selectors.people_search` (hybrid and vector) and
`relevant_people` (the context path, scores only), prints p50/p95, then drops the tenant.

    .venv/bin/python manage.py migrate people      # once, if the people tables are missing
    .venv/bin/python bench/people_search.py --people 10000 --queries 300
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

import django

django.setup()

from django.db import connection  # noqa: E402
from django.utils import timezone  # noqa: E402
from pgvector.psycopg import register_vector  # noqa: E402

from memoryhub.embeddings import get_embedder  # noqa: E402
from memoryhub.models import Tenant  # noqa: E402
from people import selectors, services  # noqa: E402
from people.models import (  # noqa: E402
    MergeProposal,
    PeopleAuditEntry,
    Person,
    PersonMention,
    PersonMerge,
    PersonRelation,
)
from people.ops import PersonDraft  # noqa: E402
from people.services.persons import derive  # noqa: E402

RU_FIRST = ["Иван", "Пётр", "Мария", "Анна", "Сергей", "Ольга", "Дмитрий", "Елена", "Алексей", "Наталья", "Михаил",
            "Татьяна", "Андрей", "Ирина", "Николай", "Светлана", "Павел", "Юлия", "Максим", "Екатерина"]
RU_LAST = ["Петров", "Иванов", "Сидоров", "Кузнецов", "Смирнов", "Попов", "Волков", "Соколов", "Лебедев", "Козлов",
           "Новиков", "Морозов", "Павлов", "Семёнов", "Голубев", "Виноградов", "Богданов", "Воробьёв", "Фёдоров"]
EN_FIRST = ["Tom", "Anna", "James", "Olivia", "Liam", "Emma", "Noah", "Sophie", "Ethan", "Grace", "Lucas", "Mia"]
EN_LAST = ["Smith", "Baker", "Johnson", "Brown", "Taylor", "Wilson", "Clarke", "Walker", "Hughes", "Turner"]
ZH_NAMES = ["张伟", "王芳", "李娜", "刘强", "陈静", "杨洋", "赵磊", "黄敏", "周杰", "吴霞", "徐鹏", "孙丽"]
PROJECTS = ["Альфа", "Бета", "Гамма", "Дельта", "Омега", "Atlas", "Orion", "Phoenix", "Zephyr", "Nova"]
CITIES = ["Казани", "Москвы", "Твери", "Berlin", "London", "Тулы", "Самары", "Boston"]
BIOS = [
    ("Work_Inner", "Руководитель проекта {p}, мой начальник."),
    ("Work_Inner", "Коллега по проекту {p}, сидим в одной команде."),
    ("Work_Outer", "Клиент из банка, обсуждаем проект {p}."),
    ("Friends", "Друг из {c}, вместе ходим в походы."),
    ("Family", "Двоюродный брат, живёт в {c}."),
    ("Other", "Сосед по даче, помогает с ремонтом."),
    ("Work_Inner", "Tech lead on the {p} project."),
    ("Friends", "Climbing partner from {c}."),
    ("Other", "Our family doctor in {c}."),
]
QUERIES = [
    "Помнишь, мы с Петровым обсуждали проект?",
    "Что сказала Мария Иванова про отпуск?",
    "начальник из проекта Омега",
    "клиент из банка по проекту Atlas",
    "Did Tom Baker reply to the email?",
    "Сидорв опять опоздал",
    "张伟明天来吗？",
    "What should I cook for dinner tonight?",
    "друг из Казани звал в поход",
    "Кто у нас tech lead на Orion?",
]


def build_people(n: int, rng: np.random.Generator, tenant_id: int, user_id: str) -> list[Person]:
    people: list[Person] = []
    now = timezone.now()
    for i in range(n):
        kind = rng.integers(0, 10)
        if kind < 6:
            name = f"{rng.choice(RU_FIRST)} {rng.choice(RU_LAST)}"
        elif kind < 9:
            name = f"{rng.choice(EN_FIRST)} {rng.choice(EN_LAST)}"
        else:
            name = str(rng.choice(ZH_NAMES))
        circle, template = BIOS[int(rng.integers(0, len(BIOS)))]
        bio = template.format(p=rng.choice(PROJECTS), c=rng.choice(CITIES))
        person = Person(tenant_id=tenant_id, user_id=user_id, display_name=name, aliases=[], circle=circle, bio=bio,
                        username=f"user{i}" if i % 7 == 0 else None, first_seen=now, last_seen=now,
                        mention_count=int(rng.integers(1, 200)), created_at=now, updated_at=now)
        derive(person)
        people.append(person)
    vectors = get_embedder().embed([p.embedding_text() for p in people])
    for person, vector in zip(people, vectors, strict=True):
        person.embedding = vector
    return people


COLUMNS = ["tenant_id", "user_id", "display_name", "aliases", "telegram_id", "username", "circle", "circle_locked",
           "bio", "embedding", "first_seen", "last_seen", "mention_count", "status", "merged_into_id", "name_key",
           "name_keys", "name_terms", "search_terms", "created_at", "updated_at"]


def copy_people(people: list[Person]) -> float:
    started = time.perf_counter()
    connection.ensure_connection()
    raw = connection.connection
    register_vector(raw)
    with raw.cursor() as cursor, cursor.copy(
        f"COPY {Person._meta.db_table} ({', '.join(COLUMNS)}) FROM STDIN"
    ) as copy:
        for p in people:
            copy.write_row([p.tenant_id, p.user_id, p.display_name, p.aliases, p.telegram_id, p.username, p.circle,
                            p.circle_locked, p.bio, p.embedding, p.first_seen, p.last_seen, p.mention_count,
                            p.status, None, p.name_key, p.name_keys, p.name_terms, p.search_terms, p.created_at,
                            p.updated_at])
    raw.commit()
    # Steady state, as autovacuum leaves it: visibility map set (index-only counts), GIN pending list merged.
    with connection.cursor() as cursor:
        cursor.execute(f"VACUUM ANALYZE {Person._meta.db_table}")
    return time.perf_counter() - started


def drop_tenant(tenant_id: int) -> None:
    """Delete the throwaway tenant and its people in SQL: faster than the ORM's cascade, and blind to
    other apps' tables (which may not be migrated in this database)."""
    with connection.cursor() as cursor:
        for model in (PeopleAuditEntry, MergeProposal, PersonMerge, PersonRelation, PersonMention):
            cursor.execute(f"DELETE FROM {model._meta.db_table} WHERE tenant_id = %s", [tenant_id])
        cursor.execute(f"UPDATE {Person._meta.db_table} SET merged_into_id = NULL WHERE tenant_id = %s", [tenant_id])
        cursor.execute(f"DELETE FROM {Person._meta.db_table} WHERE tenant_id = %s", [tenant_id])
        cursor.execute(f"DELETE FROM {Tenant._meta.db_table} WHERE id = %s", [tenant_id])


def timed(fn: Callable[[], object], runs: int) -> tuple[np.ndarray, object]:
    samples, result = [], None
    for _ in range(runs):
        start = time.perf_counter_ns()
        result = fn()
        samples.append(time.perf_counter_ns() - start)
    return np.array(samples) / 1e6, result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300, help="timed searches per mode")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if "people_person" not in connection.introspection.table_names():
        sys.exit("The people tables are missing: run `.venv/bin/python manage.py migrate people` first.")

    rng = np.random.default_rng(args.seed)
    tenant = Tenant.objects.create(name=f"bench-people-{secrets.token_hex(4)}")
    user_id = "bench-user"
    try:
        started = time.perf_counter()
        people = build_people(args.people, rng, tenant.pk, user_id)
        built = time.perf_counter() - started
        copied = copy_people(people)
        print(f"{args.people} people of one user: built (derive + embed) in {built:.1f} s, COPY in {copied:.2f} s")

        # Warm-up: pymorphy dictionaries, plan caches, the embedder.
        for query in QUERIES:
            selectors.people_search(tenant_id=tenant.pk, user_id=user_id, query=query)
        print(f"{'path':<34}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}{'hits':>6}")
        per_query = max(1, args.queries // len(QUERIES))
        totals: dict[str, list[np.ndarray]] = {}
        for query in QUERIES:
            for mode in ("hybrid", "vector"):
                ms, result = timed(lambda q=query, m=mode: selectors.people_search(
                    tenant_id=tenant.pk, user_id=user_id, query=q, mode=m), per_query)
                totals.setdefault(mode, []).append(ms)
                if mode == "hybrid":
                    hits, parts = result.hits, result.timings_ms  # type: ignore[attr-defined]
                    label = f"  {query[:30]}"
                    print(f"{label:<34}{np.percentile(ms, 50):>9.2f}{np.percentile(ms, 95):>9.2f}"
                          f"{ms.max():>9.2f}{len(hits):>6}   " + " ".join(f"{k}={v:.1f}" for k, v in parts.items()))
        ms, _ = timed(lambda: [selectors.relevant_people(tenant_id=tenant.pk, user_id=user_id, query=q, limit=5)
                               for q in QUERIES[:1]], per_query)
        totals["relevant_people (no LLM)"] = [ms]
        draft = PersonDraft(display_name="Иван Петровв", bio="Коллега по проекту Альфа.")
        new = services.person_create_from_draft(tenant_id=tenant.pk, user_id=user_id, draft=draft)
        ms, _ = timed(lambda: services.person_dedup(person=new, auto_merge=False), 20)
        totals["dedup of one new person"] = [ms]
        for name, samples in totals.items():
            all_ms = np.concatenate(samples)
            label = f"people_search {name}" if name in ("hybrid", "vector") else name
            print(f"{label:<34}{np.percentile(all_ms, 50):>9.2f}{np.percentile(all_ms, 95):>9.2f}"
                  f"{all_ms.max():>9.2f}")
    finally:
        drop_tenant(tenant.pk)


if __name__ == "__main__":
    main()
