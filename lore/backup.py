"""Backup and disaster recovery of a world's knowledge (seed 003 §8.11: keep the raw material, re-index).

An export holds what every version is built from, not the index: the sources as uploaded (base64),
the edits with their audit trail, and per version the sources and edits it was built from, plus the
aliases and the changelog. An import rebuilds every version, in order, through the same ingest
(normalise, chunk, embed; unchanged text re-uses the vectors of the version before), so the index
it yields is the one the same code would build today: with the same embedder, search results are
identical to the exported world's. A version the retention policy pruned (lore.pruning) is exported
as pruned and imported as such, its row, sources and edits without chunks: rebuilding it would undo
the pruning and cost its embedding; `lore_reindex` rebuilds it when wanted.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable
from datetime import datetime
from typing import Any

from django.db import transaction
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from lore import services
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent
from lore.models import Alias, Domain, GoldenSet, KnowledgeChange, KnowledgeVersion, Source, World
from memoryhub.exceptions import ApplicationError
from memoryhub.models import Tenant
from rag import index as bm25_index
from rag.models import Chunk
from rag.services import chunks_delete

FORMAT = "memoryhub-knowledge/1"


def _when(value: datetime | None) -> str | None:
    return value.isoformat() if value is not None else None


def _version_of(version: KnowledgeVersion | None) -> str | None:
    return version.version if version is not None else None


def knowledge_export(*, world: World) -> dict[str, Any]:
    sources = [{
        "id": s.pk, "domain": s.domain, "filename": s.filename, "language": s.language, "format": s.format,
        "options": s.options, "sha256": s.sha256, "uploaded_by": s.uploaded_by, "created_at": _when(s.created_at),
        "content_base64": base64.b64encode(bytes(s.content)).decode("ascii"),
    } for s in Source.objects.filter(world=world).order_by("id")]
    edits = [{
        "id": e.pk, "domain": e.domain, "language": e.language, "entry_id": e.entry_id, "action": e.action,
        "title": e.title, "text": e.text, "reason": e.reason, "proposed_by": e.proposed_by,
        "base_version": _version_of(e.base_version), "old_title": e.old_title, "old_text": e.old_text,
        "status": e.status, "decided_by": e.decided_by, "decided_at": _when(e.decided_at),
        "decision_reason": e.decision_reason, "produced_version": _version_of(e.produced_version),
        "created_at": _when(e.created_at),
        "events": [{"action": ev.action, "actor": ev.actor, "reason": ev.reason, "version": ev.version,
                    "created_at": _when(ev.created_at)} for ev in e.events.order_by("id")],
    } for e in KnowledgeEdit.objects.filter(world=world).select_related("base_version", "produced_version")
        .prefetch_related("events").order_by("id")]
    versions = [{
        "domain": v.domain, "version": v.version, "status": v.status,
        "sources": sorted(s.pk for s in v.sources.all()), "edits": list(v.edits),
        "entry_count": v.entry_count, "chunk_count": v.chunk_count, "smoke": v.smoke,
        "created_by": v.created_by, "created_at": _when(v.created_at), "pruned_at": _when(v.pruned_at),
        "pruned_by": v.pruned_by,
    } for v in KnowledgeVersion.objects.filter(world=world).prefetch_related("sources").order_by("id")]
    aliases = [{"domain": a.domain, "name": a.name, "version": a.version.version,
                "updated_at": _when(a.updated_at)}
               for a in Alias.objects.filter(world=world).select_related("version").order_by("domain", "name")]
    changelog = [{
        "domain": c.domain, "action": c.action, "from_version": _version_of(c.from_version),
        "to_version": c.to_version.version, "actor": c.actor, "reason": c.reason, "smoke": c.smoke,
        "took_ms": c.took_ms, "share": c.share, "created_at": _when(c.created_at),
    } for c in KnowledgeChange.objects.filter(world=world).select_related("from_version", "to_version")
        .order_by("id")]
    golden = [{"domain": g.domain, "queries": g.queries, "updated_by": g.updated_by,
               "updated_at": _when(g.updated_at)} for g in world.golden_sets.order_by("domain")]
    return {"format": FORMAT, "world": {"slug": world.slug, "name": world.name, "languages": world.languages},
            "sources": sources, "edits": edits, "versions": versions, "aliases": aliases, "changelog": changelog,
            "golden": golden}


def world_delete(*, world: World) -> int:
    """Delete a world with its knowledge: versions, sources, edits, aliases, changelog and the
    chunks of its version namespaces. Returns the number of chunks removed."""
    namespaces = list(KnowledgeVersion.objects.filter(world=world).values_list("namespace", flat=True))
    with transaction.atomic():
        removed = chunks_delete(tenant=world.tenant, chunks=Chunk.objects.filter(namespace__in=namespaces))
        # The changelog and aliases protect the versions they name: they go first.
        KnowledgeChange.objects.filter(world=world).delete()
        Alias.objects.filter(world=world).delete()
        World.objects.filter(pk=world.pk).delete()
    for namespace in namespaces:
        bm25_index.forget(world.tenant_id, namespace)
    return removed


def _require(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind):
        raise ApplicationError(f"The export has no valid {key!r} ({kind.__name__} expected).", field=key)
    return value


def knowledge_import(*, tenant: Tenant, data: dict[str, Any],
                     progress: Callable[[str], None] = lambda message: None,
                     embedded: Callable[[int, int], None] = lambda done, total: None) -> World:
    """Recreate an exported world under `tenant`, which must not have a world of that slug. Each
    version is rebuilt by the ingest in its own short transaction (embedding outside any); if any
    step fails, the half-restored world is deleted again. `progress(message)` as each version
    starts, `embedded(done, total)` as its chunks are embedded (the ingest's own progress)."""
    if data.get("format") != FORMAT:
        raise ApplicationError(f"Not a knowledge export (format {data.get('format')!r}, expected {FORMAT!r}).",
                               field="format")
    meta = _require(data, "world", dict)
    world = services.world_create(tenant=tenant, slug=str(meta.get("slug", "")), name=str(meta.get("name", "")),
                                  languages=list(meta.get("languages") or []))
    try:
        _restore(world, data, progress, embedded)
    except BaseException:
        world_delete(world=world)
        raise
    return world


def _restore(world: World, data: dict[str, Any], progress: Callable[[str], None],
             embedded: Callable[[int, int], None]) -> None:
    tenant = world.tenant
    sources: dict[int, Source] = {}
    edits: dict[int, KnowledgeEdit] = {}
    with transaction.atomic():
        for row in _require(data, "sources", list):
            content = base64.b64decode(row["content_base64"], validate=True)
            if hashlib.sha256(content).hexdigest() != row["sha256"]:
                raise ApplicationError(f"Source {row['language']}/{row['filename']}: content does not match its "
                                       "sha256.", field="sources")
            sources[row["id"]] = Source.objects.create(
                tenant=tenant, world=world, domain=row["domain"], filename=row["filename"], language=row["language"],
                format=row["format"], options=row["options"], content=content, sha256=row["sha256"],
                uploaded_by=row["uploaded_by"], created_at=parse_datetime(row["created_at"]))
        for row in _require(data, "edits", list):
            edit = KnowledgeEdit.objects.create(
                tenant=tenant, world=world, domain=row["domain"], language=row["language"], entry_id=row["entry_id"],
                action=row["action"], title=row["title"], text=row["text"], reason=row["reason"],
                proposed_by=row["proposed_by"], old_title=row["old_title"], old_text=row["old_text"],
                status=row["status"], decided_by=row["decided_by"],
                decided_at=parse_datetime(row["decided_at"]) if row["decided_at"] else None,
                decision_reason=row["decision_reason"], created_at=parse_datetime(row["created_at"]))
            KnowledgeEditEvent.objects.bulk_create([KnowledgeEditEvent(
                tenant=tenant, edit=edit, action=ev["action"], actor=ev["actor"], reason=ev["reason"],
                version=ev["version"], created_at=parse_datetime(ev["created_at"])) for ev in row["events"]])
            edits[row["id"]] = edit
    built: dict[tuple[str, str], KnowledgeVersion] = {}
    for row in _require(data, "versions", list):
        if row["domain"] not in Domain.values:
            raise ApplicationError(f"Unknown domain {row['domain']!r}.", field="versions")
        if row["status"] == KnowledgeVersion.Status.PRUNED:
            progress(f"keeping {row['domain']} {row['version']} as pruned (not rebuilt)")
            built[(row["domain"], row["version"])] = _pruned_version(world, row, sources, edits)
            continue
        progress(f"rebuilding {row['domain']} {row['version']}")
        version = services.knowledge_ingest(
            world=world, domain=row["domain"], files=[], actor=row["created_by"], version=row["version"],
            from_sources=[sources[pk] for pk in row["sources"]], add_edits=[edits[pk].pk for pk in row["edits"]],
            progress=embedded)
        if version.entry_count != row["entry_count"]:
            raise ApplicationError(f"{row['domain']} {row['version']}: rebuilt {version.entry_count} entries, the "
                                   f"export says {row['entry_count']}.", field="versions")
        KnowledgeVersion.objects.filter(pk=version.pk).update(
            status=row["status"], smoke=row["smoke"], created_at=parse_datetime(row["created_at"]))
        built[(row["domain"], row["version"])] = version
    with transaction.atomic():
        for row in data["edits"]:
            KnowledgeEdit.objects.filter(pk=edits[row["id"]].pk).update(
                base_version=built.get((row["domain"], row["base_version"])),
                produced_version=built.get((row["domain"], row["produced_version"])))
        Alias.objects.filter(world=world).delete()
        for row in _require(data, "aliases", list):
            if built[(row["domain"], row["version"])].status == KnowledgeVersion.Status.PRUNED:
                raise ApplicationError(f"Alias {row['domain']}@{row['name']} points at {row['version']}, which the "
                                       "export says was pruned.", field="aliases")
            Alias.objects.create(world=world, domain=row["domain"], name=row["name"],
                                 version=built[(row["domain"], row["version"])],
                                 updated_at=parse_datetime(row["updated_at"]))
        KnowledgeChange.objects.bulk_create([KnowledgeChange(
            tenant=tenant, world=world, domain=row["domain"], action=row["action"],
            from_version=built.get((row["domain"], row["from_version"])),
            to_version=built[(row["domain"], row["to_version"])], actor=row["actor"], reason=row["reason"],
            smoke=row["smoke"], took_ms=row["took_ms"], share=row.get("share"),  # a canary's; older exports have none
            created_at=parse_datetime(row["created_at"]),
        ) for row in _require(data, "changelog", list)])
        # Golden sets sent over the API; an export made before they existed has none.
        for row in data.get("golden") or []:
            services.golden_set_save(world=world, domain=row["domain"], queries=row["queries"],
                                     actor=row["updated_by"])
            GoldenSet.objects.filter(world=world, domain=row["domain"]).update(
                updated_at=parse_datetime(row["updated_at"]))


def _pruned_version(world: World, row: dict[str, Any], sources: dict[int, Source],
                    edits: dict[int, KnowledgeEdit]) -> KnowledgeVersion:
    """A pruned version's row as exported: its sources and edits (what `lore_reindex` rebuilds it
    from), figures and smoke run, no chunks."""
    version = KnowledgeVersion.objects.create(
        tenant=world.tenant, world=world, domain=row["domain"], version=row["version"],
        status=KnowledgeVersion.Status.PRUNED, namespace=services.namespace_for(world, row["domain"], row["version"]),
        edits=[edits[pk].pk for pk in row["edits"]], entry_count=row["entry_count"], chunk_count=row["chunk_count"],
        smoke=row["smoke"], created_by=row["created_by"], created_at=parse_datetime(row["created_at"]),
        pruned_at=parse_datetime(row["pruned_at"]) if row.get("pruned_at") else timezone.now(),
        pruned_by=row.get("pruned_by", ""))
    version.sources.set([sources[pk] for pk in row["sources"]])
    return version
