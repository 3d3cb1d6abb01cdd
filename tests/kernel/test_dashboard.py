"""The admin's home page is the review dashboard: what waits, since when, and what was decided today."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.utils import timezone

from people import services as people_services
from people.models import MergeProposal
from people.ops import PersonDraft
from profiles import services as profile_services
from profiles.models import UserProfile

pytestmark = pytest.mark.django_db


def person(tenant, name: str):
    return people_services.person_create_from_draft(tenant_id=tenant.pk, user_id="u1",
                                                    draft=PersonDraft(display_name=name))


def rows(html: str) -> dict[str, str]:
    """queue label -> pending count, as the dashboard shows them."""
    return dict(re.findall(r'<th scope="row"><a href="[^"]+">([^<]+)</a></th>\s*'
                           r'<td class="review-count"><a href="[^"]+"><strong>(\d+)</strong>', html))


def test_the_dashboard_counts_each_queue_shows_the_oldest_and_todays_decisions(admin_client, tenant) -> None:
    old = profile_services.fact_upsert(tenant=tenant, user_id="u1", key="hometown", value="Kiev", confidence=0.4,
                                       source=UserProfile.Source.RULES).fact
    UserProfile.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(days=3))
    newer = profile_services.fact_upsert(tenant=tenant, user_id="u1", key="pet", value="cat",
                                         confidence=0.5, source=UserProfile.Source.RULES).fact
    proposal = people_services.merge_proposal_create(source=person(tenant, "Маша"), target=person(tenant, "Мария"),
                                                     rule="diminutive", score=0.85, evidence=[])
    home = admin_client.get("/admin/").content.decode()
    counts = rows(home)
    assert counts["Facts waiting for review (low confidence or conflicting)"] == "2"
    assert counts["Merge proposals"] == "1"
    assert "u1: hometown = Kiev (0.40)" in home and "3\xa0days ago" in home
    assert "merge Маша into Мария (diminutive, 0.85)" in home
    assert 'href="/admin/profiles/userprofile/?status=pending"' in home
    assert "Nothing decided yet today." in home

    admin_client.post("/admin/profiles/userprofile/", {"action": "approve", "_selected_action": [newer.pk]})
    people_services.merge_proposal_reject(proposal=MergeProposal.objects.get(pk=proposal.pk), reviewer=None)
    home = admin_client.get("/admin/").content.decode()
    assert rows(home)["Facts waiting for review (low confidence or conflicting)"] == "1"
    assert rows(home)["Merge proposals"] == "0"
    assert re.search(r"<td>admin:admin</td><td>fact approved: u1 pets = cat</td>", home)
    assert "merge proposal rejected: u1 Маша → Мария" in home


def test_unsure_typed_memories_are_a_queue_of_the_dashboard(admin_client, tenant) -> None:
    from rag.memory_models import MemoryReview

    MemoryReview.objects.create(tenant=tenant, user_id="alex", conf_uid="neiri", text="Alex might move to Oslo",
                                kind="user", category="FactsAboutUser", confidence=0.4)
    home = admin_client.get("/admin/").content.decode()
    assert rows(home)["Typed memories waiting for review (low confidence)"] == "1"
    assert "alex / neiri: FactsAboutUser “Alex might move to Oslo” (0.40)" in home
    assert 'href="/admin/rag/memoryreview/?status__exact=pending"' in home
    assert admin_client.get("/admin/rag/memoryreview/?status__exact=pending").status_code == 200


def test_an_approval_undone_later_shows_as_both_decisions_once(admin_client, tenant) -> None:
    """Read from the proposal's current status, the approval vanished and the undo showed twice."""
    proposal = people_services.merge_proposal_create(source=person(tenant, "Маша"), target=person(tenant, "Мария"),
                                                     rule="diminutive", score=0.85, evidence=[])
    people_services.merge_proposal_approve(proposal=proposal, reviewer=None)
    people_services.merge_proposal_undo(proposal=MergeProposal.objects.get(pk=proposal.pk), reviewer=None)
    home = admin_client.get("/admin/").content.decode()
    assert home.count("merge proposal approved: u1 Маша → Мария") == 1
    assert home.count("undone") == 1 and "merge undone: u1" in home
