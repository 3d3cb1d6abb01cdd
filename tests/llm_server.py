"""A scriptable OpenAI-compatible HTTP server on loopback, for tests.

The machine running the tests has no LLM or embedding endpoint, and mocking httpx would leave the
real `openai` client (its error mapping, timeouts, response parsing) untested. This server speaks
just enough of the OpenAI wire format (`POST /v1/chat/completions`, `POST /v1/embeddings`) for
the real client to talk to it, and lets a test script what each next request gets back:

    server.script_chat("plain text", {"a": 1}, HTTPError(429), Delay(1.0), Malformed(), fn)
    server.script_embeddings(HTTPError(500), [[0.1, 0.2, ...], ...])

Reply kinds (consumed FIFO per endpoint; when a queue is empty the default behaviour applies):
  * str                       chat: the assistant message content.
  * dict / list / BaseModel   chat: serialised to JSON and used as content.
                              embeddings (a list of vectors): returned as the embeddings.
  * int                       shorthand for HTTPError(status).
  * HTTPError(status, ...)    an error status with an OpenAI-style error body; 429 carries
                              `Retry-After: 0` unless told otherwise so retry tests stay fast.
  * Delay(seconds, then=...)  sleep before answering (`then`, or the default), to trip timeouts.
  * Malformed(body, ...)      a 200 whose body is not JSON at all.
  * callable(request_json)    called with the request body; its result is treated as a reply.
  * None                      the endpoint default, e.g. to queue it behind an error.

A scripted callable that raises produces a 400 (never retried by clients) and lands in `errors`.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
from pydantic import BaseModel, TypeAdapter

__all__ = [
    "Delay",
    "HTTPError",
    "Malformed",
    "OpenAICompatServer",
    "deterministic_embedding",
]


@dataclass(frozen=True)
class HTTPError:
    """Answer with an HTTP error status and an OpenAI-shaped error body."""

    status: int
    retry_after: float | None = None  # None → "0" for 429, absent otherwise
    message: str = "scripted error"


@dataclass(frozen=True)
class Delay:
    """Sleep `seconds` before answering with `then` (or the endpoint default when None)."""

    seconds: float
    then: Any = None


@dataclass(frozen=True)
class Malformed:
    """A 200 answer whose body is not JSON, e.g. an HTML page from a misbehaving gateway."""

    body: str = "<html><body>upstream hiccup</body></html>"
    content_type: str = "application/json"  # lie, as broken gateways do


@dataclass
class _Answer:
    status: int
    body: bytes
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def deterministic_embedding(text: str, dimensions: int) -> np.ndarray:
    """Unit-norm float32 vector seeded by a stable hash of `text` (same in every process)."""
    seed = int.from_bytes(hashlib.blake2b(text.encode("utf-8"), digest_size=8).digest(), "little")
    vec = np.random.default_rng(seed).standard_normal(dimensions).astype(np.float32)
    return vec / np.linalg.norm(vec)


def _default_chat_handler(request_json: dict[str, Any]) -> str:
    return "{}"


def _to_content(reply: Any) -> str:
    """Chat content from a scripted reply: text as is, anything else serialised as JSON."""
    if isinstance(reply, str):
        return reply
    if isinstance(reply, BaseModel):
        return reply.model_dump_json()
    if isinstance(reply, dict | list):
        return json.dumps(reply, ensure_ascii=False)
    return TypeAdapter(type(reply)).dump_json(reply).decode()


def _count_tokens(text: str) -> int:
    # A rough but deterministic stand-in for a tokenizer; tests only need non-zero, stable counts.
    return max(1, len(text) // 4)


class OpenAICompatServer:
    """Threaded loopback server; see the module docstring for the scripting language."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        self.host = host
        self.chat_handler: Callable[[dict[str, Any]], Any] = _default_chat_handler
        self.embedding_dimensions: int = 1536
        self.honour_dimensions: bool = False
        self.requests: list[tuple[str, dict[str, Any]]] = []
        self.errors: list[Exception] = []  # exceptions raised by scripted callables
        self._chat_queue: deque[Any] = deque()
        self._embedding_queue: deque[Any] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> OpenAICompatServer:
        handler = _make_handler(self)
        httpd = ThreadingHTTPServer((self.host, 0), handler)
        httpd.daemon_threads = True
        # Do not wait on handler threads at close: a Delay may still be sleeping.
        httpd.block_on_close = False
        self._httpd = httpd
        self._stopping.clear()
        # A short poll interval keeps stop() (and so every fixture teardown) at a few milliseconds.
        self._thread = threading.Thread(
            target=httpd.serve_forever, kwargs={"poll_interval": 0.01}, name="openai-compat-server",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes sleeping Delay replies
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> OpenAICompatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._httpd is None:
            raise RuntimeError("server not started")
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://{self.host}:{self.port}/v1"

    # -- scripting -------------------------------------------------------------------------------

    def script_chat(self, *replies: Any) -> None:
        with self._lock:
            self._chat_queue.extend(replies)

    def script_embeddings(self, *replies: Any) -> None:
        with self._lock:
            self._embedding_queue.extend(replies)

    def requests_to(self, path_suffix: str) -> list[dict[str, Any]]:
        """Bodies of the recorded requests whose path ends with `path_suffix`."""
        with self._lock:
            return [body for path, body in self.requests if path.endswith(path_suffix)]

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        return self.requests_to("/chat/completions")

    @property
    def embedding_requests(self) -> list[dict[str, Any]]:
        return self.requests_to("/embeddings")

    # -- request handling (called from handler threads) ------------------------------------------

    def _record(self, path: str, body: dict[str, Any]) -> None:
        with self._lock:
            self.requests.append((path, body))

    def _next(self, queue: deque[Any]) -> tuple[bool, Any]:
        with self._lock:
            if queue:
                return True, queue.popleft()
            return False, None

    def _resolve(
        self, reply: Any, request_json: dict[str, Any], build: Callable[[Any], _Answer], default: Any
    ) -> _Answer:
        """Turn a scripted reply into an HTTP answer; `build` makes the success body."""
        if reply is None:
            reply = default
        if callable(reply) and not isinstance(reply, type | BaseModel):
            reply = reply(request_json)
        if isinstance(reply, Delay):
            self._stopping.wait(reply.seconds)
            then = default if reply.then is None else reply.then
            return self._resolve(then, request_json, build, default)
        if isinstance(reply, bool):  # bool is an int; never a status
            raise TypeError("booleans are not replies")
        if isinstance(reply, int):
            reply = HTTPError(reply)
        if isinstance(reply, HTTPError):
            headers: dict[str, str] = {}
            retry_after = reply.retry_after if reply.retry_after is not None else (
                0 if reply.status == 429 else None
            )
            if retry_after is not None:
                headers["Retry-After"] = f"{retry_after:g}"
            body = {"error": {"message": reply.message, "type": "scripted", "param": None,
                              "code": str(reply.status)}}
            return _Answer(reply.status, json.dumps(body).encode(), headers=headers)
        if isinstance(reply, Malformed):
            return _Answer(200, reply.body.encode(), content_type=reply.content_type)
        return build(reply)

    def handle_chat(self, request_json: dict[str, Any]) -> _Answer:
        found, reply = self._next(self._chat_queue)
        default = self.chat_handler
        return self._resolve(
            reply if found else default, request_json,
            lambda r: self._chat_answer(_to_content(r), request_json), default,
        )

    def handle_embeddings(self, request_json: dict[str, Any]) -> _Answer:
        found, reply = self._next(self._embedding_queue)
        default = self._default_vectors
        return self._resolve(
            reply if found else default, request_json,
            lambda r: self._embedding_answer(r, request_json), default,
        )

    def _chat_answer(self, content: str, request_json: dict[str, Any]) -> _Answer:
        prompt_text = " ".join(str(m.get("content") or "") for m in request_json.get("messages", []))
        prompt_tokens, completion_tokens = _count_tokens(prompt_text), _count_tokens(content)
        body = {
            "id": f"chatcmpl-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request_json.get("model", "unknown"),
            "choices": [{
                "index": 0,
                "message": {"role": "assistant", "content": content, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
        return _Answer(200, json.dumps(body, ensure_ascii=False).encode())

    def _inputs(self, request_json: dict[str, Any]) -> list[str]:
        raw = request_json.get("input", [])
        items = [raw] if isinstance(raw, str) else list(raw)
        return [item if isinstance(item, str) else json.dumps(item) for item in items]

    def _default_vectors(self, request_json: dict[str, Any]) -> list[list[float]]:
        dims = self.embedding_dimensions
        if self.honour_dimensions and request_json.get("dimensions"):
            dims = int(request_json["dimensions"])
        return [deterministic_embedding(text, dims).tolist() for text in self._inputs(request_json)]

    def _embedding_answer(self, vectors: Any, request_json: dict[str, Any]) -> _Answer:
        inputs = self._inputs(request_json)
        as_base64 = request_json.get("encoding_format") == "base64"
        data = []
        for index, vec in enumerate(vectors):
            values = np.asarray(vec, dtype=np.float32)
            # The real API honours base64 (the openai client asks for it by default): float32 LE bytes.
            encoded: Any = base64.b64encode(values.astype("<f4").tobytes()).decode() if as_base64 \
                else values.tolist()
            data.append({"object": "embedding", "index": index, "embedding": encoded})
        tokens = sum(_count_tokens(text) for text in inputs)
        body = {
            "object": "list",
            "data": data,
            "model": request_json.get("model", "unknown"),
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        }
        return _Answer(200, json.dumps(body).encode())


def _make_handler(server: OpenAICompatServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, like real providers

        def log_message(self, format: str, *args: Any) -> None:
            pass  # keep test output clean

        def do_POST(self) -> None:  # stdlib naming
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            try:
                request_json = json.loads(raw or b"{}")
            except json.JSONDecodeError:
                request_json = {"_raw": raw.decode("utf-8", "replace")}
            path = self.path.split("?", 1)[0]
            server._record(path, request_json)
            try:
                if path.endswith("/chat/completions"):
                    answer = server.handle_chat(request_json)
                elif path.endswith("/embeddings"):
                    answer = server.handle_embeddings(request_json)
                else:
                    answer = _Answer(404, b'{"error": {"message": "not found", "type": "invalid_request"}}')
            except Exception as exc:  # a broken scripted callable: fail loudly, never retryably
                server.errors.append(exc)
                message = f"scripted reply raised {type(exc).__name__}: {exc}"
                body = {"error": {"message": message, "type": "scripting"}}
                answer = _Answer(400, json.dumps(body).encode())
            self._send(answer)

        def _send(self, answer: _Answer) -> None:
            try:
                self.send_response(answer.status)
                self.send_header("Content-Type", answer.content_type)
                self.send_header("Content-Length", str(len(answer.body)))
                self.send_header("x-request-id", f"req-{next(server._ids)}")
                for name, value in answer.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(answer.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (timeout) before a Delay reply was written

    return Handler
