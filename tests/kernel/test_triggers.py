"""When extraction runs: at once on enable_auto_extract, at a session size, or when a session idles."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub import services
from memoryhub.models import ArchivalJob, Conversation
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


def test_plain_batches_only_index_until_the_session_reaches_its_size(tenant, settings) -> None:
    settings.ARCHIVAL_SESSION_SIZE = 5
    first = append_messages(tenant, "u1", "s1", ["one", "two", "three"])
    assert first.job.kind == ArchivalJob.Kind.INDEX and first.job.message_ids == [m.pk for m in first.created]
    assert first.extract_job is None
    second = append_messages(tenant, "u1", "s1", ["four", "five"])
    assert second.job.message_ids == [m.pk for m in second.created]
    extract = ArchivalJob.objects.get(pk=second.extract_job.pk)
    assert extract.trigger == ArchivalJob.Trigger.SIZE
    assert extract.message_ids == [m.pk for m in first.created + second.created]
    conversation = Conversation.objects.get()
    assert conversation.extracted_until_message_id == second.created[-1].pk
    third = append_messages(tenant, "u1", "s1", ["six"])
    assert third.extract_job is None  # the count starts again after an extraction


def test_one_waiting_extraction_per_session_grows_with_each_batch(tenant, settings) -> None:
    """Past the session size every batch used to add a job over all pending messages."""
    settings.ARCHIVAL_SESSION_SIZE = 3
    results = [append_messages(tenant, "u1", "s1", [f"turn {i}"], run_job=False) for i in range(6)]
    extract_jobs = ArchivalJob.objects.filter(kind=ArchivalJob.Kind.EXTRACT)
    assert extract_jobs.count() == 1
    assert {r.extract_job.pk for r in results[2:]} == {extract_jobs.get().pk}
    services.archival_job_run(job_id=extract_jobs.get().pk)
    assert extract_jobs.get().message_ids == [r.created[0].pk for r in results]


def test_auto_extract_batch_covers_the_sessions_unextracted_messages(tenant) -> None:
    first = append_messages(tenant, "u1", "s1", ["I live in Riga."])
    second = append_messages(tenant, "u1", "s1", ["And I work as a nurse."], auto_extract=True)
    extract = ArchivalJob.objects.get(pk=second.extract_job.pk)
    assert extract.message_ids == [first.created[0].pk, second.created[0].pk]


def test_an_idle_session_gets_one_extraction_job(tenant) -> None:
    past = timezone.now() - timedelta(hours=3)
    result = append_messages(tenant, "u1", "s1", ["My cat is Miso."], start=past)
    append_messages(tenant, "u1", "fresh", ["Just now."])
    assert services.sessions_extract_idle() == 1
    job = ArchivalJob.objects.get(kind=ArchivalJob.Kind.EXTRACT)
    assert job.conversation.session_id == "s1" and job.trigger == ArchivalJob.Trigger.IDLE
    assert services.sessions_extract_idle() == 0  # already queued
    services.archival_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.message_ids == [result.created[0].pk]
    assert services.sessions_extract_idle() == 0  # nothing left to extract
    assert Conversation.objects.get(session_id="s1").extracted_until_message_id == result.created[0].pk
