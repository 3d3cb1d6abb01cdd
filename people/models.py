"""People of a user's life (seed 000), the relations between them, merges and their review."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex

from memoryhub.models import Message, Tenant
from memoryhub.vector_io import VectorColumnField
from people.names import relation_aliases


class Person(models.Model):
    """Someone a user mentions. Owned by (tenant, user_id); a merged person stays as a tombstone."""

    class Circle(models.TextChoices):
        FAMILY = "Family"
        WORK_INNER = "Work_Inner"
        FRIENDS = "Friends"
        WORK_OUTER = "Work_Outer"
        OTHER = "Other"

    INNER_CIRCLES = (Circle.FAMILY, Circle.WORK_INNER)

    class Status(models.TextChoices):
        ACTIVE = "active"
        MERGED = "merged"  # a tombstone: merged into `merged_into`, kept so the merge can be undone

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    display_name = models.CharField(max_length=200)
    aliases = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    telegram_id = models.BigIntegerField(null=True, blank=True)
    # Without the "@", lower case. NULL, not "", when absent (seed 000: no @username → null).
    username = models.CharField(max_length=64, null=True, blank=True)  # noqa: DJ001
    circle = models.CharField(max_length=16, choices=Circle.choices, default=Circle.OTHER)
    # Set when an editor or the client chose the circle: the archivist's "last wins" stops here.
    circle_locked = models.BooleanField(default=False)
    bio = models.TextField(blank=True)
    # EMBEDDING_DIMENSIONS wide in the database (rag/vector_width.py); this is the migrations' width.
    embedding = VectorColumnField(dimensions=settings.MIGRATED_EMBEDDING_DIMENSIONS, null=True, blank=True)
    first_seen = models.DateTimeField(default=timezone.now)
    last_seen = models.DateTimeField(default=timezone.now)
    mention_count = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=8, choices=Status.choices, default=Status.ACTIVE)
    merged_into = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    # Derived from the names, aliases, username and bio by the services (people.services._derive):
    # the normalised display name, every name/alias key, name lookup terms, bio search terms.
    name_key = models.CharField(max_length=200, db_index=False)
    name_keys = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    name_terms = ArrayField(models.CharField(max_length=200), default=list, blank=True)
    search_terms = ArrayField(models.CharField(max_length=128), default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "people"
        indexes = [
            # Every read: a user's living people (lists, inner circle, exact vector scans).
            models.Index(fields=["tenant", "user_id", "status", "circle"], name="person_user_circle_idx"),
            # Identity matching by name (archivist: "an add whose name equals a known name").
            models.Index(fields=["tenant", "user_id", "name_key"], name="person_user_name_idx"),
            # Identity matching by @username and Telegram id.
            models.Index(fields=["tenant", "user_id", "username"], name="person_user_username_idx",
                         condition=models.Q(username__isnull=False)),
            models.Index(fields=["tenant", "user_id", "telegram_id"], name="person_user_tgid_idx",
                         condition=models.Q(telegram_id__isnull=False)),
            # Dedup by alias and people search by name: `name_keys && …`, `name_terms && …`.
            GinIndex(fields=["name_keys"], name="person_name_keys_gin"),
            GinIndex(fields=["name_terms"], name="person_name_terms_gin"),
            # People search by description: `search_terms && …` and document frequencies.
            GinIndex(fields=["search_terms"], name="person_search_terms_gin"),
            # Typo-tolerant name search (`name_key %> word`, pg_trgm).
            GinIndex(fields=["name_key"], name="person_name_trgm", opclasses=["gin_trgm_ops"]),
            # Approximate nearest neighbours when one user has very many people (cosine).
            HnswIndex(name="person_embedding_hnsw", fields=["embedding"], m=16, ef_construction=64,
                      opclasses=["vector_cosine_ops"]),
        ]

    def __str__(self) -> str:
        return self.display_name

    @property
    def is_inner(self) -> bool:
        return self.circle in self.INNER_CIRCLES

    def embedding_text(self) -> str:
        """Seed 000's text for the vector: name, username, aliases, bio."""
        return " ".join(filter(None, [self.display_name, self.username or "", " ".join(self.aliases), self.bio]))

    @property
    def mentions_text(self) -> str:
        """`127 mentions`, `1 mention`: the prompt is read by a model and shown to people."""
        return f"{self.mention_count} mention{'' if self.mention_count == 1 else 's'}"

    @property
    def context_name(self) -> str:
        """The name a prompt shows, followed by the aliases that say who the person is to the user (`Лена
        (жена)`): a bio is what the user said of them in the order said, and clipped to its first words in a
        small prompt ("На выходных ездили…") it no longer told the model that Лена is the wife."""
        relation = relation_aliases(self.display_name, self.aliases)
        return f"{self.display_name} ({', '.join(relation)})" if relation else self.display_name

    def context_line(self) -> str:
        """Seed 000's candidate line: `[Person:42] Петров | Work_Inner | 127 mentions | bio`."""
        return f"[Person:{self.pk}] {self.context_name} | {self.circle} | {self.mentions_text} | {self.bio}"

    def archivist_line(self) -> str:
        """The archivist's view: `[Person:ID] Name (@user) (aka A, B) [Circle]: bio`."""
        parts = [f"[Person:{self.pk}] {self.display_name}"]
        if self.username:
            parts.append(f"(@{self.username})")
        if self.aliases:
            parts.append(f"(aka {', '.join(self.aliases)})")
        return " ".join(parts) + f" [{self.circle}]: {self.bio}"


class PersonRelation(models.Model):
    """A typed edge the user stated: `subject` is `kind` of `object` (Maria spouse Petrov)."""

    class Kind(models.TextChoices):
        SPOUSE = "spouse"
        PARTNER = "partner"
        PARENT = "parent"  # subject is a parent of object
        CHILD = "child"
        SIBLING = "sibling"
        RELATIVE = "relative"
        MANAGER = "manager"  # subject manages object
        REPORT = "report"
        COLLEAGUE = "colleague"
        FRIEND = "friend"
        OTHER = "other"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    subject = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="relations_out")
    object = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="relations_in")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    label = models.CharField(max_length=64, blank=True)  # the word used: "wife", "жена", "妻子"
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["subject", "object", "kind"], name="personrelation_unique_edge"),
        ]
        indexes = [
            # (A person's edges in either direction use the foreign keys' own indexes.)
            # Erasure.
            models.Index(fields=["tenant", "user_id"], name="personrelation_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.subject_id} {self.kind} {self.object_id}"


class PersonMention(models.Model):
    """A message that mentions a person: the reference a merge moves, and what makes re-runs idempotent."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    person = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="mentions")
    message = models.ForeignKey(Message, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["person", "message"], name="personmention_unique"),
        ]
        indexes = [
            # Erasure. (The message side of the cascade uses the foreign key's own index.)
            models.Index(fields=["tenant", "user_id"], name="personmention_user_idx"),
        ]

    def __str__(self) -> str:
        return f"person {self.person_id} in message {self.message_id}"


class PersonMerge(models.Model):
    """One merge of `source` into `target`, with both people as they were, so it can be undone."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    source = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+")
    rule = models.CharField(max_length=32)  # the dedup rule, "archivist" or "manual"
    reviewer = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                 related_name="+")
    source_before = models.JSONField()
    target_before = models.JSONField()
    target_after = models.JSONField()
    # What moved from the source to the target: relation ids per side, mention ids, proposals closed.
    moved = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)
    undone_at = models.DateTimeField(null=True, blank=True)
    undone_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                  related_name="+")

    class Meta:
        indexes = [
            # Undo checks: the latest live merge into (or of) a person.
            models.Index(fields=["target", "undone_at"], name="personmerge_target_idx"),
            models.Index(fields=["source", "undone_at"], name="personmerge_source_idx"),
            # Erasure.
            models.Index(fields=["tenant", "user_id"], name="personmerge_user_idx"),
        ]

    def __str__(self) -> str:
        return f"merge {self.source_id} → {self.target_id}"

    @property
    def is_undone(self) -> bool:
        return self.undone_at is not None


class MergeProposal(models.Model):
    """A possible duplicate waiting for a reviewer: a weak dedup match, or the archivist's Merged op."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REJECTED = "rejected"
        UNDONE = "undone"  # approved, merged, then the merge was undone
        SUPERSEDED = "superseded"  # one of the two was merged elsewhere first

    class Origin(models.TextChoices):
        DEDUP = "dedup"
        ARCHIVIST = "archivist"
        EDIT = "edit"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    source = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+")
    target = models.ForeignKey(Person, on_delete=models.CASCADE, related_name="+")
    rule = models.CharField(max_length=32)
    score = models.FloatField()
    # [{"rule": "diminutive", "detail": "маша ↔ мария", "score": 0.85}, {"rule": "archivist", "reason": "…"}]
    evidence = models.JSONField(default=list)
    origin = models.CharField(max_length=16, choices=Origin.choices, default=Origin.DEDUP)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    merge = models.ForeignKey(PersonMerge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                                   related_name="+")

    class Meta:
        constraints = [
            # One open proposal per pair and direction.
            models.UniqueConstraint(fields=["source", "target"], condition=models.Q(status="pending"),
                                    name="mergeproposal_one_pending"),
        ]
        indexes = [
            # The review queue: pending proposals, oldest first.
            models.Index(fields=["status", "created_at"], name="mergeproposal_queue_idx"),
            # Proposals that involve a person (closing them on merge, skipping rejected pairs).
            models.Index(fields=["target", "status"], name="mergeproposal_target_idx"),
            models.Index(fields=["source", "status"], name="mergeproposal_source_idx"),
            # Erasure.
            models.Index(fields=["tenant", "user_id"], name="mergeproposal_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.source_id} → {self.target_id} ({self.rule}, {self.status})"


class PeopleAuditEntry(models.Model):
    """Who decided what, when: every review decision and every edit of a person by a human or client."""

    class Action(models.TextChoices):
        MERGE_APPROVED = "merge_approved"
        MERGE_REJECTED = "merge_rejected"
        MERGE_UNDONE = "merge_undone"
        MERGED_AUTOMATICALLY = "merged_automatically"
        PERSON_EDITED = "person_edited"
        PERSON_DELETED = "person_deleted"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    user_id = models.CharField(max_length=128)
    action = models.CharField(max_length=32, choices=Action.choices)
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL,
                              related_name="+")
    # "admin:alice", "api", "archivist": who acted when no staff user did.
    actor_label = models.CharField(max_length=150)
    person = models.ForeignKey(Person, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    proposal = models.ForeignKey(MergeProposal, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    merge = models.ForeignKey(PersonMerge, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    details = models.JSONField(default=dict)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "people audit entry"
        verbose_name_plural = "people audit entries"
        indexes = [
            # The admin's audit list, newest first, and erasure.
            models.Index(fields=["tenant", "user_id", "-created_at"], name="peopleaudit_user_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} by {self.actor_label}"
