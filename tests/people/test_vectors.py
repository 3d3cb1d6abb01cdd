"""People's vectors come from the embedder outside any transaction: the archivist's job, a client's
PATCH, an editor's edit in the admin and a reviewed merge all embed after their commit. The
embedder here is the loopback server, which looks at the database while it answers."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from django.db import connection
from django.test import Client

from memoryhub import registry
from memoryhub.models import Tenant
from people import selectors, services
from people.models import MergeProposal, Person
from people.ops import PersonDraft
from tests.factories import append_messages
from tests.llm_server import HTTPError, OpenAICompatServer, deterministic_embedding

MakePerson = Callable[..., Person]
DIMENSIONS = 384


@dataclass
class Watch:
    """Every embedding request: its texts, and the states of the test database's other connections."""

    calls: list[tuple[list[str], list[str]]] = field(default_factory=list)
    failing: int = 0  # answer the next requests with a 500: the embedder is away

    def texts(self) -> list[str]:
        return [text for texts, _ in self.calls for text in texts]

    def inside_a_transaction(self) -> list[list[str]]:
        return [texts for texts, states in self.calls if any(s.startswith("idle in transaction") for s in states)]


@pytest.fixture
def watched_embedder(settings: Any, llm_server: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch) -> Watch:
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_BASE_URL = llm_server.base_url
    settings.EMBEDDING_API_KEY = "test"
    settings.LLM_MAX_RETRIES = 0
    # Only the extract steps: the index step's chunks are not people (and are rag's business).
    monkeypatch.setattr(registry, "job_steps", [s for s in registry.job_steps if s.kind == registry.EXTRACT])
    watch = Watch()

    def answer(request: dict[str, Any]) -> list[list[float]]:
        # Runs in the server's thread, on its own connection: is the caller's still in a transaction?
        try:
            with connection.cursor() as cursor:
                cursor.execute("SELECT state FROM pg_stat_activity WHERE datname = current_database() "
                               "AND backend_type = 'client backend' AND pid <> pg_backend_pid()")
                states = [row[0] or "" for row in cursor.fetchall()]
        finally:
            connection.close()
        texts = [request["input"]] if isinstance(request["input"], str) else list(request["input"])
        watch.calls.append((texts, states))
        if watch.failing:
            watch.failing -= 1
            return HTTPError(500)
        return [deterministic_embedding(text, DIMENSIONS).tolist() for text in texts]

    llm_server.script_embeddings(*[answer] * 200)
    return watch


def vector_of(person: Person) -> np.ndarray:
    person.refresh_from_db()
    assert person.embedding is not None, f"{person} has no vector"
    return np.asarray(person.embedding)


def assert_vector_of_current_text(person: Person) -> None:
    assert np.allclose(vector_of(person), deterministic_embedding(person.embedding_text(), DIMENSIONS), atol=1e-6)


@pytest.mark.django_db(transaction=True)
def test_no_person_is_embedded_inside_a_transaction(
    watched_embedder: Watch, make_person: MakePerson, client_a: tuple[Any, Tenant], admin_client: Client,
) -> None:
    client, tenant = client_a
    # The archivist's job (the rules: no LLM configured): apply, then after embeds.
    append_messages(tenant, "u1", "s1", ["Мой близкий коллега Петров ведёт со мной проект X."], auto_extract=True)
    petrov = Person.objects.get(display_name="Петров")
    assert_vector_of_current_text(petrov)

    # A client's PATCH and an editor's edit in the admin (which wraps its save in a transaction).
    response = client.patch(f"/api/v1/users/u1/people/{petrov.pk}", {"bio": "Руководит проектом X."},
                            format="json")
    assert response.status_code == 200
    assert_vector_of_current_text(petrov)
    tom = make_person("Tom", bio="Climbing partner.")
    form = {"display_name": "Tom", "aliases": "Tommy", "circle": "Friends", "bio": "Climbing partner since 2019.",
            "relations_out-TOTAL_FORMS": "0", "relations_out-INITIAL_FORMS": "0"}
    assert admin_client.post(f"/admin/people/person/{tom.pk}/change/", form).status_code == 302
    assert_vector_of_current_text(tom)

    # A reviewed merge combines two people's text.
    maria, masha = make_person("Мария", bio="Подруга с университета.", mentions=3), make_person("Маша")
    services.person_dedup(person=masha, auto_merge=True)
    services.merge_proposal_approve(proposal=MergeProposal.objects.get(), reviewer=None)
    assert_vector_of_current_text(maria)

    texts = watched_embedder.texts()
    for person in (petrov, tom, maria):
        assert person.embedding_text() in texts
    assert watched_embedder.inside_a_transaction() == []


@pytest.mark.django_db(transaction=True)
def test_a_vector_the_embedder_could_not_give_is_filled_by_the_users_next_job(
    watched_embedder: Watch, make_person: MakePerson, client_a: tuple[Any, Tenant],
) -> None:
    client, tenant = client_a
    tom = make_person("Tom", bio="Climbing partner.")
    watched_embedder.failing = 1
    response = client.patch(f"/api/v1/users/u1/people/{tom.pk}", {"bio": "Climbing partner since 2019."},
                            format="json")
    # The edit is committed; the vector waits. Search by name still finds him.
    assert response.status_code == 200 and response.json()["bio"] == "Climbing partner since 2019."
    tom.refresh_from_db()
    assert tom.embedding is None
    assert [h.person.pk for h in selectors.people_search(tenant_id=tenant.pk, user_id="u1", query="Tom").hits] == [
        tom.pk]

    append_messages(tenant, "u1", "s1", ["My sister Kate called."], auto_extract=True)
    assert_vector_of_current_text(tom)
    assert not Person.objects.filter(embedding__isnull=True).exists()


@pytest.mark.django_db
def test_the_beat_fills_vectors_a_write_left_missing(tenant) -> None:
    from people.tasks import people_vectors_fill

    person = services.person_create_from_draft(tenant_id=tenant.pk, user_id="u1",
                                               draft=PersonDraft(display_name="Maria Lopez", bio="my boss"))
    Person.objects.filter(pk=person.pk).update(embedding=None)  # as an embedder outage leaves it
    assert people_vectors_fill() == 1
    person.refresh_from_db()
    assert person.embedding is not None
    assert people_vectors_fill() == 0
