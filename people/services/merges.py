"""Merges and their review: dedup, proposals, approve / reject, merge and undo.

A merge keeps the source as a tombstone (`status=merged`, `merged_into=target`) and records both
people as they were and the target as it became, plus every row it moved, in a `PersonMerge`; undo
puts all of it back, so the two people return exactly as they were.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
from django.contrib.auth.base_user import AbstractBaseUser
from django.core.serializers.json import DjangoJSONEncoder
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.dateparse import parse_datetime

from memoryhub.exceptions import ApplicationError, NotFound
from people import conf, dedup, metrics
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonMention, PersonMerge, PersonRelation
from people.names import name_key
from people.services.persons import (
    active_person,
    actor_label_for,
    audit,
    combine_bio,
    default_bio,
    derive,
    user_lock,
)
from people.services.vectors import vectors_after_commit

SNAPSHOT_FIELDS = tuple(f.attname for f in Person._meta.concrete_fields if f.attname != "id")
_DATETIME_FIELDS = frozenset(
    f.attname for f in Person._meta.concrete_fields if f.get_internal_type() == "DateTimeField"
)


def snapshot(person: Person) -> dict[str, Any]:
    """Every column of a person (but the id) as JSON; `restore` brings back the identical row."""
    data: dict[str, Any] = {}
    for name in SNAPSHOT_FIELDS:
        value = getattr(person, name)
        if name == "embedding" and value is not None:
            value = [float(x) for x in value]
        elif name in _DATETIME_FIELDS and value is not None:
            # In full: DjangoJSONEncoder keeps milliseconds, so an undo brought back 11:41:18.000412 as
            # 11:41:18 — not the identical row.
            value = value.isoformat()
        data[name] = value
    return json.loads(json.dumps(data, cls=DjangoJSONEncoder))


def restore(person: Person, data: dict[str, Any]) -> None:
    for name in SNAPSHOT_FIELDS:
        value = data[name]
        if name in _DATETIME_FIELDS and value is not None:
            value = parse_datetime(value)
        elif name == "embedding" and value is not None:
            value = np.asarray(value, dtype=np.float32)
        setattr(person, name, value)


def _comparable(data: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in data.items() if k != "embedding"}


# --- merge -----------------------------------------------------------------------------------------------


def _lock_pair(a_id: int, b_id: int) -> tuple[Person, Person]:
    # Always in id order, so two merges of the same pair cannot deadlock.
    rows = {p.pk: p for p in Person.objects.select_for_update().filter(pk__in=sorted({a_id, b_id})).order_by("pk")}
    if a_id not in rows or b_id not in rows:
        raise ApplicationError("Person not found.", code="not_found", status_code=404)
    return rows[a_id], rows[b_id]


def _repoint_proposals(pending: Any, *, source: Person, target: Person) -> list[list[Any]]:
    """Point pending proposals that name `source` at `target`, where the pair stays two people and no
    pending proposal asks the same already; the others keep naming the source, whose approval
    follows it to `target` (`merge_proposal_approve`). Returns [id, side] for undo."""
    repointed: list[list[Any]] = []
    for item in pending.select_for_update():
        side = "source" if item.source_id == source.pk else "target"
        other = item.target_id if side == "source" else item.source_id
        pair = (target.pk, other) if side == "source" else (other, target.pk)
        if other == target.pk or MergeProposal.objects.filter(
                source_id=pair[0], target_id=pair[1], status=MergeProposal.Status.PENDING).exists():
            continue
        MergeProposal.objects.filter(pk=item.pk).update(**{f"{side}_id": target.pk})
        repointed.append([item.pk, side])
    return repointed


def pending_between(a: Person, b: Person) -> MergeProposal | None:
    """The open proposal about these two people, either way round."""
    return MergeProposal.objects.filter(Q(source=a, target=b) | Q(source=b, target=a),
                                        status=MergeProposal.Status.PENDING).first()


def decided_apart(a: Person, b: Person) -> bool:
    """A reviewer rejected merging these two: they are two people, whatever their names say."""
    return MergeProposal.objects.filter(Q(source=a, target=b) | Q(source=b, target=a),
                                        status=MergeProposal.Status.REJECTED).exists()


@transaction.atomic
def person_merge(
    *,
    source: Person,
    target: Person,
    reviewer: AbstractBaseUser | None,
    rule: str = "manual",
    proposal: MergeProposal | None = None,
    actor_label: str | None = None,
    reason: str = "",
) -> PersonMerge:
    """Merge `source` into `target`: aliases united, mention counts summed, bios combined, first/last
    seen widened, username and Telegram id inherited when the target has none, relations and
    mentions moved. The source stays as a tombstone; the returned record can undo it all.

    When the merge changes the target's text its vector is cleared, and embedding it is left to the
    caller, after its commit: `merge_proposal_approve` does, the archivist's after-phase does."""
    user_lock(tenant_id=source.tenant_id, user_id=source.user_id)
    source, target = _lock_pair(source.pk, target.pk)
    if source.pk == target.pk:
        raise ApplicationError("A person cannot be merged into themselves.", code="same_person")
    if (source.tenant_id, source.user_id) != (target.tenant_id, target.user_id):
        raise ApplicationError("Only people of the same user can be merged.", code="other_user")
    if source.status != Person.Status.ACTIVE or target.status != Person.Status.ACTIVE:
        raise ApplicationError("One of the two people was already merged.", code="stale", status_code=409)

    source_before, target_before = snapshot(source), snapshot(target)
    old_text = target.embedding_text()
    display = dedup.merged_display_name(source, target)
    names = [target.display_name, *target.aliases, source.display_name, *source.aliases]
    aliases: list[str] = []
    keys = {name_key(display)}
    for name in names:
        if name_key(name) not in keys:
            aliases.append(name)
            keys.add(name_key(name))
    source_bio = "" if source.bio == default_bio(source.display_name, source.aliases) else source.bio
    target_bio = "" if target.bio == default_bio(target.display_name, target.aliases) else target.bio
    target.display_name, target.aliases = display, aliases
    target.bio = combine_bio(target_bio, source_bio) or default_bio(display, aliases)
    target.username = target.username or source.username
    target.telegram_id = target.telegram_id or source.telegram_id
    if not target.circle_locked and (source.circle_locked or target.circle == Person.Circle.OTHER):
        target.circle = source.circle
    target.circle_locked = target.circle_locked or source.circle_locked
    # Both rows counted distinct mentions, so the merged person was mentioned this many times.
    target.mention_count += source.mention_count
    target.first_seen = min(target.first_seen, source.first_seen)
    target.last_seen = max(target.last_seen, source.last_seen)
    target.updated_at = timezone.now()
    derive(target)
    if target.embedding_text() != old_text:
        # No embedder call here (a network call, and this runs inside the caller's transaction):
        # NULL means "to embed", done after the commit by the caller (see services.vectors).
        target.embedding = None

    moved: dict[str, list[int]] = {"relations_subject": [], "relations_object": [], "mentions": [],
                                   "proposals": []}
    for rel in PersonRelation.objects.filter(subject=source).exclude(object=target):
        if not PersonRelation.objects.filter(subject=target, object_id=rel.object_id, kind=rel.kind).exists():
            moved["relations_subject"].append(rel.pk)
    PersonRelation.objects.filter(pk__in=moved["relations_subject"]).update(subject=target)
    for rel in PersonRelation.objects.filter(object=source).exclude(subject=target):
        if not PersonRelation.objects.filter(subject_id=rel.subject_id, object=target, kind=rel.kind).exists():
            moved["relations_object"].append(rel.pk)
    PersonRelation.objects.filter(pk__in=moved["relations_object"]).update(object=target)
    on_target = PersonMention.objects.filter(person=target).values("message_id")
    moved["mentions"] = list(PersonMention.objects.filter(person=source).exclude(message_id__in=on_target)
                             .values_list("pk", flat=True))
    PersonMention.objects.filter(pk__in=moved["mentions"]).update(person=target)
    others = MergeProposal.objects.filter(Q(source=source) | Q(target=source), status=MergeProposal.Status.PENDING)
    if proposal is not None:
        others = others.exclude(pk=proposal.pk)
    if reviewer is None and proposal is None:
        # Nobody decided this merge: it must not decide anything an editor is still to decide. The
        # pending proposals about the source now ask about the person it became part of.
        moved["proposals_repointed"] = _repoint_proposals(others, source=source, target=target)
    else:
        moved["proposals"] = list(others.values_list("pk", flat=True))
        others.update(status=MergeProposal.Status.SUPERSEDED, decided_at=timezone.now())

    source.status, source.merged_into = Person.Status.MERGED, target
    source.save(update_fields=["status", "merged_into"])
    target.save()
    merge = PersonMerge.objects.create(
        tenant_id=target.tenant_id, user_id=target.user_id, source=source, target=target, rule=rule,
        reviewer=reviewer, source_before=source_before, target_before=target_before,
        target_after=snapshot(target), moved=moved,
    )
    label = actor_label or actor_label_for(reviewer, "archivist")
    action = PeopleAuditEntry.Action.MERGE_APPROVED if reviewer is not None or proposal is not None \
        else PeopleAuditEntry.Action.MERGED_AUTOMATICALLY
    audit(person=target, action=action, actor=reviewer, actor_label=label, merge=merge, proposal=proposal,
          details={"rule": rule, "source": source.pk, "source_name": source.display_name, **_why(reason)})
    metrics.DUPLICATES_MERGED.labels(str(target.tenant_id), "reviewed" if proposal else "automatic").inc()
    return merge


@transaction.atomic
def person_merge_undo(
    *,
    merge: PersonMerge,
    reviewer: AbstractBaseUser | None,
    force: bool = False,
    actor_label: str | None = None,
    reason: str = "",
) -> PersonMerge:
    """Undo a merge: both people exactly as they were before it, moved rows back, closed proposals
    reopened. Refused while a later merge involves the target (undo that first), and, unless
    `force`, when the target changed after the merge (forcing discards those changes; the audit
    row keeps them)."""
    user_lock(tenant_id=merge.tenant_id, user_id=merge.user_id)
    merge = PersonMerge.objects.select_for_update().get(pk=merge.pk)
    if merge.undone_at is not None:
        raise ApplicationError("This merge was already undone.", code="already_undone", status_code=409)
    source, target = _lock_pair(merge.source_id, merge.target_id)
    later = PersonMerge.objects.filter(undone_at__isnull=True, pk__gt=merge.pk).filter(
        Q(target=target) | Q(source=target) | Q(target=source) | Q(source=source))
    if later.exists() or target.status != Person.Status.ACTIVE:
        raise ApplicationError("A later merge involves these people; undo it first.", code="undo_later_merge_first",
                               status_code=409)
    if source.status != Person.Status.MERGED or source.merged_into_id != target.pk:
        raise ApplicationError("The source is no longer this merge's tombstone.", code="stale", status_code=409)
    current = snapshot(target)
    changed = sorted(k for k, v in _comparable(current).items() if merge.target_after.get(k) != v)
    if changed and not force:
        raise ApplicationError(
            f"The merged person changed after the merge ({', '.join(changed)}); undoing discards that.",
            code="changed_since_merge", status_code=409, extra={"changed": changed},
        )
    restore(target, merge.target_before)
    restore(source, merge.source_before)
    target.save()
    source.save()
    moved = merge.moved
    PersonRelation.objects.filter(pk__in=moved.get("relations_subject", [])).update(subject=source)
    PersonRelation.objects.filter(pk__in=moved.get("relations_object", [])).update(object=source)
    PersonMention.objects.filter(pk__in=moved.get("mentions", [])).update(person=source)
    for pk, side in moved.get("proposals_repointed", []):
        MergeProposal.objects.filter(pk=pk, status=MergeProposal.Status.PENDING, **{f"{side}_id": target.pk}).update(
            **{f"{side}_id": source.pk})
    for proposal in MergeProposal.objects.filter(pk__in=moved.get("proposals", []),
                                                 status=MergeProposal.Status.SUPERSEDED):
        clash = MergeProposal.objects.filter(source_id=proposal.source_id, target_id=proposal.target_id,
                                             status=MergeProposal.Status.PENDING).exists()
        if not clash:
            MergeProposal.objects.filter(pk=proposal.pk).update(status=MergeProposal.Status.PENDING, decided_at=None)
    merge.undone_at, merge.undone_by = timezone.now(), reviewer
    merge.save(update_fields=["undone_at", "undone_by"])
    MergeProposal.objects.filter(merge=merge).update(status=MergeProposal.Status.UNDONE)
    audit(person=target, action=PeopleAuditEntry.Action.MERGE_UNDONE, actor=reviewer,
          actor_label=actor_label or actor_label_for(reviewer, "system"), merge=merge,
          details={"source": source.pk, "forced": bool(changed), "discarded": {k: current[k] for k in changed},
                   **_why(reason)})
    # The snapshots bring their vectors back, unless one was still waiting for it at the merge.
    missing = [p.pk for p in (source, target) if p.embedding is None]
    if missing:
        vectors_after_commit(tenant_id=target.tenant_id, user_id=target.user_id, person_ids=missing)
    return merge


# --- proposals --------------------------------------------------------------------------------------------


@transaction.atomic
def merge_proposal_create(
    *,
    source: Person,
    target: Person,
    rule: str,
    score: float,
    evidence: list[dict[str, Any]],
    origin: str = MergeProposal.Origin.DEDUP,
) -> MergeProposal | None:
    """Open a proposal, or add the evidence to the open one for this pair. A pair a reviewer
    rejected is not proposed again."""
    if source.pk == target.pk or Person.Status.MERGED in (source.status, target.status):
        return None
    pair = Q(source=source, target=target) | Q(source=target, target=source)
    if MergeProposal.objects.filter(pair, status=MergeProposal.Status.REJECTED).exists():
        return None
    existing = MergeProposal.objects.select_for_update().filter(pair, status=MergeProposal.Status.PENDING).first()
    if existing is not None:
        known = {json.dumps(e, sort_keys=True) for e in existing.evidence}
        fresh = [e for e in evidence if json.dumps(e, sort_keys=True) not in known]
        if fresh or score > existing.score:
            existing.evidence = [*existing.evidence, *fresh]
            existing.score = max(existing.score, score)
            existing.save(update_fields=["evidence", "score"])
        return existing
    return MergeProposal.objects.create(
        tenant_id=target.tenant_id, user_id=target.user_id, source=source, target=target, rule=rule,
        score=score, evidence=evidence, origin=origin,
    )


def _why(reason: str) -> dict[str, str]:
    # The audit row's details carry the reviewer's reason when one was given.
    return {"reason": reason.strip()} if reason.strip() else {}


def _locked_proposal(proposal: MergeProposal) -> MergeProposal:
    user_lock(tenant_id=proposal.tenant_id, user_id=proposal.user_id)
    locked = MergeProposal.objects.select_for_update().filter(pk=proposal.pk).first()
    if locked is None:
        # Read under the lock: a client's deletion of one of the two people took the proposal with it.
        raise NotFound("The proposal no longer exists: one of its two people was deleted.")
    return locked


def _pending(proposal: MergeProposal) -> MergeProposal:
    proposal = _locked_proposal(proposal)
    if proposal.status != MergeProposal.Status.PENDING:
        # 409 like a lore edit decided twice (the review API answers it as is).
        raise ApplicationError(f"This proposal is already {proposal.status}.", code="already_decided",
                               status_code=409)
    return proposal


@transaction.atomic
def merge_proposal_approve(
    *, proposal: MergeProposal, reviewer: AbstractBaseUser | None, actor_label: str | None = None, reason: str = ""
) -> PersonMerge:
    proposal = _pending(proposal)
    # Either side may have been merged automatically since: the proposal is about whom it became.
    source = active_person(proposal.source_id, proposal.tenant_id, proposal.user_id)
    target = active_person(proposal.target_id, proposal.tenant_id, proposal.user_id)
    if source is None or target is None:
        raise ApplicationError("One of the two people no longer exists.", code="stale")
    if source.pk == target.pk:
        raise ApplicationError("The two are one person already (merged since the proposal); reject it or undo "
                               "that merge.", code="already_merged")
    merge = person_merge(source=source, target=target, reviewer=reviewer, rule=proposal.rule, proposal=proposal,
                         actor_label=actor_label, reason=reason)
    proposal.status, proposal.merge = MergeProposal.Status.APPROVED, merge
    proposal.decided_at, proposal.decided_by = timezone.now(), reviewer
    proposal.save(update_fields=["status", "merge", "decided_at", "decided_by"])
    vectors_after_commit(tenant_id=target.tenant_id, user_id=target.user_id, person_ids=[target.pk])
    return merge


@transaction.atomic
def merge_proposal_reject(
    *, proposal: MergeProposal, reviewer: AbstractBaseUser | None, actor_label: str | None = None, reason: str = ""
) -> MergeProposal:
    proposal = _pending(proposal)
    proposal.status = MergeProposal.Status.REJECTED
    proposal.decided_at, proposal.decided_by = timezone.now(), reviewer
    proposal.save(update_fields=["status", "decided_at", "decided_by"])
    audit(person=Person.objects.get(pk=proposal.target_id), action=PeopleAuditEntry.Action.MERGE_REJECTED,
          actor=reviewer, actor_label=actor_label or actor_label_for(reviewer, "system"), proposal=proposal,
          details={"source": proposal.source_id, "rule": proposal.rule, **_why(reason)})
    return proposal


@transaction.atomic
def merge_proposal_undo(
    *, proposal: MergeProposal, reviewer: AbstractBaseUser | None, force: bool = False,
    actor_label: str | None = None, reason: str = "",
) -> PersonMerge:
    proposal = _locked_proposal(proposal)
    if proposal.status != MergeProposal.Status.APPROVED or proposal.merge_id is None:
        raise ApplicationError(f"Only an approved proposal's merge can be undone; this one is {proposal.status}.",
                               code="not_approved", status_code=409)
    return person_merge_undo(merge=proposal.merge, reviewer=reviewer, force=force, actor_label=actor_label,
                             reason=reason)


# --- dedup --------------------------------------------------------------------------------------------------


# The rules a pair's names decide, which an edit of the names can take away, strongest first (the order
# `dedup.compare` tries them in). An archivist's Merged operation and a likeness of vectors rest on more
# than the names.
_NAME_RULES = tuple(rule for rule in (*dedup.EXACT_RULES, *dedup.WEAK_RULES) if rule != "embedding")


@transaction.atomic
def merge_proposals_recheck(*, person: Person) -> list[dict[str, Any]]:
    """Supersede the pending proposals about `person` whose rule no longer matches the pair, after an edit
    of their names: a rename to another person's name opened a proposal, a rename back left it pending,
    and approving it would have merged two different people. `dedup.compare` names the strongest rule the
    pair matches now: one weaker than the proposal's (or none) means its rule is gone; a stronger one keeps
    the question open (the names only grew closer, "Kate" now an alias of "Katherine"), and the edit's
    dedup adds it as evidence. Each closed proposal keeps the reason in its evidence; the returned
    [{"id", "person_id", "rule", "reason"}] go into the edit's audit row. A pair that still matches by a
    weaker rule is proposed again by the edit's dedup, with that rule's evidence."""
    closed: list[dict[str, Any]] = []
    pending = MergeProposal.objects.select_for_update().filter(
        Q(source=person) | Q(target=person), status=MergeProposal.Status.PENDING, rule__in=_NAME_RULES)
    for proposal in pending.order_by("pk"):
        source = active_person(proposal.source_id, proposal.tenant_id, proposal.user_id)
        target = active_person(proposal.target_id, proposal.tenant_id, proposal.user_id)
        if source is None or target is None or source.pk == target.pk:
            continue  # approving says what became of them (`merge_proposal_approve`)
        match = dedup.compare(source, target)
        if match is not None and _NAME_RULES.index(match.rule) <= _NAME_RULES.index(proposal.rule):
            continue
        other = target if source.pk == person.pk else source
        now = f"now {match.rule}: {match.detail}" if match is not None else "no rule matches them now"
        reason = (f"superseded: rule {proposal.rule!r} no longer holds after the names of "
                  f"{person.display_name!r} changed ({now})")
        proposal.status, proposal.decided_at = MergeProposal.Status.SUPERSEDED, timezone.now()
        proposal.evidence = [*proposal.evidence, {"rule": "superseded", "detail": reason}]
        proposal.save(update_fields=["status", "decided_at", "evidence"])
        closed.append({"id": proposal.pk, "person_id": other.pk, "rule": proposal.rule, "reason": reason})
    return closed


def merge_direction(a: Person, b: Person) -> tuple[Person, Person]:
    """(source, target): the better-known person (more mentions, then the older one) absorbs the other."""
    if (b.mention_count, -b.pk) > (a.mention_count, -a.pk):
        return a, b
    return b, a


@transaction.atomic
def person_dedup(*, person: Person, auto_merge: bool, origin: str = MergeProposal.Origin.DEDUP) -> dict[str, int]:
    """Compare a person with the user's others: an exact key merges at once (when `auto_merge`), a
    weaker match opens a proposal with its evidence."""
    counts = {"merged": 0, "proposed": 0}
    person = Person.objects.get(pk=person.pk)
    # A bare "Natasha" beside thirty "Наталья …" opened thirty proposals: the best few (candidates come
    # best first, the most mentioned first among equals) ask the reviewer the question.
    room = conf.get("PEOPLE_DEDUP_MAX_PROPOSALS")
    for other, match in dedup.candidates(person):
        if person.status != Person.Status.ACTIVE:
            break
        if not match.exact and room <= 0:
            continue
        other.refresh_from_db()
        if other.status != Person.Status.ACTIVE:
            continue
        source, target = merge_direction(person, other)
        # An editor's open question about this pair, or their "two people", outranks an exact key.
        if match.exact and auto_merge and pending_between(source, target) is None and not decided_apart(source, target):
            person_merge(source=source, target=target, reviewer=None, rule=match.rule, actor_label="archivist")
            counts["merged"] += 1
            person = Person.objects.get(pk=target.pk)
        else:
            is_new = not MergeProposal.objects.filter(
                Q(source=source, target=target) | Q(source=target, target=source),
                status__in=[MergeProposal.Status.PENDING, MergeProposal.Status.REJECTED]).exists()
            proposal = merge_proposal_create(source=source, target=target, rule=match.rule, score=match.score,
                                             evidence=[match.evidence()], origin=origin)
            if proposal is not None:  # a pair a reviewer set apart leaves the room to the next likeliest
                room -= 1
                counts["proposed"] += int(is_new)
    return counts
