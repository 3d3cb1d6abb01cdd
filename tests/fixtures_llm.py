"""Pytest fixtures `llm_server`: a started OpenAICompatServer per test, stopped afterwards; `llm` and
`remote_embedder`: the app's LLM agents or its embedder routed to it.

Registered from the root conftest via `pytest_plugins`; test modules may also import the fixture
directly (`from tests.fixtures_llm import llm_server`), which keeps working either way.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.llm_server import OpenAICompatServer


@pytest.fixture
def llm_server() -> Iterator[OpenAICompatServer]:
    server = OpenAICompatServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def llm(settings: Any, llm_server: OpenAICompatServer) -> OpenAICompatServer:
    """Every LLM agent of the app routed to the loopback server (short timeout, one quick retry)."""
    settings.LLM_PROVIDER = "openai"
    settings.LLM_BASE_URL = llm_server.base_url
    settings.LLM_API_KEY = "test"
    settings.LLM_TIMEOUT = 0.5
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_BACKOFF_BASE = 0.01
    return llm_server


@pytest.fixture
def remote_embedder(settings: Any, llm_server: OpenAICompatServer) -> OpenAICompatServer:
    """Embeddings through the real `openai` client against the loopback server (no retries; settings
    changes reset the cached embedder and its query vectors)."""
    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_BASE_URL = llm_server.base_url
    settings.EMBEDDING_API_KEY = "test"
    settings.LLM_TIMEOUT = 10.0
    settings.LLM_MAX_RETRIES = 0
    return llm_server
