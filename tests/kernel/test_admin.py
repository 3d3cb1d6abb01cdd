"""The kernel's admin pages: service-written records are read-only, re-running a job is audited."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from django.contrib.admin.models import LogEntry

from memoryhub.models import ArchivalJob, Conversation, Message
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
