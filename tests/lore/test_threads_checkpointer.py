"""The short-term layer as LangGraph's checkpointer needs it (seed 003 §2, §8.9): a checkpoint's metadata
and namespace, the engine's own checkpoint ids, pending writes (put_writes), and branching from an older
checkpoint, with pruning that keeps a fork's history."""

from __future__ import annotations

import html
import json
import uuid

from lore.campaigns.models import Checkpoint, PendingWrite
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client

THREAD = f"{CAMPAIGN_BASE}/threads/scene_42"
CHECKPOINTS = f"{THREAD}/checkpoints"


def put(client, state: dict, *, status: int = 201, **fields) -> dict:
    response = client.post(CHECKPOINTS, {"state": state, **fields}, format="json")
    assert response.status_code == status, response.content
    return response.json()


def writes_path(checkpoint_id: str) -> str:
    return f"{CHECKPOINTS}/{checkpoint_id}/writes"


def steps(listed: dict) -> list[int]:
    return [c["step"] for c in listed["checkpoints"]]


# --- Metadata and namespaces --------------------------------------------------------------------
def test_a_checkpoints_metadata_is_stored_and_returned_in_every_language(engine):
    metadata = {"source": "loop", "step": 3, "parents": {},
                "writes": {"gm": {"en": "Li Shen nods.", "ru": "Ли Шэнь кивает.", "zh": "李申点了点头。"}}}
    first = put(engine, {"turn": 1}, metadata=metadata)
    assert first["metadata"] == metadata and first["checkpoint_ns"] == "" and first["pending_writes"] == []
    assert engine.get(f"{CHECKPOINTS}/{first['checkpoint_id']}").json()["metadata"] == metadata
    assert engine.get(THREAD).json()["checkpoint"]["metadata"] == metadata
    # The list carries each checkpoint's metadata, still without its state.
    second = put(engine, {"turn": 2})
    listed = engine.get(CHECKPOINTS).json()["checkpoints"]
    assert [c["metadata"] for c in listed] == [{}, metadata] and "state" not in listed[0]
    assert second["metadata"] == {}


def test_bad_metadata_or_namespace_is_a_400_naming_it(engine, settings):
    settings.THREAD_METADATA_MAX_BYTES = 1024
    for body, field in (({"metadata": [1]}, "metadata"), ({"metadata": "loop"}, "metadata"),
                        ({"metadata": {"blob": "ж" * 600}}, "metadata"), ({"metadata": {"k": "a\x00"}}, "metadata"),
                        ({"checkpoint_ns": 7}, "checkpoint_ns"), ({"checkpoint_ns": "a\nb"}, "checkpoint_ns"),
                        ({"checkpoint_ns": "n" * 256}, "checkpoint_ns"), ({"checkpoint_id": "x"}, "checkpoint_id"),
                        ({"fork": "yes"}, "fork"), ({"fork": True}, "fork")):
        response = engine.post(CHECKPOINTS, {"state": {}, **body}, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["error"]["fields"], (body, response.json())
    assert "1024" in json.dumps(engine.post(CHECKPOINTS, {"state": {}, "metadata": {"blob": "ж" * 600}},
                                            format="json").json())
    assert not Checkpoint.objects.exists()
    schema = engine.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    body = schema["components"]["schemas"]["CheckpointCreateApiInputRequest"]["properties"]
    assert {"metadata", "checkpoint_ns", "checkpoint_id", "fork", "ttl_hours"} <= set(body)


def test_each_namespace_is_its_own_series_and_the_root_is_the_threads_state(engine):
    root = put(engine, {"turn": 1})
    sub_ns = "roll_check:6b1f0c2e-5d7a-4f3e-9c1b-2a4d6e8f0a1c"
    sub_1 = put(engine, {"roll": "insight"}, checkpoint_ns=sub_ns)
    sub_2 = put(engine, {"roll": "insight", "result": 14}, checkpoint_ns=sub_ns,
                parent_checkpoint_id=sub_1["checkpoint_id"])
    # The subgraph's first checkpoint follows nothing of the root's; its second follows its first.
    assert sub_1["parent_checkpoint_id"] is None and sub_2["parent_checkpoint_id"] == sub_1["checkpoint_id"]
    assert (sub_1["checkpoint_ns"], sub_2["step"]) == (sub_ns, 3)
    # The root's latest is still the thread's state, and a compare-and-set on it still lands.
    assert engine.get(THREAD).json()["checkpoint"]["checkpoint_id"] == root["checkpoint_id"]
    assert engine.get(THREAD, {"checkpoint_ns": sub_ns}).json()["checkpoint"] == sub_2
    root_2 = put(engine, {"turn": 2}, parent_checkpoint_id=root["checkpoint_id"])
    assert root_2["parent_checkpoint_id"] == root["checkpoint_id"]
    # A parent of another namespace is not this one's latest.
    stale = engine.post(CHECKPOINTS, {"state": {}, "parent_checkpoint_id": sub_2["checkpoint_id"]}, format="json")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_parent"
    assert steps(engine.get(CHECKPOINTS, {"checkpoint_ns": sub_ns}).json()) == [3, 2]
    assert steps(engine.get(CHECKPOINTS, {"checkpoint_ns": ""}).json()) == [4, 1]
    assert steps(engine.get(CHECKPOINTS).json()) == [4, 3, 2, 1]
    unknown = engine.get(THREAD, {"checkpoint_ns": "nowhere"})
    assert unknown.status_code == 404 and "checkpoint_ns" in unknown.json()["error"]["fields"]


# --- The engine's own ids -------------------------------------------------------------------------
def test_a_checkpoint_keeps_the_engines_id_and_the_same_id_again_is_the_same_write_or_a_409(engine):
    own = "1ef4f797-8335-6428-8001-8a1503f9b875"  # LangGraph's uuid6 shape
    first = put(engine, {"turn": 1}, checkpoint_id=own, metadata={"step": 1})
    assert first["checkpoint_id"] == own
    again = put(engine, {"turn": 1}, status=200, checkpoint_id=own, metadata={"step": 1})
    assert again == first and Checkpoint.objects.count() == 1
    changed = engine.post(CHECKPOINTS, {"state": {"turn": 1}, "checkpoint_id": own, "metadata": {"step": 2}},
                          format="json")
    assert changed.status_code == 409
    error = changed.json()["error"]
    assert error["code"] == "checkpoint_exists" and "checkpoint_id" in error["fields"]
    # Unique within its thread only: another thread (or tenant) may hold the same id.
    other = engine.post(f"{CAMPAIGN_BASE}/threads/scene_43/checkpoints", {"state": {}, "checkpoint_id": own},
                        format="json")
    assert other.status_code == 201 and other.json()["checkpoint_id"] == own


# --- Pending writes -------------------------------------------------------------------------------
def test_pending_writes_are_stored_once_per_task_and_idx_and_returned_with_their_checkpoint(engine):
    checkpoint = put(engine, {"turn": 7})["checkpoint_id"]
    task = "8a1b7c3e-0f4d-5e6a-9b2c-1d3e5f7a9b0c"
    writes = [{"task_id": task, "channel": "messages", "idx": 0,
               "value": [{"role": "gm", "en": "The bridge creaks.", "ru": "Мост скрипит.", "zh": "桥嘎吱作响。"}]},
              {"task_id": task, "channel": "turn", "idx": 1, "value": 8},
              {"task_id": "a_other", "channel": "hp", "idx": 0, "value": None, "task_path": "~__pregel_pull, gm"}]
    stored = engine.post(writes_path(checkpoint), {"writes": writes}, format="json")
    assert stored.status_code == 201
    assert stored.json() == {"checkpoint_id": checkpoint, "written": 3, "kept": 0}
    # A retry, even with other values: what a task wrote first stays (LangGraph's put_writes).
    retry = engine.post(writes_path(checkpoint), {"writes": [{**writes[0], "value": "changed"}, writes[1]]},
                        format="json")
    assert retry.status_code == 200 and retry.json() == {"checkpoint_id": checkpoint, "written": 0, "kept": 2}
    # A negative idx (LangGraph's error / interrupt / resume slot) is replaced; a new idx is added.
    for value in ("first interrupt", {"resume": "да"}):
        engine.post(writes_path(checkpoint), {"writes": [{"task_id": task, "channel": "__interrupt__", "idx": -3,
                                                          "value": value}]}, format="json")
    added = engine.post(writes_path(checkpoint), {"writes": [{"task_id": task, "channel": "flag", "idx": 2,
                                                              "value": True}]}, format="json")
    assert added.status_code == 201
    got = engine.get(f"{CHECKPOINTS}/{checkpoint}").json()["pending_writes"]
    # LangGraph's order: task_path, then task_id, then idx.
    assert [(w["task_id"], w["idx"], w["channel"]) for w in got] == [
        (task, -3, "__interrupt__"), (task, 0, "messages"), (task, 1, "turn"), (task, 2, "flag"),
        ("a_other", 0, "hp")]
    assert got[0]["value"] == {"resume": "да"} and got[1]["value"] == writes[0]["value"]
    assert got[4]["value"] is None and got[4]["task_path"] == "~__pregel_pull, gm"
    assert engine.get(THREAD).json()["checkpoint"]["pending_writes"] == got
    assert PendingWrite.objects.count() == 5


def test_bad_pending_writes_are_a_400_naming_the_field(engine, settings):
    settings.THREAD_STATE_MAX_BYTES = 1024
    path = writes_path(put(engine, {"turn": 1})["checkpoint_id"])
    good = {"task_id": "t", "channel": "c", "idx": 0, "value": 1}
    cases = [({}, "writes"), ({"writes": []}, "writes"), ({"writes": {"a": 1}}, "writes"),
             ({"writes": [{**good, "idx": "0"}]}, "writes"), ({"writes": [{**good, "idx": True}]}, "writes"),
             ({"writes": [{"task_id": "t", "idx": 0, "value": 1}]}, "writes"),
             ({"writes": [{**good, "value": "a\x00b"}]}, "writes"), ({"writes": [{**good, "extra": 1}]}, "writes"),
             ({"writes": [good, {**good, "channel": "d"}]}, "writes/1/idx"),
             ({"writes": [{**good, "value": "x" * 1100}]}, "writes"), ({"writes": [good], "more": 1}, "more")]
    for body, field in cases:
        response = engine.post(path, body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["error"]["fields"], (body, response.json())
    assert not PendingWrite.objects.exists()
    unknown = engine.post(writes_path(str(uuid.uuid4())), {"writes": [good]}, format="json")
    assert unknown.status_code == 404 and "checkpoint_id" in unknown.json()["error"]["fields"]
    no_thread = engine.post(f"{CAMPAIGN_BASE}/threads/nope/checkpoints/{uuid.uuid4()}/writes", {"writes": [good]},
                            format="json")
    assert no_thread.status_code == 404 and "thread_id" in no_thread.json()["error"]["fields"]


def test_pending_writes_are_the_engines_alone_and_refused_once_archived(engine, world):
    checkpoint = put(engine, {"turn": 1})["checkpoint_id"]
    body = {"writes": [{"task_id": "t", "channel": "c", "idx": 0, "value": 1}]}
    tools = scoped_client(world.tenant, "tools").post(writes_path(checkpoint), body, format="json")
    assert tools.status_code == 403 and tools.json()["error"]["code"] == "missing_scope"
    from memoryhub import services as kernel_services

    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    other = scoped_client(other_tenant, "engine").post(writes_path(checkpoint), body, format="json")
    assert other.status_code == 404 and "campaign" in other.json()["error"]["fields"]
    assert engine.post(f"{CAMPAIGN_BASE}/archive", {}, format="json").status_code == 200
    archived = engine.post(writes_path(checkpoint), body, format="json")
    assert archived.status_code == 409 and archived.json()["error"]["code"] == "archived"
    assert not PendingWrite.objects.exists()


# --- Branching ------------------------------------------------------------------------------------
def test_a_fork_writes_a_child_of_an_older_checkpoint_and_a_branch_can_be_listed(engine):
    first = put(engine, {"turn": 1, "where": "мост"})
    second = put(engine, {"turn": 2}, parent_checkpoint_id=first["checkpoint_id"])
    third = put(engine, {"turn": 3}, parent_checkpoint_id=second["checkpoint_id"])
    # Without fork an older parent is still a compare-and-set that fails, and says how to branch.
    stale = engine.post(CHECKPOINTS, {"state": {"turn": "2b"}, "parent_checkpoint_id": first["checkpoint_id"]},
                        format="json")
    assert stale.status_code == 409 and stale.json()["error"]["code"] == "stale_parent"
    assert '"fork": true' in stale.json()["error"]["message"]
    fork = put(engine, {"turn": "2b", "choice": "走另一条路"}, parent_checkpoint_id=first["checkpoint_id"], fork=True)
    assert (fork["step"], fork["parent_checkpoint_id"]) == (4, first["checkpoint_id"])
    # The fork is the thread's state now; the next plain write follows it.
    assert engine.get(THREAD).json()["checkpoint"]["checkpoint_id"] == fork["checkpoint_id"]
    after = put(engine, {"turn": "3b"}, parent_checkpoint_id=fork["checkpoint_id"])
    # The same fork again (a lost answer): the child it made, nothing new.
    again = put(engine, {"turn": "2b", "choice": "走另一条路"}, status=200,
                parent_checkpoint_id=first["checkpoint_id"], fork=True)
    assert again["checkpoint_id"] == fork["checkpoint_id"] and Checkpoint.objects.count() == 5
    # One branch each: the fork's back through the checkpoint it grew from, the old one untouched.
    assert steps(engine.get(CHECKPOINTS, {"branch_of": after["checkpoint_id"]}).json()) == [5, 4, 1]
    assert steps(engine.get(CHECKPOINTS, {"branch_of": third["checkpoint_id"]}).json()) == [3, 2, 1]
    page = engine.get(CHECKPOINTS, {"branch_of": after["checkpoint_id"], "limit": 2}).json()
    assert steps(page) == [5, 4] and page["next_before_step"] == 4
    page = engine.get(CHECKPOINTS, {"branch_of": after["checkpoint_id"], "limit": 2, "before_step": 4}).json()
    assert steps(page) == [1] and page["next_before_step"] is None
    for query, field in (({"branch_of": str(uuid.uuid4())}, "branch_of"), ({"branch_of": "x"}, "branch_of")):
        response = engine.get(CHECKPOINTS, query)
        assert response.status_code in (400, 404) and field in response.json()["error"]["fields"], query
    # A fork needs a kept parent of its namespace.
    missing = engine.post(CHECKPOINTS, {"state": {}, "fork": True, "parent_checkpoint_id": str(uuid.uuid4())},
                          format="json")
    assert missing.status_code == 404 and "parent_checkpoint_id" in missing.json()["error"]["fields"]
    other_ns = engine.post(CHECKPOINTS, {"state": {}, "fork": True, "checkpoint_ns": "sub",
                                         "parent_checkpoint_id": first["checkpoint_id"]}, format="json")
    assert other_ns.status_code == 404


def test_pruning_keeps_the_branch_just_written_and_lets_an_abandoned_one_go(engine, settings):
    settings.THREAD_MAX_CHECKPOINTS = 3
    written = [put(engine, {"turn": turn}) for turn in range(1, 5)]  # steps 1-4; 1 pruned
    by_step = {c["step"]: c["checkpoint_id"] for c in written}
    assert sorted(Checkpoint.objects.values_list("step", flat=True)) == [2, 3, 4]
    engine.post(writes_path(by_step[3]), {"writes": [{"task_id": "t", "channel": "c", "idx": 0, "value": 3}]},
                format="json")
    # Time travel to step 2: the fork (5) keeps the checkpoint it grew from, beyond the 3 newest.
    fork = put(engine, {"turn": "2b"}, parent_checkpoint_id=by_step[2], fork=True)
    assert sorted(Checkpoint.objects.values_list("step", flat=True)) == [2, 3, 4, 5]
    branch = put(engine, {"turn": "3b"}, parent_checkpoint_id=fork["checkpoint_id"])  # step 6
    # The old branch's 3 ages out with its pending writes; the fork's history stays whole.
    assert sorted(Checkpoint.objects.values_list("step", flat=True)) == [2, 4, 5, 6]
    assert not PendingWrite.objects.exists()
    assert steps(engine.get(CHECKPOINTS, {"branch_of": branch["checkpoint_id"]}).json()) == [6, 5, 2]
    assert engine.get(f"{CHECKPOINTS}/{by_step[2]}").status_code == 200
    put(engine, {"turn": "4b"})  # step 7: the branch's 3 newest are kept, the older ones go
    assert sorted(Checkpoint.objects.values_list("step", flat=True)) == [5, 6, 7]


def test_each_namespace_is_pruned_on_its_own(engine, settings):
    settings.THREAD_MAX_CHECKPOINTS = 2
    root = put(engine, {"turn": 1})
    for i in range(5):
        put(engine, {"i": i}, checkpoint_ns="sub")
    assert Checkpoint.objects.filter(checkpoint_ns="sub").count() == 2
    # The subgraph's many checkpoints never pushed out the root's state.
    assert engine.get(THREAD).json()["checkpoint"]["checkpoint_id"] == root["checkpoint_id"]


# --- Deletion and the admin -----------------------------------------------------------------------
def test_deleting_a_thread_or_its_campaign_takes_the_pending_writes_and_counts_checkpoints(engine, world):
    from django.contrib.auth import get_user_model
    from django.test import Client

    from lore.campaigns import services, threads
    from lore.campaigns.models import Campaign

    checkpoint = put(engine, {"turn": 1}, metadata={"source": "input"})["checkpoint_id"]
    put(engine, {"turn": 2})
    engine.post(writes_path(checkpoint), {"writes": [{"task_id": "t", "channel": "c", "idx": i, "value": "宝箱"}
                                                     for i in range(3)]}, format="json")
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    admin = Client()
    admin.force_login(user)
    page = admin.get(f"/admin/lore/checkpoint/{Checkpoint.objects.get(step=1).pk}/change/").content.decode()
    assert '"source": "input"' in html.unescape(page) and "宝箱" in page
    campaign = Campaign.objects.get(slug="camp_123")
    assert threads.thread_delete(campaign=campaign, thread_id="scene_42") == 2
    assert not PendingWrite.objects.exists()
    # A campaign's deletion: its receipt counts the checkpoints, the writes go with them.
    checkpoint = put(engine, {"turn": 1})["checkpoint_id"]
    engine.post(writes_path(checkpoint), {"writes": [{"task_id": "t", "channel": "c", "idx": 0, "value": 1}]},
                format="json")
    deleted = services.campaign_delete(campaign=campaign, actor="test")
    assert (deleted["threads"], deleted["checkpoints"]) == (1, 1)
    assert not PendingWrite.objects.exists() and not Checkpoint.objects.exists()
