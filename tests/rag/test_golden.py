"""Retrieval regression on the hand-written golden sets in English, Russian and Chinese.

Each `golden/<lang>.json` (format: shared/eval/FORMAT.md) holds two users' conversations and 41 queries
(single-hop, paraphrase, temporal, multi-hop) whose evidence is one or two turn ids. The evaluation goes
through the real services (ingest → chunks → BM25 + pgvector), so it commits: hence transaction=True.
Each language is evaluated once per module; `pytest -s` prints the figures.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest

from rag.evaluation import Report, evaluate

GOLDEN = Path(__file__).parent / "golden"
LANGUAGES = ("en", "ru", "zh")
MIN_HIT_AT_5 = 0.7
MAX_GAP_TO_ENGLISH = 0.1


class _NoProgress:
    """progress_factory(total, desc) → a context manager with `.update(n)` that shows nothing."""

    def __init__(self, total: int, desc: str) -> None:
        self.total, self.desc = total, desc

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        return None

    def update(self, n: int = 1) -> None:
        pass


def load(lang: str) -> dict[str, Any]:
    return json.loads((GOLDEN / f"{lang}.json").read_text(encoding="utf-8"))


@pytest.fixture(autouse=True, scope="module")
def _quiet_task_log() -> Iterator[None]:
    """One INFO line per archival task would bury the figures that `pytest -s` is meant to show."""
    logger = logging.getLogger("celery.app.trace")
    level = logger.level
    logger.setLevel(logging.WARNING)
    yield
    logger.setLevel(level)


@pytest.fixture(scope="module")
def reports() -> dict[str, Report]:
    """Module-wide cache: each language is ingested and searched once, whichever test asks first."""
    return {}


def report_for(lang: str, cache: dict[str, Report]) -> Report:
    if lang not in cache:
        report = evaluate(load(lang), ks=[1, 5, 10], mode="hybrid", progress_factory=_NoProgress)
        cache[lang] = report
        o = report.overall
        print(f"\n[golden {lang}] hybrid: recall@5={o['recall@5']:.3f} hit@5={o['hit@5']:.3f} "
              f"mrr={o['mrr']:.3f} (hit@1={o['hit@1']:.3f} hit@10={o['hit@10']:.3f}, n={report.counts['all']})")
        for category, m in report.per_category.items():
            print(f"[golden {lang}]   {category:<10} n={report.counts[category]:<2} recall@5={m['recall@5']:.3f} "
                  f"hit@5={m['hit@5']:.3f} mrr={m['mrr']:.3f}")
    return cache[lang]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_golden_sets_are_well_formed(lang: str) -> None:
    data = load(lang)
    turns = {t["id"]: c["user_id"] for c in data["conversations"] for s in c["sessions"] for t in s["turns"]}
    assert len(turns) == sum(len(s["turns"]) for c in data["conversations"] for s in c["sessions"])  # ids unique
    assert len(data["conversations"]) == 2
    for conversation in data["conversations"]:
        assert 3 <= len(conversation["sessions"]) <= 4
        assert all(12 <= len(s["turns"]) <= 20 for s in conversation["sessions"])
    assert len(data["queries"]) >= 30
    assert {q["category"] for q in data["queries"]} == {"single-hop", "paraphrase", "temporal", "multi-hop"}
    for q in data["queries"]:
        assert 1 <= len(q["evidence"]) <= 2, q
        assert all(turns.get(e) == q["user_id"] for e in q["evidence"]), q
        assert (len(q["evidence"]) == 2) == (q["category"] == "multi-hop"), q


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lang", LANGUAGES)
def test_golden_hit_at_5(lang: str, reports: dict[str, Report]) -> None:
    report = report_for(lang, reports)
    assert report.overall["hit@5"] >= MIN_HIT_AT_5, (lang, report.overall, report.per_category)


@pytest.mark.django_db(transaction=True)
def test_golden_languages_are_on_par_with_english(reports: dict[str, Report]) -> None:
    hit5 = {lang: report_for(lang, reports).overall["hit@5"] for lang in LANGUAGES}
    print(f"\n[golden] hit@5 by language: {hit5}")
    for lang in ("ru", "zh"):
        assert hit5[lang] >= hit5["en"] - MAX_GAP_TO_ENGLISH, hit5


# The semantic reranker (SEMANTIC_RERANK=e5, the default) on the Russian and Chinese questions, which were
# written before it and never used to choose its settings (those came from MADial's dialogues). Without it:
# recall@5 ru 0.817, zh 0.915; MRR 0.716, 0.747. With it: 0.915, 0.939; 0.747, 0.797. The bars sit between,
# so that this fails when the reranker stops helping (the module's figures above are the default's too).
SEMANTIC_RECALL_AT_5 = {"ru": 0.87, "zh": 0.93}


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_golden_questions_gain_from_the_semantic_reranker(lang: str, settings) -> None:  # type: ignore[no-untyped-def]
    settings.SEMANTIC_RERANK = "e5"  # whatever the environment running the suite says
    report = evaluate(load(lang), ks=[1, 5, 10], mode="hybrid", progress_factory=_NoProgress)
    print(f"\n[golden {lang}] hybrid + semantic reranker: recall@5={report.overall['recall@5']:.3f} "
          f"mrr={report.overall['mrr']:.3f}")
    assert report.overall["recall@5"] >= SEMANTIC_RECALL_AT_5[lang], report.overall


# The assistant's own turns × boosts.assistant (0.8 in the dialog domain): no golden question's evidence is
# an assistant's turn, and its short echoes of what the user said outranked them. Measured without it and
# with it (MRR): en 0.678 -> 0.684, ru 0.747 -> 0.766, zh 0.797 -> 0.814. Since the answer to a question is
# lifted by it (`replies` in config/knowledge.yaml: the user's answer to the assistant's question passes the
# question), the factor adds less: ru 0.757 -> 0.784, zh 0.838 -> 0.843 — still a gain, which is what fails here.
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("lang", ["ru", "zh"])
def test_golden_questions_gain_from_the_assistant_factor(lang: str, reports: dict[str, Report], monkeypatch,
                                                         settings) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from rag import selectors

    settings.SEMANTIC_RERANK = "e5"
    with_it = report_for(lang, reports).overall["mrr"]
    real = selectors.retrieval_config
    monkeypatch.setattr(selectors, "retrieval_config",
                        lambda domain="default": dataclasses.replace(real(domain), assistant_factor=1.0))
    without = evaluate(load(lang), ks=[1, 5, 10], mode="hybrid", progress_factory=_NoProgress).overall["mrr"]
    print(f"\n[golden {lang}] MRR without the assistant factor {without:.3f}, with it {with_it:.3f}")
    assert with_it > without, (without, with_it)
