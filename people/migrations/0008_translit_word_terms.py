"""People carry the folded words of their names ("cyr=masha" for "Маша") in `name_terms` since people
search finds a name written in the other script ("Masha"). Rows written before get the terms here;
nothing else changes. Reversing leaves the terms, which older code ignores (no query word has a `=`)."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def add_word_terms(apps: Any, schema_editor: Any) -> None:
    from people.names import name_terms
    from people.translit import word_terms

    Person = apps.get_model("people", "Person")
    changed = []
    rows = Person.objects.only("pk", "display_name", "aliases", "name_terms").order_by("pk")
    for person in rows.iterator(chunk_size=2000):
        terms = word_terms(name_terms((person.display_name, *person.aliases)))
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
        ("people", "0007_translit_near_terms"),
    ]

    operations = [
        migrations.RunPython(add_word_terms, migrations.RunPython.noop),
    ]
