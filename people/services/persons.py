"""Writes of one person: creation from an archivist's draft, updates, edits, mentions, relations."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from django.contrib.auth.base_user import AbstractBaseUser
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from memoryhub.embeddings import get_embedder
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Message, Tenant
from memoryhub.sensitive import redact
from memoryhub.text import analyze, join_sentences, normalize, split_sentences
from people import conf, metrics
from people.archivist.phrases import partner_word
from people.models import PeopleAuditEntry, Person, PersonMention, PersonRelation
from people.names import clean_name, clean_username, concept_terms, kin_key, name_key, name_terms
from people.ops import PersonDraft
from people.translit import translit_near_terms, translit_terms, word_terms

_CIRCLES = {re.sub(r"[^a-z]", "", c.value.lower()): c.value for c in Person.Circle}
_CIRCLES.update({"inner": Person.Circle.WORK_INNER, "work": Person.Circle.WORK_INNER, "friend": Person.Circle.FRIENDS,
                 "outer": Person.Circle.WORK_OUTER, "relatives": Person.Circle.FAMILY})
# A model may name a partner's circle by the relationship ("Partner", "Romantic"), which fell to Other: a
# partner is family, the inner circle.
_CIRCLES.update(dict.fromkeys(("relative", "partner", "romantic", "romanticpartner", "spouse", "significantother",
                               "boyfriend", "girlfriend", "familymember"), Person.Circle.FAMILY))


def normalize_circle(value: Any) -> str | None:
    """A circle from free text: None when not stated, Other when not one of the five (seed 000)."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    return _CIRCLES.get(re.sub(r"[^a-z]", "", str(value).lower()), Person.Circle.OTHER)


def default_bio(display_name: str, aliases: Sequence[str]) -> str:
    """Seed 000's empty-bio rule: built from the display name and the aliases."""
    return f"{display_name} (aka {', '.join(aliases)})" if aliases else display_name


def _has_default_bio(person: Person) -> bool:
    return not person.bio or person.bio == default_bio(person.display_name, person.aliases)


def combine_bio(old: str, new: str, *, limit: int | None = None) -> str:
    """Old bio plus the new sentences it does not already say; over the limit, the oldest sentences
    after the first go, so the bio keeps who the person is and what is newest."""
    limit = limit or conf.get("PEOPLE_BIO_MAX_CHARS")
    # Every bio an archivist writes passes here: a sentence quoted from a message kept raw
    # (SENSITIVE_POLICY=keep) or an LLM's paraphrase must not carry a card or ID number.
    new = redact(new, where="bio") if new else new
    sentences = split_sentences(old) if old else []
    seen = [set(analyze(s)) for s in sentences]
    for sentence in split_sentences(new) if new else []:
        terms = set(analyze(sentence))
        norm = normalize(sentence)
        duplicate = any(norm in normalize(s) for s in sentences) or any(
            terms and len(terms & other) / len(terms | other) >= 0.8 for other in seen)
        if not duplicate:
            sentences.append(sentence)
            seen.append(terms)
    while len(sentences) > 2 and len(join_sentences(sentences)) > limit:
        del sentences[1]
    text = join_sentences(sentences)
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def derive(person: Person) -> None:
    """Recompute the lookup columns from names, aliases, username and bio."""
    person.display_name = clean_name(person.display_name)
    names = (person.display_name, *person.aliases)
    keys = [name_key(n) for n in names]
    person.name_key = keys[0] if keys else ""
    # A kin word's identity key ("kin:mother") too: "Mom", "мамой" and "妈妈" are one person, found
    # and deduplicated as an alias would be.
    person.name_keys = list(dict.fromkeys(k for k in [*keys, *(kin_key(n) for n in names)] if k))
    # With the term a person of the other script looks them up by ("cyr:igr" for "Игорь"), and those
    # it is found near by when a typo changed a consonant ("cyr~:srg ptr" for "Сергей Петров"): dedup's
    # candidates, as `name_key %> …` finds a same-script typo. No query word has a colon, so search
    # never meets these terms. Then the folded words people search finds the person by from the other
    # script ("cyr=masha" for "Маша": "Masha" finds her), which no query word meets either.
    person.name_terms = [*name_terms(names, person.username), *translit_terms(keys), *translit_near_terms(keys),
                         *word_terms(name_terms(names))]
    person.search_terms = list(dict.fromkeys(concept_terms(person.bio)))[:500]


def embed(people: Iterable[Person]) -> None:
    """Vectors for these people from seed 000's text (name, username, aliases, bio). The embedder
    may be remote, a network call: never call this inside a transaction (see `services.vectors`)."""
    people = list(people)
    if not people:
        return
    vectors = get_embedder().embed([p.embedding_text() for p in people])
    for person, vector in zip(people, vectors, strict=True):
        person.embedding = vector


def user_lock(*, tenant_id: int, user_id: str) -> None:
    """Serialise people writers of one user until commit (archival jobs, idle triggers, reviews,
    clients' edits), before any row lock. The user's write lock comes first, as erasure and the
    archival jobs take it: a merge decided while the user is erased waits and finds nothing, instead
    of writing an audit row for a proposal the erasure deletes (its commit failed). One order for
    everyone: an edit (person, then its dedup's proposals) and a merge decision (proposal, then the
    pair) deadlocked, each holding a row the other wanted."""
    from memoryhub.services import user_write_lock

    user_write_lock(tenant_id=tenant_id, user_id=user_id)
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 7))", [f"people:{tenant_id}:{user_id}"])


def audit(*, person: Person, action: str, actor: AbstractBaseUser | None, actor_label: str,
          details: dict[str, Any] | None = None, **refs: Any) -> PeopleAuditEntry:
    return PeopleAuditEntry.objects.create(
        tenant_id=person.tenant_id, user_id=person.user_id, action=action, actor=actor, actor_label=actor_label,
        person=person, details=details or {}, **refs,
    )


def actor_label_for(actor: AbstractBaseUser | None, fallback: str) -> str:
    return f"admin:{actor.get_username()}" if actor is not None else fallback


# --- identity ------------------------------------------------------------------------------------------


def active_person(person_id: int, tenant_id: int, user_id: str) -> Person | None:
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


def _conflicts(person: Person, draft: PersonDraft) -> bool:
    return bool((person.telegram_id and draft.telegram_id and person.telegram_id != draft.telegram_id)
                or (person.username and draft.username and person.username != draft.username))


def find_identity(*, tenant_id: int, user_id: str, draft: PersonDraft) -> Person | None:
    """The living person a draft is, by telegram_id → @username → name → alias → kin (issue 5's order).

    A name or alias match is refused when a Telegram id or username says they are two people.
    """
    base = Person.objects.filter(tenant_id=tenant_id, user_id=user_id, status=Person.Status.ACTIVE)
    if draft.telegram_id:
        found = base.filter(telegram_id=draft.telegram_id).order_by("pk").first()
        if found:
            return found
    username = clean_username(draft.username)
    if username:
        found = base.filter(username=username).order_by("pk").first()
        if found:
            return found
    key = name_key(draft.display_name)
    if not key:
        return None
    for found in base.filter(name_key=key).order_by("-mention_count", "pk"):
        if not _conflicts(found, draft):
            return found
    for found in base.filter(name_keys__contains=[key]).order_by("-mention_count", "pk"):
        if not _conflicts(found, draft):
            return found
    kin = kin_key(draft.display_name)  # "маме" from a model that did not fold the case is still "мама"
    if kin:
        for found in base.filter(name_keys__contains=[kin]).order_by("-mention_count", "pk"):
            if not _conflicts(found, draft):
                return found
    return None


# --- applying a draft ------------------------------------------------------------------------------------


def _record_mentions(person: Person, draft: PersonDraft) -> int:
    """Reference the messages a draft came from; count only messages not counted before (idempotent)."""
    if not draft.message_ids:
        person.mention_count += 1
        metrics.MENTIONS.labels(str(person.tenant_id)).inc()
        return 1
    known = set(PersonMention.objects.filter(person=person, message_id__in=draft.message_ids)
                .values_list("message_id", flat=True))
    new = [mid for mid in dict.fromkeys(draft.message_ids) if mid not in known]
    existing = set(Message.objects.filter(pk__in=new, tenant_id=person.tenant_id).values_list("pk", flat=True))
    PersonMention.objects.bulk_create(
        [PersonMention(tenant_id=person.tenant_id, user_id=person.user_id, person=person, message_id=mid)
         for mid in new if mid in existing],
        ignore_conflicts=True,
    )
    person.mention_count += len(new)
    metrics.MENTIONS.labels(str(person.tenant_id)).inc(len(new))
    return len(new)


def _widen_seen(person: Person, draft: PersonDraft) -> None:
    if draft.first_seen and draft.first_seen < person.first_seen:
        person.first_seen = draft.first_seen
    if draft.last_seen and draft.last_seen > person.last_seen:
        person.last_seen = draft.last_seen


def _add_aliases(person: Person, names: Iterable[str]) -> None:
    keys = {name_key(n) for n in (person.display_name, *person.aliases)}
    for name in names:
        name = clean_name(name)
        key = name_key(name)
        if key and key not in keys:
            person.aliases = [*person.aliases, name]
            keys.add(key)


def person_create_from_draft(*, tenant_id: int, user_id: str, draft: PersonDraft, embed_now: bool = True) -> Person:
    """A new person from an archivist's draft. Seed 000: a nameless draft is skipped (an error here),
    an empty bio is built from the name and aliases, no @username means NULL.

    `embed_now` embeds before the row is written, so call it outside a transaction then; with
    `embed_now=False` the vector stays NULL for `vectors.people_embed_pending` after the caller's
    commit (the archivist's apply phase, which must not call the network)."""
    name = clean_name(draft.display_name)
    if not name:
        raise ApplicationError("A person needs a display name.", code="no_name", field="display_name")
    now = timezone.now()
    person = Person(tenant_id=tenant_id, user_id=user_id, display_name=name, aliases=[],
                    username=clean_username(draft.username), telegram_id=draft.telegram_id,
                    circle=normalize_circle(draft.circle) or Person.Circle.OTHER,
                    first_seen=draft.first_seen or now, last_seen=draft.last_seen or draft.first_seen or now)
    _add_aliases(person, draft.aliases)
    person.bio = combine_bio("", draft.bio) if draft.bio.strip() else default_bio(person.display_name, person.aliases)
    derive(person)
    if embed_now:
        embed([person])
    with transaction.atomic():
        person.save()
        _record_mentions(person, draft)
        person.save(update_fields=["mention_count"])
    return person


def apply_draft(person: Person, draft: PersonDraft, *, explicit: bool) -> None:
    """Update `person` from a draft the archivist matched to them (not saved, not re-embedded).

    `explicit` is the LLM's Updated operation: a new display name renames (the old name becomes an
    alias) and a different username replaces the old one. For an Added draft that matched an
    existing person, a new name only becomes an alias, unless the current name is a bare username.
    """
    had_default_bio = _has_default_bio(person)
    name = clean_name(draft.display_name)
    if kin_key(name) and kin_key(name) == kin_key(person.display_name):
        name = ""  # "маме", "mother": another form of the kin word she is already named by
    if name and name_key(name) != person.name_key:
        placeholder = person.username is not None and person.name_key == name_key(person.username)
        if explicit or placeholder:
            old = person.display_name
            person.display_name = name
            person.aliases = [a for a in person.aliases if name_key(a) != name_key(name)]
            _add_aliases(person, [old])
        else:
            _add_aliases(person, [name])
    _add_aliases(person, draft.aliases)
    username = clean_username(draft.username)
    if username and (person.username is None or explicit):
        person.username = username
    if draft.telegram_id and (person.telegram_id is None or explicit):
        person.telegram_id = draft.telegram_id
    circle = normalize_circle(draft.circle)
    if circle and not person.circle_locked:
        if person.circle == Person.Circle.FAMILY and circle == Person.Circle.OTHER:
            # Family to Other is how both archivists say the user's partner became an ex ("Mark and I got
            # divorced"): "Husband" names him no more, and kept it would find him for the next husband.
            person.aliases = [a for a in person.aliases if not partner_word(a)]
        person.circle = circle  # seed 000: one person, different circles → the last wins
    if draft.bio.strip():
        person.bio = combine_bio("" if had_default_bio else person.bio, draft.bio)
    elif had_default_bio:
        person.bio = default_bio(person.display_name, person.aliases)
    _record_mentions(person, draft)
    _widen_seen(person, draft)
    person.updated_at = timezone.now()
    derive(person)


def relation_upsert(*, subject: Person, object: Person, kind: str, label: str = "") -> PersonRelation | None:
    if subject.pk == object.pk or subject.user_id != object.user_id or subject.tenant_id != object.tenant_id:
        return None
    kind = kind if kind in PersonRelation.Kind.values else PersonRelation.Kind.OTHER
    relation, _ = PersonRelation.objects.get_or_create(
        subject=subject, object=object, kind=kind,
        defaults={"tenant_id": subject.tenant_id, "user_id": subject.user_id, "label": label[:64]},
    )
    return relation


# --- edits by people (API clients, editors) ---------------------------------------------------------------

EDITABLE = ("display_name", "aliases", "circle", "bio")


@transaction.atomic
def person_update(
    *,
    person: Person,
    actor: AbstractBaseUser | None,
    actor_label: str,
    display_name: str | None = None,
    aliases: Sequence[str] | None = None,
    circle: str | None = None,
    bio: str | None = None,
) -> Person:
    """An edit by a client or an editor. A circle set here is locked against the archivist's
    "last wins"; a rename keeps the old name as an alias, unless it undoes the last rename. Possible
    duplicates the edit reveals become proposals (never automatic merges: an edit should not make a person
    disappear), and pending ones the new names no longer support are superseded (`merge_proposals_recheck`).

    A changed text clears the vector; it is embedded after the commit, outside the transaction (the
    embedder may be remote), and the dedup's embedding rule runs then."""
    from people.models import MergeProposal
    from people.services.merges import merge_proposals_recheck, person_dedup
    from people.services.vectors import vectors_after_commit

    user_lock(tenant_id=person.tenant_id, user_id=person.user_id)
    person = Person.objects.select_for_update().get(pk=person.pk)
    if person.status != Person.Status.ACTIVE:
        raise ApplicationError("This person was merged into another one.", code="merged")
    before = {f: getattr(person, f) for f in (*EDITABLE, "circle_locked")}
    old_text = person.embedding_text()
    had_default_bio = _has_default_bio(person)
    if display_name is not None:
        name = clean_name(display_name)
        if not name:
            raise ApplicationError("The display name must not be empty.", code="invalid", field="display_name")
        if name_key(name) != person.name_key:
            old = person.display_name
            undo = _reverts_last_rename(person, name)
            person.display_name = name
            person.aliases = [a for a in person.aliases if name_key(a) != name_key(name)]
            if not undo:
                _add_aliases(person, [old])
        else:
            person.display_name = name
    if aliases is not None:
        person.aliases = []
        _add_aliases(person, aliases)
    if circle is not None:
        if circle not in Person.Circle.values:
            raise ApplicationError(f"Unknown circle {circle!r}.", code="invalid", field="circle")
        person.circle = circle
        person.circle_locked = True
    if bio is not None:
        person.bio = redact(bio.strip(), where="bio") or default_bio(person.display_name, person.aliases)
    elif had_default_bio:
        person.bio = default_bio(person.display_name, person.aliases)
    changed = {f: {"from": before[f], "to": getattr(person, f)} for f in (*EDITABLE, "circle_locked")
               if before[f] != getattr(person, f)}
    if not changed:
        return person
    person.updated_at = timezone.now()
    derive(person)
    embed_later = person.embedding_text() != old_text
    if embed_later:
        person.embedding = None
    person.save()
    # A proposal the old names made, which the new ones do not, closes before the edit's dedup asks again.
    superseded = merge_proposals_recheck(person=person)
    audit(person=person, action=PeopleAuditEntry.Action.PERSON_EDITED, actor=actor, actor_label=actor_label,
          details={"changed": changed, **({"superseded_proposals": superseded} if superseded else {})})
    person_dedup(person=person, auto_merge=False, origin=MergeProposal.Origin.EDIT)
    if embed_later:
        vectors_after_commit(tenant_id=person.tenant_id, user_id=person.user_id, person_ids=[person.pk],
                             dedup_origin=MergeProposal.Origin.EDIT)
    return person


def _reverts_last_rename(person: Person, name: str) -> bool:
    """Whether renaming `person` to `name` undoes their last rename, back to the name it replaced: the
    name left was the mistake, and kept as an alias it would still call them by it (and match whoever
    really bears it)."""
    last = (PeopleAuditEntry.objects.filter(person=person, action=PeopleAuditEntry.Action.PERSON_EDITED,
                                            details__changed__has_key="display_name")
            .order_by("-created_at", "-pk").values_list("details", flat=True).first())
    if not last:
        return False
    change = last["changed"]["display_name"]
    return name_key(change.get("from")) == name_key(name) and name_key(change.get("to")) == person.name_key


# --- deletion and erasure ---------------------------------------------------------------------------------


@transaction.atomic
def person_delete(*, person: Person, actor: AbstractBaseUser | None, actor_label: str) -> dict[str, int]:
    """Remove a person a client or an editor says is wrong (a pet, a place, a misread word), with
    everything derived from them, as the user's erasure removes it: the people merged into them (their
    tombstones), relations, mentions, merges, and every merge proposal involving any of them, pending or
    decided. The vector and the search terms are columns of the row, so search and context drop the
    person at commit. Returns the counts per kind.

    The audit row outlives the person (its `person` is NULL): it names who deleted whom, with the
    id and name, so a wrong deletion can be traced; erasing the user removes it with the rest. Nothing
    stops the archivist from adding the name again if a later message mentions it."""
    from people.models import MergeProposal, PersonMerge

    user_lock(tenant_id=person.tenant_id, user_id=person.user_id)
    # Read again under the lock: another request may have deleted or merged them since.
    locked = Person.objects.select_for_update().filter(pk=person.pk).first()
    if locked is None:
        raise NotFound(f"User {person.user_id!r} has no person {person.pk}.", field="person_id")
    person = locked
    if person.status != Person.Status.ACTIVE:
        raise ApplicationError("This person was merged into another one.", code="merged")
    # The tombstones merged into them, and those merged into those: a merge moved their mentions and
    # relations here, and without their survivor they could never be restored.
    ids = [person.pk]
    frontier = ids
    while frontier:
        frontier = list(Person.objects.filter(tenant_id=person.tenant_id, user_id=person.user_id,
                                              merged_into_id__in=frontier).exclude(pk__in=ids)
                        .values_list("pk", flat=True))
        ids.extend(frontier)
    pair = Q(source_id__in=ids) | Q(target_id__in=ids)
    proposals = MergeProposal.objects.filter(pair)
    counts = {"merge_proposals_pending": proposals.filter(status=MergeProposal.Status.PENDING).count(),
              "merge_proposals": proposals.delete()[0],
              "merges": PersonMerge.objects.filter(pair).delete()[0],
              "relations": PersonRelation.objects.filter(Q(subject_id__in=ids) | Q(object_id__in=ids)).delete()[0],
              "mentions": PersonMention.objects.filter(person_id__in=ids).delete()[0]}
    Person.objects.filter(pk__in=ids).update(merged_into=None)  # no order between the rows' own references
    counts["people"] = Person.objects.filter(pk__in=ids).delete()[0]
    PeopleAuditEntry.objects.create(
        tenant_id=person.tenant_id, user_id=person.user_id, action=PeopleAuditEntry.Action.PERSON_DELETED,
        actor=actor, actor_label=actor_label, person=None,
        details={"person_id": person.pk, "display_name": person.display_name, "aliases": person.aliases,
                 "merged_ids": ids[1:], "deleted": counts})
    return counts


def people_user_erase(tenant: Tenant, user_id: str) -> dict[str, int]:
    """Eraser (registered with the kernel): every person row of the user, tombstones, merges and audit."""
    from people.models import MergeProposal, PersonMerge

    scope = {"tenant": tenant, "user_id": user_id}
    counts = {"people_audit": PeopleAuditEntry.objects.filter(**scope).delete()[0]}
    counts["people_merge_proposals"] = MergeProposal.objects.filter(**scope).delete()[0]
    counts["people_merges"] = PersonMerge.objects.filter(**scope).delete()[0]
    counts["people_relations"] = PersonRelation.objects.filter(**scope).delete()[0]
    counts["people_mentions"] = PersonMention.objects.filter(**scope).delete()[0]
    # merged_into points inside the same set; clear it so deletion order does not matter.
    Person.objects.filter(**scope).update(merged_into=None)
    counts["people"] = Person.objects.filter(**scope).delete()[0]
    return counts


def message_range(messages: Sequence[Message]) -> tuple[datetime | None, datetime | None]:
    times = [m.created_at for m in messages if m.created_at]
    return (min(times), max(times)) if times else (None, None)
