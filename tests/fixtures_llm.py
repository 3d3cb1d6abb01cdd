"""Pytest fixture `llm_server`: a started OpenAICompatServer per test, stopped afterwards.

Registered from the root conftest via `pytest_plugins`; test modules may also import the fixture
directly (`from tests.fixtures_llm import llm_server`), which keeps working either way.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm_server import OpenAICompatServer


@pytest.fixture
def llm_server() -> Iterator[OpenAICompatServer]:
    server = OpenAICompatServer().start()
    try:
        yield server
    finally:
        server.stop()
