"""Merges: what a merge combines, what it moves, and undo bringing both people back exactly."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from memoryhub.exceptions import ApplicationError
from memoryhub.models import Tenant
from people import services
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMention, PersonMerge, PersonRelation
from tests.concurrency import at_once, errors_of
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

MakePerson = Callable[..., Person]


@pytest.fixture
def reviewer(db: None) -> User:
    return User.objects.create_user("reviewer", is_staff=True)


def row(person: Person) -> dict:
    """Every column of a person as stored, vectors as lists."""
    person = Person.objects.get(pk=person.pk)
    data = services.snapshot(person)
    data["id"] = person.pk
    return data


def test_merge_unites_aliases_sums_mentions_combines_bios_and_widens_dates(make_person: MakePerson) -> None:
    now = timezone.now()
    target = make_person("Мария", aliases=["Маша"], bio="Подруга с университета.", mentions=4,
                         first_seen=now - timedelta(days=10), last_seen=now - timedelta(days=5))
    source = make_person("Мария Иванова", aliases=["Гелечка"], bio="Работает в Сбере.", mentions=3,
                         first_seen=now - timedelta(days=30), last_seen=now, circle="Friends")
    services.person_merge(source=source, target=target, reviewer=None)
    target.refresh_from_db()
    source.refresh_from_db()
    assert target.display_name == "Мария Иванова"  # the fuller name wins
    assert target.aliases == ["Мария", "Маша", "Гелечка"]
    assert target.mention_count == 7
    assert target.bio == "Подруга с университета. Работает в Сбере."
    assert (target.first_seen, target.last_seen) == (now - timedelta(days=30), now)
    assert target.circle == "Friends"  # the target's was the default, Other
    assert (source.status, source.merged_into_id) == (Person.Status.MERGED, target.pk)
    assert source.display_name == "Мария Иванова" and source.mention_count == 3  # the tombstone is untouched


def test_merge_inherits_username_and_telegram_id_only_when_the_target_has_none(make_person: MakePerson) -> None:
    target = make_person("Пётр")
    source = make_person("Петя", username="petya", telegram_id=42)
    services.person_merge(source=source, target=target, reviewer=None)
    target.refresh_from_db()
    assert (target.username, target.telegram_id) == ("petya", 42)
    assert target.display_name == "Пётр" and target.aliases == ["Петя"]  # the full form stays


def test_merge_moves_relations_and_mentions(tenant: Tenant, make_person: MakePerson) -> None:
    target, source, wife = make_person("Петров"), make_person("Иван Петрович"), make_person("Мария")
    services.relation_upsert(subject=wife, object=source, kind="spouse", label="жена")
    services.relation_upsert(subject=source, object=target, kind="colleague")  # would become a self-loop: stays
    message = append_messages(tenant, "u1", "s1", ["Иван Петрович звонил"]).created[0]
    PersonMention.objects.create(tenant=tenant, user_id="u1", person=source, message=message)
    merge = services.person_merge(source=source, target=target, reviewer=None)
    assert PersonRelation.objects.get(kind="spouse").object_id == target.pk
    assert PersonRelation.objects.get(kind="colleague").subject_id == source.pk
    assert PersonMention.objects.get().person_id == target.pk
    assert len(merge.moved["relations_object"]) == 1 and len(merge.moved["mentions"]) == 1


def test_merge_then_undo_restores_both_people_exactly(tenant: Tenant, make_person: MakePerson,
                                                      reviewer: User) -> None:
    target = make_person("Мария", bio="Подруга с университета.", mentions=4, circle="Friends")
    source = make_person("Маша", username="masha", telegram_id=9, bio="Любит кошек.", mentions=2)
    # Microseconds below a millisecond, which a snapshot in milliseconds lost on undo.
    Person.objects.filter(pk=source.pk).update(first_seen=datetime(2024, 5, 1, 10, 0, 0, 412, tzinfo=UTC))
    other = make_person("Петров")
    services.relation_upsert(subject=source, object=other, kind="colleague")
    message = append_messages(tenant, "u1", "s1", ["Маша звонила"]).created[0]
    PersonMention.objects.create(tenant=tenant, user_id="u1", person=source, message=message)
    proposal = services.merge_proposal_create(source=source, target=target, rule="diminutive", score=0.85,
                                              evidence=[{"rule": "diminutive"}])
    side = services.merge_proposal_create(source=source, target=other, rule="fuzzy", score=0.8, evidence=[])
    before = {"target": row(target), "source": row(source)}

    merge = services.merge_proposal_approve(proposal=proposal, reviewer=reviewer)
    assert row(target) != before["target"]
    side.refresh_from_db()
    assert side.status == MergeProposal.Status.SUPERSEDED

    services.person_merge_undo(merge=merge, reviewer=reviewer)
    after = {"target": row(target), "source": row(source)}
    for who in ("target", "source"):
        vec_before, vec_after = before[who].pop("embedding"), after[who].pop("embedding")
        assert after[who] == before[who]
        assert np.array_equal(np.asarray(vec_before, dtype=np.float32), np.asarray(vec_after, dtype=np.float32))
    assert PersonRelation.objects.get().subject_id == source.pk
    assert PersonMention.objects.get().person_id == source.pk
    side.refresh_from_db()
    proposal.refresh_from_db()
    assert (side.status, proposal.status) == (MergeProposal.Status.PENDING, MergeProposal.Status.UNDONE)
    merge.refresh_from_db()
    assert merge.undone_by == reviewer and merge.undone_at is not None
    assert list(PeopleAuditEntry.objects.order_by("pk").values_list("action", "actor_label")) == [
        ("merge_approved", "admin:reviewer"), ("merge_undone", "admin:reviewer")]


def test_merged_mention_count_survives_the_next_archival_run(tenant: Tenant) -> None:
    first = append_messages(tenant, "u1", "s1", ["Мой коллега Пётр Иванов помог с релизом.", "Пётр Иванов молодец.",
                                                  "Вчера Петя Иванов тоже помог."])
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=first.created)
    proposal = MergeProposal.objects.get()
    services.merge_proposal_approve(proposal=proposal, reviewer=None)
    merged = Person.objects.get(status=Person.Status.ACTIVE)
    assert merged.mention_count == 3
    later = append_messages(tenant, "u1", "s1", ["Пётр Иванов сегодня в отпуске."])
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=later.created)
    merged.refresh_from_db()
    assert merged.mention_count == 4
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 1


def test_undo_is_refused_when_the_merged_person_changed_unless_forced(make_person: MakePerson) -> None:
    target, source = make_person("Мария"), make_person("Маша")
    merge = services.person_merge(source=source, target=target, reviewer=None)
    services.person_update(person=target, actor=None, actor_label="api", bio="Соседка по даче.")
    with pytest.raises(ApplicationError) as refused:
        services.person_merge_undo(merge=merge, reviewer=None)
    assert refused.value.code == "changed_since_merge" and "bio" in refused.value.extra["changed"]
    services.person_merge_undo(merge=merge, reviewer=None, force=True)
    target.refresh_from_db()
    assert target.bio == "Мария" and Person.objects.get(pk=source.pk).status == Person.Status.ACTIVE
    audit = PeopleAuditEntry.objects.get(action="merge_undone")
    assert audit.details["discarded"]["bio"] == "Соседка по даче."


def test_undo_waits_for_later_merges_of_the_same_person(make_person: MakePerson) -> None:
    target, first, second = make_person("Мария"), make_person("Маша"), make_person("Маня")
    early = services.person_merge(source=first, target=target, reviewer=None)
    late = services.person_merge(source=second, target=target, reviewer=None)
    with pytest.raises(ApplicationError) as refused:
        services.person_merge_undo(merge=early, reviewer=None)
    assert refused.value.code == "undo_later_merge_first"
    services.person_merge_undo(merge=late, reviewer=None)
    services.person_merge_undo(merge=early, reviewer=None)
    assert Person.objects.filter(status=Person.Status.ACTIVE).count() == 3


def test_reject_is_audited_and_the_pair_is_not_proposed_again(make_person: MakePerson, reviewer: User) -> None:
    mary, masha = make_person("Мария"), make_person("Маша")
    services.person_dedup(person=masha, auto_merge=True)
    proposal = MergeProposal.objects.get()
    services.merge_proposal_reject(proposal=proposal, reviewer=reviewer)
    services.person_dedup(person=masha, auto_merge=True)
    assert list(MergeProposal.objects.values_list("status", flat=True)) == ["rejected"]
    entry = PeopleAuditEntry.objects.get()
    assert (entry.action, entry.actor, entry.proposal_id) == ("merge_rejected", reviewer, proposal.pk)
    with pytest.raises(ApplicationError):
        services.merge_proposal_approve(proposal=proposal, reviewer=reviewer)
    assert mary.pk != masha.pk


def test_merging_people_of_different_users_is_refused(make_person: MakePerson) -> None:
    with pytest.raises(ApplicationError) as refused:
        services.person_merge(source=make_person("Tom", user_id="u2"), target=make_person("Tom"), reviewer=None)
    assert refused.value.code == "other_user"
    assert not PersonMerge.objects.exists()


@pytest.mark.parametrize(("short", "full"), [
    ("Jake", "Jake Miller"), ("Петров", "Сергей Петров"), ("娜娜", "欧阳娜娜"),
])
def test_an_automatic_merge_leaves_an_editors_pending_proposal_pending(
    make_person: MakePerson, reviewer: User, short: str, full: str
) -> None:
    first = make_person(short)
    fuller = make_person(full)
    asked = services.merge_proposal_create(source=first, target=fuller, rule="name_part", score=0.7,
                                           evidence=[{"rule": "name_part"}], origin=MergeProposal.Origin.EDIT)
    again = make_person(short, mentions=3)  # the same name found again: an exact key, merged by nobody
    assert services.person_dedup(person=again, auto_merge=True)["merged"] == 1
    first.refresh_from_db()
    asked.refresh_from_db()
    assert first.merged_into_id == again.pk
    # Still the editor's question, now about the person the first one became part of.
    assert (asked.status, asked.decided_at, asked.decided_by) == (MergeProposal.Status.PENDING, None, None)
    assert (asked.source_id, asked.target_id) == (again.pk, fuller.pk)
    assert not PeopleAuditEntry.objects.filter(proposal=asked).exists()

    # Undoing the automatic merge gives the question back to the person it was about.
    services.person_merge_undo(merge=PersonMerge.objects.get(source=first), reviewer=reviewer)
    asked.refresh_from_db()
    assert (asked.status, asked.source_id) == (MergeProposal.Status.PENDING, first.pk)


@pytest.mark.parametrize(("a_name", "b_name"), [("Kate", "Katherine"), ("Маша", "Мария"), ("小王", "王伟")])
def test_an_exact_key_does_not_merge_a_pair_an_editor_is_deciding_or_decided_apart(
    make_person: MakePerson, reviewer: User, a_name: str, b_name: str
) -> None:
    a, b = make_person(a_name), make_person(b_name, mentions=2)
    asked = services.merge_proposal_create(source=a, target=b, rule="diminutive", score=0.85, evidence=[])
    services.person_update(person=b, actor=None, actor_label="api", aliases=[a_name])  # now an exact alias
    assert services.person_dedup(person=a, auto_merge=True) == {"merged": 0, "proposed": 0}
    asked.refresh_from_db()
    assert asked.status == MergeProposal.Status.PENDING
    assert "alias" in [e["rule"] for e in asked.evidence]  # the exact key is evidence for the reviewer
    assert Person.objects.get(pk=a.pk).status == Person.Status.ACTIVE

    services.merge_proposal_reject(proposal=asked, reviewer=reviewer)
    assert services.person_dedup(person=a, auto_merge=True)["merged"] == 0
    assert Person.objects.get(pk=a.pk).status == Person.Status.ACTIVE


def test_a_proposal_whose_person_was_merged_since_is_approved_for_the_survivor(
    make_person: MakePerson, reviewer: User
) -> None:
    first, fuller = make_person("Jake"), make_person("Jake Miller")
    asked = services.merge_proposal_create(source=first, target=fuller, rule="name_part", score=0.7, evidence=[])
    # Another pending question about the survivor already: the first one cannot be re-pointed.
    survivor = make_person("Jake", mentions=3)
    services.merge_proposal_create(source=survivor, target=fuller, rule="name_part", score=0.7, evidence=[])
    services.person_dedup(person=survivor, auto_merge=True)
    asked.refresh_from_db()
    assert (asked.status, asked.source_id) == (MergeProposal.Status.PENDING, first.pk)
    merge = services.merge_proposal_approve(proposal=asked, reviewer=reviewer)
    assert (merge.source_id, merge.target_id) == (survivor.pk, fuller.pk)


@pytest.mark.parametrize(("fuller", "short"), [("Hannah Miller", "Hannah"), ("Сергей Петров", "Петров")])
def test_a_merge_proposal_says_the_name_the_merge_keeps(make_person: MakePerson, reviewer: User, admin_client,
                                                        fuller: str, short: str) -> None:
    """The review queue read "merge Hannah Miller into Hannah", and the person left was "Hannah
    Miller": the fuller name wins, which the reviewer is now told beforehand."""
    from people import selectors

    source, target = make_person(fuller), make_person(short, mentions=4)
    asked = services.merge_proposal_create(source=source, target=target, rule="name_part", score=0.9, evidence=[])
    assert selectors.review_describe(asked) == f"u1: merge {fuller} into {short}, kept as {fuller} (name_part, 0.90)"
    listing = admin_client.get("/admin/people/mergeproposal/")
    assert listing.status_code == 200 and f'<td class="field-kept_as">{fuller}</td>' in listing.content.decode()
    deciding = timezone.now()
    services.merge_proposal_approve(proposal=asked, reviewer=reviewer)
    assert Person.objects.get(pk=target.pk).display_name == fuller
    # Decided, it still reads as the reviewer saw it: not "merge Hannah Miller into Hannah Miller".
    asked = MergeProposal.objects.get(pk=asked.pk)
    assert selectors.review_describe(asked) == f"u1: merge {fuller} into {short}, kept as {fuller} (name_part, 0.90)"
    [decided] = [d for d in selectors.review_decided_since(deciding) if "merge proposal" in d.what]
    assert decided.what.endswith(f"u1 {fuller} → {short}")
    # Where the target's name stays, nothing more is said.
    other = services.merge_proposal_create(source=make_person("Jon"), target=make_person("Jon Snow"),
                                           rule="name_part", score=0.8, evidence=[])
    assert selectors.review_describe(other) == "u1: merge Jon into Jon Snow (name_part, 0.80)"


@pytest.mark.django_db(transaction=True)
def test_a_merge_decided_while_the_client_edits_one_of_the_two_never_deadlocks(make_person) -> None:
    """The edit locked its person, then (its dedup) the pair's pending proposal; the approval locked the
    proposal, then the pair: each held what the other wanted (`deadlock detected`, a 500 on one side).
    Both now take the user's lock first."""
    pairs = []
    for i in range(6):
        source = make_person("Alex", user_id=f"u{i}", bio="Plays chess.")
        target = make_person("Alexander", user_id=f"u{i}", bio="My colleague.")
        pairs.append((services.merge_proposal_create(source=source, target=target, rule="diminutive", score=0.85,
                                                     evidence=[{"rule": "diminutive"}]), source))
    errors: list[BaseException] = []
    for proposal, source in pairs:
        errors += errors_of(at_once(
            lambda p=proposal: services.merge_proposal_approve(proposal=p, reviewer=None, actor_label="editor"),
            lambda s=source: services.person_update(person=s, actor=None, actor_label="client",
                                                    bio="Plays chess on Sundays.")))
    # "merged" (the edit came after the approval) is a clean 4xx; a deadlock is not.
    errors = [e for e in errors if not isinstance(e, ApplicationError)]
    assert not errors, errors
    assert MergeProposal.objects.filter(status=MergeProposal.Status.APPROVED).count() == len(pairs)


@pytest.mark.django_db(transaction=True)
def test_a_merge_approved_while_a_client_deletes_its_target_leaves_no_orphan(make_person) -> None:
    """The deletion and the approval take the user's lock first: whichever comes second finds the other's
    result (the proposal gone, or the person merged into one about to go) and nothing is left half-done:
    no tombstone without its survivor, no proposal or merge naming a deleted person."""
    from people.models import PersonMerge

    for i in range(6):
        source = make_person("Alex", user_id=f"u{i}", bio="Plays chess.")
        target = make_person("Alexander", user_id=f"u{i}", bio="My colleague.")
        proposal = services.merge_proposal_create(source=source, target=target, rule="diminutive", score=0.85,
                                                  evidence=[{"rule": "diminutive"}])
        outcomes = at_once(
            lambda p=proposal: services.merge_proposal_approve(proposal=p, reviewer=None, actor_label="editor"),
            lambda t=target: services.person_delete(person=t, actor=None, actor_label="client"))
        # The loser's refusal is a clean 4xx (the proposal or the person no longer there), never a 500.
        assert not [e for e in errors_of(outcomes) if not isinstance(e, ApplicationError)], outcomes
        assert not errors_of(outcomes[1:]), outcomes  # the deletion always lands: a merge only adds to it
        left = set(Person.objects.filter(user_id=f"u{i}").values_list("display_name", flat=True))
        assert left <= {"Alex"}, left  # the target is gone; so is its tombstone if the merge came first
        assert not Person.objects.filter(user_id=f"u{i}", merged_into__isnull=False).exists()
        assert not MergeProposal.objects.filter(user_id=f"u{i}").exists()
        assert not PersonMerge.objects.filter(user_id=f"u{i}").exists()


def test_the_name_a_merge_keeps_follows_a_rename(make_person: MakePerson) -> None:
    """The name a merge keeps was cached per pair of people, and people compare by id: after a client
    renamed "Jake Miller" the review queue still promised the old name."""
    from people import selectors

    source, target = make_person("Jake Miller"), make_person("Jake", mentions=4)
    asked = services.merge_proposal_create(source=source, target=target, rule="name_part", score=0.9, evidence=[])
    assert selectors.review_describe(asked).endswith("kept as Jake Miller (name_part, 0.90)")
    services.person_update(person=source, actor=None, actor_label="test", display_name="Jake Millerson")
    asked = MergeProposal.objects.get(pk=asked.pk)
    renamed = "u1: merge Jake Millerson into Jake, kept as Jake Millerson (name_part, 0.90)"
    assert selectors.review_describe(asked) == renamed


def test_an_edit_of_the_names_supersedes_the_proposals_whose_rule_no_longer_holds(make_person: MakePerson) -> None:
    """A proposal says why two people look alike; once the names no longer say it, the question is another
    one (or none), and a reviewer must not approve the old one."""
    priya = make_person("Priya Shah", mentions=5)
    karen = make_person("Karen Lee")
    make_person("Priya")
    services.person_update(person=priya, actor=None, actor_label="api", display_name="Karen Lee")
    by_name = MergeProposal.objects.get(rule="name")
    by_prefix = MergeProposal.objects.get(rule="prefix")  # "Priya" begins her alias "Priya Shah"
    # Not back to her old name: "Karen Lee" stays an alias, so the pair now matches by alias, not by name.
    services.person_update(person=priya, actor=None, actor_label="api", display_name="Priya Lee")
    by_name.refresh_from_db()
    assert by_name.status == MergeProposal.Status.SUPERSEDED
    assert by_name.evidence[-1] == {"rule": "superseded", "detail": "superseded: rule 'name' no longer holds after "
                                    "the names of 'Priya Lee' changed (now alias: shared name or alias 'karen lee')"}
    fresh = MergeProposal.objects.get(status=MergeProposal.Status.PENDING, rule="alias")
    assert {fresh.source_id, fresh.target_id} == {priya.pk, karen.pk} and fresh.origin == MergeProposal.Origin.EDIT
    by_prefix.refresh_from_db()
    assert by_prefix.status == MergeProposal.Status.PENDING  # "priya" begins "priya lee": it still holds
    entry = PeopleAuditEntry.objects.filter(person_id=priya.pk).latest("pk")
    assert [s["id"] for s in entry.details["superseded_proposals"]] == [by_name.pk]
