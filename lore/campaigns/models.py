"""Campaign memory (seed 003 §8.4–§8.8): campaigns of a world, parties, episodic summaries, NPCs
with per-party dispositions, art cards.

Written only by the game engine (`engine` scope) through `lore.campaigns.services`; a disposition
changes only through a summary's `relations_delta`, and each change leaves a history row.
"""

from __future__ import annotations

from django.db import models
from django.utils import timezone

from lore.models import World
from memoryhub.models import Tenant


class Campaign(models.Model):
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    world = models.ForeignKey(World, on_delete=models.CASCADE, related_name="campaigns")
    # The `campaign_id` of the seed's documents and of the API's paths; unique per tenant.
    slug = models.CharField(max_length=64)
    name = models.CharField(max_length=200)
    # The scene's system block (seed §8.6.1): tone, style rules, bans; empty uses config's default.
    tone_rules = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "slug"], name="campaign_tenant_slug_uniq")]

    def __str__(self) -> str:
        return self.slug

    @property
    def episode_namespace(self) -> str:
        return f"campaign:{self.pk}:episode"


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
    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    campaign = models.ForeignKey(Campaign, on_delete=models.CASCADE, related_name="summaries")
    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="summaries")
    summary_id = models.CharField(max_length=64)
    scene_id = models.CharField(max_length=64)
    location_id = models.CharField(max_length=64)
    when = models.DateTimeField()
    document = models.JSONField()  # the seed's document as posted
    # sha256 of the canonical document: a replay with the same body is answered, another body is a 409.
    body_sha256 = models.CharField(max_length=64)
    chunk = models.ForeignKey("rag.Chunk", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "episodic summaries"
        constraints = [models.UniqueConstraint(fields=["campaign", "summary_id"], name="summary_campaign_id_uniq")]
        indexes = [
            # session_fetch and the scene's episode block: a party's latest summaries.
            models.Index(fields=["party", "-when", "-id"], name="summary_party_recent_idx"),
        ]

    def __str__(self) -> str:
        return self.summary_id


class PartyFlagChange(models.Model):
    """One flag set by one summary: the history behind `Party.flags`."""

    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="flag_changes")
    summary = models.ForeignKey(EpisodicSummary, on_delete=models.CASCADE, related_name="flag_changes")
    key = models.CharField(max_length=64)
    value = models.CharField(max_length=64)
    previous = models.CharField(max_length=64, blank=True)  # empty: the flag was not set
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # A flag's history within a party, newest first.
            models.Index(fields=["party", "key", "-id"], name="flagchange_party_key_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.key}: {self.previous or '∅'} → {self.value}"


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


class Disposition(models.Model):
    """How an NPC feels about a party: a bounded integer, changed only by summaries."""

    npc = models.ForeignKey(NPC, on_delete=models.CASCADE, related_name="dispositions")
    party = models.ForeignKey(Party, on_delete=models.CASCADE, related_name="dispositions")
    value = models.IntegerField(default=0)
    updated_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["npc", "party"], name="disposition_npc_party_uniq")]

    def __str__(self) -> str:
        return f"{self.npc.npc_id} → {self.party.slug}: {self.value:+d}"


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
            # An NPC profile's latest changes towards a party.
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
    created_at = models.DateTimeField()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["campaign", "image_id"], name="artcard_campaign_id_uniq")]
        indexes = [
            # art_suggest by scene: a scene's cards, newest first.
            models.Index(fields=["campaign", "scene_id", "-created_at"], name="artcard_scene_idx"),
        ]

    def __str__(self) -> str:
        return self.image_id
