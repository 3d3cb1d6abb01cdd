"""LLMClient against the loopback OpenAI-compatible server, through the real `openai` client."""


from __future__ import annotations

import time
from types import SimpleNamespace
from typing import Any

import pytest
from prometheus_client import REGISTRY
from pydantic import BaseModel, Field

from memoryhub import llm
from memoryhub.llm import (
    LLMClient,
    LLMConfig,
    LLMDisabled,
    LLMError,
    LLMResponseError,
    LLMUnavailable,
    RetryPolicy,
    parse_json_reply,
)
from tests.llm_server import Delay, HTTPError, Malformed, OpenAICompatServer
from tests.start_up import start_up


class Fact(BaseModel):
    subject: str
    predicate: str
    confidence: float = Field(ge=0, le=1)


GOOD_FACT = {"subject": "Alice", "predicate": "likes tea", "confidence": 0.9}
MESSAGES = [
    {"role": "system", "content": "Extract one fact as JSON."},
    {"role": "user", "content": "I like tea."},
]


def make_client(server: OpenAICompatServer, **overrides: Any) -> LLMClient:
    values: dict[str, Any] = {
        "provider": "openai",
        "base_url": server.base_url,
        "api_key": "test-key",
        "models": {"default": "model-default"},
        "timeout": 2.0,
        "max_retries": 2,
        "backoff_base": 0.01,
        "backoff_max": 0.05,
        "prices": {"model-default": (2.0, 8.0)},
    }
    values.update(overrides)
    return LLMClient(LLMConfig(**values))


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_chat_json_happy_path_records_usage_cost_and_metrics(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(GOOD_FACT)
    before_tokens = metric("memoryhub_llm_tokens_total", agent="happy", kind="prompt")

    fact, result = make_client(llm_server).chat_json("happy", MESSAGES, Fact)

    assert fact == Fact(**GOOD_FACT)
    assert result.attempts == 1
    assert result.prompt_tokens > 0 and result.completion_tokens > 0
    expected_cost = (2.0 * result.prompt_tokens + 8.0 * result.completion_tokens) / 1e6
    assert result.cost_usd == pytest.approx(expected_cost)
    assert result.model == "model-default"
    (request,) = llm_server.chat_requests
    assert request["response_format"] == {"type": "json_object"}
    assert request["temperature"] == 0.0
    after_tokens = metric("memoryhub_llm_tokens_total", agent="happy", kind="prompt")
    assert after_tokens - before_tokens == result.prompt_tokens
    assert metric("memoryhub_llm_calls_total", agent="happy", outcome="ok") >= 1


def test_a_usage_meter_adds_up_the_calls_made_inside_it_and_nested_ones_count_in_both(
        llm_server: OpenAICompatServer) -> None:
    from memoryhub.llm import usage_meter

    llm_server.chat_handler = lambda req: "fine"
    client = make_client(llm_server)
    client.chat_text("outside", MESSAGES)  # before any meter: counted nowhere
    with usage_meter() as turn:
        first = client.chat_text("narrator", MESSAGES)
        with usage_meter() as tool:
            second = client.chat_text("lore_assert", MESSAGES)
    client.chat_text("outside", MESSAGES)
    assert (tool.calls, tool.prompt_tokens, tool.completion_tokens) == (
        1, second.prompt_tokens, second.completion_tokens)
    assert turn.calls == 2 and turn.tokens == first.prompt_tokens + first.completion_tokens + \
        second.prompt_tokens + second.completion_tokens
    assert turn.cost_usd == pytest.approx(first.cost_usd + second.cost_usd) and turn.cost_usd > 0


def test_chat_text_returns_content_and_passes_max_tokens(llm_server: OpenAICompatServer) -> None:
    llm_server.chat_handler = lambda req: f"echo: {req['messages'][-1]['content']}"
    result = make_client(llm_server).chat_text("talker", MESSAGES, temperature=0.7, max_tokens=50)
    assert result.text == "echo: I like tea."
    (request,) = llm_server.chat_requests
    assert request["max_tokens"] == 50 and request["temperature"] == 0.7
    assert "response_format" not in request


def test_json_mode_adds_json_hint_only_when_prompt_lacks_it(llm_server: OpenAICompatServer) -> None:
    client = make_client(llm_server)
    llm_server.script_chat(GOOD_FACT, GOOD_FACT, GOOD_FACT)
    client.chat_json("hint", [{"role": "user", "content": "Extract a fact."}], Fact)
    client.chat_json("hint", [{"role": "system", "content": "Be brief."}, MESSAGES[1]], Fact)
    client.chat_json("hint", MESSAGES, Fact)  # already mentions JSON
    first, second, third = (r["messages"] for r in llm_server.chat_requests)
    assert first[0]["role"] == "system" and "JSON" in first[0]["content"] and len(first) == 2
    assert second[0]["content"].startswith("Be brief.") and "JSON" in second[0]["content"]
    assert len(second) == 2
    assert third == MESSAGES


def test_rate_limit_then_success_is_retried(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(HTTPError(429), GOOD_FACT)
    retries_before = metric("memoryhub_llm_calls_total", agent="limited", outcome="retry")

    fact, result = make_client(llm_server).chat_json("limited", MESSAGES, Fact)

    assert fact.subject == "Alice"
    assert result.attempts == 2
    assert len(llm_server.chat_requests) == 2
    assert metric("memoryhub_llm_calls_total", agent="limited", outcome="retry") - retries_before == 1


def test_server_errors_exhaust_retries(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(500, 503, 500, GOOD_FACT)  # the success must never be reached
    with pytest.raises(LLMUnavailable) as info:
        make_client(llm_server, max_retries=2).chat_json("broken", MESSAGES, Fact)
    assert info.value.attempts == 3
    assert info.value.status_code == 500
    assert len(llm_server.chat_requests) == 3


def test_slow_replies_time_out_retry_then_give_up(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(Delay(2.0, GOOD_FACT), Delay(2.0, GOOD_FACT))
    started = time.monotonic()
    with pytest.raises(LLMUnavailable, match="timed out"):
        make_client(llm_server, timeout=0.3, max_retries=1).chat_json("slow", MESSAGES, Fact)
    assert len(llm_server.chat_requests) == 2
    assert time.monotonic() - started < 1.8  # two ~0.3 s timeouts, not two 2 s waits


def test_one_slow_reply_then_fast_one_succeeds(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(Delay(2.0, GOOD_FACT), GOOD_FACT)
    _fact, result = make_client(llm_server, timeout=0.3).chat_json("slow-once", MESSAGES, Fact)
    assert result.attempts == 2


def test_malformed_json_once_is_re_asked(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat("Sure! {subject: Alice", GOOD_FACT)

    fact, result = make_client(llm_server).chat_json("reask", MESSAGES, Fact)

    assert fact.predicate == "likes tea"
    assert result.attempts == 2
    first, second = llm_server.chat_requests
    assert second["messages"][: len(first["messages"])] == first["messages"]
    bad_reply, correction = second["messages"][-2:]
    assert bad_reply == {"role": "assistant", "content": "Sure! {subject: Alice"}
    assert correction["role"] == "user" and "not valid" in correction["content"]


def test_malformed_json_twice_raises_response_error(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat("not json", "still not json")
    with pytest.raises(LLMResponseError) as info:
        make_client(llm_server).chat_json("hopeless", MESSAGES, Fact)
    assert info.value.raw_text == "still not json"
    assert len(llm_server.chat_requests) == 2


def test_parse_retries_zero_fails_without_re_ask(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat("nope")
    with pytest.raises(LLMResponseError):
        make_client(llm_server).chat_json("strict", MESSAGES, Fact, parse_retries=0)
    assert len(llm_server.chat_requests) == 1


def test_schema_invalid_json_is_re_asked_with_the_errors(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat({"subject": "Alice", "confidence": 7}, GOOD_FACT)

    fact, _result = make_client(llm_server).chat_json("schema", MESSAGES, Fact)

    assert fact.confidence == 0.9
    correction = llm_server.chat_requests[1]["messages"][-1]["content"]
    assert "predicate" in correction and "confidence" in correction


def test_fenced_json_with_leading_text_parses_without_re_ask(llm_server: OpenAICompatServer) -> None:
    fenced = '```json\n{"subject": "Bob", "predicate": "x", "confidence": 1}\n```'
    llm_server.script_chat(f"Here you go:\n{fenced}\nBye")
    fact, result = make_client(llm_server).chat_json("fenced", MESSAGES, Fact)
    assert fact.subject == "Bob" and result.attempts == 1


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```\n{"a": 1}\n```', {"a": 1}),
        ('The answer is {"a": {"b": [1, 2]}} as requested.', {"a": {"b": [1, 2]}}),
        ('noise {broken and then {"a": 2}', {"a": 2}),
        ("[1, 2]", [1, 2]),
    ],
)
def test_parse_json_reply_is_tolerant(text: str, expected: Any) -> None:
    assert parse_json_reply(text) == expected


def test_parse_json_reply_rejects_prose() -> None:
    with pytest.raises(ValueError):
        parse_json_reply("I cannot help with that.")


# A 200 whose body is not JSON is a gateway/proxy failure, not the model's output, so it is treated
# like a 5xx: retried, then LLMUnavailable with a message that says what came back.
@pytest.mark.parametrize("content_type", ["application/json", "text/html"])
def test_malformed_http_body_is_transient(llm_server: OpenAICompatServer, content_type: str) -> None:
    llm_server.script_chat(Malformed(content_type=content_type), GOOD_FACT)
    _fact, result = make_client(llm_server).chat_json("garbled", MESSAGES, Fact)
    assert result.attempts == 2


def test_malformed_http_body_every_time_is_unavailable(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(*[Malformed()] * 3)
    with pytest.raises(LLMUnavailable, match="not JSON"):
        make_client(llm_server, max_retries=2).chat_text("garbled", MESSAGES)
    assert len(llm_server.chat_requests) == 3


def test_json_body_without_choices_is_transient(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(Malformed(body='{"unexpected": true}'), "fine")
    assert make_client(llm_server).chat_text("odd", MESSAGES).attempts == 2


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_fail_immediately(llm_server: OpenAICompatServer, status: int) -> None:
    llm_server.script_chat(status, GOOD_FACT)
    with pytest.raises(LLMError) as info:
        make_client(llm_server).chat_json("bad-request", MESSAGES, Fact)
    assert not isinstance(info.value, LLMUnavailable)
    assert info.value.status_code == status
    assert len(llm_server.chat_requests) == 1


def test_connection_refused_is_unavailable() -> None:
    server = OpenAICompatServer().start()
    base_url = server.base_url
    server.stop()  # nothing listens on that port any more
    client = LLMClient(LLMConfig(base_url=base_url, api_key="k", max_retries=1, backoff_base=0.01))
    with pytest.raises(LLMUnavailable) as info:
        client.chat_text("offline", MESSAGES)
    assert info.value.attempts == 2


def test_per_agent_model_routing(llm_server: OpenAICompatServer) -> None:
    client = make_client(llm_server, models={"default": "small-model", "extractor": "big-model"})
    llm_server.script_chat(GOOD_FACT, "hello")
    _fact, extracted = client.chat_json("extractor", MESSAGES, Fact)
    chatted = client.chat_text("chitchat", MESSAGES)
    assert [r["model"] for r in llm_server.chat_requests] == ["big-model", "small-model"]
    assert (extracted.model, chatted.model) == ("big-model", "small-model")


def test_missing_model_is_a_clear_error(llm_server: OpenAICompatServer) -> None:
    with pytest.raises(LLMError, match="no model configured"):
        make_client(llm_server, models={"extractor": "m"}).chat_text("other", MESSAGES)


def test_retry_after_is_honoured_when_small(llm_server: OpenAICompatServer) -> None:
    llm_server.script_chat(HTTPError(429, retry_after=0.3), "ok")
    started = time.monotonic()
    make_client(llm_server, backoff_base=0.0, backoff_max=1.0).chat_text("patient", MESSAGES)
    assert time.monotonic() - started >= 0.3


def test_backoff_has_full_jitter_and_a_cap() -> None:
    policy = RetryPolicy(max_retries=10, backoff_base=1.0, backoff_max=4.0)
    delays = [policy.delay(5) for _ in range(200)]
    assert all(0 <= d <= 4.0 for d in delays)
    assert len(set(delays)) > 100  # jittered, not a fixed schedule
    assert policy.delay(1, retry_after=2.5) == 2.5
    assert policy.delay(1, retry_after=600) <= 1.0  # a huge Retry-After falls back to our backoff


def test_provider_off_refuses_to_build() -> None:
    with pytest.raises(LLMDisabled):
        LLMClient(LLMConfig(provider="off"))


@pytest.mark.parametrize("prices", ['{"gpt-4o-mini": 0.15}', '{"gpt-4o-mini": [0.15]}',
                                    '{"gpt-4o-mini": ["0.15", "0.6"]}', '{"gpt-4o-mini": [-1, 0.6]}'])
def test_a_bad_llm_prices_stops_start_up_naming_the_variable(prices: str) -> None:
    # It used to start and fail later, on the first LLM call or priced turn report, with a TypeError.
    done = start_up(LLM_PRICES=prices)
    assert done.returncode != 0
    assert "ImproperlyConfigured: LLM_PRICES['gpt-4o-mini'] must be [USD per 1M prompt tokens" in done.stderr


@pytest.mark.parametrize("models", ['{"archivist": 5}', '{"archivist": ""}', '{"archivist": ["a", "b"]}'])
def test_a_bad_llm_models_stops_start_up_naming_the_variable(models: str) -> None:
    done = start_up(LLM_MODELS=models)
    assert done.returncode != 0
    assert "ImproperlyConfigured: LLM_MODELS['archivist'] must be a model name" in done.stderr


def test_llm_prices_as_documented_load() -> None:
    done = start_up("from memoryhub import settings; print(settings.LLM_PRICES)",
                    LLM_PRICES='{"gpt-4o-mini": [0.15, 0.6]}')
    assert done.stdout.strip() == "{'gpt-4o-mini': [0.15, 0.6]}", done.stderr


def test_get_llm_reads_settings_and_caches(
    monkeypatch: pytest.MonkeyPatch, llm_server: OpenAICompatServer
) -> None:
    fake = SimpleNamespace(
        LLM_PROVIDER="openai", LLM_BASE_URL=llm_server.base_url, LLM_API_KEY="", LLM_MODELS={"default": "m1"},
        LLM_TIMEOUT=1.0, LLM_MAX_RETRIES=0, LLM_BACKOFF_BASE=0.0, LLM_BACKOFF_MAX=0.0,
        LLM_PRICES={"m1": [1.0, 1.0]},  # JSON-style list, as settings load it
    )
    monkeypatch.setattr("django.conf.settings", fake)
    llm.reset_providers()
    try:
        client = llm.get_llm()
        assert client is not None and client is llm.get_llm() and llm.llm_enabled()
        assert client.config.prices == {"m1": (1.0, 1.0)}
        assert client.chat_text("any", MESSAGES).text == "{}"
        fake.LLM_PROVIDER = "off"
        llm.reset_providers()
        assert llm.get_llm() is None and not llm.llm_enabled()
        with pytest.raises(LLMDisabled):
            llm.require_llm()
    finally:
        llm.reset_providers()
