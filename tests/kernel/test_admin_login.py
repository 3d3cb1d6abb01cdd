"""Admin login throttling (django-axes): a username+address pair is locked after a few failures."""

from __future__ import annotations

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client

LOGIN = "/admin/login/"
PASSWORD = "correct horse battery staple"


@pytest.fixture
def staff(db: None, settings) -> str:
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # speed only
    get_user_model().objects.create_user("editor", password=PASSWORD, is_staff=True)
    return "editor"


def attempt(username: str, password: str, address: str = "127.0.0.1") -> int:
    return Client(REMOTE_ADDR=address).post(LOGIN, {"username": username, "password": password,
                                                    "next": "/admin/"}).status_code


def test_admin_login_locks_a_username_and_address_after_the_failure_limit(staff: str) -> None:
    limit = django_settings.AXES_FAILURE_LIMIT
    assert 3 <= limit <= 10
    # The form with its error, until the failure that reaches the limit: that one locks.
    assert [attempt(staff, "wrong") for _ in range(limit)] == [200] * (limit - 1) + [429]
    # Locked: even the right password is refused now, and not checked at all.
    assert attempt(staff, PASSWORD) == 429
    assert attempt(staff, "wrong") == 429
    # The lock is per username and address: the same user elsewhere, or another user here, may try.
    assert attempt(staff, PASSWORD, address="10.0.0.2") == 302
    get_user_model().objects.create_user("other", password=PASSWORD, is_staff=True)
    assert attempt("other", PASSWORD) == 302


def test_a_successful_admin_login_clears_the_failure_count(staff: str) -> None:
    limit = django_settings.AXES_FAILURE_LIMIT
    for _ in range(limit - 1):
        assert attempt(staff, "wrong") == 200
    assert attempt(staff, PASSWORD) == 302
    for _ in range(limit - 1):
        assert attempt(staff, "wrong") == 200
    assert attempt(staff, PASSWORD) == 302  # without the reset this would be failure number `limit`+


def test_api_requests_are_not_counted_as_login_failures(staff: str) -> None:
    from axes.models import AccessAttempt

    bad = Client(HTTP_AUTHORIZATION="Bearer mh_nope")
    for _ in range(django_settings.AXES_FAILURE_LIMIT + 2):
        assert bad.get("/api/v1/users/u1/sessions/s1/messages").status_code == 401
    assert AccessAttempt.objects.count() == 0
    assert attempt(staff, PASSWORD) == 302
