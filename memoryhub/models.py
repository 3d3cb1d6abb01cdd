"""Kernel models: tenants and their API keys, conversations, messages and the archival outbox."""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone


class Tenant(models.Model):
    """One client app (a chat bot, an agent, a game). Every tenant-owned row points here."""

    name = models.CharField(max_length=200, unique=True)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.name


def default_scopes() -> list[str]:
    return ["memory"]


class ApiKey(models.Model):
    """A bearer key. Only its SHA-256 is stored: the key itself is shown once, at creation."""

    class Scope(models.TextChoices):
        MEMORY = "memory"  # chat memory: today's routes; the default, so older keys keep working
        EDITOR = "editor"  # lore sources, edits, publish and rollback
        ENGINE = "engine"  # episodes, NPCs, art cards written by a game engine
        TOOLS = "tools"  # read-only tools (knowledge search)

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="api_keys")
    name = models.CharField(max_length=100, default="default")
    # The visible head of the key ("mh_ab12cd34"), so an operator can tell keys apart.
    prefix = models.CharField(max_length=16)
    key_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    scopes = ArrayField(models.CharField(max_length=16, choices=Scope.choices), default=default_scopes)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.name})"

    @property
    def is_active(self) -> bool:
        return self.revoked_at is None


class Conversation(models.Model):
    """One session of one end user of a tenant. `user_id` and `session_id` are the client's ids."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="conversations")
    user_id = models.CharField(max_length=128)
    session_id = models.CharField(max_length=128)
    created_at = models.DateTimeField(default=timezone.now)
    last_message_at = models.DateTimeField(null=True, blank=True)
    # When a message last arrived (server time): a history imported today is recent by this clock
    # although its messages say they were written months ago.
    last_received_at = models.DateTimeField(null=True, blank=True)
    message_count = models.PositiveIntegerField(default=0)
    # Set when the session's messages went through extraction, so the idle sweep skips it.
    extracted_until_message_id = models.BigIntegerField(default=0)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "user_id", "session_id"], name="conversation_unique_session"),
        ]
        indexes = [
            # The idle-session sweep: sessions by last activity.
            models.Index(fields=["last_message_at"], name="conversation_last_msg_idx"),
            # The consolidation sweep: sessions that received messages lately.
            models.Index(fields=["last_received_at"], name="conversation_last_recv_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.user_id}/{self.session_id}"


class Message(models.Model):
    class Role(models.TextChoices):
        USER = "user"
        ASSISTANT = "assistant"
        SYSTEM = "system"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="messages")
    # Denormalised from the conversation: erasure and per-user reads filter on it directly.
    user_id = models.CharField(max_length=128)
    role = models.CharField(max_length=16, choices=Role.choices)
    speaker = models.CharField(max_length=128, blank=True)
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    received_at = models.DateTimeField(default=timezone.now)
    # NULL, not "", when absent: the unique constraint below applies only to real client ids.
    external_id = models.CharField(max_length=128, null=True, blank=True)  # noqa: DJ001
    emotion = models.CharField(max_length=32, blank=True)
    meta = models.JSONField(default=dict, blank=True)

    class Meta:
        constraints = [
            # Idempotent retries: the same client id in the same session is stored once.
            models.UniqueConstraint(
                fields=["conversation", "external_id"],
                condition=models.Q(external_id__isnull=False),
                name="message_unique_external_id",
            ),
        ]
        indexes = [
            # Short-term memory: a session's newest messages.
            models.Index(fields=["conversation", "-created_at", "-id"], name="message_recent_idx"),
            # Erasure and per-user reads.
            models.Index(fields=["tenant", "user_id"], name="message_tenant_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.text[:60]}"


class ArchivalJob(models.Model):
    """The outbox row written in the same transaction as the messages it archives.

    Two kinds: `index` (one per stored batch: chunks and vectors, never an LLM call) and `extract`
    (one per session at a time: facts, people; LLM calls). A job is enqueued after commit; if the
    broker is down, a worker dies or the LLM is away, it stays unfinished and the sweeper enqueues
    it again when `next_attempt_at` comes, so nothing accepted is lost.
    """

    class Kind(models.TextChoices):
        INDEX = "index"
        EXTRACT = "extract"

    class Status(models.TextChoices):
        PENDING = "pending"
        RUNNING = "running"
        DONE = "done"
        # Gave up after ARCHIVAL_MAX_ATTEMPTS in a row; the sweeper still tries again, rarely.
        FAILED = "failed"

    class Trigger(models.TextChoices):
        BATCH = "batch"
        AUTO_EXTRACT = "auto_extract"
        SIZE = "size"
        IDLE = "idle"
        REQUEST = "request"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    conversation = models.ForeignKey(Conversation, on_delete=models.CASCADE, related_name="jobs")
    user_id = models.CharField(max_length=128)
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.INDEX)
    trigger = models.CharField(max_length=16, choices=Trigger.choices, default=Trigger.BATCH)
    # Index: the batch. Extract: fixed when the job starts (the session's messages not yet extracted).
    message_ids = ArrayField(models.BigIntegerField(), default=list, blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # Failed runs in a row; a success resets nothing (the job is done), a new failure adds one.
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    # When the job may run (again): now for a new job, later after a failure (growing delay).
    next_attempt_at = models.DateTimeField(default=timezone.now)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # What each step wrote ({"steps": {"index": {"chunks": 3}}, ...}), for the admin, audits and
    # resuming a job that stopped between two steps.
    result = models.JSONField(default=dict, blank=True)

    class Meta:
        indexes = [
            # The sweeper: unfinished jobs that are due.
            models.Index(
                fields=["next_attempt_at"],
                condition=models.Q(status__in=["pending", "running", "failed"]),
                name="archivaljob_unfinished_idx",
            ),
            # A user's queue of one kind, in order, for the runner.
            models.Index(fields=["tenant", "user_id", "kind", "id"], name="archivaljob_user_idx"),
            # The session's waiting extraction (at most one), found when a batch arrives.
            models.Index(
                fields=["conversation"],
                condition=models.Q(kind="extract", status__in=["pending", "failed"]),
                name="archivaljob_waiting_extract",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"


class PeriodicRun(models.Model):
    """When each job of the embedded beat (`memoryhub.beat`) last ran to its end.

    The web process runs the schedule itself when no `celery beat` runs, and every start of it
    (runserver restarts at each code change, a deploy restarts gunicorn) used to run every job at
    once, the daily prune and decay included. The leader reads these rows when it takes over, so
    a job runs when its interval since the last finished run is up, whichever process ran it.
    A run killed half-way has no row: it runs again at the next start.
    """

    name = models.CharField(max_length=100, primary_key=True)  # the CELERY_BEAT_SCHEDULE entry
    task = models.CharField(max_length=200)
    started_at = models.DateTimeField()
    finished_at = models.DateTimeField()
    succeeded = models.BooleanField()

    class Meta:
        verbose_name = "periodic job run"

    def __str__(self) -> str:
        return f"{self.name} at {self.started_at:%Y-%m-%d %H:%M}"
