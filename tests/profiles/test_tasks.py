"""The decay beat task."""

from __future__ import annotations

from datetime import timedelta

from django.utils import timezone

from profiles import services
from profiles.models import UserProfile
from profiles.tasks import facts_decay


def test_decay_task_reports_how_many_facts_it_lowered_and_is_idempotent(tenant) -> None:
    for key, value in (("name", "Anna"), ("location", "Berlin")):
        services.fact_upsert(tenant=tenant, user_id="u1", key=key, value=value, confidence=0.9,
                             source=UserProfile.Source.API)
    UserProfile.objects.update(confirmed_at=timezone.now() - timedelta(days=181))
    assert facts_decay.delay().get() == 2
    assert facts_decay.delay().get() == 0
    assert set(UserProfile.objects.values_list("confidence", flat=True)) == {0.81}
