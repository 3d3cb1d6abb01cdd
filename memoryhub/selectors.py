"""Reads of the kernel that more than one caller needs."""

from __future__ import annotations

from datetime import date, datetime, timedelta

from django.conf import settings
from django.db.models import Count, F, Q
from django.utils import timezone

from memoryhub.models import ArchivalJob, Conversation, Message, Tenant


def conversation_get(*, tenant: Tenant, user_id: str, session_id: str) -> Conversation | None:
    return Conversation.objects.filter(tenant=tenant, user_id=user_id, session_id=session_id).first()


def session_recent_messages(*, conversation: Conversation, limit: int) -> list[Message]:
    """The newest `limit` messages of a session, oldest first (prompt order)."""
    newest = list(
        Message.objects.filter(conversation=conversation, tenant_id=conversation.tenant_id)
        .order_by("-created_at", "-id")[:limit]
    )
    return newest[::-1]


def session_messages_before(*, conversation: Conversation, before: Message, limit: int) -> list[Message]:
    """The `limit` messages just older than `before` (by time, then id), oldest first: the next
    page back through a session, on the same index as the newest turns."""
    older = list(
        Message.objects.filter(conversation=conversation, tenant_id=conversation.tenant_id)
        .filter(Q(created_at__lt=before.created_at) | Q(created_at=before.created_at, id__lt=before.pk))
        .order_by("-created_at", "-id")[:limit]
    )
    return older[::-1]


def user_sessions(*, tenant: Tenant, user_id: str, limit: int, offset: int) -> tuple[list[Conversation], int]:
    """A user's sessions, the most recently active first, and how many there are."""
    sessions = Conversation.objects.filter(tenant=tenant, user_id=user_id)
    page = list(sessions.order_by(F("last_message_at").desc(nulls_last=True), "-id")[offset:offset + limit])
    return page, sessions.count()


def previous_conversation_day(*, tenant_id: int, user_id: str, now: datetime) -> date | None:
    """The day the user's previous conversation ended: the most recently active session that has been
    quiet for `ARCHIVAL_IDLE_SECONDS` (the one still going is the conversation asking). None when the
    user has no such session. By the messages' own times, as the turns' date terms are."""
    quiet_since = now - timedelta(seconds=settings.ARCHIVAL_IDLE_SECONDS)
    last = (Conversation.objects.filter(tenant_id=tenant_id, user_id=user_id, last_message_at__lt=quiet_since)
            .order_by("-last_message_at").values_list("last_message_at", flat=True).first())
    return last.date() if last else None


def session_recent_messages_by_ids(*, tenant_id: int, user_id: str, session_id: str, limit: int) -> list[Message]:
    """`session_recent_messages` of the session the client's ids name, in one query (the join
    finds the conversation by its unique key, `message_recent_idx` gives the newest); [] if none."""
    newest = list(
        Message.objects.filter(tenant_id=tenant_id, conversation__tenant_id=tenant_id,
                               conversation__user_id=user_id, conversation__session_id=session_id)
        .order_by("-created_at", "-id")[:limit]
    )
    return newest[::-1]


def archival_jobs_unfinished_by_kind_status() -> dict[tuple[str, str], int]:
    """The queue depth: jobs not done, counted by (kind, status). The filter is the condition of
    the partial index `archivaljob_unfinished_idx`, so a scrape never scans the done jobs."""
    unfinished = [ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING, ArchivalJob.Status.FAILED]
    rows = (ArchivalJob.objects.filter(status__in=unfinished)
            .values_list("kind", "status").annotate(n=Count("id")).order_by())
    return {(kind, status): n for kind, status, n in rows}


def job_waiting_for(job: ArchivalJob) -> int | None:
    """The earlier extraction of the same user that holds `job` back: extractions of a user run in
    the order their turns were said, so one running or waiting for its retry keeps the later ones
    pending even when their own time has come (services._runnable). None when nothing does."""
    if job.kind != ArchivalJob.Kind.EXTRACT or job.status != ArchivalJob.Status.PENDING:
        return None
    return (ArchivalJob.objects.filter(tenant_id=job.tenant_id, user_id=job.user_id, kind=job.kind, pk__lt=job.pk)
            .filter(Q(status=ArchivalJob.Status.RUNNING)
                    | Q(status=ArchivalJob.Status.PENDING, next_attempt_at__gt=timezone.now()))
            .order_by("id").values_list("pk", flat=True).first())
