"""Extraction in the archival job: through the loopback LLM (valid, malformed, timeout) and, with the
LLM off, through the rules; sensitive numbers are dropped and counted either way."""

from __future__ import annotations

import pytest
from django.utils import timezone

from memoryhub import registry
from memoryhub import services as kernel
from memoryhub.models import ArchivalJob, Message
from profiles import services
from profiles.extraction import SYSTEM_PROMPT
from profiles.models import UserProfile
from tests.factories import append_messages
from tests.llm_server import Delay
from tests.profiles.conftest import metric

URL = "/api/v1/users/u1/sessions/s1/messages"


@pytest.fixture(autouse=True)
def _only_indexing_and_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    # Other apps' job steps may call the LLM too and would take the replies scripted here.
    monkeypatch.setattr(registry, "job_steps", [s for s in registry.job_steps if s.name in ("index", "profiles")])


def post_batch(client, texts: list[tuple[str, str]], *, auto_extract: bool = True, capture=None) -> ArchivalJob | None:
    """Post a batch; its extraction job (None when the batch asked for none)."""
    body = {"messages": [{"role": role, "text": text} for role, text in texts], "enable_auto_extract": auto_extract}
    with capture(execute=True):
        response = client.post(URL, body, format="json")
    assert response.status_code == 202
    assert ArchivalJob.objects.get(pk=response.json()["job_id"]).status == ArchivalJob.Status.DONE  # indexed
    extract_job_id = response.json()["extract_job_id"]
    return ArchivalJob.objects.get(pk=extract_job_id) if extract_job_id else None


def steps(job: ArchivalJob) -> dict:
    job.refresh_from_db()
    return job.result.get("steps", {})


def facts(tenant) -> dict[str, tuple[str, str, float]]:
    return {f"{f.key}={f.value}": (f.status, f.source, round(f.confidence, 2))
            for f in UserProfile.objects.filter(tenant=tenant, user_id="u1")}


# --- rules (LLM_PROVIDER=off, the default) ---------------------------------------------------
def test_rules_extract_the_users_own_facts_when_auto_extract_is_on(
    client_a, django_capture_on_commit_callbacks
) -> None:
    client, tenant = client_a
    job = post_batch(client, [
        ("user", "Hi! My name is Anna, I'm 34 and I live in Berlin."),
        ("assistant", "Nice to meet you! My name is MemoryBot and I live in the cloud."),
        ("user", "Please answer in Russian from now on."),
    ], capture=django_capture_on_commit_callbacks)
    assert steps(job)["profiles"] == {"extractor": "rules", "candidates": 4, "saved": 4}
    assert job.status == ArchivalJob.Status.DONE
    assert facts(tenant) == {
        "name=Anna": ("active", "rules", 0.9), "age=34": ("active", "rules", 0.85),
        "location=Berlin": ("active", "rules", 0.9), "language_preference=ru": ("active", "rules", 0.85),
    }
    anna = UserProfile.objects.get(key="name")
    assert anna.source_message.text.startswith("Hi! My name is Anna")
    assert anna.meta["extractor"] == "en.name.my_name_is" and anna.meta["evidence"] == "My name is Anna"


@pytest.mark.parametrize(("asked", "answer", "mine"), [
    ("真棒！他几岁了？", "六岁。", False), ("你儿子多大了？", "六岁。", False), ("她住在哪里？", "住在上海。", False),
    ("你几岁了？", "六岁。", True), ("你住在哪里？", "住在上海。", True),
])
def test_a_subjectless_chinese_answer_about_someone_else_is_not_the_users_fact(
    tenant, asked: str, answer: str, mine: bool
) -> None:
    """QA as a new Chinese user: "我儿子豆豆开始学钢琴了。" / "真棒！他几岁了？" / "六岁。" put "age: 6" in the user's
    profile at 0.9, in every prompt after: a message opening without a subject was read as 我's."""
    append_messages(tenant, "u1", "s1", ["我儿子豆豆开始学钢琴了。", ("assistant", asked), answer], auto_extract=True)
    assert bool(facts(tenant)) is mine, facts(tenant)


@pytest.mark.parametrize(("before", "said", "query", "old", "new"), [
    ("I live in Boston.", "I moved to Seattle last week.", "where do I live now?", "Boston", "Seattle"),
    ("Я живу в Москве.", "Я переехал в Казань.", "где я сейчас живу?", "Москва", "Казань"),
    ("我住在北京。", "我搬到杭州了。", "我现在住在哪里？", "北京", "杭州"),
])
def test_a_move_replaces_the_old_city_and_the_context_says_the_new_one(
    client_a, django_capture_on_commit_callbacks, before: str, said: str, query: str, old: str, new: str
) -> None:
    client, tenant = client_a
    post_batch(client, [("user", before)], capture=django_capture_on_commit_callbacks)
    assert facts(tenant) == {f"location={old}": ("active", "rules", 0.9)}
    job = post_batch(client, [("user", said)], capture=django_capture_on_commit_callbacks)
    assert steps(job)["profiles"]["saved"] == 1
    assert facts(tenant) == {f"location={new}": ("active", "rules", 0.8)}
    (event,) = services.FactEvent.objects.filter(key="location", action="replaced")
    assert (event.old_value, event.new_value, event.reason) == (old, new, f"stated as a change: {said}")

    body = client.post("/api/v1/context", {"user_id": "u1", "query": query, "budget_tokens": 500},
                       format="json").json()
    profile = next(b for b in body["blocks"] if b["name"] == "profile")
    lines = [item["text"] for item in profile["items"]]
    assert any(new in line for line in lines) and not any(old in line for line in lines), lines


@pytest.mark.parametrize(("before", "said", "query", "after"), [
    ((("occupation", "nurse"), ("employer", "Mass General Hospital")),
     "I quit the hospital. Now I'm a UX designer at Amazon, and my new manager is Priya Shah.",
     "where do I work?", {"occupation=UX designer", "employer=Amazon"}),
    ((("occupation", "медсестра"), ("employer", "Городская больница")),
     "Я уволилась из больницы. Теперь я дизайнер в Яндексе.", "где я работаю?",
     {"occupation=дизайнер", "employer=Яндекс"}),
    ((("occupation", "护士"), ("employer", "协和医院")), "我从医院辞职了，现在在字节跳动当设计师。", "我在哪里工作？",
     {"occupation=设计师", "employer=字节跳动"}),
    # Left, with no new employer named: the old one goes all the same.
    ((("occupation", "nurse"), ("employer", "Mass General Hospital")), "I quit my job. I'm now a UX designer.",
     "what do I do?", {"occupation=UX designer"}),
])
def test_a_job_change_replaces_the_job_and_the_employer_and_the_context_says_the_new_ones(
    client_a, django_capture_on_commit_callbacks, before, said: str, query: str, after: set[str]
) -> None:
    """QA: after "I'm a nurse at Mass General Hospital", "I quit the hospital. Now I'm a UX designer at
    Amazon…" left the employer, extracted no Amazon and put the new job in review behind "nurse, 0.9"; the
    context then read "ux designer at Mass General Hospital"."""
    client, tenant = client_a
    for key, value in before:
        services.fact_upsert(tenant=tenant, user_id="u1", key=key, value=value, confidence=0.9, source="rules")
    post_batch(client, [("user", said)], capture=django_capture_on_commit_callbacks)
    active = {k for k, (status, *_rest) in facts(tenant).items() if status == "active"}
    assert active == after and set(facts(tenant)) == after
    old_employer = dict(before)["employer"]
    (event,) = services.FactEvent.objects.filter(key="employer", old_value=old_employer)
    assert event.action in ("deleted", "replaced") and said in event.reason

    body = client.post("/api/v1/context", {"user_id": "u1", "query": query, "budget_tokens": 500},
                       format="json").json()
    profile = next(b for b in body["blocks"] if b["name"] == "profile")
    text = "\n".join(item["text"] for item in profile["items"])
    assert all(fact.split("=")[1] in text for fact in after) and old_employer not in text, text


def test_without_auto_extract_the_job_extracts_nothing(client_a, django_capture_on_commit_callbacks) -> None:
    client, tenant = client_a
    job = post_batch(client, [("user", "My name is Anna.")], auto_extract=False,
                     capture=django_capture_on_commit_callbacks)
    assert job is None and not ArchivalJob.objects.filter(kind=ArchivalJob.Kind.EXTRACT).exists()
    assert facts(tenant) == {}


def test_rules_drop_sensitive_numbers_and_count_them(client_a, django_capture_on_commit_callbacks, settings) -> None:
    settings.SENSITIVE_POLICY = "keep"  # the rules see the raw number; the guard refuses it
    client, tenant = client_a
    before = metric("memoryhub_profile_sensitive_refused_total", kind="card_number", source="rules")
    job = post_batch(client, [("user", "My card number is 4111 1111 1111 1111. My email is anna@example.com. "
                                       "My social security number is 536-90-4399.")],
                     capture=django_capture_on_commit_callbacks)
    assert facts(tenant) == {"email=anna@example.com": ("active", "rules", 0.8)}
    assert steps(job)["profiles"] == {"extractor": "rules", "candidates": 3, "saved": 1, "sensitive": 2}
    assert metric("memoryhub_profile_sensitive_refused_total", kind="card_number", source="rules") == before + 1


def test_under_mask_the_rules_never_see_the_number(client_a, django_capture_on_commit_callbacks) -> None:
    client, tenant = client_a
    job = post_batch(client, [("user", "My card number is 4111 1111 1111 1111. My email is anna@example.com.")],
                     capture=django_capture_on_commit_callbacks)
    assert facts(tenant) == {"email=anna@example.com": ("active", "rules", 0.8)}
    assert steps(job)["profiles"] == {"extractor": "rules", "candidates": 1, "saved": 1}


def test_the_extraction_service_can_be_called_by_the_idle_session_trigger(tenant) -> None:
    result = append_messages(tenant, "u1", "s1", ["Меня зовут Анна, мне 30 лет.", ("assistant", "Приятно!"),
                                                  "我住在北京。"], run_job=False)
    summary = services.facts_extract_from_messages(tenant=tenant, user_id="u1", messages=result.created)
    assert summary == {"extractor": "rules", "candidates": 3, "saved": 3}
    assert set(facts(tenant)) == {"name=Анна", "age=30", "location=北京"}


def test_messages_of_another_user_are_ignored_by_the_service(tenant) -> None:
    other = append_messages(tenant, "u2", "s9", ["My name is Boris."], run_job=False).created
    assert services.facts_extract_from_messages(tenant=tenant, user_id="u1", messages=other)["candidates"] == 0


# --- LLM through the loopback server ---------------------------------------------------------
VALID = {"facts": [
    {"key": "name", "value": "Anna", "confidence": 0.95, "message": 0},
    {"key": "city", "value": "Berlin", "message": 0},
    {"key": "card_number", "value": "4111 1111 1111 1111", "confidence": 0.9, "message": 0},
    {"key": "occupation", "value": "assistant", "confidence": 0.9, "message": 1},
]}


def test_llm_extracts_validated_facts_and_drops_sensitive_ones_and_the_bots_claims(
    client_a, llm, django_capture_on_commit_callbacks
) -> None:
    client, tenant = client_a
    llm.script_chat(VALID)
    before = metric("memoryhub_profile_sensitive_refused_total", kind="card_number", source="llm")
    job = post_batch(client, [("user", "I'm Anna from Berlin, card 4111 1111 1111 1111"),
                              ("assistant", "Hi Anna, I'm an assistant.")], capture=django_capture_on_commit_callbacks)
    assert steps(job)["profiles"] == {"extractor": "llm", "candidates": 4, "saved": 2, "sensitive": 1,
                                      "not_user": 1}
    assert job.status == ArchivalJob.Status.DONE
    assert facts(tenant) == {"name=Anna": ("active", "llm", 0.95), "location=Berlin": ("active", "llm", 0.8)}
    assert metric("memoryhub_profile_sensitive_refused_total", kind="card_number", source="llm") == before + 1
    (request,) = llm.chat_requests
    assert request["messages"][0]["content"].startswith(SYSTEM_PROMPT[:40])
    assert "[0] user: I'm Anna from Berlin" in request["messages"][1]["content"]
    assert request["response_format"] == {"type": "json_object"}


def test_llm_malformed_reply_is_asked_again_once(client_a, llm, django_capture_on_commit_callbacks) -> None:
    client, tenant = client_a
    llm.script_chat("Sure! name is Anna", VALID)
    post_batch(client, [("user", "I'm Anna from Berlin")], capture=django_capture_on_commit_callbacks)
    assert len(llm.chat_requests) == 2
    assert "name=Anna" in facts(tenant)


def test_llm_still_malformed_after_the_retry_fails_the_job_for_a_retry_and_the_messages_are_kept(
    client_a, llm, django_capture_on_commit_callbacks
) -> None:
    client, tenant = client_a
    llm.script_chat("not json", {"name": "Anna"})  # the second lacks "facts": invalid too
    before = metric("memoryhub_profile_extractions_total", extractor="llm", outcome="malformed")
    job = post_batch(client, [("user", "I'm Anna from Berlin")], capture=django_capture_on_commit_callbacks)
    assert "profiles" not in steps(job)  # issue 9: retried like an outage, not finished with an error
    assert job.status == ArchivalJob.Status.PENDING and job.attempts == 1
    assert "LLMResponseError" in job.error and "ExtractionReply" in job.error
    assert len(llm.chat_requests) == 2
    assert facts(tenant) == {}
    assert Message.objects.filter(pk__in=job.message_ids).count() == 1
    assert metric("memoryhub_profile_extractions_total", extractor="llm", outcome="malformed") == before + 1


def test_llm_timeout_fails_the_job_for_a_retry_and_writes_nothing(tenant, llm) -> None:
    batch = append_messages(tenant, "u1", "s1", ["I'm Anna from Berlin"], auto_extract=True, run_job=False)
    llm.script_chat(Delay(2.0, VALID), Delay(2.0, VALID))  # LLM_TIMEOUT is 0.5 s, one retry
    kernel.archival_job_run(job_id=batch.extract_job.pk)
    job = ArchivalJob.objects.get(pk=batch.extract_job.pk)
    assert job.status == ArchivalJob.Status.PENDING and job.attempts == 1 and "LLMUnavailable" in job.error
    assert len(llm.chat_requests) == 2
    assert facts(tenant) == {}
    assert Message.objects.filter(pk__in=job.message_ids).count() == 1

    llm.script_chat(VALID)  # the provider is back: the retried job extracts
    ArchivalJob.objects.filter(pk=job.pk).update(next_attempt_at=timezone.now())  # its delay has passed
    kernel.archival_job_run(job_id=job.pk)
    job.refresh_from_db()
    assert job.status == ArchivalJob.Status.DONE and "name=Anna" in facts(tenant)


@pytest.mark.parametrize(("before", "said", "old", "new"), [
    ("I live in Boston.", "I moved to Seattle last week.", "Boston", "Seattle"),
    ("Я живу в Москве.", "Я переехал в Казань.", "Москва", "Казань"),
    ("我住在北京。", "我搬到杭州了。", "北京", "杭州"),
])
def test_llm_change_flag_replaces_the_more_confident_value(
    client_a, llm, django_capture_on_commit_callbacks, before: str, said: str, old: str, new: str
) -> None:
    client, tenant = client_a
    llm.script_chat({"facts": [{"key": "location", "value": old, "confidence": 0.9, "message": 0}]})
    post_batch(client, [("user", before)], capture=django_capture_on_commit_callbacks)
    llm.script_chat({"facts": [{"key": "location", "value": new, "confidence": 0.8, "message": 0, "change": True}]})
    post_batch(client, [("user", said)], capture=django_capture_on_commit_callbacks)
    assert facts(tenant) == {f"location={new}": ("active", "llm", 0.8)}
    assert '"change": true' in llm.chat_requests[-1]["messages"][0]["content"]
    # Without the flag the same reply only proposes the new value beside the old one.
    llm.script_chat({"facts": [{"key": "location", "value": old, "confidence": 0.7, "message": 0}]})
    post_batch(client, [("user", before)], capture=django_capture_on_commit_callbacks)
    assert facts(tenant)[f"location={old}"] == ("pending", "llm", 0.7)


@pytest.mark.parametrize(("held", "said", "named"), [
    ("Google", "I quit Google last week.", "Google"),
    ("Сбербанк", "Я уволился, ищу работу.", ""),
    ("腾讯", "我从腾讯离职了。", "腾讯"),
])
def test_llm_ended_flag_removes_the_value_the_user_left(
    client_a, llm, django_capture_on_commit_callbacks, held: str, said: str, named: str
) -> None:
    client, tenant = client_a
    services.fact_upsert(tenant=tenant, user_id="u1", key="employer", value=held, confidence=0.9, source="llm")
    llm.script_chat({"facts": [{"key": "employer", "value": named, "confidence": 0.85, "message": 0,
                                "ended": True}]})
    job = post_batch(client, [("user", said)], capture=django_capture_on_commit_callbacks)
    assert steps(job)["profiles"] == {"extractor": "llm", "candidates": 1, "ended": 1}
    assert facts(tenant) == {}
    assert '"ended": true' in llm.chat_requests[-1]["messages"][0]["content"]
    event = services.FactEvent.objects.filter(key="employer").latest("id")
    assert (event.action, event.actor, event.old_value) == ("deleted", "llm", held)
