"""Campaign memory (seed 003 §8.4–§8.8): campaigns of a world, parties, episodic summaries, NPCs
with dispositions towards each party and towards single heroes of it, art cards.

Written only by the game engine (`engine` scope) through `lore.campaigns.services`; a disposition
changes only through a summary's `relations_delta`, and each change leaves a history row.

Retention (seed §8.9): a summary expires `Campaign.episode_ttl_days` after it was recorded (its
chunk goes, its row stays as a tombstone, see `EpisodicSummary`); a finished campaign is archived
(kept, read-only, out of search); a campaign deleted over the API goes with all its rows and leaves a
`CampaignDeletion` receipt; art cards follow ART_MEDIA_POLICY. `SceneAssembly` records what
each scene-context call returned, for the quality figures (seed §8.10).
"""

from __future__ import annotations

from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import connection, models
from django.utils import timezone

from lore.models import World
from memoryhub.models import Tenant

EPISODE_TTL_MIN_DAYS, EPISODE_TTL_MAX_DAYS, EPISODE_TTL_DEFAULT_DAYS = 90, 180, 120


class Campaign(models.Model):
    class Status(models.TextChoices):
        ACTIVE = "active"
        # Finished: kept and shown, never written again, out of search, scene-context and the tools.
        ARCHIVED = "archived"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="campaigns")
    # The `campaign_id` of the seed's documents and of the API's paths; unique per tenant.
    slug = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    # The scene's system block (seed §8.6.1): tone, style rules, bans; empty uses config's default.
    tone_rules = models.TextField(blank=True)
    # Seed §8.9: episode summaries live 90–180 days; counted from when each was recorded.
    episode_ttl_days = models.PositiveSmallIntegerField(
        default=EPISODE_TTL_DEFAULT_DAYS,
        validators=[MinValueValidator(EPISODE_TTL_MIN_DAYS), MaxValueValidator(EPISODE_TTL_MAX_DAYS)],
        help_text=f"Days an episode summary stays searchable ({EPISODE_TTL_MIN_DAYS}–{EPISODE_TTL_MAX_DAYS}).")
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.ACTIVE)
    archived_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["tenant", "slug"], name="campaign_tenant_slug_uniq"),
            models.CheckConstraint(
                condition=models.Q(episode_ttl_days__gte=EPISODE_TTL_MIN_DAYS,
                                   episode_ttl_days__lte=EPISODE_TTL_MAX_DAYS),
                name="campaign_episode_ttl_range"),
        ]

    def __str__(self) -> str:
        return self.slug

    @property
    def is_archived(self) -> bool:
        return self.status == self.Status.ARCHIVED

    @property
    def episode_namespace(self) -> str:
        return f"campaign:{self.pk}:episode"

    @property
    def art_namespace(self) -> str:
        """The campaign's art cards as chunks (lore.campaigns.art): what `art_suggest`'s query searches."""
        return f"campaign:{self.pk}:art"


class CampaignEvent(models.Model):
    """The audit of a campaign's settings and life: who changed its episode period, who archived it."""

    class Action(models.TextChoices):
        TTL_CHANGED = "ttl_changed"
        ARCHIVED = "archived"

    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="events")
    action = models.CharField(max_length=16, choices=Action.choices)
    actor = models.CharField(max_length=200)
    detail = models.JSONField(default=dict, blank=True)  # {"from": 120, "to": 150}, {"reason": ...}
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.action} by {self.actor}"


class CampaignDeletion(models.Model):
    """The receipt of a deleted campaign (`campaign_delete`): who deleted which campaign id, when, and
    how many rows of each kind went. It names the campaign by its id only and keeps none of its content
    (no name, summary, NPC or flag), as a person's deletion keeps its audit row; it outlives the campaign
    (no key to it), so a deletion can be traced, and goes with its tenant."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    slug = models.CharField(max_length=64)  # the deleted campaign's campaign_id
    world = models.CharField(max_length=64)  # its world's slug
    campaign_pk = models.BigIntegerField()  # its row id: its episode namespace was `campaign:<pk>:episode`
    actor = models.CharField(max_length=200)
    # {"status": "archived", "deleted": {"summaries": 3, "chunks": 2, ...}}
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The admin's list: a tenant's deletions, newest first.
            models.Index(fields=["tenant", "-created_at"], name="campaigndeletion_tenant_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.slug} deleted by {self.actor}"


class Party(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="parties")
    slug = models.CharField(max_length=64)  # the documents' party_id
    name = models.CharField(max_length=200, blank=True)
    # Current progress flags (quest_moon_key: obtained); their history is PartyFlagChange.
    flags = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "parties"
        constraints = [models.UniqueConstraint(fields=["campaign", "slug"], name="party_campaign_slug_uniq")]

    def __str__(self) -> str:
        return f"{self.campaign}/{self.slug}"


class EpisodicSummary(models.Model):
    """A summary as posted. Past its campaign's `episode_ttl_days` it expires: its chunk is deleted
    and its document emptied (the narrative goes, seed §8.9), while the row stays as a tombstone
    with its id, scene, location, time, flags and body hash. The flag and disposition history rows
    that point to it stay valid, and a late replay of the same summary is still recognised instead of
    moving the dispositions a second time."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="summaries")
    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="summaries")
    summary_id = models.CharField(max_length=64)
    scene_id = models.CharField(max_length=64)
    location_id = models.CharField(max_length=64)
    when = models.DateTimeField()
    document = models.JSONField()  # the seed's document as posted
    # The document's `flags`, kept when it expires: a party's flag holds the value of the latest summary
    # (by `when`) that named it, so a late older summary must still find every later one that did,
    # even one that named a flag without changing it (an engine that posts all its flags each turn).
    flags = models.JSONField(default=dict, blank=True)
    # sha256 of the canonical document: a replay with the same body is answered, another body is a 409.
    body_sha256 = models.CharField(max_length=64)
    chunk = models.ForeignKey("rag.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)
    expired_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        verbose_name_plural = "episodic summaries"
        constraints = [models.UniqueConstraint(fields=["campaign", "summary_id"], name="summary_campaign_id_uniq")]
        indexes = [
            # session_fetch and the scene's episode block: a party's latest summaries; summary_record:
            # the summaries of a party later than a new one (none, but for a late one).
            models.Index(fields=["party", "-when", "-id"], name="summary_party_recent_idx"),
            # The TTL beat: live summaries recorded before a cut-off.
            models.Index(fields=["created_at"], name="summary_live_created_idx",
                         condition=models.Q(expired_at__isnull=True)),
        ]

    def __str__(self) -> str:
        return self.summary_id


class PartyFlagChange(models.Model):
    """One flag a summary set to another value than the party had: the history behind `Party.flags`.

    A flag holds the value of the latest summary by `when` that named it (ties: the one recorded
    last), not of the last one to arrive: a summary older than one that already named the flag (an
    engine's retry, posted late) leaves it as it is. Its change is still recorded, `applied` false,
    with `superseded_by` the later summary whose value stands and `previous` that value."""

    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="flag_changes")
    summary = models.ForeignKey(EpisodicSummary, on_delete=models.CASCADE, related_name="flag_changes")
    key = models.CharField(max_length=64)
    value = models.CharField(max_length=64)
    previous = models.CharField(max_length=64, blank=True)  # empty: the flag was not set
    applied = models.BooleanField(default=True)
    # Not applied: the latest summary (by `when`) that named the flag, later than this one. SET_NULL: a
    # summary's history does not go with another summary's row.
    superseded_by = models.ForeignKey(EpisodicSummary, null=True, blank=True, on_delete=models.SET_NULL,
                                      related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # A flag's history within a party, newest first.
            models.Index(fields=["party", "key", "-id"], name="flagchange_party_key_idx"),
        ]

    def __str__(self) -> str:
        change = f"{self.key}: {self.previous or '∅'} → {self.value}"
        return change if self.applied else f"{change} (not applied: a later scene set it)"


class NPC(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="npcs")
    npc_id = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    archetype = models.CharField(max_length=64)
    # The static part of the seed's profile (§8.5.2) as posted, and its version.
    static = models.JSONField(default=dict)
    version = models.CharField(max_length=32)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name = "NPC"
        constraints = [models.UniqueConstraint(fields=["campaign", "npc_id"], name="npc_campaign_id_uniq")]

    def __str__(self) -> str:
        return f"{self.npc_id} ({self.name})"


# A summary's `towards` for one hero (player character) of its party, and the key of that hero's
# disposition in an NPC profile: "hero_id:p_A", as the party's is "party_id:pty_001" (seed §8.5.2).
HERO_PREFIX = "hero_id:"


class Disposition(models.Model):
    """How an NPC feels about a party, or about one hero of it (seed §8.1.1: towards the party and
    the heroes): a bounded integer, changed only by summaries. Each (NPC, party, hero) is its own
    disposition with its own history; the one towards the party has no hero."""

    npc = models.ForeignKey(NPC, on_delete=models.CASCADE, related_name="dispositions")
    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="dispositions")
    # Empty: towards the party as a whole. Else a player character of the party, as the summaries'
    # `who.players` name it (`towards: "hero_id:p_A"`).
    hero_id = models.CharField(max_length=64, blank=True, default="")
    value = models.IntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["npc", "party", "hero_id"],
                                               name="disposition_npc_party_hero_uniq")]

    def __str__(self) -> str:
        hero = f"/{self.hero_id}" if self.hero_id else ""
        return f"{self.npc.npc_id} → {self.party.slug}{hero}: {self.value:+d}"

    @property
    def towards(self) -> str:
        """As a summary's `relations_delta` says it: "party" or "hero_id:<id>"."""
        return f"{HERO_PREFIX}{self.hero_id}" if self.hero_id else "party"


class DispositionChange(models.Model):
    disposition = models.ForeignKey(Disposition, on_delete=models.CASCADE, related_name="changes")
    summary = models.ForeignKey(EpisodicSummary, on_delete=models.CASCADE, related_name="disposition_changes")
    delta = models.IntegerField()  # as the summary asked
    applied = models.IntegerField()  # after clamping to ±GM_DISPOSITION_RANGE
    value_after = models.IntegerField()
    reason = models.CharField(max_length=200)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # An NPC profile's latest changes towards a party or a hero.
            models.Index(fields=["disposition", "-id"], name="dispchange_recent_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.delta:+d} ({self.reason})"


class ArtCard(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="artcards")
    image_id = models.CharField(max_length=64)
    scene_id = models.CharField(max_length=64)
    npcs = models.JSONField(default=list)  # entities.npc
    locations = models.JSONField(default=list)  # entities.location
    visual_tags = models.JSONField(default=list)
    style_preset = models.CharField(max_length=64)
    safe = models.BooleanField()
    document = models.JSONField()  # as posted, without the embedding's vector
    created_at = models.DateTimeField()  # the document's: when the image was made
    # When MemoryHub stored the card: the media policy's clock, like a summary's created_at.
    recorded_at = models.DateTimeField(default=timezone.now)
    # ART_MEDIA_POLICY=strip-media: the card's link to the image was removed then.
    media_stripped_at = models.DateTimeField(null=True, blank=True)
    # The card's `art` chunk (Campaign.art_namespace), what `art_suggest`'s query finds it by; null while
    # its campaign is archived (out of search) and for a card recorded before cards were indexed (the sweep
    # indexes those).
    chunk = models.ForeignKey("rag.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")

    class TagsSource(models.TextChoices):
        ENGINE = "engine"  # the document's visual_tags
        # None were posted: words of the prompt text, offline (lore.campaigns.art.derive_tags) ...
        DERIVED = "derived"
        # ... replaced by a model's 5–8 (seed §8.8) when an LLM is configured.
        MODEL = "model"

    tags_source = models.CharField(max_length=16, choices=TagsSource.choices, default=TagsSource.ENGINE)
    # A model is to write the tags (LLM configured, none posted): the tagging job has not succeeded or given
    # up yet. The card is searchable meanwhile by its derived tags.
    tags_pending = models.BooleanField(default=False)
    tag_attempts = models.PositiveSmallIntegerField(default=0)
    tag_attempted_at = models.DateTimeField(null=True, blank=True)
    tag_error = models.CharField(max_length=500, blank=True)  # the last tagging failure, for the admin
    # The chunk's text names an NPC as it was: `npc_upsert` renamed one the card shows, and the refresh job
    # (lore.campaigns.art.artcards_refresh) has not rewritten the chunk yet. Set in the rename's transaction,
    # so a lost job message loses nothing: the art sweep runs what is left.
    reindex_pending = models.BooleanField(default=False)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "image_id"], name="artcard_campaign_id_uniq")]
        indexes = [
            # art_suggest by scene: a scene's cards, newest first.
            models.Index(fields=["campaign", "scene_id", "-created_at"], name="artcard_scene_idx"),
            # The media-policy beat: cards recorded before a cut-off.
            models.Index(fields=["recorded_at"], name="artcard_recorded_idx"),
            # The art sweep: cards whose model tags are still due.
            models.Index(fields=["recorded_at"], name="artcard_tags_pending_idx",
                         condition=models.Q(tags_pending=True)),
            # The refresh job and the art sweep: a campaign's cards whose chunk names a renamed NPC.
            models.Index(fields=["campaign"], name="artcard_reindex_pending_idx",
                         condition=models.Q(reindex_pending=True)),
        ]

    def __str__(self) -> str:
        return self.image_id


class SceneAssembly(models.Model):
    """One scene-context answer, kept small for the quality figures (seed §8.10): what it returned
    (source refs with their ranks), its token counts and, once the engine reports the turn, which
    of those sources the narration used and what the turn's LLM call cost."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="assemblies")
    party = models.CharField(max_length=64)  # the party's slug, as asked
    # [{"ref": "lore:...@1.0.0", "block": "lore", "rank": 1, "bm25_rank": 3, "vector_rank": 1}]; ranks
    # only on retrieved items (rules, lore): the fused rank and each component's, 1-based.
    sources = models.JSONField(default=list)
    tokens = models.JSONField(default=dict)  # per block, as answered
    context_tokens = models.PositiveIntegerField()  # every block but the player's input
    degraded = models.BooleanField(default=False)
    # LLM usage of MemoryHub itself while assembling (memoryhub.llm.usage_meter).
    llm_tokens = models.PositiveIntegerField(default=0)
    llm_cost_usd = models.FloatField(default=0.0)
    # The engine's report (POST .../scene-context/{id}/feedback); null until it comes.
    used = models.JSONField(null=True, blank=True)  # refs out of `sources`
    engine_model = models.CharField(max_length=100, blank=True)
    engine_prompt_tokens = models.PositiveIntegerField(null=True, blank=True)
    engine_completion_tokens = models.PositiveIntegerField(null=True, blank=True)
    engine_cost_usd = models.FloatField(null=True, blank=True)  # null: the model has no price
    feedback_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "scene assemblies"
        indexes = [
            # The world's quality page: a campaign's assemblies over a period, by day.
            models.Index(fields=["campaign", "created_at"], name="assembly_campaign_created_idx"),
            # The retention beat: assemblies recorded before a cut-off.
            models.Index(fields=["created_at"], name="assembly_created_idx"),
        ]

    def __str__(self) -> str:
        return f"scene {self.pk} of {self.campaign_id}"


class Thread(models.Model):
    """Short-term memory (seed 003 §2, §8.9): the state of one of the engine's scene / turn loops,
    LangGraph's thread, as `Checkpoint`s (one series per `checkpoint_ns`, branching where the engine
    forked); the latest of the root namespace is the thread's current state. Written by
    `lore.campaigns.threads` only. It lives its TTL after its last write (`updated_at`): its own
    `ttl_hours` when the engine set one (then `expires_at` holds the end), else THREAD_TTL_HOURS as that
    setting is now; then the retention beat deletes it with its checkpoints."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="threads")
    thread_id = models.CharField(max_length=64)  # the engine's id, like the other slugs
    # The last step handed out: steps are never reused, even after older checkpoints were pruned.
    last_step = models.PositiveIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(default=timezone.now)  # the last write's (checkpoint or pending writes)
    # The engine's own TTL; null: THREAD_TTL_HOURS, read when asked, so a change of the setting reaches
    # every such thread at once. Set, `expires_at` is `updated_at + ttl_hours`, stored for the beat's index.
    ttl_hours = models.PositiveIntegerField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "thread_id"], name="thread_campaign_id_uniq")]
        indexes = [
            # The TTL beat: threads on the default TTL last written before a cut-off.
            models.Index(fields=["updated_at"], name="thread_updated_idx"),
            # The TTL beat: threads with their own TTL past their end.
            models.Index(fields=["expires_at"], name="thread_expires_idx",
                         condition=models.Q(expires_at__isnull=False)),
        ]

    def __str__(self) -> str:
        return f"{self.campaign_id}/{self.thread_id}"


class Checkpoint(models.Model):
    """One saved state of a thread: the engine's JSON object as posted, its `metadata` (LangGraph's
    source, step, …), its step (1, 2, … per thread, assigned on write), its namespace (LangGraph's
    `checkpoint_ns`: "" the root graph, a subgraph's own series otherwise) and the checkpoint it
    followed. With THREAD_STATE_KEY set, `state` and `metadata` hold Fernet tokens (JSON strings; a plain
    state or metadata is always an object) and `sealed_by` names the key; see `lore.campaigns.threads`."""

    thread = models.ForeignKey(Thread, on_delete=models.CASCADE, related_name="checkpoints")
    # The engine's id (LangGraph makes its own) or one made here; unique within its thread only, so one
    # tenant's ids never collide with, or probe, another's.
    checkpoint_id = models.UUIDField()
    step = models.PositiveIntegerField()
    checkpoint_ns = models.CharField(max_length=255, blank=True, default="")
    # The checkpoint this one follows (null: the first of its namespace): the namespace's latest when
    # written, or an older one for a fork. An id, not a key, since pruning deletes older checkpoints.
    parent_checkpoint_id = models.UUIDField(null=True, blank=True)
    state = models.JSONField()
    metadata = models.JSONField(default=dict)
    # "" stored as JSON; else a fingerprint of the Fernet key that sealed `state` and `metadata`.
    sealed_by = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["thread", "step"], name="checkpoint_thread_step_uniq"),
            # Reads by id and the walk up a branch (parent ids) within a thread.
            models.UniqueConstraint(fields=["thread", "checkpoint_id"], name="checkpoint_thread_id_uniq"),
        ]
        indexes = [
            # A namespace's latest checkpoint, its list newest first and its pruning.
            models.Index(fields=["thread", "checkpoint_ns", "step"], name="checkpoint_thread_ns_step_idx"),
            # The beat's re-sealing after a key rotation: rows sealed by another key than the first.
            models.Index(fields=["sealed_by"], name="checkpoint_sealed_by_idx"),
        ]
        # The unique (thread, step) index serves the thread-wide list (newest first).

    def __str__(self) -> str:
        return f"{self.thread} step {self.step}"


class PendingWrite(models.Model):
    """A write of one of the engine's tasks against a checkpoint (LangGraph's `put_writes`): what a task
    produced before the next checkpoint, so a resumed run skips the tasks that had finished. Unique per
    (checkpoint, task_id, idx). `value` is any JSON, or a Fernet token when `sealed_by` is set."""

    # Deleted by PostgreSQL with its checkpoint (ON DELETE CASCADE, added by migration 0016): a pruned or
    # expired checkpoint goes in one statement, and deletions count checkpoints only.
    checkpoint = models.ForeignKey(Checkpoint, on_delete=models.DO_NOTHING, db_constraint=False, db_index=False,
                                   related_name="pending_writes")
    task_id = models.CharField(max_length=255)
    idx = models.IntegerField()  # LangGraph's: the write's position, or a negative slot (error, interrupt, …)
    channel = models.CharField(max_length=255)
    task_path = models.CharField(max_length=1024, blank=True, default="")
    value = models.JSONField(null=True)
    sealed_by = models.CharField(max_length=16, blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            # put_writes' idempotence; also serves a checkpoint's writes.
            models.UniqueConstraint(fields=["checkpoint", "task_id", "idx"], name="pendingwrite_task_idx_uniq"),
        ]
        indexes = [
            # The beat's re-sealing after a key rotation, as Checkpoint's.
            models.Index(fields=["sealed_by"], name="pendingwrite_sealed_by_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.checkpoint_id} {self.task_id}#{self.idx} {self.channel}"


def campaign_row_share(campaign: Campaign) -> bool:
    """Hold the campaign's row FOR SHARE until commit, the lock every campaign writer takes (so
    `campaign_archive` and `campaign_delete`, FOR UPDATE, wait for them), and refresh `status` and
    `archived_at` from it; False when the campaign was deleted. SQL: Django's ORM has FOR UPDATE only."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT status, archived_at FROM {Campaign._meta.db_table} WHERE id = %s FOR SHARE",
                       [campaign.pk])
        row = cursor.fetchone()
    if row is None:
        return False
    campaign.status, campaign.archived_at = row
    return True
