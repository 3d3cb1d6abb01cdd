"""The extract job end to end, through the kernel: a malformed model reply is retried like an outage
(nothing written, then everything written once), a job that stopped between its people apply
and after resumes at after, so every person gets a vector and nobody is added twice, and the rules
keep a named pet in the profile, not among the people."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from django.utils import timezone

from memoryhub import registry
from memoryhub import services as kernel
from memoryhub.embeddings import get_embedder
from memoryhub.models import ArchivalJob, Tenant
from people import selectors, services
from people.models import MergeProposal, Person
from profiles.models import FactEvent, UserProfile
from tests.factories import append_messages
from tests.llm_server import OpenAICompatServer

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]
Status = ArchivalJob.Status

FACTS = {"facts": [{"key": "name", "value": "Anna", "confidence": 0.95, "message": 0}]}
TOM = {"people_operations": [{"op": "Added", "person": {"display_name": "Tom Baker", "circle": "Work_Inner",
                                                        "bio": "Runs the Atlas project."}}]}


def extract_job(tenant: Tenant, text: str) -> ArchivalJob:
    """A batch sent with `enable_auto_extract`: its index job run (no model), its extract job pending."""
    batch = append_messages(tenant, "u1", "s1", [text], auto_extract=True, run_job=False)
    kernel.archival_job_run(job_id=batch.job.pk)
    assert batch.extract_job is not None
    return batch.extract_job


def run_due(job: ArchivalJob) -> ArchivalJob:
    """Run the job as if its retry delay had passed."""
    ArchivalJob.objects.filter(pk=job.pk).update(next_attempt_at=timezone.now())
    kernel.archival_job_run(job_id=job.pk)
    job.refresh_from_db()
    return job


def written(tenant: Tenant) -> dict[str, Any]:
    return {"fact_events": list(FactEvent.objects.filter(tenant=tenant).values_list("key", "new_value")),
            "people": list(Person.objects.filter(tenant=tenant).values_list("display_name", "mention_count"))}


def test_malformed_replies_retry_the_job_with_nothing_written_then_a_sweep_writes_everything_once(
    tenant: Tenant, llm: OpenAICompatServer, settings: Any
) -> None:
    settings.ARCHIVAL_MAX_ATTEMPTS = 2
    job = extract_job(tenant, "I'm Anna. My boss Tom Baker runs the Atlas project.")
    llm.script_chat("not json", {"facts": "none"})  # the re-ask fails the schema too
    job = run_due(job)
    assert (job.status, job.attempts) == (Status.PENDING, 1)
    assert "LLMResponseError" in job.error and "ExtractionReply" in job.error
    assert job.result.get("steps", {}) == {}
    assert written(tenant) == {"fact_events": [], "people": []}

    llm.script_chat("still not json", "nor this")
    job = run_due(job)
    # Out of attempts: shown as failed, and still picked up by the sweeper when due.
    assert (job.status, job.attempts) == (Status.FAILED, 2)
    assert written(tenant) == {"fact_events": [], "people": []}

    llm.script_chat(FACTS, TOM)  # the model answers well again
    ArchivalJob.objects.filter(pk=job.pk).update(next_attempt_at=timezone.now())
    assert kernel.archival_sweep() == 1
    job.refresh_from_db()
    assert (job.status, job.error) == (Status.DONE, "")
    expected = {"fact_events": [("name", "Anna")], "people": [("Tom Baker", 1)]}
    assert written(tenant) == expected
    assert Person.objects.get().embedding is not None
    assert len(llm.chat_requests) == 6

    # Once: nothing is left to sweep, and running the job again asks and writes nothing more.
    assert kernel.archival_sweep() == 0
    kernel.archival_job_run(job_id=job.pk)
    assert written(tenant) == expected and len(llm.chat_requests) == 6


def test_a_malformed_archivist_reply_keeps_the_saved_facts_and_retries_only_the_people_step(
    tenant: Tenant, llm: OpenAICompatServer
) -> None:
    job = extract_job(tenant, "I'm Anna. My boss Tom Baker runs the Atlas project.")
    llm.script_chat(FACTS, "Tom Baker is the boss", "still no JSON")  # no fallback to the rules any more
    job = run_due(job)
    assert (job.status, job.attempts) == (Status.PENDING, 1) and "ArchivistReply" in job.error
    assert set(job.result["steps"]) == {"profiles"}
    assert written(tenant) == {"fact_events": [("name", "Anna")], "people": []}

    llm.script_chat(TOM)
    ArchivalJob.objects.filter(pk=job.pk).update(next_attempt_at=timezone.now())
    assert kernel.archival_sweep() == 1
    job.refresh_from_db()
    assert job.status == Status.DONE and job.result["steps"]["people"]["added"] == 1
    assert written(tenant) == {"fact_events": [("name", "Anna")], "people": [("Tom Baker", 1)]}
    assert len(llm.chat_requests) == 4  # the facts were not asked for again


# Seed 000's description of one man from two conversations (see test_dedup): only their vectors match.
BOSS_BIO = "Руководитель проекта X в банке. Отвечает за релизы и ревью архитектуры, любит горные лыжи."
SAME_BIO = "Руководитель проекта X в банке, отвечает за релизы и ревью архитектуры, любит горные лыжи."


def test_a_job_stopped_between_apply_and_after_gets_its_vectors_and_no_duplicate_when_run_again(
    tenant: Tenant, llm: OpenAICompatServer, make_person: MakePerson, monkeypatch: pytest.MonkeyPatch
) -> None:
    boss = make_person("Иван Сергеевич", bio=BOSS_BIO)
    people_step = next(s for s in registry.job_steps if s.kind == registry.EXTRACT and s.name == "people")
    stops: list[int] = []

    def stopping_once(job: ArchivalJob, summary: dict[str, Any]) -> Any:
        if not stops:
            stops.append(job.pk)
            raise RuntimeError("worker stopped between apply and after")
        return people_step.after(job, summary)

    monkeypatch.setattr(registry, "job_steps", [replace(s, after=stopping_once) if s is people_step else s
                                                for s in registry.job_steps])
    job = extract_job(tenant, "Сергеич опять перенёс релиз.")
    llm.script_chat({"facts": []}, {"people_operations": [
        {"op": "Added", "person": {"display_name": "Сергеич", "circle": "Work_Inner", "bio": SAME_BIO}}]})
    job = run_due(job)
    assert (job.status, job.attempts) == (Status.PENDING, 1) and "worker stopped" in job.error
    assert set(job.result["steps"]) == {"profiles", "people"} and "people" not in job.result.get("after", {})
    new = Person.objects.get(display_name="Сергеич")
    assert new.embedding is None and not MergeProposal.objects.exists()

    # Meanwhile the person is found by name, a vector search passes over them, the dedup runs without them.
    found = selectors.people_search(tenant_id=tenant.pk, user_id="u1", query="Сергеич").hits
    assert new.pk in [h.person.pk for h in found]
    by_vector = selectors.people_search(tenant_id=tenant.pk, user_id="u1", query=SAME_BIO, mode="vector",
                                       threshold=0.0).hits
    assert [h.person.pk for h in by_vector] == [boss.pk]
    assert services.person_dedup(person=boss, auto_merge=True) == {"merged": 0, "proposed": 0}

    job = run_due(job)
    assert job.status == Status.DONE and list(job.result["after"]) == ["people"]
    assert not Person.objects.filter(embedding__isnull=True).exists()
    new.refresh_from_db()
    assert np.allclose(new.embedding, get_embedder().embed_one(new.embedding_text()), atol=1e-6)
    assert list(Person.objects.order_by("pk").values_list("display_name", "mention_count")) == [
        ("Иван Сергеевич", 1), ("Сергеич", 1)]  # apply did not run twice
    proposal = MergeProposal.objects.get()  # the embedding rule, now that the vector is there
    assert (proposal.rule, proposal.source_id, proposal.target_id) == ("embedding", new.pk, boss.pk)
    assert len(llm.chat_requests) == 2  # the re-run asked the model nothing

    # A second re-run of the after-phase opens nothing new.
    assert services.people_after_apply(tenant_id=tenant.pk, user_id="u1", person_ids=[new.pk]) == {
        "embedded": 0, "merged": 0, "proposed": 0}
    assert MergeProposal.objects.count() == 1


@pytest.mark.parametrize(("text", "pet", "people"), [
    ("我喜欢吃饺子。我的猫叫米饭。", "猫 (米饭)", []),
    ("My friend Anna walks my dog Max.", "dog (Max)", ["Anna"]),
    ("Мою кошку зовут Муся.", "кошка (Муся)", []),
])
def test_the_rules_keep_a_named_pet_in_the_profile_and_not_among_the_people(
        tenant: Tenant, text: str, pet: str, people: list) -> None:
    job = run_due(extract_job(tenant, text))  # LLM_PROVIDER=off: the rules
    assert job.status == Status.DONE
    assert list(UserProfile.objects.filter(tenant=tenant, key="pets").values_list("value", flat=True)) == [pet]
    assert list(Person.objects.filter(tenant=tenant).values_list("display_name", flat=True)) == people
