"""Lore edits reviewed by editors (seed 003 §8.2.2: lore changes only through review).

An edit creates, updates or deletes one entry (language + entry id) of a world's domain. Approving
it builds the next staged version (the previous version plus the edit); nothing live changes until
that version is published. Every proposal and decision is a `KnowledgeEditEvent` row.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from lore.models import Domain, KnowledgeVersion, World
from memoryhub.models import Tenant


class KnowledgeEdit(models.Model):
    class Action(models.TextChoices):
        CREATE = "create"
        UPDATE = "update"
        DELETE = "delete"

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="edits")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    language = models.CharField(max_length=8)
    entry_id = models.CharField(max_length=300)
    action = models.CharField(max_length=16, choices=Action.choices)
    title = models.CharField(max_length=300, blank=True)
    text = models.TextField(blank=True)
    reason = models.TextField()
    proposed_by = models.CharField(max_length=200)
    # The entry as the proposer saw it (the version then under `stage`, else `latest`): the
    # reviewer's diff compares against this, not against a version built later.
    base_version = models.ForeignKey(KnowledgeVersion, null=True, blank=True, on_delete=models.SET_NULL,
                                     related_name="+")
    old_title = models.CharField(max_length=300, blank=True)
    old_text = models.TextField(blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    decided_by = models.CharField(max_length=200, blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    decision_reason = models.TextField(blank=True)
    produced_version = models.ForeignKey(KnowledgeVersion, null=True, blank=True, on_delete=models.SET_NULL,
                                         related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The review queue and the API listing: a world's edits by status, oldest first.
            models.Index(fields=["world", "status", "id"], name="knowledgeedit_queue_idx"),
            # The admin dashboard: pending edits of every world, counted and aged.
            models.Index(fields=["status", "created_at"], name="knowledgeedit_pending_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.world}:{self.domain}:{self.language}:{self.entry_id}"


class KnowledgeEditEvent(models.Model):
    """The audit trail of edits: one row per proposal, approval and rejection."""

    class Action(models.TextChoices):
        PROPOSED = "proposed"
        APPROVED = "approved"
        REJECTED = "rejected"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    edit = models.ForeignKey(KnowledgeEdit, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=16, choices=Action.choices)
    actor = models.CharField(max_length=200)
    reason = models.TextField(blank=True)
    version = models.CharField(max_length=32, blank=True)  # the version an approval produced
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The dashboard's "decided since": newest decisions first.
            models.Index(fields=["created_at"], name="knowledgeeditevent_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} edit {self.edit_id} by {self.actor}"
