"""Celery tasks of the kernel: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task

from memoryhub import services


# No Celery retries: a failed job records its next attempt on its row and the sweeper, the one
# owner of retries, enqueues it then (two owners once pushed `attempts` past the maximum).
@shared_task
def archival_job_run_task(job_id: int) -> str:
    job = services.archival_job_run(job_id=job_id)
    return job.status if job else "missing"


@shared_task
def archival_sweep() -> int:
    return services.archival_sweep()


@shared_task
def sessions_extract_idle() -> int:
    return services.sessions_extract_idle()
