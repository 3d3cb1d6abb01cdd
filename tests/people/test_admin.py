"""The review console: proposals side by side, approve / reject / undo through the services, audited."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.test import Client

from people import services
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMerge

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]
QUEUE = "/admin/people/mergeproposal/"


@pytest.fixture
def proposal(make_person: MakePerson) -> MergeProposal:
    make_person("Мария", bio="Подруга с университета.", circle="Friends", mentions=5)
    masha = make_person("Маша", bio="Любит кошек.", username="masha")
    services.person_dedup(person=masha, auto_merge=True)
    return MergeProposal.objects.get()


def test_the_queue_and_a_proposal_with_both_profiles_side_by_side(admin_client: Client,
                                                                  proposal: MergeProposal) -> None:
    assert admin_client.get(f"{QUEUE}?status__exact=pending").status_code == 200
    page = admin_client.get(f"{QUEUE}{proposal.pk}/change/").content.decode()
    for text in ("Source (merged away)", "Target (kept)", "Подруга с университета.", "Любит кошек.", "@masha",
                 "diminutive", "Approve: merge source into target"):
        assert text in page


def test_approve_action_merges_and_writes_an_audit_row(admin_client: Client, proposal: MergeProposal) -> None:
    response = admin_client.post(QUEUE, {"action": "approve", "_selected_action": [proposal.pk]}, follow=True)
    assert "1 proposal(s) approved and merged" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == "approved" and proposal.decided_by.username == "admin"
    assert Person.objects.get(pk=proposal.source_id).status == Person.Status.MERGED
    entry = PeopleAuditEntry.objects.get()
    assert (entry.action, entry.actor.username, entry.actor_label, entry.merge_id) == (
        "merge_approved", "admin", "admin:admin", proposal.merge_id)


def test_reject_action_is_audited(admin_client: Client, proposal: MergeProposal) -> None:
    admin_client.post(QUEUE, {"action": "reject", "_selected_action": [proposal.pk]})
    proposal.refresh_from_db()
    assert proposal.status == "rejected"
    assert PeopleAuditEntry.objects.get().action == "merge_rejected"
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 2


def test_undo_action_restores_both_people(admin_client: Client, proposal: MergeProposal) -> None:
    admin_client.post(QUEUE, {"action": "approve", "_selected_action": [proposal.pk]})
    response = admin_client.post(QUEUE, {"action": "undo", "_selected_action": [proposal.pk]}, follow=True)
    assert "1 merge(s) undone" in response.content.decode()
    proposal.refresh_from_db()
    assert proposal.status == "undone"
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 2
    assert list(PeopleAuditEntry.objects.order_by("pk").values_list("action", flat=True)) == [
        "merge_approved", "merge_undone"]


def test_buttons_on_the_proposal_page_decide_it(admin_client: Client, proposal: MergeProposal) -> None:
    url = f"{QUEUE}{proposal.pk}/change/"
    admin_client.post(url, {"_approve": "1"})
    proposal.refresh_from_db()
    assert proposal.status == "approved"
    response = admin_client.post(url, {"_approve": "1"}, follow=True)
    assert "already approved" in response.content.decode()


def test_an_automatic_merge_can_be_undone_from_the_merges_list(admin_client: Client,
                                                               make_person: MakePerson) -> None:
    make_person("Пётр", telegram_id=5, mentions=3)
    services.person_dedup(person=make_person("Peter", telegram_id=5), auto_merge=True)
    merge = PersonMerge.objects.get()
    assert PeopleAuditEntry.objects.get().action == "merged_automatically"
    admin_client.post("/admin/people/personmerge/", {"action": "undo", "_selected_action": [merge.pk]})
    merge.refresh_from_db()
    assert merge.undone_by.username == "admin"
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 2


def test_an_editor_setting_the_circle_locks_it_and_is_audited(admin_client: Client, make_person: MakePerson) -> None:
    person = make_person("Tom", bio="Climbing partner.")
    page = admin_client.get("/admin/people/person/?circle__exact=Other&mentions=1")
    assert page.status_code == 200 and "Tom" in page.content.decode()
    form = {"display_name": "Tom", "aliases": "Tommy", "circle": "Friends", "bio": "Climbing partner.",
            "relations_out-TOTAL_FORMS": "0", "relations_out-INITIAL_FORMS": "0"}
    response = admin_client.post(f"/admin/people/person/{person.pk}/change/", form)
    assert response.status_code == 302
    person.refresh_from_db()
    assert (person.circle, person.circle_locked, person.aliases) == ("Friends", True, ["Tommy"])
    entry = PeopleAuditEntry.objects.get()
    assert (entry.action, entry.actor_label) == ("person_edited", "admin:admin")


def test_the_evidence_of_a_proposal_is_shown_once(admin_client: Client, proposal: MergeProposal) -> None:
    page = admin_client.get(f"{QUEUE}{proposal.pk}/change/").content.decode()
    assert "diminutive" in page  # by the template, beside both profiles
    assert "field-evidence" not in page  # and not again as a raw JSON field


def test_a_persons_page_shows_the_messages_that_mention_them(admin_client: Client, make_person: MakePerson,
                                                              tenant) -> None:
    from people.models import PersonMention
    from tests.factories import append_messages

    person = make_person("Lena", bio="Sister.")
    message = append_messages(tenant, "u1", "s9", ["Lena moved to Porto last spring."]).created[0]
    PersonMention.objects.create(tenant=tenant, user_id="u1", person=person, message=message)
    page = admin_client.get(f"/admin/people/person/{person.pk}/change/").content.decode()
    assert "Lena moved to Porto last spring." in page and "s9" in page


def test_an_editor_proposes_merging_two_chosen_people(admin_client: Client, make_person: MakePerson) -> None:
    kept = make_person("Elena Petrova", mentions=6)
    other = make_person("Helen P.", mentions=1)
    response = admin_client.post("/admin/people/person/", {"action": "propose_merge",
                                                           "_selected_action": [kept.pk, other.pk]}, follow=True)
    proposal = MergeProposal.objects.get()
    assert (proposal.source_id, proposal.target_id, proposal.origin) == (other.pk, kept.pk, "edit")
    assert f"Merge proposal <a href=\"/admin/people/mergeproposal/{proposal.pk}/change/\">#{proposal.pk}</a>" \
        in response.content.decode()
    response = admin_client.post("/admin/people/person/", {"action": "propose_merge",
                                                           "_selected_action": [kept.pk]}, follow=True)
    assert "Select exactly two people of the same user." in response.content.decode()


def test_saving_a_person_says_when_it_opened_a_merge_proposal(admin_client: Client, make_person: MakePerson) -> None:
    make_person("Мария", bio="Подруга с университета.", mentions=5)
    other = make_person("Тамара", bio="Соседка.")
    form = {"display_name": "Маша", "aliases": "", "circle": other.circle, "bio": "Соседка.",
            "relations_out-TOTAL_FORMS": "0", "relations_out-INITIAL_FORMS": "0"}
    response = admin_client.post(f"/admin/people/person/{other.pk}/change/", form, follow=True)
    proposal = MergeProposal.objects.get()
    assert (proposal.source_id, proposal.status) == (other.pk, "pending")
    assert f"The change opened merge proposal <a href=\"/admin/people/mergeproposal/{proposal.pk}/change/\">" \
        in response.content.decode()


def test_deleting_a_person_in_the_admin_goes_through_the_service(admin_client: Client, make_person: MakePerson) -> None:
    maria, masha = make_person("Мария"), make_person("Маша")
    services.person_merge(source=masha, target=maria, reviewer=None)
    response = admin_client.post(f"/admin/people/person/{maria.pk}/delete/", {"post": "yes"})
    assert response.status_code == 302
    assert not Person.objects.filter(pk__in=[maria.pk, masha.pk]).exists()  # no tombstone left without survivor
    entry = PeopleAuditEntry.objects.get(action="person_deleted")
    assert entry.actor_label.startswith("admin:") and entry.details["merged_ids"] == [masha.pk]
