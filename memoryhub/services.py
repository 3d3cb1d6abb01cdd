"""Writes of the kernel: tenants, API keys, message intake with its outbox, archival jobs."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub import metrics, registry, selectors
from memoryhub.auth import generate_key, hash_key
from memoryhub.exceptions import ApplicationError
from memoryhub.models import ApiKey, ArchivalJob, Conversation, Message, Tenant

logger = logging.getLogger(__name__)


# --- Tenants and keys -----------------------------------------------------------------------
@transaction.atomic
def api_key_create(*, tenant: Tenant, name: str = "default") -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value, which is not stored and cannot be shown again."""
    raw, prefix = generate_key()
    key = ApiKey.objects.create(tenant=tenant, name=name, prefix=prefix, key_hash=hash_key(raw))
    return key, raw


@transaction.atomic
def tenant_create(*, name: str) -> tuple[Tenant, str]:
    name = name.strip()
    if not name:
        raise ApplicationError("Tenant name must not be empty.", field="name")
    if Tenant.objects.filter(name=name).exists():
        raise ApplicationError(f"Tenant {name!r} already exists.", code="exists", field="name")
    tenant = Tenant.objects.create(name=name)
    _, raw = api_key_create(tenant=tenant)
    return tenant, raw


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    return api_key


# --- Message intake (with its outbox row) ---------------------------------------------------
@dataclass
class IncomingMessage:
    role: str
    text: str
    created_at: datetime | None = None
    external_id: str | None = None
    speaker: str = ""
    emotion: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class AppendResult:
    conversation: Conversation
    created: list[Message]
    duplicates: int
    job: ArchivalJob | None


@transaction.atomic
def messages_append(
    *,
    tenant: Tenant,
    user_id: str,
    session_id: str,
    messages: Sequence[IncomingMessage],
    auto_extract: bool = False,
) -> AppendResult:
    """Store a batch and its archival job in one transaction; enqueue the job after commit.

    Idempotent on `external_id`: messages whose id is already stored in this session are skipped,
    so a client may retry a batch after a timeout without duplicating anything.
    """
    conversation, _ = Conversation.objects.get_or_create(tenant=tenant, user_id=user_id, session_id=session_id)
    # Serialise appends to one session, so two concurrent retries of one batch cannot both pass
    # the duplicate check and then collide on the unique constraint.
    conversation = Conversation.objects.select_for_update().get(pk=conversation.pk)

    ids = [m.external_id for m in messages if m.external_id]
    existing = set(
        Message.objects.filter(conversation=conversation, external_id__in=ids).values_list("external_id", flat=True)
    ) if ids else set()

    now = timezone.now()
    rows = [
        Message(
            tenant=tenant,
            conversation=conversation,
            user_id=user_id,
            role=m.role,
            speaker=m.speaker,
            text=m.text,
            created_at=m.created_at or now,
            received_at=now,
            external_id=m.external_id,
            emotion=m.emotion,
            meta=m.meta,
        )
        for m in messages
        if not (m.external_id and m.external_id in existing)
    ]
    created = Message.objects.bulk_create(rows)
    job = None
    if created:
        latest = max(m.created_at for m in created)
        conversation.message_count += len(created)
        if conversation.last_message_at is None or latest > conversation.last_message_at:
            conversation.last_message_at = latest
        conversation.save(update_fields=["message_count", "last_message_at"])
        message_ids = [m.pk for m in created]
        pending = _unextracted_ids(conversation)
        if not auto_extract and len(pending) >= settings.ARCHIVAL_SESSION_SIZE:
            # The session reached the extraction size: this job extracts everything not yet seen.
            auto_extract, message_ids = True, pending
        elif auto_extract:
            message_ids = pending
        job = ArchivalJob.objects.create(
            tenant=tenant,
            conversation=conversation,
            user_id=user_id,
            message_ids=message_ids,
            auto_extract=auto_extract,
        )
        job_id = job.pk
        transaction.on_commit(lambda: archival_job_enqueue(job_id=job_id))
    return AppendResult(conversation=conversation, created=created, duplicates=len(messages) - len(created), job=job)


def _unextracted_ids(conversation: Conversation) -> list[int]:
    return list(
        Message.objects.filter(conversation=conversation, pk__gt=conversation.extracted_until_message_id)
        .order_by("id").values_list("id", flat=True)
    )


def sessions_extract_idle(*, idle: timedelta | None = None) -> int:
    """Beat: a session idle for `ARCHIVAL_IDLE_SECONDS` with messages not yet through extraction
    gets an extraction job (facts, people). Returns the number of jobs created."""
    idle = idle if idle is not None else timedelta(seconds=settings.ARCHIVAL_IDLE_SECONDS)
    cutoff = timezone.now() - idle
    created = 0
    for conversation in Conversation.objects.filter(last_message_at__lt=cutoff).select_related("tenant"):
        with transaction.atomic():
            locked = Conversation.objects.select_for_update().get(pk=conversation.pk)
            pending = _unextracted_ids(locked)
            already = ArchivalJob.objects.filter(
                conversation=locked, auto_extract=True,
                status__in=[ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING],
            ).exists()
            if not pending or already:
                continue
            job = ArchivalJob.objects.create(tenant=locked.tenant, conversation=locked, user_id=locked.user_id,
                                             message_ids=pending, auto_extract=True)
            job_id = job.pk
            transaction.on_commit(lambda job_id=job_id: archival_job_enqueue(job_id=job_id))
            created += 1
    return created


# --- Archival jobs --------------------------------------------------------------------------
def archival_job_enqueue(*, job_id: int) -> bool:
    """Hand a job to the broker. A broker outage is logged, not raised: the job row is committed
    and the sweeper will enqueue it again, so the client's request still succeeds."""
    from memoryhub.tasks import archival_job_run_task

    ArchivalJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
    try:
        archival_job_run_task.delay(job_id)
    except Exception as exc:  # kombu raises several types for an unreachable broker
        logger.warning("archival job %s not enqueued, the sweeper will retry: %s", job_id, exc)
        return False
    return True


def _user_lock_key(tenant_id: int, user_id: str) -> str:
    return f"archival:{tenant_id}:{user_id}"


def archival_job_run(*, job_id: int) -> ArchivalJob | None:
    """Run a job and every older unfinished job of the same user, oldest first, under a per-user
    lock, so a user's memories are written in date order even with several workers.

    The steps and the job's status commit together: a job is either done with everything it
    wrote, or not done with nothing written, which makes a re-run safe.
    """
    job = ArchivalJob.objects.filter(pk=job_id).first()
    if job is None or job.status == ArchivalJob.Status.DONE:
        return job
    for pending_id in list(
        ArchivalJob.objects.filter(
            tenant_id=job.tenant_id,
            user_id=job.user_id,
            id__lte=job.pk,
            status__in=[ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING],
        ).order_by("id").values_list("id", flat=True)
    ):
        _archival_job_run_one(pending_id)
    job.refresh_from_db()
    return job


def _archival_job_run_one(job_id: int) -> None:
    started = time.monotonic()
    try:
        with transaction.atomic():
            job = ArchivalJob.objects.select_related("tenant").get(pk=job_id)
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                    [_user_lock_key(job.tenant_id, job.user_id)],
                )
            job = ArchivalJob.objects.select_for_update().select_related("tenant").get(pk=job_id)
            if job.status == ArchivalJob.Status.DONE:
                return
            messages = list(Message.objects.filter(pk__in=job.message_ids).order_by("created_at", "id"))
            result: dict[str, Any] = {}
            for step in registry.archival_steps:
                result[step.name] = step.run(job, messages)
            job.status = ArchivalJob.Status.DONE
            job.attempts += 1
            job.started_at = job.started_at or timezone.now()
            job.finished_at = timezone.now()
            job.error = ""
            job.result = result | {"duration_ms": round((time.monotonic() - started) * 1000, 1)}
            job.save(update_fields=["status", "attempts", "started_at", "finished_at", "error", "result"])
            if job.auto_extract and job.message_ids:
                Conversation.objects.filter(
                    pk=job.conversation_id, extracted_until_message_id__lt=max(job.message_ids)
                ).update(extracted_until_message_id=max(job.message_ids))
        metrics.ARCHIVAL_JOBS.labels("done").inc()
    except Exception as exc:
        _archival_job_record_failure(job_id=job_id, error=exc)
        raise


def _archival_job_record_failure(*, job_id: int, error: Exception) -> None:
    job = ArchivalJob.objects.get(pk=job_id)
    job.attempts += 1
    job.error = f"{type(error).__name__}: {error}"[:2000]
    give_up = job.attempts >= settings.ARCHIVAL_MAX_ATTEMPTS
    job.status = ArchivalJob.Status.FAILED if give_up else ArchivalJob.Status.PENDING
    job.save(update_fields=["attempts", "error", "status"])
    metrics.ARCHIVAL_JOBS.labels("failed" if give_up else "retry").inc()
    logger.warning("archival job %s failed (attempt %s): %s", job_id, job.attempts, job.error)


def archival_sweep(*, older_than: timedelta | None = None) -> int:
    """Enqueue again every unfinished job whose last enqueue is older than the setting (or never
    happened): the broker was down, a worker died, or a message was lost. Returns the count."""
    older_than = older_than if older_than is not None else timedelta(seconds=settings.ARCHIVAL_SWEEP_AFTER_SECONDS)
    cutoff = timezone.now() - older_than
    stale = list(
        ArchivalJob.objects.filter(status__in=[ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING])
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=cutoff))
        .order_by("id")
        .values_list("id", flat=True)
    )
    for job_id in stale:
        archival_job_enqueue(job_id=job_id)
    metrics.QUEUE_DEPTH.set(selectors.archival_jobs_unfinished_count())
    return len(stale)



# --- Erasure --------------------------------------------------------------------------------
@transaction.atomic
def user_erase(*, tenant: Tenant, user_id: str) -> dict[str, Any]:
    """Delete everything held for one user of one tenant, in one transaction, and return a
    receipt of counts. Apps delete their own rows through `registry.erasers`."""
    deleted: dict[str, int] = {}
    for eraser in registry.erasers:
        for kind, count in eraser.run(tenant, user_id).items():
            deleted[kind] = deleted.get(kind, 0) + count
    deleted["jobs"], _ = ArchivalJob.objects.filter(tenant=tenant, user_id=user_id).delete()
    deleted["messages"], _ = Message.objects.filter(tenant=tenant, user_id=user_id).delete()
    deleted["conversations"], _ = Conversation.objects.filter(tenant=tenant, user_id=user_id).delete()
    logger.info("erased user %s of tenant %s: %s", user_id, tenant.pk, deleted)
    return {"user_id": user_id, "erased_at": timezone.now(), "deleted": deleted}
