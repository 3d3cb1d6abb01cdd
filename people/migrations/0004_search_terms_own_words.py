"""A bio's `search_terms` keep a cue word's own terms beside its concept ("nurse": `nurs` and
`role:nurse` in the family `role:medical`), so people search ranks the bio that says the query's word
above one that only shares its concept. Rows written before get their terms again from the bio here;
without it a literal match would count as a concept-only one until the bio changed. Reversing leaves
the terms, which older code reads as a bio's words."""

from __future__ import annotations

from typing import Any

from django.db import migrations


def recompute_search_terms(apps: Any, schema_editor: Any) -> None:
    from people.names import concept_terms

    Person = apps.get_model("people", "Person")
    changed = []
    for person in Person.objects.only("pk", "bio", "search_terms").order_by("pk").iterator(chunk_size=2000):
        terms = list(dict.fromkeys(concept_terms(person.bio)))[:500]
        if terms == person.search_terms:
            continue
        person.search_terms = terms
        changed.append(person)
        if len(changed) >= 2000:
            Person.objects.bulk_update(changed, ["search_terms"])
            changed = []
    if changed:
        Person.objects.bulk_update(changed, ["search_terms"])


class Migration(migrations.Migration):

    dependencies = [
        ("people", "0003_vector_column_field"),
    ]

    operations = [
        migrations.RunPython(recompute_search_terms, migrations.RunPython.noop),
    ]
