"""Celery tasks of the kernel: thin wrappers that load ids and call services."""

from __future__ import annotations

from celery import shared_task

from memoryhub import services
from memoryhub.llm import LLMUnavailable


@shared_task(
    bind=True,
    autoretry_for=(LLMUnavailable,),
    retry_backoff=5,
    retry_backoff_max=600,
    retry_jitter=True,
    max_retries=5,
)
def archival_job_run_task(self, job_id: int) -> str:  # type: ignore[no-untyped-def]
    job = services.archival_job_run(job_id=job_id)
    return job.status if job else "missing"


@shared_task
def archival_sweep() -> int:
    return services.archival_sweep()


@shared_task
def sessions_extract_idle() -> int:
    return services.sessions_extract_idle()
