"""The short-term layer (seed 003 §2, §8.9): thread state with checkpoints, as LangGraph's
checkpointer keeps it, stored by MemoryHub for the game engine (`engine` scope only: the LLM's read
tools never see a thread).

A thread (`thread_id`, the engine's id for one scene / turn loop of a campaign) holds checkpoints, each
a JSON object `state` with its `metadata`, an id (the engine's, as LangGraph makes its own, or one made
here), a step (1, 2, … per thread, assigned here, never reused), a namespace (`checkpoint_ns`, "" for the
root graph; a LangGraph subgraph keeps its own series under its own) and the id of the checkpoint it
followed. The latest of a namespace is its current state. Pending writes (LangGraph's `put_writes`) hang
on a checkpoint, unique per (task_id, idx): a non-negative idx is kept as first written (a retry changes
nothing), a negative one (LangGraph's error / interrupt / resume slots) is replaced.

Concurrent writes to one thread are serialised by the thread's row (FOR UPDATE). Two writes that
name no parent both land, one after the other, with distinct steps. A write that names
`parent_checkpoint_id` is a compare-and-set: it lands only while that checkpoint is still its
namespace's latest; otherwise it is a 409 `stale_parent` naming the latest, except when the latest is
this very write landed already (same parent, same state and metadata: an engine's retry), which answers
it again (200). With `fork` it is no compare-and-set: the parent may be any kept checkpoint of the
namespace, and the new one is its child, a new branch, and the namespace's latest. A write naming a
`checkpoint_id` the thread holds answers that checkpoint when it is the same write, else 409
`checkpoint_exists` (checkpoints never change).

Retention: a thread lives its TTL after its last write (a checkpoint or pending writes): its own
`ttl_hours` (1..THREAD_TTL_MAX_HOURS, set by a write or `thread_ttl_set`) or THREAD_TTL_HOURS;
`threads_expire` (beat, hourly) deletes it with its checkpoints. Each write prunes its namespace to the
THREAD_MAX_CHECKPOINTS newest checkpoints plus as many ancestors of the one written (its branch back
through the checkpoint it forked from), so a fork keeps its history while an abandoned branch ages out;
a checkpoint's pending writes go with it. `thread_delete` removes a thread at once. An archived campaign
refuses writes (409 `archived`); its threads can still be read and deleted, and expire.
`campaign_delete` deletes a campaign's threads with the rest.

Encryption at rest: with THREAD_STATE_KEY set, state, metadata and pending write values are stored
sealed (`lore.campaigns.sealing`, which also holds the hourly re-sealing after a key rotation).

Lock order, the one every campaign writer uses: the campaign row (FOR SHARE here and in the beat,
FOR UPDATE in `campaign_archive` / `campaign_delete`), then the thread row, then its checkpoints. No
network call runs in these transactions; values are sealed before they start.
"""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from lore.campaigns.models import Campaign, Checkpoint, PendingWrite, Thread, campaign_row_share
from lore.campaigns.retention import BATCH, job_report
from lore.campaigns.sealing import compact_json, configured_keys, seal, threads_reseal, unseal
from lore.campaigns.selectors import require_active
from memoryhub.exceptions import ApplicationError
from memoryhub.validation import json_value_problem

logger = logging.getLogger(__name__)

# Deep enough for an agent's state, far from the interpreter's recursion limit.
STATE_MAX_DEPTH = 64
NS_MAX_CHARS = 255
TASK_ID_MAX_CHARS = CHANNEL_MAX_CHARS = 255
TASK_PATH_MAX_CHARS = 1024
# One put_writes is one task's output: a few channels. The cap per checkpoint bounds what a thread stores
# (a fan-out of hundreds of tasks still fits).
WRITES_PER_REQUEST_MAX = 500
WRITES_PER_CHECKPOINT_MAX = 10_000
IDX_RANGE = (-(2**31), 2**31 - 1)


def _not_found(message: str, field: str) -> ApplicationError:
    return ApplicationError(message, code="not_found", field=field, status_code=404)


def state_size(state: Any) -> int:
    """A value's size as the API measures it: compact JSON, UTF-8."""
    return len(compact_json(state))


# --- Checks shared by the API's serializers and the services ----------------------------------
def object_problem(value: Any, *, max_bytes: int, setting: str) -> str | None:
    """Why `value` cannot be a checkpoint's state or metadata, or None."""
    if not isinstance(value, dict):
        return "must be a JSON object"
    problem = json_value_problem(value, max_depth=STATE_MAX_DEPTH)
    if problem:
        return problem
    size = state_size(value)
    if size > max_bytes:
        return f"is {size} bytes as JSON; at most {max_bytes} ({setting})"
    return None


def text_problem(value: Any, *, max_chars: int, blank: bool = True) -> str | None:
    """Why `value` cannot be a namespace, task id, channel or task path, or None."""
    if not isinstance(value, str):
        return "must be a string"
    if not blank and not value:
        return "must not be empty"
    if len(value) > max_chars:
        return f"must be at most {max_chars} characters"
    if any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        return "must not contain control characters"
    return json_value_problem(value)


def ttl_problem(ttl_hours: Any) -> str | None:
    if isinstance(ttl_hours, bool) or not isinstance(ttl_hours, int):
        return "must be a whole number of hours"
    if not 1 <= ttl_hours <= settings.THREAD_TTL_MAX_HOURS:
        return f"must be 1 to {settings.THREAD_TTL_MAX_HOURS} hours (THREAD_TTL_MAX_HOURS)"
    return None


def _check(problem: str | None, field: str) -> None:
    if problem:
        raise ApplicationError(f"Invalid {field.rsplit('/', 1)[-1]}: {problem}.", field=field)


def _object_check(value: Any, field: str, *, max_bytes: int, setting: str) -> None:
    problem = object_problem(value, max_bytes=max_bytes, setting=setting)
    if problem:
        # Too large is its own code, as a too large request body is: a client splits or trims, not fixes.
        code = "too_large" if isinstance(value, dict) and state_size(value) > max_bytes else "invalid"
        raise ApplicationError(f"Invalid {field}: {problem}.", code=code, field=field)


# --- Reads ------------------------------------------------------------------------------------
def thread_ttl(thread: Thread | None = None) -> timedelta:
    hours = thread.ttl_hours if thread is not None and thread.ttl_hours else settings.THREAD_TTL_HOURS
    return timedelta(hours=hours)


def expires_at(thread: Thread) -> datetime:
    return thread.updated_at + thread_ttl(thread)


def _expired(now: datetime) -> Q:
    """Threads past their TTL at `now`: the default's, read from the setting now, or their own."""
    return (Q(ttl_hours__isnull=True, updated_at__lt=now - thread_ttl())
            | Q(ttl_hours__isnull=False, expires_at__lt=now))


def _require_campaign(campaign: Campaign) -> None:
    if not campaign_row_share(campaign):
        raise _not_found(f"No campaign {campaign.slug!r}.", "campaign")


def thread_get(*, campaign: Campaign, thread_id: str) -> Thread:
    """A live thread of the campaign (one past its TTL that the beat has not reached yet is gone too)."""
    thread = (Thread.objects.filter(campaign=campaign, thread_id=thread_id)
              .exclude(_expired(timezone.now())).first())
    if thread is None:
        raise _not_found(f"Campaign {campaign.slug!r} has no thread {thread_id!r}.", "thread_id")
    return thread


def checkpoint_latest(*, thread: Thread, checkpoint_ns: str = "") -> Checkpoint:
    checkpoint = thread.checkpoints.filter(checkpoint_ns=checkpoint_ns).order_by("-step").first()
    if checkpoint is None:  # a thread is created with its first checkpoint; only a race with a delete gets here
        where = f" in namespace {checkpoint_ns!r}" if checkpoint_ns else ""
        raise _not_found(f"Thread {thread.thread_id!r} has no checkpoint{where}.",
                         "checkpoint_ns" if checkpoint_ns else "thread_id")
    return checkpoint


def checkpoint_get(*, thread: Thread, checkpoint_id: uuid.UUID, field: str = "checkpoint_id") -> Checkpoint:
    checkpoint = thread.checkpoints.filter(checkpoint_id=checkpoint_id).first()
    if checkpoint is None:
        raise _not_found(f"Thread {thread.thread_id!r} has no checkpoint {checkpoint_id} (it may have been pruned: "
                         f"a namespace keeps its {settings.THREAD_MAX_CHECKPOINTS} newest and the branch of its "
                         f"latest write).", field)
    return checkpoint


def _branch_pks(thread: Thread, checkpoint: Checkpoint, depth: int) -> list[int]:
    """The checkpoint and its kept ancestors, up to `depth` of them in all. A parent always has a smaller
    step, which ends the walk even if an engine reused a pruned checkpoint's id."""
    table = Checkpoint._meta.db_table
    with connection.cursor() as cursor:
        cursor.execute(
            f"""WITH RECURSIVE branch (id, step, parent, depth) AS (
                    SELECT id, step, parent_checkpoint_id, 1 FROM {table} WHERE id = %s
                    UNION ALL
                    SELECT c.id, c.step, c.parent_checkpoint_id, b.depth + 1 FROM branch b
                    JOIN {table} c ON c.thread_id = %s AND c.checkpoint_id = b.parent AND c.step < b.step
                    WHERE b.depth < %s)
                SELECT id FROM branch""", [checkpoint.pk, thread.pk, depth])
        return [row[0] for row in cursor.fetchall()]


def checkpoints_page(*, thread: Thread, limit: int, before_step: int | None = None, checkpoint_ns: str | None = None,
                     branch_of: uuid.UUID | None = None) -> tuple[list[Checkpoint], bool]:
    """A page of the thread's checkpoints, newest first, older than `before_step` when given: of every
    namespace, or of `checkpoint_ns`; with `branch_of`, that checkpoint and its ancestors only (one
    branch, back to where pruning cut it). And whether an older page exists."""
    checkpoints = thread.checkpoints.order_by("-step")
    if checkpoint_ns is not None:
        checkpoints = checkpoints.filter(checkpoint_ns=checkpoint_ns)
    if branch_of is not None:
        head = checkpoint_get(thread=thread, checkpoint_id=branch_of, field="branch_of")
        checkpoints = checkpoints.filter(pk__in=_branch_pks(thread, head, depth=2**31 - 1))
    if before_step is not None:
        checkpoints = checkpoints.filter(step__lt=before_step)
    # One more than asked tells whether an older page exists, without a count.
    page = list(checkpoints[:limit + 1])
    return page[:limit], len(page) > limit


@dataclass(frozen=True)
class WriteView:
    task_id: str
    channel: str
    idx: int
    task_path: str
    value: Any


@dataclass(frozen=True)
class CheckpointView:
    """A checkpoint as the API returns it, unsealed."""

    checkpoint_id: uuid.UUID
    thread_id: str
    checkpoint_ns: str
    step: int
    parent_checkpoint_id: uuid.UUID | None
    metadata: dict[str, Any]
    created_at: datetime
    state: dict[str, Any] | None = None
    pending_writes: list[WriteView] | None = None


def pending_writes(*, checkpoint: Checkpoint) -> list[WriteView]:
    """The checkpoint's pending writes in LangGraph's order (task path, task, idx), unsealed."""
    rows = checkpoint.pending_writes.order_by("task_path", "task_id", "idx")
    return [WriteView(w.task_id, w.channel, w.idx, w.task_path, unseal(w.value, w.sealed_by)) for w in rows]


def checkpoint_view(checkpoint: Checkpoint, *, full: bool = True) -> CheckpointView:
    """`full`: with its state and pending writes; else (a list's entry) its metadata only."""
    return CheckpointView(
        checkpoint_id=checkpoint.checkpoint_id, thread_id=checkpoint.thread.thread_id,
        checkpoint_ns=checkpoint.checkpoint_ns, step=checkpoint.step,
        parent_checkpoint_id=checkpoint.parent_checkpoint_id,
        metadata=unseal(checkpoint.metadata, checkpoint.sealed_by), created_at=checkpoint.created_at,
        state=unseal(checkpoint.state, checkpoint.sealed_by) if full else None,
        pending_writes=pending_writes(checkpoint=checkpoint) if full else None)


# --- Writes -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckpointResult:
    checkpoint: Checkpoint
    created: bool  # False: a retry of a write that had landed, answered again
    pruned: int  # checkpoints of its namespace deleted by pruning


def _locked_thread(campaign: Campaign, thread_id: str, now: datetime) -> Thread:
    """The thread's row FOR UPDATE, created when missing. A thread past its TTL the beat has not deleted
    yet starts over: its checkpoints go, as the beat would have taken them, and its own TTL with them."""
    # ON CONFLICT DO NOTHING: two first writes at once both find the row, neither fails.
    Thread.objects.bulk_create([Thread(tenant_id=campaign.tenant_id, campaign=campaign, thread_id=thread_id,
                                       created_at=now, updated_at=now)], ignore_conflicts=True)
    thread = Thread.objects.select_for_update().get(campaign=campaign, thread_id=thread_id)
    if expires_at(thread) < now:
        thread.checkpoints.all().delete()
        thread.last_step, thread.created_at, thread.ttl_hours, thread.expires_at = 0, now, None, None
    return thread


def _renew(thread: Thread, now: datetime, fields: list[str]) -> None:
    thread.updated_at = now
    thread.expires_at = expires_at(thread) if thread.ttl_hours else None
    thread.save(update_fields=[*fields, "updated_at", "expires_at"])


def _same_write(checkpoint: Checkpoint, state: dict[str, Any], metadata: dict[str, Any]) -> bool:
    return (unseal(checkpoint.state, checkpoint.sealed_by) == state
            and unseal(checkpoint.metadata, checkpoint.sealed_by) == metadata)


@dataclass(frozen=True)
class _Write:
    thread_id: str
    state: dict[str, Any]
    metadata: dict[str, Any]
    checkpoint_ns: str
    parent: uuid.UUID | None
    fork: bool
    checkpoint_id: uuid.UUID | None
    ttl_hours: int | None
    sealed_state: Any
    sealed_metadata: Any
    sealed_by: str


def checkpoint_write(*, campaign: Campaign, thread_id: str, state: Any,
                     parent_checkpoint_id: uuid.UUID | None = None, metadata: Any = None, checkpoint_ns: str = "",
                     fork: bool = False, checkpoint_id: uuid.UUID | None = None,
                     ttl_hours: int | None = None) -> CheckpointResult:
    """Save a thread's state as a new checkpoint of its namespace (the thread is created by its first one).
    `parent_checkpoint_id`: the checkpoint the engine's state follows; when given, the write lands only
    while it is the namespace's latest (409 `stale_parent` otherwise), or, with `fork`, as a child of that
    older checkpoint. `checkpoint_id`: the engine's own id (LangGraph's), else one is made. `ttl_hours`:
    the thread's TTL from now on (see the module)."""
    metadata = {} if metadata is None else metadata
    _object_check(state, "state", max_bytes=settings.THREAD_STATE_MAX_BYTES, setting="THREAD_STATE_MAX_BYTES")
    _object_check(metadata, "metadata", max_bytes=settings.THREAD_METADATA_MAX_BYTES,
                  setting="THREAD_METADATA_MAX_BYTES")
    _check(text_problem(checkpoint_ns, max_chars=NS_MAX_CHARS), "checkpoint_ns")
    if ttl_hours is not None:
        _check(ttl_problem(ttl_hours), "ttl_hours")
    if fork and parent_checkpoint_id is None:
        raise ApplicationError("A fork needs parent_checkpoint_id: the checkpoint to branch from.", field="fork")
    require_active(campaign, "writing a thread's checkpoint")
    # Sealed before any lock is taken: encryption is the slow part of a large state.
    sealed_state, sealed_by = seal(state)
    sealed_metadata, _ = seal(metadata)
    write = _Write(thread_id, state, metadata, checkpoint_ns, parent_checkpoint_id, fork, checkpoint_id, ttl_hours,
                   sealed_state, sealed_metadata, sealed_by)
    # Several attempts: the beat may delete an expired thread between the insert and the lock.
    for _ in range(3):
        with transaction.atomic():
            result = _checkpoint_write(campaign, write)
        if result is not None:
            return result
    raise ApplicationError("The thread was deleted while being written; try again.", code="conflict",
                           field="thread_id", status_code=409)


def _checkpoint_write(campaign: Campaign, write: _Write) -> CheckpointResult | None:
    _require_campaign(campaign)
    require_active(campaign, "writing a thread's checkpoint")
    now = timezone.now()
    try:
        thread = _locked_thread(campaign, write.thread_id, now)
    except Thread.DoesNotExist:
        return None
    if write.checkpoint_id is not None:
        existing = thread.checkpoints.filter(checkpoint_id=write.checkpoint_id).first()
        if existing is not None:
            if (existing.checkpoint_ns == write.checkpoint_ns
                    and write.parent in (None, existing.parent_checkpoint_id)
                    and _same_write(existing, write.state, write.metadata)):
                return CheckpointResult(existing, created=False, pruned=0)
            raise ApplicationError(f"Thread {write.thread_id!r} already has checkpoint {write.checkpoint_id} with "
                                   f"another parent, namespace, state or metadata: a checkpoint never changes; "
                                   f"write a new one.", code="checkpoint_exists", field="checkpoint_id",
                                   status_code=409)
    namespace = thread.checkpoints.filter(checkpoint_ns=write.checkpoint_ns)
    latest = namespace.order_by("-step").first()
    parent = write.parent
    if parent is not None and write.fork:
        if not namespace.filter(checkpoint_id=parent).exists():
            raise _not_found(f"Thread {write.thread_id!r} has no checkpoint {parent} in namespace "
                             f"{write.checkpoint_ns!r} to fork from (unknown, or pruned: a namespace keeps its "
                             f"{settings.THREAD_MAX_CHECKPOINTS} newest and the branch of its latest write).",
                             "parent_checkpoint_id")
        if write.checkpoint_id is None:
            # The same fork again (a retry after a lost answer): the child it made.
            for child in namespace.filter(parent_checkpoint_id=parent).order_by("-step"):
                if _same_write(child, write.state, write.metadata):
                    return CheckpointResult(child, created=False, pruned=0)
    elif parent is not None and (latest is None or latest.checkpoint_id != parent):
        if (write.checkpoint_id is None and latest is not None and latest.parent_checkpoint_id == parent
                and _same_write(latest, write.state, write.metadata)):
            return CheckpointResult(latest, created=False, pruned=0)
        now_at = (f"its latest is {latest.checkpoint_id} (step {latest.step})" if latest is not None
                  else "it has no checkpoint")
        where = f" in namespace {write.checkpoint_ns!r}" if write.checkpoint_ns else ""
        raise ApplicationError(f"Checkpoint {parent} is not the latest of thread {write.thread_id!r}{where}: "
                               f"{now_at}. Read the thread and write again from its latest state, or write with "
                               f"\"fork\": true to branch from it.", code="stale_parent",
                               field="parent_checkpoint_id", status_code=409)
    elif parent is None and latest is not None:
        parent = latest.checkpoint_id
    thread.last_step += 1
    if write.ttl_hours is not None:
        thread.ttl_hours = write.ttl_hours
    _renew(thread, now, ["last_step", "created_at", "ttl_hours"])
    checkpoint = Checkpoint.objects.create(
        thread=thread, checkpoint_id=write.checkpoint_id or uuid.uuid4(), step=thread.last_step,
        checkpoint_ns=write.checkpoint_ns, parent_checkpoint_id=parent, state=write.sealed_state,
        metadata=write.sealed_metadata, sealed_by=write.sealed_by, created_at=now)
    return CheckpointResult(checkpoint, created=True, pruned=_prune(thread, checkpoint))


def _prune(thread: Thread, newest: Checkpoint) -> int:
    """Keep the namespace's THREAD_MAX_CHECKPOINTS newest checkpoints and as many of the branch just
    written (the checkpoint and its ancestors): a fork from an older checkpoint keeps the history it
    grew from, while a branch nobody writes any more is pruned as it ages. At most twice the setting stay."""
    keep = settings.THREAD_MAX_CHECKPOINTS
    namespace = Checkpoint.objects.filter(thread=thread, checkpoint_ns=newest.checkpoint_ns)
    if namespace.count() <= keep:
        return 0
    kept = {*namespace.order_by("-step").values_list("pk", flat=True)[:keep], *_branch_pks(thread, newest, keep)}
    # Their pending writes go with them (ON DELETE CASCADE), so the count is of checkpoints.
    return namespace.exclude(pk__in=kept).delete()[0]


@dataclass(frozen=True)
class WritesResult:
    checkpoint: Checkpoint
    written: int  # rows stored now: new ones, and negative idx replaced
    kept: int  # already stored under their (task_id, idx): left as they were


def _writes_check(writes: Any) -> list[dict[str, Any]]:
    if not isinstance(writes, list) or not writes:
        raise ApplicationError("writes must be a non-empty list.", field="writes")
    if len(writes) > WRITES_PER_REQUEST_MAX:
        raise ApplicationError(f"At most {WRITES_PER_REQUEST_MAX} writes a request.", field="writes")
    checked, seen, size = [], set(), 0
    for i, item in enumerate(writes):
        if not isinstance(item, dict):
            raise ApplicationError("Each write must be an object.", field=f"writes/{i}")
        item = {"task_path": "", **item}
        for name, max_chars, blank in (("task_id", TASK_ID_MAX_CHARS, False), ("channel", CHANNEL_MAX_CHARS, False),
                                       ("task_path", TASK_PATH_MAX_CHARS, True)):
            _check(text_problem(item.get(name), max_chars=max_chars, blank=blank), f"writes/{i}/{name}")
        idx = item.get("idx")
        if isinstance(idx, bool) or not isinstance(idx, int) or not IDX_RANGE[0] <= idx <= IDX_RANGE[1]:
            raise ApplicationError("Invalid idx: must be a 32-bit integer.", field=f"writes/{i}/idx")
        if "value" not in item:
            raise ApplicationError("Invalid value: required (null is a value).", field=f"writes/{i}/value")
        _check(json_value_problem(item["value"], max_depth=STATE_MAX_DEPTH), f"writes/{i}/value")
        if (item["task_id"], idx) in seen:
            raise ApplicationError(f"Write {i} repeats task_id {item['task_id']!r} with idx {idx}.",
                                   field=f"writes/{i}/idx")
        seen.add((item["task_id"], idx))
        size += state_size(item["value"])
        checked.append(item)
    if size > settings.THREAD_STATE_MAX_BYTES:
        raise ApplicationError(f"The writes' values are {size} bytes as JSON; at most "
                               f"{settings.THREAD_STATE_MAX_BYTES} (THREAD_STATE_MAX_BYTES).", code="too_large",
                               field="writes")
    return checked


def writes_put(*, campaign: Campaign, thread_id: str, checkpoint_id: uuid.UUID, writes: Any) -> WritesResult:
    """Store a task's pending writes against a checkpoint (LangGraph's put_writes): each is
    {task_id, channel, idx, value, task_path?}. A (task_id, idx) stored already is kept as it is when idx
    >= 0 (a retry changes nothing) and replaced when negative (LangGraph's error, interrupt and resume
    slots). Renews the thread's TTL."""
    checked = _writes_check(writes)
    require_active(campaign, "writing a thread's pending writes")
    sealed = [seal(item["value"]) for item in checked]
    with transaction.atomic():
        _require_campaign(campaign)
        require_active(campaign, "writing a thread's pending writes")
        now = timezone.now()
        # The thread's row, as a checkpoint write takes it: pruning and deletion wait, and concurrent
        # retries of one put_writes run in turn, so each (task_id, idx) is decided once.
        thread = (Thread.objects.select_for_update().filter(campaign=campaign, thread_id=thread_id)
                  .exclude(_expired(now)).first())
        if thread is None:
            raise _not_found(f"Campaign {campaign.slug!r} has no thread {thread_id!r}.", "thread_id")
        checkpoint = checkpoint_get(thread=thread, checkpoint_id=checkpoint_id)
        stored = {(w.task_id, w.idx): w for w in checkpoint.pending_writes.filter(
            task_id__in={item["task_id"] for item in checked})}
        new, replaced = [], []
        for item, (value, sealed_by) in zip(checked, sealed, strict=True):
            row = stored.get((item["task_id"], item["idx"]))
            if row is None:
                new.append(PendingWrite(checkpoint=checkpoint, task_id=item["task_id"], idx=item["idx"],
                                        channel=item["channel"], task_path=item["task_path"], value=value,
                                        sealed_by=sealed_by, created_at=now))
            elif item["idx"] < 0:
                row.channel, row.task_path, row.value, row.sealed_by = (item["channel"], item["task_path"], value,
                                                                        sealed_by)
                replaced.append(row)
        if new and checkpoint.pending_writes.count() + len(new) > WRITES_PER_CHECKPOINT_MAX:
            raise ApplicationError(f"Checkpoint {checkpoint_id} holds at most {WRITES_PER_CHECKPOINT_MAX} pending "
                                   f"writes.", code="too_large", field="writes")
        PendingWrite.objects.bulk_create(new)
        if replaced:
            PendingWrite.objects.bulk_update(replaced, ["channel", "task_path", "value", "sealed_by"])
        _renew(thread, now, [])
    return WritesResult(checkpoint, written=len(new) + len(replaced), kept=len(checked) - len(new) - len(replaced))


@transaction.atomic
def thread_ttl_set(*, campaign: Campaign, thread_id: str, ttl_hours: int | None) -> Thread:
    """Set the thread's own TTL (None: back to THREAD_TTL_HOURS). It counts from the thread's last write,
    so a TTL shorter than the time since then expires the thread now."""
    if ttl_hours is not None:
        _check(ttl_problem(ttl_hours), "ttl_hours")
    _require_campaign(campaign)
    require_active(campaign, "changing a thread's TTL")
    thread = (Thread.objects.select_for_update().filter(campaign=campaign, thread_id=thread_id)
              .exclude(_expired(timezone.now())).first())
    if thread is None:
        raise _not_found(f"Campaign {campaign.slug!r} has no thread {thread_id!r}.", "thread_id")
    thread.ttl_hours = ttl_hours
    thread.expires_at = expires_at(thread) if ttl_hours else None
    thread.save(update_fields=["ttl_hours", "expires_at"])
    return thread


@transaction.atomic
def thread_delete(*, campaign: Campaign, thread_id: str) -> int:
    """Delete a thread and all its checkpoints (an archived campaign's too); returns how many checkpoints
    went. An unknown thread is a 404."""
    _require_campaign(campaign)
    thread = Thread.objects.select_for_update().filter(campaign=campaign, thread_id=thread_id).first()
    if thread is None:
        raise _not_found(f"Campaign {campaign.slug!r} has no thread {thread_id!r}.", "thread_id")
    checkpoints = thread.checkpoints.all().delete()[0]
    Thread.objects.filter(pk=thread.pk).delete()
    return checkpoints


# --- Retention (beat) -------------------------------------------------------------------------
def _expire_batch(campaign: Campaign, now: datetime) -> tuple[int, int]:
    with transaction.atomic():
        if not campaign_row_share(campaign):  # deleted meanwhile: its threads went with it
            return 0, 0
        # SKIP LOCKED: a thread being written is not expired now (and its write renews it).
        ids = list(Thread.objects.select_for_update(skip_locked=True)
                   .filter(_expired(now), campaign=campaign)
                   .order_by("id").values_list("id", flat=True)[:BATCH])
        if not ids:
            return 0, 0
        checkpoints = Checkpoint.objects.filter(thread_id__in=ids).delete()[0]
        Thread.objects.filter(pk__in=ids).delete()
    return len(ids), checkpoints


def threads_expire(*, now: datetime | None = None) -> dict[str, int]:
    """Delete the threads past their TTL, with their checkpoints, a batch per short transaction; then,
    with THREAD_STATE_KEY set, re-seal rows sealed by another key than its first (`threads_reseal`).
    Returns {"threads": n, "checkpoints": n} and, with a key, the re-sealing's counts."""
    started = timezone.now()
    now = now or started
    counts: Counter[str] = Counter(threads=0, checkpoints=0)
    campaign_ids = Thread.objects.filter(_expired(now)).order_by().values_list("campaign_id", flat=True)
    for campaign in Campaign.objects.filter(pk__in=set(campaign_ids)).order_by("id"):
        while True:
            threads, checkpoints = _expire_batch(campaign, now)
            counts["threads"] += threads
            counts["checkpoints"] += checkpoints
            if threads < BATCH:
                break
    report = job_report("threads_expire", counts, started)
    if configured_keys():
        report.update(threads_reseal())
    return report
