"""Data migrations of the profiles app, run on rows written by the code before them."""

from __future__ import annotations

import importlib

import pytest
from django.apps import apps

from profiles import services
from profiles.models import FactEvent, UserProfile

pytestmark = pytest.mark.django_db


def _as_before(fact: UserProfile, key: str) -> None:
    """Store `fact` under `key`, as the code before American spellings did."""
    UserProfile.objects.filter(pk=fact.pk).update(key=key)
    FactEvent.objects.filter(fact_ref=fact.pk).update(key=key)


def test_facts_under_a_british_spelling_move_to_the_american_key(tenant) -> None:
    def save(user_id: str, key: str, value: str) -> UserProfile:
        return services.fact_upsert(tenant=tenant, user_id=user_id, key=key, value=value, source="api").fact

    alone = save("u1", "favorite_color", "green")
    _as_before(alone, "favourite_colour")
    same = save("u2", "favorite_color", "blue")
    _as_before(same, "favourite_colour")
    kept = save("u2", "favorite_color", "blue")  # the same fact, already under the new key
    competing = save("u3", "favorite_color", "red")
    _as_before(competing, "favourite_colour")
    current = save("u3", "favorite_color", "pink")
    untouched = save("u1", "tour_hour", "9")

    importlib.import_module("profiles.migrations.0004_american_key_spelling").americanise_keys(apps, None)

    def held(user_id: str) -> dict[str, tuple[str, str]]:
        return {f.value: (f.key, f.status) for f in UserProfile.objects.filter(tenant=tenant, user_id=user_id)}

    assert held("u1") == {"green": ("favorite_color", "active"), "9": ("tour_hour", "active")}
    assert held("u2") == {"blue": ("favorite_color", "active")} and not UserProfile.objects.filter(pk=same.pk).exists()
    assert UserProfile.objects.get(pk=kept.pk).key == "favorite_color"
    assert held("u3") == {"red": ("favorite_color", "pending"), "pink": ("favorite_color", "active")}
    assert UserProfile.objects.get(pk=current.pk).status == "active"
    assert UserProfile.objects.get(pk=untouched.pk).key == "tour_hour"
    assert not FactEvent.objects.filter(key="favourite_colour").exists()
    assert FactEvent.objects.filter(user_id="u1", key="favorite_color").count() == 1
