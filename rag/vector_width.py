"""The vector columns' width follows EMBEDDING_DIMENSIONS (`manage.py embedding_resize`).

The migrations create `rag_chunk.embedding` and `people_person.embedding` as vector(384)
(`settings.MIGRATED_EMBEDDING_DIMENSIONS`) and the HNSW index as halfvec(384). A model of another width (a 1024-wide
multilingual one, OpenAI's 1536) was either cut to 384 (Matryoshka truncation, which only models
trained for it survive) or, with EMBEDDING_DIMENSIONS set to its width, failed every write of a vector
until an operator altered the columns by hand.

`vectors_resize` alters them in one transaction: the chunks' vectors are cut or zero-padded to the new
width (the column is NOT NULL; they are in another embedder's space from then on and never compared with
a query, see below), people's set to NULL (re-embedded by `reindex`), and the HNSW index dropped;
`hnsw_index_create` builds it again at the new width, once the chunks hold their new vectors
(`embedding_resize` runs `reindex` in between, so the index is built once, over the right vectors).

Which vectors compare: the configured embedder's name carries the width when it is not
the migrations' (`memoryhub.embeddings`, "hashing-v1/1024d"), so every namespace written at the old
width is another embedder's (`Namespace.vector_space`): searched by its words alone, with `skipped_steps`
saying `reindex_needed`, until `reindex` (or `lore_reindex` for a knowledge version) rebuilds it. A
namespace that never recorded its embedder is marked here, for the same reason.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field

from django.conf import settings
from django.db import connection, transaction

from rag.models import Namespace

CHUNKS, PEOPLE = "rag_chunk", "people_person"
HNSW_INDEX = "chunk_embedding_hnsw"
# What migration rag 0003 creates, but for the width (pgvector's HNSW takes halfvec up to 4,000 dimensions).
HNSW_DDL = (f"CREATE INDEX {HNSW_INDEX} ON {CHUNKS} USING hnsw ((embedding::halfvec({{width}})) halfvec_cosine_ops) "
            "WITH (m = 16, ef_construction = 64) WHERE in_hnsw")
HNSW_MAX_DIMENSIONS = 4000


@dataclass
class ResizeReport:
    before: dict[str, int]
    width: int
    chunks: int = 0
    people: int = 0
    namespaces_marked: int = 0
    seconds: float = 0.0
    altered: list[str] = field(default_factory=list)


def column_widths() -> dict[str, int]:
    """The width of each vector column as the database has it ({"rag_chunk": 384, ...})."""
    with connection.cursor() as cursor:
        # A vector column's type modifier is its dimension count.
        cursor.execute("SELECT c.relname, a.atttypmod FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
                       "WHERE a.attrelid IN (to_regclass(%s), to_regclass(%s)) AND a.attname = 'embedding' "
                       "AND NOT a.attisdropped", [CHUNKS, PEOPLE])
        return dict(cursor.fetchall())


def mismatched(width: int | None = None) -> dict[str, int]:
    """The columns whose width is not `width` (default EMBEDDING_DIMENSIONS), with their width."""
    width = width or settings.EMBEDDING_DIMENSIONS
    return {table: have for table, have in column_widths().items() if have != width}


def problem() -> str | None:
    """What is wrong, in words for an operator, when a column is not EMBEDDING_DIMENSIONS wide."""
    wrong = mismatched()
    if not wrong:
        return None
    columns = ", ".join(f"{table} {have}" for table, have in wrong.items())
    return (f"The vector columns ({columns}) are not EMBEDDING_DIMENSIONS ({settings.EMBEDDING_DIMENSIONS}) wide: "
            "stop the service and run `manage.py embedding_resize`, or set EMBEDDING_DIMENSIONS back.")


def hnsw_index_width() -> int | None:
    """The width the HNSW index casts to; None when the index is missing."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_get_indexdef(to_regclass(%s))", [HNSW_INDEX])
        row = cursor.fetchone()
    found = re.search(r"halfvec\((\d+)\)", row[0] or "") if row else None
    return int(found.group(1)) if found else None


def check_width(width: int) -> None:
    if not 1 <= width <= HNSW_MAX_DIMENSIONS:
        raise ValueError(f"EMBEDDING_DIMENSIONS must be 1 to {HNSW_MAX_DIMENSIONS} (pgvector's HNSW index of "
                         f"half-precision vectors), not {width}")


def vectors_resize(width: int | None = None) -> ResizeReport:
    """Alter the vector columns to `width` (default EMBEDDING_DIMENSIONS) and drop the HNSW index;
    a no-op when they already have it. Takes the tables' exclusive locks for the transaction: run it with
    the service stopped (a running process would keep writing vectors of the old width)."""
    width = width or settings.EMBEDDING_DIMENSIONS
    check_width(width)
    started = time.perf_counter()
    with transaction.atomic(), connection.cursor() as cursor:
        # Deferred foreign-key checks of rows written earlier in an enclosing transaction would make PostgreSQL
        # refuse the ALTER ("pending trigger events"): run them now.
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"LOCK TABLE {CHUNKS}, {PEOPLE} IN ACCESS EXCLUSIVE MODE")
        before = column_widths()
        report = ResizeReport(before=before, width=width)
        if all(have == width for have in before.values()):
            return report
        cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        old = before[CHUNKS]
        if old != width:
            # Cut, or padded with zeros: a vector of the right width, in the old embedder's space (no query
            # compares with it, see the module's docstring) until reindex writes the new one.
            using = (f"subvector(embedding, 1, {width})" if width < old else
                     f"(embedding::real[] || array_fill(0::real, ARRAY[{width - old}]))::vector({width})")
            cursor.execute(f"SELECT count(*) FROM {CHUNKS}")
            report.chunks = cursor.fetchone()[0]
            cursor.execute(f"ALTER TABLE {CHUNKS} ALTER COLUMN embedding TYPE vector({width}) USING {using}")
            report.altered.append(CHUNKS)
            # The namespaces that never recorded their embedder would otherwise count as the new one's.
            report.namespaces_marked = Namespace.objects.filter(vector_space="").update(
                vector_space=f"unknown/{old}d")
        if before[PEOPLE] != width:
            cursor.execute(f"SELECT count(*) FROM {PEOPLE} WHERE embedding IS NOT NULL")
            report.people = cursor.fetchone()[0]
            cursor.execute(f"ALTER TABLE {PEOPLE} ALTER COLUMN embedding TYPE vector({width}) USING NULL")
            report.altered.append(PEOPLE)
    report.seconds = time.perf_counter() - started
    return report


def hnsw_index_create(width: int | None = None) -> bool:
    """Build the HNSW index at `width` unless it is there at that width; True when it was built."""
    width = width or settings.EMBEDDING_DIMENSIONS
    check_width(width)
    if hnsw_index_width() == width:
        return False
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET CONSTRAINTS ALL IMMEDIATE")
        cursor.execute(f"DROP INDEX IF EXISTS {HNSW_INDEX}")
        cursor.execute(HNSW_DDL.format(width=width))
    return True


def resize_if_empty(width: int | None = None) -> bool:
    """After `migrate`: a new database for a model of another width gets its columns at once (nothing
    stored to re-embed). True when it altered them."""
    width = width or settings.EMBEDDING_DIMENSIONS
    if not mismatched(width):
        return False
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT EXISTS (SELECT 1 FROM {CHUNKS}) OR EXISTS (SELECT 1 FROM {PEOPLE})")
        if cursor.fetchone()[0]:
            return False
    vectors_resize(width)
    hnsw_index_create(width)
    return True
