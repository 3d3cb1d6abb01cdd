"""The short-term layer (seed 003 §2, §8.9): thread state with checkpoints, as LangGraph's
checkpointer keeps it, stored by MemoryHub for the game engine (`engine` scope only: the LLM's read
tools never see a thread).

A thread (`thread_id`, the engine's id for one scene / turn loop of a campaign) is a series of
checkpoints, each a JSON object `state` with an id, a step (1, 2, … per thread, assigned here, never
reused) and the id of the checkpoint it followed; the latest is the thread's current state. A
rollback (human in the loop) reads an older checkpoint and writes its state as a new one.

Concurrent writes to one thread are serialised by the thread's row (FOR UPDATE). Two writes that
name no parent both land, one after the other, with distinct steps. A write that names
`parent_checkpoint_id` is a compare-and-set: it lands only while that checkpoint is still the latest;
otherwise it is a 409 `stale_parent` naming the latest, except when the latest is this very write
landed already (same parent, same state: an engine's retry), which answers it again (200).

Retention: a thread lives THREAD_TTL_HOURS after its last checkpoint; `threads_expire` (beat,
hourly) deletes it with its checkpoints. Each write keeps the thread's THREAD_MAX_CHECKPOINTS newest
checkpoints and deletes the older ones. `threads_delete` removes a thread at once. An archived
campaign refuses writes (409 `archived`); its threads can still be read and deleted, and expire.
`campaign_delete` deletes a campaign's threads with the rest.

Lock order, the one every campaign writer uses: the campaign row (FOR SHARE here and in the beat,
FOR UPDATE in `campaign_archive` / `campaign_delete`), then the thread row, then its checkpoints. No
network call runs in these transactions.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from lore.campaigns.models import Campaign, Checkpoint, Thread, campaign_row_share
from lore.campaigns.retention import BATCH, job_report
from lore.campaigns.selectors import require_active
from memoryhub.exceptions import ApplicationError
from memoryhub.validation import json_value_problem

logger = logging.getLogger(__name__)

# Deep enough for an agent's state, far from the interpreter's recursion limit.
STATE_MAX_DEPTH = 64


def _not_found(message: str, field: str) -> ApplicationError:
    return ApplicationError(message, code="not_found", field=field, status_code=404)


def state_size(state: dict[str, Any]) -> int:
    """The state's size as the API measures it: compact JSON, UTF-8."""
    return len(json.dumps(state, ensure_ascii=False, separators=(",", ":")).encode())


def thread_ttl() -> timedelta:
    return timedelta(hours=settings.THREAD_TTL_HOURS)


def expires_at(thread: Thread) -> datetime:
    return thread.updated_at + thread_ttl()


def _require_campaign(campaign: Campaign) -> None:
    if not campaign_row_share(campaign):
        raise _not_found(f"No campaign {campaign.slug!r}.", "campaign")


# --- Reads ------------------------------------------------------------------------------------
def thread_get(*, campaign: Campaign, thread_id: str) -> Thread:
    """A live thread of the campaign (one past its TTL that the beat has not reached yet is gone too)."""
    thread = (Thread.objects.filter(campaign=campaign, thread_id=thread_id,
                                    updated_at__gte=timezone.now() - thread_ttl()).first())
    if thread is None:
        raise _not_found(f"Campaign {campaign.slug!r} has no thread {thread_id!r}.", "thread_id")
    return thread


def checkpoint_latest(*, thread: Thread) -> Checkpoint:
    checkpoint = thread.checkpoints.order_by("-step").first()
    if checkpoint is None:  # a thread is created with its first checkpoint; only a race with a delete gets here
        raise _not_found(f"Thread {thread.thread_id!r} has no checkpoint.", "thread_id")
    return checkpoint


def checkpoint_get(*, thread: Thread, checkpoint_id: uuid.UUID) -> Checkpoint:
    checkpoint = thread.checkpoints.filter(checkpoint_id=checkpoint_id).first()
    if checkpoint is None:
        raise _not_found(f"Thread {thread.thread_id!r} has no checkpoint {checkpoint_id} (it may have been pruned: "
                         f"a thread keeps its {settings.THREAD_MAX_CHECKPOINTS} newest).", "checkpoint_id")
    return checkpoint


def checkpoints_page(*, thread: Thread, limit: int, before_step: int | None = None) -> tuple[list[Checkpoint], bool]:
    """A page of the thread's checkpoints, newest first, older than `before_step` when given; and
    whether an older page exists."""
    checkpoints = thread.checkpoints.order_by("-step")
    if before_step is not None:
        checkpoints = checkpoints.filter(step__lt=before_step)
    # One more than asked tells whether an older page exists, without a count.
    page = list(checkpoints[:limit + 1])
    return page[:limit], len(page) > limit


# --- Writes -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckpointResult:
    checkpoint: Checkpoint
    created: bool  # False: a retry of a write that had landed, answered again
    pruned: int  # older checkpoints deleted to keep THREAD_MAX_CHECKPOINTS


def _state_check(state: Any) -> None:
    if not isinstance(state, dict):
        raise ApplicationError("The state must be a JSON object.", field="state")
    problem = json_value_problem(state, max_depth=STATE_MAX_DEPTH)
    if problem:
        raise ApplicationError(f"Invalid state: {problem}.", field="state")
    size = state_size(state)
    if size > settings.THREAD_STATE_MAX_BYTES:
        raise ApplicationError(f"The state is {size} bytes as JSON; at most {settings.THREAD_STATE_MAX_BYTES} "
                               f"(THREAD_STATE_MAX_BYTES).", code="too_large", field="state")


def _locked_thread(campaign: Campaign, thread_id: str, now: datetime) -> Thread:
    """The thread's row FOR UPDATE, created when missing. A thread past its TTL the beat has not deleted
    yet starts over: its checkpoints go, as the beat would have taken them."""
    # ON CONFLICT DO NOTHING: two first writes at once both find the row, neither fails.
    Thread.objects.bulk_create([Thread(tenant_id=campaign.tenant_id, campaign=campaign, thread_id=thread_id,
                                       created_at=now, updated_at=now)], ignore_conflicts=True)
    thread = Thread.objects.select_for_update().get(campaign=campaign, thread_id=thread_id)
    if thread.updated_at < now - thread_ttl():
        thread.checkpoints.all().delete()
        thread.last_step, thread.created_at = 0, now
    return thread


def checkpoint_write(*, campaign: Campaign, thread_id: str, state: Any,
                     parent_checkpoint_id: uuid.UUID | None = None) -> CheckpointResult:
    """Save a thread's state as its new latest checkpoint (the thread is created by its first one).
    `parent_checkpoint_id`: the checkpoint the engine's state follows; when given, the write lands only
    while it is the thread's latest (409 `stale_parent` otherwise, see the module)."""
    _state_check(state)
    require_active(campaign, "writing a thread's checkpoint")
    # Several attempts: the beat may delete an expired thread between the insert and the lock.
    for _ in range(3):
        with transaction.atomic():
            result = _checkpoint_write(campaign, thread_id, state, parent_checkpoint_id)
        if result is not None:
            return result
    raise ApplicationError("The thread was deleted while being written; try again.", code="conflict",
                           field="thread_id", status_code=409)


def _checkpoint_write(campaign: Campaign, thread_id: str, state: dict[str, Any],
                      parent: uuid.UUID | None) -> CheckpointResult | None:
    _require_campaign(campaign)
    require_active(campaign, "writing a thread's checkpoint")
    now = timezone.now()
    try:
        thread = _locked_thread(campaign, thread_id, now)
    except Thread.DoesNotExist:
        return None
    latest = thread.checkpoints.order_by("-step").first()
    if parent is not None and (latest is None or latest.checkpoint_id != parent):
        if latest is not None and latest.parent_checkpoint_id == parent and latest.state == state:
            return CheckpointResult(latest, created=False, pruned=0)
        now_at = (f"its latest is {latest.checkpoint_id} (step {latest.step})" if latest is not None
                  else "it has no checkpoint")
        raise ApplicationError(f"Checkpoint {parent} is not the latest of thread {thread_id!r}: {now_at}. Read the "
                               f"thread and write again from its latest state.", code="stale_parent",
                               field="parent_checkpoint_id", status_code=409)
    thread.last_step += 1
    thread.updated_at = now
    thread.save(update_fields=["last_step", "updated_at", "created_at"])
    checkpoint = Checkpoint.objects.create(
        thread=thread, checkpoint_id=uuid.uuid4(), step=thread.last_step,
        parent_checkpoint_id=latest.checkpoint_id if latest is not None else None, state=state, created_at=now)
    keep_from = thread.last_step - settings.THREAD_MAX_CHECKPOINTS
    pruned = thread.checkpoints.filter(step__lte=keep_from).delete()[0] if keep_from > 0 else 0
    return CheckpointResult(checkpoint, created=True, pruned=pruned)


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
def _expire_batch(campaign: Campaign, cutoff: datetime) -> tuple[int, int]:
    with transaction.atomic():
        if not campaign_row_share(campaign):  # deleted meanwhile: its threads went with it
            return 0, 0
        # SKIP LOCKED: a thread being written is not expired now (and its write renews it).
        ids = list(Thread.objects.select_for_update(skip_locked=True)
                   .filter(campaign=campaign, updated_at__lt=cutoff)
                   .order_by("id").values_list("id", flat=True)[:BATCH])
        if not ids:
            return 0, 0
        checkpoints = Checkpoint.objects.filter(thread_id__in=ids).delete()[0]
        Thread.objects.filter(pk__in=ids).delete()
    return len(ids), checkpoints


def threads_expire(*, now: datetime | None = None) -> dict[str, int]:
    """Delete the threads last written more than THREAD_TTL_HOURS ago, with their checkpoints, a batch
    per short transaction. Returns {"threads": n, "checkpoints": n}."""
    started = timezone.now()
    now = now or started
    cutoff = now - thread_ttl()
    counts: Counter[str] = Counter(threads=0, checkpoints=0)
    campaign_ids = Thread.objects.filter(updated_at__lt=cutoff).order_by().values_list("campaign_id", flat=True)
    for campaign in Campaign.objects.filter(pk__in=set(campaign_ids)).order_by("id"):
        while True:
            threads, checkpoints = _expire_batch(campaign, cutoff)
            counts["threads"] += threads
            counts["checkpoints"] += checkpoints
            if threads < BATCH:
                break
    return job_report("threads_expire", counts, started)
