"""Small builders for test data, all through the services so tests exercise the real write paths."""

from __future__ import annotations

from datetime import datetime

from memoryhub import services
from memoryhub.models import Tenant


def make_tenant(name: str) -> tuple[Tenant, str]:
    return services.tenant_create(name=name)


def append_messages(
    tenant: Tenant,
    user_id: str,
    session_id: str,
    texts: list[str | tuple[str, str]],
    *,
    start: datetime | None = None,
    auto_extract: bool = False,
    run_job: bool = True,
) -> services.AppendResult:
    """Append turns; a plain string is a user turn, a (role, text) pair sets the role.

    Inside a test transaction on_commit never fires, so the archival jobs (index, and extract when
    one was requested) are run here directly, as a worker would run them (`run_job=False` leaves
    them pending). Then, as a worker would after the index job's commit, the turns' reranker vectors
    (rag.services.chunks_rerank_fill)."""
    from datetime import timedelta

    messages = []
    for i, item in enumerate(texts):
        role, text = ("user", item) if isinstance(item, str) else item
        created = start + timedelta(minutes=i) if start else None
        messages.append(services.IncomingMessage(role=role, text=text, created_at=created))
    result = services.messages_append(
        tenant=tenant, user_id=user_id, session_id=session_id, messages=messages, auto_extract=auto_extract
    )
    if run_job:
        for job in (result.job, result.extract_job):
            if job is not None:
                services.archival_job_run(job_id=job.pk)
        from rag.services import chunks_rerank_fill

        chunks_rerank_fill(tenant_id=tenant.pk, seconds=None)
    return result
