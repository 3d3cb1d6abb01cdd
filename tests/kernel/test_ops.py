"""Operator-facing endpoints and commands."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from memoryhub.models import ApiKey, Tenant


@pytest.mark.django_db
def test_healthz_reports_database_with_pgvector() -> None:
    response = Client().get("/healthz")
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] and body["checks"]["database"]["pgvector"].startswith("0.")


@pytest.mark.django_db
def test_metrics_exposes_prometheus_text() -> None:
    Client().get("/healthz")  # one request, so the HTTP series exist
    response = Client().get("/metrics")
    assert response.status_code == 200
    text = response.content.decode()
    assert "memoryhub_archival_queue_depth" in text and "memoryhub_http_requests_total" in text


@pytest.mark.django_db
def test_openapi_schema_and_docs_are_served() -> None:
    client = Client()
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/json")
    assert schema.status_code == 200
    assert "/api/v1/users/{user_id}/sessions/{session_id}/messages" in schema.json()["paths"]
    docs = client.get("/api/docs/")
    assert docs.status_code == 200 and b"swagger" in docs.content.lower()


@pytest.mark.django_db
def test_openapi_schema_generates_without_warnings(tmp_path) -> None:
    # Two role enums collided: one came out as "Role896Enum", a name that moves with its choices and
    # lands in every generated client.
    call_command("spectacular", "--validate", "--fail-on-warn", "--file", str(tmp_path / "schema.yaml"),
                 stderr=StringIO())
    schemas = (tmp_path / "schema.yaml").read_text()
    assert "    MessageRoleEnum:" in schemas and "Role896Enum" not in schemas


@pytest.mark.django_db
def test_unknown_api_route_is_json_404() -> None:
    response = Client().get("/api/v1/nope")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "not_found"


@pytest.mark.django_db
def test_tenant_create_prints_a_working_key_once() -> None:
    out = StringIO()
    call_command("tenant_create", "acme", stdout=out)
    raw = out.getvalue().split("API key (shown once): ")[1].strip()
    tenant = Tenant.objects.get(name="acme")
    key = ApiKey.objects.get(tenant=tenant)
    assert raw.startswith(key.prefix) and raw not in key.key_hash
    from rest_framework.test import APIClient

    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert client.get("/api/v1/users/u/sessions/s/messages").status_code == 404  # authenticated, no session


@pytest.mark.django_db
def test_admin_requires_staff_login() -> None:
    response = Client().get("/admin/")
    assert response.status_code == 302 and "/admin/login/" in response["Location"]
