"""Per-domain retrieval settings from `config/knowledge.yaml`, validated once and cached."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import yaml
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

Fusion = Literal["rrf", "weighted"]


@dataclass(frozen=True)
class RetrievalConfig:
    fusion: Fusion
    rrf_k: int
    weights: dict[str, float]
    candidates: int
    importance_boost: float
    recency_boost: float
    half_life_days: float
    speaker_boost: float  # 0: off
    assistant_factor: float  # an assistant's turn: fused score × this (1: off)
    dedupe_similarity: float
    feedback_docs: int
    feedback_weight: float
    feedback_min_share: float  # a question's top BM25 hit must answer this share of it to be fed back
    expand: bool
    rerank: bool
    soft_candidates: int  # 0: off
    soft_weight: float
    # The semantic reranker's re-scoring of the fused top (SEMANTIC_RERANK; rag.selectors._semantic_rerank).
    semantic_candidates: int = 0  # 0: off
    semantic_weight: float = 0.0
    # A question among the fused top `reply_candidates` lifts the turn that answers it by `reply_share` × its
    # score (rag.selectors._replies_lifted).
    reply_candidates: int = 0  # 0: off
    reply_share: float = 0.0
    # A "when" question: a turn among the fused top `dated_candidates` that names no time lifts the turn before
    # it by the same speaker that does, by `dated_share` × its score (rag.selectors._dated_turns_lifted).
    dated_candidates: int = 0  # 0: off
    dated_share: float = 0.0
    # A turn of greetings and thanks only ("Thanks!", "谢谢！"; rag.filler): fused score × this (1: off). It
    # carries the turns before it as search text, so it matched their words with nothing of its own to say.
    filler_factor: float = 1.0


_KEYS = {"fusion", "rrf_k", "weights", "candidates", "boosts", "dedupe_similarity", "feedback", "llm", "soft_match",
         "semantic_rerank", "replies", "dated"}


def _merge(base: dict[str, Any], override: dict[str, Any], where: str) -> dict[str, Any]:
    unknown = set(override) - _KEYS
    if unknown:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: unknown keys {sorted(unknown)}")
    merged = dict(base)
    for key, value in override.items():
        merged[key] = {**base.get(key, {}), **value} if isinstance(value, dict) else value
    return merged


def _build(raw: dict[str, Any], where: str) -> RetrievalConfig:
    try:
        boosts = raw["boosts"]
        config = RetrievalConfig(
            fusion=raw["fusion"],
            rrf_k=int(raw["rrf_k"]),
            weights={str(k): float(v) for k, v in raw["weights"].items()},
            candidates=int(raw["candidates"]),
            importance_boost=float(boosts["importance"]),
            recency_boost=float(boosts["recency"]),
            half_life_days=float(boosts["half_life_days"]),
            speaker_boost=float(boosts.get("speaker", 0.0)),
            assistant_factor=float(boosts.get("assistant", 1.0)),
            dedupe_similarity=float(raw["dedupe_similarity"]),
            feedback_docs=int(raw["feedback"]["docs"]),
            feedback_weight=float(raw["feedback"]["weight"]),
            feedback_min_share=float(raw["feedback"].get("min_share", 0.0)),
            expand=bool(raw["llm"]["expand"]),
            rerank=bool(raw["llm"]["rerank"]),
            soft_candidates=int(raw["soft_match"]["candidates"]),
            soft_weight=float(raw["soft_match"]["weight"]),
            semantic_candidates=int(raw.get("semantic_rerank", {}).get("candidates", 0)),
            semantic_weight=float(raw.get("semantic_rerank", {}).get("weight", 0.0)),
            reply_candidates=int(raw.get("replies", {}).get("candidates", 0)),
            reply_share=float(raw.get("replies", {}).get("share", 0.0)),
            dated_candidates=int(raw.get("dated", {}).get("candidates", 0)),
            dated_share=float(raw.get("dated", {}).get("share", 0.0)),
            filler_factor=float(boosts.get("filler", 1.0)),
        )
    except (KeyError, TypeError, ValueError) as exc:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: {exc!r}") from exc
    if config.fusion not in ("rrf", "weighted"):
        raise ImproperlyConfigured(f"knowledge.yaml {where}: fusion must be rrf or weighted")
    if config.half_life_days <= 0 or config.candidates < 1 or config.rrf_k < 1:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: half_life_days, candidates, rrf_k must be positive")
    if config.speaker_boost < 0:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: boosts.speaker must not be negative")
    if not 0 < config.assistant_factor <= 1:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: boosts.assistant must be above 0 and at most 1")
    if not 0 < config.filler_factor <= 1:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: boosts.filler must be above 0 and at most 1")
    if config.soft_candidates < 0 or config.soft_weight < 0:
        raise ImproperlyConfigured(f"knowledge.yaml {where}: soft_match candidates and weight must not be negative")
    if config.semantic_candidates < 0 or config.semantic_weight < 0:
        raise ImproperlyConfigured(
            f"knowledge.yaml {where}: semantic_rerank candidates and weight must not be negative")
    if config.reply_candidates < 0 or not 0 <= config.reply_share <= 1:
        raise ImproperlyConfigured(
            f"knowledge.yaml {where}: replies candidates must not be negative and share must be within 0-1")
    if config.dated_candidates < 0 or not 0 <= config.dated_share <= 1:
        raise ImproperlyConfigured(
            f"knowledge.yaml {where}: dated candidates must not be negative and share must be within 0-1")
    return config


@cache
def _load() -> dict[str, RetrievalConfig]:
    path = Path(getattr(settings, "KNOWLEDGE_CONFIG", settings.BASE_DIR / "config" / "knowledge.yaml"))
    data = yaml.safe_load(path.read_text()) or {}
    defaults = data.get("defaults") or {}
    configs = {"default": _build(defaults, "defaults")}
    for name, override in (data.get("domains") or {}).items():
        configs[name] = _build(_merge(defaults, override or {}, f"domains.{name}"), f"domains.{name}")
    return configs


def retrieval_config(domain: str = "default") -> RetrievalConfig:
    configs = _load()
    return configs.get(domain, configs["default"])
