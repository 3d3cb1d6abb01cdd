"""Fixtures of the people tests: people built through the services, and the LLM on loopback."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from memoryhub.models import Tenant
from people import services
from people.models import Person
from people.ops import PersonDraft
from tests.factories import make_tenant


@pytest.fixture
def make_person(db: None) -> Callable[..., Person]:
    """`make_person("Петров", circle="Work_Inner", bio="…", user_id="u1", tenant=other)`; the tenant defaults
    to "tenant-a", the one the `tenant` and `client_a` fixtures create."""

    def factory(name: str, *, user_id: str = "u1", tenant: Tenant | None = None, mentions: int = 1,
                **fields: Any) -> Person:
        if tenant is None:
            tenant = Tenant.objects.filter(name="tenant-a").first() or make_tenant("tenant-a")[0]
        draft = PersonDraft(display_name=name, **fields)
        person = services.person_create_from_draft(tenant_id=tenant.pk, user_id=user_id, draft=draft)
        if mentions != 1:
            Person.objects.filter(pk=person.pk).update(mention_count=mentions)
            person.refresh_from_db()
        return person

    return factory

