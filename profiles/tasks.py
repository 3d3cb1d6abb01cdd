"""Celery tasks of the profiles app."""

from __future__ import annotations

from celery import shared_task

from profiles import services


@shared_task
def facts_decay() -> int:
    """Beat (daily): lower the confidence of facts not confirmed for PROFILE_DECAY_AFTER_DAYS.
    Idempotent within PROFILE_DECAY_INTERVAL_DAYS, so a re-delivered run changes nothing."""
    return services.facts_decay()
