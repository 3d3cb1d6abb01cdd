"""Reads of the kernel that more than one caller needs."""

from __future__ import annotations

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


def archival_jobs_unfinished_count() -> int:
    return ArchivalJob.objects.filter(status__in=[ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING]).count()
