"""POST /api/v1/chat with a client that resends its history (the OpenAI way: every call carries the whole
conversation, the answers it got included), and the time the model is told. The model is our loopback
OpenAI-compatible server, whose recorded requests show what the model was sent."""

from __future__ import annotations

import itertools
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from django.db import connection, transaction
from django.utils import timezone
from rest_framework.test import APIClient

from memoryhub import services
from memoryhub.models import Message
from tests.concurrency import at_once, errors_of
from tests.llm_server import Delay, OpenAICompatServer

URL = "/api/v1/chat"
CHAT_MODEL = "chat-model"

# (system prompt, first turn, question, a later turn) per language.
TEXTS = {
    "en": ("You are nice.", "Hi, I love jazz.", "What music do I love?", "And my favourite band?"),
    "ru": ("Ты добрый помощник.", "Привет, я люблю джаз.", "Какую музыку я люблю?", "А какая моя любимая группа?"),
    "zh": ("你是一个友善的助手。", "你好，我喜欢爵士乐。", "我喜欢什么音乐？", "那我最喜欢的乐队呢？"),
}


@pytest.fixture
def chat_llm(llm: OpenAICompatServer, settings: Any) -> OpenAICompatServer:
    """The chat agent on a model of its own; each answer numbered, so that every one is a new text."""
    settings.LLM_MODELS = {"default": "helper-model", "chat": CHAT_MODEL}
    numbers = itertools.count(1)
    llm.chat_handler = lambda request: f"answer {next(numbers)}" if request["model"] == CHAT_MODEL else "{}"
    return llm


def sent_to_model(llm: OpenAICompatServer) -> list[list[dict[str, Any]]]:
    return [r["messages"] for r in llm.chat_requests if r["model"] == CHAT_MODEL]


def turn(role: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": text, **extra}


def chat(client: APIClient, *turns: dict[str, Any], session: str = "s1") -> Any:
    response = client.post(URL, {"user_id": "u1", "session_id": session, "messages": list(turns)}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def stored(tenant: Any) -> list[tuple[str, str]]:
    return list(Message.objects.filter(tenant=tenant, user_id="u1").order_by("created_at", "id")
                .values_list("role", "text"))


def chat_turns(messages: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(m["role"], m["content"]) for m in messages[1:]]


@pytest.mark.parametrize("lang", TEXTS)
def test_a_resent_history_is_stored_once_and_sent_to_the_model_once(client_a, chat_llm, lang) -> None:
    client, tenant = client_a
    system, hello, question, later = TEXTS[lang]
    one = chat(client, turn("system", system), turn("user", hello))
    two = chat(client, turn("system", system), turn("user", hello), turn("assistant", one["answer"]),
               turn("user", question))
    assert two["message_ids"][:3] == one["message_ids"]  # the held turns: the stored ones' ids
    assert stored(tenant) == [("system", system), ("user", hello), ("assistant", one["answer"]),
                              ("user", question), ("assistant", two["answer"])]
    prompt = sent_to_model(chat_llm)[-1]
    assert prompt[0]["content"].startswith(f"{system}\n\n") and prompt[0]["content"].count(system) == 1
    assert chat_turns(prompt) == [("user", hello), ("assistant", one["answer"]), ("user", question)]
    assert two["masked"] == {}

    # The system prompt and a new turn only: the system turn is held, the turn stored.
    chat(client, turn("system", system), turn("user", later))
    assert [role for role, _ in stored(tenant)].count("system") == 1
    assert chat_turns(sent_to_model(chat_llm)[-1])[-3:] == [("user", question), ("assistant", two["answer"]),
                                                             ("user", later)]


def test_a_client_sending_only_its_new_turn_still_stores_a_repeated_one(client_a, chat_llm) -> None:
    client, tenant = client_a
    chat(client, turn("user", "ok"))
    chat(client, turn("user", "ok"))  # said again: the session's newest turn is the answer, not this
    assert [text for role, text in stored(tenant) if role == "user"] == ["ok", "ok"]


def test_system_turns_instruct_their_own_request_only_and_are_stored_once_per_session(client_a,
                                                                                     chat_llm) -> None:
    client, tenant = client_a
    twice = chat(client, turn("system", "Be brief."), turn("developer", "Be brief."), turn("user", "Hi."))
    assert twice["message_ids"][0] == twice["message_ids"][1]
    chat(client, turn("system", "Be brief."), turn("user", "Hello again."))
    chat(client, turn("system", "Answer in French."), turn("user", "Bonjour."))
    chat(client, turn("user", "And now?"))
    assert [text for role, text in stored(tenant) if role == "system"] == ["Be brief.", "Answer in French."]
    systems = [messages[0]["content"] for messages in sent_to_model(chat_llm)]
    assert systems[2].startswith("Answer in French.\n\n") and "Be brief." not in systems[2]
    # No standing order: an earlier request's instruction does not reach a later answer.
    assert "Be brief." not in systems[3] and "Answer in French." not in systems[3]


def test_an_edited_question_is_a_new_turn_and_the_branch_it_left_is_not_sent(client_a, chat_llm) -> None:
    client, tenant = client_a
    _, hello, question, later = TEXTS["en"]
    edited = "What music do I love most?"
    a1 = chat(client, turn("user", hello))["answer"]
    a2 = chat(client, turn("user", hello), turn("assistant", a1), turn("user", question))["answer"]
    a3 = chat(client, turn("user", hello), turn("assistant", a1), turn("user", edited))["answer"]
    assert stored(tenant)[4:] == [("user", edited), ("assistant", a3)]
    assert chat_turns(sent_to_model(chat_llm)[-1]) == [("user", hello), ("assistant", a1), ("user", edited)]

    # The client goes on from its edited history: held (the old branch skipped), only the new turn stored.
    four = chat(client, turn("user", hello), turn("assistant", a1), turn("user", edited), turn("assistant", a3),
                turn("user", later))
    assert stored(tenant) == [("user", hello), ("assistant", a1), ("user", question), ("assistant", a2),
                              ("user", edited), ("assistant", a3), ("user", later), ("assistant", four["answer"])]
    assert chat_turns(sent_to_model(chat_llm)[-1]) == [("user", hello), ("assistant", a1), ("user", edited),
                                                       ("assistant", a3), ("user", later)]


def test_an_edited_earlier_turn_makes_it_and_every_turn_after_it_new(client_a, chat_llm) -> None:
    client, tenant = client_a
    _, hello, question, later = TEXTS["ru"]
    edited = "Какую музыку я люблю больше всего?"
    a1 = chat(client, turn("user", hello))["answer"]
    a2 = chat(client, turn("user", hello), turn("assistant", a1), turn("user", question))["answer"]
    three = chat(client, turn("user", hello), turn("assistant", a1), turn("user", edited), turn("assistant", a2),
                 turn("user", later))
    ids = three["message_ids"]
    assert stored(tenant)[4:] == [("user", edited), ("assistant", a2), ("user", later),
                                  ("assistant", three["answer"])]
    assert ids[:2] == list(Message.objects.filter(tenant=tenant).order_by("id").values_list("id", flat=True)[:2])
    assert chat_turns(sent_to_model(chat_llm)[-1]) == [("user", hello), ("assistant", a1), ("user", edited),
                                                       ("assistant", a2), ("user", later)]


def test_an_edited_first_turn_holds_nothing_and_no_text_reaches_the_model_twice(client_a, chat_llm) -> None:
    client, tenant = client_a
    _, hello, question, later = TEXTS["zh"]
    edited = "你好，我喜欢蓝调。"
    a1 = chat(client, turn("user", hello))["answer"]
    a2 = chat(client, turn("user", hello), turn("assistant", a1), turn("user", question))["answer"]
    chat(client, turn("user", edited), turn("assistant", a1), turn("user", question), turn("assistant", a2),
         turn("user", later))
    assert [text for _, text in stored(tenant)][4:9] == [edited, a1, question, a2, later]
    sent = chat_turns(sent_to_model(chat_llm)[-1])
    # The turn it replaced is the session's, and stays among its recent turns.
    assert sent == [("user", hello), ("user", edited), ("assistant", a1), ("user", question), ("assistant", a2),
                    ("user", later)]


def test_asking_again_without_the_answer_stores_the_question_again(client_a, chat_llm) -> None:
    client, tenant = client_a
    a1 = chat(client, turn("user", "Hi."))["answer"]
    chat(client, turn("user", "Hi."), turn("assistant", a1), turn("user", "Tell me a joke."))
    chat(client, turn("user", "Hi."), turn("assistant", a1), turn("user", "Tell me a joke."))
    assert [text for role, text in stored(tenant) if role == "user"] == ["Hi.", "Tell me a joke.", "Tell me a joke."]
    assert chat_turns(sent_to_model(chat_llm)[-1]) == [("user", "Hi."), ("assistant", a1),
                                                       ("user", "Tell me a joke.")]


def test_a_turn_whose_answer_failed_is_held_when_sent_again_without_an_external_id(client_a, chat_llm) -> None:
    client, tenant = client_a
    chat_llm.script_chat(500, 500)
    failed = client.post(URL, {"user_id": "u1", "session_id": "s1", "messages": [turn("user", "Hi.")]},
                         format="json")
    assert failed.status_code == 502
    again = chat(client, turn("user", "Hi."))
    assert again["message_ids"][0] == failed.json()["error"]["message_ids"][0]
    assert stored(tenant) == [("user", "Hi."), ("assistant", again["answer"])]


def test_resent_turns_with_external_ids_are_held_and_a_retry_returns_the_stored_answer(client_a,
                                                                                     chat_llm) -> None:
    client, tenant = client_a
    one = chat(client, turn("user", "Hi.", external_id="t-1"))
    history = [turn("user", "Hi.", external_id="t-1"), turn("assistant", one["answer"]),
               turn("user", "Tell me a joke.", external_id="t-2")]
    two = chat(client, *history)
    again = chat(client, *history)
    assert again["replayed"] and again["message_ids"] == two["message_ids"] and again["answer"] == two["answer"]
    assert len(sent_to_model(chat_llm)) == 2 and len(stored(tenant)) == 4


def test_a_resent_turn_with_a_masked_number_is_held(client_a, chat_llm, settings) -> None:
    settings.SENSITIVE_POLICY = "mask"
    client, tenant = client_a
    card = "My card is 4111 1111 1111 1111, keep it in mind."
    one = chat(client, turn("user", card))
    assert one["masked"] == {"card_number": 1}
    two = chat(client, turn("user", card), turn("assistant", one["answer"]), turn("user", "Thanks."))
    assert two["masked"] == {} and two["message_ids"][:2] == one["message_ids"]
    assert len(stored(tenant)) == 4 and "4111 1111 1111 1111" not in str(stored(tenant))


# --- concurrency: real transactions, each thread its own connection -----------------------------
def _waiting_advisory_locks() -> int:
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND database = "
                       "(SELECT oid FROM pg_database WHERE datname = current_database())")
        return cursor.fetchone()[0]


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("external_id", [None, "t-2"])
def test_two_identical_resent_requests_at_once_store_the_new_turn_once(api_client_for, chat_llm, settings,
                                                                      external_id) -> None:
    client, tenant = api_client_for("tenant-a")
    settings.LLM_TIMEOUT = 5.0
    hello, question = "Привет, я люблю джаз.", "Какую музыку я люблю?"
    first = chat(client, turn("user", hello))
    numbers = itertools.count(2)
    chat_llm.chat_handler = lambda request: Delay(0.3, f"answer {next(numbers)}")
    history = [turn("user", hello), turn("assistant", first["answer"]),
               turn("user", question, **({"external_id": external_id} if external_id else {}))]

    def ask() -> Any:
        caller = APIClient()
        caller.credentials(HTTP_AUTHORIZATION=client._credentials["HTTP_AUTHORIZATION"])
        return caller.post(URL, {"user_id": "u1", "session_id": "s1", "messages": history}, format="json")

    # Both requests reach the intake while the user's write lock is held here, and go on one after the
    # other once it is let go: the second must find the turn the first stored.
    outcomes: list[Any] = []
    runner = threading.Thread(target=lambda: outcomes.extend(at_once(ask, ask)))
    with transaction.atomic():
        services.user_write_lock(tenant_id=tenant.pk, user_id="u1")
        runner.start()
        deadline = time.monotonic() + 10
        while _waiting_advisory_locks() < 2 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _waiting_advisory_locks() == 2
    runner.join(60)
    assert not errors_of(outcomes), outcomes
    assert [r.status_code for r in outcomes] == [200, 200], [r.content for r in outcomes]
    rows = stored(tenant)
    assert [text for role, text in rows if role == "user"] == [hello, question]
    ids = [r.json()["message_ids"] for r in outcomes]
    assert ids[0][:3] == ids[1][:3]
    for messages in sent_to_model(chat_llm)[1:]:
        assert [text for _, text in chat_turns(messages)].count(question) == 1
    # With an external_id the second answer gives way to the first; without, each request has its own.
    assert len([r for r, _ in rows if r == "assistant"]) == (2 if external_id else 3)


# --- the time now -------------------------------------------------------------------------------
def test_the_system_message_says_now_with_the_weekday(client_a, chat_llm) -> None:
    client, _ = client_a
    before = timezone.now()
    chat(client, turn("user", "What did I do last weekend?"))
    after = timezone.now()
    system = sent_to_model(chat_llm)[-1][0]["content"]
    assert any(f"Now: {moment:%A} {moment.day} {moment:%b %Y}, " in system for moment in (before, after)), system
    assert " UTC." in system


def test_a_dated_conversation_is_answered_at_its_own_time_with_its_days(client_a, chat_llm) -> None:
    client, tenant = client_a
    saturday = datetime(2024, 5, 11, 9, 0, tzinfo=UTC)
    services.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=[
        services.IncomingMessage(role="user", text="I went hiking in the Alps.", created_at=saturday),
        services.IncomingMessage(role="assistant", text="Sounds fun!", created_at=saturday + timedelta(minutes=1))])
    reply = chat(client, turn("user", "What did I do last weekend?", created_at="2024-05-15T10:00:00Z"))
    messages = sent_to_model(chat_llm)[-1]
    assert "Now: Wednesday 15 May 2024, 10:00 UTC." in messages[0]["content"]
    assert chat_turns(messages) == [("user", "[Saturday 11 May 2024] I went hiking in the Alps."),
                                    ("assistant", "Sounds fun!"),
                                    ("user", "[Wednesday 15 May 2024] What did I do last weekend?")]
    answered = Message.objects.get(pk=reply["answer_id"]).created_at
    assert datetime(2024, 5, 15, 10, 0, tzinfo=UTC) < answered < datetime(2024, 5, 15, 10, 1, tzinfo=UTC)


def test_a_replayed_dated_conversation_keeps_its_order_and_its_resent_turns_are_held(client_a, chat_llm) -> None:
    client, tenant = client_a
    days = ["2024-05-11T09:00:00Z", "2024-05-12T09:00:00Z", "2024-05-13T09:00:00Z"]
    said = ["Hi, I love jazz.", "What music do I love?", "And my favourite band?"]
    history: list[dict[str, Any]] = []
    for text, day in zip(said, days, strict=True):
        history.append(turn("user", text, created_at=day))
        history.append(turn("assistant", chat(client, *history)["answer"]))
    assert stored(tenant) == [(m["role"], m["content"]) for m in history]
