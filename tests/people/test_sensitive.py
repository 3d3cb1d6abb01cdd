"""Sensitive numbers and addresses in the people graph: an e-mail address or a link is no mention,
and no bio carries a card or ID number, whether the archivist is the rules or the LLM and whether
the messages are stored masked or raw (SENSITIVE_POLICY)."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from rest_framework.test import APIClient

from memoryhub.models import ArchivalJob, Tenant
from people.archivist import rules
from people.models import Person
from tests.llm_server import OpenAICompatServer

URL = "/api/v1/users/u1/sessions/s1/messages"
CARD = "4242 4242 4242 4242"


def _message(text: str) -> Any:
    return SimpleNamespace(pk=1, role="user", text=text, created_at=None, meta={})


def _post_and_extract(client: APIClient, capture: Any, *texts: str) -> dict:
    body = {"messages": [{"role": "user", "text": t} for t in texts], "enable_auto_extract": True}
    with capture(execute=True):
        response = client.post(URL, body, format="json")
    assert response.status_code == 202, response.content
    job = ArchivalJob.objects.get(pk=response.json()["extract_job_id"])
    assert job.status == ArchivalJob.Status.DONE, job.error
    return response.json()


def _people(client: APIClient) -> list[dict]:
    response = client.get("/api/v1/users/u1/people")
    assert response.status_code == 200
    return response.json()["results"] if isinstance(response.json(), dict) else response.json()


@pytest.mark.parametrize("policy", ["mask", "keep"])
def test_an_email_address_makes_no_person_and_a_bio_carries_no_card_number(
        client_a: tuple[APIClient, Tenant], django_capture_on_commit_callbacks: Any, settings: Any,
        policy: str) -> None:
    settings.SENSITIVE_POLICY = policy
    client, _ = client_a
    _post_and_extract(client, django_capture_on_commit_callbacks,
                      f"Write to anna@example.com, my card is {CARD}, see medium.com/@jake_r for more.",
                      f"My friend Boris Petrov lent me his card {CARD} yesterday.")
    people = _people(client)
    assert [p["display_name"] for p in people] == ["Boris Petrov"]
    assert CARD not in json.dumps(people) and "[card •••• 4242]" in people[0]["bio"]
    assert not Person.objects.filter(bio__contains="4242 4242").exists()
    search = client.post("/api/v1/users/u1/people/search", {"query": "Boris card"}, format="json")
    assert search.status_code == 200 and CARD not in search.content.decode()
    context = client.post("/api/v1/context", {"query": "Boris card", "user_id": "u1", "session_id": "s1"},
                          format="json")
    assert context.status_code == 200 and CARD not in context.content.decode()


@pytest.mark.parametrize("text", [
    "My email is anna@example.com.",
    "Пиши на ivan.petrov@mail.ru, это мой адрес.",
    "我的邮箱是zw@qq.com。",
    "Read https://medium.com/@jake_r and www.example.com/@bob.",
])
def test_addresses_yield_no_mentions(text: str) -> None:
    extraction = rules.extract([_message(text)])
    assert extraction.ops == []


def test_a_username_and_a_chinese_name_next_to_an_address_are_still_found() -> None:
    extraction = rules.extract([_message("I met @jake_r today. 张伟的邮箱是zw@qq.com。")])
    assert sorted(op.person.display_name for op in extraction.ops) == ["jake_r", "张伟"]


def test_the_llm_archivist_sees_masked_text_and_its_bio_is_masked(
        client_a: tuple[APIClient, Tenant], django_capture_on_commit_callbacks: Any, settings: Any,
        llm: OpenAICompatServer) -> None:
    settings.SENSITIVE_POLICY = "keep"
    client, _ = client_a
    llm.script_chat({"facts": []}, {"people_operations": [{"op": "Added", "person": {
        "display_name": "Boris Petrov", "circle": "Friends", "bio": f"Lent the user his card {CARD}."}}]})
    _post_and_extract(client, django_capture_on_commit_callbacks, f"My friend Boris Petrov lent me his card {CARD}.")
    prompts = json.dumps(llm.chat_requests, ensure_ascii=False)
    assert CARD not in prompts and "[card •••• 4242]" in prompts
    assert [p["bio"] for p in _people(client)] == ["Lent the user his card [card •••• 4242]."]
