"""POST /api/v1/chat (seed 002's example): turns stored first, answered with the user's memory by the
model (our loopback OpenAI-compatible server), the answer stored as the session's assistant turn."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from django.db import connections
from rest_framework.test import APIClient

from memoryhub import services
from memoryhub.models import Message
from profiles.services import fact_upsert
from tests.concurrency import at_once, errors_of
from tests.llm_server import Delay, HTTPError, Malformed, OpenAICompatServer

URL = "/api/v1/chat"
CHAT_MODEL = "chat-model"


@pytest.fixture
def chat_llm(llm: OpenAICompatServer, settings: Any) -> OpenAICompatServer:
    """The chat agent on a model of its own, so a test reads the answer's requests apart from any other agent's."""
    settings.LLM_MODELS = {"default": "helper-model", CHAT_MODEL: CHAT_MODEL, "chat": CHAT_MODEL}
    llm.chat_handler = lambda request: "你住在上海。" if request["model"] == CHAT_MODEL else "{}"
    return llm


def chat_requests(llm: OpenAICompatServer) -> list[dict[str, Any]]:
    return [r for r in llm.chat_requests if r["model"] == CHAT_MODEL]


def body(text: str = "我住在哪里？", **extra: Any) -> dict[str, Any]:
    return {"user_id": "test_user", "session_id": "session2", "messages": [{"role": "user", "content": text}],
            **extra}


def stored(tenant: Any, user: str = "test_user") -> list[tuple[str, str]]:
    return list(Message.objects.filter(tenant=tenant, user_id=user).order_by("id").values_list("role", "text"))


def test_seed_example_answers_from_long_term_memory_injected_into_the_system_prompt(client_a, chat_llm) -> None:
    client, tenant = client_a
    fact = fact_upsert(tenant=tenant, user_id="test_user", key="location", value="上海", confidence=0.9,
                       source="api").fact
    response = client.post(URL, body(), format="json")
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["answer"] == "你住在上海。" and data["model"] == CHAT_MODEL and not data["replayed"]
    assert stored(tenant) == [("user", "我住在哪里？"), ("assistant", "你住在上海。")]
    ids = list(Message.objects.filter(tenant=tenant).order_by("id").values_list("id", flat=True))
    assert data["message_ids"] == ids and data["answer_id"] == ids[-1]
    [request] = chat_requests(chat_llm)
    system, *turns = request["messages"]
    assert system["role"] == "system" and "location: 上海" in system["content"]
    assert turns == [{"role": "user", "content": "我住在哪里？"}]
    blocks = {b["name"]: b for b in data["context"]["blocks"]}
    assert blocks["profile"]["refs"] == [f"fact:{fact.pk}"]
    assert blocks["recent_turns"]["refs"] == [f"message:{ids[0]}"]
    assert 0 < data["context"]["used_tokens"] <= data["context"]["budget_tokens"] == 2000
    assert data["usage"]["prompt_tokens"] > 0 and data["usage"]["completion_tokens"] > 0
    answer = Message.objects.get(pk=ids[-1])
    assert answer.meta["chat"]["reply_to"] == ids[0] and answer.meta["chat"]["model"] == CHAT_MODEL


def test_recent_turns_go_as_chat_messages_once_and_not_in_the_system_prompt(client_a, chat_llm) -> None:
    client, tenant = client_a
    services.messages_append(tenant=tenant, user_id="test_user", session_id="session2", messages=[
        services.IncomingMessage(role="user", text="I adopted a cat called Miso."),
        services.IncomingMessage(role="assistant", text="Miso is a lovely name!")])
    response = client.post(URL, {**body("Be brief.", budget_tokens=400),
                                 "messages": [{"role": "system", "content": "Be brief."},
                                              {"role": "user", "text": "What is my cat called?"}]}, format="json")
    assert response.status_code == 200, response.content
    [request] = chat_requests(chat_llm)
    system, *turns = request["messages"]
    assert system["content"].startswith("Be brief.\n\n") and "<recent_turns>" not in system["content"]
    assert "Miso" not in system["content"]  # the turns are messages; the memories block does not repeat them
    assert turns == [{"role": "user", "content": "I adopted a cat called Miso."},
                     {"role": "assistant", "content": "Miso is a lovely name!"},
                     {"role": "user", "content": "What is my cat called?"}]
    assert response.json()["context"]["budget_tokens"] == 400


def test_offline_the_turns_are_stored_and_the_answer_is_a_503_naming_them(client_a, settings) -> None:
    settings.LLM_PROVIDER = "off"
    client, tenant = client_a
    response = client.post(URL, body(), format="json")
    assert response.status_code == 503, response.content
    error = response.json()["error"]
    assert error["code"] == "llm_unavailable" and "LLM_PROVIDER" in error["message"]
    assert error["message_ids"] == list(Message.objects.filter(tenant=tenant).values_list("id", flat=True))
    assert stored(tenant) == [("user", "我住在哪里？")]


@pytest.mark.parametrize(("replies", "status", "code"), [
    ((HTTPError(429), HTTPError(429)), 503, "llm_rate_limited"),
    ((500, 500), 502, "llm_error"),
    ((Delay(2.0, "late"), Delay(2.0, "late")), 504, "llm_timeout"),
    ((Malformed(), Malformed()), 502, "llm_error"),
    (("   ",), 502, "llm_empty_answer"),
    ((HTTPError(401),), 502, "llm_error"),
])
def test_a_failing_model_keeps_the_turns_stores_no_answer_and_is_never_a_500(
        client_a, chat_llm, replies, status, code) -> None:
    client, tenant = client_a
    chat_llm.script_chat(*replies)  # the fixture retries once (LLM_MAX_RETRIES=1, LLM_TIMEOUT=0.5)
    response = client.post(URL, body(), format="json")
    assert response.status_code == status, response.content
    error = response.json()["error"]
    assert error["code"] == code
    assert stored(tenant) == [("user", "我住在哪里？")]
    assert error["message_ids"] == list(Message.objects.filter(tenant=tenant).values_list("id", flat=True))
    if code == "llm_rate_limited":
        assert response["Retry-After"]


def test_a_retried_turn_returns_its_stored_answer_without_asking_the_model_again(client_a, chat_llm) -> None:
    client, tenant = client_a
    request = {**body(), "messages": [{"role": "user", "content": "我住在哪里？", "external_id": "t-1"}]}
    first = client.post(URL, request, format="json").json()
    again = client.post(URL, request, format="json").json()
    assert again["replayed"] and again["message_ids"] == first["message_ids"] and again["answer"] == first["answer"]
    assert len(chat_requests(chat_llm)) == 1 and len(stored(tenant)) == 2


def test_a_turn_whose_answer_failed_is_answered_on_retry(client_a, chat_llm) -> None:
    client, tenant = client_a
    chat_llm.script_chat(500, 500)
    request = {**body(), "messages": [{"role": "user", "content": "我住在哪里？", "external_id": "t-1"}]}
    assert client.post(URL, request, format="json").status_code == 502
    retry = client.post(URL, request, format="json")
    assert retry.status_code == 200 and not retry.json()["replayed"]
    assert stored(tenant) == [("user", "我住在哪里？"), ("assistant", "你住在上海。")]


@pytest.mark.parametrize(("change", "field"), [
    ({"user_id": None}, "user_id"),
    ({"session_id": "bad id!"}, "session_id"),
    ({"messages": []}, "messages"),
    ({"messages": [{"role": "user", "text": "hi"}, {"role": "assistant", "text": "hello"}]}, "messages"),
    ({"messages": [{"role": "tool", "content": "42"}]}, "messages"),
    ({"messages": [{"role": "user", "text": "hi", "external_id": "x" * 125}]}, "messages"),
    ({"budget_tokens": 10}, "budget_tokens"),
    ({"model": "gpt-5-unlisted"}, "model"),
    ({"enable_auto_extract": "yes"}, "enable_auto_extract"),
    ({"temperature": 2.5}, "temperature"),
    ({"temperature": -0.1}, "temperature"),
    ({"temperature": "hot"}, "temperature"),
    ({"max_tokens": 0}, "max_tokens"),
    ({"max_tokens": 1025}, "max_tokens"),  # above CHAT_MAX_ANSWER_TOKENS (1024 unless set)
    ({"top_p": 0.9}, "top_p"),
])
def test_bad_input_is_a_400_naming_the_field_and_stores_nothing(client_a, chat_llm, change, field) -> None:
    client, tenant = client_a
    request = {k: v for k, v in {**body(), **change}.items() if v is not None}
    response = client.post(URL, request, format="json")
    assert response.status_code == 400, response.content
    assert field in response.json()["error"]["fields"]
    assert stored(tenant) == [] and chat_requests(chat_llm) == []


def test_a_configured_model_may_be_named(client_a, chat_llm, settings) -> None:
    client, _ = client_a
    settings.LLM_MODELS = {**settings.LLM_MODELS, "archivist": "other-model"}
    chat_llm.chat_handler = lambda request: f"from {request['model']}"
    response = client.post(URL, body(model="other-model"), format="json")
    assert response.status_code == 200 and response.json()["answer"] == "from other-model"


def test_a_request_sets_the_answers_temperature_and_length_within_the_operators_cap(client_a, chat_llm,
                                                                                     settings) -> None:
    client, _ = client_a
    settings.CHAT_TEMPERATURE, settings.CHAT_MAX_ANSWER_TOKENS = 0.7, 1024
    assert client.post(URL, body(), format="json").status_code == 200
    assert client.post(URL, body("我喜欢什么？", temperature=0, max_tokens=64), format="json").status_code == 200
    assert client.post(URL, body("我几岁？", temperature=1.5), format="json").status_code == 200
    sampling = [(r["temperature"], r.get("max_tokens")) for r in chat_requests(chat_llm)]
    assert sampling == [(0.7, 1024), (0, 64), (1.5, 1024)]
    settings.CHAT_MAX_ANSWER_TOKENS = 64  # the operator lowers the cap: a request may not pass it
    response = client.post(URL, body("再说一遍", max_tokens=65), format="json")
    assert response.status_code == 400 and "64" in str(response.json()["error"]["fields"]["max_tokens"])


def test_a_key_without_the_memory_scope_is_refused(tenant, chat_llm) -> None:
    _, raw = services.api_key_create(tenant=tenant, name="gm", scopes=["tools"])
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    response = client.post(URL, body(), format="json")
    assert response.status_code == 403 and response.json()["error"]["code"] == "missing_scope"
    assert stored(tenant) == []


def test_another_tenants_memory_never_reaches_the_prompt(client_a, client_b, chat_llm) -> None:
    client, tenant_a = client_a
    other, tenant_b = client_b
    fact_upsert(tenant=tenant_a, user_id="test_user", key="location", value="上海", confidence=0.9, source="api")
    client.post(URL, body("I like green tea."), format="json")
    response = other.post(URL, body(), format="json")
    assert response.status_code == 200
    system, *turns = chat_requests(chat_llm)[-1]["messages"]
    assert "上海" not in system["content"] and "green tea" not in str(chat_requests(chat_llm)[-1])
    assert turns == [{"role": "user", "content": "我住在哪里？"}]
    assert stored(tenant_b) == [("user", "我住在哪里？"), ("assistant", "你住在上海。")]
    assert len(stored(tenant_a)) == 2


def test_schema_documents_chat_with_the_seed_example(schema: dict) -> None:
    operation = schema["paths"][URL]["post"]
    assert {"200", "400", "403", "502", "503", "504"} <= set(operation["responses"])
    examples = operation["requestBody"]["content"]["application/json"]["examples"]
    assert any("我住在哪里" in str(e["value"]) for e in examples.values())


# --- concurrency: real transactions, each thread its own connection -----------------------------
@pytest.mark.django_db(transaction=True)
def test_two_chats_to_one_session_at_once_both_land(api_client_for, chat_llm) -> None:
    client, tenant = api_client_for("tenant-a")
    chat_llm.chat_handler = lambda request: Delay(0.2, f"answer {len(request['messages'])}")
    raw = client._credentials["HTTP_AUTHORIZATION"]

    def ask(text: str) -> Any:
        caller = APIClient()
        caller.credentials(HTTP_AUTHORIZATION=raw)
        return caller.post(URL, body(text), format="json")

    outcomes = at_once(lambda: ask("first question"), lambda: ask("second question"))
    assert not errors_of(outcomes), outcomes
    assert [r.status_code for r in outcomes] == [200, 200], [r.content for r in outcomes]
    rows = stored(tenant)
    assert sorted(t for r, t in rows if r == "user") == ["first question", "second question"]
    assert len([r for r, _ in rows if r == "assistant"]) == 2
    ids = [i for r in outcomes for i in r.json()["message_ids"]]
    assert len(ids) == len(set(ids)) == 4


@pytest.mark.django_db(transaction=True)
def test_an_erasure_while_the_model_answers_leaves_no_turn_of_the_user(api_client_for, chat_llm, settings) -> None:
    client, tenant = api_client_for("tenant-a")
    settings.LLM_TIMEOUT = 5.0
    chat_llm.chat_handler = lambda request: Delay(1.0, "你住在上海。")
    out: dict[str, Any] = {}

    def ask() -> None:
        try:
            out["response"] = client.post(URL, body(), format="json")
        finally:
            connections.close_all()

    thread = threading.Thread(target=ask)
    thread.start()
    deadline = time.monotonic() + 5
    while not chat_requests(chat_llm) and time.monotonic() < deadline:  # the model is answering now
        time.sleep(0.02)
    assert Message.objects.filter(tenant=tenant, user_id="test_user").count() == 1
    eraser = APIClient()
    eraser.credentials(HTTP_AUTHORIZATION=client._credentials["HTTP_AUTHORIZATION"])
    receipt = eraser.delete("/api/v1/users/test_user")
    assert receipt.status_code == 200 and receipt.json()["deleted"]["messages"] == 1
    thread.join(30)
    response = out["response"]
    assert response.status_code == 409 and response.json()["error"]["code"] == "erased", response.content
    assert stored(tenant) == []
