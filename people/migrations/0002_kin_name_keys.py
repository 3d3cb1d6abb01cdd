"""People named by a kin word, or with one as an alias ("Mom", "мама", "妈妈"), carry its identity key
("kin:mother") in `name_keys` and `name_terms` since issue 14, so identity matching, dedup and search
treat every word of one kin as one person. Rows written before get the keys here; nothing else
changes. Reversing leaves the keys, which older code ignores."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def add_kin_keys(apps: Any, schema_editor: Any) -> None:
    from people.names import kin_key

    Person = apps.get_model("people", "Person")
    changed = []
    rows = Person.objects.only("pk", "display_name", "aliases", "name_keys", "name_terms").order_by("pk")
    for person in rows.iterator(chunk_size=2000):
        keys = [k for k in (kin_key(n) for n in (person.display_name, *person.aliases)) if k]
        if not keys or set(keys) <= set(person.name_keys):
            continue
        person.name_keys = list(dict.fromkeys([*person.name_keys, *keys]))
        person.name_terms = list(dict.fromkeys([*person.name_terms, *keys]))
        changed.append(person)
        if len(changed) >= 2000:
            Person.objects.bulk_update(changed, ["name_keys", "name_terms"])
            changed = []
    if changed:
        Person.objects.bulk_update(changed, ["name_keys", "name_terms"])


class Migration(migrations.Migration):

    dependencies = [
        ("people", "0001_initial"),
    ]

    operations = [
        migrations.RunPython(add_kin_keys, migrations.RunPython.noop),
    ]
