"""The kernel's admin pages: service-written records are read-only, re-running a job is audited."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.admin.models import LogEntry

from memoryhub import auth
from memoryhub.models import ApiKey, ArchivalJob, Conversation, Message, Tenant
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def test_jobs_messages_and_sessions_cannot_be_added_edited_or_deleted(admin_client, tenant) -> None:
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso."], start=START)
    job = ArchivalJob.objects.filter(tenant=tenant).first()
    message = Message.objects.get(tenant=tenant)
    conversation = Conversation.objects.get(tenant=tenant)
    for model, obj in (("archivaljob", job), ("message", message), ("conversation", conversation)):
        assert admin_client.get(f"/admin/memoryhub/{model}/add/").status_code == 403
        page = admin_client.get(f"/admin/memoryhub/{model}/{obj.pk}/change/")
        assert page.status_code == 200 and b'name="_save"' not in page.content  # view only
        assert admin_client.post(f"/admin/memoryhub/{model}/{obj.pk}/change/", {"status": "done"}).status_code == 403
        assert admin_client.post(f"/admin/memoryhub/{model}/{obj.pk}/delete/", {"post": "yes"}).status_code == 403
        listing = admin_client.get(f"/admin/memoryhub/{model}/")
        assert listing.status_code == 200 and f"/admin/memoryhub/{model}/add/".encode() not in listing.content
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.DONE


def test_running_a_failed_job_again_is_recorded(admin_client, tenant) -> None:
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso."], start=START)
    job = ArchivalJob.objects.filter(tenant=tenant, kind=ArchivalJob.Kind.INDEX).first()
    ArchivalJob.objects.filter(pk=job.pk).update(status=ArchivalJob.Status.FAILED, attempts=5)
    response = admin_client.post("/admin/memoryhub/archivaljob/", {
        "action": "run_again", "_selected_action": [job.pk]}, follow=True)
    assert response.status_code == 200 and b"1 job(s) enqueued" in response.content
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.DONE  # in-process mode: run at once
    entry = LogEntry.objects.get(object_id=str(job.pk))
    assert "Run again by admin (was failed, 5 attempt(s))" in entry.get_change_message()


def test_a_key_narrowed_or_a_tenant_deactivated_in_the_admin_holds_at_once(admin_client, client_a, settings) -> None:
    """The process caches valid keys with their scopes; an admin edit in the same process used to
    leave the old scopes (or the active tenant) in force for API_KEY_CACHE_SECONDS."""
    settings.API_KEY_CACHE_SECONDS = 3600
    auth.key_cache.clear()
    client, tenant = client_a
    key = ApiKey.objects.get(tenant=tenant)
    ApiKey.objects.filter(pk=key.pk).update(scopes=["memory", "tools"])
    assert client.get("/api/v1/tools").status_code == 200  # cached with the tools scope

    page = admin_client.post(f"/admin/memoryhub/apikey/{key.pk}/change/", {"name": key.name, "scopes": "memory"})
    assert page.status_code == 302, page.content
    assert ApiKey.objects.get(pk=key.pk).scopes == ["memory"]
    refused = client.get("/api/v1/tools")
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "missing_scope"

    assert client.post("/api/v1/search", {"query": "x", "user_id": "u1"}, format="json").status_code == 200
    page = admin_client.post(f"/admin/memoryhub/tenant/{tenant.pk}/change/", {
        "name": tenant.name, "created_at_0": "2024-03-01", "created_at_1": "09:00:00",  # is_active unticked
        "api_keys-TOTAL_FORMS": "1", "api_keys-INITIAL_FORMS": "1",
        "api_keys-0-id": key.pk, "api_keys-0-tenant": tenant.pk})
    assert page.status_code == 302, page.content
    assert not Tenant.objects.get(pk=tenant.pk).is_active
    assert client.post("/api/v1/search", {"query": "x", "user_id": "u1"}, format="json").status_code == 401
    auth.key_cache.clear()
