"""Cost of dedup on the write path at 10,000 people of one user, against the embedded database.

Fills a throwaway tenant with the people of `bench/people_search.py` plus Latin spellings of Russian
names ("Sergey Petrov" beside "Сергей Петров"), then times, for new people in both scripts,
`derive` (the lookup columns of a written person), `dedup.candidates` (the candidate queries and
every rule) and `person_dedup` (that, and the proposals it opens), prints p50/p95 and the rules
found, then drops the tenant.

    .venv/bin/python manage.py migrate people      # once, if the people tables are missing
    .venv/bin/python bench/dedup_cost.py --people 10000 --runs 30
"""

from __future__ import annotations

import argparse
import secrets
import sys
from pathlib import Path

import numpy as np
from django.db import connection

# As a package of the repository, not a sibling script: the dependency check reads every import.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from bench.people_search import (  # the same synthetic people; sets Django up
    EN_LAST,
    RU_FIRST,
    RU_LAST,
    build_people,
    copy_people,
    drop_tenant,
    timed,
)
from memoryhub.models import Tenant
from people import dedup, services
from people.models import Person
from people.ops import PersonDraft
from people.services.persons import derive

LATIN = {"Иван": "Ivan", "Пётр": "Pyotr", "Мария": "Maria", "Анна": "Anna", "Сергей": "Sergey", "Ольга": "Olga",
         "Дмитрий": "Dmitry", "Елена": "Yelena", "Алексей": "Alexei", "Наталья": "Natalia", "Михаил": "Mikhail",
         "Петров": "Petrov", "Иванов": "Ivanov", "Сидоров": "Sidorov", "Кузнецов": "Kuznetsov", "Смирнов": "Smirnov"}
NEW = ["Сергей Петров", "Sergey Petrov", "Игорь", "Igor", "Natasha", "Наташа Иванова", "Tom Baker", "Иван Петровв",
       "Julia", "Юлия Смирнова"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--people", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=30, help="timed runs per new person")
    parser.add_argument("--seed", type=int, default=42)
    args = parser.parse_args()
    if "people_person" not in connection.introspection.table_names():
        sys.exit("The people tables are missing: run `.venv/bin/python manage.py migrate people` first.")

    rng = np.random.default_rng(args.seed)
    tenant = Tenant.objects.create(name=f"bench-dedup-{secrets.token_hex(4)}")
    user_id = "bench-user"
    try:
        people = build_people(args.people, rng, tenant.pk, user_id)
        for person in people[: args.people // 10]:  # a tenth written again in Latin letters
            words = person.display_name.split()
            if words and words[0] in LATIN:
                person.display_name = " ".join(LATIN.get(w, rng.choice(EN_LAST)) for w in words)
                derive(person)
        copy_people(people)
        print(f"{args.people} people of one user, {args.runs} runs per new person")
        print(f"{'new person':<22}{'derive µs':>10}{'candidates p50/p95 ms':>24}{'dedup p50 ms':>14}  rules")
        all_candidates, all_dedup, all_derive = [], [], []
        for name in NEW:
            draft = PersonDraft(display_name=name)
            new = services.person_create_from_draft(tenant_id=tenant.pk, user_id=user_id, draft=draft)
            bare = Person(tenant_id=tenant.pk, user_id=user_id, display_name=name, aliases=[RU_FIRST[0], RU_LAST[0]])
            derive_ms, _ = timed(lambda p=bare: derive(p), args.runs)
            cand_ms, found = timed(lambda p=new: dedup.candidates(p), args.runs)
            dedup_ms, _ = timed(lambda p=new: services.person_dedup(person=p, auto_merge=False), args.runs)
            rules = sorted({m.rule for _, m in found})  # type: ignore[attr-defined]
            print(f"{name:<22}{np.percentile(derive_ms, 50) * 1000:>10.0f}"
                  f"{np.percentile(cand_ms, 50):>14.2f} / {np.percentile(cand_ms, 95):>6.2f}"
                  f"{np.percentile(dedup_ms, 50):>14.2f}  {', '.join(rules)} ({len(found)})")  # type: ignore[arg-type]
            all_candidates.append(cand_ms)
            all_dedup.append(dedup_ms)
            all_derive.append(derive_ms)
        cand, ded, der = (np.concatenate(x) for x in (all_candidates, all_dedup, all_derive))
        print(f"{'all':<22}{np.percentile(der, 50) * 1000:>10.0f}"
              f"{np.percentile(cand, 50):>14.2f} / {np.percentile(cand, 95):>6.2f}{np.percentile(ded, 50):>14.2f}")
    finally:
        drop_tenant(tenant.pk)


if __name__ == "__main__":
    main()
