"""People carry the term a person of the other script finds them by ("cyr:igr" for "Игорь", "lat:igr"
for "Igor") in `name_terms` since dedup compares Latin with Cyrillic names, so "Igor" and "Игорь" get
a merge proposal. Rows written before get the terms here; nothing else changes. Reversing leaves the
terms, which older code ignores (no query word has a colon)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def add_translit_terms(apps: Any, schema_editor: Any) -> None:
    from people.names import name_key
    from people.translit import translit_terms

    Person = apps.get_model("people", "Person")
    changed = []
    rows = Person.objects.only("pk", "display_name", "aliases", "name_terms").order_by("pk")
    for person in rows.iterator(chunk_size=2000):
        terms = translit_terms(name_key(n) for n in (person.display_name, *person.aliases))
        if set(terms) <= set(person.name_terms):
            continue
        person.name_terms = list(dict.fromkeys([*person.name_terms, *terms]))
        changed.append(person)
        if len(changed) >= 2000:
            Person.objects.bulk_update(changed, ["name_terms"])
            changed = []
    if changed:
        Person.objects.bulk_update(changed, ["name_terms"])


class Migration(migrations.Migration):

    dependencies = [
        ("people", "0005_person_deleted_audit"),
    ]

    operations = [
        migrations.RunPython(add_translit_terms, migrations.RunPython.noop),
    ]
