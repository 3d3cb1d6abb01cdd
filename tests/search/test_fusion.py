"""Fusion: RRF and weighted min-max values, ties, normalisation edge cases, explanations."""

from __future__ import annotations

import math

import pytest

from memoryhub.search.fusion import FusedScore, fuse, minmax, rank_by_score, ranked, rrf, weighted_minmax


def test_rrf_formula_and_order() -> None:
    fused = rrf({"bm25": [1, 2, 3], "vector": [3, 1, 4]})
    assert fused[1].score == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3].score == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2].score == pytest.approx(1 / 62)
    assert fused[4].score == pytest.approx(1 / 63)
    assert list(fused) == [1, 3, 2, 4]
    assert fused[3].ranks == {"bm25": 3, "vector": 1}
    assert fused[4].ranks == {"vector": 3} and fused[4].components == {}


def test_rrf_weights_k_and_raw_scores() -> None:
    fused = rrf(
        {"bm25": [5, 6], "vector": [6]},
        k=10,
        weights={"bm25": 2.0, "vector": 0.5},
        scores={"bm25": {5: 7.5, 6: 3.0}},
    )
    assert fused[5].score == pytest.approx(2 / 11)
    assert fused[6].score == pytest.approx(2 / 12 + 0.5 / 11)
    assert fused[5].components == {"bm25": 7.5}
    assert fused[6].components == {"bm25": 3.0}  # no raw vector score was given
    with pytest.raises(ValueError, match="vector"):
        rrf({"bm25": [1], "vector": [2]}, weights={"bm25": 1.0})


def test_rrf_ties_and_duplicates() -> None:
    fused = rrf({"bm25": [10], "vector": [20]})
    assert fused[10].score == fused[20].score
    assert list(fused) == [20, 10]  # equal fused score: higher (newer) doc id first
    items = {10: FusedScore(1.0), 20: FusedScore(1.0), 5: FusedScore(2.0)}
    assert [doc for doc, _ in ranked(items)] == [5, 20, 10]
    dup = rrf({"bm25": [7, 8, 7]})
    assert dup[7].ranks == {"bm25": 1} and dup[7].score == pytest.approx(1 / 61)
    assert rrf({}) == {} and rrf({"bm25": []}) == {}


def test_rank_by_score_breaks_ties_to_higher_id() -> None:
    assert rank_by_score({1: 0.5, 2: 0.9, 3: 0.5}) == [2, 3, 1]


def test_weighted_minmax_values_and_missing_docs() -> None:
    fused = weighted_minmax(
        {"sem": {1: 0.9, 2: 0.5, 3: 0.1}, "bm25": {2: 10.0, 4: 4.0}},
        weights={"sem": 0.7, "bm25": 0.3},
    )
    assert fused[1].score == pytest.approx(0.7)  # best semantic, absent from bm25: 0 there
    assert fused[2].score == pytest.approx(0.7 * 0.5 + 0.3 * 1.0)
    assert fused[3].score == 0.0 and fused[4].score == 0.0
    assert list(fused) == [1, 2, 4, 3]
    assert fused[2].components == {"sem": 0.5, "bm25": 10.0}
    assert fused[2].ranks == {"sem": 2, "bm25": 1}
    with pytest.raises(ValueError, match="bm25"):
        weighted_minmax({"bm25": {1: 1.0}}, weights={"sem": 1.0})


def test_minmax_all_equal_and_within_eps_give_one() -> None:
    assert minmax({1: 0.5, 2: 0.5}) == {1: 1.0, 2: 1.0}
    assert minmax({1: 3.0}) == {1: 1.0}
    assert minmax({1: 0.5, 2: 0.5 + 1e-12}) == {1: 1.0, 2: 1.0}
    assert minmax({}) == {}
    fused = weighted_minmax({"sem": {1: 0.3, 2: 0.3}, "bm25": {}}, weights={"sem": 0.6, "bm25": 0.4})
    assert all(not math.isnan(item.score) for item in fused.values())
    assert fused[1].score == pytest.approx(0.6) and fused[2].score == pytest.approx(0.6)
    assert list(fused) == [2, 1]


def test_fuse_fills_explanations_for_both_methods() -> None:
    scores = {"bm25": {1: 4.0, 2: 4.0, 3: 1.0}, "vector": {3: 0.9, 1: 0.2}}
    by_rrf = fuse(scores, method="rrf")
    assert by_rrf[2].ranks == {"bm25": 1}  # tie on raw bm25 score: higher id ranks first
    assert by_rrf[1].ranks == {"bm25": 2, "vector": 2}
    assert by_rrf[1].components == {"bm25": 4.0, "vector": 0.2}
    assert by_rrf[1].score == pytest.approx(1 / 62 + 1 / 62)
    by_weight = fuse(scores, method="weighted", weights={"bm25": 0.5, "vector": 0.5})
    assert by_weight[3].score == pytest.approx(0.5 * 0.0 + 0.5 * 1.0)
    assert by_weight[1].score == pytest.approx(0.5 * 1.0 + 0.5 * 0.0)
    assert by_weight[3].ranks == {"bm25": 3, "vector": 1}
    assert by_weight[3].components == {"bm25": 1.0, "vector": 0.9}
    with pytest.raises(ValueError):
        fuse(scores, method="weighted")
    with pytest.raises(ValueError):
        fuse(scores, method="nope")  # type: ignore[arg-type]
