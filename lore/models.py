"""Game-master knowledge (seed 003): worlds, raw sources, immutable knowledge versions, aliases.

The text itself lives in `rag` chunks, in one namespace per version (`KnowledgeVersion.namespace`),
so BM25 indexes and vector scans are per version and a version never changes once built.
"""

from __future__ import annotations

from django.contrib.postgres.fields import ArrayField
from django.db import models
from django.utils import timezone

from memoryhub.models import Tenant


def semver(number: str) -> tuple[int, int, int]:
    """A MAJOR.MINOR.PATCH number (checked against `lore.services.SEMVER` before it is stored) as a
    tuple that compares as SemVer does: "1.10.0" is above "1.9.0", which strings get wrong."""
    major, minor, patch = (int(part) for part in number.split("."))
    return major, minor, patch


class Domain(models.TextChoices):
    SRD = "srd"
    LORE = "lore"


class World(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    slug = models.SlugField(max_length=64)
    name = models.CharField(max_length=200)
    # The languages its knowledge is written in; the first is the default of a source.
    languages = ArrayField(models.CharField(max_length=8), default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "slug"], name="world_tenant_slug_uniq")]

    def __str__(self) -> str:
        return self.slug


class GoldenSet(models.Model):
    """A world's golden queries for one domain, sent over the API (`PUT …/domains/{domain}/golden`):
    what the smoke run gating a publish searches with, before any file under LORE_GOLDEN_DIR. An
    editor of a new world had no way to give them but the server's disk, so every publish was forced."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="golden_sets")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    queries = models.JSONField(default=list)  # lore.smoke.GOLDEN_SCHEMA's `queries`, checked on write
    updated_by = models.CharField(max_length=200, blank=True)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["world", "domain"], name="goldenset_world_domain_uniq")]

    def __str__(self) -> str:
        return f"{self.world.slug}/{self.domain} golden"


class Source(models.Model):
    """One uploaded file, kept byte for byte, so any version built from it can be rebuilt."""

    class Format(models.TextChoices):
        JSON = "json"
        MARKDOWN = "markdown"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="sources")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    filename = models.CharField(max_length=255)
    language = models.CharField(max_length=8)
    format = models.CharField(max_length=16, choices=Format.choices)
    # How entries are read from it (lore.normalize.SourceOptions as a dict).
    options = models.JSONField(default=dict, blank=True)
    content = models.BinaryField()
    sha256 = models.CharField(max_length=64)
    uploaded_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.world}/{self.domain}/{self.language}/{self.filename}"


class KnowledgeVersion(models.Model):
    class Status(models.TextChoices):
        STAGED = "staged"
        LIVE = "live"
        RETIRED = "retired"
        # Its chunks and namespace were deleted by the retention policy (lore.pruning); the row, its
        # sources and edits stay, so `manage.py lore_reindex` rebuilds it as a new staged version.
        PRUNED = "pruned"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="versions")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    version = models.CharField(max_length=32)  # SemVer
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.STAGED)
    namespace = models.CharField(max_length=200)
    sources = models.ManyToManyField(Source, related_name="versions")
    # Lore edits it includes (ids), for the editors' review built on top of this.
    edits = models.JSONField(default=list, blank=True)
    entry_count = models.PositiveIntegerField(default=0)
    chunk_count = models.PositiveIntegerField(default=0)
    # Chunks whose vector came from an earlier version (same text, same embedding space).
    reused_chunks = models.PositiveIntegerField(default=0)
    # The last smoke run: {"passed": bool, "by_language": {...}, "overall": {...}, "golden": path, ...}.
    smoke = models.JSONField(default=dict, blank=True)
    created_by = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    pruned_at = models.DateTimeField(null=True, blank=True)
    # Who or what pruned it: the daily job, `manage.py lore_prune`, or an editor in the admin (with
    # their reason); the admin's own history holds only the last of these.
    pruned_by = models.TextField(blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["world", "domain", "version"], name="knowledgeversion_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.world}:{self.domain}:{self.version}"

    @property
    def semver(self) -> tuple[int, int, int]:
        return semver(self.version)


class KnowledgeBuild(models.Model):
    """An upload built in the background (`POST …/sources` with `background`, or a large one; also an
    approved edit of a large world): the files wait here until `lore.builds.knowledge_build_run`
    makes the version, whose progress and outcome the client polls. A 20 MiB source took over half a minute
    to build, near the web worker's timeout, and a request shows no progress."""

    class Status(models.TextChoices):
        PENDING = "pending"  # waiting for a worker; also after a failure that is tried again
        BUILDING = "building"
        DONE = "done"
        # Refused for its input (retrying cannot help: `error`, `error_field`), or given up after
        # ARCHIVAL_MAX_ATTEMPTS failures in a row (`gave_up`: the files are kept; the admin builds it again).
        FAILED = "failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="builds")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    options = models.JSONField(default=dict, blank=True)  # lore.normalize.SourceOptions as a dict
    requested_version = models.CharField(max_length=32, blank=True)  # empty: the next minor
    replace_all = models.BooleanField(default=False)
    created_by = models.CharField(max_length=200, blank=True)
    # An approved lore edit built in the background (its world's version is large): no files, the
    # edit on top of the base; the edit records its version when this build writes it.
    edit = models.ForeignKey("lore.KnowledgeEdit", null=True, blank=True, on_delete=models.CASCADE,
                             related_name="builds")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    # While building: "waiting" (for the domain's other build), "embedding", "writing" (one insert of
    # every chunk: long for a large version, and progress stands at its total meanwhile).
    step = models.CharField(max_length=16, blank=True)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    version = models.ForeignKey(KnowledgeVersion, null=True, blank=True, on_delete=models.SET_NULL,
                                related_name="+")
    error = models.TextField(blank=True)
    error_code = models.CharField(max_length=64, blank=True)
    error_field = models.CharField(max_length=200, blank=True)
    # Failed runs in a row (an embedding endpoint away, a worker's database gone); each waits longer.
    attempts = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    enqueued_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # The sweep: builds not finished.
            models.Index(fields=["next_attempt_at"], name="knowledgebuild_unfinished_idx",
                         condition=models.Q(status__in=["pending", "building"])),
        ]

    def __str__(self) -> str:
        return f"build {self.pk} of {self.world}:{self.domain} ({self.status})"


class KnowledgeBuildFile(models.Model):
    """A file of a build, kept until the build has made its version (then its `Source` holds it)."""

    build = models.ForeignKey(KnowledgeBuild, on_delete=models.CASCADE, related_name="files")
    filename = models.CharField(max_length=255)
    language = models.CharField(max_length=8, blank=True)
    content = models.BinaryField()

    def __str__(self) -> str:
        return self.filename


class Alias(models.Model):
    class Name(models.TextChoices):
        LATEST = "latest"
        STAGE = "stage"

    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="aliases")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    name = models.CharField(max_length=16, choices=Name.choices)
    version = models.ForeignKey(KnowledgeVersion, on_delete=models.PROTECT, related_name="aliases")
    updated_at = models.DateTimeField(default=timezone.now)
    # A canary (on `latest` only): this share of its searches is served by `canary_version`, the version
    # `stage` pointed at when an editor started it, while `stage` still does (lore.selectors.targets_resolve).
    # Publishing or rolling back ends it (lore.services._canary_end).
    canary_version = models.ForeignKey(KnowledgeVersion, null=True, blank=True, on_delete=models.SET_NULL,
                                       related_name="+")
    canary_share = models.FloatField(default=0.0)

    class Meta:
        verbose_name_plural = "aliases"
        constraints = [
            # Also the index of a search's alias resolution (world, domain, name).
            models.UniqueConstraint(fields=["world", "domain", "name"], name="alias_uniq"),
        ]

    def __str__(self) -> str:
        return f"{self.world}:{self.domain}@{self.name}"


class KnowledgeChange(models.Model):
    """The changelog: one row per publish or rollback of `latest`, and per start, change or end of a canary,
    with who, why and the smoke figures."""

    class Action(models.TextChoices):
        PUBLISH = "publish"
        FORCED_PUBLISH = "forced_publish"
        ROLLBACK = "rollback"
        CANARY = "canary"  # started or its share changed: `to_version` serves `share` of `from_version`'s searches
        CANARY_END = "canary_end"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="changes")
    domain = models.CharField(max_length=16, choices=Domain.choices)
    action = models.CharField(max_length=16, choices=Action.choices)
    from_version = models.ForeignKey(KnowledgeVersion, null=True, blank=True, on_delete=models.PROTECT,
                                     related_name="+")
    to_version = models.ForeignKey(KnowledgeVersion, on_delete=models.PROTECT, related_name="+")
    actor = models.CharField(max_length=200)
    reason = models.TextField(blank=True)
    smoke = models.JSONField(default=dict, blank=True)
    took_ms = models.FloatField(default=0)
    share = models.FloatField(null=True, blank=True)  # a canary's share of `latest` searches; null otherwise
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # Rollback: the latest change of a (world, domain).
            models.Index(fields=["world", "domain", "-id"], name="knowledgechange_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.action} {self.world}:{self.domain} {self.from_version_id} -> {self.to_version_id}"


# Models kept in their own module (lore edits); imported here so Django registers them.
# Campaign memory lives in its own module; imported here so Django registers its models with `lore`.
from lore.campaigns.models import (  # noqa: E402,F401
    NPC,
    ArtCard,
    Campaign,
    CampaignDeletion,
    CampaignEvent,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    SceneAssembly,
)
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent  # noqa: E402, F401
