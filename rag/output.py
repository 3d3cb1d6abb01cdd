"""The search response body built directly, field for field as `rag.api.SearchApi.OutputSerializer`
would build it.

DRF serializers copy their fields for every instance and resolve each dotted source through
getattr and dict lookups: for 10 items that was about a tenth of a search's CPU time in process
(bench/request_cost.py, cProfile). The serializer stays the documented schema (OpenAPI), and a
test compares this output with its output, so a field added there and not here fails.
"""

from __future__ import annotations

from typing import Any

from rest_framework import fields

from rag.selectors import SearchItem, SearchResult

_DATETIME = fields.DateTimeField()  # the same rendering (time zone, "Z") as the serializer's field
_UUID = fields.UUIDField()
_MEMORY_TEXT = ("category", "conf_uid", "history_uid", "emotion", "context_window")

_CHUNK_TEXT = ("type", "kind", "text", "source_id", "session_id", "role", "speaker")


def _floats(values: dict[str, Any]) -> dict[str, float | None]:
    return {str(k): None if v is None else float(v) for k, v in values.items()}


def _or_none(convert: Any, value: Any) -> Any:
    # A serializer renders a None attribute as None, whatever the field.
    return None if value is None else convert(value)


def search_item(item: SearchItem) -> dict[str, Any]:
    chunk = item.chunk
    body: dict[str, Any] = {"id": _or_none(int, chunk["id"])}
    for name in _CHUNK_TEXT:
        body[name] = _or_none(str, chunk[name])
    body["tokens"] = _or_none(int, chunk["tokens"])
    body["created_ts"] = _or_none(_DATETIME.to_representation, chunk["created_ts"])
    body["importance"] = _or_none(float, chunk["importance"])
    body["tags"] = _or_none(lambda tags: [_or_none(str, tag) for tag in tags], chunk["tags"])
    body["meta"] = _or_none(lambda meta: {str(k): v for k, v in meta.items()}, chunk["meta"])
    body["score"] = float(item.score)
    body["fused"] = float(item.fused)
    body["components"] = _floats(item.components)
    body["ranks"] = {str(k): None if v is None else int(v) for k, v in item.ranks.items()}
    body["boosts"] = _floats(item.boosts)
    body["memory"] = _memory(chunk) if chunk["type"] == "memory" else None
    changed = item.changed_since
    body["changed_since"] = None if changed is None else {
        "key": str(changed["key"]), "now": str(changed["now"]),
        "said_at": _or_none(_DATETIME.to_representation, changed["said_at"])}
    body["corrects"] = _or_none(int, item.corrects)
    return body


def _memory(chunk: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = {"id": _or_none(_UUID.to_representation, chunk["memory_uid"])}
    for name in _MEMORY_TEXT:
        body[name] = _or_none(str, chunk[name])
    body["last_seen_at"] = _or_none(_DATETIME.to_representation, chunk["last_seen_at"])
    return body


def search_response(query: str, result: SearchResult, skipped_steps: list[dict[str, str]]) -> dict[str, Any]:
    return {
        "query": str(query), "mode": str(result.mode), "fusion": str(result.fusion),
        "took_ms": float(result.took_ms), "timings_ms": _floats(result.timings_ms),
        "candidates": {str(k): int(v) for k, v in result.candidates.items()},
        "llm_steps": [str(step) for step in result.llm_steps],
        "skipped_steps": [{"step": str(s["step"]), "reason": str(s["reason"])} for s in skipped_steps],
        "items": [search_item(item) for item in result.items],
    }
