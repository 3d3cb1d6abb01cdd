"""Celery tasks of typed memories: thin wrappers over the services."""

from __future__ import annotations

from celery import shared_task

from rag.memories import consolidation, forgetting


# No Celery retries: a failed run records its next attempt on its row and the beat sweep
# (memories_consolidate_due) is the one owner of retries, as for archival jobs.
@shared_task
def memories_consolidate(run_id: int) -> str:
    run = consolidation.consolidation_run(run_id=run_id)
    return run.status if run else "busy"


@shared_task
def memories_consolidate_due() -> dict[str, int]:
    return consolidation.consolidations_due()


@shared_task
def memories_forget() -> dict[str, int]:
    return forgetting.memories_forget()
