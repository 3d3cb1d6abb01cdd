"""LLM provider layer: one OpenAI-compatible chat client with retries, JSON validation and metrics.

Every agent (extractor, summariser, game master, ...) goes through `LLMClient`, so retry policy,
cost accounting and failure semantics are the same everywhere:

* transient failures (429, 408, 5xx, timeouts, connection errors, a non-JSON HTTP body) are
  retried by our own loop — the SDK's built-in retries are switched off so every attempt is
  visible in `LLMResult.attempts` and in metrics — and end in `LLMUnavailable`;
* other 4xx end at once in `LLMError` (retrying a bad request or a bad key cannot help);
* model output that is not the JSON asked for is re-asked `parse_retries` times, then raises
  `LLMResponseError` carrying the raw text.

Metrics (`memoryhub.metrics`): `LLM_CALLS{agent,outcome}` counts HTTP attempts, each with exactly
one outcome: ok | invalid (reply failed JSON/schema checks) | retry (transient, retried) |
unavailable (transient, retries exhausted) | error (non-transient). Tokens and cost are counted
for every reply received, valid or not, since they are billed either way.

`usage_meter()` adds the same tokens and cost up for one piece of work (a scene assembly, a tool
call), so what an operation cost can be stored with it, not only summed per agent in Prometheus.

The module imports without Django configured; settings are read lazily in `get_llm()`.
"""

from __future__ import annotations

import email.utils
import json
import logging
import random
import re
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, TypeVar

import openai
from pydantic import BaseModel, ValidationError

from memoryhub.metrics import LLM_CALLS, LLM_COST, LLM_LATENCY, LLM_TOKENS

__all__ = [
    "LLMClient",
    "LLMConfig",
    "LLMDisabled",
    "LLMError",
    "LLMResponseError",
    "LLMResult",
    "LLMUnavailable",
    "MalformedBody",
    "RetryPolicy",
    "UsageMeter",
    "config_from_settings",
    "get_llm",
    "is_transient",
    "llm_enabled",
    "parse_json_reply",
    "register_reset_hook",
    "require_llm",
    "reset_providers",
    "retry_transient",
    "usage_meter",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

# Some servers reject requests without a key, and the SDK refuses an empty one; local
# OpenAI-compatible servers (vLLM, llama.cpp, Ollama) accept anything.
_PLACEHOLDER_API_KEY = "sk-no-key-required"


# --- errors --------------------------------------------------------------------------------------


class LLMError(Exception):
    """Any failure of the provider layer. `status_code` is set for HTTP errors."""

    def __init__(self, message: str, *, status_code: int | None = None) -> None:
        super().__init__(message)
        self.status_code = status_code


class LLMUnavailable(LLMError):
    """The provider kept failing transiently (429/5xx/timeout/connection/garbled body)."""

    def __init__(self, message: str, *, attempts: int, status_code: int | None = None) -> None:
        super().__init__(message, status_code=status_code)
        self.attempts = attempts


class LLMResponseError(LLMError):
    """The model's reply could not be parsed/validated, even after the allowed re-asks."""

    def __init__(self, message: str, *, raw_text: str, errors: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.raw_text = raw_text
        self.errors = list(errors)


class LLMDisabled(LLMError):
    """LLM features are switched off (`LLM_PROVIDER = "off"`)."""


class MalformedBody(Exception):
    """A 200 response whose body is not an OpenAI JSON document (gateway error page, truncation)."""


# --- configuration and results -------------------------------------------------------------------


@dataclass(frozen=True)
class LLMConfig:
    """Provider settings. `models` maps agent name → model, with `"default"` as the fallback."""

    provider: str = "openai"  # "openai" | "off"
    base_url: str | None = None
    api_key: str = ""
    models: dict[str, str] = field(default_factory=lambda: {"default": "gpt-4o-mini"})
    timeout: float = 30.0
    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)  # USD per 1M tokens

    def model_for(self, agent: str) -> str:
        model = self.models.get(agent) or self.models.get("default")
        if not model:
            raise LLMError(f"no model configured for agent {agent!r} and no 'default' in LLM_MODELS")
        return model

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float:
        price = self.prices.get(model)
        if price is None:
            return 0.0
        return (price[0] * prompt_tokens + price[1] * completion_tokens) / 1_000_000

    @property
    def retry_policy(self) -> RetryPolicy:
        return RetryPolicy(self.max_retries, self.backoff_base, self.backoff_max)


@dataclass
class LLMResult:
    """One completed call. For `chat_json`, counts are totals over re-asks; `text` is the last reply."""

    text: str
    model: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    attempts: int = 1  # HTTP requests made, retries and re-asks included
    latency_s: float = 0.0
    cost_usd: float = 0.0


@dataclass
class UsageMeter:
    """LLM calls, tokens and cost counted while a `usage_meter()` block runs."""

    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


# A tuple, not one meter: a block metered inside another (a tool call inside a turn) counts in both.
_meters: ContextVar[tuple[UsageMeter, ...]] = ContextVar("llm_usage_meters", default=())


@contextmanager
def usage_meter() -> Iterator[UsageMeter]:
    """Count the LLM usage of the calls made inside the block (this thread or task only: a
    ContextVar, which asgiref's sync_to_async carries over)."""
    meter = UsageMeter()
    token = _meters.set((*_meters.get(), meter))
    try:
        yield meter
    finally:
        _meters.reset(token)


# --- retries (shared with memoryhub.embeddings) --------------------------------------------------


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 3
    backoff_base: float = 0.5
    backoff_max: float = 20.0

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry `retry_number` (1-based).

        A server-sent Retry-After is obeyed when it fits under `backoff_max`; a longer one is
        ignored in favour of our capped backoff, since blocking a request thread for minutes is
        worse than trying again early. Otherwise: exponential backoff with full jitter, which
        spreads a thundering herd of workers better than fixed or equal-jitter delays.
        """
        if retry_after is not None and 0 <= retry_after <= self.backoff_max:
            return retry_after
        ceiling = min(self.backoff_max, self.backoff_base * (2 ** (retry_number - 1)))
        return random.uniform(0, ceiling)


def _retry_after_seconds(exc: BaseException) -> float | None:
    response = getattr(exc, "response", None)
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    if (ms := headers.get("retry-after-ms")) is not None:
        try:
            return float(ms) / 1000
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value) if value else None
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def is_transient(exc: BaseException) -> bool:
    """Worth retrying: rate limits, server errors, timeouts, dropped connections, garbled bodies."""
    if isinstance(exc, openai.APIConnectionError | MalformedBody):  # includes APITimeoutError
        return True
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code in (408, 429) or exc.status_code >= 500
    return False


def _describe(exc: BaseException) -> str:
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {exc.message}"
    if isinstance(exc, openai.APITimeoutError):
        return "timed out"
    return f"{type(exc).__name__}: {exc}"


def retry_transient(
    fn: Callable[[], T],
    policy: RetryPolicy,
    *,
    what: str,
    on_retry: Callable[[BaseException], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> tuple[T, int]:
    """Call `fn` until it succeeds; returns (result, attempts).

    Transient errors (see `is_transient`) are retried up to `policy.max_retries` times and then
    raise `LLMUnavailable`; any other `openai.APIStatusError` raises `LLMError` immediately.
    Other exceptions propagate untouched.
    """
    attempt = 0
    while True:
        attempt += 1
        try:
            return fn(), attempt
        except Exception as exc:
            if not is_transient(exc):
                if isinstance(exc, openai.APIStatusError):
                    raise LLMError(f"{what} failed: {_describe(exc)}", status_code=exc.status_code) from exc
                if isinstance(exc, openai.OpenAIError):
                    raise LLMError(f"{what} failed: {_describe(exc)}") from exc
                raise
            status = exc.status_code if isinstance(exc, openai.APIStatusError) else None
            if attempt > policy.max_retries:
                raise LLMUnavailable(
                    f"{what} unavailable after {attempt} attempt(s): {_describe(exc)}",
                    attempts=attempt, status_code=status,
                ) from exc
            if on_retry is not None:
                on_retry(exc)
            wait = policy.delay(attempt, _retry_after_seconds(exc))
            logger.warning(
                "%s attempt %d failed (%s); retrying in %.2fs", what, attempt, _describe(exc), wait
            )
            sleep(wait)


# --- JSON parsing of model output ----------------------------------------------------------------

_FENCE = re.compile(r"```(?:json|JSON)?\s*\n?(.*?)```", re.DOTALL)


def parse_json_reply(text: str) -> Any:
    """Parse a model reply as JSON, tolerating ```json fences and prose before/after the value.

    Raises ValueError when no JSON value can be found.
    """
    stripped = text.strip()
    if not stripped:
        raise ValueError("empty reply")
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        pass
    candidates = [m.group(1).strip() for m in _FENCE.finditer(stripped)] + [stripped]
    decoder = json.JSONDecoder()
    for candidate in candidates:
        # raw_decode from the first brace/bracket so leading and trailing prose are ignored.
        for start in (i for i, ch in enumerate(candidate) if ch in "{["):
            try:
                value, _end = decoder.raw_decode(candidate, start)
                return value
            except json.JSONDecodeError:
                continue
    raise ValueError("no JSON object found in the reply")


def _validation_summary(exc: ValidationError, limit: int = 8) -> list[str]:
    lines = []
    for err in exc.errors(include_url=False)[:limit]:
        loc = ".".join(str(part) for part in err["loc"]) or "(root)"
        lines.append(f"{loc}: {err['msg']}")
    return lines


# --- the client ----------------------------------------------------------------------------------


class LLMClient:
    """Chat completions against an OpenAI-compatible endpoint, for named agents."""

    def __init__(self, config: LLMConfig) -> None:
        if config.provider == "off":
            raise LLMDisabled("LLM provider is 'off'")
        if config.provider != "openai":
            raise LLMError(f"unknown LLM provider {config.provider!r} (expected 'openai' or 'off')")
        self.config = config
        self._client = openai.OpenAI(
            base_url=config.base_url,
            api_key=config.api_key or _PLACEHOLDER_API_KEY,
            timeout=config.timeout,
            max_retries=0,  # our loop retries, so attempts are counted and the policy is ours
        )

    def model_for(self, agent: str) -> str:
        return self.config.model_for(agent)

    def chat_text(
        self,
        agent: str,
        messages: list[dict[str, Any]],
        *,
        temperature: float = 0.0,
        max_tokens: int | None = None,
        model: str | None = None,
    ) -> LLMResult:
        """Free-text completion. Raises LLMUnavailable / LLMError. `model`: another model than the
        agent's (a caller that lets its client pick among the configured ones)."""
        reply = self._complete(agent, messages, temperature=temperature, max_tokens=max_tokens, model=model)
        LLM_CALLS.labels(agent, "ok").inc()
        return reply

    def chat_json(
        self,
        agent: str,
        messages: list[dict[str, Any]],
        schema: type[M],
        *,
        parse_retries: int = 1,
        temperature: float = 0.0,
        max_tokens: int | None = None,
    ) -> tuple[M, LLMResult]:
        """JSON-mode completion validated against `schema`.

        A reply that is not JSON or fails validation is shown back to the model with the errors
        and re-asked up to `parse_retries` times; then LLMResponseError (with the raw text).
        """
        convo = _with_json_hint(messages)
        total = LLMResult(text="", model=self.model_for(agent), attempts=0)
        for round_ in range(parse_retries + 1):
            reply = self._complete(
                agent, convo, temperature=temperature, max_tokens=max_tokens,
                response_format={"type": "json_object"},
            )
            total.text, total.model = reply.text, reply.model
            total.prompt_tokens += reply.prompt_tokens
            total.completion_tokens += reply.completion_tokens
            total.attempts += reply.attempts
            total.latency_s += reply.latency_s
            total.cost_usd += reply.cost_usd
            try:
                value = schema.model_validate(parse_json_reply(reply.text))
            except ValidationError as exc:
                errors = _validation_summary(exc)
            except ValueError as exc:
                errors = [str(exc)]
            else:
                LLM_CALLS.labels(agent, "ok").inc()
                return value, total
            LLM_CALLS.labels(agent, "invalid").inc()
            logger.info("LLM %s reply invalid (round %d): %s", agent, round_ + 1, "; ".join(errors))
            convo = [*convo, {"role": "assistant", "content": reply.text}, {
                "role": "user",
                "content": "Your previous reply was not valid: " + "; ".join(errors)[:800]
                + ". Reply again with only the corrected JSON object: no prose, no code fences.",
            }]
        raise LLMResponseError(
            f"LLM reply for agent {agent!r} failed {schema.__name__} validation after "
            f"{parse_retries + 1} attempt(s): {'; '.join(errors)}",
            raw_text=total.text, errors=errors,
        )

    def _complete(
        self,
        agent: str,
        messages: list[dict[str, Any]],
        *,
        temperature: float,
        max_tokens: int | None,
        response_format: dict[str, str] | None = None,
        model: str | None = None,
    ) -> LLMResult:
        """One completion with transient retries; records tokens/cost/latency, not the final outcome."""
        model = model or self.model_for(agent)
        kwargs: dict[str, Any] = {"model": model, "messages": messages, "temperature": temperature}
        if max_tokens is not None:
            kwargs["max_tokens"] = max_tokens
        if response_format is not None:
            kwargs["response_format"] = response_format

        def call() -> tuple[str, str, int, int]:
            try:
                completion = self._client.chat.completions.create(**kwargs)
            except json.JSONDecodeError as exc:  # body claimed to be JSON but was not
                raise MalformedBody(f"response body is not JSON: {exc}") from exc
            return _unpack_completion(completion, model)

        started = time.perf_counter()
        try:
            (text, used_model, prompt_tokens, completion_tokens), attempts = retry_transient(
                call, self.config.retry_policy, what=f"LLM call for agent {agent!r}",
                on_retry=lambda exc: LLM_CALLS.labels(agent, "retry").inc(),
            )
        except LLMUnavailable:
            LLM_CALLS.labels(agent, "unavailable").inc()
            raise
        except LLMError:
            LLM_CALLS.labels(agent, "error").inc()
            raise
        finally:
            latency = time.perf_counter() - started
            LLM_LATENCY.labels(agent).observe(latency)
        cost = self.config.cost(model, prompt_tokens, completion_tokens) or self.config.cost(
            used_model, prompt_tokens, completion_tokens
        )
        LLM_TOKENS.labels(agent, "prompt").inc(prompt_tokens)
        LLM_TOKENS.labels(agent, "completion").inc(completion_tokens)
        if cost:
            LLM_COST.labels(agent).inc(cost)
        for meter in _meters.get():
            meter.calls += 1
            meter.prompt_tokens += prompt_tokens
            meter.completion_tokens += completion_tokens
            meter.cost_usd += cost
        return LLMResult(text, used_model, prompt_tokens, completion_tokens, attempts, latency, cost)


def _with_json_hint(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI rejects json_object mode unless the prompt mentions JSON: add a hint when it does not.

    The hint joins the leading system message (or becomes one): several local chat templates refuse
    a system message anywhere but first.
    """
    hint = "Reply with a single JSON object."
    if any("json" in str(m.get("content") or "").lower() for m in messages):
        return list(messages)
    if messages and messages[0].get("role") == "system" and isinstance(messages[0].get("content"), str):
        first = {**messages[0], "content": f"{messages[0]['content']}\n\n{hint}"}
        return [first, *messages[1:]]
    return [{"role": "system", "content": hint}, *messages]


def _unpack_completion(completion: Any, requested_model: str) -> tuple[str, str, int, int]:
    """(text, model, prompt_tokens, completion_tokens) from a ChatCompletion.

    Without strict validation the SDK hands back the body as a str when the Content-Type is not
    JSON, and a loosely-constructed object when the JSON lacks fields; both mean the endpoint
    answered with something that is not a completion.
    """
    if isinstance(completion, str | bytes):
        snippet = completion if isinstance(completion, str) else completion.decode("utf-8", "replace")
        raise MalformedBody(f"response body is not a chat completion: {snippet[:200]!r}")
    try:
        message = completion.choices[0].message
        text = message.content or ""
    except (AttributeError, IndexError, TypeError) as exc:
        raise MalformedBody(f"response has no choices[0].message: {exc}") from exc
    usage = getattr(completion, "usage", None)
    prompt_tokens = int(getattr(usage, "prompt_tokens", 0) or 0)
    completion_tokens = int(getattr(usage, "completion_tokens", 0) or 0)
    return text, getattr(completion, "model", None) or requested_model, prompt_tokens, completion_tokens


# --- process-wide instances from Django settings -------------------------------------------------

_lock = threading.Lock()
_llm_cache: dict[str, LLMClient | None] = {}
_reset_hooks: list[Callable[[], None]] = []


def register_reset_hook(hook: Callable[[], None]) -> None:
    """Let other provider modules (embeddings) clear their caches in `reset_providers()`."""
    if hook not in _reset_hooks:
        _reset_hooks.append(hook)


def reset_providers() -> None:
    """Forget cached LLM/embedding providers, e.g. after tests change settings."""
    with _lock:
        _llm_cache.clear()
    for hook in list(_reset_hooks):
        hook()


def _on_setting_changed(*, setting: str, **kwargs: Any) -> None:
    # override_settings(LLM_...) in tests must not keep serving a client built from old values.
    if setting.startswith(("LLM_", "EMBEDDING_")) or setting in ("SEMANTIC_RERANK", "ENGLISH_RERANK"):
        reset_providers()


def config_from_settings() -> LLMConfig:
    from django.conf import settings

    prices: Mapping[str, Sequence[float]] = getattr(settings, "LLM_PRICES", None) or {}
    return LLMConfig(
        provider=getattr(settings, "LLM_PROVIDER", "off"),
        base_url=getattr(settings, "LLM_BASE_URL", None) or None,
        api_key=getattr(settings, "LLM_API_KEY", "") or "",
        models=dict(getattr(settings, "LLM_MODELS", None) or {"default": "gpt-4o-mini"}),
        timeout=float(getattr(settings, "LLM_TIMEOUT", 30.0)),
        max_retries=int(getattr(settings, "LLM_MAX_RETRIES", 3)),
        backoff_base=float(getattr(settings, "LLM_BACKOFF_BASE", 0.5)),
        backoff_max=float(getattr(settings, "LLM_BACKOFF_MAX", 20.0)),
        # LLM_PRICES usually comes from JSON, where the pairs are lists.
        prices={model: (float(p[0]), float(p[1])) for model, p in prices.items()},
    )


def get_llm() -> LLMClient | None:
    """The process-wide client from settings, or None when `LLM_PROVIDER == "off"`."""
    with _lock:
        if "llm" not in _llm_cache:
            config = config_from_settings()
            _llm_cache["llm"] = None if config.provider == "off" else LLMClient(config)
        return _llm_cache["llm"]


def llm_enabled() -> bool:
    return get_llm() is not None


def require_llm() -> LLMClient:
    """Like `get_llm()`, but raises LLMDisabled instead of returning None."""
    client = get_llm()
    if client is None:
        raise LLMDisabled("LLM features are disabled (LLM_PROVIDER is 'off')")
    return client


def _connect_settings_signal() -> None:
    # django.core.signals only needs django.dispatch, so this is safe without configured settings.
    try:
        from django.core.signals import setting_changed
    except ImportError:  # pragma: no cover - Django is a hard dependency of the project
        return
    setting_changed.connect(_on_setting_changed, dispatch_uid="memoryhub.llm.reset_providers")


_connect_settings_signal()
