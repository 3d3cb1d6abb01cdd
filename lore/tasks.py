"""Celery tasks of game-master knowledge: background builds of uploads, the beat's sweep of them, and
the retention of old knowledge versions."""

from __future__ import annotations

from celery import shared_task

from lore import builds, pruning
from lore.models import World


@shared_task
def knowledge_build_task(build_id: int) -> str:
    build = builds.knowledge_build_run(build_id=build_id)
    return build.status if build is not None else "missing"


@shared_task
def knowledge_builds_sweep() -> int:
    return builds.knowledge_builds_sweep()


@shared_task
def knowledge_versions_prune(world_id: int | None = None) -> dict[str, int]:
    """Beat (daily, every world): the retention policy of knowledge versions. With `world_id`: that
    world's, after the admin's action marked its old versions pruned (the chunks are deleted here, not
    in the admin's request). Idempotent: a second run finds nothing more to do."""
    world = None
    if world_id is not None:
        world = World.objects.select_related("tenant").filter(pk=world_id).first()
        if world is None:
            return {"kept": 0, "pruned": 0, "namespaces": 0, "chunks": 0}  # deleted meanwhile
    return pruning.knowledge_versions_prune(world=world).counts()
