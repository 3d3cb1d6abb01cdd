"""The context blocks rag assembles: the inner circle always, relevant people by reranker or score."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from prometheus_client import REGISTRY

from memoryhub.models import Tenant
from people import selectors
from people.models import Person
from people.reranker import candidate_line
from tests.llm_server import Delay, HTTPError, Malformed, OpenAICompatServer

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]


@pytest.fixture
def circle_of_people(make_person: MakePerson) -> dict[str, Person]:
    return {
        "mom": make_person("Ольга Петровна", circle="Family", bio="Мама, живёт в Туле. Любит сад.", mentions=40),
        "boss": make_person("Петров", circle="Work_Inner", bio="Руководитель проекта X.", mentions=127),
        "maria": make_person("Мария", circle="Friends", bio="Близкая подруга, ходим в театр.", mentions=45),
        "oleg": make_person("Олег", circle="Work_Outer", bio="Клиент из банка, проект X.", mentions=3),
        "vet": make_person("Доктор Айболит", circle="Other", bio="Ветеринар нашей кошки.", mentions=2),
    }


def relevant(tenant: Tenant, query: str, limit: int = 5) -> list[selectors.RelevantPerson]:
    return selectors.relevant_people(tenant_id=tenant.pk, user_id="u1", query=query, limit=limit)


def test_inner_circle_is_family_and_work_inner_with_full_bio_in_seed_format(
    tenant: Tenant, circle_of_people: dict[str, Person]
) -> None:
    mom, boss = circle_of_people["mom"], circle_of_people["boss"]
    assert selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1") == [
        f"[Person:{mom.pk}] Ольга Петровна | Family | 40 mentions | Мама, живёт в Туле. Любит сад.",
        f"[Person:{boss.pk}] Петров | Work_Inner | 127 mentions | Руководитель проекта X.",
    ]
    assert selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u2") == []


def test_a_person_mentioned_once_is_one_mention_in_the_context_and_the_rerankers_list(
    tenant: Tenant, make_person: MakePerson
) -> None:
    sister = make_person("Аня", circle="Family", bio="Сестра.")  # a new person: one mention
    line = f"[Person:{sister.pk}] Аня | Family | 1 mention | Сестра."
    assert selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1") == [line]
    assert candidate_line(sister) == line


def test_without_an_llm_relevant_people_are_chosen_by_score_outside_the_inner_circle(
    tenant: Tenant, circle_of_people: dict[str, Person]
) -> None:
    chosen = relevant(tenant, "Мария звала в театр, а Петров просил отчёт")
    assert [(r.person.display_name, r.chosen_by) for r in chosen] == [("Мария", "score")]
    lines = selectors.relevant_people_for_context(tenant_id=tenant.pk, user_id="u1", query="Мария звала в театр")
    assert lines == [f"[Person:{circle_of_people['maria'].pk}] Мария | Friends | 45 mentions | "
                     "Близкая подруга, ходим в театр."]


def test_reranker_chooses_through_the_llm_and_invented_ids_are_dropped(
    tenant: Tenant, circle_of_people: dict[str, Person], llm: OpenAICompatServer
) -> None:
    maria, oleg = circle_of_people["maria"], circle_of_people["oleg"]
    llm.script_chat({"people": [{"id": f"Person:{oleg.pk}", "reason": "клиент по проекту X"},
                                   {"id": 987654, "reason": "invented"},
                                   {"id": maria.pk, "reason": "подруга"}]})
    before = REGISTRY.get_sample_value("memoryhub_people_reranker_selected_count", {"tenant": str(tenant.pk)}) or 0
    chosen = relevant(tenant, "Олег из банка спрашивал про проект X, Мария тоже")
    assert [(r.person, r.reason, r.chosen_by) for r in chosen] == [
        (oleg, "клиент по проекту X", "reranker"), (maria, "подруга", "reranker")]
    (request,) = llm.chat_requests
    prompt = request["messages"][1]["content"]
    assert f"[Person:{oleg.pk}] Олег | Work_Outer | 3 mentions | Клиент из банка, проект X." in prompt
    assert "Петров" not in prompt and "Ольга Петровна" not in prompt  # the inner circle is already in context
    assert REGISTRY.get_sample_value("memoryhub_people_reranker_selected_count", {"tenant": str(tenant.pk)}) == \
        before + 1


@pytest.mark.parametrize("reply_for", [
    lambda ids: [[{"id": f"[Person:{i}]", "reason": "r"} for i in ids]],  # a wrapped array
    lambda ids: {"selected": {"people": [str(i) for i in ids]}},  # nested object, ids as strings
])
def test_reranker_reply_is_read_tolerantly_and_capped_at_the_limit(
    tenant: Tenant, circle_of_people: dict[str, Person], llm: OpenAICompatServer, reply_for: Any
) -> None:
    ids = [circle_of_people[k].pk for k in ("maria", "oleg", "vet")]
    llm.script_chat(reply_for(ids))
    chosen = relevant(tenant, "Мария, Олег и Доктор Айболит придут в гости", limit=2)
    assert [r.person.pk for r in chosen] == ids[:2]


@pytest.mark.parametrize("failure", [Delay(2.0), Malformed(), HTTPError(500)], ids=["timeout", "garbled", "5xx"])
def test_reranker_failure_falls_back_to_scores(
    tenant: Tenant, circle_of_people: dict[str, Person], llm: OpenAICompatServer, settings: Any, failure: Any
) -> None:
    settings.LLM_MAX_RETRIES = 0  # one attempt of 0.5 s, so the timeout test stays short
    llm.script_chat(failure, failure)
    chosen = relevant(tenant, "Мария звала в театр")
    assert [(r.person.display_name, r.chosen_by) for r in chosen] == [("Мария", "score")]
    assert len(llm.chat_requests) == 1


def test_reranker_has_its_own_short_timeout(
    tenant: Tenant, circle_of_people: dict[str, Person], llm: OpenAICompatServer, settings: Any
) -> None:
    settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES = 20.0, 3  # what the archivist may take
    settings.PEOPLE_RERANK_TIMEOUT = 0.3
    llm.script_chat(Delay(3.0))
    started = time.perf_counter()
    chosen = relevant(tenant, "Мария звала в театр")
    assert time.perf_counter() - started < 2.0
    assert [(r.person.display_name, r.chosen_by) for r in chosen] == [("Мария", "score")]
    assert len(llm.chat_requests) == 1  # no retries on the prompt path


def test_reranker_may_choose_no_one(
    tenant: Tenant, circle_of_people: dict[str, Person], llm: OpenAICompatServer
) -> None:
    llm.script_chat({"people": []})
    assert relevant(tenant, "Олег из банка звонил про проект X") == []


def test_no_candidates_means_no_llm_call(tenant: Tenant, circle_of_people: dict[str, Person],
                                         llm: OpenAICompatServer) -> None:
    assert relevant(tenant, "What should I cook tonight?") == []
    assert llm.chat_requests == []


def test_up_to_the_configured_number_of_relevant_people_not_five(
    tenant: Tenant, make_person: MakePerson, settings
) -> None:
    """Seed 000: the prompt gets 0–10 relevant people; a fixed 5 left the sixth climbing friend out."""
    names = ["Anna", "Boris", "Clara", "Denis", "Elena", "Fedor", "Galina"]
    for name in names:
        make_person(name, circle="Friends", bio="Climbing partner at the bouldering gym.", mentions=3)
    query = "my climbing partner at the bouldering gym"
    assert len(selectors.relevant_people(tenant_id=tenant.pk, user_id="u1", query=query)) == 7
    settings.PEOPLE_RERANK_MAX_PEOPLE = 3
    assert len(selectors.relevant_people(tenant_id=tenant.pk, user_id="u1", query=query)) == 3
    assert len(selectors.relevant_people(tenant_id=tenant.pk, user_id="u1", query=query, limit=2)) == 2


@pytest.mark.parametrize(("name", "aliases", "bio", "shown"), [
    ("Лена", ["жена", "Ленка"], "На выходных ездили с женой Леной в Казань, гуляли по Кремлю.", "Лена (жена)"),
    ("Tom", ["husband", "Tommy"], "We went to the lake with Tom last weekend and he caught a trout.", "Tom (husband)"),
    ("小王", ["老公"], "周末和小王去了杭州，看了西湖。", "小王 (老公)"),
    ("Петров", ["мой начальник", "шеф"], "Петров наконец одобрил отпуск.", "Петров (мой начальник, шеф)"),
    ("Мама", ["mom"], "Мама приехала в гости.", "Мама |"),  # the name says it already
])
def test_a_persons_line_says_who_they_are_to_the_user(
    tenant: Tenant, make_person: MakePerson, name: str, aliases: list[str], bio: str, shown: str
) -> None:
    """QA: a bio is what the user said of someone in the order said; clipped in a small prompt to "На выходных
    ездили…", the inner circle's line no longer told the model that Лена is the wife. The aliases that name a
    relation come after the name; a nickname does not."""
    person = make_person(name, circle="Family", aliases=aliases, bio=bio)
    line = selectors.inner_circle_for_context(tenant_id=tenant.pk, user_id="u1")[0]
    assert line.startswith(f"[Person:{person.pk}] {shown}"), line
    assert "Ленка" not in line and "Tommy" not in line
    assert candidate_line(person).startswith(f"[Person:{person.pk}] {shown}")  # what the reranker sees


def test_a_clipped_inner_circle_line_keeps_the_relation(tenant: Tenant, make_person: MakePerson) -> None:
    from rag.context import context_assemble

    make_person("Лена", circle="Family", aliases=["жена"], mentions=3, bio=(
        "На выходных ездили с женой Леной в Казань, гуляли по Кремлю, ели эчпочмаки. Сегодня ходили с Леной в "
        "Большой театр на «Щелкунчика». Начальник наконец одобрил отпуск на январь, поедем с Леной в Сочи."))
    text = context_assemble(tenant_id=tenant.pk, user_id="u1", query="Как зовут мою жену?", session_id=None,
                            budget_tokens=60).render()
    assert "Лена (жена) | Family" in text, text
