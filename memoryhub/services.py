"""Writes of the kernel: tenants, API keys, message intake with its outbox, archival jobs."""

from __future__ import annotations

import logging
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.apps import apps as django_apps
from django.conf import settings
from django.contrib.admin.models import LogEntry
from django.contrib.contenttypes.models import ContentType
from django.core.exceptions import ValidationError
from django.db import IntegrityError, connection, transaction
from django.db.models import Exists, F, Model, OuterRef, Q, QuerySet
from django.utils import timezone

from memoryhub import deferred, metrics, registry, sensitive
from memoryhub.auth import generate_key, hash_key, key_cache
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.locks import advisory_lock
from memoryhub.models import ApiKey, ArchivalJob, Conversation, Message, Tenant

logger = logging.getLogger(__name__)


# --- Tenants and keys -----------------------------------------------------------------------
@transaction.atomic
def api_key_create(*, tenant: Tenant, name: str = "default", scopes: Sequence[str] = ("memory",)
                   ) -> tuple[ApiKey, str]:
    """Create a key and return it with its raw value, which is not stored and cannot be shown again."""
    unknown = sorted(set(scopes) - set(ApiKey.Scope.values))
    if unknown or not scopes:
        raise ApplicationError(f"Unknown or no scopes {unknown}; use {', '.join(ApiKey.Scope.values)}.",
                               field="scopes")
    raw, prefix = generate_key()
    key = ApiKey.objects.create(tenant=tenant, name=name, prefix=prefix, key_hash=hash_key(raw),
                                scopes=list(dict.fromkeys(scopes)))
    return key, raw


@transaction.atomic
def tenant_create(*, name: str, scopes: Sequence[str] = ("memory",)) -> tuple[Tenant, str]:
    name = name.strip()
    if not name:
        raise ApplicationError("Tenant name must not be empty.", field="name")
    try:
        with transaction.atomic():  # the unique name decides, as for worlds and campaigns
            tenant = Tenant.objects.create(name=name)
    except IntegrityError as exc:
        raise ApplicationError(f"Tenant {name!r} already exists.", code="exists", field="name") from exc
    _, raw = api_key_create(tenant=tenant, scopes=scopes)
    return tenant, raw


def api_key_revoke(*, api_key: ApiKey) -> ApiKey:
    if api_key.revoked_at is None:
        api_key.revoked_at = timezone.now()
        api_key.save(update_fields=["revoked_at"])
    # Refused at once by this process; other processes drop it within API_KEY_CACHE_SECONDS.
    key_cache.forget(api_key.key_hash)
    return api_key


@transaction.atomic
def api_key_rotate(*, tenant: Tenant, name: str, scopes: Sequence[str] | None = None) -> tuple[ApiKey, str, int]:
    """Revoke the tenant's active keys of this name and create one in their place, with the scopes
    given or else those the revoked keys had. Returns the new key, its raw value and how many keys
    were revoked."""
    revoked, held = 0, set()
    for old in ApiKey.objects.select_for_update(of=("self",)).filter(tenant=tenant, name=name,
                                                                     revoked_at__isnull=True):
        api_key_revoke(api_key=old)
        held.update(old.scopes)
        revoked += 1
    keep = scopes or [s for s in ApiKey.Scope.values if s in held] or ["memory"]
    key, raw = api_key_create(tenant=tenant, name=name, scopes=keep)
    return key, raw, revoked


# --- Message intake (with its outbox row) ---------------------------------------------------
SPEAKER_MAX_LENGTH = Message._meta.get_field("speaker").max_length or 128


@dataclass
class IncomingMessage:
    role: str
    text: str
    created_at: datetime | None = None
    external_id: str | None = None
    speaker: str = ""
    emotion: str = ""
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class AppendResult:
    conversation: Conversation
    created: list[Message]
    duplicates: int
    job: ArchivalJob | None
    extract_job: ArchivalJob | None = None
    # The stored message of each skipped duplicate (its external_id → id), and the external_ids of those
    # re-sent with another text than the one stored (which stays: a retry must not rewrite history).
    duplicate_ids: dict[str, int] = field(default_factory=dict)
    duplicates_changed: list[str] = field(default_factory=list)
    # Sensitive numbers masked in the stored messages, by kind (empty under SENSITIVE_POLICY=keep).
    masked: Counter[str] = field(default_factory=Counter)
    # The turns `held` found in the session: the batch's index → the stored message's id.
    held_ids: dict[int, int] = field(default_factory=dict)


# Given the session (locked) and the batch as it is stored (masked), the batch's turns the session
# already holds: index → the stored message's id.
HeldTurns = Callable[[Conversation, Sequence["IncomingMessage"]], Mapping[int, int]]


def messages_append(
    *,
    tenant: Tenant,
    user_id: str,
    session_id: str,
    messages: Sequence[IncomingMessage],
    auto_extract: bool = False,
    reply_to: Sequence[int] = (),
    held: HeldTurns | None = None,
) -> AppendResult:
    """Store a batch and its jobs in one transaction; enqueue them after commit.

    Under SENSITIVE_POLICY=mask the batch is masked first, before the transaction: a large batch
    costs tens of milliseconds of regexes, which must not be spent holding the session's row.

    Every batch gets an index job (searchable within a second, no LLM). Extraction is one job per
    session: requested at once by `auto_extract`, or when the session's unextracted messages reach
    ARCHIVAL_SESSION_SIZE; a waiting one is reused, so work never multiplies.

    Idempotent on `external_id`: messages whose id is already stored in this session are skipped,
    so a client may retry a batch after a timeout without duplicating anything.

    `reply_to`: messages of this session the batch answers (a generated answer to stored turns).
    If one is gone when the user's write lock is held (the user was erased while the answer was
    being written), nothing is stored: ApplicationError `erased` (409). Without it, the answer
    started the erased user anew, alone in their session.

    `held`: picks the batch's turns the session already holds, which are skipped as duplicates are
    (`AppendResult.held_ids`); POST /chat's history that a client resends. It runs under the
    session's lock, so two concurrent batches cannot both take one turn for new.
    """
    found: list[Counter[str]] = [Counter() for _ in messages]
    if sensitive.masking_at_intake():
        messages = [_masked(m, counts) for m, counts in zip(messages, found, strict=True)]
    return _messages_store(tenant=tenant, user_id=user_id, session_id=session_id, messages=messages,
                           found=found, auto_extract=auto_extract, reply_to=reply_to, held=held)


@transaction.atomic
def _messages_store(
    *, tenant: Tenant, user_id: str, session_id: str, messages: Sequence[IncomingMessage],
    found: Sequence[Counter[str]], auto_extract: bool, reply_to: Sequence[int] = (),
    held: HeldTurns | None = None,
) -> AppendResult:
    # The user's write lock first, as erasure and every job's write take it: an erasure running
    # meanwhile either waits for this batch and erases it, or comes first and this batch starts the
    # user anew. Without it, a batch committed between an erasure's deletes left rows pointing at
    # the session it was deleting, and the erasure failed at its commit (a 500; nothing erased).
    # Then the session's row serialises appends to one session, so two concurrent retries of one
    # batch cannot both pass the duplicate check and collide on the unique constraint. An existing
    # session (the usual case) is locked in one query; a row this transaction creates is its own
    # until commit (a concurrent creator waits on the unique constraint), so only a row found by
    # get_or_create needs the lock.
    user_write_lock(tenant_id=tenant.pk, user_id=user_id)
    if reply_to and Message.objects.filter(
            tenant=tenant, user_id=user_id, conversation__session_id=session_id, pk__in=reply_to
    ).count() < len(set(reply_to)):
        raise ApplicationError(f"The turns this answers were erased meanwhile (user {user_id!r}): nothing was "
                               f"stored.", code="erased", status_code=409)
    session = Conversation.objects.select_for_update(of=("self",))
    conversation = session.filter(tenant=tenant, user_id=user_id, session_id=session_id).first()
    if conversation is None:
        conversation, created = Conversation.objects.get_or_create(tenant=tenant, user_id=user_id,
                                                                   session_id=session_id)
        if not created:
            conversation = session.get(pk=conversation.pk)

    ids = [m.external_id for m in messages if m.external_id]
    existing = {
        external_id: (pk, text) for external_id, pk, text in Message.objects.filter(
            conversation=conversation, external_id__in=ids).values_list("external_id", "pk", "text")
    } if ids else {}

    held_ids = dict(held(conversation, messages)) if held else {}
    now = timezone.now()
    new = [i for i, m in enumerate(messages)
           if i not in held_ids and not (m.external_id and m.external_id in existing)]
    # What the stored messages had masked; a skipped duplicate was counted when first stored.
    masked: Counter[str] = sum((found[i] for i in new), Counter())
    rows = [
        Message(
            tenant=tenant,
            conversation=conversation,
            user_id=user_id,
            role=m.role,
            speaker=m.speaker,
            text=m.text,
            created_at=m.created_at or now,
            received_at=now,
            external_id=m.external_id,
            emotion=m.emotion,
            meta=m.meta,
        )
        for m in (messages[i] for i in new)
    ]
    created = Message.objects.bulk_create(rows)
    job = extract_job = None
    if created:
        latest = max(m.created_at for m in created)
        conversation.message_count += len(created)
        if conversation.last_message_at is None or latest > conversation.last_message_at:
            conversation.last_message_at = latest
        conversation.last_received_at = now
        conversation.save(update_fields=["message_count", "last_message_at", "last_received_at"])
        job = ArchivalJob.objects.create(
            tenant=tenant, conversation=conversation, user_id=user_id, kind=ArchivalJob.Kind.INDEX,
            message_ids=[m.pk for m in created], next_attempt_at=now, enqueued_at=now,
        )
        _enqueue_on_commit(job.pk, stamped=True)
        if auto_extract:
            extract_job, _ = _extraction_request(conversation, trigger=ArchivalJob.Trigger.AUTO_EXTRACT)
        # A session holds no more unextracted messages than messages: below the size, no count.
        elif (conversation.message_count >= settings.ARCHIVAL_SESSION_SIZE
              and _unextracted_count(conversation) >= settings.ARCHIVAL_SESSION_SIZE):
            extract_job, _ = _extraction_request(conversation, trigger=ArchivalJob.Trigger.SIZE)
    repeated = [m for m in messages if m.external_id and m.external_id in existing]
    return AppendResult(conversation=conversation, created=created, duplicates=len(messages) - len(created),
                        job=job, extract_job=extract_job, masked=masked, held_ids=held_ids,
                        duplicate_ids={m.external_id: existing[m.external_id][0] for m in repeated},
                        duplicates_changed=[m.external_id for m in repeated if m.text != existing[m.external_id][1]])


def _masked(message: IncomingMessage, counts: Counter[str]) -> IncomingMessage:
    """The message with its sensitive numbers masked, before anything is written: the raw number is
    never stored, not in the table, its WAL or a backup."""
    text, found = sensitive.mask_text(message.text, where="message")
    meta, found_meta = sensitive.mask_json(message.meta, where="meta")
    # The speaker (OpenAI's `name`) is free text a client fills in, shown in every chunk, context
    # line and prompt that quotes the turn, so it is masked like the text.
    speaker, found_speaker = sensitive.mask_bounded(message.speaker, max_length=SPEAKER_MAX_LENGTH,
                                                    where="message")
    counts.update(found)
    counts.update(found_meta)
    counts.update(found_speaker)
    # `external_id` is left as sent: it is the client's idempotency key, not something said. Two
    # ids that mask alike (two cards ending 4242) would be taken for one message and the second
    # skipped as a duplicate, and a retry must find its id unchanged. It goes back to the client
    # as its own key (a search item's meta) but no context line or prompt quotes it.
    return IncomingMessage(role=message.role, text=text, created_at=message.created_at,
                           external_id=message.external_id, speaker=speaker, emotion=message.emotion,
                           meta=meta)


def _enqueue_on_commit(job_id: int, *, stamped: bool = False, background: bool = False) -> None:
    """`stamped`: the job row was written with `enqueued_at` (its creation), saving an UPDATE per
    stored batch. If the process dies between the commit and the publish, the sweeper takes the
    job after ARCHIVAL_SWEEP_AFTER_SECONDS, as it does a job whose publish failed. `background`:
    see archival_job_enqueue."""
    transaction.on_commit(lambda: archival_job_enqueue(job_id=job_id, stamped=stamped, background=background))


def _unextracted_ids(conversation: Conversation) -> list[int]:
    return list(
        Message.objects.filter(conversation=conversation, pk__gt=conversation.extracted_until_message_id)
        .order_by("id").values_list("id", flat=True)
    )


def _unextracted_count(conversation: Conversation) -> int:
    """Messages no extraction has taken yet: past the last extracted one and past what a running
    extraction holds (it will mark them extracted when it finishes)."""
    covered = conversation.extracted_until_message_id
    for ids in ArchivalJob.objects.filter(conversation=conversation, kind=ArchivalJob.Kind.EXTRACT,
                                          status=ArchivalJob.Status.RUNNING).values_list("message_ids", flat=True):
        covered = max(covered, *ids) if ids else covered
    return Message.objects.filter(conversation=conversation, pk__gt=covered).count()


def _extraction_request(conversation: Conversation, *, trigger: str) -> tuple[ArchivalJob, bool]:
    """The session's waiting extraction job, created if there is none. Runs with the session's
    row locked, so two requests cannot both create one. An explicit request (a batch with
    `enable_auto_extract`, the extract endpoint) makes a job that waits after failures due now."""
    waiting = (ArchivalJob.objects.select_for_update(of=("self",))
               .filter(conversation=conversation, kind=ArchivalJob.Kind.EXTRACT,
                       status__in=[ArchivalJob.Status.PENDING, ArchivalJob.Status.FAILED])
               .order_by("id").first())
    if waiting is None:
        now = timezone.now()
        waiting = ArchivalJob.objects.create(
            tenant_id=conversation.tenant_id, conversation=conversation, user_id=conversation.user_id,
            kind=ArchivalJob.Kind.EXTRACT, trigger=trigger, next_attempt_at=now, enqueued_at=now,
        )
        _enqueue_on_commit(waiting.pk, stamped=True, background=True)
        return waiting, True
    if trigger in (ArchivalJob.Trigger.AUTO_EXTRACT, ArchivalJob.Trigger.REQUEST):
        waiting.next_attempt_at = timezone.now()
        waiting.save(update_fields=["next_attempt_at"])
        _enqueue_on_commit(waiting.pk, background=True)
    return waiting, False


@transaction.atomic
def session_extract(*, tenant: Tenant, user_id: str, session_id: str) -> ArchivalJob:
    """Extract a session now (the extract endpoint): its waiting extraction job, due at once."""
    user_write_lock(tenant_id=tenant.pk, user_id=user_id)  # as an append: an erasure comes before or after
    conversation = (Conversation.objects.select_for_update(of=("self",))
                    .filter(tenant=tenant, user_id=user_id, session_id=session_id).first())
    if conversation is None:
        raise NotFound(f"User {user_id!r} has no session {session_id!r}.", field="session_id")
    return _extraction_request(conversation, trigger=ArchivalJob.Trigger.REQUEST)[0]


def sessions_extract_idle(*, idle: timedelta | None = None) -> int:
    """Beat: a session idle for `ARCHIVAL_IDLE_SECONDS` with messages not yet through extraction
    gets an extraction job (facts, people). Returns the number of jobs created."""
    idle = idle if idle is not None else timedelta(seconds=settings.ARCHIVAL_IDLE_SECONDS)
    cutoff = timezone.now() - idle
    unextracted = Message.objects.filter(conversation=OuterRef("pk"), pk__gt=OuterRef("extracted_until_message_id"))
    waiting = ArchivalJob.objects.filter(conversation=OuterRef("pk"), kind=ArchivalJob.Kind.EXTRACT).exclude(
        status=ArchivalJob.Status.DONE)
    created = 0
    candidates = (Conversation.objects.filter(last_message_at__lt=cutoff)
                  .filter(Exists(unextracted)).exclude(Exists(waiting)).values_list("pk", "tenant_id", "user_id"))
    for pk, tenant_id, user_id in candidates.iterator():
        with transaction.atomic():
            user_write_lock(tenant_id=tenant_id, user_id=user_id)  # as an append: not amid an erasure
            locked = Conversation.objects.select_for_update(of=("self",)).filter(pk=pk).first()
            if locked is None or not _unextracted_count(locked):
                continue
            created += _extraction_request(locked, trigger=ArchivalJob.Trigger.IDLE)[1]
    return created


# --- Archival jobs --------------------------------------------------------------------------
def archival_job_enqueue(*, job_id: int, stamped: bool = False, background: bool = False) -> bool:
    """Hand a job to the broker. A broker outage is logged, not raised: the job row is committed
    and the sweeper will enqueue it again, so the client's request still succeeds. `stamped`:
    `enqueued_at` is already set (the job was created with it).

    `background` (extraction jobs): without a broker the task would run right here, inside the
    client's request, which would wait on the LLM; where the embedded beat runs in this process
    the job goes to its background thread instead (memoryhub.deferred), and the job row, pending
    until done, is the sweeper's to run again if the process dies first."""
    from memoryhub.tasks import archival_job_run_task

    if not stamped:
        ArchivalJob.objects.filter(pk=job_id).update(enqueued_at=timezone.now())
    sent = deferred.dispatch(archival_job_run_task, job_id, what=f"archival job {job_id}", background=background)
    if not sent:
        # Stamped as sent, a job the broker never got waited out ARCHIVAL_SWEEP_AFTER_SECONDS as if a worker
        # held it (6 minutes after a broker outage); unstamped, the next sweep sends it.
        ArchivalJob.objects.filter(pk=job_id, status__in=_UNFINISHED).update(enqueued_at=None)
    return sent


def _user_lock_key(tenant_id: int, user_id: str) -> str:
    return f"archival:{tenant_id}:{user_id}"


def user_write_lock(*, tenant_id: int, user_id: str) -> None:
    """Held (until commit) by every job's write transaction and by erasure, so an erasure either
    comes after a job's write and deletes it, or before, and the job finds its row gone."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [_user_lock_key(tenant_id, user_id)])


@contextmanager
def job_write(job_id: int, *, owner: tuple[int, str] | None = None) -> Iterator[ArchivalJob | None]:
    """A short transaction holding the user's write lock and the job's row; yields None when the
    job is gone (its user was erased), and then the caller must write nothing. `owner` (tenant
    id, user id) saves a read when the caller knows whose job it is."""
    head = owner or ArchivalJob.objects.filter(pk=job_id).values_list("tenant_id", "user_id").first()
    with transaction.atomic():
        if head is None:
            yield None
            return
        user_write_lock(tenant_id=head[0], user_id=head[1])
        yield (ArchivalJob.objects.select_for_update(of=("self",)).select_related("tenant", "conversation")
               .filter(pk=job_id).first())


def _runner_lock(tenant_id: int, user_id: str, kind: str, wait: float = 0.0) -> AbstractContextManager[bool]:
    """One runner per user and kind at a time, across processes (`memoryhub.locks`), held while
    the runner works through the user's queue; erasure does not wait on it, so holding it across
    LLM calls blocks nobody but another runner of the same queue."""
    return advisory_lock(f"runner:{kind}:{tenant_id}:{user_id}", 2, wait=wait)


# In the in-process mode an index job runs in the request that stored its batch, whose answer says
# the batch is searchable; when another request's runner holds the user's queue, this one waits for
# it (an index job takes milliseconds) rather than leave its batch to that runner's next look.
INDEX_RUNNER_WAIT_SECONDS = 10.0


def archival_job_run(*, job_id: int) -> ArchivalJob | None:
    """Run the job's user queue of the job's kind: every unfinished job that is due, oldest
    first, one runner per user and kind. Extraction keeps a user's order: a job that has to wait
    for a retry holds back that user's later extractions. Indexing does not wait for anything.
    A runner that finds the queue taken returns at once; the runner holding it looks again after
    it lets go, so a job committed meanwhile is never left behind. Each job runs at most once
    per call, so a zero retry delay cannot spin."""
    job = ArchivalJob.objects.select_related("tenant", "conversation").filter(pk=job_id).first()
    if job is None or job.status == ArchivalJob.Status.DONE:
        return job
    tenant_id, user_id, kind = job.tenant_id, job.user_id, job.kind
    tried: set[int] = set()
    outcome: ArchivalJob | None = None
    from memoryhub.celery import app

    # With several clients writing for one user, 44 of 60 batches were not yet searchable at their 202.
    wait = INDEX_RUNNER_WAIT_SECONDS if kind == ArchivalJob.Kind.INDEX and app.conf.task_always_eager else 0.0
    while True:
        # Waited for only until this job has run: the looks after that are for others' jobs.
        with _runner_lock(tenant_id, user_id, kind, wait=wait if outcome is None else 0.0) as acquired:
            if not acquired:
                break
            # The queue is read once per hold of the lock (it was read again after every job):
            # a failed extraction holds back the user's later ones (facts are applied in the
            # order they were said), and the look after the lock finds whatever came meanwhile.
            for pk in [pk for pk in _runnable(tenant_id, user_id, kind) if pk not in tried]:
                tried.add(pk)
                ok, final = _archival_job_run_one(pk, loaded=job if pk == job_id else None)
                if pk == job_id:
                    outcome = final
                if not ok and kind == ArchivalJob.Kind.EXTRACT:
                    break
        if not [pk for pk in _runnable(tenant_id, user_id, kind) if pk not in tried]:
            break
    return outcome or ArchivalJob.objects.filter(pk=job_id).first()


def _runnable(tenant_id: int, user_id: str, kind: str) -> list[int]:
    """The user's jobs of one kind that may run now, in order. An extraction waiting for its
    retry holds back the later ones (facts must be applied in the order they were said); one
    that gave up (failed) does not."""
    now = timezone.now()
    runnable = []
    for pk, status, due in (ArchivalJob.objects.filter(tenant_id=tenant_id, user_id=user_id, kind=kind,
                                                       status__in=_UNFINISHED)
                            .order_by("id").values_list("pk", "status", "next_attempt_at")):
        if due <= now:
            runnable.append(pk)
        elif kind == ArchivalJob.Kind.EXTRACT and status != ArchivalJob.Status.FAILED:
            break
    return runnable


def _archival_job_claim(job_id: int, loaded: ArchivalJob | None = None) -> ArchivalJob | None:
    """`loaded`: the job as the runner read it (with tenant and conversation), saving a read."""
    job = loaded or ArchivalJob.objects.select_related("tenant", "conversation").filter(pk=job_id).first()
    if job is None or job.status == ArchivalJob.Status.DONE:
        return None
    if job.kind == ArchivalJob.Kind.INDEX:
        # An index job has nothing to fix at claim time and runs in one write: it goes from
        # pending to done in that transaction (the runner lock keeps a second runner out, its
        # write skips a job found done under the row lock, and its step skips turns already
        # indexed), which saves a commit per stored batch.
        return job
    with job_write(job_id, owner=(job.tenant_id, job.user_id)) as job:
        if job is None or job.status == ArchivalJob.Status.DONE:
            return None
        if job.kind == ArchivalJob.Kind.EXTRACT and not job.result.get("steps"):
            # Fixed now, not when the job was created: a waiting job covers every message that
            # arrived meanwhile. A job that stopped between steps keeps what its steps saw.
            job.message_ids = _unextracted_ids(job.conversation)
        job.status = ArchivalJob.Status.RUNNING
        job.started_at = timezone.now()
        job.save(update_fields=["message_ids", "status", "started_at"])
        return job


def _archival_job_run_one(job_id: int, *, loaded: ArchivalJob | None = None) -> tuple[bool, ArchivalJob | None]:
    """Run one job's steps; False if it failed (recorded, retried later), with the job as last
    written (None when it was not, or is gone). Each step prepares outside any transaction (LLM
    calls, embeddings) and writes in a short one."""
    started = time.monotonic()
    job = _archival_job_claim(job_id, loaded)
    if job is None:
        return True, None
    try:
        messages = list(Message.objects.filter(pk__in=job.message_ids, tenant_id=job.tenant_id)
                        .select_related("conversation").order_by("created_at", "id"))
        steps = registry.steps_for(job.kind)
        # Index steps do not read each other's writes, so they are all prepared first and
        # applied in one transaction; extraction steps run one after the other (people's prompt
        # carries the facts profiles' step has just saved).
        groups = [steps] if job.kind == ArchivalJob.Kind.INDEX else [[step] for step in steps]
        finished = False
        for n, group in enumerate(groups):
            todo = [step for step in group if step.name not in job.result.get("steps", {})]
            if todo:
                prepared = [step.prepare(job, messages) for step in todo]
                with job_write(job_id, owner=(job.tenant_id, job.user_id)) as locked:
                    if locked is None or locked.status == ArchivalJob.Status.DONE:
                        # Erased meanwhile (what was prepared is dropped), or run by another
                        # runner since this one read it.
                        return True, locked
                    done = dict(locked.result.get("steps", {}))
                    for step, ready in zip(todo, prepared, strict=True):
                        done[step.name] = step.apply(locked, messages, ready)
                    locked.result = {**locked.result, "steps": done}
                    # The last write also closes the job: one commit less per job.
                    finished = n == len(groups) - 1 and all(step.after is None for step in group)
                    if finished:
                        _archival_job_finish(locked, started)
                    locked.save(update_fields=["result", *(_FINISH_FIELDS if finished else [])])
                    job = locked
            for step in group:
                if step.after is not None and step.name not in job.result.get("after", []):
                    after = step.after(job, job.result["steps"][step.name]) or {}
                    with job_write(job_id, owner=(job.tenant_id, job.user_id)) as locked:
                        if locked is None:
                            return True, None
                        locked.result = {**locked.result,
                                         "after": {**locked.result.get("after", {}), step.name: after}}
                        locked.save(update_fields=["result"])
                        job = locked
        if not finished:
            with job_write(job_id, owner=(job.tenant_id, job.user_id)) as locked:
                if locked is None:
                    return True, None
                _archival_job_finish(locked, started)
                locked.save(update_fields=_FINISH_FIELDS)
                job = locked
        metrics.ARCHIVAL_JOBS.labels("done").inc()
        return True, job
    except Exception as exc:
        # Every failure is retried, not only an LLM outage: a malformed reply may come out right
        # next time, and a bug fixed by a deploy must not have lost the messages meanwhile.
        _archival_job_record_failure(job_id=job_id, error=exc)
        return False, None


_FINISH_FIELDS = ["status", "started_at", "finished_at", "error", "result"]


def _archival_job_finish(job: ArchivalJob, started: float) -> None:
    """Mark a locked job done (the caller saves `_FINISH_FIELDS`); an extraction also moves its
    session's extracted-until mark, in the same transaction."""
    elapsed = time.monotonic() - started
    job.status = ArchivalJob.Status.DONE
    job.finished_at = timezone.now()
    job.started_at = job.started_at or job.finished_at - timedelta(seconds=elapsed)  # index jobs skip the claim
    job.error = ""
    job.result = {**job.result, "duration_ms": round(elapsed * 1000, 1)}
    if job.kind == ArchivalJob.Kind.EXTRACT and job.message_ids:
        Conversation.objects.filter(
            pk=job.conversation_id, extracted_until_message_id__lt=max(job.message_ids)
        ).update(extracted_until_message_id=max(job.message_ids))


def archival_retry_delay(attempts: int) -> timedelta:
    """Growing delay after the n-th failure in a row: base·2^(n-1), capped, with ±20% jitter so
    the jobs an outage failed together do not all come back in the same second."""
    base = settings.ARCHIVAL_RETRY_BASE_SECONDS * 2 ** min(attempts - 1, 20)
    return timedelta(seconds=min(base, settings.ARCHIVAL_RETRY_MAX_SECONDS) * random.uniform(0.8, 1.2))


def _archival_job_record_failure(*, job_id: int, error: Exception) -> None:
    with job_write(job_id) as job:
        if job is None:
            return
        job.attempts += 1
        job.error = f"{type(error).__name__}: {error}"[:2000]
        give_up = job.attempts >= settings.ARCHIVAL_MAX_ATTEMPTS
        job.status = ArchivalJob.Status.FAILED if give_up else ArchivalJob.Status.PENDING
        job.next_attempt_at = timezone.now() + archival_retry_delay(job.attempts)
        job.save(update_fields=["attempts", "error", "status", "next_attempt_at"])
    metrics.ARCHIVAL_JOBS.labels("failed" if give_up else "retry").inc()
    logger.warning("%s job %s failed (attempt %s, next at %s): %s", job.kind, job_id, job.attempts,
                   job.next_attempt_at.isoformat(), job.error)


_UNFINISHED = [ArchivalJob.Status.PENDING, ArchivalJob.Status.RUNNING, ArchivalJob.Status.FAILED]


def archival_sweep(*, older_than: timedelta | None = None) -> int:
    """The one owner of retries. Enqueue every unfinished job that is due and not enqueued since
    it became due: a retry whose delay has passed, a job the broker never got, or one whose
    worker died (still `running` long after its enqueue). Returns the count."""
    older_than = older_than if older_than is not None else timedelta(seconds=settings.ARCHIVAL_SWEEP_AFTER_SECONDS)
    now = timezone.now()
    stale = list(
        ArchivalJob.objects.filter(status__in=_UNFINISHED, next_attempt_at__lte=now)
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=F("next_attempt_at"))
                | Q(enqueued_at__lt=now - older_than))
        .order_by("id")
        .values_list("id", flat=True)
    )
    for job_id in stale:
        archival_job_enqueue(job_id=job_id)
    return len(stale)


# --- Erasure --------------------------------------------------------------------------------
def admin_log_forget(*, model: type[Model], object_ids: Iterable[Any]) -> int:
    """Delete the admin's log entries of these rows of `model`. An entry keeps the row's text
    (`object_repr`, "boris.hobbies = go (board game)") and the admin shows it under "Recent actions"
    after the row is gone: an erasure takes it with the row. Apps call it for rows their user once
    held and that are gone already (a replaced fact)."""
    wanted = {str(pk) for pk in object_ids}
    if not wanted:
        return 0
    content_type = ContentType.objects.get_for_model(model, for_concrete_model=False)
    deleted, _ = LogEntry.objects.filter(content_type=content_type, object_id__in=wanted).delete()
    return deleted


def admin_log_forget_rows(*, querysets: Iterable[QuerySet[Any]]) -> int:
    """`admin_log_forget` for every row of these querysets (one per model), before they are deleted.
    The log is an editor's actions, so it is read once and matched to the rows, not the other way
    round (a user or a campaign may hold millions of rows)."""
    wanted = {ContentType.objects.get_for_model(qs.model, for_concrete_model=False).pk: qs for qs in querysets}
    logged: dict[int, set[str]] = {}
    for content_type_id, object_id in LogEntry.objects.filter(content_type_id__in=wanted).values_list(
            "content_type_id", "object_id"):
        logged.setdefault(content_type_id, set()).add(object_id)
    deleted = 0
    for content_type_id, object_ids in logged.items():
        rows = wanted[content_type_id]
        candidates = []
        for object_id in object_ids:
            try:
                candidates.append(rows.model._meta.pk.to_python(object_id))
            except ValidationError:
                continue
        deleted += admin_log_forget(model=rows.model,
                                    object_ids=rows.filter(pk__in=candidates).values_list("pk", flat=True))
    return deleted


def _admin_log_forget_user(*, tenant: Tenant, user_id: str) -> int:
    """`admin_log_forget` for every row the user holds, in every model with a tenant and a user id,
    before the erasers delete them."""
    return admin_log_forget_rows(querysets=[
        model._default_manager.filter(tenant=tenant, user_id=user_id) for model in django_apps.get_models()
        if {"tenant", "user_id"} <= {f.name for f in model._meta.get_fields()}])


@transaction.atomic
def user_erase(*, tenant: Tenant, user_id: str) -> dict[str, Any]:
    """Delete everything held for one user of one tenant, in one transaction, and return a
    receipt of counts. Apps delete their own rows through `registry.erasers`.

    Takes the user's write lock first: a job in the middle of a write finishes it and is erased
    with the rest; a job still preparing (waiting on the LLM, say) finds its row gone when it
    comes to write, and drops what it prepared."""
    user_write_lock(tenant_id=tenant.pk, user_id=user_id)
    deleted: dict[str, int] = {}
    deleted["admin_log_entries"] = _admin_log_forget_user(tenant=tenant, user_id=user_id)
    deleted["jobs"], _ = ArchivalJob.objects.filter(tenant=tenant, user_id=user_id).delete()
    for eraser in registry.erasers:
        for kind, count in eraser.run(tenant, user_id).items():
            deleted[kind] = deleted.get(kind, 0) + count
    deleted["messages"], _ = Message.objects.filter(tenant=tenant, user_id=user_id).delete()
    deleted["conversations"], _ = Conversation.objects.filter(tenant=tenant, user_id=user_id).delete()
    # Said once it holds: a failed commit logged "erased" for an erasure rolled back.
    transaction.on_commit(lambda: logger.info("erased user %s of tenant %s: %s", user_id, tenant.pk, deleted))
    return {"user_id": user_id, "erased_at": timezone.now(), "deleted": deleted}
