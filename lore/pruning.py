"""Retention of knowledge versions: old versions' chunks are deleted, their rows kept.

Every knowledge version (each upload, each approved edit) holds a full copy of its world's chunks in
a namespace of its own, so storage grew with every edit, and many near-identical large versions
weakened the HNSW index's recall for each of them. Per (world, domain) a version is kept while

- an alias points to it (`latest`, `stage`);
- a rollback from the current `latest` can reach it within LORE_KEEP_VERSIONS steps (a rollback
  follows the publish that made the live version live back to its `from_version`, see
  `services.lore_version_rollback`);
- one of the newest LORE_KEEP_VERSIONS publishes or rollbacks moved `latest` from or to it;
- it is among the newest LORE_KEEP_VERSIONS by SemVer, of those not pruned yet;
- it is younger than LORE_PRUNE_MIN_AGE_HOURS (a version just built may be under its smoke run).

Any other is pruned: its status becomes `pruned` (with `pruned_at`), then its chunks are deleted
through `rag.services.chunks_delete` (logged, so cached BM25 indexes drop them) and its
`rag.models.Namespace` row goes. The row stays with its sources and edits, so `manage.py lore_reindex`
rebuilds it as a new staged version; anything else that names it is refused with 409 `version_pruned`.

The decision is taken under the locks a publish and a rollback take, in their order: the `latest`
alias row, then the version rows (`FOR NO KEY UPDATE`: an insert naming a version, such as a
changelog row or a proposed edit's base, does not wait on it). The keep rules are read again under
them, so a publish of a version either makes it live first (and it is kept) or finds it pruned (409).
The chunks are deleted afterwards, in batches of their own short transactions, holding no alias
lock: a large namespace takes a while. A run that stops in between (a crash, a deploy) leaves
versions marked pruned with chunks left; every run first finishes those. A build that copies
vectors from older versions of its domain (`services._build`) reads them in one statement, a
snapshot: whatever a prune deletes meanwhile, the build has every vector it found or embeds the
rest, so it needs no lock against a prune.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from prometheus_client import Counter

from lore.models import Alias, KnowledgeChange, KnowledgeVersion, World, semver
from lore.services import _lock_latest
from memoryhub.models import Tenant
from rag import index as bm25_index
from rag.models import Chunk, Namespace
from rag.services import chunks_delete, namespace_write_lock

logger = logging.getLogger(__name__)

PRUNED = Counter("memoryhub_lore_pruned_total",
                 "Knowledge versions pruned by the retention policy, and the chunks deleted with them", ["what"])

# Who prunes, as `KnowledgeVersion.pruned_by` says (the admin's action names the editor).
DAILY = "the daily retention job"
COMMAND = "manage.py lore_prune"

# Chunks deleted per transaction: each holds only its namespace's write lock, which no one else
# wants for a pruned version, and keeps the deletion log's insert and the delete short.
DELETE_BATCH = 2000


@dataclass(frozen=True)
class Verdict:
    """What the policy says of one version: why it is kept (`kept_for`), or that it goes (empty)."""

    version_id: int
    tenant: str
    world: str
    domain: str
    version: str
    chunk_count: int
    kept_for: tuple[str, ...]

    @property
    def pruned(self) -> bool:
        return not self.kept_for

    def __str__(self) -> str:
        return f"{self.world}/{self.domain} {self.version}"


@dataclass
class PruneReport:
    dry_run: bool
    # Every version not pruned before this run, with its verdict.
    verdicts: list[Verdict] = field(default_factory=list)
    # Namespaces of pruned versions still holding chunks: those this run deleted (a dry run: would delete).
    namespaces: list[str] = field(default_factory=list)
    chunks_deleted: int = 0

    @property
    def pruned(self) -> list[Verdict]:
        return [v for v in self.verdicts if v.pruned]

    def counts(self) -> dict[str, int]:
        return {"kept": len(self.verdicts) - len(self.pruned), "pruned": len(self.pruned),
                "namespaces": len(self.namespaces), "chunks": self.chunks_deleted}


def versions_plan(*, world: World, domain: str, now: datetime | None = None,
                  prunable: Iterable[int] | None = None) -> list[Verdict]:
    """The policy's verdict on each version of (world, domain) not pruned yet, newest first. Reads
    only. `prunable`: the versions that may be pruned (those whose rows the caller locked); any other
    the policy would prune is kept for this run ("next run")."""
    now = now or timezone.now()
    keep = settings.LORE_KEEP_VERSIONS
    rows = sorted(KnowledgeVersion.objects.filter(world=world, domain=domain)
                  .values_list("id", "version", "status", "created_at", "chunk_count"),
                  key=lambda row: semver(row[1]), reverse=True)  # newest first
    reasons: dict[int, list[str]] = defaultdict(list)
    aliases = dict(Alias.objects.filter(world=world, domain=domain).values_list("name", "version_id"))
    for name in (Alias.Name.LATEST, Alias.Name.STAGE):
        if name in aliases:
            reasons[aliases[name]].append(name)
    # The rollback chain: each version's arrival is the newest publish that made it live; a rollback
    # from it goes to that publish's `from_version` (a rollback's own row is not followed).
    arrivals: dict[int, int | None] = {}
    for to_id, from_id in (KnowledgeChange.objects.filter(
            world=world, domain=domain,
            action__in=[KnowledgeChange.Action.PUBLISH, KnowledgeChange.Action.FORCED_PUBLISH])
            .order_by("id").values_list("to_version_id", "from_version_id")):
        arrivals[to_id] = from_id
    current, seen = aliases.get(Alias.Name.LATEST), set()
    for step in range(1, keep + 1):
        seen.add(current)
        previous = arrivals.get(current) if current is not None else None
        if previous is None or previous in seen:
            break
        reasons[previous].append(f"rollback {step}")
        current = previous
    # Versions the newest changes of `latest` moved from or to: after rollbacks the version rolled back
    # from is no rollback's target (a rollback walks back), yet it was live a moment ago and is what a
    # publish would undo the rollback with.
    # Publishes and rollbacks: a canary's start or end moves no `latest`.
    moves = KnowledgeChange.objects.filter(world=world, domain=domain).exclude(
        action__in=[KnowledgeChange.Action.CANARY, KnowledgeChange.Action.CANARY_END])
    for from_id, to_id in (moves.order_by("-id").values_list("from_version_id", "to_version_id")[:keep]):
        for pk in (to_id, from_id):
            if pk is not None and "live recently" not in reasons[pk]:
                reasons[pk].append("live recently")
    # Among the versions not pruned yet: pruned ones, once counted, would crowd out those left after
    # LORE_KEEP_VERSIONS was lowered and raised again.
    unpruned = [row for row in rows if row[2] != KnowledgeVersion.Status.PRUNED]
    for pk, *_ in unpruned[:keep]:
        reasons[pk].append("newest")
    cutoff = now - timedelta(hours=settings.LORE_PRUNE_MIN_AGE_HOURS)
    allowed = None if prunable is None else set(prunable)
    verdicts = []
    tenant = world.tenant.name
    for pk, number, status, created_at, chunks in rows:
        if status == KnowledgeVersion.Status.PRUNED:
            continue
        if created_at > cutoff:
            reasons[pk].append("recent")
        if not reasons[pk] and allowed is not None and pk not in allowed:
            reasons[pk].append("next run")  # prunable only since the caller locked the others
        verdicts.append(Verdict(pk, tenant, world.slug, domain, number, chunks, tuple(reasons[pk])))
    return verdicts


def _mark(*, world: World, domain: str, candidates: list[int], now: datetime, by: str) -> list[Verdict]:
    """Mark pruned, under the locks a publish and a rollback take, the candidates the policy still
    prunes when read again under them. Returns the verdicts read under the locks."""
    with transaction.atomic():
        _lock_latest(world, domain)
        locked = list(KnowledgeVersion.objects.select_for_update(no_key=True)
                      .filter(pk__in=candidates).exclude(status=KnowledgeVersion.Status.PRUNED)
                      .order_by("id").values_list("id", flat=True))
        verdicts = versions_plan(world=world, domain=domain, now=now, prunable=locked)
        doomed = [v.version_id for v in verdicts if v.pruned]
        if doomed:
            KnowledgeVersion.objects.filter(pk__in=doomed).update(status=KnowledgeVersion.Status.PRUNED,
                                                                 pruned_at=now, pruned_by=by)
    return verdicts


def _leftovers(worlds: list[World]) -> list[tuple[Tenant, str, int]]:
    """(tenant, namespace, chunks) of pruned versions whose chunks or namespace row are still there:
    marked by a run that stopped before it deleted them, or by the admin's action, which leaves the
    deletion to a task."""
    found = []
    for world in worlds:
        namespaces = list(KnowledgeVersion.objects.filter(world=world, status=KnowledgeVersion.Status.PRUNED)
                          .order_by("id").values_list("namespace", flat=True))
        if not namespaces:
            continue
        rows = dict(Namespace.objects.filter(tenant=world.tenant, name__in=namespaces)
                    .values_list("name", "chunk_count"))
        with_chunks = set(Chunk.objects.filter(tenant=world.tenant, namespace__in=namespaces)
                          .values_list("namespace", flat=True).distinct().order_by())
        found += [(world.tenant, ns, rows.get(ns, 0)) for ns in namespaces if ns in rows or ns in with_chunks]
    return found


def _namespace_delete(tenant: Tenant, namespace: str, total: int,
                      on_deleted: Callable[[str, int, int], None]) -> int:
    deleted = 0
    on_deleted(namespace, 0, total)
    while ids := list(Chunk.objects.filter(tenant=tenant, namespace=namespace).order_by("id")
                      .values_list("id", flat=True)[:DELETE_BATCH]):
        with transaction.atomic():
            deleted += chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(pk__in=ids))
        on_deleted(namespace, deleted, max(total, deleted))
    with transaction.atomic():
        # Under the namespace lock, so no writer's chunk (there should be none) is left without its row.
        namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
        if not Chunk.objects.filter(tenant=tenant, namespace=namespace).exists():
            Namespace.objects.filter(tenant=tenant, name=namespace).delete()
    bm25_index.forget(tenant.pk, namespace)
    return deleted


def knowledge_versions_prune(
    *,
    world: World | None = None,
    tenant: Tenant | None = None,
    dry_run: bool = False,
    delete: bool = True,
    now: datetime | None = None,
    by: str = DAILY,
    on_verdicts: Callable[[list[Verdict]], None] = lambda verdicts: None,
    on_deleted: Callable[[str, int, int], None] = lambda namespace, done, total: None,
) -> PruneReport:
    """Apply the retention policy to `world` (else every world of `tenant`, else every world).
    `dry_run`: decide and report, change nothing. `delete=False`: only mark the versions pruned (the
    admin's action, which hands the deletion to a task; they are refused from then on). Otherwise
    the chunks of every pruned version still holding some are deleted, this run's and any an earlier
    run left. `on_verdicts(verdicts)` per (world, domain) as decided; `on_deleted(namespace, done,
    total)` as a namespace's chunks go. `by`: who prunes, kept on each version pruned."""
    now = now or timezone.now()
    worlds = [world] if world is not None else list(
        World.objects.filter(**({"tenant": tenant} if tenant is not None else {}))
        .select_related("tenant").order_by("tenant__name", "slug"))
    report = PruneReport(dry_run=dry_run)
    for each in worlds:
        domains = sorted(set(KnowledgeVersion.objects.filter(world=each).values_list("domain", flat=True)))
        for domain in domains:
            verdicts = versions_plan(world=each, domain=domain, now=now)
            candidates = [v.version_id for v in verdicts if v.pruned]
            if candidates and not dry_run:
                verdicts = _mark(world=each, domain=domain, candidates=candidates, now=now, by=by)
            report.verdicts += verdicts
            on_verdicts(verdicts)
    marked = [] if dry_run else report.pruned
    if marked:
        PRUNED.labels("versions").inc(len(marked))
    leftovers = _leftovers(worlds)
    report.namespaces = [namespace for _, namespace, _ in leftovers]
    if dry_run:
        report.chunks_deleted = 0
        return report
    if delete:
        for owner, namespace, total in leftovers:
            report.chunks_deleted += _namespace_delete(owner, namespace, total, on_deleted)
        if report.chunks_deleted:
            PRUNED.labels("chunks").inc(report.chunks_deleted)
    if marked or report.chunks_deleted:
        logger.info("lore prune: %s version(s) pruned (%s), %s chunk(s) of %s namespace(s) deleted, %s kept",
                    len(marked), ", ".join(map(str, marked)) or "none", report.chunks_deleted,
                    len(report.namespaces) if delete else 0, len(report.verdicts) - len(marked))
    return report
