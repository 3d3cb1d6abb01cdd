"""Fusion of ranked result lists (BM25, vector, ...) into one ranking, with explanations.

Pure functions over doc ids, no I/O. Every fused item carries its raw component scores and
1-based component ranks so the API can show why it was chosen. Ordering convention, shared
with ``bm25.SegmentedBM25Index``: higher score first, ties broken by higher (newer) doc id;
the returned dicts are in that order and ``ranked`` re-sorts any fused dict the same way.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

RRF_K = 60


@dataclass(slots=True)
class FusedScore:
    score: float
    components: dict[str, float] = field(default_factory=dict)  # raw scores, where known
    ranks: dict[str, int] = field(default_factory=dict)  # 1-based rank within each component


def _ordered(fused: dict[int, FusedScore]) -> dict[int, FusedScore]:
    return dict(sorted(fused.items(), key=lambda item: (-item[1].score, -item[0])))


def ranked(fused: Mapping[int, FusedScore]) -> list[tuple[int, FusedScore]]:
    """Items best first: higher score, then higher doc id."""
    return sorted(fused.items(), key=lambda item: (-item[1].score, -item[0]))


def rank_by_score(scores: Mapping[int, float]) -> list[int]:
    """Doc ids best first by raw score, ties to the higher doc id (as BM25 search returns them)."""
    return [doc for doc, _ in sorted(scores.items(), key=lambda item: (-item[1], -item[0]))]


def _check_weights(components: Sequence[str], weights: Mapping[str, float]) -> None:
    # A forgotten weight would silently drop or skew a component, so it is an error.
    missing = [c for c in components if c not in weights]
    if missing:
        raise ValueError(f"no weight for component(s): {', '.join(missing)}")


def rrf(
    rankings: Mapping[str, Sequence[int]],
    *,
    k: int = RRF_K,
    weights: Mapping[str, float] | None = None,
    scores: Mapping[str, Mapping[int, float]] | None = None,
) -> dict[int, FusedScore]:
    """Reciprocal rank fusion: ``score(d) = sum_c weight_c / (k + rank_c(d))``.

    ``rankings`` maps a component name to doc ids best first; ranks are list positions, so
    docs tied on a raw score still get distinct ranks (order them with ``rank_by_score``).
    A doc listed twice in one ranking keeps its best rank. ``weights`` default to 1.0 and, if
    given, must cover every component. ``scores`` optionally supplies raw component scores
    to report in ``FusedScore.components``.
    """
    if weights is not None:
        _check_weights(list(rankings), weights)
    fused: dict[int, FusedScore] = {}
    for name, docs in rankings.items():
        weight = 1.0 if weights is None else float(weights[name])
        raw = scores.get(name, {}) if scores is not None else {}
        for position, doc in enumerate(docs, start=1):
            item = fused.get(doc)
            if item is None:
                item = fused[doc] = FusedScore(0.0)
            elif name in item.ranks:
                continue
            item.ranks[name] = position
            item.score += weight / (k + position)
            if doc in raw:
                item.components[name] = float(raw[doc])
    return _ordered(fused)


def minmax(scores: Mapping[int, float], *, eps: float = 1e-9) -> dict[int, float]:
    """Per-batch min-max to [0, 1]; a batch whose spread is within ``eps`` maps to 1.0.

    All-equal scores mean every candidate is as good as the best one, and dividing by a
    near-zero spread would give NaN or amplify float noise.
    """
    if not scores:
        return {}
    low, high = min(scores.values()), max(scores.values())
    spread = high - low
    if spread <= eps:
        return dict.fromkeys(scores, 1.0)
    return {doc: (value - low) / spread for doc, value in scores.items()}


def weighted_minmax(
    scores: Mapping[str, Mapping[int, float]], *, weights: Mapping[str, float], eps: float = 1e-9
) -> dict[int, FusedScore]:
    """``final = sum_c weight_c * minmax_c(score)`` (e.g. w_sem * norm_sem + w_bm25 * norm_bm25).

    Each component is min-max normalised over its own batch; a doc missing from a component
    gets 0 for it. Ranks (1-based, by raw score, ties to the higher doc id) are filled too.
    """
    _check_weights(list(scores), weights)
    fused: dict[int, FusedScore] = {}
    for name, raw in scores.items():
        weight = float(weights[name])
        norm = minmax(raw, eps=eps)
        for position, doc in enumerate(rank_by_score(raw), start=1):
            item = fused.get(doc)
            if item is None:
                item = fused[doc] = FusedScore(0.0)
            item.score += weight * norm[doc]
            item.components[name] = float(raw[doc])
            item.ranks[name] = position
    return _ordered(fused)


def fuse(
    scores: Mapping[str, Mapping[int, float]],
    *,
    method: Literal["rrf", "weighted"] = "rrf",
    weights: Mapping[str, float] | None = None,
    rrf_k: int = RRF_K,
    eps: float = 1e-9,
) -> dict[int, FusedScore]:
    """Fuse raw per-component score maps with either method, components and ranks filled.

    For ``rrf`` the rankings are derived from the raw scores (``rank_by_score``); for
    ``weighted`` ``weights`` are required.
    """
    if method == "rrf":
        rankings = {name: rank_by_score(raw) for name, raw in scores.items()}
        return rrf(rankings, k=rrf_k, weights=weights, scores=scores)
    if method == "weighted":
        if weights is None:
            raise ValueError("weighted fusion needs weights")
        return weighted_minmax(scores, weights=weights, eps=eps)
    raise ValueError(f"unknown fusion method: {method!r}")
