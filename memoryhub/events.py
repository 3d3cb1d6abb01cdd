"""Domain events (seed 001: `RAG.QueryRequested`, `RAG.ResultsReady`, `RAG.IndexRebuilt`).

Emitted in-process as a Django signal (for subscribers in this process, and tests) and, when
`REDIS_URL` is set, published to the Redis channel `memoryhub.events` as JSON, so other services
can follow them. Publishing is best-effort: an event never fails the request that caused it.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from functools import cache
from typing import Any

import django.dispatch
from django.conf import settings

logger = logging.getLogger(__name__)

event_emitted = django.dispatch.Signal()  # kwargs: name, payload

REDIS_CHANNEL = "memoryhub.events"


@cache
def _redis() -> Any:
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)


def emit(name: str, payload: dict[str, Any]) -> None:
    payload = {"time": datetime.now(UTC).isoformat(), **payload}
    event_emitted.send(sender=None, name=name, payload=payload)
    if settings.REDIS_URL:
        try:
            _redis().publish(REDIS_CHANNEL, json.dumps({"event": name, **payload}, default=str))
        except Exception as exc:
            logger.warning("event %s not published: %s", name, exc)
