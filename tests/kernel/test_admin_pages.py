"""Every page of the review console opens on what `make run` loads: each model's list, its add form
where adding is allowed, and one record's page (a 500 in a list column or a form shows up here)."""

from __future__ import annotations

import io

import pytest
from django.contrib import admin
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.test import RequestFactory

from memoryhub import services
from memoryhub.models import ArchivalJob, Conversation
from rag.memories import consolidation

pytestmark = pytest.mark.django_db


def test_every_admin_page_opens_on_the_demo_data(admin_client, settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path
    call_command("lore_demo", stdout=io.StringIO(), stderr=io.StringIO())
    call_command("demo_bootstrap", stdout=io.StringIO())
    # What a worker does after the requests (on_commit does not fire inside a test).
    for job in ArchivalJob.objects.filter(status=ArchivalJob.Status.PENDING):
        services.archival_job_run(job_id=job.pk)
    for conversation in Conversation.objects.all():
        run = consolidation.consolidation_request(conversation, trigger="request")["consolidation"]
        if run:
            consolidation.consolidation_run(run_id=run)
    request = RequestFactory().get("/admin/")
    request.user = get_user_model().objects.get(username="admin")
    opened = []
    for model, model_admin in admin.site._registry.items():
        base = f"/admin/{model._meta.app_label}/{model._meta.model_name}/"
        assert admin_client.get(base).status_code == 200, base
        if model_admin.has_add_permission(request):
            assert admin_client.get(f"{base}add/").status_code == 200, f"{base}add/"
        record = model_admin.get_queryset(request).order_by("pk").first()
        if record is not None:
            assert admin_client.get(f"{base}{record.pk}/change/").status_code == 200, f"{base}{record.pk}/change/"
            opened.append(model._meta.model_name)
            if not model_admin.has_delete_permission(request):
                assert admin_client.get(f"{base}{record.pk}/delete/").status_code == 403, f"{base}{record.pk}/delete/"
                assert "delete_selected" not in model_admin.get_actions(request), base
    # The demo fills every app: chat memory, people, facts, typed memories, lore and campaigns.
    assert {"message", "person", "userprofile", "typedmemory", "knowledgeversion", "campaign", "npc"} <= set(opened)


def test_only_what_a_service_deletes_whole_can_be_deleted_in_the_admin(rf, admin_user) -> None:
    """A QA editor deleted a knowledge version from its list: its chunks stayed, owned by nothing, and the
    edit that built it lost its produced_version. The "read-only" campaign pages offered Delete too (a
    summary's episode chunk left behind). A raw delete is allowed only where the admin's delete goes
    through the service (typed memories) or the row holds nothing derived (keys, tenants, accounts)."""
    request = rf.get("/admin/")
    request.user = admin_user
    deletable = {model._meta.label for model, model_admin in admin.site._registry.items()
                 if model_admin.has_delete_permission(request)}
    assert deletable == {"auth.Group", "auth.User", "axes.AccessAttempt", "axes.AccessLog", "axes.AccessFailureLog",
                         "memoryhub.Tenant", "memoryhub.ApiKey", "rag.TypedMemory", "people.Person"}
