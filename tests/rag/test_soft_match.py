"""English word vectors reorder the fused top candidates by meaning (memoryhub.wordvectors, the
dialog domain's `soft_match` in config/knowledge.yaml)."""

from __future__ import annotations

import io
import json
from dataclasses import replace
from datetime import UTC, datetime

import numpy as np
import pytest
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.utils import timezone

from memoryhub import wordvectors
from memoryhub.search import config as search_config
from memoryhub.search.config import retrieval_config
from memoryhub.search.fusion import FusedScore
from rag import index as bm25_index
from rag import query as query_terms
from rag import selectors
from rag.models import Chunk, user_namespace
from tests.factories import append_messages

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def test_a_text_that_says_the_same_in_other_words_scores_above_one_that_does_not() -> None:
    query = [("relax", 1.0), ("hobby", 1.0)]
    texts = ["Painting calms me down, it is my favourite pastime.", "The quarterly budget report is due.",
             "I relax by painting."]
    soft = wordvectors.soft_scores(query, texts)
    assert soft[0] > soft[1] + 0.2
    # The query word's own term in the text counts as a full match ("relax"), the rest by cosine.
    assert soft[2] > soft[0]
    assert soft.min() >= 0.0 and soft.max() <= 1.0


def test_words_without_vectors_change_nothing() -> None:
    # Russian and Chinese words have no vectors here: every text scores the same (0), so no order moves.
    texts = ["Я люблю рисовать.", "我喜欢画画。", "Painting calms me down."]
    assert wordvectors.soft_scores([("рисовать", 1.0), ("画画", 1.0)], texts).tolist() == [0.0, 0.0, 0.0]
    assert wordvectors.soft_scores([], texts).tolist() == [0.0, 0.0, 0.0]


def test_a_query_word_weighs_what_the_caller_says() -> None:
    texts = ["We adopted a puppy.", "The invoice is late."]
    heavy_dog = wordvectors.soft_scores([("dog", 5.0), ("invoice", 1.0)], texts)
    heavy_invoice = wordvectors.soft_scores([("dog", 1.0), ("invoice", 5.0)], texts)
    assert heavy_dog[0] > heavy_dog[1] and heavy_invoice[1] > heavy_invoice[0]


TURNS = ["Melanie went to the store with Caroline yesterday.",
         "Melanie finally bought a guitar and a violin.",
         "Melanie and Caroline met at the store again."]
QUERY = "What instruments does Melanie play?"


def _fused_in_turn_order(tenant, scores: list[float]) -> dict[int, FusedScore]:
    ids = list(Chunk.objects.filter(tenant=tenant).order_by("id").values_list("id", flat=True))
    return {pk: FusedScore(score, {"bm25": score}, {"bm25": rank})
            for rank, (pk, score) in enumerate(zip(ids, scores, strict=True), start=1)}


def test_the_fused_top_is_reordered_by_meaning_and_the_rest_keeps_its_order(tenant) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=START)
    # The lexical side sees only "Melanie": three near-equal fused scores, the answer last.
    fused = _fused_in_turn_order(tenant, [1.0, 0.95, 0.97])
    indexes, _, _ = bm25_index.namespace_indexes_and_watermarks(tenant.pk, [user_namespace("u1")])
    weights = query_terms.weighted_terms(QUERY, timezone.now())
    config = retrieval_config("dialog")
    reordered, rows = selectors._soft_rerank(fused, QUERY, weights, indexes, config, tenant.pk, {})
    texts = [rows[pk]["text"] for pk in reordered]
    assert texts[0] == TURNS[1] and reordered[next(iter(reordered))].components["soft"] == 1.0
    # Only the top `candidates` move: with two, the third keeps its place below them.
    narrow, _ = selectors._soft_rerank(fused, QUERY, weights, indexes, replace(config, soft_candidates=2),
                                       tenant.pk, {})
    assert list(narrow)[2] == list(fused)[2] and rows[list(narrow)[2]]["text"] == TURNS[2]


def test_a_search_reports_the_soft_match_stage_and_score(tenant) -> None:
    append_messages(tenant, "u1", "s1", TURNS, start=START)
    result = selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=QUERY, k=10)
    assert "soft" in result.timings_ms
    assert {item.chunk["text"]: item.components.get("soft") for item in result.items}[TURNS[1]] == 1.0
    # Not in bm25 or vector mode, and not in a domain that leaves it off.
    assert "soft" not in selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=QUERY, mode="bm25").timings_ms
    assert "soft" not in selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=QUERY,
                                                 domain="document").timings_ms


def test_a_negative_soft_match_setting_stops_start_up(settings, tmp_path) -> None:
    bad = tmp_path / "knowledge.yaml"
    bad.write_text("defaults:\n  fusion: rrf\n  rrf_k: 60\n  weights: {bm25: 1, vector: 1}\n  candidates: 100\n"
                   "  boosts: {importance: 0, recency: 0, half_life_days: 30}\n  dedupe_similarity: 0.9\n"
                   "  feedback: {docs: 0, weight: 0}\n  llm: {expand: false, rerank: false}\n"
                   "  soft_match: {candidates: -1, weight: 0.2}\n")
    settings.KNOWLEDGE_CONFIG = bad
    search_config._load.cache_clear()
    try:
        with pytest.raises(ImproperlyConfigured, match="soft_match"):
            search_config.retrieval_config("dialog")
    finally:
        search_config._load.cache_clear()


# GloVe's text format and the wink JSON: what `manage.py wordvectors_build` reads.
_VECTORS = {"the": [0.1, 0.2, 0.3], "Paris": [1.0, 0.0, 0.0], "dog": [0.9, 0.1, 0.0], "puppy": [0.8, 0.3, 0.1],
            "cat": [0.5, 0.5, 0.2]}


@pytest.mark.parametrize("form", ["glove", "wink"])
def test_wordvectors_build_writes_the_table_the_module_reads(tmp_path, form: str) -> None:
    source = tmp_path / f"source.{form}"
    if form == "glove":
        source.write_text("".join(f"{w} {' '.join(map(str, v))}\n" for w, v in _VECTORS.items()))
    else:
        source.write_text(json.dumps({"dimensions": 3, "words": list(_VECTORS),
                                      "vectors": {w: [*v, 1.0, i] for i, (w, v) in enumerate(_VECTORS.items())}}))
    out = tmp_path / "table.gz"
    call_command("wordvectors_build", str(source), "--words", "3", "--out", str(out), stdout=io.StringIO())
    first = out.read_bytes()
    call_command("wordvectors_build", str(source), "--words", "3", "--out", str(out), stdout=io.StringIO())
    assert out.read_bytes() == first  # the same data gives the same bytes
    table = wordvectors._load(out)
    # Capitalised words are left out; the first three lower-case words in the source's order are kept.
    assert list(table.index) == ["the", "dog", "puppy"]
    dog, puppy = table.matrix[1].astype(float), table.matrix[2].astype(float)
    expected = np.dot(_VECTORS["dog"], _VECTORS["puppy"]) / (np.linalg.norm(_VECTORS["dog"]) *
                                                             np.linalg.norm(_VECTORS["puppy"]))
    assert abs(dog @ puppy / (np.linalg.norm(dog) * np.linalg.norm(puppy)) - expected) < 0.01


def test_the_shipped_table_loads_fast_and_small() -> None:
    stats = wordvectors.stats()
    assert stats["words"] == wordvectors.WORDS and stats["dimensions"] == 100
    assert stats["bytes"] <= 6_000_000
