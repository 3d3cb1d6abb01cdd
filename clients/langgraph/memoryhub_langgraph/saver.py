"""`MemoryHubSaver`: LangGraph's checkpointer over MemoryHub's thread API (an `engine` key).

A graph's `thread_id` is a thread of one campaign; a LangGraph checkpoint is one MemoryHub checkpoint
with LangGraph's own id, namespace (`checkpoint_ns`), parent and metadata. The checkpoint itself (its
channel values are any objects: LangChain messages, dataclasses, ...) goes through the saver's `serde`
and is stored as the state `{"serde": <type>, "data": <base64>}`; metadata is stored as the JSON it is;
a pending write's value is a `{"serde", "data"}` object too. Reads and writes map onto the API:

- `get_tuple`: `GET …/threads/{id}?checkpoint_ns=` (the namespace's latest) or `GET …/checkpoints/{id}`;
  a thread or checkpoint the server does not hold (never written, deleted, expired, pruned) is `None`;
- `put`: `POST …/checkpoints`; `put_writes`: `POST …/checkpoints/{id}/writes`;
- `list`: `GET …/checkpoints` page by page (`before_step`), newest first, each entry read whole;
- `delete_thread`: `DELETE …/threads/{id}`.

Every other failure raises a `MemoryHubError` (`MemoryHubAuthError` for 401 / 403, `MemoryHubNotFound`,
`MemoryHubConflict`) with the server's message, code and fields.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
import random
import re
import time
import uuid
from collections.abc import AsyncIterator, Generator, Iterator, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

import httpx
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

__version__ = "0.1.0"

# The server's pattern for campaign and thread ids (lore/campaigns/urls.py): checked here so a bad id is a
# ValueError naming it, not a 404 for a route that does not exist.
ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}")
# A 404 naming one of these means "nothing stored there": a read answers None. Another 404 (an unknown
# campaign: a configuration error) raises.
ABSENT_FIELDS = frozenset({"thread_id", "checkpoint_id", "checkpoint_ns"})


class MemoryHubError(Exception):
    """MemoryHub refused a request, or could not be reached (`status` None). `code` and `fields` are the
    server's error body's (`fields` names the input at fault)."""

    def __init__(self, message: str, *, status: int | None = None, code: str = "error",
                 fields: dict[str, Any] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.fields = fields or {}


class MemoryHubAuthError(MemoryHubError):
    """401: no or an invalid API key; 403: the key lacks the `engine` scope."""


class MemoryHubNotFound(MemoryHubError):
    """404 where something had to exist: the campaign, or the checkpoint pending writes are for."""


class MemoryHubConflict(MemoryHubError):
    """409: the campaign is archived (it refuses writes), or a checkpoint id already holds another state."""


_ERRORS: dict[int, type[MemoryHubError]] = {401: MemoryHubAuthError, 403: MemoryHubAuthError,
                                            404: MemoryHubNotFound, 409: MemoryHubConflict}


@dataclass(frozen=True)
class _Call:
    """One request of an operation; `absent_ok`: a 404 naming an ABSENT_FIELDS field answers None."""

    method: str
    path: str
    params: dict[str, Any] | None = None
    body: dict[str, Any] | None = None
    absent_ok: bool = False


@dataclass(frozen=True)
class _Wait:
    seconds: float


# An operation is a generator that yields `_Call`s and `_Wait`s (each answered by a driver: the HTTP answer's
# body, or None) and its results; the sync and async drivers run the same operations, so both behave alike.
_Program = Generator[Any, Any, None]


def _error(call: _Call, response: httpx.Response) -> MemoryHubError:
    try:
        body = response.json()["error"]
        message, code = str(body["message"]), str(body.get("code") or "error")
        fields = body.get("fields") if isinstance(body.get("fields"), dict) else {}
    except (ValueError, KeyError, TypeError):
        message, code, fields = (response.text[:500] or response.reason_phrase), "http_error", {}
    kind = _ERRORS.get(response.status_code, MemoryHubError)
    return kind(f"{message} ({response.status_code} {code}: {call.method} {call.path})",
                status=response.status_code, code=code, fields=fields)


def _answer(call: _Call, response: httpx.Response) -> Any:
    if response.is_success:
        return response.json() if response.content else {}
    error = _error(call, response)
    if call.absent_ok and response.status_code == 404 and error.fields and set(error.fields) <= ABSENT_FIELDS:
        return None
    raise error


def _id(value: Any, what: str) -> str:
    text = str(value)
    if not ID_PATTERN.fullmatch(text):
        raise ValueError(f"{what} {text!r}: MemoryHub takes 1 to 64 letters, digits and _ . : - (the first a letter "
                         f"or digit).")
    return text


def _checkpoint_id(value: Any, what: str) -> str:
    try:
        return str(uuid.UUID(str(value)))
    except ValueError:
        raise ValueError(f"{what} {value!r}: MemoryHub keeps checkpoints by UUID (LangGraph makes its ids so).") \
            from None


def _config(thread_id: str, checkpoint_ns: str, checkpoint_id: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread_id, "checkpoint_ns": checkpoint_ns, "checkpoint_id": checkpoint_id}}


def _address(config: RunnableConfig) -> tuple[str, str, str | None]:
    """thread_id, checkpoint_ns and checkpoint_id (or None) of a config."""
    configurable = config.get("configurable") or {}
    if configurable.get("thread_id") is None:
        raise ValueError("The config names no thread: pass {'configurable': {'thread_id': ...}}.")
    checkpoint_id = configurable.get("checkpoint_id")
    return (_id(configurable["thread_id"], "thread_id"), configurable.get("checkpoint_ns") or "",
            _checkpoint_id(checkpoint_id, "checkpoint_id") if checkpoint_id else None)


def _metadata(config: RunnableConfig, metadata: CheckpointMetadata) -> dict[str, Any]:
    value = get_serializable_checkpoint_metadata(config, metadata)
    try:
        # Through JSON now, so what is sent is what a read gives back (tuples as lists).
        return json.loads(json.dumps(value, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise ValueError(f"Checkpoint metadata must be JSON to be stored in MemoryHub: {exc}") from exc


def _matches(metadata: dict[str, Any], filter: dict[str, Any] | None) -> bool:
    return not filter or all(metadata.get(key) == value for key, value in filter.items())


class MemoryHubSaver(BaseCheckpointSaver[str]):
    """A LangGraph checkpointer keeping a graph's checkpoints in a MemoryHub campaign:

        graph = builder.compile(checkpointer=MemoryHubSaver(base_url="http://memoryhub:8000",
                                                            api_key=key, campaign="demo_moon"))

    `base_url` is the service's root; `api_key` needs the `engine` scope; `campaign` is the campaign's id.
    `ttl_hours` (optional) is sent with every checkpoint: the thread's TTL after its last write. Sync and
    async graphs (`invoke` / `ainvoke`) both work; `close()` / `aclose()` (or `with` / `async with`) free the
    connections."""

    # The API's largest page: `list` reads the checkpoints page by page.
    page_size = 100
    # How long pending writes wait for their checkpoint to be stored (see `_writes_program`).
    writes_wait_seconds = 10.0

    def __init__(self, *, base_url: str, api_key: str, campaign: str, ttl_hours: int | None = None,
                 timeout: float = 30.0, serde: SerializerProtocol | None = None) -> None:
        super().__init__(serde=serde)
        if not api_key:
            raise ValueError("api_key is empty: MemoryHubSaver needs a key with the 'engine' scope.")
        self.base_url = base_url.rstrip("/")
        self.campaign = _id(campaign, "campaign")
        self.ttl_hours = ttl_hours
        self._prefix = f"/api/v1/campaigns/{self.campaign}/threads"
        self._client_args: dict[str, Any] = {
            "base_url": self.base_url, "timeout": timeout,
            "headers": {"Authorization": f"Bearer {api_key}", "User-Agent": f"memoryhub-langgraph/{__version__}"}}
        self._client = httpx.Client(**self._client_args)
        self._async_client: httpx.AsyncClient | None = None
        self._async_loop: asyncio.AbstractEventLoop | None = None

    # --- connections ------------------------------------------------------------------------------
    def close(self) -> None:
        self._client.close()

    async def aclose(self) -> None:
        if self._async_client is not None and self._async_loop is asyncio.get_running_loop():
            await self._async_client.aclose()
        self._async_client = self._async_loop = None

    def __enter__(self) -> MemoryHubSaver:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.close()

    async def __aenter__(self) -> MemoryHubSaver:
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.aclose()

    def _aclient(self) -> httpx.AsyncClient:
        loop = asyncio.get_running_loop()
        if self._async_client is None or self._async_loop is not loop:
            # An AsyncClient's connections belong to the event loop that opened them: a saver used again from
            # another loop (a second asyncio.run) opens a client of its own there.
            self._async_client, self._async_loop = httpx.AsyncClient(**self._client_args), loop
        return self._async_client

    def _unreachable(self, call: _Call, exc: Exception) -> MemoryHubError:
        return MemoryHubError(f"MemoryHub at {self.base_url} did not answer {call.method} {call.path}: {exc!r}",
                              code="unreachable")

    def _send(self, call: _Call) -> Any:
        try:
            response = self._client.request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as exc:
            raise self._unreachable(call, exc) from exc
        return _answer(call, response)

    async def _asend(self, call: _Call) -> Any:
        try:
            response = await self._aclient().request(call.method, call.path, params=call.params, json=call.body)
        except httpx.TransportError as exc:
            raise self._unreachable(call, exc) from exc
        return _answer(call, response)

    def _run(self, program: _Program) -> Iterator[Any]:
        answer = None
        while True:
            try:
                item = program.send(answer)
            except StopIteration:
                return
            answer = None
            if isinstance(item, _Call):
                answer = self._send(item)
            elif isinstance(item, _Wait):
                time.sleep(item.seconds)
            else:
                yield item

    async def _arun(self, program: _Program) -> AsyncIterator[Any]:
        answer = None
        while True:
            try:
                item = program.send(answer)
            except StopIteration:
                return
            answer = None
            if isinstance(item, _Call):
                answer = await self._asend(item)
            elif isinstance(item, _Wait):
                await asyncio.sleep(item.seconds)
            else:
                yield item

    async def _afirst(self, program: _Program) -> Any:
        async with contextlib.aclosing(self._arun(program)) as results:
            async for item in results:
                return item
        return None

    # --- payloads ---------------------------------------------------------------------------------
    def _path(self, thread_id: str, *parts: str) -> str:
        return "/".join((self._prefix, thread_id, *parts))

    def _pack(self, value: Any) -> dict[str, str]:
        type_, data = self.serde.dumps_typed(value)
        return {"serde": type_, "data": base64.b64encode(data).decode("ascii")}

    def _unpack(self, payload: Any, what: str) -> Any:
        if not (isinstance(payload, dict) and isinstance(payload.get("serde"), str)
                and isinstance(payload.get("data"), str)):
            raise MemoryHubError(f"{what} holds no LangGraph payload ({{'serde', 'data'}}): it was not written by a "
                                 f"LangGraph checkpointer.", code="not_langgraph")
        try:
            data = base64.b64decode(payload["data"], validate=True)
        except binascii.Error as exc:
            raise MemoryHubError(f"{what}: its data is not base64 ({exc}).", code="not_langgraph") from exc
        return self.serde.loads_typed((payload["serde"], data))

    def _tuple(self, thread_id: str, view: dict[str, Any]) -> CheckpointTuple:
        ns, checkpoint_id, parent = view["checkpoint_ns"], view["checkpoint_id"], view["parent_checkpoint_id"]
        what = f"Checkpoint {checkpoint_id} of thread {thread_id!r}"
        return CheckpointTuple(
            config=_config(thread_id, ns, checkpoint_id),
            checkpoint=self._unpack(view["state"], what),
            metadata=view["metadata"],
            parent_config=_config(thread_id, ns, parent) if parent else None,
            # The server returns them in LangGraph's order (task path, task id, idx).
            pending_writes=[(w["task_id"], w["channel"], self._unpack(w["value"], f"{what}: a pending write"))
                            for w in view["pending_writes"]])

    # --- operations -------------------------------------------------------------------------------
    def _get_program(self, config: RunnableConfig) -> _Program:
        thread_id, ns, checkpoint_id = _address(config)
        if checkpoint_id:
            view = yield _Call("GET", self._path(thread_id, "checkpoints", checkpoint_id), absent_ok=True)
            # The API finds a checkpoint by id in any namespace; LangGraph asks within one.
            if view is None or view["checkpoint_ns"] != ns:
                return
        else:
            thread = yield _Call("GET", self._path(thread_id), params={"checkpoint_ns": ns}, absent_ok=True)
            if thread is None:
                return
            view = thread["checkpoint"]
        yield self._tuple(thread_id, view)

    def _put_program(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata) -> _Program:
        thread_id, ns, parent = _address(config)
        checkpoint_id = _checkpoint_id(checkpoint["id"], "checkpoint['id']")
        body: dict[str, Any] = {"checkpoint_id": checkpoint_id, "checkpoint_ns": ns, "state": self._pack(checkpoint),
                                "metadata": _metadata(config, metadata)}
        if parent:
            # The config's checkpoint is the one this run started from: the namespace's latest in a plain run, an
            # older one when the graph runs or updates a past state (time travel, `update_state` on an older
            # config). LangGraph does no compare-and-set (its own savers store every put), so every put is a fork:
            # the server then takes any kept checkpoint as the parent and makes the new one the latest. Without
            # `fork` it would refuse time travel with 409 stale_parent.
            body.update(parent_checkpoint_id=parent, fork=True)
        if self.ttl_hours is not None:
            body["ttl_hours"] = self.ttl_hours
        yield _Call("POST", self._path(thread_id, "checkpoints"), body=body)
        yield _config(thread_id, ns, checkpoint_id)

    def _writes_program(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                        task_path: str) -> _Program:
        thread_id, _ns, checkpoint_id = _address(config)
        if not checkpoint_id:
            raise ValueError("put_writes needs the checkpoint the writes are for: config['configurable']"
                             "['checkpoint_id'].")
        items = [{"task_id": task_id, "channel": channel, "idx": WRITES_IDX_MAP.get(channel, idx),
                  "value": self._pack(value), "task_path": task_path} for idx, (channel, value) in enumerate(writes)]
        if not items:
            return
        call = _Call("POST", self._path(thread_id, "checkpoints", checkpoint_id, "writes"), body={"writes": items},
                     absent_ok=True)
        # LangGraph saves a checkpoint and its tasks' writes from background tasks that may reach the server in
        # either order (its own savers keep writes apart from checkpoints); the API stores writes only against a
        # stored checkpoint, so writes that come first wait for theirs, a bounded time.
        deadline, delay = time.monotonic() + self.writes_wait_seconds, 0.01
        while (yield call) is None:
            if time.monotonic() >= deadline:
                yield replace(call, absent_ok=False)  # raises with the server's message
                return
            yield _Wait(delay)
            delay = min(delay * 2, 0.25)

    def _list_program(self, config: RunnableConfig | None, filter: dict[str, Any] | None,
                      before: RunnableConfig | None, limit: int | None) -> _Program:
        if config is None:
            raise ValueError("MemoryHubSaver.list needs a config naming a thread_id: the API lists one thread's "
                             "checkpoints.")
        thread_id, _ns, only = _address(config)
        ns = (config.get("configurable") or {}).get("checkpoint_ns")  # None: every namespace
        if limit is not None and limit <= 0:
            return
        before_step: int | None = None
        before_id = get_checkpoint_id(before) if before else None
        if before_id:
            before_id = _checkpoint_id(before_id, "before's checkpoint_id")
            anchor = yield _Call("GET", self._path(thread_id, "checkpoints", before_id), absent_ok=True)
            if anchor is not None:
                before_step, before_id = anchor["step"], None
            # An anchor not held (pruned) is compared by id, as LangGraph's own savers do: its ids grow with time.

        def keep(view: dict[str, Any]) -> bool:
            return ((ns is None or view["checkpoint_ns"] == ns)
                    and (before_step is None or view["step"] < before_step)
                    and (before_id is None or view["checkpoint_id"] < before_id)
                    and _matches(view["metadata"], filter))

        if only:
            view = yield _Call("GET", self._path(thread_id, "checkpoints", only), absent_ok=True)
            if view is not None and keep(view):
                yield self._tuple(thread_id, view)
            return
        # Metadata is filtered here, on each page's entries (the server may hold it encrypted: no query reads it);
        # only the entries kept are read whole.
        params: dict[str, Any] = {"limit": self.page_size if filter or limit is None else min(limit, self.page_size)}
        if ns is not None:
            params["checkpoint_ns"] = ns
        cursor, left = before_step, limit
        while True:
            page = yield _Call("GET", self._path(thread_id, "checkpoints"), absent_ok=True,
                               params=params if cursor is None else {**params, "before_step": cursor})
            if page is None:
                return
            for summary in page["checkpoints"]:
                if not keep(summary):
                    continue
                view = yield _Call("GET", self._path(thread_id, "checkpoints", summary["checkpoint_id"]),
                                   absent_ok=True)
                if view is None:  # pruned since the page was read
                    continue
                yield self._tuple(thread_id, view)
                if left is not None:
                    left -= 1
                    if left == 0:
                        return
            cursor = page["next_before_step"]
            if cursor is None:
                return

    def _delete_program(self, thread_id: str) -> _Program:
        yield _Call("DELETE", self._path(_id(thread_id, "thread_id")), absent_ok=True)

    # --- BaseCheckpointSaver ----------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return next(self._run(self._get_program(config)), None)

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None) -> Iterator[CheckpointTuple]:
        yield from self._run(self._list_program(config, filter, before, limit))

    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        # new_versions is not used: each checkpoint's state is stored whole.
        return next(self._run(self._put_program(config, checkpoint, metadata)))

    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                   task_path: str = "") -> None:
        for _ in self._run(self._writes_program(config, writes, task_id, task_path)):
            pass

    def delete_thread(self, thread_id: str) -> None:
        for _ in self._run(self._delete_program(thread_id)):
            pass

    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await self._afirst(self._get_program(config))

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None) -> AsyncIterator[CheckpointTuple]:
        async with contextlib.aclosing(self._arun(self._list_program(config, filter, before, limit))) as results:
            async for item in results:
                yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
                   new_versions: ChannelVersions) -> RunnableConfig:
        return await self._afirst(self._put_program(config, checkpoint, metadata))

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]], task_id: str,
                          task_path: str = "") -> None:
        async for _ in self._arun(self._writes_program(config, writes, task_id, task_path)):
            pass

    async def adelete_thread(self, thread_id: str) -> None:
        async for _ in self._arun(self._delete_program(thread_id)):
            pass

    def get_next_version(self, current: str | None, channel: None) -> str:
        # As LangGraph's own savers (in memory, PostgreSQL): a counter with a random fraction, so two forks of one
        # checkpoint do not give different values the same version.
        number = 0 if current is None else current if isinstance(current, int) else int(current.split(".")[0])
        return f"{number + 1:032}.{random.random():016}"
