"""A staff reviewer without superuser rights sees and does only what their permissions allow.

Django offers an admin action to everyone who can open the list page, i.e. with the *view*
permission alone, unless the action names the permissions it needs."""

from __future__ import annotations

import pytest
from django.contrib import admin
from django.contrib.auth.models import Permission, User
from django.test import Client, RequestFactory

from memoryhub.models import ApiKey, Tenant
from profiles.models import UserProfile

pytestmark = pytest.mark.django_db


def staff_with(*codenames: str) -> User:
    user = User.objects.create_user("reviewer", password="pw-reviewer-1", is_staff=True)
    user.user_permissions.set(Permission.objects.filter(codename__in=codenames))
    return User.objects.get(pk=user.pk)  # fresh: the permission cache is per instance


def client_of(user: User) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_view_only_staff_are_offered_no_action_that_writes() -> None:
    """Every model admin of ours: a reviewer who may only view (every model) gets no action. (django-axes'
    own "delete expired attempts" is left as that package ships it.)"""
    user = staff_with(*Permission.objects.filter(codename__startswith="view_").values_list("codename", flat=True))
    request = RequestFactory().get("/admin/")
    request.user = user
    offered = {f"{model._meta.label}.{name}" for model, model_admin in admin.site._registry.items()
               for name in model_admin.get_actions(request) if model._meta.app_label != "axes"}
    assert offered == set()


def test_view_only_staff_cannot_mint_an_api_key(tenant: Tenant) -> None:
    """`view_tenant` alone ran "Create an API key": a key with every scope for any tenant."""
    client = client_of(staff_with("view_tenant"))
    before = ApiKey.objects.count()
    response = client.post("/admin/memoryhub/tenant/", {"action": "create_api_key", "_selected_action": [tenant.pk]},
                           follow=True)
    assert response.status_code == 200
    assert ApiKey.objects.count() == before
    assert b"mh_" not in response.content


def test_view_only_staff_cannot_revoke_keys(tenant: Tenant) -> None:
    key = ApiKey.objects.get(tenant=tenant)
    client = client_of(staff_with("view_apikey"))
    client.post("/admin/memoryhub/apikey/", {"action": "revoke", "_selected_action": [key.pk]}, follow=True)
    key.refresh_from_db()
    assert key.revoked_at is None and key.is_active


def test_view_only_staff_cannot_approve_a_fact(tenant: Tenant) -> None:
    fact = UserProfile.objects.create(tenant=tenant, user_id="u1", key="location", value="Lisbon", confidence=0.5,
                                      source="llm", status=UserProfile.Status.PENDING)
    client = client_of(staff_with("view_userprofile"))
    client.post("/admin/profiles/userprofile/", {"action": "approve", "_selected_action": [fact.pk]}, follow=True)
    fact.refresh_from_db()
    assert fact.status == UserProfile.Status.PENDING


def test_staff_who_may_change_keep_their_actions(tenant: Tenant) -> None:
    user = staff_with("view_apikey", "change_apikey", "view_tenant", "add_apikey")
    request = RequestFactory().get("/admin/")
    request.user = user
    assert "revoke" in admin.site._registry[ApiKey].get_actions(request)
    assert "create_api_key" in admin.site._registry[Tenant].get_actions(request)
    key = ApiKey.objects.get(tenant=tenant)
    client_of(user).post("/admin/memoryhub/apikey/", {"action": "revoke", "_selected_action": [key.pk]})
    key.refresh_from_db()
    assert key.revoked_at is not None


def test_the_dashboard_shows_a_reviewer_only_the_queues_they_may_view(tenant: Tenant) -> None:
    """The home page listed every queue's oldest item ("u1: hometown = Kiev") and today's decisions to any
    staff login, whatever its permissions."""
    from profiles import services as profile_services

    fact = profile_services.fact_upsert(tenant=tenant, user_id="u1", key="hometown", value="Kiev", confidence=0.4,
                                        source=UserProfile.Source.RULES).fact
    profile_services.fact_reject(fact=fact, reviewer=None, reason="no")
    profile_services.fact_upsert(tenant=tenant, user_id="u1", key="pet", value="a cat named Miso", confidence=0.4,
                                 source=UserProfile.Source.RULES)

    home = client_of(staff_with("view_knowledgeedit")).get("/admin/").content.decode()
    assert "Lore edits waiting for an editor" in home
    assert "Miso" not in home and "Kiev" not in home and "Facts waiting for review" not in home

    home = client_of(User.objects.create_user("fact-reviewer", is_staff=True)).get("/admin/").content.decode()
    assert "Facts waiting for review" not in home

    reviewer = User.objects.get(username="fact-reviewer")
    reviewer.user_permissions.set(Permission.objects.filter(codename="view_userprofile"))
    home = client_of(User.objects.get(pk=reviewer.pk)).get("/admin/").content.decode()
    assert "a cat named Miso" in home and "Kiev" in home
