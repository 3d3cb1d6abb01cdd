"""Vectors to PostgreSQL in pgvector's binary format, on the connection Django holds.

Django binds parameters on the client: a 384-dimension vector is spelled out as text, sent, and
parsed back by the server, which cost a stored batch of 20 dialog chunks a fifth of its time (and
each near-duplicate look-up of a consolidation a text vector of its own). The write and batch
paths use this module instead; plain ORM queries keep working as before.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import psycopg
from django.db import connection
from psycopg.adapt import Dumper
from psycopg.pq import Format

_oids: dict[str, int] = {}  # database name -> oid of pgvector's `vector` type (an extension type: no fixed oid)


class VectorBinaryDumper(Dumper):
    """dimensions (uint16), unused (uint16), then the values as big-endian float32."""

    format = Format.BINARY

    def dump(self, obj: np.ndarray) -> bytes:
        values = np.asarray(obj, dtype=">f4")
        return struct.pack(">HH", values.shape[0], 0) + values.tobytes()


def vector_oid(cursor: psycopg.Cursor[Any]) -> int:
    database = connection.settings_dict["NAME"]
    if database not in _oids:
        cursor.execute("SELECT 'vector'::regtype::oid")
        _oids[database] = cursor.fetchone()[0]
    return _oids[database]


def adapt_vectors(cursor: psycopg.Cursor[Any]) -> int:
    """Dump numpy arrays given to `cursor` as binary vectors; returns the type's oid (for COPY's
    `set_types`). Only this cursor changes: the connection's other cursors are left as they were."""
    oid = vector_oid(cursor)
    cursor.adapters.register_dumper(np.ndarray, type("NumpyVectorDumper", (VectorBinaryDumper,), {"oid": oid}))
    return oid


def server_cursor() -> psycopg.Cursor[Any]:
    """A cursor on Django's connection (its transaction) that binds parameters on the server, so a
    vector parameter travels in binary. Close it after use (a `with` block)."""
    connection.ensure_connection()
    cursor = psycopg.Cursor(connection.connection)
    adapt_vectors(cursor)
    return cursor
