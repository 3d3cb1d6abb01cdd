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
    assert not first.job.auto_extract and first.job.message_ids == [m.pk for m in first.created]
    second = append_messages(tenant, "u1", "s1", ["four", "five"])
    assert second.job.auto_extract
    assert second.job.message_ids == [m.pk for m in first.created + second.created]
    conversation = Conversation.objects.get()
    assert conversation.extracted_until_message_id == second.created[-1].pk
    third = append_messages(tenant, "u1", "s1", ["six"])
    assert not third.job.auto_extract  # the count starts again after an extraction


def test_auto_extract_batch_covers_the_sessions_unextracted_messages(tenant) -> None:
    first = append_messages(tenant, "u1", "s1", ["I live in Riga."])
    second = append_messages(tenant, "u1", "s1", ["And I work as a nurse."], auto_extract=True)
    assert second.job.message_ids == [first.created[0].pk, second.created[0].pk]


def test_an_idle_session_gets_one_extraction_job(tenant) -> None:
    past = timezone.now() - timedelta(hours=3)
    result = append_messages(tenant, "u1", "s1", ["My cat is Miso."], start=past)
    append_messages(tenant, "u1", "fresh", ["Just now."])
    assert services.sessions_extract_idle() == 1
    job = ArchivalJob.objects.get(auto_extract=True)
    assert job.conversation.session_id == "s1" and job.message_ids == [result.created[0].pk]
    assert services.sessions_extract_idle() == 0  # already queued
    services.archival_job_run(job_id=job.pk)
    assert services.sessions_extract_idle() == 0  # nothing left to extract
    assert Conversation.objects.get(session_id="s1").extracted_until_message_id == result.created[0].pk
