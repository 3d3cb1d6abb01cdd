"""`GET /api/v1/review/{queue}?status=`: a status the queue's items never take is a 400 naming `status` and
listing that queue's statuses, for every queue served; the schema says so."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from memoryhub import registry
from memoryhub import services as kernel_services
from memoryhub.models import Tenant

pytestmark = pytest.mark.django_db


def served() -> dict[str, tuple[str, ...]]:
    return {name: queue.api.statuses for name, queue in registry.review_queues.items() if queue.api is not None}


@pytest.fixture
def client(db: None) -> APIClient:
    tenant = kernel_services.tenant_create(name="tenant-a")[0]
    _, raw = kernel_services.api_key_create(tenant=tenant, name="console", scopes=("memory", "editor"))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert Tenant.objects.count() == 1
    return api


def test_an_approved_fact_is_asked_for_as_active(client: APIClient) -> None:
    response = client.get("/api/v1/review/profiles", {"status": "approved"})
    assert response.status_code == 400
    error = response.json()["error"]
    assert list(error["fields"]) == ["status"]
    message = error["fields"]["status"][0]
    assert '"approved" is not a status of the profiles queue' in message
    for status in ("pending", "active", "rejected"):
        assert status in message


def test_every_queue_refuses_the_statuses_only_other_queues_take(client: APIClient) -> None:
    queues = served()
    assert {"profiles", "people", "memories"} <= set(queues)
    everywhere = {status for statuses in queues.values() for status in statuses}
    refused = 0
    for name, statuses in queues.items():
        for status in statuses:
            assert client.get(f"/api/v1/review/{name}", {"status": status}).status_code == 200, (name, status)
        for status in sorted(everywhere - set(statuses)):
            response = client.get(f"/api/v1/review/{name}", {"status": status})
            assert response.status_code == 400, (name, status)
            message = response.json()["error"]["fields"]["status"][0]
            assert f"allowed: {', '.join(statuses)}." in message, message
            refused += 1
    assert refused  # the queues do differ (facts: active; proposals: approved, undone, ...)


def test_an_unknown_status_lists_the_queues_own_statuses(client: APIClient) -> None:
    response = client.get("/api/v1/review/people", {"status": "maybe"})
    assert response.status_code == 400
    assert f"allowed: {', '.join(served()['people'])}." in response.json()["error"]["fields"]["status"][0]


def test_the_schema_lists_each_queues_statuses_and_the_400(schema: dict) -> None:
    operation = schema["paths"]["/api/v1/review/{queue}"]["get"]
    status = next(p for p in operation["parameters"] if p["name"] == "status")
    for name, statuses in served().items():
        assert f"`{name}`: {', '.join(statuses)}" in status["description"]
    assert "`status`" in operation["responses"]["400"]["description"]
