"""Domain events (seed 001: `RAG.QueryRequested`, `RAG.ResultsReady`, `RAG.IndexRebuilt`).

Emitted in-process as a Django signal (for subscribers in this process, and tests) and, when
`REDIS_URL` is set, published to the Redis channel `memoryhub.events` as JSON, so other services
can follow them. Publishing is best-effort: an event never fails the request that caused it.
"""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from typing import Any

import django.dispatch
from django.conf import settings

from memoryhub import redis_client

logger = logging.getLogger(__name__)

event_emitted = django.dispatch.Signal()  # kwargs: name, payload

REDIS_CHANNEL = "memoryhub.events"


def emit(name: str, payload: dict[str, Any]) -> None:
    payload = {"time": datetime.now(UTC).isoformat(), **payload}
    event_emitted.send(sender=None, name=name, payload=payload)
    if settings.REDIS_URL:
        message = json.dumps({"event": name, **payload}, default=str)
        try:
            # Short timeouts, and no attempt at all for a while after a failure: a hung Redis
            # must not add its timeout to every search.
            redis_client.run(lambda client: client.publish(REDIS_CHANNEL, message))
        except redis_client.RedisUnavailable as exc:
            logger.debug("event %s not published: %s", name, exc)
