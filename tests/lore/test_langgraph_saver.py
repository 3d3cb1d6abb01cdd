"""The LangGraph checkpointer (clients/langgraph: `MemoryHubSaver`) against the real service: a real
StateGraph whose state holds LangChain messages, run over HTTP on a live server, read back by a new saver
as after a restart, resumed after an interrupt, forked from an older checkpoint, listed, deleted, run async.
LangGraph's own in-memory saver runs the same graphs as the reference where the two should agree."""

from __future__ import annotations

import asyncio
import base64
import operator
import threading
import uuid
from collections.abc import Callable
from typing import Annotated, Any, TypedDict

import httpx
import pytest
from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langgraph.checkpoint.base import empty_checkpoint
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.graph.message import add_messages
from langgraph.types import Command, interrupt
from memoryhub_langgraph import MemoryHubAuthError, MemoryHubNotFound, MemoryHubSaver

from lore.campaigns.models import Checkpoint, PendingWrite
from lore.models import World
from memoryhub import services as kernel_services
from tests.lore.conftest import scoped_client

pytestmark = pytest.mark.django_db(transaction=True)

CAMPAIGN = "camp_123"
Saver = Callable[..., MemoryHubSaver]


class Scene(TypedDict):
    messages: Annotated[list[AnyMessage], add_messages]
    turn: int
    rolls: Annotated[list[int], operator.add]


def narrate(state: Scene) -> dict[str, Any]:
    return {"messages": [AIMessage(f"Turn {state['turn']}: the door creaks open.")], "turn": state["turn"] + 1}


def react(state: Scene) -> dict[str, Any]:
    return {"messages": [AIMessage("Li Shen nods. Ли Шэнь кивает.")], "rolls": [state["turn"] * 10]}


def ask_roll(state: Scene) -> dict[str, Any]:
    # Human in the loop: the run stops here until the engine resumes it with the player's roll.
    roll = interrupt({"question": "Roll insight", "dc": 12})
    return {"rolls": [roll], "messages": [HumanMessage(f"I rolled {roll}.")]}


def scene_graph(checkpointer: Any, *, with_roll: bool = False) -> Any:
    builder = StateGraph(Scene)
    builder.add_node("narrate", narrate)
    builder.add_node("react", react)
    builder.add_edge(START, "narrate")
    if with_roll:
        builder.add_node("ask_roll", ask_roll)
        builder.add_edge("narrate", "ask_roll")
        builder.add_edge("ask_roll", "react")
    else:
        builder.add_edge("narrate", "react")
    builder.add_edge("react", END)
    return builder.compile(checkpointer=checkpointer)


def opening() -> dict[str, Any]:
    return {"messages": [HumanMessage("I open the door.")], "turn": 1, "rolls": []}


def thread(thread_id: str = "scene_42") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


def thread_config(checkpoint_id: str | None, checkpoint_ns: str = "") -> dict[str, Any]:
    return {"configurable": {"thread_id": "scene_42", "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


def shape(history: list[Any]) -> list[tuple[Any, Any, tuple[str, ...]]]:
    """What two savers' histories of the same runs share (their ids differ): source, step, next nodes."""
    return [(s.metadata["source"], s.metadata["step"], s.next) for s in history]


@pytest.fixture
def engine_key(world: World) -> str:
    """An engine key of the tenant, whose campaign camp_123 exists (committed: the live server sees it)."""
    client = scoped_client(world.tenant, "engine")
    assert client.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": CAMPAIGN, "name": "Moon"},
                       format="json").status_code == 201
    return kernel_services.api_key_create(tenant=world.tenant, name="engine", scopes=("engine",))[1]


@pytest.fixture
def saver(live_server: Any, engine_key: str) -> Saver:
    """A new saver each call, as a restarted engine makes one; closed after the test."""
    made: list[MemoryHubSaver] = []

    def make(key: str = engine_key, campaign: str = CAMPAIGN, **options: Any) -> MemoryHubSaver:
        made.append(MemoryHubSaver(base_url=live_server.url, api_key=key, campaign=campaign, **options))
        return made[-1]

    yield make
    for one in made:
        one.close()


def test_a_run_is_read_back_by_a_new_saver_as_after_a_restart(saver: Saver) -> None:
    graph = scene_graph(saver())
    result = graph.invoke(opening(), thread())
    assert [m.content for m in result["messages"]] == [
        "I open the door.", "Turn 1: the door creaks open.", "Li Shen nods. Ли Шэнь кивает."]

    restarted = scene_graph(saver())
    state = restarted.get_state(thread())
    assert state.values == result and state.next == ()
    assert [type(m) for m in state.values["messages"]] == [HumanMessage, AIMessage, AIMessage]
    history = list(restarted.get_state_history(thread()))
    assert [s.config for s in history] == [s.config for s in graph.get_state_history(thread())]
    # The same run on LangGraph's own saver has the same history: input, then a checkpoint per step.
    reference = scene_graph(InMemorySaver())
    reference.invoke(opening(), thread())
    assert shape(history) == shape(list(reference.get_state_history(thread())))
    assert shape(history) == [("loop", 2, ()), ("loop", 1, ("react",)), ("loop", 0, ("narrate",)),
                              ("input", -1, ("__start__",))]
    assert history[0].parent_config == history[1].config  # each checkpoint follows the one before

    # The next turn continues the stored state.
    again = restarted.invoke({"messages": [HumanMessage("I step in.")]}, thread())
    assert len(again["messages"]) == 6 and again["turn"] == 3 and again["rolls"] == [20, 30]


def test_an_interrupted_run_resumes_with_a_new_saver(saver: Saver) -> None:
    first = scene_graph(saver(), with_roll=True)
    paused = first.invoke(opening(), thread())
    assert paused["__interrupt__"][0].value == {"question": "Roll insight", "dc": 12}

    # The interrupt is a pending write of the latest checkpoint: a restarted engine sees it and resumes.
    restarted = scene_graph(saver(), with_roll=True)
    state = restarted.get_state(thread())
    assert state.next == ("ask_roll",) and state.interrupts[0].value == {"question": "Roll insight", "dc": 12}
    done = restarted.invoke(Command(resume=14), thread())
    assert done["rolls"] == [14, 20]
    assert [m.content for m in done["messages"]][-2:] == ["I rolled 14.", "Li Shen nods. Ли Шэнь кивает."]
    assert scene_graph(saver(), with_roll=True).get_state(thread()).next == ()


def test_update_state_on_an_older_checkpoint_forks_it(saver: Saver, live_server: Any, engine_key: str) -> None:
    graph = scene_graph(saver())
    graph.invoke(opening(), thread())
    after_narrate = next(s for s in graph.get_state_history(thread()) if s.next == ("react",))

    # Time travel: change the state as it was before `react` ran; the latest checkpoint is a child of that one.
    forked = graph.update_state(after_narrate.config, {"messages": [AIMessage("A trap clicks.")]})
    restarted = scene_graph(saver())
    latest = restarted.get_state(thread())
    assert latest.config == forked and latest.parent_config == after_narrate.config
    assert [m.content for m in latest.values["messages"]] == [
        "I open the door.", "Turn 1: the door creaks open.", "A trap clicks."]
    assert latest.next == ("react",) and latest.values["rolls"] == []
    # Running from the fork goes on from its state, not the abandoned branch's.
    done = restarted.invoke(None, forked)
    assert [m.content for m in done["messages"]][-2:] == ["A trap clicks.", "Li Shen nods. Ли Шэнь кивает."]
    assert done["rolls"] == [20]

    # The server holds both branches: the fork's branch does not contain the first run's last checkpoint.
    fork_id = forked["configurable"]["checkpoint_id"]
    abandoned = next(s for s in graph.get_state_history(thread()) if s.metadata["step"] == 2
                     and s.metadata["source"] == "loop" and s.config["configurable"]["checkpoint_id"] != fork_id)
    branch = httpx.get(f"{live_server.url}/api/v1/campaigns/{CAMPAIGN}/threads/scene_42/checkpoints",
                       params={"branch_of": fork_id}, headers={"Authorization": f"Bearer {engine_key}"}).json()
    ids = [c["checkpoint_id"] for c in branch["checkpoints"]]
    assert ids[0] == fork_id and after_narrate.config["configurable"]["checkpoint_id"] in ids
    assert abandoned.config["configurable"]["checkpoint_id"] not in ids


def test_list_filters_metadata_and_honours_before_and_limit(saver: Saver) -> None:
    hub, reference = saver(), InMemorySaver()
    for checkpointer in (hub, reference):
        graph = scene_graph(checkpointer)
        graph.invoke(opening(), thread())
        graph.invoke({"messages": [HumanMessage("I step in.")]}, thread())
    hub.page_size = 2  # several pages of the API's list

    def listed(checkpointer: Any, **kwargs: Any) -> list[tuple[str, int]]:
        return [(t.metadata["source"], t.metadata["step"]) for t in checkpointer.list(thread(), **kwargs)]

    everything = listed(hub)
    assert everything == listed(reference) and len(everything) == 8
    assert everything[0] == ("loop", 6) and everything[-1] == ("input", -1)
    assert listed(hub, filter={"source": "input"}) == [("input", 3), ("input", -1)]
    assert listed(hub, filter={"source": "loop", "step": 1}) == [("loop", 1)] == listed(
        reference, filter={"source": "loop", "step": 1})
    assert listed(hub, limit=3) == everything[:3]
    tuples = list(hub.list(thread()))
    assert listed(hub, before=tuples[2].config) == everything[3:]
    assert listed(hub, before=tuples[2].config, limit=2, filter={"source": "loop"}) == [("loop", 2), ("loop", 1)]
    assert listed(hub, filter={"source": "update"}) == [] and listed(hub, limit=0) == []
    # Each listed entry is whole: its checkpoint, parent and pending writes, as get_tuple gives them.
    assert tuples[1] == hub.get_tuple(tuples[1].config)
    assert tuples[1].checkpoint["channel_values"]["messages"][0] == HumanMessage("I open the door.", id=tuples[
        1].checkpoint["channel_values"]["messages"][0].id)
    # One checkpoint by its id (older than `before`, or not); an unknown thread lists nothing.
    assert [t.config for t in hub.list(tuples[4].config)] == [tuples[4].config]
    assert [t.config for t in hub.list(tuples[4].config, before=tuples[2].config)] == [tuples[4].config]
    assert list(hub.list(tuples[1].config, before=tuples[2].config)) == []
    # A `before` the server does not hold (pruned) compares ids, which LangGraph makes in time order.
    assert listed(hub, before=thread_config("ffffffff-ffff-6fff-bfff-ffffffffffff")) == everything
    assert listed(hub, before=thread_config("00000000-0000-6000-8000-000000000000")) == []
    assert list(hub.list(thread("scene_unknown"))) == []


def test_a_subgraph_keeps_its_own_namespace(saver: Saver) -> None:
    def build(checkpointer: Any) -> Any:
        roll = StateGraph(Scene)
        roll.add_node("ask_roll", ask_roll)
        roll.add_edge(START, "ask_roll")
        roll.add_edge("ask_roll", END)
        builder = StateGraph(Scene)
        builder.add_node("narrate", narrate)
        builder.add_node("roll", roll.compile())
        builder.add_edge(START, "narrate")
        builder.add_edge("narrate", "roll")
        builder.add_edge("roll", END)
        return builder.compile(checkpointer=checkpointer)

    paused = build(saver()).invoke(opening(), thread())
    assert paused["__interrupt__"][0].value["question"] == "Roll insight"
    # The subgraph stopped inside: its checkpoint is in its own namespace, and a new saver finds it there.
    restarted = build(saver())
    state = restarted.get_state(thread(), subgraphs=True)
    [task] = state.tasks
    sub_ns = task.state.config["configurable"]["checkpoint_ns"]
    assert sub_ns.startswith("roll:") and task.state.next == ("ask_roll",)
    assert Checkpoint.objects.filter(checkpoint_ns=sub_ns).exists()
    sub_id = task.state.config["configurable"]["checkpoint_id"]
    hub = saver()
    assert hub.get_tuple(thread_config(sub_id, sub_ns)).checkpoint["id"] == sub_id
    assert hub.get_tuple(thread_config(sub_id)) is None  # not a checkpoint of the root graph
    assert {t.config["configurable"]["checkpoint_ns"] for t in hub.list(thread())} == {"", sub_ns}
    assert all(t.config["configurable"]["checkpoint_ns"] == "" for t in hub.list(thread_config(None)))
    done = restarted.invoke(Command(resume=9), thread())
    assert done["rolls"] == [9] and done["messages"][-1].content == "I rolled 9."


def test_delete_thread_removes_its_checkpoints(saver: Saver) -> None:
    hub = saver()
    graph = scene_graph(hub)
    graph.invoke(opening(), thread())
    graph.invoke(opening(), thread("scene_43"))
    hub.delete_thread("scene_42")
    assert hub.get_tuple(thread()) is None and list(hub.list(thread())) == []
    assert graph.get_state(thread()).values == {}
    assert not Checkpoint.objects.filter(thread__thread_id="scene_42").exists()
    assert Checkpoint.objects.filter(thread__thread_id="scene_43").count() == 4  # another thread is untouched
    hub.delete_thread("scene_42")  # nothing left to delete: no error
    # The thread starts again from nothing.
    assert graph.invoke(opening(), thread())["turn"] == 2


def test_an_async_graph_runs_resumes_and_lists(saver: Saver) -> None:
    async def scene() -> None:
        async with saver() as first:
            paused = await scene_graph(first, with_roll=True).ainvoke(opening(), thread("scene_async"))
        assert paused["__interrupt__"][0].value["dc"] == 12
        async with saver() as restarted:
            resumed = scene_graph(restarted, with_roll=True)
            assert (await resumed.aget_state(thread("scene_async"))).next == ("ask_roll",)
            done = await resumed.ainvoke(Command(resume=17), thread("scene_async"))
            assert done["rolls"] == [17, 20]
            history = [s async for s in resumed.aget_state_history(thread("scene_async"))]
            listed = [t async for t in restarted.alist(thread("scene_async"), filter={"source": "loop"}, limit=2)]
            assert [t.config for t in listed] == [s.config for s in history[:2]]
            assert await restarted.aget_tuple(thread("scene_unknown")) is None
            await restarted.adelete_thread("scene_async")
            assert await restarted.aget_tuple(thread("scene_async")) is None

    asyncio.run(scene())

    # One saver serves one event loop after another (closed at the end of each, as `async with` does).
    hub = saver()

    async def turn(state: dict[str, Any]) -> dict[str, Any]:
        try:
            return await scene_graph(hub).ainvoke(state, thread("scene_b"))
        finally:
            await hub.aclose()

    asyncio.run(turn(opening()))
    assert asyncio.run(turn({"messages": []}))["turn"] == 3


def test_a_key_without_the_engine_scope_or_an_unknown_campaign_is_a_clear_error(saver: Saver, world: World) -> None:
    memory_key = kernel_services.api_key_create(tenant=world.tenant, name="reader", scopes=("memory", "tools"))[1]
    with pytest.raises(MemoryHubAuthError) as refused:
        scene_graph(saver(memory_key)).invoke(opening(), thread())
    assert refused.value.status == 403 and "engine" in str(refused.value)
    with pytest.raises(MemoryHubAuthError) as unknown_key:
        saver("mh_not_a_key").get_tuple(thread())
    assert unknown_key.value.status == 401
    # An unknown campaign is a configuration error, not an empty thread.
    with pytest.raises(MemoryHubNotFound) as missing:
        saver(campaign="camp_404").get_tuple(thread())
    assert missing.value.fields == {"campaign": [missing.value.fields["campaign"][0]]} and "camp_404" in str(
        missing.value)
    with pytest.raises(ValueError, match="thread_id"):
        saver().get_tuple(thread("scene 42/../x"))


def test_what_the_server_stores_is_what_the_api_shows(saver: Saver, live_server: Any, engine_key: str,
                                                      settings: Any) -> None:
    settings.THREAD_STATE_KEY = ()  # stored as JSON, so the row can be compared with the answer
    hub = saver(ttl_hours=24)
    scene_graph(hub, with_roll=True).invoke(opening(), thread())
    latest = hub.get_tuple(thread())
    checkpoint_id = latest.config["configurable"]["checkpoint_id"]
    answer = httpx.get(f"{live_server.url}/api/v1/campaigns/{CAMPAIGN}/threads/scene_42/checkpoints/{checkpoint_id}",
                       headers={"Authorization": f"Bearer {engine_key}"}).json()
    # The state is the saver's serde payload; decoded, it is the checkpoint LangGraph wrote.
    assert set(answer["state"]) == {"serde", "data"} and answer["state"]["serde"] == "msgpack"
    decoded = hub.serde.loads_typed((answer["state"]["serde"], base64.b64decode(answer["state"]["data"])))
    assert decoded == latest.checkpoint and decoded["id"] == checkpoint_id
    # Metadata is plain JSON, readable by anyone with the key.
    assert answer["metadata"]["source"] == "loop" and answer["metadata"]["step"] == 1
    assert answer["metadata"]["parents"] == {} and answer["metadata"] == latest.metadata
    # The interrupt waiting there is a pending write, its value a serde payload too.
    [interrupt_write] = [w for w in answer["pending_writes"] if w["channel"] == "__interrupt__"]
    assert interrupt_write["idx"] == -3 and set(interrupt_write["value"]) == {"serde", "data"}
    row = Checkpoint.objects.get(checkpoint_id=checkpoint_id)
    assert row.thread.ttl_hours == 24  # the saver's ttl_hours goes with every checkpoint
    assert (row.state, row.metadata, row.sealed_by) == (answer["state"], answer["metadata"], "")
    assert PendingWrite.objects.get(checkpoint=row, channel="__interrupt__").value == interrupt_write["value"]


def test_writes_sent_before_their_checkpoint_wait_for_it(saver: Saver) -> None:
    writer, hub = saver(), saver()
    first = hub.put(thread(), empty_checkpoint(), {"source": "input", "step": -1}, {})
    pending = {**empty_checkpoint(), "id": str(uuid.uuid4())}
    target = {"configurable": {**first["configurable"], "checkpoint_id": pending["id"]}}
    refused = threading.Event()
    writer._client.event_hooks["response"].append(
        lambda response: refused.set() if response.status_code == 404 else None)
    errors: list[BaseException] = []

    def put_writes() -> None:
        try:
            writer.put_writes(target, [("messages", [AIMessage("Early.")]), ("turn", 2)], "task-1")
        except BaseException as exc:  # reported by the assertion below
            errors.append(exc)

    # LangGraph saves a checkpoint and its writes from two background tasks: here the writes come first.
    early = threading.Thread(target=put_writes)
    early.start()
    assert refused.wait(10)
    hub.put(first, pending, {"source": "loop", "step": 0}, {})
    early.join(10)
    assert not early.is_alive() and errors == []
    assert hub.get_tuple(target).pending_writes == [("task-1", "messages", [AIMessage("Early.")]),
                                                    ("task-1", "turn", 2)]
    # Writes for a checkpoint that never comes are an error, after the wait.
    writer.writes_wait_seconds = 0.1
    with pytest.raises(MemoryHubNotFound, match="checkpoint"):
        writer.put_writes({"configurable": {**first["configurable"], "checkpoint_id": str(uuid.uuid4())}},
                          [("turn", 3)], "task-2")
