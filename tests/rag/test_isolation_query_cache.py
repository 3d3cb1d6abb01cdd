"""The query vector cache is per tenant: a query another tenant asked must not come back faster.

Every search answers its own `timings_ms.embed`; with a remote embedder a cached query costs ~0 ms and
a fresh one a round trip, so a cache shared by all tenants told tenant B which exact questions tenant A
had just asked ("is alice pregnant?")."""

from __future__ import annotations

import pytest

from tests.llm_server import OpenAICompatServer

pytestmark = pytest.mark.django_db

QUERY = "is alice pregnant?"


def _embedded(server: OpenAICompatServer) -> int:
    return sum(QUERY in (body["input"] if isinstance(body["input"], list) else [body["input"]])
               for body in server.embedding_requests)


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/search", {"query": QUERY, "user_id": "u1", "mode": "vector"}),
    ("/api/v1/users/u1/people/search", {"query": QUERY, "mode": "vector"}),
])
def test_a_query_another_tenant_asked_is_embedded_again(remote_embedder, client_a, client_b, path, body) -> None:
    a, _ = client_a
    b, _ = client_b
    assert a.post(path, body, format="json").status_code == 200
    assert a.post(path, body, format="json").status_code == 200
    assert _embedded(remote_embedder) == 1  # the tenant's own repeat is cached
    assert b.post(path, body, format="json").status_code == 200
    assert _embedded(remote_embedder) == 2
