"""Vectors to PostgreSQL in pgvector's binary format, on the connection Django holds.

Django binds parameters on the client: a 384-dimension vector is spelled out as text, sent, and
parsed back by the server, which cost a stored batch of 20 dialog chunks a fifth of its time (and
each near-duplicate look-up of a consolidation a text vector of its own). The write and batch
paths use this module instead; plain ORM queries keep working as before.

`vector` is an extension type with no fixed oid, and a restore (`pg_restore --clean`) or a
re-created extension gives it a new one, so none is remembered: a parameter is sent with the
"unknown" type (0), which the server infers from the statement's `::vector` cast and then reads in
binary; a COPY, which needs the oid to pick the dumper, reads it in a statement it makes anyway.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import psycopg
from django.db import connection
from pgvector.django import VectorField
from psycopg.adapt import Dumper
from psycopg.pq import Format

VECTOR_OID_SQL = "'vector'::regtype::oid"


class VectorBinaryDumper(Dumper):
    """dimensions (uint16), unused (uint16), then the values as big-endian float32."""

    format = Format.BINARY

    def dump(self, obj: np.ndarray) -> bytes:
        values = np.asarray(obj, dtype=">f4")
        return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


def adapt_vectors(cursor: psycopg.Cursor[Any], oid: int = 0) -> None:
    """Dump numpy arrays given to `cursor` as binary vectors, typed `oid` (0: let the server infer
    the type from a `::vector` cast). Only this cursor changes: the connection's others do not."""
    cursor.adapters.register_dumper(np.ndarray, type("NumpyVectorDumper", (VectorBinaryDumper,), {"oid": oid}))


def server_cursor() -> psycopg.Cursor[Any]:
    """A cursor on Django's connection (its transaction) that binds parameters on the server, so a
    vector parameter (written `%s::vector`) travels in binary. Close it after use (a `with` block)."""
    connection.ensure_connection()
    cursor = psycopg.Cursor(connection.connection)
    adapt_vectors(cursor)
    return cursor


def read_vectors(sql: str, params: list[Any]) -> list[tuple[int, np.ndarray | None]]:
    """(id, vector) rows of `sql` (selecting an id and a vector), the vectors read in pgvector's
    binary format: parsing 1,000 vectors of 384 dimensions from their text form took ~0.2 s of
    Python, this a few milliseconds."""
    with server_cursor() as cursor:
        cursor.execute(sql, params, binary=True)
        rows = cursor.fetchall()
    return [(int(pk), None if raw is None else _vector(raw)) for pk, raw in rows]


def _vector(raw: Any) -> np.ndarray:
    if isinstance(raw, bytes | bytearray | memoryview):
        dims = struct.unpack_from(">H", raw)[0]
        return np.frombuffer(raw, dtype=">f4", count=dims, offset=4).astype(np.float32)
    # pgvector's loader, when registered on the connection (bench/search_latency.py does), made it a Vector.
    to_numpy = getattr(raw, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy is not None else raw, dtype=np.float32)


class VectorColumnField(VectorField):
    """pgvector's field, cast without a width in SQL Django writes (`bulk_update` casts every value to the
    field's type): the column is EMBEDDING_DIMENSIONS wide (rag/vector_width.py), while the field keeps the
    migrations' width, which only creating the column uses. `::vector(384)` refused 256-wide vectors headed
    for a 256-wide column; `::vector` leaves the check to the column."""

    def cast_db_type(self, connection: Any) -> str:
        return "vector"
