"""A plain-text document (`"format": "text"`) comes back in search and context exactly as written: its `#`
are text, never escaped, and a line that would be a Markdown heading is text too. Markdown still has headings."""

from __future__ import annotations

import json

import pytest

from rag.models import Chunk

PLAIN = [
    pytest.param("Use #hashtags and C# code", "hashtags code", id="en"),
    pytest.param("Пиши на C# и ставь #хэштеги", "хэштеги", id="ru"),
    pytest.param("用C#写代码，加上#话题标签", "话题标签", id="zh"),
]


@pytest.mark.parametrize(("text", "query"), PLAIN)
def test_a_plain_text_document_comes_back_as_written(client_a, text: str, query: str) -> None:
    client, _ = client_a
    made = client.post("/api/v1/users/alice/documents", {"format": "text", "text": text}, format="json")
    assert made.status_code == 201, made.content
    assert list(Chunk.objects.filter(type=Chunk.Type.DOCUMENT).values_list("text", flat=True)) == [text]
    found = client.post("/api/v1/search", {"user_id": "alice", "query": query}, format="json").json()
    assert [item["text"] for item in found["items"]] == [text]
    context = client.post("/api/v1/context", {"user_id": "alice", "query": query}, format="json")
    assert context.status_code == 200
    body = json.dumps(context.json(), ensure_ascii=False)
    assert text in body and "\\\\#" not in body


def test_a_plain_line_that_looks_like_a_heading_stays_text_while_markdown_has_headings(client_a) -> None:
    client, _ = client_a
    plain = "Sprint notes\n\n  # 3 of 5 tickets done\n## не заголовок\n### 不是标题"
    markdown = "# Returns\nUse #returns on C# forms.\n\n# Доставка\nКурьер #1.\n\n# 配送\n周一送达。"
    for body in ({"format": "text", "text": plain, "title": "Notes"}, {"text": markdown, "title": "FAQ"}):
        made = client.post("/api/v1/users/alice/documents", body, format="json")
        assert made.status_code == 201, made.content
    chunks = Chunk.objects.filter(type=Chunk.Type.DOCUMENT).order_by("id")
    assert [(c.text, c.meta["headings"]) for c in chunks] == [
        ("Notes\nSprint notes\n\n# 3 of 5 tickets done\n## не заголовок\n### 不是标题", []),
        ("FAQ / Returns\nUse #returns on C# forms.", ["Returns"]),
        ("FAQ / Доставка\nКурьер #1.", ["Доставка"]),
        ("FAQ / 配送\n周一送达。", ["配送"]),
    ]
