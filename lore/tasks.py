"""Celery tasks of game-master knowledge: background builds of uploads, and the beat's sweep of them."""

from __future__ import annotations

from celery import shared_task

from lore import builds


@shared_task
def knowledge_build_task(build_id: int) -> str:
    build = builds.knowledge_build_run(build_id=build_id)
    return build.status if build is not None else "missing"


@shared_task
def knowledge_builds_sweep() -> int:
    return builds.knowledge_builds_sweep()
