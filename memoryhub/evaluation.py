"""Shared arithmetic of the evaluation commands (rule extractors, archivist)."""

from __future__ import annotations


class PrecisionRecall:
    """Mixin for a dataclass counting true/false positives and false negatives.

    Empty denominators count as perfect: a table with no expected items cannot be missed."""

    tp: int
    fp: int
    fn: int

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0
