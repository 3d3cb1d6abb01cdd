"""The BM25 cache in process: bounded memory and one build per cold namespace."""

from __future__ import annotations

import gc
import threading
from datetime import UTC, datetime

import pytest
from django.db import connection

from memoryhub import events
from memoryhub.search.bm25 import SegmentedBM25Index
from rag import index as bm25_index
from rag.models import user_namespace
from tests.factories import append_messages

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


@pytest.fixture
def fresh_cache():
    """A cache created for the test and dropped after it, so its size limit leaves with it."""
    bm25_index.clear()
    yield
    bm25_index.clear()


@pytest.mark.django_db
def test_the_cache_limit_frees_evicted_indexes(tenant, settings, fresh_cache) -> None:
    settings.BM25_CACHE_MB = 0  # every new index evicts the one before
    for n in range(5):
        append_messages(tenant, f"u{n}", "s1", [f"Note number {n} about apples"], start=START)
        assert len(bm25_index.namespace_index(tenant.pk, user_namespace(f"u{n}"))) == 1
    gc.collect()
    assert bm25_index.cache().stats()["entries"] == 1
    # type(), not isinstance(): gc also lists dead weak proxies, which raise on isinstance.
    alive = [o for o in gc.get_objects() if type(o) is SegmentedBM25Index]
    assert len(alive) == 1 and len(bm25_index._states) == 1


@pytest.mark.django_db(transaction=True)
def test_concurrent_searches_of_a_cold_namespace_build_its_index_once(tenant, fresh_cache) -> None:
    append_messages(tenant, "u1", "s1", [f"Line {n} of the ship's log" for n in range(50)], start=START)
    bm25_index.clear()
    builds: list[dict] = []

    def count(sender, name, payload, **kw) -> None:
        if name == "RAG.IndexRebuilt":
            builds.append(payload)

    events.event_emitted.connect(count)
    barrier = threading.Barrier(6)
    got: list[int] = []
    errors: list[BaseException] = []

    def search() -> None:
        try:
            barrier.wait()
            got.append(id(bm25_index.namespace_index(tenant.pk, user_namespace("u1"))))
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=search) for _ in range(6)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    finally:
        events.event_emitted.disconnect(count)
    assert not errors and len(got) == 6
    assert len(builds) == 1 and builds[0]["count"] == 50
    assert len(set(got)) == 1
