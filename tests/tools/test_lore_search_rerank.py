"""lore_search keeps its answer unless asked to rerank (`rerank: true`, or the domains' setting)."""

from __future__ import annotations

import pytest

from tests.lore.test_rerank import QUERY, _reversed_ranking
from tools.models import ToolCall

pytestmark = pytest.mark.django_db


def test_the_lore_search_tool_reranks_only_when_asked(tools_client, llm) -> None:
    client, tenant = tools_client
    plain = client.post("/api/v1/tools/lore_search", {"query": QUERY}, format="json").json()
    assert llm.chat_requests == [] and "llm_steps" not in plain and "skipped_steps" not in plain
    llm.script_chat(_reversed_ranking)
    asked = client.post("/api/v1/tools/lore_search", {"query": QUERY, "rerank": True}, format="json").json()
    assert asked["llm_steps"] == ["rerank"]
    assert [i["entry_id"] for i in asked["items"]] == [i["entry_id"] for i in plain["items"]][::-1]
    assert ToolCall.objects.filter(tenant=tenant, tool="lore_search").count() == 2
