"""The archivist's run, in the extract job's three phases, so that no network call (the LLM, a
remote embedder) ever happens inside a transaction that holds a lock:

- prepare, `people_archivist_run`: outside any transaction. Reads the known people and the user's
  facts (those the profiles step has just saved included), asks the LLM archivist (or runs the
  rules). Writes nothing.
- apply, `people_operations_apply`: one transaction (the kernel's, holding the user's archival
  lock). Operations, relations, and the dedup that needs no vector. A person whose embedding text
  changed gets a NULL vector ("to embed"); the embedder is not called.
- after, `people_after_apply`: outside any transaction again. Embeds every vector the user lacks
  and stores each in a short transaction, then runs the dedup's embedding rule for the people the
  run touched. Idempotent, so the kernel can re-run it for a job that stopped before it ended.

`people_extract_from_messages` and `people_apply_extraction` run the phases in a row, for callers
outside the kernel's jobs.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db import transaction

from memoryhub.dates import anchor_relative_dates
from memoryhub.llm import get_llm
from memoryhub.models import ArchivalJob, Message, Tenant
from people import conf, metrics, selectors, translit
from people.archivist import rules
from people.archivist.llm import extract_with_llm
from people.archivist.tokens import KnownPerson
from people.models import MergeProposal, Person
from people.names import clean_name, name_key, name_terms, query_name_terms
from people.ops import AddOp, Extraction, MergeOp, PersonDraft, RelationDraft, UpdateOp
from people.services import merges
from people.services.persons import (
    active_person,
    apply_draft,
    find_identity,
    message_range,
    person_create_from_draft,
    relation_upsert,
    user_lock,
)
from people.services.vectors import WriteScope, job_scope, people_dedup_with_vectors, people_embed_pending


def _known_facts(*, tenant_id: int, user_id: str, limit: int = 50) -> list[tuple[int, str]]:
    """The user's active profile facts for the prompt (`[Fact:ID] key: value`), when profiles is installed."""
    try:
        from profiles.selectors import profile_facts
    except ImportError:
        return []
    facts = profile_facts(tenant_id=tenant_id, user_id=user_id)[:limit]
    return [(int(f.pk), f"{getattr(f, 'key', '')}: {getattr(f, 'value', '')}") for f in facts]


def _own_names(*, tenant_id: int, user_id: str) -> set[str]:
    """Name keys of the user themself ("my name is Alice" is the user, not a person they know): the names
    they go by and every name they went by. "My name is Bob" then "Меня зовут Боб" leaves Боб as the fact
    and Bob in its history, and Bob is still the user. A name only proposed, or rejected, is not theirs."""
    try:
        from profiles.models import FactEvent, UserProfile
    except ImportError:
        return set()
    names: set[str] = set()
    rejected: set[str] = set()
    for value, status in UserProfile.objects.filter(tenant_id=tenant_id, user_id=user_id, key="name").values_list(
            "value", "status"):
        (rejected if status == UserProfile.Status.REJECTED else names).add(value)
    held = (FactEvent.Action.CREATED, FactEvent.Action.CONFIRMED, FactEvent.Action.UPDATED,
            FactEvent.Action.REPLACED, FactEvent.Action.APPROVED, FactEvent.Action.EDITED)
    for old, new in FactEvent.objects.filter(tenant_id=tenant_id, user_id=user_id, key="name",
                                             action__in=held).values_list("old_value", "new_value"):
        names.update(v for v in (old, new) if v and v not in rejected)
    return {name_key(str(n)) for n in names if name_key(str(n))}


def _fill_references(draft: PersonDraft, messages: Sequence[Message]) -> None:
    """Messages that name the person, for a draft from the LLM (which does not say where); and the
    relative dates its bio still says ("вчера", "last week") anchored to the last of them, as the rule
    archivist anchors each line to its own message (a line anchored already is left as it is)."""
    if not draft.message_ids:
        terms = {t for t in name_terms([draft.display_name, *draft.aliases], draft.username) if len(t) >= 2}
        for message in messages:
            if terms & set(query_name_terms(message.text)):
                draft.message_ids.append(message.pk)
    mentioned = [m for m in messages if m.pk in set(draft.message_ids)] or list(messages)
    first, last = message_range(mentioned)
    draft.first_seen = draft.first_seen or first
    draft.last_seen = draft.last_seen or last
    draft.bio = anchor_relative_dates(draft.bio, draft.last_seen)


@dataclass
class Applied:
    """What `people_operations_apply` did: counts by operation, and the people it touched."""

    counts: Counter[str] = field(default_factory=Counter)
    person_ids: list[int] = field(default_factory=list)


@transaction.atomic
def people_operations_apply(
    *, tenant: Tenant, user_id: str, extraction: Extraction, messages: Sequence[Message]
) -> Applied:
    """Apply an archivist's operations: Added (or the known person it names), Updated, Merged (at once
    when an exact key agrees, else a proposal), relations; then dedup every person touched by names
    and keys. Database work only: a person whose embedding text changed is left with a NULL vector
    for `people_after_apply`, which embeds it after the commit and runs the embedding rule."""
    user_lock(tenant_id=tenant.pk, user_id=user_id)
    counts: Counter[str] = Counter()
    touched: dict[int, Person] = {}
    old_texts: dict[int, str] = {}
    by_name: dict[str, int] = {}
    # In either script: the profile keeps "Bob" when "Меня зовут Боб" confirms it (one name, one fact).
    own_names = {translit.fold(n) for n in _own_names(tenant_id=tenant.pk, user_id=user_id)}

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
            if translit.fold(name_key(draft.display_name)) in own_names:
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
            found = active_person(op.person_id, tenant.pk, user_id)
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

    # A stale vector would match the person as they were: none until after the commit.
    changed = [pk for pk, p in touched.items() if p.embedding_text() != old_texts.get(pk)]
    Person.objects.filter(pk__in=changed).update(embedding=None)

    for relation in extraction.relations:
        counts["relations"] += _apply_relation(relation, tenant_id=tenant.pk, user_id=user_id, by_name=by_name)

    for pk in list(touched):
        person = Person.objects.filter(pk=pk, status=Person.Status.ACTIVE).first()
        if person is not None:
            result = merges.person_dedup(person=person, auto_merge=True)
            counts["merged"] += result["merged"]
            counts["proposed"] += result["proposed"]

    _count(tenant.pk, counts)
    return Applied(counts, sorted(touched))


def _count(tenant_id: int, counts: Counter[str] | dict[str, int]) -> None:
    for op_type in ("added", "updated", "merged", "proposed"):
        if counts.get(op_type):
            metrics.EXTRACTED.labels(str(tenant_id), op_type).inc(counts[op_type])


def people_after_apply(
    *, tenant_id: int, user_id: str, person_ids: Collection[int], write: WriteScope | None = None
) -> dict[str, int]:
    """The after-phase: vectors for every person of the user who lacks one (those `apply` changed,
    and any an earlier run or edit left behind), then the dedup with vectors for the people the run
    touched and the people just embedded. Outside any transaction; writes in short ones. Safe to
    run again: a vector present is not recomputed, a proposal is never opened twice."""
    embedded = people_embed_pending(tenant_id=tenant_id, user_id=user_id, write=write)
    counts = people_dedup_with_vectors(tenant_id=tenant_id, user_id=user_id, person_ids={*person_ids, *embedded},
                                       auto_merge=True, write=write)
    if counts["merged"]:
        # A merge combined two people's text: the merged person's vector is due again.
        embedded += people_embed_pending(tenant_id=tenant_id, user_id=user_id, write=write)
    _count(tenant_id, counts)
    return {"embedded": len(embedded), **counts}


def people_apply_extraction(
    *, tenant: Tenant, user_id: str, extraction: Extraction, messages: Sequence[Message]
) -> dict[str, int]:
    """Apply an archivist's operations (`people_operations_apply`), then, after its commit, embed and
    dedup (`people_after_apply`). Call it outside a transaction; returns the counts of both."""
    applied = people_operations_apply(tenant=tenant, user_id=user_id, extraction=extraction, messages=messages)
    after = people_after_apply(tenant_id=tenant.pk, user_id=user_id, person_ids=applied.person_ids)
    counts = applied.counts
    for key in ("merged", "proposed"):
        if after[key]:
            counts[key] += after[key]
    return dict(counts)


def _apply_merge(op: MergeOp, *, tenant_id: int, user_id: str, touched: dict[int, Person]) -> str:
    source = active_person(op.source_id, tenant_id, user_id)
    target = active_person(op.target_id, tenant_id, user_id)
    if source is None or target is None or source.pk == target.pk:
        return "skipped"
    exact = merges.dedup.exact_match(source, target)
    if exact is not None and merges.pending_between(source, target) is None and \
            not merges.decided_apart(source, target):
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
            person = active_person(end, tenant_id, user_id)
        else:
            pk = by_name.get(name_key(end))
            person = active_person(pk, tenant_id, user_id) if pk else find_identity(
                tenant_id=tenant_id, user_id=user_id, draft=PersonDraft(display_name=end))
        if person is None:
            return 0
        ends.append(person)
    return int(relation_upsert(subject=ends[0], object=ends[1], kind=relation.kind, label=relation.label) is not None)


@dataclass
class ArchivistRun:
    """What the archivist proposed for one run: prepare's result, apply's input."""

    messages: list[Message]
    extraction: Extraction | None  # None: no message of the user, nothing to do
    started: float = field(default_factory=time.perf_counter)


def people_archivist_run(*, tenant: Tenant, user_id: str, messages: Sequence[Message]) -> ArchivistRun:
    """The archivist over messages of one user, outside any transaction: the LLM archivist when a
    provider is configured, the rule-based one otherwise. Writes nothing.

    Every LLM failure raises, and the job is retried later: an outage (`LLMUnavailable`), a reply
    still malformed after its re-ask (`LLMResponseError`), a refused request (`LLMError`). A
    malformed reply does not fall back to the rules: the job would then finish, these messages
    would count as extracted for good by the weaker archivist, and the model would never see them
    again. The profiles step does the same, so both treat one bad reply alike. After
    ARCHIVAL_MAX_ATTEMPTS the job shows as failed, and the sweeper keeps retrying it.
    """
    started = time.perf_counter()
    mine = sorted((m for m in messages if m.tenant_id == tenant.pk and m.user_id == user_id),
                  key=lambda m: (m.created_at, m.pk))
    if not mine:
        return ArchivistRun(mine, None, started)
    people = selectors.people_for_archivist(tenant_id=tenant.pk, user_id=user_id, messages=mine,
                                            limit=conf.get("PEOPLE_ARCHIVIST_MAX_KNOWN"))
    known = [KnownPerson(id=p.pk, display_name=p.display_name, aliases=tuple(p.aliases), username=p.username,
                         telegram_id=p.telegram_id, circle=p.circle) for p in people]
    client = get_llm()
    if client is None:
        return ArchivistRun(mine, rules.extract(mine, known), started)
    extraction = extract_with_llm(
        client=client, messages=mine, known=known, known_lines=[p.archivist_line() for p in people],
        facts=_known_facts(tenant_id=tenant.pk, user_id=user_id), max_added=conf.get("PEOPLE_ARCHIVIST_MAX_ADDED"),
    )
    return ArchivistRun(mine, extraction, started)


def _applied_summary(tenant: Tenant, run: ArchivistRun, extraction: Extraction, applied: Applied) -> dict[str, Any]:
    metrics.EXTRACTION_DURATION.labels(str(tenant.pk)).observe(time.perf_counter() - run.started)
    result: dict[str, Any] = {"source": extraction.source, **applied.counts, "dropped": len(extraction.dropped)}
    if extraction.dropped:
        result["dropped_reasons"] = extraction.dropped[:10]
    return result


def people_extract_from_messages(*, tenant: Tenant, user_id: str, messages: Sequence[Message]) -> dict[str, Any]:
    """Run the archivist over messages of one user and apply what it found: the three phases in a
    row, for a caller outside the kernel's jobs. Call it outside a transaction. Raises what
    `people_archivist_run` raises, and then nothing was written."""
    run = people_archivist_run(tenant=tenant, user_id=user_id, messages=messages)
    if run.extraction is None:
        return {"source": "none"}
    applied = people_operations_apply(tenant=tenant, user_id=user_id, extraction=run.extraction,
                                      messages=run.messages)
    after = people_after_apply(tenant_id=tenant.pk, user_id=user_id, person_ids=applied.person_ids)
    for key in ("merged", "proposed"):
        if after[key]:
            applied.counts[key] += after[key]
    return _applied_summary(tenant, run, run.extraction, applied)


# The extract job's step (registered in apps.py).
def people_job_prepare(job: ArchivalJob, messages: Sequence[Message]) -> ArchivistRun:
    return people_archivist_run(tenant=job.tenant, user_id=job.user_id, messages=messages)


def people_job_apply(job: ArchivalJob, messages: Sequence[Message], prepared: ArchivistRun) -> dict[str, Any]:
    """Inside the kernel's write transaction. The summary keeps the ids the run touched, which the
    after-phase needs, also when the kernel re-runs it after a stop."""
    if prepared.extraction is None:
        return {"source": "none"}
    applied = people_operations_apply(tenant=job.tenant, user_id=job.user_id, extraction=prepared.extraction,
                                      messages=prepared.messages)
    return {**_applied_summary(job.tenant, prepared, prepared.extraction, applied), "person_ids": applied.person_ids}


def people_job_after(job: ArchivalJob, summary: dict[str, Any]) -> dict[str, int]:
    """After the kernel's commit; its writes go through `job_write`, so an erasure meanwhile makes
    it write nothing."""
    return people_after_apply(tenant_id=job.tenant_id, user_id=job.user_id,
                              person_ids=summary.get("person_ids", []), write=job_scope(job.pk))
