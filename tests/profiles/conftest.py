"""Fixtures of the profiles tests."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractUser
from django.test import Client
from prometheus_client import REGISTRY

from memoryhub.models import Message, Tenant
from tests.factories import append_messages


@pytest.fixture
def say(db: None) -> Callable[..., Message]:
    """Store one message of a user (no archival job is run) and return it."""

    def factory(tenant: Tenant, text: str, *, user_id: str = "u1", role: str = "user",
                session_id: str = "s1") -> Message:
        return append_messages(tenant, user_id, session_id, [(role, text)], run_job=False).created[0]

    return factory


@pytest.fixture
def reviewer(db: None) -> AbstractUser:
    return get_user_model().objects.create_superuser("alice", "alice@example.com", "pw")


@pytest.fixture
def reviewer_client(reviewer: AbstractUser) -> Client:
    """A logged-in superuser, as an editor reviewing facts in the admin would be."""
    client = Client()
    client.force_login(reviewer)
    return client


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0
