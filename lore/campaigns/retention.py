"""Retention of campaign memory (seed 003 §8.9), run by the beat.

- `episodes_expire`: a summary recorded more than its campaign's `episode_ttl_days` ago expires:
  its `episode` chunk is deleted (logged, so cached indexes drop it) and its document emptied; the
  row stays as a tombstone (see `EpisodicSummary`), so flag and disposition history keep pointing
  at a real row and a late replay is recognised. Archived campaigns expire the same way: archiving
  keeps a campaign, it does not extend what the period allows. Art cards recorded as long ago
  follow ART_MEDIA_POLICY (keep, strip-media, expire-with-episodes: the card goes with its `art` chunk).
- `scene_assemblies_prune`: the per-turn records behind the quality figures live as long as the
  campaign's summaries do.

Each job returns its counts, logs them on one line and adds them to `memoryhub_gm_expired_total`.
Work goes in batches, each its own short transaction: the namespace lock first, then the rows
(the order `campaign_archive` takes them in), so the beat never holds locks for long. It takes no
campaign row: `campaign_delete` (campaign row, then the namespace lock) waits for a batch, and a batch
started after a deletion finds no summary of the campaign.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Iterator
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from lore.campaigns import metrics
from lore.campaigns.models import ArtCard, Campaign, EpisodicSummary, SceneAssembly
from memoryhub.models import Tenant
from rag.models import Chunk
from rag.services import chunks_delete, namespace_write_lock

logger = logging.getLogger(__name__)

BATCH = 500


def _periods(now: datetime) -> Iterator[tuple[int, datetime]]:
    """(days, cut-off) for each period some campaign uses: at most 91 values, each an indexed range
    query, rather than one date computed per row."""
    for days in Campaign.objects.order_by().values_list("episode_ttl_days", flat=True).distinct():
        yield days, now - timedelta(days=days)


def _due_summaries(now: datetime) -> QuerySet[EpisodicSummary]:
    due = EpisodicSummary.objects.none()
    for days, cutoff in _periods(now):
        due |= EpisodicSummary.objects.filter(campaign__episode_ttl_days=days, created_at__lt=cutoff,
                                              expired_at__isnull=True)
    return due


def _expire_batch(campaign: Campaign, tenant: Tenant, cutoff: datetime, now: datetime) -> tuple[int, int]:
    with transaction.atomic():
        namespace_write_lock(tenant_id=tenant.pk, namespace=campaign.episode_namespace)
        rows = list(EpisodicSummary.objects.select_for_update(skip_locked=True)
                    .filter(campaign=campaign, created_at__lt=cutoff, expired_at__isnull=True)
                    .order_by("id").values_list("id", "chunk_id")[:BATCH])
        if not rows:
            return 0, 0
        chunk_ids = [chunk for _, chunk in rows if chunk is not None]
        chunks = chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk__in=chunk_ids)) if chunk_ids else 0
        EpisodicSummary.objects.filter(pk__in=[pk for pk, _ in rows]).update(document={}, chunk=None, expired_at=now)
    return len(rows), chunks


def _artcards(days: int, cutoff: datetime, now: datetime, counts: Counter[str]) -> None:
    policy = settings.ART_MEDIA_POLICY
    if policy == "keep":
        return
    cards = ArtCard.objects.filter(campaign__episode_ttl_days=days, recorded_at__lt=cutoff)
    if policy == "expire-with-episodes":
        while rows := list(cards.order_by("id").select_related("tenant", "campaign")[:BATCH]):
            # With their chunks (lore.campaigns.art), out of art_suggest's query: the chunks first, under
            # their namespace locks, then the cards, the order the tagging job takes them in.
            with transaction.atomic():
                for tenant_id, namespace in sorted({(c.tenant_id, c.campaign.art_namespace) for c in rows}):
                    namespace_write_lock(tenant_id=tenant_id, namespace=namespace)
                # The chunks the cards hold now, read under the locks: one rewritten since the cards were
                # read (tagged, an NPC renamed) would stay behind, a chunk of no card.
                held = dict(ArtCard.objects.filter(pk__in=[card.pk for card in rows], chunk__isnull=False)
                            .values_list("chunk_id", "tenant_id"))
                for tenant in {card.tenant for card in rows}:
                    chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(
                        pk__in=[chunk for chunk, owner in held.items() if owner == tenant.pk]))
                deleted, _ = ArtCard.objects.filter(pk__in=[card.pk for card in rows]).delete()
            counts["artcards_deleted"] += deleted
        return
    # strip-media: the link to the image goes; the words (tags, style, entities, moderation) stay.
    while batch := list(cards.filter(media_stripped_at__isnull=True).order_by("id")[:BATCH]):
        for card in batch:
            card.document = {k: v for k, v in card.document.items() if k != "cdn_url"}
            card.media_stripped_at = now
        ArtCard.objects.bulk_update(batch, ["document", "media_stripped_at"])
        counts["artcards_stripped"] += len(batch)


def job_report(job: str, counts: Counter[str], started: datetime) -> dict[str, int]:
    """A retention job's ending, shared by the campaign memory's jobs (threads too): the counts into the
    expiry metric, one log line, and the counts as the job's result."""
    for what, n in counts.items():
        metrics.EXPIRED.labels(what).inc(n)
    took = (timezone.now() - started).total_seconds()
    logger.info("%s: %s in %.2f s", job, ", ".join(f"{k} {v}" for k, v in sorted(counts.items())) or "nothing due",
                took)
    return dict(sorted(counts.items()))


def episodes_expire(*, now: datetime | None = None) -> dict[str, int]:
    """Expire summaries past their campaign's period and apply the media policy to art cards
    recorded as long ago. Returns {"summaries": n, "chunks": n, "artcards_deleted" | "artcards_stripped": n}."""
    started = timezone.now()
    now = now or started
    counts: Counter[str] = Counter(summaries=0, chunks=0)
    campaign_ids = set(_due_summaries(now).order_by().values_list("campaign_id", flat=True).distinct())
    periods = dict(_periods(now))
    for campaign in Campaign.objects.filter(pk__in=campaign_ids).select_related("tenant").order_by("id"):
        cutoff = periods[campaign.episode_ttl_days]
        while True:
            summaries, chunks = _expire_batch(campaign, campaign.tenant, cutoff, now)
            counts["summaries"] += summaries
            counts["chunks"] += chunks
            if summaries < BATCH:
                break
    for days, cutoff in periods.items():
        _artcards(days, cutoff, now, counts)
    if settings.ART_MEDIA_POLICY == "expire-with-episodes":
        counts.setdefault("artcards_deleted", 0)
    elif settings.ART_MEDIA_POLICY == "strip-media":
        counts.setdefault("artcards_stripped", 0)
    return job_report("episodes_expire", counts, started)


def scene_assemblies_prune(*, now: datetime | None = None) -> dict[str, int]:
    """Delete the scene records older than their campaign's episode period."""
    started = timezone.now()
    now = now or started
    counts: Counter[str] = Counter(assemblies=0)
    for days, cutoff in _periods(now):
        due = SceneAssembly.objects.filter(campaign__episode_ttl_days=days, created_at__lt=cutoff)
        while ids := list(due.order_by("id").values_list("id", flat=True)[:BATCH]):
            deleted, _ = SceneAssembly.objects.filter(pk__in=ids).delete()
            counts["assemblies"] += deleted
    return job_report("scene_assemblies_prune", counts, started)
