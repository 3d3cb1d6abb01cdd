"""The archivist's run: known people and facts in, operations out, applied through the services."""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Sequence
from typing import Any

from django.db import transaction

from memoryhub.llm import LLMError, LLMUnavailable, get_llm
from memoryhub.models import ArchivalJob, Message, Tenant
from people import conf, metrics, selectors
from people.archivist import rules
from people.archivist.llm import extract_with_llm
from people.archivist.tokens import KnownPerson
from people.models import MergeProposal, Person
from people.names import clean_name, name_key, name_terms, query_name_terms
from people.ops import AddOp, Extraction, MergeOp, PersonDraft, RelationDraft, UpdateOp
from people.services import merges
from people.services.persons import (
    apply_draft,
    embed,
    find_identity,
    message_range,
    people_gauges_refresh,
    person_create_from_draft,
    relation_upsert,
    user_lock,
)

logger = logging.getLogger(__name__)


def _known_facts(*, tenant_id: int, user_id: str, limit: int = 50) -> list[tuple[int, str]]:
    """The user's active profile facts for the prompt (`[Fact:ID] key: value`), when profiles is installed."""
    try:
        from profiles.selectors import profile_facts
    except ImportError:
        return []
    facts = profile_facts(tenant_id=tenant_id, user_id=user_id)[:limit]
    return [(int(f.pk), f"{getattr(f, 'key', '')}: {getattr(f, 'value', '')}") for f in facts]


def _own_names(*, tenant_id: int, user_id: str) -> set[str]:
    """Name keys of the user themself ("my name is Alice" is the user, not a person they know)."""
    try:
        from profiles.models import UserProfile
    except ImportError:
        return set()
    names = UserProfile.objects.filter(tenant_id=tenant_id, user_id=user_id, key="name").exclude(
        status=UserProfile.Status.REJECTED).values_list("value", flat=True)
    return {name_key(str(n)) for n in names if name_key(str(n))}


def _fill_references(draft: PersonDraft, messages: Sequence[Message]) -> None:
    """Messages that name the person, for a draft from the LLM (which does not say where)."""
    if not draft.message_ids:
        terms = {t for t in name_terms([draft.display_name, *draft.aliases], draft.username) if len(t) >= 2}
        for message in messages:
            if terms & set(query_name_terms(message.text)):
                draft.message_ids.append(message.pk)
    mentioned = [m for m in messages if m.pk in set(draft.message_ids)] or list(messages)
    first, last = message_range(mentioned)
    draft.first_seen = draft.first_seen or first
    draft.last_seen = draft.last_seen or last


def _active(person_id: int, tenant_id: int, user_id: str) -> Person | None:
    """The living person an id stands for now: a tombstone's id leads to whom it was merged into."""
    for _ in range(10):
        person = Person.objects.filter(pk=person_id, tenant_id=tenant_id, user_id=user_id).first()
        if person is None:
            return None
        if person.status == Person.Status.ACTIVE:
            return person
        if person.merged_into_id is None:
            return None
        person_id = person.merged_into_id
    return None


@transaction.atomic
def people_apply_extraction(
    *, tenant: Tenant, user_id: str, extraction: Extraction, messages: Sequence[Message]
) -> dict[str, int]:
    """Apply an archivist's operations: Added (or the known person it names), Updated, Merged (at once
    when an exact key agrees, else a proposal), relations; then dedup every person touched."""
    counts: Counter[str] = Counter()
    touched: dict[int, Person] = {}
    old_texts: dict[int, str] = {}
    by_name: dict[str, int] = {}
    own_names = _own_names(tenant_id=tenant.pk, user_id=user_id)

    def remember(person: Person, draft: PersonDraft) -> None:
        touched[person.pk] = person
        for name in (draft.display_name, *draft.aliases, person.display_name):
            if name_key(name):
                by_name[name_key(name)] = person.pk

    for op in extraction.ops:
        if isinstance(op, AddOp):
            draft = op.person
            if not clean_name(draft.display_name):
                counts["skipped"] += 1  # seed 000: a person without a name is skipped
                continue
            if name_key(draft.display_name) in own_names:
                counts["skipped_self"] += 1
                continue
            _fill_references(draft, messages)
            person = find_identity(tenant_id=tenant.pk, user_id=user_id, draft=draft)
            if person is None:
                person = person_create_from_draft(tenant_id=tenant.pk, user_id=user_id, draft=draft, embed_now=False)
                old_texts[person.pk] = ""
                counts["added"] += 1
            else:
                person = touched.get(person.pk, person)
                old_texts.setdefault(person.pk, person.embedding_text())
                apply_draft(person, draft, explicit=False)
                person.save()
                counts["updated"] += 1
            remember(person, draft)
        elif isinstance(op, UpdateOp):
            found = _active(op.person_id, tenant.pk, user_id)
            if found is None:
                counts["skipped"] += 1
                continue
            person = touched.get(found.pk, found)
            _fill_references(op.person, messages)
            old_texts.setdefault(person.pk, person.embedding_text())
            apply_draft(person, op.person, explicit=True)
            person.save()
            counts["updated"] += 1
            remember(person, op.person)
        elif isinstance(op, MergeOp):
            counts[_apply_merge(op, tenant_id=tenant.pk, user_id=user_id, touched=touched)] += 1

    changed = [p for pk, p in touched.items() if p.embedding_text() != old_texts.get(pk)]
    embed(changed)
    for person in changed:
        person.save(update_fields=["embedding"])

    for relation in extraction.relations:
        counts["relations"] += _apply_relation(relation, tenant_id=tenant.pk, user_id=user_id, by_name=by_name)

    for pk in list(touched):
        person = Person.objects.filter(pk=pk, status=Person.Status.ACTIVE).first()
        if person is not None:
            result = merges.person_dedup(person=person, auto_merge=True)
            counts["merged"] += result["merged"]
            counts["proposed"] += result["proposed"]

    tenant_label = str(tenant.pk)
    for op_type in ("added", "updated", "merged", "proposed"):
        if counts[op_type]:
            metrics.EXTRACTED.labels(tenant_label, op_type).inc(counts[op_type])
    return dict(counts)


def _apply_merge(op: MergeOp, *, tenant_id: int, user_id: str, touched: dict[int, Person]) -> str:
    source = _active(op.source_id, tenant_id, user_id)
    target = _active(op.target_id, tenant_id, user_id)
    if source is None or target is None or source.pk == target.pk:
        return "skipped"
    exact = merges.dedup.exact_match(source, target)
    if exact is not None:
        merges.person_merge(source=source, target=target, reviewer=None, rule=exact.rule, actor_label="archivist")
        touched.pop(source.pk, None)
        touched[target.pk] = Person.objects.get(pk=target.pk)
        return "merged"
    evidence: list[dict[str, Any]] = [{"rule": "archivist", "score": 0.5, "detail": op.reason or "Merged operation"}]
    weak = merges.dedup.compare(source, target)
    if weak is not None:
        evidence.append(weak.evidence())
    proposal = merges.merge_proposal_create(source=source, target=target, rule="archivist",
                                            score=max(0.5, weak.score if weak else 0.0), evidence=evidence,
                                            origin=MergeProposal.Origin.ARCHIVIST)
    return "proposed" if proposal else "skipped"


def _apply_relation(relation: RelationDraft, *, tenant_id: int, user_id: str, by_name: dict[str, int]) -> int:
    ends: list[Person] = []
    for end in (relation.subject, relation.object):
        person: Person | None = None
        if isinstance(end, int):
            person = _active(end, tenant_id, user_id)
        else:
            pk = by_name.get(name_key(end))
            person = _active(pk, tenant_id, user_id) if pk else find_identity(
                tenant_id=tenant_id, user_id=user_id, draft=PersonDraft(display_name=end))
        if person is None:
            return 0
        ends.append(person)
    return int(relation_upsert(subject=ends[0], object=ends[1], kind=relation.kind, label=relation.label) is not None)


@transaction.atomic
def people_extract_from_messages(*, tenant: Tenant, user_id: str, messages: Sequence[Message]) -> dict[str, Any]:
    """Run the archivist over messages of one user and apply what it found.

    The LLM archivist when a provider is configured, the rule-based one otherwise. A reply the model
    cannot get right after its re-ask falls back to the rules (recorded in the result); a provider
    outage (`LLMUnavailable`) propagates, so the caller's task retries later.
    """
    started = time.perf_counter()
    messages = sorted((m for m in messages if m.tenant_id == tenant.pk and m.user_id == user_id),
                      key=lambda m: (m.created_at, m.pk))
    if not messages:
        return {"source": "none"}
    user_lock(tenant_id=tenant.pk, user_id=user_id)
    people = selectors.people_for_archivist(tenant_id=tenant.pk, user_id=user_id, messages=messages,
                                            limit=conf.get("PEOPLE_ARCHIVIST_MAX_KNOWN"))
    known = [KnownPerson(id=p.pk, display_name=p.display_name, aliases=tuple(p.aliases), username=p.username,
                         telegram_id=p.telegram_id) for p in people]
    client = get_llm()
    fallback = ""
    if client is None:
        extraction = rules.extract(messages, known)
    else:
        try:
            extraction = extract_with_llm(
                client=client, messages=messages, known=known, known_lines=[p.archivist_line() for p in people],
                facts=_known_facts(tenant_id=tenant.pk, user_id=user_id),
                max_added=conf.get("PEOPLE_ARCHIVIST_MAX_ADDED"),
            )
        except LLMUnavailable:
            raise
        except LLMError as exc:
            logger.warning("archivist reply unusable for %s/%s, using the rules: %s", tenant.pk, user_id, exc)
            fallback = f"{type(exc).__name__}: {exc}"[:300]
            extraction = rules.extract(messages, known)
    counts = people_apply_extraction(tenant=tenant, user_id=user_id, extraction=extraction, messages=messages)
    metrics.EXTRACTION_DURATION.labels(str(tenant.pk)).observe(time.perf_counter() - started)
    people_gauges_refresh(tenant_id=tenant.pk)
    result: dict[str, Any] = {"source": extraction.source, **counts, "dropped": len(extraction.dropped)}
    if extraction.dropped:
        result["dropped_reasons"] = extraction.dropped[:10]
    if fallback:
        result["fallback"] = fallback
    return result


def people_archival_step(job: ArchivalJob, messages: Sequence[Message]) -> dict[str, Any]:
    """Archival step (registered with the kernel). Extraction runs for auto-extract jobs: a batch sent
    with `enable_auto_extract`, or the job the kernel makes when a session reaches its size or goes
    idle (covering every message not yet extracted). Plain batches are only indexed."""
    if not job.auto_extract:
        return {"skipped": "auto_extract off"}
    return people_extract_from_messages(tenant=job.tenant, user_id=job.user_id, messages=messages)
