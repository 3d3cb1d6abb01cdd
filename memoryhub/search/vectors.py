"""Nearest neighbours with pgvector (cosine), choosing exact or HNSW search per request.

pgvector's HNSW with a `WHERE` filter silently returns fewer rows than asked when the filter is
selective (the graph walk stops at `ef_search` candidates, most of them filtered out). So:
- a small namespace is scanned exactly: ordered by an expression no HNSW index serves, so the
  planner takes the btree on the namespace and sorts by distance (~3 ms for 1k rows, ~15 ms for
  5k, hence the low threshold), in one statement;
- a large namespace uses HNSW with `hnsw.iterative_scan = relaxed_order`, which keeps walking
  until enough rows pass the filter; if it still comes back short, the exact scan answers.
Either way, k rows come back when k rows match. An HNSW index may be partial (rag's covers
only the chunks of large namespaces); `hnsw_filter` is then its condition, added to the
approximate query so the planner can use it and dropped again for the exact fallback; an index
on `embedding::halfvec` is searched through that same expression (`hnsw_halfvec`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from django.db import connection, transaction
from django.db.models import ExpressionWrapper, FloatField, Q, QuerySet, Value
from django.db.models.functions import Cast
from pgvector import HalfVector
from pgvector.django import CosineDistance, HalfVectorField

# Namespaces up to this size are scanned exactly: exact is then both faster and complete.
EXACT_SCAN_MAX_ROWS = 2_000
# Candidate list of the graph walk: measured on 100k hashing vectors (bench/search_latency.py), recall@10
# against an exact scan is 0.85 at 100 and 0.94 at 200, for under a millisecond more.
HNSW_EF_SEARCH = 200


def nearest(
    queryset: QuerySet,
    query_vector: Sequence[float] | np.ndarray,
    k: int,
    *,
    namespace_size: int,
    field: str = "embedding",
    hnsw_filter: Q | None = None,
    hnsw_halfvec: bool = False,
) -> list[tuple[int, float]]:
    """Top-k `(id, cosine similarity)` of `queryset`, best first. `hnsw_halfvec`: the HNSW index
    is built on `field::halfvec(d)` (half the size, cheaper inserts), so the approximate query
    orders by that expression; exact scans keep full precision."""
    vector = np.asarray(query_vector, dtype=np.float32)
    # A text without features ("🙂", "...") embeds to the zero vector: it has no direction, and
    # pgvector's cosine distance to it is NaN, which would rank at random and cannot be rendered.
    if k <= 0 or not np.any(vector):
        return []
    exact = namespace_size <= EXACT_SCAN_MAX_ROWS
    if exact:
        return _query(queryset, cosine_distance(field, vector), k, exact=True)
    approximate = queryset if hnsw_filter is None else queryset.filter(hnsw_filter)
    rows = _query(approximate, cosine_distance(field, vector, halfvec=hnsw_halfvec), k, exact=False)
    if len(rows) < k:
        rows = _query(queryset, cosine_distance(field, vector), k, exact=True)
    return rows


def cosine_distance(field: str, vector: np.ndarray, *, halfvec: bool = False) -> CosineDistance:
    """`field <=> vector`, or the same over `field::halfvec(d)`, the expression of a half-precision index."""
    if halfvec:
        return CosineDistance(Cast(field, HalfVectorField(dimensions=vector.size)), HalfVector(vector))
    return CosineDistance(field, vector)


def _query(queryset: QuerySet, distance: CosineDistance, k: int, *, exact: bool) -> list[tuple[int, float]]:
    if exact:
        # `(embedding <=> q) + 0` is an order no HNSW index can serve, so the planner scans the
        # filtered rows and sorts them: exact, in one statement. (It was `SET LOCAL
        # enable_indexscan = off` in a transaction: four round trips for every search.)
        exact_distance = ExpressionWrapper(distance + Value(0.0), output_field=FloatField())
        rows = list(queryset.annotate(_distance=exact_distance).order_by("_distance")
                    .values_list("id", "_distance")[:k])
    else:
        ordered = queryset.annotate(_distance=distance).order_by("_distance")
        # SET LOCAL needs a transaction; inside an outer one this is a savepoint, which is cheap.
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
            cursor.execute(f"SET LOCAL hnsw.ef_search = {int(max(HNSW_EF_SEARCH, k))}")
            rows = list(ordered.values_list("id", "_distance")[:k])
    # relaxed_order may return neighbours slightly out of order.
    rows.sort(key=lambda r: (r[1], -r[0]))
    return [(int(pk), 1.0 - float(distance)) for pk, distance in rows]
