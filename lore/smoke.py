"""Smoke retrieval with golden queries (seed 003 §8.11, §8.15): hit@1/5/10 and MRR per language.

Golden queries are phrased as a player or a game master would ask, each with the entry ids that
answer it and a `split`: `tune` (used while choosing the retrieval settings) or `test` (held out;
what the publish gate and the reported figures use by default). A world's editors send them over the
API (`lore.models.GoldenSet`, one set per domain); without one, the file
`qa/memory_retrieval_golden/<world>/<domain>.json` under LORE_GOLDEN_DIR is used.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jsonschema
from django.conf import settings
from django.utils import timezone

from lore.models import GoldenSet, KnowledgeVersion, World
from lore.selectors import Target, knowledge_search
from memoryhub.exceptions import ApplicationError
from rag.models import Chunk

KS = (1, 5, 10)

GOLDEN_SCHEMA = {
    "type": "object",
    "required": ["queries"],
    "properties": {
        "world": {"type": "string"},
        "domain": {"type": "string"},
        "queries": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "additionalProperties": False,
                "required": ["id", "language", "query", "expected"],
                "properties": {
                    "id": {"type": "string"},
                    "language": {"type": "string"},
                    "split": {"enum": ["tune", "test"]},
                    "query": {"type": "string", "minLength": 1},
                    "expected": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                    "note": {"type": "string"},
                },
            },
        },
    },
}


@dataclass(frozen=True)
class GoldenQuery:
    id: str
    language: str
    query: str
    expected: tuple[str, ...]
    split: str


def golden_path(world_slug: str, domain: str) -> Path:
    return Path(settings.LORE_GOLDEN_DIR) / world_slug / f"{domain}.json"


def shown_path(path: Path) -> str:
    """The golden file as an API error names it: under LORE_GOLDEN_DIR by that name, so an engine's
    error says where the operator puts the file without showing the server's directories."""
    try:
        return f"LORE_GOLDEN_DIR/{path.relative_to(Path(settings.LORE_GOLDEN_DIR))}"
    except ValueError:
        return str(path)  # a file given on the command line: its owner named it


def golden_load(path: Path) -> list[GoldenQuery]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        # A new world has none: say how its versions still go live, so an editor is not sent in a circle
        # between "publish needs a smoke run" and "no golden queries".
        raise ApplicationError(f"No golden queries at {shown_path(path)}; send them with PUT …/domains/<domain>/"
                               "golden, or the version goes live only by a forced publish with a reason (API "
                               "force, lore_publish --force, the admin's Publish despite the smoke run).",
                               code="no_golden", status_code=409) from exc
    except json.JSONDecodeError as exc:
        raise ApplicationError(f"{shown_path(path)}: line {exc.lineno} column {exc.colno}: {exc.msg}",
                               code="invalid_golden") from exc
    return golden_queries(data, where=shown_path(path))


def golden_problem(data: Any) -> tuple[str, str] | None:
    """(JSON path, message) of the first way `data` is not a golden set, or None."""
    error = jsonschema.exceptions.best_match(jsonschema.Draft202012Validator(GOLDEN_SCHEMA).iter_errors(data))
    if error is None:
        return None
    return "$" + "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in error.absolute_path), error.message


def golden_queries(data: Any, *, where: str) -> list[GoldenQuery]:
    problem = golden_problem(data)
    if problem is not None:
        raise ApplicationError(f"{where}: {problem[0]}: {problem[1]}", code="invalid_golden")
    return [GoldenQuery(q["id"], q["language"], q["query"], tuple(q["expected"]), q.get("split", "test"))
            for q in data["queries"]]


def golden_for(version: KnowledgeVersion) -> tuple[list[GoldenQuery], str]:
    """The golden queries of `version`'s world and domain, and where they come from: the set sent over
    the API, else the file under LORE_GOLDEN_DIR."""
    sent = GoldenSet.objects.filter(world_id=version.world_id, domain=version.domain).first()
    if sent is not None:
        where = f"golden set of {version.world.slug}/{version.domain}"
        return golden_queries({"queries": sent.queries}, where=where), where
    path = golden_path(version.world.slug, version.domain)
    return golden_load(path), shown_path(path)


def golden_exists(world: World, domain: str) -> bool:
    """Whether a smoke run of the domain has golden queries to run (sent over the API, or the file)."""
    return (GoldenSet.objects.filter(world=world, domain=domain).exists()
            or golden_path(world.slug, domain).is_file())


def entries_held(*, tenant_id: int, namespaces: list[str], entry_ids: set[str]) -> set[str]:
    """Which of `entry_ids` have a chunk in one of `namespaces` (lore versions' namespaces)."""
    if not namespaces or not entry_ids:
        return set()
    return set(Chunk.objects.filter(tenant_id=tenant_id, namespace__in=namespaces,
                                    meta__entry_id__in=sorted(entry_ids))
               .values_list("meta__entry_id", flat=True).distinct())


def golden_unknown_entries(*, world: World, domain: str, queries: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The golden queries whose expected entry ids no version of the domain holds (a typo in an id, or
    entries not uploaded yet): a warning, not a refusal, since a golden set may be written before its
    sources; each smoke run checks again against the version it runs on (`misses[].missing`). Versions
    pruned by the retention policy hold no chunks and are not asked."""
    namespaces = list(KnowledgeVersion.objects.filter(world=world, domain=domain)
                      .exclude(status=KnowledgeVersion.Status.PRUNED).values_list("namespace", flat=True))
    held = entries_held(tenant_id=world.tenant_id, namespaces=namespaces,
                        entry_ids={entry for q in queries for entry in q["expected"]})
    where = f"{world.slug}/{domain}"
    warnings = []
    for i, query in enumerate(queries):
        unknown = [entry for entry in query["expected"] if entry not in held]
        if not unknown:
            continue
        none_yet = "" if namespaces else " (it has none yet)"
        warnings.append({
            "code": "unknown_entries", "field": f"queries[{i}].expected", "query": query["id"], "entry_ids": unknown,
            "message": f"Query {query['id']!r} expects {', '.join(unknown)}, which no version of {where} "
                       f"holds{none_yet}: a smoke run counts it a miss until a version holds them (check the ids, "
                       "or upload the entries).",
        })
    return warnings


def _figures(ranks: list[int | None]) -> dict[str, float]:
    n = len(ranks)
    figures: dict[str, float] = {"n": n}
    for k in KS:
        figures[f"hit@{k}"] = round(sum(1 for r in ranks if r is not None and r <= k) / n, 4) if n else 0.0
    figures["mrr"] = round(sum(1 / r for r in ranks if r is not None) / n, 4) if n else 0.0
    return figures


def smoke_run(
    *, version: KnowledgeVersion, queries: list[GoldenQuery], split: str | None = "test", golden: str = "",
    progress: Callable[[int], None] = lambda n: None,
) -> dict[str, Any]:
    """Search the version itself (not an alias) with every golden query of `split` (None: all). Each miss
    (not in the top 5) names its query's language and, in `missing`, the expected entry ids the version does
    not hold: a golden set naming an entry no source has fails the gate however good the retrieval is."""
    chosen = [q for q in queries if split is None or q.split == split]
    target = Target(version.domain, version.version, version.namespace)
    held = entries_held(tenant_id=version.tenant_id, namespaces=[version.namespace],
                        entry_ids={entry for q in chosen for entry in q.expected})
    ranks_by_language: dict[str, list[int | None]] = {}
    misses = []
    for query in chosen:
        # Without the LLM rerank, whatever the domain's setting: the gate measures the version's retrieval, the
        # same on every run, not a model's (and a golden set of a hundred queries is not a hundred calls).
        hits = knowledge_search(tenant_id=version.tenant_id, targets=[target], query=query.query, k=max(KS),
                                rerank=False).hits
        rank = next((i for i, hit in enumerate(hits, start=1) if hit.entry_id in query.expected), None)
        ranks_by_language.setdefault(query.language, []).append(rank)
        if rank is None or rank > 5:
            misses.append({"id": query.id, "language": query.language, "rank": rank,
                           "top": [h.entry_id for h in hits[:3]],
                           "missing": [entry for entry in query.expected if entry not in held]})
        progress(1)
    return {
        "golden": golden,
        "split": split or "all",
        "by_language": {lang: _figures(ranks) for lang, ranks in sorted(ranks_by_language.items())},
        "overall": _figures([r for ranks in ranks_by_language.values() for r in ranks]),
        "misses": misses,
        "ran_at": timezone.now().isoformat(),
    }


def version_smoke(*, version: KnowledgeVersion, split: str | None = "test", golden_file: Path | None = None,
                  progress: Callable[[int], None] = lambda n: None) -> dict[str, Any]:
    """Run the smoke queries against `version` and record the figures on it (the publish gate)."""
    from lore.services import version_pruned_error, version_smoke_save

    if version.status == KnowledgeVersion.Status.PRUNED:
        raise version_pruned_error(version)
    if golden_file is not None:
        queries, where = golden_load(golden_file), shown_path(golden_file)
    else:
        queries, where = golden_for(version)
    result = smoke_run(version=version, queries=queries, split=split, golden=where, progress=progress)
    version_smoke_save(version=version, smoke=result)
    return result
