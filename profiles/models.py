"""Long-term user facts (seed 002's `user_profile`) and their audit trail.

One row is one value of one key of one user. A single-valued key (name, location…) has at most one
active row; a competing value waits beside it as a pending row. A multi-valued key (likes, pets…)
has one active row per value. Seed 002's UNIQUE(user_id, key) therefore becomes: unique per tenant,
user, key and value, and at most one active value per tenant, user and single-valued key.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone

from memoryhub.models import Message, Tenant


class UserProfile(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        PENDING = "pending", "pending review"
        REJECTED = "rejected"

    class Source(models.TextChoices):
        API = "api"
        LLM = "llm"
        RULES = "rules"
        ADMIN = "admin"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    key = models.CharField(max_length=64)
    value = models.TextField()
    # normalize(value): "Berlin" and "berlin " are the same fact.
    value_norm = models.TextField(editable=False)
    # The key's cardinality when written; the partial unique constraint below needs it on the row.
    multi = models.BooleanField(default=False, editable=False)
    confidence = models.FloatField(default=1.0)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    source = models.CharField(max_length=16, choices=Source.choices)
    source_message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)
    # Last time the fact was stated or approved; decay starts from here.
    confirmed_at = models.DateTimeField(default=timezone.now)
    decayed_at = models.DateTimeField(null=True, blank=True)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        verbose_name = "fact"
        constraints = [
            models.UniqueConstraint(
                fields=["tenant", "user_id", "key", "value_norm"], name="profile_fact_unique_value"
            ),
            models.UniqueConstraint(
                fields=["tenant", "user_id", "key"],
                condition=models.Q(status="active", multi=False),
                name="profile_fact_one_active_value",
            ),
            models.CheckConstraint(
                condition=models.Q(confidence__gte=0, confidence__lte=1), name="profile_fact_confidence_range"
            ),
        ]
        indexes = [
            # A user's profile by status (API, context block, erasure); the unique index above
            # serves per-key reads.
            models.Index(fields=["tenant", "user_id", "status"], name="profile_fact_user_status_idx"),
            # The admin review queue: pending facts, newest first.
            models.Index(
                fields=["-updated_at"], condition=models.Q(status="pending"), name="profile_fact_pending_idx"
            ),
            # The decay beat: active facts by last confirmation.
            models.Index(fields=["confirmed_at"], condition=models.Q(status="active"), name="profile_fact_decay_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}.{self.key} = {self.value[:60]}"


class FactEvent(models.Model):
    """One change to a user's facts: who or what made it, when, old → new, and why.

    Keyed by tenant, user and key rather than only by fact row, so a key's story survives the rows
    that a replacement or a deletion removes. Erased with the user.
    """

    class Action(models.TextChoices):
        CREATED = "created"
        PROPOSED = "proposed", "proposed for review"
        CONFIRMED = "confirmed"
        UPDATED = "updated"
        REPLACED = "replaced"
        APPROVED = "approved"
        EDITED = "edited", "edited and approved"
        REJECTED = "rejected"
        REOPENED = "reopened", "reopened for review"
        DELETED = "deleted"
        DECAYED = "decayed"

    class Actor(models.TextChoices):
        API = "api"
        LLM = "llm"
        RULES = "rules"
        ADMIN = "admin"
        SYSTEM = "system"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    key = models.CharField(max_length=64)
    fact = models.ForeignKey(UserProfile, null=True, blank=True, on_delete=models.SET_NULL, related_name="events")
    # The fact's id, kept when its row goes (a replacement, a deletion): the review API tells an
    # editor holding that id what became of it instead of "no such item".
    fact_ref = models.BigIntegerField(null=True, blank=True)
    action = models.CharField(max_length=16, choices=Action.choices)
    actor = models.CharField(max_length=16, choices=Actor.choices)
    reviewer = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    # The reviewer's username at the time, kept when the account is gone.
    reviewer_name = models.CharField(max_length=150, blank=True)
    old_value = models.TextField(blank=True)
    new_value = models.TextField(blank=True)
    old_confidence = models.FloatField(null=True, blank=True)
    new_confidence = models.FloatField(null=True, blank=True)
    old_status = models.CharField(max_length=16, blank=True)
    new_status = models.CharField(max_length=16, blank=True)
    reason = models.TextField(blank=True)
    source_message = models.ForeignKey(Message, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    meta = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # A key's history, newest first; erasure by user uses its prefix.
            models.Index(fields=["tenant", "user_id", "key", "-created_at"], name="profile_event_history_idx"),
            models.Index(fields=["tenant", "fact_ref"], name="profile_event_fact_ref_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.action} by {self.who}"

    @property
    def who(self) -> str:
        # An API decision's reviewer name is already the key's label ("api-key:mh_… (console)").
        if self.reviewer_name.startswith("api-key:"):
            return self.reviewer_name
        return f"{self.actor}:{self.reviewer_name}" if self.reviewer_name else self.actor
