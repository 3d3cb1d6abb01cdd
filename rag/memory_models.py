"""Models of typed memories (seed 004): characters, consolidation runs, review items, mood.

The memories themselves are `rag.Chunk` rows of type `memory` (searchable like any chunk); these
models hold what is not a searchable text: who the character is, each consolidation run (the job
record: window, attempts, error, insight), low-confidence memories waiting for an editor, and
the per-user mood, affinity and trust of a character.
"""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from memoryhub.models import Conversation, Tenant
from rag.models import Chunk


class Character(models.Model):
    """A character (seed 004's `conf_uid`) of a tenant, created by its first memory.

    It exists so that another tenant's character answers 404 rather than an empty list."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conf_uid = models.CharField(max_length=128)
    name = models.CharField(max_length=128, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "conf_uid"], name="character_tenant_uid_uniq")]

    def __str__(self) -> str:
        return self.name or self.conf_uid


class MemoryConsolidation(models.Model):
    """One consolidation of a window of a session's messages into typed memories.

    It is the job's record: a malformed LLM reply or an outage is written here (attempts, error,
    next attempt) and the run is retried by the beat sweep; the messages are never touched."""

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        FAILED = "failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    conf_uid = models.CharField(max_length=128)
    trigger = models.CharField(max_length=16)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # The window, fixed when the run starts.
    first_message_id = models.BigIntegerField(null=True, blank=True)
    last_message_id = models.BigIntegerField(null=True, blank=True)
    consolidator = models.CharField(max_length=16, blank=True)  # llm | rules
    attempts = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    created_at = models.DateTimeField(default=timezone.now)
    finished_at = models.DateTimeField(null=True, blank=True)
    novelty_score = models.FloatField(null=True, blank=True)
    # The validated consolidation JSON and what was written from it.
    output = models.JSONField(default=dict, blank=True)
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            # Where the next window starts: the last message a run of the session has taken.
            models.Index(fields=["conversation", "status", "-last_message_id"], name="consolidation_conv_idx"),
            # The sweep: unfinished runs that are due.
            models.Index(fields=["next_attempt_at"], name="consolidation_due_idx",
                         condition=models.Q(status__in=["pending", "running", "failed"])),
        ]

    def __str__(self) -> str:
        return f"consolidation {self.pk} ({self.status})"


class MemoryReview(models.Model):
    """A consolidated memory below `MEMORY_REVIEW_CONFIDENCE`: not a chunk (so retrieval cannot
    see it) until an editor approves it; the row stays as the audit of the decision."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    conf_uid = models.CharField(max_length=128)
    history_uid = models.CharField(max_length=128, blank=True)
    consolidation = models.ForeignKey(MemoryConsolidation, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    text = models.TextField()
    kind = models.CharField(max_length=32)
    category = models.CharField(max_length=32)
    importance = models.FloatField(default=0.5)
    confidence = models.FloatField()
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    emotion = models.CharField(max_length=32, blank=True)
    context_window = models.CharField(max_length=200, blank=True)
    occurred_at = models.DateTimeField(null=True, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    chunk_id = models.BigIntegerField(null=True, blank=True)  # the memory written on approval
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    # Who decided, kept when the account is gone and for API keys, which are no user:
    # "admin:alice" or "api-key:mh_1234abcd (console)"; and why.
    decided_by = models.CharField(max_length=200, blank=True)
    decision_reason = models.TextField(blank=True)
    decided_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The review queue: pending items, oldest first.
            models.Index(fields=["status", "created_at"], name="memoryreview_queue_idx"),
            # Erasure of a user's items.
            models.Index(fields=["tenant", "user_id"], name="memoryreview_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.category}: {self.text[:60]}"


class CharacterMood(models.Model):
    """How one user feels towards one character, and how the character regards them.

    `mood` is a moving average of the emotions consolidation detects (0.7 previous + 0.3 new,
    in -1..1); `affinity` (-100..100) and `trust` (0..100) move with each consolidation and decay
    towards neutral over inactivity (applied when read and when next written)."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    conf_uid = models.CharField(max_length=128)
    mood = models.FloatField(default=0.0)
    affinity = models.FloatField(default=0.0)
    trust = models.FloatField(default=50.0)
    emotions = models.JSONField(default=dict, blank=True)  # last detected {emotion: score}
    interactions = models.PositiveIntegerField(default=0)
    last_interaction_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "conf_uid", "user_id"],
                                               name="charactermood_uniq")]

    def __str__(self) -> str:
        return f"{self.user_id} ↔ {self.conf_uid}: mood {self.mood:+.2f}"


class TypedMemory(Chunk):
    """Chunks of type `memory`, for the admin's list of typed memories."""

    class Meta:
        proxy = True
        verbose_name = "typed memory"
        verbose_name_plural = "typed memories"
