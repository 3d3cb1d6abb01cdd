"""Writes of campaign memory, all by the game engine (seed 003 §8.4.2, §8.8, §8.14).

`summary_record` is the one place a disposition changes: a summary, the flags it sets, the
disposition changes its `relations_delta` asks (of NPCs in its scene's `who.npcs`, towards the party or
towards one hero of it: `"towards": "hero_id:p_A"`; a delta of 0 records nothing) and its `episode` chunk
commit together. The
embedding is computed before the transaction opens, so no network call runs under the party lock.

An archived campaign refuses every write with a 409 (`archived`). Writers hold the campaign row
FOR SHARE while they write and `campaign_archive` takes it FOR UPDATE, so a write that started
before the archive either commits first (and its chunk is then dropped with the others) or sees
the archive and is refused. `campaign_delete` takes the row FOR UPDATE the same way, so a write either
commits first (and is deleted with the rest) or finds no campaign (404). Lock order: campaign row,
party row, namespace lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import IntegrityError, transaction
from django.db.models import QuerySet
from django.utils import timezone

from lore import config as lore_config
from lore.campaigns import art, metrics
from lore.campaigns.models import (
    EPISODE_TTL_MAX_DAYS,
    EPISODE_TTL_MIN_DAYS,
    HERO_PREFIX,
    NPC,
    ArtCard,
    Campaign,
    CampaignDeletion,
    CampaignEvent,
    Checkpoint,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    SceneAssembly,
    Thread,
    campaign_row_share,
)
from lore.campaigns.schemas import document_validate
from lore.campaigns.selectors import require_active
from lore.models import World, semver
from lore.services import fit_dims
from memoryhub.embeddings import get_embedder
from memoryhub.exceptions import ApplicationError
from memoryhub.llm import llm_enabled
from memoryhub.models import Tenant
from memoryhub.services import admin_log_forget_rows
from memoryhub.text import analyze, count_tokens
from rag import index as bm25_index
from rag.models import Chunk, ChunkDeletion, Namespace
from rag.services import (
    ChunkDraft,
    PreparedChunks,
    chunks_delete,
    chunks_insert,
    namespace_write_lock,
    storable_terms,
)

logger = logging.getLogger(__name__)

SLUG = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$")


def _not_found(message: str, path: str) -> ApplicationError:
    return ApplicationError(message, code="not_found", field=path, status_code=404)


def _canonical_sha256(document: dict[str, Any]) -> str:
    body = json.dumps(document, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(body.encode()).hexdigest()


def _parse_time(value: str) -> datetime:
    return datetime.fromisoformat(value[:-1] + "+00:00" if value[-1] in "Zz" else value)


# --- Campaigns and parties -------------------------------------------------------------------
def _ttl_check(days: int) -> None:
    if not EPISODE_TTL_MIN_DAYS <= days <= EPISODE_TTL_MAX_DAYS:
        raise ApplicationError(f"An episode summary lives {EPISODE_TTL_MIN_DAYS}–{EPISODE_TTL_MAX_DAYS} days "
                               f"(seed 003 §8.9); got {days}.", field="episode_ttl_days")


def _lock_active(campaign: Campaign, doing: str) -> None:
    """Hold the campaign row FOR SHARE until commit and refuse if it was archived meanwhile.
    Writers share it; `campaign_archive` waits for them and they wait for it."""
    if not campaign_row_share(campaign):
        raise ApplicationError(f"No campaign {campaign.slug!r}.", code="not_found", field="campaign",
                               status_code=404)
    require_active(campaign, doing)


def _lock_campaign(campaign: Campaign) -> Campaign:
    """The campaign's row FOR UPDATE, read again; a 404 when it was deleted meanwhile (a request that
    read it just before a `campaign_delete` committed)."""
    # OF self: the joined tenant and world rows stay unlocked (every write of the tenant references its row).
    locked = (Campaign.objects.select_for_update(of=("self",)).filter(pk=campaign.pk)
              .select_related("tenant", "world").first())
    if locked is None:
        raise ApplicationError(f"No campaign {campaign.slug!r}.", code="not_found", field="campaign",
                               status_code=404)
    return locked


@transaction.atomic
def campaign_create(*, tenant: Tenant, world: World, slug: str, name: str = "", tone_rules: str = "",
                    episode_ttl_days: int | None = None) -> Campaign:
    if not SLUG.fullmatch(slug):
        raise ApplicationError("Use letters, digits and _ . : - (at most 64).", field="campaign_id")
    if episode_ttl_days is not None:
        _ttl_check(episode_ttl_days)
    extra = {} if episode_ttl_days is None else {"episode_ttl_days": episode_ttl_days}
    try:
        # The unique constraint decides (as for worlds): a read before the insert let two at once through.
        with transaction.atomic():
            return Campaign.objects.create(tenant=tenant, world=world, slug=slug, name=name or slug,
                                           tone_rules=tone_rules, **extra)
    except IntegrityError as exc:
        raise ApplicationError(f"Campaign {slug!r} already exists.", code="exists", field="campaign_id",
                               status_code=409) from exc


@transaction.atomic
def campaign_update(*, campaign: Campaign, episode_ttl_days: int, actor: str) -> Campaign:
    """Change how long the campaign's summaries live (an editor's or the engine's decision, audited).
    Shortening it expires the summaries now past it at the beat's next run."""
    _ttl_check(episode_ttl_days)
    locked = _lock_campaign(campaign)
    require_active(locked, "changing its settings")
    if locked.episode_ttl_days != episode_ttl_days:
        CampaignEvent.objects.create(campaign=locked, action=CampaignEvent.Action.TTL_CHANGED, actor=actor,
                                     detail={"from": locked.episode_ttl_days, "to": episode_ttl_days})
        locked.episode_ttl_days = episode_ttl_days
        locked.save(update_fields=["episode_ttl_days"])
    campaign.episode_ttl_days = locked.episode_ttl_days
    return locked


@dataclass(frozen=True)
class ArchiveResult:
    campaign: Campaign
    archived: bool  # False: it already was
    chunks_deleted: int


@transaction.atomic
def campaign_archive(*, campaign: Campaign, actor: str, reason: str = "") -> ArchiveResult:
    """Finish a campaign: kept (summaries, parties, flags, NPCs, dispositions with their history, art
    cards), read-only from now on, and out of search: its `episode` chunks are deleted (logged, so
    cached indexes drop them; they are derived and the summaries keep the text until their TTL).
    Archiving an archived campaign changes nothing."""
    locked = _lock_campaign(campaign)
    if locked.is_archived:
        return ArchiveResult(locked, archived=False, chunks_deleted=0)
    deleted = chunks_delete(tenant=locked.tenant,
                            chunks=Chunk.objects.filter(tenant_id=locked.tenant_id, namespace=locked.episode_namespace))
    # The art cards' chunks too (the cards stay, as the summaries do): art_suggest's query finds none.
    art_deleted = chunks_delete(tenant=locked.tenant,
                                chunks=Chunk.objects.filter(tenant_id=locked.tenant_id, namespace=locked.art_namespace))
    locked.status, locked.archived_at = Campaign.Status.ARCHIVED, timezone.now()
    locked.save(update_fields=["status", "archived_at"])
    CampaignEvent.objects.create(campaign=locked, action=CampaignEvent.Action.ARCHIVED, actor=actor,
                                 detail={"reason": reason, "episode_chunks_deleted": deleted,
                                         "art_chunks_deleted": art_deleted},
                                 created_at=locked.archived_at)
    transaction.on_commit(metrics.CAMPAIGNS_ARCHIVED.inc)
    return ArchiveResult(locked, archived=True, chunks_deleted=deleted)


# Other apps' rows about a campaign (the tools' call log), deleted with it: lore never imports them,
# they register here from their AppConfig.ready(), as user erasers register with the kernel.
CampaignEraser = Callable[[Campaign], dict[str, int]]
campaign_erasers: dict[str, CampaignEraser] = {}


def register_campaign_eraser(name: str, run: CampaignEraser) -> None:
    campaign_erasers[name] = run


def _campaign_rows(campaign: Campaign) -> dict[str, QuerySet[Any]]:
    """Every row of the campaign by kind, leaves first: each delete finds nothing left that points at
    its rows (no cascade to collect, no SET NULL to update), and the receipt counts each kind once."""
    return {
        "disposition_changes": DispositionChange.objects.filter(disposition__npc__campaign=campaign),
        "flag_changes": PartyFlagChange.objects.filter(party__campaign=campaign),
        "dispositions": Disposition.objects.filter(npc__campaign=campaign),
        "summaries": EpisodicSummary.objects.filter(campaign=campaign),
        "npcs": NPC.objects.filter(campaign=campaign),
        "parties": Party.objects.filter(campaign=campaign),
        "artcards": ArtCard.objects.filter(campaign=campaign),
        "scene_assemblies": SceneAssembly.objects.filter(campaign=campaign),
        # The short-term layer (lore.campaigns.threads): checkpoints, then their threads.
        "checkpoints": Checkpoint.objects.filter(thread__campaign=campaign),
        "threads": Thread.objects.filter(campaign=campaign),
        "events": CampaignEvent.objects.filter(campaign=campaign),
    }


@transaction.atomic
def campaign_delete(*, campaign: Campaign, actor: str) -> dict[str, int]:
    """Delete a campaign and everything of it, archived or not: summaries and their `episode` chunks,
    parties, flags and their history, NPCs, dispositions and their history, art cards, scene records,
    threads and their checkpoints, its audit events, the admin's log entries of those rows and what
    other apps registered (`register_campaign_eraser`). Returns the counts per kind, also kept in a `CampaignDeletion`
    receipt that names the campaign by its id and holds none of its content.

    Locks as the writers do (campaign row, then the namespace lock): a summary being written either
    commits first and is deleted with the rest, or finds the campaign gone (404); the retention beat
    holds the namespace lock for a batch and is waited for. Database work only: nothing is embedded
    or called while the locks are held. The episode and art namespaces go whole (chunks, deletion log and its
    row) as a user's erasure takes theirs: a cached BM25 index elsewhere finds the row gone and
    rebuilds (empty) rather than catching up, and no log names the deleted namespace."""
    locked = _lock_campaign(campaign)
    # The episode namespace and the art cards' (lore.campaigns.art), in one order for every deleter.
    namespaces = sorted([locked.episode_namespace, locked.art_namespace])
    for namespace in namespaces:
        namespace_write_lock(tenant_id=locked.tenant_id, namespace=namespace)
    rows = _campaign_rows(locked)
    chunks = Chunk.objects.filter(tenant_id=locked.tenant_id, namespace__in=namespaces)
    deleted: dict[str, int] = {}
    deleted["admin_log_entries"] = admin_log_forget_rows(
        querysets=[*rows.values(), chunks, Campaign.objects.filter(pk=locked.pk)])
    for kind, queryset in rows.items():
        deleted[kind] = queryset.only("pk").delete()[0]
    deleted["chunks"] = chunks.only("pk").delete()[0]
    ChunkDeletion.objects.filter(tenant_id=locked.tenant_id, namespace__in=namespaces).delete()
    Namespace.objects.filter(tenant_id=locked.tenant_id, name__in=namespaces).delete()
    for eraser in campaign_erasers.values():
        for kind, count in eraser(locked).items():
            deleted[kind] = deleted.get(kind, 0) + count
    Campaign.objects.filter(pk=locked.pk).only("pk").delete()
    CampaignDeletion.objects.create(tenant_id=locked.tenant_id, slug=locked.slug, world=locked.world.slug,
                                    campaign_pk=locked.pk, actor=actor,
                                    detail={"status": locked.status, "deleted": deleted})
    tenant_id, slug = locked.tenant_id, locked.slug

    def after() -> None:
        for namespace in namespaces:
            bm25_index.forget(tenant_id, namespace)
        metrics.CAMPAIGNS_DELETED.inc()
        logger.info("deleted campaign %s (%s) of tenant %s: %s", slug, ", ".join(namespaces), tenant_id, deleted)

    # Said once it holds: a rolled-back deletion must not be logged or drop a cache.
    transaction.on_commit(after)
    return deleted


@transaction.atomic
def party_create(*, campaign: Campaign, slug: str, name: str = "") -> Party:
    if not SLUG.fullmatch(slug):
        raise ApplicationError("Use letters, digits and _ . : - (at most 64).", field="party_id")
    _lock_active(campaign, "adding a party")
    if Party.objects.filter(campaign=campaign, slug=slug).exists():
        raise ApplicationError(f"Party {slug!r} already exists.", code="exists", field="party_id", status_code=409)
    return Party.objects.create(tenant_id=campaign.tenant_id, campaign=campaign, slug=slug, name=name or slug)


# --- Episodic summaries ----------------------------------------------------------------------
@dataclass(frozen=True)
class SummaryResult:
    summary: EpisodicSummary
    created: bool


def hero_of(towards: str) -> str:
    """A `relations_delta` item's `towards` → the hero its disposition is towards; "" for the party."""
    return towards.removeprefix(HERO_PREFIX) if towards.startswith(HERO_PREFIX) else ""


def summary_text(document: dict[str, Any], applied: Sequence[int] | None = None) -> str:
    """The prose an `episode` chunk holds: what search and the scene's episode block read. `applied`: each
    recorded change's delta as made (clamped to the disposition's range), in document order, when known; a
    model told "+3" of an NPC whose disposition moved by 1 reasons from a number that never happened. A
    delta of 0 changed nothing and is not said."""
    what, where, who = document["what"], document["where"], document["who"]
    parts = [f"Scene {document['scene_id']} at {where['location_id']}"
             + (f" ({', '.join(where['tags'])})" if where["tags"] else "")
             + f": {what['event']} → {what['outcome']}."]
    if who["npcs"] or who["players"]:
        parts.append(f"Who: {', '.join(who['players'] + who['npcs'])}.")
    if what["rolls"]:
        parts.append("Rolls: " + "; ".join(
            f"{r['who']} d20={r['d20']}" + (f" vs DC {r['dc']}" if "dc" in r else "")
            + (f" ({r['effect']})" if r.get("effect") else "") for r in what["rolls"]) + ".")
    if what["loot"]:
        parts.append("Loot: " + ", ".join(f"{item['item_id']}×{item['qty']}" for item in what["loot"]) + ".")
    if document["flags"]:
        parts.append("Flags: " + ", ".join(f"{k}={v}" for k, v in document["flags"].items()) + ".")
    changes = document["relations_delta"]
    if applied is not None and len(applied) != len(changes):
        # One `applied` per recorded change and a delta of 0 records none (a summary recorded before that
        # has a row for each item, so one `applied` per item).
        changes = [change for change in changes if change["delta"]]
    for i, change in enumerate(changes):
        if not change["delta"]:
            continue
        made = applied[i] if applied is not None and i < len(applied) else change["delta"]
        bound = f" ({change['delta']:+d} asked, at its bound)" if made != change["delta"] else ""
        whom = hero_of(change["towards"]) or "the party"
        parts.append(f"{change['npc_id']} {made:+d}{bound} towards {whom}: {change['reason']}.")
    if document["notes"]:
        parts.append(document["notes"])
    return " ".join(parts)


def _summary_checks(campaign: Campaign, document: dict[str, Any]) -> None:
    """What JSON Schema cannot say: the campaign of the path, the token bound, the delta bound, the
    heroes that dispositions move towards."""
    if document["campaign_id"] != campaign.slug:
        raise ApplicationError(f"The summary belongs to campaign {document['campaign_id']!r}, not {campaign.slug!r}.",
                               field="/campaign_id")
    notes_tokens = count_tokens(document["notes"])
    if notes_tokens > settings.GM_NOTES_MAX_TOKENS:
        raise ApplicationError(f"Notes are {notes_tokens} tokens; at most {settings.GM_NOTES_MAX_TOKENS}.",
                               field="/notes")
    # The last summaries come first by `when`: one dated in 2099 by an engine's typo stood first in every
    # scene's episode block until it expired. The tolerance is the one messages have.
    when = _parse_time(document["when"])
    tolerance = timedelta(seconds=settings.MESSAGE_FUTURE_TOLERANCE_SECONDS)
    if when.tzinfo is None:
        raise ApplicationError("`when` needs its UTC offset (e.g. 2024-05-01T20:00:00Z).", field="/when")
    if when > timezone.now() + tolerance:
        raise ApplicationError(f"`when` must not be more than {settings.MESSAGE_FUTURE_TOLERANCE_SECONDS} s in the "
                               "future.", field="/when")
    bound = settings.GM_DISPOSITION_MAX_DELTA
    # The bound is per disposition and summary, not per list item: two +3 items for one NPC moved it by 6.
    # The party's and each hero's are dispositions of their own, each bounded.
    moved: dict[tuple[str, str], int] = {}
    players = set(document["who"]["players"])
    for i, change in enumerate(document["relations_delta"]):
        hero = hero_of(change["towards"])
        # The party has no roster here: its heroes are the players its summaries name. One the scene does not
        # name is a typo that would start a disposition no profile lookup by the right id ever shows.
        if hero and hero not in players:
            raise ApplicationError(f"{change['towards']!r} names no player of this summary's who.players "
                                   f"({', '.join(document['who']['players']) or 'none'}); a disposition moves "
                                   f"towards the party or one of its heroes in the scene.", code="unknown_hero",
                                   field=f"/relations_delta/{i}/towards")
        key = (change["npc_id"], change["towards"])
        total = moved[key] = moved.get(key, 0) + change["delta"]
        if abs(change["delta"]) > bound:
            raise ApplicationError(f"A disposition moves by at most ±{bound} per summary; got {change['delta']:+d}.",
                                   code="delta_out_of_bounds", field=f"/relations_delta/{i}/delta")
        if abs(total) > bound:
            towards = f"hero {hero!r}" if hero else "the party"
            raise ApplicationError(f"A disposition moves by at most ±{bound} per summary; the changes of "
                                   f"{change['npc_id']!r} towards {towards} in this summary come to {total:+d} here.",
                                   code="delta_out_of_bounds", field=f"/relations_delta/{i}/delta")


def _scene_npcs_check(document: dict[str, Any]) -> None:
    """A summary tells what happened in its scene: it moves the dispositions of the NPCs its `who.npcs`
    names, as its heroes are the players `who.players` names. An NPC absent from the scene is an engine's
    slip (a change meant for another scene's summary, a stale list) that would move a disposition no
    scene accounts for: refused, never applied quietly."""
    present = set(document["who"]["npcs"])
    for i, change in enumerate(document["relations_delta"]):
        if change["npc_id"] not in present:
            raise ApplicationError(
                f"NPC {change['npc_id']!r} is not in this summary's scene (who.npcs: "
                f"{', '.join(document['who']['npcs']) or 'none'}); a summary moves the dispositions of the NPCs "
                f"in its scene only: add it to who.npcs if it was there.", code="npc_not_in_scene",
                field=f"/relations_delta/{i}/npc_id")


def _existing(campaign: Campaign, summary_id: str, sha: str) -> EpisodicSummary | None:
    found = EpisodicSummary.objects.filter(campaign=campaign, summary_id=summary_id).first()
    if found is not None and found.body_sha256 != sha:
        raise ApplicationError(f"Summary {summary_id!r} was recorded with a different body; a summary never "
                               f"changes: post a new summary_id.", code="conflict", field="/summary_id",
                               status_code=409)
    return found


def summary_record(*, campaign: Campaign, document: Any) -> SummaryResult:
    """Record one episodic summary (idempotent by `summary_id`): same body → the same summary,
    another body under the same id → 409."""
    document_validate("episodic_summary", document)
    require_active(campaign, "recording a summary")
    _summary_checks(campaign, document)
    sha = _canonical_sha256(document)
    found = _existing(campaign, document["summary_id"], sha)
    if found is not None:
        return SummaryResult(found, created=False)
    party = Party.objects.filter(campaign=campaign, slug=document["party_id"]).first()
    if party is None:
        raise _not_found(f"Campaign {campaign.slug!r} has no party {document['party_id']!r}.", "/party_id")
    npc_ids = list(dict.fromkeys(change["npc_id"] for change in document["relations_delta"]))
    npcs = {npc.npc_id: npc for npc in NPC.objects.filter(campaign=campaign, npc_id__in=npc_ids)}
    for i, change in enumerate(document["relations_delta"]):
        if change["npc_id"] not in npcs:
            raise _not_found(f"Campaign {campaign.slug!r} has no NPC {change['npc_id']!r}.",
                             f"/relations_delta/{i}/npc_id")
    # Who was there, as an art card's NPCs: the campaign's, or a scene's "Who:" line names a ghost.
    present = set(NPC.objects.filter(campaign=campaign, npc_id__in=document["who"]["npcs"])
                  .values_list("npc_id", flat=True))
    for i, npc_id in enumerate(document["who"]["npcs"]):
        if npc_id not in present:
            raise _not_found(f"Campaign {campaign.slug!r} has no NPC {npc_id!r}.", f"/who/npcs/{i}")
    # After the lookups: an NPC the campaign lacks is a 404 naming it, as before. Checked with the replay
    # answered already, so a summary recorded before this rule still replays.
    _scene_npcs_check(document)
    text = summary_text(document)
    # Embedded before the transaction: the embedding provider may be a network call.
    vector = fit_dims(get_embedder().embed_one(text), lore_config.domain_config("episode").dims)
    try:
        return _summary_write(campaign, party, npcs, document, sha, text, vector)
    except IntegrityError:
        # The same summary_id raced in for another party of the campaign: answer as a replay would.
        found = _existing(campaign, document["summary_id"], sha)
        if found is None:
            raise
        return SummaryResult(found, created=False)


@transaction.atomic
def _summary_write(campaign: Campaign, party: Party, npcs: dict[str, NPC], document: dict[str, Any], sha: str,
                   text: str, vector: Any) -> SummaryResult:
    _lock_active(campaign, "recording a summary")
    # The party row serialises its summaries: flags and dispositions read-modify-write under it.
    party = Party.objects.select_for_update().get(pk=party.pk)
    found = _existing(campaign, document["summary_id"], sha)
    if found is not None:
        return SummaryResult(found, created=False)
    now = timezone.now()
    summary = EpisodicSummary.objects.create(
        tenant_id=campaign.tenant_id, campaign=campaign, party=party, summary_id=document["summary_id"],
        scene_id=document["scene_id"], location_id=document["where"]["location_id"],
        when=_parse_time(document["when"]), document=document, flags=document["flags"], body_sha256=sha,
        created_at=now)
    _flags_write(party, summary, now)
    limit = settings.GM_DISPOSITION_RANGE
    applied: list[int] = []
    for change in document["relations_delta"]:
        if not change["delta"]:
            continue  # changes nothing: no history row, and no disposition started at 0 for it
        # Under the party's lock: no other summary of the party creates or moves one of its dispositions now.
        disposition, _ = Disposition.objects.select_for_update().get_or_create(
            npc=npcs[change["npc_id"]], party=party, hero_id=hero_of(change["towards"]))
        after = max(-limit, min(limit, disposition.value + change["delta"]))
        applied.append(after - disposition.value)
        DispositionChange.objects.create(disposition=disposition, summary=summary, delta=change["delta"],
                                         applied=applied[-1], value_after=after,
                                         reason=change["reason"], created_at=now)
        disposition.value, disposition.updated_at = after, now
        disposition.save(update_fields=["value", "updated_at"])
    # The vector was made from the text as asked (outside the lock); the text says what was made. A clamp
    # changes one number of it, which moves no search.
    text = summary_text(document, applied)
    draft = ChunkDraft(type=Chunk.Type.DOCUMENT, kind="episode", text=text, source_id=f"summary:{summary.pk}",
                       session_id=party.slug, created_ts=summary.when, tags=[f"party:{party.slug}"],
                       meta={"summary_id": summary.summary_id, "party_id": party.slug, "scene_id": summary.scene_id,
                             "location_id": summary.location_id, "campaign_id": campaign.slug})
    [chunk] = chunks_insert(tenant=campaign.tenant, namespace=campaign.episode_namespace,
                            prepared=PreparedChunks([draft], [storable_terms(analyze(text))], vector))
    summary.chunk = chunk
    summary.save(update_fields=["chunk"])
    return SummaryResult(summary, created=True)


def _later_setters(party: Party, summary: EpisodicSummary) -> dict[str, EpisodicSummary]:
    """Of the summary's flags, those a summary of the party later by `when` also named, each with the
    latest such summary (whose value the party holds). Ties go to the summary recorded last, this one."""
    if not summary.flags:
        return {}
    later = (EpisodicSummary.objects.filter(party=party, when__gt=summary.when, flags__has_any_keys=list(summary.flags))
             .order_by("-when", "-id").only("id", "summary_id", "when", "flags"))
    setters: dict[str, EpisodicSummary] = {}
    for other in later:
        for key in other.flags:
            if key in summary.flags:
                setters.setdefault(key, other)
    return setters


def _flags_write(party: Party, summary: EpisodicSummary, now: datetime) -> None:
    """Set the party's flags from a new summary, under the party's lock. A flag takes the value of the
    latest summary by `when` that named it, not of the last to arrive: an engine's late retry of an
    older scene undid what the scenes after it had set. `Party.flags` already holds each flag's value
    from its latest summary, so only the summaries later than this one can keep a flag from it; such a
    change is recorded, not applied."""
    setters = _later_setters(party, summary)
    flags = dict(party.flags)
    for key, value in summary.flags.items():
        previous = flags.get(key)
        if previous == value:
            continue
        if key in setters:
            PartyFlagChange.objects.create(party=party, summary=summary, key=key, value=value, previous=previous or "",
                                           applied=False, superseded_by=setters[key], created_at=now)
            continue
        PartyFlagChange.objects.create(party=party, summary=summary, key=key, value=value, previous=previous or "",
                                       created_at=now)
        flags[key] = value
    if flags != party.flags:
        party.flags = flags
        party.save(update_fields=["flags"])


# --- NPCs -------------------------------------------------------------------------------------
@transaction.atomic
def npc_upsert(*, campaign: Campaign, document: Any) -> tuple[NPC, bool]:
    """Create or replace an NPC's static part, by SemVer: a newer version replaces it, the same version
    with the same static part is a replay (unchanged), and an older version or the same one with
    another body is a 409, as a summary's id with another body is: the engine's late retry of 0.0.1
    replaced 1.0.1 and lost its secrets. The dynamic part is derived from summaries only."""
    # Before the schema: a `dynamic` the schema finds incomplete was refused as incomplete, as if completing
    # it would do.
    if isinstance(document, dict) and "dynamic" in document:
        raise ApplicationError("The dynamic part is read-only: dispositions change only through an episodic "
                               "summary's relations_delta.", code="read_only", field="/dynamic")
    document_validate("npc_profile", document)
    _lock_active(campaign, "writing an NPC")
    static = document["static"]
    npc, created = NPC.objects.select_for_update().get_or_create(
        campaign=campaign, npc_id=document["npc_id"],
        defaults={"tenant_id": campaign.tenant_id, "name": static["name"], "archetype": static["archetype"],
                  "static": static, "version": document["version"]})
    if created:
        return npc, True
    asked, stored = semver(document["version"]), semver(npc.version)
    if asked < stored:
        raise ApplicationError(f"NPC {npc.npc_id!r} is at version {npc.version}; {document['version']} is older "
                               f"and would undo it: post a version above {npc.version}.", code="stale_version",
                               field="/version", status_code=409)
    if asked == stored:
        if npc.static != static:
            raise ApplicationError(f"NPC {npc.npc_id!r} version {npc.version} was recorded with a different "
                                   f"static part; a version never changes: post a version above {npc.version}.",
                                   code="conflict", field="/version", status_code=409)
        return npc, False
    renamed = (npc.name, npc.archetype) != (static["name"], static["archetype"])
    npc.name, npc.archetype, npc.static, npc.version = static["name"], static["archetype"], static, \
        document["version"]
    npc.updated_at = timezone.now()
    npc.save(update_fields=["name", "archetype", "static", "version", "updated_at"])
    if renamed:
        _artcards_mark_renamed(campaign, npc.npc_id)
    return npc, False


def _artcards_mark_renamed(campaign: Campaign, npc_id: str) -> None:
    """The cards showing the NPC name it in their chunks (lore.campaigns.art.card_text): marked here, in the
    rename's transaction, and refreshed by a job after commit, since re-embedding them is no work for a
    transaction holding the NPC's row."""
    # Under the art namespace lock, the one every card writer reads the names under (art.names_changed): a card
    # written meanwhile either commits first and is marked here, or reads the new name once this commits.
    namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
    if ArtCard.objects.filter(campaign=campaign, npcs__contains=[npc_id]).update(reindex_pending=True):
        campaign_id = campaign.pk
        transaction.on_commit(lambda: art.refresh_enqueue(campaign_id))


# --- Art cards --------------------------------------------------------------------------------
def artcard_record(*, campaign: Campaign, document: Any) -> tuple[ArtCard, bool]:
    """Record an image's card (idempotent by `image_id`, like summaries: an image never changes) and index
    it for `art_suggest`'s query (lore.campaigns.art). Without `visual_tags` the card takes words of its
    prompt text at once and, with an LLM configured, a model's 5–8 later (`tags_pending`); a prompt text
    with no word to take (and a posted tag of blanks) is a 400 naming the field: no card without tags."""
    document_validate("artcard", document)
    require_active(campaign, "recording an art card")
    stored = {k: v for k, v in document.items() if k != "embedding"}
    if "embedding" in document:
        # The vector is the engine's business; model and dims say which space it came from.
        stored["embedding"] = {k: v for k, v in document["embedding"].items() if k != "vec"}
    existing = _artcard_existing(campaign, document["image_id"], stored)
    if existing is not None:
        return existing, False
    # As a summary's: an NPC the campaign does not have is a typo the card would carry into every
    # art_suggest for it.
    known = set(NPC.objects.filter(campaign=campaign, npc_id__in=document["entities"]["npc"])
                .values_list("npc_id", flat=True))
    for i, npc_id in enumerate(document["entities"]["npc"]):
        if npc_id not in known:
            raise _not_found(f"Campaign {campaign.slug!r} has no NPC {npc_id!r}.", f"/entities/npc/{i}")
    if "visual_tags" in document:
        tags, source = document["visual_tags"], ArtCard.TagsSource.ENGINE
        for i, tag in enumerate(tags):
            if not tag.strip():
                raise ApplicationError("A visual tag of blanks marks nothing.", code="visual_tags_required",
                                       field=f"/visual_tags/{i}")
    else:
        tags, source = art.derive_tags(document["prompt_text"]), ArtCard.TagsSource.DERIVED
        # A card without tags carries no canon marker into art_suggest's keep/avoid, and a model asked later
        # has nothing to describe either: the engine knows what the image shows.
        if not tags:
            raise ApplicationError("No visual_tags were posted and prompt_text has no word to derive them from "
                                   "(only function words, punctuation or symbols): post visual_tags, or a "
                                   "prompt_text that describes the image.", code="visual_tags_required",
                                   field="/visual_tags")
    # Embedded before the transaction: the embedding provider may be a network call.
    text, vector = art.index_prepare(campaign, document, tags)
    try:
        return _artcard_write(campaign, document, stored, tags, source, text, vector)
    except IntegrityError:
        # The same image_id raced in: answer as a replay would.
        existing = _artcard_existing(campaign, document["image_id"], stored)
        if existing is None:
            raise
        return existing, False


def _artcard_existing(campaign: Campaign, image_id: str, stored: dict[str, Any]) -> ArtCard | None:
    existing = ArtCard.objects.filter(campaign=campaign, image_id=image_id).first()
    if existing is not None and existing.document != stored:
        raise ApplicationError(f"Art card {image_id!r} was recorded with a different body.",
                               code="conflict", field="/image_id", status_code=409)
    return existing


@transaction.atomic
def _artcard_write(campaign: Campaign, document: dict[str, Any], stored: dict[str, Any], tags: list[str],
                   source: str, text: str, vector: Any) -> tuple[ArtCard, bool]:
    _lock_active(campaign, "recording an art card")
    # Before the card: its NPCs' names are read under this lock (see _artcards_mark_renamed).
    namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
    existing = _artcard_existing(campaign, document["image_id"], stored)
    if existing is not None:
        return existing, False
    pending = source == ArtCard.TagsSource.DERIVED and llm_enabled()
    card = ArtCard.objects.create(
        tenant_id=campaign.tenant_id, campaign=campaign, image_id=document["image_id"],
        scene_id=document["scene_id"], npcs=document["entities"]["npc"], locations=document["entities"]["location"],
        visual_tags=tags, tags_source=source, tags_pending=pending, style_preset=document["style"]["preset"],
        safe=document["moderation"]["safe"], document=stored, created_at=_parse_time(document["created_at"]),
        # An NPC of it renamed since its text was made: indexed now under the old name, refreshed after commit.
        reindex_pending=art.names_changed(campaign, document, tags, text))
    card.chunk = art.index_insert(campaign, card, text, vector)
    card.save(update_fields=["chunk"])
    campaign_id, card_id = campaign.pk, card.pk
    if pending:
        transaction.on_commit(lambda: art.tag_enqueue(card_id))
    if card.reindex_pending:
        transaction.on_commit(lambda: art.refresh_enqueue(campaign_id))
    return card, True
