"""People in the archival pipeline: the kernel's jobs run the archivist for auto-extract batches and for
sessions that reach the extraction size (or go idle)."""

from __future__ import annotations

from typing import Any

import pytest
from rest_framework.test import APIClient

from memoryhub.models import ArchivalJob, Tenant
from people.models import Person

pytestmark = pytest.mark.django_db


def post(client: APIClient, texts: list[str], auto_extract: bool) -> int | None:
    """Post a batch; the id of its extraction job (None when the batch asked for none)."""
    response = client.post("/api/v1/users/u1/sessions/s1/messages", {
        "messages": [{"role": "user", "text": t} for t in texts], "enable_auto_extract": auto_extract,
    }, format="json")
    assert response.status_code == 202
    return response.json()["extract_job_id"]


def test_an_auto_extract_batch_is_archived_into_people(client_a: tuple[APIClient, Tenant],
                                                       django_capture_on_commit_callbacks) -> None:
    client, _ = client_a
    with django_capture_on_commit_callbacks(execute=True):
        job_id = post(client, ["Мой близкий коллега Петров ведёт со мной проект X."], auto_extract=True)
    job = ArchivalJob.objects.get(pk=job_id)
    assert job.status == ArchivalJob.Status.DONE
    assert job.result["steps"]["people"]["added"] == 1 and job.result["steps"]["people"]["source"] == "rules"
    assert Person.objects.get().circle == "Work_Inner"


def test_a_batch_without_auto_extract_waits_for_the_idle_trigger(client_a: tuple[APIClient, Tenant],
                                                                 django_capture_on_commit_callbacks) -> None:
    client, _ = client_a
    with django_capture_on_commit_callbacks(execute=True):
        job_id = post(client, ["Мой брат Дима купил машину."], auto_extract=False)
    assert job_id is None and not ArchivalJob.objects.filter(kind=ArchivalJob.Kind.EXTRACT).exists()
    assert not Person.objects.exists()


def test_a_session_reaching_the_extraction_size_is_archived_whole(
    client_a: tuple[APIClient, Tenant], django_capture_on_commit_callbacks, settings: Any
) -> None:
    settings.ARCHIVAL_SESSION_SIZE = 3
    client, _ = client_a
    with django_capture_on_commit_callbacks(execute=True):
        post(client, ["Мой брат Дима купил машину."], auto_extract=False)
    assert not Person.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        post(client, ["Моя подруга Наташа выходит замуж.", "Дима поможет с переездом."], auto_extract=False)
    assert dict(Person.objects.values_list("display_name", "mention_count")) == {"Дима": 2, "Наташа": 1}
