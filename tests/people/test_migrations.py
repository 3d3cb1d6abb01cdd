"""Data migrations of the people app, run on rows written by the code before them."""

from __future__ import annotations

import importlib
from collections.abc import Callable

import pytest
from django.apps import apps

from memoryhub.models import Tenant
from people.models import Person

pytestmark = pytest.mark.django_db


def test_kin_keys_are_added_to_people_written_before_issue_14(make_person: Callable[..., Person]) -> None:
    olga = make_person("Olga", aliases=["мама"])
    plain = make_person("Петров")
    # As the code before issue 14 stored them: no kin keys.
    Person.objects.filter(pk=olga.pk).update(name_keys=["olga", "мама"], name_terms=["olga", "мама"])
    before = Person.objects.get(pk=plain.pk)
    importlib.import_module("people.migrations.0002_kin_name_keys").add_kin_keys(apps, None)
    olga.refresh_from_db()
    assert olga.name_keys == ["olga", "мама", "kin:mother"] and "kin:mother" in olga.name_terms
    after = Person.objects.get(pk=plain.pk)
    assert (after.name_keys, after.name_terms) == (before.name_keys, before.name_terms)


def test_bios_written_before_keep_their_cue_words_own_terms(make_person: Callable[..., Person]) -> None:
    anna = make_person("Анна", bio="Работает медсестрой.")
    plain = make_person("Петров", bio="Сидит напротив.")
    # As the code before stored them: a cue word's concept alone, under its old name.
    Person.objects.filter(pk=anna.pk).update(search_terms=["работа", "role:doctor"])
    before = Person.objects.get(pk=plain.pk).search_terms
    importlib.import_module("people.migrations.0004_search_terms_own_words").recompute_search_terms(apps, None)
    anna.refresh_from_db()
    assert anna.search_terms == ["работа", "role:nurse", "role:medical", "медсестр"]
    assert Person.objects.get(pk=plain.pk).search_terms == before


def test_people_written_before_get_their_other_script_lookup_terms(make_person: Callable[..., Person]) -> None:
    from people import services

    # Names the diminutives table does not know: it finds "Igor" ↔ "Игорёк" without any lookup term.
    gleb = make_person("Глеб", aliases=["Глебушка"])
    latin = make_person("Gleb")
    # As the code before stored them: no lookup terms for the other script.
    for person in (gleb, latin):
        terms = [t for t in person.name_terms if not t.startswith(("lat", "cyr"))]
        Person.objects.filter(pk=person.pk).update(name_terms=terms)
    assert services.person_dedup(person=latin, auto_merge=True) == {"merged": 0, "proposed": 0}
    importlib.import_module("people.migrations.0006_translit_lookup_terms").add_translit_terms(apps, None)
    gleb.refresh_from_db()
    assert gleb.name_terms[-2:] == ["cyr:glb", "cyr:glbshk"]
    assert services.person_dedup(person=latin, auto_merge=True) == {"merged": 0, "proposed": 1}


def test_people_written_before_get_the_terms_a_typo_in_the_other_script_finds(
    make_person: Callable[..., Person],
) -> None:
    from people import services

    petrov = make_person("Сергей Петров")
    plain = make_person("Анна")
    # As the code before stored them: no near terms ("cyr~:srg ptr").
    Person.objects.filter(pk=petrov.pk).update(name_terms=[t for t in petrov.name_terms if not t.startswith("cyr~")])
    before = Person.objects.get(pk=plain.pk).name_terms
    typo = make_person("Sergey Petrof")
    assert services.person_dedup(person=typo, auto_merge=True) == {"merged": 0, "proposed": 0}
    importlib.import_module("people.migrations.0007_translit_near_terms").add_near_terms(apps, None)
    petrov.refresh_from_db()
    assert petrov.name_terms[-3:] == ["cyr~:srg prv", "cyr~:srg ptv", "cyr~:srg ptr"]
    assert Person.objects.get(pk=plain.pk).name_terms == before
    assert services.person_dedup(person=typo, auto_merge=True) == {"merged": 0, "proposed": 1}


def test_people_written_before_are_found_by_their_name_in_the_other_script(
    make_person: Callable[..., Person], tenant: Tenant,
) -> None:
    from people import selectors

    # No full name among her names: "Masha" would find "Мария" as its diminutive, without the migration.
    masha = make_person("Маша", aliases=["Петрова"])
    plain = make_person("Анна")
    # As the code before stored them: no folded words ("cyr=masha").
    for person in (masha, plain):
        Person.objects.filter(pk=person.pk).update(name_terms=[t for t in person.name_terms if "=" not in t])
    before = Person.objects.get(pk=plain.pk).name_terms
    assert selectors.people_search(tenant_id=tenant.pk, user_id="u1", query="Did Masha call?").hits == []
    importlib.import_module("people.migrations.0008_translit_word_terms").add_word_terms(apps, None)
    masha.refresh_from_db()
    assert {"cyr=masha", "cyr=petrova"} <= set(masha.name_terms)
    assert Person.objects.get(pk=plain.pk).name_terms == [*before, "cyr=ana"]
    hits = selectors.people_search(tenant_id=tenant.pk, user_id="u1", query="Did Masha call?").hits
    assert [h.person for h in hits] == [masha]
