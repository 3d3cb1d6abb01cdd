"""Races of the checkpointer's new writes on real PostgreSQL, each call on its own connection: forks at
once, a fork racing a compare-and-set, put_writes retried at once, and pending writes racing pruning."""

from __future__ import annotations

import pytest

from lore.campaigns import threads
from lore.campaigns.models import Campaign, Checkpoint, PendingWrite
from memoryhub.exceptions import ApplicationError
from tests.concurrency import at_once, errors_of

pytestmark = pytest.mark.django_db(transaction=True)


def campaign() -> Campaign:
    return Campaign.objects.get(slug="camp_123")


def test_two_forks_of_one_checkpoint_at_once_both_land_as_two_branches(engine, world):
    for round_ in range(3):
        thread_id = f"fork_{round_}"
        root = threads.checkpoint_write(campaign=campaign(), thread_id=thread_id, state={"turn": 1}).checkpoint
        threads.checkpoint_write(campaign=campaign(), thread_id=thread_id, state={"turn": 2})
        outcomes = at_once(*(lambda i=i, t=thread_id, p=root.checkpoint_id: threads.checkpoint_write(
            campaign=campaign(), thread_id=t, state={"branch": i, "ru": "ветка", "zh": "分支"},
            parent_checkpoint_id=p, fork=True) for i in range(2)))
        assert not errors_of(outcomes), errors_of(outcomes)
        # Step 2 (the line) and both forks, 3 and 4 in either order, are children of the root.
        children = Checkpoint.objects.filter(thread__thread_id=thread_id, parent_checkpoint_id=root.checkpoint_id)
        assert sorted(children.values_list("step", flat=True)) == [2, 3, 4]
        assert sorted(c.state["branch"] for c in children if "branch" in c.state) == [0, 1]
        assert {o.checkpoint.step for o in outcomes} == {3, 4}


def test_a_fork_racing_a_compare_and_set_never_loses_either_silently(engine, world):
    for round_ in range(3):
        thread_id = f"mixed_{round_}"
        root = threads.checkpoint_write(campaign=campaign(), thread_id=thread_id, state={"turn": 1}).checkpoint
        latest = threads.checkpoint_write(campaign=campaign(), thread_id=thread_id, state={"turn": 2}).checkpoint
        fork, cas = at_once(
            lambda t=thread_id, p=root.checkpoint_id: threads.checkpoint_write(
                campaign=campaign(), thread_id=t, state={"fork": True}, parent_checkpoint_id=p, fork=True),
            lambda t=thread_id, p=latest.checkpoint_id: threads.checkpoint_write(
                campaign=campaign(), thread_id=t, state={"cas": True}, parent_checkpoint_id=p))
        # The fork always lands; the compare-and-set lands when it went first, else it is told the
        # latest moved (the fork), never overwriting it.
        assert not isinstance(fork, BaseException), fork
        if isinstance(cas, BaseException):
            assert isinstance(cas, ApplicationError) and cas.code == "stale_parent", cas
            assert str(fork.checkpoint.checkpoint_id) in cas.message
        else:
            assert cas.checkpoint.step < fork.checkpoint.step
        assert Checkpoint.objects.filter(thread__thread_id=thread_id).count() == 3 + (0 if isinstance(
            cas, BaseException) else 1)


def test_put_writes_retried_at_once_store_each_write_once(engine, world):
    checkpoint = threads.checkpoint_write(campaign=campaign(), thread_id="w", state={"turn": 1}).checkpoint
    writes = [{"task_id": "task_gm", "channel": "messages", "idx": i, "value": f"реплика {i} / 台词 {i}"}
              for i in range(3)]
    for round_ in range(3):
        batch = [{**w, "task_id": f"task_{round_}"} for w in writes]
        outcomes = at_once(*(lambda b=batch: threads.writes_put(campaign=campaign(), thread_id="w",
                                                                checkpoint_id=checkpoint.checkpoint_id, writes=b)
                             for _ in range(4)))
        assert not errors_of(outcomes), errors_of(outcomes)
        assert sorted((o.written, o.kept) for o in outcomes) == [(0, 3), (0, 3), (0, 3), (3, 0)]
        assert PendingWrite.objects.filter(task_id=f"task_{round_}").count() == 3


def test_pending_writes_racing_the_pruning_of_their_checkpoint_land_and_go_with_it_or_are_a_404(engine, world,
                                                                                                   settings):
    settings.THREAD_MAX_CHECKPOINTS = 1
    for round_ in range(3):
        thread_id = f"prune_{round_}"
        old = threads.checkpoint_write(campaign=campaign(), thread_id=thread_id, state={"turn": 1}).checkpoint
        put, pruning = at_once(
            lambda t=thread_id, c=old.checkpoint_id: threads.writes_put(
                campaign=campaign(), thread_id=t, checkpoint_id=c,
                writes=[{"task_id": "t", "channel": "c", "idx": 0, "value": 1}]),
            lambda t=thread_id: threads.checkpoint_write(campaign=campaign(), thread_id=t, state={"turn": 2}))
        assert not isinstance(pruning, BaseException), pruning
        if isinstance(put, BaseException):
            assert isinstance(put, ApplicationError) and put.status_code == 404, put
        assert not Checkpoint.objects.filter(pk=old.pk).exists()
        assert not PendingWrite.objects.filter(checkpoint_id=old.pk).exists()
