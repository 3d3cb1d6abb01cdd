"""Undoing a merge in the admin after the merged person was mentioned again: a page says what changed, and
the editor may undo anyway (the review API's `force`), audited as the API's forced undo is."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from memoryhub.models import Tenant
from people import services
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMerge
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]
QUEUE = "/admin/people/mergeproposal/"
MERGES = "/admin/people/personmerge/"
CONFIRM = "Undo anyway, discarding these changes"

# The person kept by the merge, the one merged into them, and a later turn naming the kept one.
PEOPLE = [
    pytest.param("Anton Orlov", "Anton", "Anton Orlov brought cake today.", id="en"),
    pytest.param("Антон Орлов", "Антон", "Антон Орлов сегодня принёс торт.", id="ru"),
    pytest.param("王强", "小王", "王强今天带了蛋糕。", id="zh"),
]


def merged_then_mentioned(tenant: Tenant, make_person: MakePerson, admin_client: Client, target: str, source: str,
                          turn: str) -> MergeProposal:
    """A proposal approved in the admin, then a turn that mentions the merged person (its count grows)."""
    kept = make_person(target, mentions=3, tenant=tenant)
    proposal = services.merge_proposal_create(source=make_person(source, tenant=tenant), target=kept, rule="manual",
                                              score=1.0, evidence=[])
    assert proposal is not None
    admin_client.post(QUEUE, {"action": "approve", "_selected_action": [proposal.pk]})
    later = append_messages(tenant, "u1", "s1", [turn])
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=later.created)
    kept.refresh_from_db()
    assert kept.mention_count == 5  # 3 + 1 merged, + the new turn
    proposal.refresh_from_db()
    assert proposal.status == MergeProposal.Status.APPROVED
    return proposal


def assert_undone_by_force(proposal: MergeProposal, reason: str) -> None:
    proposal.refresh_from_db()
    assert proposal.status == MergeProposal.Status.UNDONE
    assert Person.objects.get(pk=proposal.target_id).mention_count == 3
    assert Person.objects.get(pk=proposal.source_id).status == Person.Status.ACTIVE
    entry = PeopleAuditEntry.objects.get(action="merge_undone")
    assert (entry.actor.username, entry.actor_label) == ("admin", "admin:admin")
    assert entry.details["forced"] is True and entry.details["discarded"]["mention_count"] == 5
    assert entry.details.get("reason", "") == reason


@pytest.mark.parametrize(("target", "source", "turn"), PEOPLE)
def test_the_undo_action_asks_then_undoes_anyway(tenant: Tenant, make_person: MakePerson, admin_client: Client,
                                                 target: str, source: str, turn: str) -> None:
    proposal = merged_then_mentioned(tenant, make_person, admin_client, target, source, turn)

    page = admin_client.post(QUEUE, {"action": "undo", "_selected_action": [proposal.pk]})
    text = page.content.decode()
    assert page.status_code == 200 and CONFIRM in text
    assert "mention_count" in text and "<td>4</td><td>5</td>" in text  # at the merge → now
    assert target in text and source in text
    proposal.refresh_from_db()
    assert proposal.status == MergeProposal.Status.APPROVED  # nothing undone before the editor confirms

    done = admin_client.post(QUEUE, {"action": "undo", "_selected_action": [proposal.pk], "apply": "1",
                                     "reason": "wrong merge"}, follow=True)
    assert "1 merge(s) undone" in done.content.decode()
    assert_undone_by_force(proposal, "wrong merge")


def test_the_undo_button_on_the_proposal_page_asks_too(tenant: Tenant, make_person: MakePerson,
                                                       admin_client: Client) -> None:
    proposal = merged_then_mentioned(tenant, make_person, admin_client, *PEOPLE[0].values)
    page = admin_client.post(f"{QUEUE}{proposal.pk}/change/", {"_undo": "1"})
    text = page.content.decode()
    assert page.status_code == 200 and CONFIRM in text
    # The confirmation goes through the changelist's action, not back to the change form.
    assert f'action="{QUEUE}"' in text
    admin_client.post(QUEUE, {"action": "undo", "_selected_action": [proposal.pk], "apply": "1", "reason": ""})
    assert_undone_by_force(proposal, "")


def test_the_merges_list_asks_then_undoes_anyway(tenant: Tenant, make_person: MakePerson,
                                                 admin_client: Client) -> None:
    proposal = merged_then_mentioned(tenant, make_person, admin_client, *PEOPLE[1].values)
    merge = PersonMerge.objects.get()
    page = admin_client.post(MERGES, {"action": "undo", "_selected_action": [merge.pk]})
    assert page.status_code == 200 and CONFIRM in page.content.decode()
    assert f'action="{MERGES}"' in page.content.decode()
    admin_client.post(MERGES, {"action": "undo", "_selected_action": [merge.pk], "apply": "1",
                               "reason": "не тот Антон"})
    merge.refresh_from_db()
    assert merge.undone_by is not None and merge.undone_by.username == "admin"
    assert_undone_by_force(proposal, "не тот Антон")
