"""People carry the terms a person of the other script finds them near by ("cyr~:srg ptr" for
"Сергей Петров") in `name_terms` since dedup proposes a transliteration with a typo that changed a
consonant ("Sergey Petrof"). Rows written before get the terms here; nothing else changes. Reversing
leaves the terms, which older code ignores (no query word has a colon)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def add_near_terms(apps: Any, schema_editor: Any) -> None:
    from people.names import name_key
    from people.translit import translit_near_terms

    Person = apps.get_model("people", "Person")
    changed = []
    rows = Person.objects.only("pk", "display_name", "aliases", "name_terms").order_by("pk")
    for person in rows.iterator(chunk_size=2000):
        terms = translit_near_terms(name_key(n) for n in (person.display_name, *person.aliases))
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
        ("people", "0006_translit_lookup_terms"),
    ]

    operations = [
        migrations.RunPython(add_near_terms, migrations.RunPython.noop),
    ]
