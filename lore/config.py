"""The `knowledge:` section of config/knowledge.yaml (seed 003 §8.13.1), validated with JSON Schema.

Loaded once at start-up (LoreConfig.ready), so a bad file stops the process with the key at fault
named, rather than failing the first search.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

_RETRIEVAL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["mode", "k_vector"],
    "properties": {
        "mode": {"enum": ["hybrid", "vector", "bm25"]},
        "k_vector": {"type": "integer", "minimum": 1, "maximum": 1000},
        "k_keyword": {"type": "integer", "minimum": 1, "maximum": 1000},
        "fuse": {"enum": ["rrf"]},
        "rrf_k": {"type": "integer", "minimum": 1},
        "k": {"type": "integer", "minimum": 1, "maximum": 100},
        "weights": {
            "type": "object", "additionalProperties": False, "required": ["bm25", "vector"],
            "properties": {"bm25": {"type": "number", "minimum": 0}, "vector": {"type": "number", "minimum": 0},
                           # a third RRF list: the entries whose whole title the query says (0 or absent: off)
                           "title": {"type": "number", "minimum": 0},
                           # a fourth: of those, the ones whose title is most of what the query asks (needs title)
                           "name": {"type": "number", "minimum": 0}},
        },
        "filter": {"type": "object"},
    },
    # Hybrid and keyword modes need their keyword depth spelled out.
    "if": {"properties": {"mode": {"enum": ["hybrid", "bm25"]}}},
    "then": {"required": ["k_keyword"]},
}

_DOMAIN = {
    "type": "object",
    "additionalProperties": False,
    "required": ["store", "embedding", "dims", "retrieval"],
    "properties": {
        "store": {"enum": ["pgvector"]},
        # One embedder serves every domain (EMBEDDING_PROVIDER / EMBEDDING_MODEL; `dims` truncates its
        # vectors per domain): a model named here would be accepted and silently not used.
        "embedding": {"const": "default"},
        "dims": {"type": "integer", "minimum": 8},
        "retrieval": _RETRIEVAL,
        # The LLM rerank of the world search (lore.selectors.knowledge_search): the model re-orders the fused
        # top `candidates` (the seed's nano model over 12–20). A request's `rerank` overrides `enabled`; with
        # LLM_PROVIDER=off it never runs, whatever is set here.
        "rerank": {
            "type": "object",
            "additionalProperties": False,
            "required": ["enabled"],
            "properties": {
                "enabled": {"type": "boolean"},
                "candidates": {"type": "integer", "minimum": 12, "maximum": 20},
            },
        },
        "smoke": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "min_hit_at_5": {"type": "number", "minimum": 0, "maximum": 1},
                "min_mrr": {"type": "number", "minimum": 0, "maximum": 1},
            },
        },
    },
}

SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["srd", "lore", "episode", "artcards"],
    "properties": dict.fromkeys(("srd", "lore", "episode", "artcards"), _DOMAIN),
}


@dataclass(frozen=True)
class DomainConfig:
    name: str
    dims: int
    mode: str
    k_vector: int
    k_keyword: int
    rrf_k: int
    k: int
    min_hit_at_5: float
    min_mrr: float
    embedding: str
    weights: tuple[tuple[str, float], ...] = (("bm25", 1.0), ("vector", 1.0))
    rerank: bool = False  # the LLM rerank of the world search, unless a request says otherwise
    rerank_candidates: int = 20


def _path(error: jsonschema.ValidationError) -> str:
    return ".".join(["knowledge", *(str(p) for p in error.absolute_path)])


def validate(data: Any) -> dict[str, DomainConfig]:
    """The `knowledge:` mapping → per-domain settings; ImproperlyConfigured names the bad key."""
    if not isinstance(data, dict):
        raise ImproperlyConfigured("knowledge.yaml: a top-level `knowledge:` mapping is required")
    errors = sorted(jsonschema.Draft202012Validator(SCHEMA).iter_errors(data), key=lambda e: list(e.absolute_path))
    if errors:
        first = errors[0]
        raise ImproperlyConfigured(f"knowledge.yaml {_path(first)}: {first.message}")
    configs = {}
    for name, raw in data.items():
        if raw["dims"] > settings.EMBEDDING_DIMENSIONS:
            raise ImproperlyConfigured(
                f"knowledge.yaml knowledge.{name}.dims: {raw['dims']} exceeds EMBEDDING_DIMENSIONS "
                f"({settings.EMBEDDING_DIMENSIONS}); a vector can only be truncated")
        retrieval = raw["retrieval"]
        # The title and name lists match a knowledge entry's title; an art card (or an episode) has none, so
        # a weight for them there would be accepted and never used.
        extra = sorted(set(retrieval.get("weights") or {}) - {"bm25", "vector"})
        if name in ("artcards", "episode") and extra:
            raise ImproperlyConfigured(
                f"knowledge.yaml knowledge.{name}.retrieval.weights: {', '.join(extra)} apply to knowledge entries' "
                f"titles (srd, lore); {name} takes bm25 and vector only")
        if name in ("artcards", "episode") and "rerank" in raw:
            raise ImproperlyConfigured(
                f"knowledge.yaml knowledge.{name}.rerank: the LLM rerank is the world search's (srd, lore); "
                f"{name} is not searched by it")
        smoke = raw.get("smoke", {})
        rerank = raw.get("rerank", {})
        configs[name] = DomainConfig(
            name=name, dims=raw["dims"], mode=retrieval["mode"], k_vector=retrieval["k_vector"],
            k_keyword=retrieval.get("k_keyword", 0), rrf_k=retrieval.get("rrf_k", 60), k=retrieval.get("k", 10),
            min_hit_at_5=float(smoke.get("min_hit_at_5", 0.0)), min_mrr=float(smoke.get("min_mrr", 0.0)),
            embedding=raw["embedding"],
            weights=tuple(sorted((retrieval.get("weights") or {"bm25": 1.0, "vector": 1.0}).items())),
            rerank=bool(rerank.get("enabled", False)), rerank_candidates=rerank.get("candidates", 20),
        )
    return configs


def config_path() -> Path:
    return Path(getattr(settings, "KNOWLEDGE_CONFIG", settings.BASE_DIR / "config" / "knowledge.yaml"))


@cache
def _load() -> dict[str, DomainConfig]:
    path = config_path()
    try:
        data = yaml.safe_load(path.read_text()) or {}
    except yaml.YAMLError as exc:
        raise ImproperlyConfigured(f"{path}: not valid YAML: {exc}") from exc
    return validate(data.get("knowledge"))


def domain_config(domain: str) -> DomainConfig:
    return _load()[domain]


def reload() -> None:
    _load.cache_clear()
