"""Writes of the profiles app: facts and their audit trail, review decisions, decay, erasure and
extraction. Every change to a fact goes through `fact_upsert` or a review service here, and each
writes a `FactEvent` (who or what, when, old → new, why)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from django.contrib.auth.models import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.llm import LLMError, LLMResponseError, LLMUnavailable, get_llm
from memoryhub.models import ArchivalJob, Message, Tenant
from memoryhub.services import admin_log_forget
from memoryhub.text import HAN_CHAR, words
from people import translit
from profiles import extraction, metrics, selectors
from profiles.conf import confidence_threshold, decay_after_days, decay_factor, decay_interval_days
from profiles.keys import is_multi, key_normalize, value_clean, value_norm
from profiles.models import FactEvent, UserProfile
from profiles.sensitive import find_masked, find_sensitive

logger = logging.getLogger(__name__)

Status = UserProfile.Status
Source = UserProfile.Source
Action = FactEvent.Action

# A reviewer's approval is the strongest evidence there is.
REVIEWED_CONFIDENCE = 1.0
# Machine restatements add up (noisy-or) but never reach what only a person can confirm.
MACHINE_MAX_CONFIDENCE = 0.95


class Outcome(StrEnum):
    CREATED = "created"
    REPLACED = "replaced"
    CONFIRMED = "confirmed"
    UPDATED = "updated"
    PENDING = "pending"
    UNCHANGED = "unchanged"
    IGNORED = "ignored"
    ENDED = "ended"


@dataclass(frozen=True)
class FactWrite:
    fact: UserProfile
    outcome: Outcome
    # The value this write displaced from a single-valued key, if any.
    replaced: str | None = None


def _lock_profile(tenant_id: int, user_id: str) -> None:
    # One writer per user's profile at a time: an API save and an archival job racing on the same
    # single-valued key must not both see "no active value" and both insert one.
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"profile:{tenant_id}:{user_id}"])


def _event(
    fact: UserProfile | None,
    *,
    tenant_id: int,
    user_id: str,
    key: str,
    action: str,
    actor: str,
    reviewer: AbstractBaseUser | None = None,
    old: tuple[str, float | None, str] = ("", None, ""),
    new: tuple[str, float | None, str] = ("", None, ""),
    reason: str = "",
    source_message_id: int | None = None,
    meta: dict[str, Any] | None = None,
    reviewer_name: str | None = None,
    fact_ref: int | None = None,
) -> FactEvent:
    if reviewer_name is None:
        reviewer_name = reviewer.get_username() if reviewer is not None else ""
    return FactEvent.objects.create(
        tenant_id=tenant_id, user_id=user_id, key=key, fact=fact, action=action, actor=actor,
        fact_ref=fact.pk if fact is not None else fact_ref,
        reviewer=reviewer if reviewer is not None and reviewer.pk else None,
        reviewer_name=reviewer_name[:150],
        old_value=old[0], old_confidence=old[1], old_status=old[2],
        new_value=new[0], new_confidence=new[1], new_status=new[2],
        reason=reason, source_message_id=source_message_id, meta=meta or {},
    )


def _state(fact: UserProfile) -> tuple[str, float | None, str]:
    return fact.value, fact.confidence, fact.status


def fact_value_check(*, key: str, value: str, source: str) -> tuple[str, str]:
    """(canonical key, stored value) for a proposed fact, or ApplicationError.

    Sensitive numbers are looked for first, in the raw value, so they are refused and counted
    whatever else is wrong with the fact.
    """
    # A placeholder counts too: under SENSITIVE_POLICY=mask the extractors only ever see
    # "[card •••• 4242]", and a fact holding it would still say "the user gave a card number here".
    findings = find_sensitive(str(value or ""), context=str(key or "")) or find_masked(str(value or ""))
    if findings:
        for finding in findings:
            metrics.SENSITIVE_REFUSED.labels(finding.kind, source).inc()
        first = findings[0]
        raise ApplicationError(
            f"The value contains {first.label}; sensitive numbers are never stored as facts.",
            code="sensitive_value", field="value", extra={"kind": first.kind},
        )
    canonical = key_normalize(key)
    return canonical, value_clean(canonical, value)


def _one_spelling(a: str, b: str) -> bool:
    """Two values that are one in Latin and Cyrillic letters ("anna" / "анна", "berlin" / "берлин"), folded as
    people's names are (`people.translit.fold`)."""
    return translit.crosses_scripts(a, b) and translit.fold(a) == translit.fold(b)


def _combined(old: float, new: float) -> float:
    return max(old, new, min(MACHINE_MAX_CONFIDENCE, 1 - (1 - old) * (1 - new)))


@transaction.atomic
def fact_upsert(
    *,
    tenant: Tenant,
    user_id: str,
    key: str,
    value: str,
    confidence: float = 1.0,
    source: str,
    source_message: Message | None = None,
    reason: str = "",
    meta: dict[str, Any] | None = None,
    change: bool = False,
    actor_label: str = "",
) -> FactWrite:
    """Save one fact (seed 002's SaveLongTermMemory) and record the change.

    - A value already held is confirmed: an API write sets its confidence, a machine restatement
      raises it (noisy-or, capped below what a reviewer gives). The same message never counts twice.
    - A new value below the threshold waits for review.
    - A new value of a single-valued key replaces the current one only when its confidence is at
      least the current one's; otherwise it waits for review beside it.
    - `change`: the statement says the value changed ("I moved to Seattle", "я переехал в Казань",
      "我搬到杭州了"). Then it replaces the current value whatever that one's confidence: "Boston, 0.9"
      is what the user said before, not evidence against the move. The old value stays in the key's
      history, with the statement as the reason. It still needs the threshold, and a statement older
      than the message the current value came from changes nothing (a re-run of old messages).
    - A value a reviewer rejected stays rejected when a machine proposes it again; an API write
      (the client speaking for the user) brings it back.

    `actor_label` names who wrote it beyond its source ("api-key:mh_1234abcd (console)"), for the history.
    """
    key, value = fact_value_check(key=key, value=value, source=source)
    if not 0.0 <= confidence <= 1.0:
        raise ApplicationError("confidence must be between 0 and 1.", field="confidence")
    if source_message is not None and (source_message.tenant_id != tenant.pk or source_message.user_id != user_id):
        raise ApplicationError("The source message belongs to another user.", field="source_message_id")
    _lock_profile(tenant.pk, user_id)

    now = timezone.now()
    norm = value_norm(value)
    multi = is_multi(key)
    machine = source in (Source.LLM, Source.RULES)
    message_id = source_message.pk if source_message is not None else None
    rows = list(UserProfile.objects.filter(tenant=tenant, user_id=user_id, key=key))
    same = next((r for r in rows if r.value_norm == norm), None)
    current = None if multi else next((r for r in rows if r.status == Status.ACTIVE), None)
    if same is None and machine and current is not None and _one_spelling(current.value_norm, norm):
        # "My name is Anna" and, in Russian, "Меня зовут Анна" say one name: replaced, "Anna" read as a value the
        # user had since changed, and the context set her own introduction beside "the turn that corrects it".
        same = current

    if same is not None and machine:
        if same.status == Status.REJECTED:
            metrics.FACT_WRITES.labels(source, Outcome.IGNORED).inc()
            return FactWrite(same, Outcome.IGNORED)
        if message_id is not None and same.source_message_id == message_id:
            metrics.FACT_WRITES.labels(source, Outcome.UNCHANGED).inc()
            return FactWrite(same, Outcome.UNCHANGED)

    if same is None:
        fact = UserProfile(tenant=tenant, user_id=user_id, key=key, value=value, value_norm=norm, multi=multi,
                           source=source, created_at=now, meta={})
        old = ("", None, "")
        new_confidence = confidence
    else:
        fact = same
        old = _state(same)
        new_confidence = _combined(same.confidence, confidence) if machine else confidence

    competitor = current if current is not None and current.pk != fact.pk else None
    supersedes = change and competitor is not None and not _older_statement(source_message, competitor)
    if new_confidence < confidence_threshold() or (
            competitor is not None and new_confidence < competitor.confidence and not supersedes):
        status = Status.PENDING
    else:
        status = Status.ACTIVE
    if supersedes and status == Status.ACTIVE and not reason:
        said = source_message.text if source_message is not None else (meta or {}).get("evidence") or value
        reason = f"stated as a change: {' '.join(str(said).split())[:200]}"

    replaced = displaced = None
    if status == Status.ACTIVE and competitor is not None:
        replaced, displaced = competitor.value, competitor.pk
        old = _state(competitor)
        competitor.delete()  # its story stays in the events; the key now has the new value

    if same is None or not machine:
        fact.value, fact.source = value, source
    fact.confidence, fact.status = new_confidence, status
    fact.updated_at = fact.confirmed_at = now
    if source_message is not None:
        fact.source_message = source_message
    fact.meta = {**fact.meta, **(meta or {})}
    fact.save()

    if replaced is not None:
        action, outcome = Action.REPLACED, Outcome.REPLACED
    elif same is None:
        action, outcome = (Action.CREATED, Outcome.CREATED) if status == Status.ACTIVE else (
            Action.PROPOSED, Outcome.PENDING)
    else:
        # Restated at the same or a higher confidence, or promoted by the restatement: confirmed.
        confirmed = (old[2] != Status.ACTIVE and status == Status.ACTIVE) or new_confidence >= (old[1] or 0)
        action = Action.CONFIRMED if confirmed else Action.UPDATED
        active_outcome = Outcome.CONFIRMED if confirmed else Outcome.UPDATED
        outcome = active_outcome if status == Status.ACTIVE else Outcome.PENDING
    event_meta: dict[str, Any] = {}
    if status == Status.PENDING and competitor is not None:
        event_meta["current"] = current.value  # type: ignore[union-attr]
    if change:
        event_meta["change"] = True
    if displaced is not None:
        event_meta["displaced_fact"] = displaced
    _event(fact, tenant_id=tenant.pk, user_id=user_id, key=key, action=action, actor=source, old=old,
           new=_state(fact), reason=reason, source_message_id=message_id, meta=event_meta, reviewer_name=actor_label)
    metrics.FACT_WRITES.labels(source, outcome).inc()
    return FactWrite(fact, outcome, replaced)


def _older_statement(message: Message | None, current: UserProfile) -> bool:
    """The change was said before the current value was: it is history, not news."""
    if message is None or current.source_message_id is None:
        return False
    said = Message.objects.filter(pk=current.source_message_id).values_list("created_at", flat=True).first()
    return said is not None and message.created_at < said


# --- Review -------------------------------------------------------------------------------------
# A decision is a staff user's in the admin (`reviewer`), or an API key's on the review API
# (`actor_label`, "api-key:mh_1234abcd (console)"): the same event either way, its actor `admin` or
# `api` and its reviewer name the user's or the key's.
def _decider(reviewer: AbstractBaseUser | None, actor_label: str | None) -> dict[str, Any]:
    if actor_label is not None:
        return {"actor": FactEvent.Actor.API, "reviewer": None, "reviewer_name": actor_label}
    return {"actor": FactEvent.Actor.ADMIN, "reviewer": reviewer}


def _activate_reviewed(
    fact: UserProfile, *, reviewer: AbstractBaseUser | None, reason: str, action: str, previous: str | None = None,
    meta: dict[str, Any] | None = None, actor_label: str | None = None,
) -> UserProfile:
    """Make `fact` the active value of its key on a reviewer's word, displacing the current one."""
    current = None
    if not fact.multi:
        current = (UserProfile.objects.filter(tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key,
                                              status=Status.ACTIVE).exclude(pk=fact.pk).first())
    old_value = current.value if current is not None else (previous if previous is not None else fact.value)
    old = (old_value, current.confidence if current else fact.confidence, fact.status)
    if current is not None:
        meta = {**(meta or {}), "displaced_fact": current.pk}
        current.delete()
    now = timezone.now()
    fact.status, fact.confidence = Status.ACTIVE, REVIEWED_CONFIDENCE
    fact.updated_at = fact.confirmed_at = now
    fact.save()
    _event(fact, tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key, action=action,
           old=old, new=_state(fact), reason=reason, meta=meta, **_decider(reviewer, actor_label))
    metrics.REVIEWS.labels(action).inc()
    return fact


def _locked(fact: UserProfile, *, pending_only: bool = False) -> UserProfile:
    _lock_profile(fact.tenant_id, fact.user_id)
    try:
        locked = UserProfile.objects.select_for_update().get(pk=fact.pk)
    except UserProfile.DoesNotExist:
        raise NotFound("The fact no longer exists.") from None
    # Checked under the lock: of two editors deciding the same fact at once, the second is told.
    if pending_only and locked.status != Status.PENDING:
        raise ApplicationError(f"Fact {locked.pk} is already {locked.status}.", code="already_decided",
                               status_code=409)
    return locked


def _refuse_if_stale(fact: UserProfile) -> None:
    """A proposal the key's value has moved past since it was made (409 `stale`): "age 30" waited for
    review while the user said "I am 31", and approving it put 30 back without a word. Lore edits are
    refused the same way; the editor rejects it, or sets the value they mean."""
    if fact.multi or fact.status != Status.PENDING:
        return
    current = (UserProfile.objects.filter(tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key,
                                          status=Status.ACTIVE, confirmed_at__gt=fact.updated_at)
               .exclude(pk=fact.pk).first())
    if current is not None:
        raise ApplicationError(
            f"Fact {fact.pk} ({fact.key} = {fact.value!r}) was proposed before the key's value became "
            f"{current.value!r} ({current.confirmed_at:%Y-%m-%d %H:%M} UTC): approving it would silently replace "
            f"the newer value. Reject it, or set the value you mean (PUT the profile key).",
            code="stale", status_code=409, extra={"current": {"fact_id": current.pk, "value": current.value}})


@transaction.atomic
def fact_approve(
    *, fact: UserProfile, reviewer: AbstractBaseUser | None, reason: str = "", actor_label: str | None = None,
    pending_only: bool = False, refuse_stale: bool = False,
) -> UserProfile:
    """A pending (or rejected) value becomes the key's active value; an active one is left alone.
    With `pending_only`, a fact no longer pending is refused (409) instead; with `refuse_stale`, a
    proposal older than the key's current value (409 `stale`)."""
    fact = _locked(fact, pending_only=pending_only)
    if fact.status == Status.ACTIVE:
        return fact
    if refuse_stale:
        _refuse_if_stale(fact)
    return _activate_reviewed(fact, reviewer=reviewer, reason=reason, action=Action.APPROVED,
                              actor_label=actor_label)


@transaction.atomic
def fact_reject(
    *, fact: UserProfile, reviewer: AbstractBaseUser | None, reason: str = "", actor_label: str | None = None,
    pending_only: bool = False,
) -> UserProfile:
    """The value is wrong: it leaves the prompt, and extraction will not propose it again."""
    fact = _locked(fact, pending_only=pending_only)
    if fact.status == Status.REJECTED:
        return fact
    old = _state(fact)
    fact.status, fact.updated_at = Status.REJECTED, timezone.now()
    fact.save(update_fields=["status", "updated_at"])
    _event(fact, tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key, action=Action.REJECTED,
           old=old, new=_state(fact), reason=reason, **_decider(reviewer, actor_label))
    metrics.REVIEWS.labels(Action.REJECTED).inc()
    return fact


@transaction.atomic
def fact_reopen(*, fact: UserProfile, reviewer: AbstractBaseUser, reason: str = "") -> UserProfile:
    """Put a decided fact back in the review queue, on purpose: decided facts are read-only in the
    admin, so a reviewer cannot re-decide one by a stray save. An active value leaves the prompt
    until it is approved again."""
    fact = _locked(fact)
    if fact.status == Status.PENDING:
        return fact
    old = _state(fact)
    fact.status, fact.updated_at = Status.PENDING, timezone.now()
    fact.save(update_fields=["status", "updated_at"])
    _event(fact, tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key, action=Action.REOPENED,
           actor=FactEvent.Actor.ADMIN, reviewer=reviewer, old=old, new=_state(fact), reason=reason)
    metrics.REVIEWS.labels(Action.REOPENED).inc()
    return fact


@transaction.atomic
def fact_edit_approve(*, fact: UserProfile, reviewer: AbstractBaseUser, value: str, reason: str = "") -> UserProfile:
    """Correct the value and approve it in one decision. When the corrected value is already held
    for the key, that row is approved and the proposal merged into it."""
    _, value = fact_value_check(key=fact.key, value=value, source=Source.ADMIN)
    fact = _locked(fact)
    # The history's old value is what the key held, or else what was proposed: the editor's correction
    # showed as "go → go" when the edited value was read back as the old one.
    proposed = previous = fact.value
    norm = value_norm(value)
    target, merged = fact, None
    if norm != fact.value_norm:
        other = (UserProfile.objects.select_for_update()
                 .filter(tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key, value_norm=norm).first())
        if other is not None:
            merged = fact.pk
            fact.delete()
            target = other
            if other.status == Status.ACTIVE:
                previous = other.value
        else:
            fact.value, fact.value_norm = value, norm
    target.value, target.source = value, Source.ADMIN
    meta = {"proposed": proposed} if merged is None else {"proposed": proposed, "merged_fact": merged}
    return _activate_reviewed(target, reviewer=reviewer, reason=reason, action=Action.EDITED, previous=previous,
                              meta=meta)


def _names_value(reference: str, value: str) -> bool:
    """`reference` ("Google", "hospital", "больница", "医院") names the held `value` ("Google", "Mass General
    Hospital", "Городская больница", "协和医院"): the same value, or every word of it among the value's, or,
    in Chinese, which writes no spaces, a part of it."""
    ref, held = value_norm(reference), value_norm(value)
    if ref == held or (HAN_CHAR.search(ref) and ref in held):
        return True
    ref_words, held_words = words(ref), set(words(held))
    return bool(ref_words) and all(w in held_words for w in ref_words)


@transaction.atomic
def fact_end(
    *,
    tenant: Tenant,
    user_id: str,
    key: str,
    value: str = "",
    confidence: float = 1.0,
    source: str,
    source_message: Message | None = None,
    meta: dict[str, Any] | None = None,
    actor_label: str = "",
) -> list[str]:
    """The user says a value no longer holds ("I quit Google", "я уволился из Сбербанка", "我从腾讯离职了"):
    the active values it names leave the profile, each with a `deleted` event whose reason quotes the
    statement, so the key's history keeps them. Returns the values ended.

    `value` names the value or its kind ("the hospital" ends "Mass General Hospital"); "" is whatever a
    single-valued key holds now ("I quit my job", "я уволился", "我辞职了"). Like a change it needs the
    threshold, and it ends no value said in the same message (the new job it goes on to name) or after it
    (a re-run of old messages). A rejected or pending value is left to its review.
    """
    key = key_normalize(key)
    reference = value_clean(key, value) if value else ""
    if not 0.0 <= confidence <= 1.0:
        raise ApplicationError("confidence must be between 0 and 1.", field="confidence")
    if source_message is not None and (source_message.tenant_id != tenant.pk or source_message.user_id != user_id):
        raise ApplicationError("The source message belongs to another user.", field="source_message_id")
    if confidence < confidence_threshold() or (not reference and is_multi(key)):
        metrics.FACT_WRITES.labels(source, Outcome.IGNORED).inc()
        return []
    _lock_profile(tenant.pk, user_id)
    message_id = source_message.pk if source_message is not None else None
    said = source_message.text if source_message is not None else (meta or {}).get("evidence") or value or key
    ended: list[str] = []
    for fact in UserProfile.objects.select_for_update().filter(tenant=tenant, user_id=user_id, key=key,
                                                               status=Status.ACTIVE).order_by("pk"):
        if reference and not _names_value(reference, fact.value):
            continue
        if message_id is not None and (fact.source_message_id == message_id
                                       or _older_statement(source_message, fact)):
            continue
        _event(None, tenant_id=tenant.pk, user_id=user_id, key=key, action=Action.DELETED, actor=source,
               old=_state(fact), reason=f"stated as ended: {' '.join(str(said).split())[:200]}",
               source_message_id=message_id, meta={**(meta or {}), "ended": True}, fact_ref=fact.pk,
               reviewer_name=actor_label)
        fact.delete()
        ended.append(fact.value)
    metrics.FACT_WRITES.labels(source, Outcome.ENDED if ended else Outcome.UNCHANGED).inc()
    return ended


# A multi-valued key may hold many values; a refusal lists the first ones.
FACT_DELETE_LISTED_VALUES = 20


@transaction.atomic
def fact_delete(
    *,
    tenant: Tenant,
    user_id: str,
    key: str,
    value: str | None = None,
    actor: str = FactEvent.Actor.API,
    reviewer: AbstractBaseUser | None = None,
    reason: str = "",
    actor_label: str | None = None,
) -> int:
    """Delete a key's values (every one, or the one given) and record it. NotFound naming `key` when
    the key has none, or `value` (and the values it holds) when it has others."""
    key = key_normalize(key)
    _lock_profile(tenant.pk, user_id)
    all_rows = UserProfile.objects.filter(tenant=tenant, user_id=user_id, key=key)
    rows = all_rows if value is None else all_rows.filter(value_norm=value_norm(value_clean(key, value)))
    facts = list(rows.select_for_update())
    if not facts and value is not None:
        # "has no fact under 'allergies'" for a key that has some sent the client to check the key
        # when the value was what did not match: the values held let it see which was meant.
        held = list(all_rows.order_by("id").values_list("value", flat=True)[:FACT_DELETE_LISTED_VALUES + 1])
        if held:
            listed = ", ".join(repr(v) for v in held[:FACT_DELETE_LISTED_VALUES])
            more = ", …" if len(held) > FACT_DELETE_LISTED_VALUES else ""
            raise NotFound(f"No value {value!r} under {key!r}; it holds: {listed}{more}.", field="value")
    if not facts:
        raise NotFound(f"User {user_id!r} has no fact under {key!r}.", field="key")
    for fact in facts:
        _event(None, tenant_id=tenant.pk, user_id=user_id, key=key, action=Action.DELETED, actor=actor,
               reviewer=reviewer, old=_state(fact), reason=reason, fact_ref=fact.pk, reviewer_name=actor_label)
    UserProfile.objects.filter(pk__in=[f.pk for f in facts]).delete()
    return len(facts)


# --- Decay --------------------------------------------------------------------------------------
def facts_decay(*, now: datetime | None = None, batch_size: int = 500) -> int:
    """Lower the confidence of active facts nobody has confirmed for `PROFILE_DECAY_AFTER_DAYS`,
    by `PROFILE_DECAY_FACTOR`, at most once per `PROFILE_DECAY_INTERVAL_DAYS`, so the daily beat
    (or a second run) does not compound. Returns how many facts it lowered.

    A decayed fact stays active, but below the threshold it leaves the prompt, and a fresh
    statement of another value can replace it.
    """
    now = now or timezone.now()
    after, interval = timedelta(days=decay_after_days()), timedelta(days=decay_interval_days())
    factor = decay_factor()
    due = (Q(status=Status.ACTIVE, confirmed_at__lt=now - after)
           & (Q(decayed_at__isnull=True) | Q(decayed_at__lt=now - interval)))
    touched = 0
    while True:
        with transaction.atomic():
            # skip_locked: a fact being written right now is confirmed, not stale; the next run sees it.
            locked = UserProfile.objects.select_for_update(skip_locked=True)
            batch = list(locked.filter(due).order_by("pk")[:batch_size])
            if not batch:
                break
            events = []
            for fact in batch:
                old = _state(fact)
                fact.confidence = round(fact.confidence * factor, 4)
                fact.decayed_at = now
                events.append(FactEvent(
                    tenant_id=fact.tenant_id, user_id=fact.user_id, key=fact.key, fact=fact, action=Action.DECAYED,
                    actor=FactEvent.Actor.SYSTEM, old_value=old[0], old_confidence=old[1], old_status=old[2],
                    new_value=fact.value, new_confidence=fact.confidence, new_status=fact.status,
                    reason=f"not confirmed since {fact.confirmed_at:%Y-%m-%d}",
                ))
            UserProfile.objects.bulk_update(batch, ["confidence", "decayed_at"])
            FactEvent.objects.bulk_create(events)
            touched += len(batch)
    metrics.DECAYED.inc(touched)
    logger.info("profile decay lowered %d fact(s)", touched)
    return touched


# --- Erasure ------------------------------------------------------------------------------------
def user_erase(tenant: Tenant, user_id: str) -> dict[str, int]:
    """Eraser (runs inside the kernel's erasure transaction): every fact and every event of the user,
    and the admin's log entries of the user's facts already gone (replaced, merged, deleted), whose
    text ("boris.hobbies = go (board game)") the kernel cannot find by a row that is no longer there."""
    gone_facts = FactEvent.objects.filter(tenant=tenant, user_id=user_id, fact_ref__isnull=False).values_list(
        "fact_ref", flat=True)
    logged = admin_log_forget(model=UserProfile, object_ids=set(gone_facts))
    facts, _ = UserProfile.objects.filter(tenant=tenant, user_id=user_id).delete()
    events, _ = FactEvent.objects.filter(tenant=tenant, user_id=user_id).delete()
    selectors.own_name_forget(tenant_id=tenant.pk, user_id=user_id)
    return {"facts": facts, "fact_events": events, "admin_log_entries": logged}


# --- Extraction ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class FactCandidates:
    """What the extractor proposed for one run: `prepare`'s result, `apply`'s input."""

    extractor: str  # "llm" or "rules"
    candidates: list[extraction.Candidate]


def facts_candidates_from_messages(*, tenant: Tenant, user_id: str, messages: Sequence[Message]) -> FactCandidates:
    """The half of an extraction that may call the network: candidate facts of the user from
    `messages`, through the LLM ("fact_extractor") when one is configured, the rules otherwise.
    Writes nothing and opens no transaction, so a slow model holds no lock.

    Every LLM failure raises, so the job is retried later: `LLMUnavailable` (the provider is away),
    `LLMResponseError` (the reply was still malformed after its re-ask) and `LLMError` (the provider
    refused the request). A malformed reply is not recorded as a finished extraction: that would mark
    these messages extracted for good, and a model that answers well on the next attempt would never
    see them again. After ARCHIVAL_MAX_ATTEMPTS the job shows as failed and the sweeper keeps retrying.
    """
    mine = [m for m in messages if m.tenant_id == tenant.pk and m.user_id == user_id]
    client = get_llm()
    if client is None:
        return FactCandidates("rules", extraction.rules_candidates(mine))
    try:
        return FactCandidates("llm", extraction.llm_candidates(client, mine))
    except LLMError as exc:
        outcome = ("unavailable" if isinstance(exc, LLMUnavailable)
                   else "malformed" if isinstance(exc, LLMResponseError) else "error")
        metrics.EXTRACTIONS.labels("llm", outcome).inc()
        logger.warning("fact extraction for %s/%s failed (%s), to be retried: %s", tenant.pk, user_id, outcome, exc)
        raise


@transaction.atomic
def facts_save_candidates(
    *, tenant: Tenant, user_id: str, candidates: Sequence[extraction.Candidate], extractor: str
) -> dict[str, Any]:
    """The database half of an extraction: each candidate through `fact_upsert`; returns how many
    met each fate. No network call, so it can run inside the kernel's job transaction."""
    fates: Counter[str] = Counter()
    for candidate in candidates:
        if candidate.drop_reason:
            fate = candidate.drop_reason
        elif candidate.ended:
            try:
                ended = fact_end(
                    tenant=tenant, user_id=user_id, key=candidate.key, value=candidate.value,
                    confidence=candidate.confidence, source=extractor, source_message=candidate.message,
                    meta={"extractor": candidate.rule or extractor, "evidence": candidate.evidence[:300]},
                )
            except ApplicationError:
                fate = "invalid"
            else:
                fate = "ended" if ended else "unchanged"
        else:
            try:
                write = fact_upsert(
                    tenant=tenant, user_id=user_id, key=candidate.key, value=candidate.value,
                    confidence=candidate.confidence, source=extractor, source_message=candidate.message,
                    meta={"extractor": candidate.rule or extractor, "evidence": candidate.evidence[:300]},
                    change=candidate.change,
                )
            except ApplicationError as exc:
                fate = "sensitive" if exc.code == "sensitive_value" else "invalid"
            else:
                fate = {Outcome.PENDING: "pending", Outcome.IGNORED: "ignored",
                        Outcome.UNCHANGED: "unchanged"}.get(write.outcome, "saved")
        fates[fate] += 1
        metrics.CANDIDATES.labels(extractor, fate).inc()
    metrics.EXTRACTIONS.labels(extractor, "ok").inc()
    return {"extractor": extractor, "candidates": len(candidates), **dict(sorted(fates.items()))}


def facts_extract_from_messages(*, tenant: Tenant, user_id: str, messages: Sequence[Message]) -> dict[str, Any]:
    """Extract the user's facts from `messages` and save them; returns what happened, by fate.

    Both halves in a row, for a caller outside the kernel's jobs. Call it outside a transaction: the
    LLM is asked before anything is written. Raises what `facts_candidates_from_messages` raises,
    and then nothing was written.
    """
    found = facts_candidates_from_messages(tenant=tenant, user_id=user_id, messages=messages)
    return facts_save_candidates(tenant=tenant, user_id=user_id, candidates=found.candidates,
                                 extractor=found.extractor)


# The extract job's step (registered in apps.py; the kernel runs prepare outside any transaction,
# apply inside its short write transaction, which holds the user's archival lock).
def facts_job_prepare(job: ArchivalJob, messages: Sequence[Message]) -> FactCandidates:
    return facts_candidates_from_messages(tenant=job.tenant, user_id=job.user_id, messages=messages)


def facts_job_apply(job: ArchivalJob, messages: Sequence[Message], prepared: FactCandidates) -> dict[str, Any]:
    return facts_save_candidates(tenant=job.tenant, user_id=job.user_id, candidates=prepared.candidates,
                                 extractor=prepared.extractor)
