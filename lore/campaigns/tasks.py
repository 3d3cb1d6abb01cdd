"""Beat jobs of campaign memory (seed 003 §8.9): retention. Each returns its counts (see retention)."""

from __future__ import annotations

from celery import shared_task

from lore.campaigns import retention, threads


@shared_task
def episodes_expire() -> dict[str, int]:
    return retention.episodes_expire()


@shared_task
def scene_assemblies_prune() -> dict[str, int]:
    return retention.scene_assemblies_prune()


@shared_task
def threads_expire() -> dict[str, int]:
    return threads.threads_expire()
