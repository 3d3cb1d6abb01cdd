"""People's vectors, computed outside transactions.

An embedder may be a remote service, and a network call must never run inside a transaction that
holds a lock: an erasure, the user's next job or an editor would wait on a slow provider. So a
write that changes a person's embedding text clears the vector (NULL means "to embed"), and after
its commit `people_embed_pending` embeds the texts outside any transaction, then stores each vector
in a short transaction, only if the person still has the text that was embedded.

Until then the person is found by name and by bio but not by vector: the selectors and the dedup
skip a missing vector. A writer that stops before embedding (a crash, an embedder outage) leaves
NULLs that the user's next extract job fills (its after-phase embeds every vector the user lacks),
or the `people_vectors_fill` beat job (every five minutes), whichever comes first.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator
from contextlib import AbstractContextManager, contextmanager

from django.db import transaction

from memoryhub.embeddings import get_embedder
from memoryhub.services import job_write, user_write_lock
from people.models import MergeProposal, Person
from people.services.persons import active_person

# A scope for one short write: yields False when there is nothing to write for any more (the job
# is gone because its user was erased), and the caller then writes nothing.
WriteScope = Callable[[], AbstractContextManager[bool]]

EMBED_BATCH = 64


def user_write(tenant_id: int, user_id: str) -> WriteScope:
    """Short transactions holding the user's archival write lock, as a job's writes hold it, so an
    erasure either comes first (the rows are gone, nothing is written) or after (and deletes it)."""

    @contextmanager
    def scope() -> Iterator[bool]:
        with transaction.atomic():
            user_write_lock(tenant_id=tenant_id, user_id=user_id)
            yield True

    return scope


def job_scope(job_id: int) -> WriteScope:
    """Short transactions through the kernel's `job_write`: the user's lock and the job's row."""

    @contextmanager
    def scope() -> Iterator[bool]:
        with job_write(job_id) as job:
            yield job is not None

    return scope


def people_embed_pending(
    *, tenant_id: int, user_id: str, person_ids: Collection[int] | None = None, write: WriteScope | None = None,
    everyone: bool = False,
) -> list[int]:
    """Vectors for the user's living people who have none (of `person_ids`, or all); returns the
    ids whose vector was stored. Call it outside any transaction: the embedder is called between
    the short write transactions. A person whose text changed while it was being embedded is left
    alone: the write that changed it cleared the vector again and embeds the new text after its own
    commit, so the last text always gets its vector and an older one never overwrites it.
    `everyone`: every living person, vector or not (`manage.py reindex` after the embedder changed)."""
    write = write or user_write(tenant_id, user_id)
    missing = {} if everyone else {"embedding__isnull": True}
    pending = Person.objects.filter(tenant_id=tenant_id, user_id=user_id, status=Person.Status.ACTIVE, **missing)
    if person_ids is not None:
        pending = pending.filter(pk__in=list(person_ids))
    stored: list[int] = []
    last = 0
    while True:
        batch = list(pending.filter(pk__gt=last).order_by("pk")[:EMBED_BATCH])
        if not batch:
            return stored
        last = batch[-1].pk
        texts = {p.pk: p.embedding_text() for p in batch}
        vectors = dict(zip(texts, get_embedder().embed(list(texts.values())), strict=True))
        with write() as ok:
            if not ok:
                return stored
            locked = (Person.objects.select_for_update().filter(pk__in=list(texts), status=Person.Status.ACTIVE,
                                                                 **missing).order_by("pk"))
            for person in locked:
                if person.embedding_text() == texts[person.pk]:
                    Person.objects.filter(pk=person.pk).update(embedding=vectors[person.pk])
                    stored.append(person.pk)


def people_dedup_with_vectors(
    *,
    tenant_id: int,
    user_id: str,
    person_ids: Collection[int],
    auto_merge: bool,
    origin: str = MergeProposal.Origin.DEDUP,
    write: WriteScope | None = None,
) -> dict[str, int]:
    """The dedup a write had to run without the vector (its embedding rule), once the vector is
    there: one short transaction per person. The name and key rules run again too; they open
    nothing new (a proposal is never duplicated, an exact pair was merged already)."""
    from people.services.merges import person_dedup

    write = write or user_write(tenant_id, user_id)
    counts = {"merged": 0, "proposed": 0}
    for pk in sorted(set(person_ids)):
        with write() as ok:
            if not ok:
                break
            person = active_person(pk, tenant_id, user_id)
            if person is None or person.embedding is None:
                continue  # still no vector: a later write embeds it and runs this again
            result = person_dedup(person=person, auto_merge=auto_merge, origin=origin)
            counts["merged"] += result["merged"]
            counts["proposed"] += result["proposed"]
    return counts


def vectors_after_commit(
    *, tenant_id: int, user_id: str, person_ids: Collection[int], dedup_origin: str | None = None
) -> None:
    """For a write of the API or the admin: embed these people (and, with `dedup_origin`, run the
    dedup that needs their vectors, proposals only) once the current transaction has committed, or
    at once when none is open. `robust`: the write is committed and must not turn into an error
    because the embedder is away; the vector stays missing until the next write or job fills it."""
    ids = sorted(set(person_ids))

    def run() -> None:
        people_embed_pending(tenant_id=tenant_id, user_id=user_id, person_ids=ids)
        if dedup_origin is not None:
            people_dedup_with_vectors(tenant_id=tenant_id, user_id=user_id, person_ids=ids, auto_merge=False,
                                      origin=dedup_origin)

    transaction.on_commit(run, robust=True)
