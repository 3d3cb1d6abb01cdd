"""Domain events (seed 001: `RAG.QueryRequested`, `RAG.ResultsReady`, `RAG.IndexRebuilt`).

Emitted in-process as a Django signal (for subscribers in this process, and tests) and, when
`REDIS_URL` is set, published to the Redis channel `memoryhub.events` as JSON, so other services
can follow them. Publishing is best-effort: an event never fails the request that caused it.

Searches emit two events each, so publishing is skipped while nobody listens: when a `PUBLISH`
reaches no subscriber, this process stops publishing for `IDLE_RECHECK_SECONDS` and then tries
again. A subscriber that arrives therefore sees events at most that long after it subscribed
(Redis pub/sub keeps nothing for absent subscribers anyway). Nothing is built when neither a
signal receiver nor Redis would take the event.
"""

from __future__ import annotations

import json
import logging
import time
from datetime import UTC, datetime
from typing import Any

import django.dispatch
from django.conf import settings

from memoryhub import redis_client

logger = logging.getLogger(__name__)

event_emitted = django.dispatch.Signal()  # kwargs: name, payload

REDIS_CHANNEL = "memoryhub.events"


IDLE_RECHECK_SECONDS = 5.0
_clock = time.monotonic  # tests move it forward
_idle_until = 0.0  # no subscriber was listening when last published; skip publishing until then


def emit(name: str, payload: dict[str, Any]) -> None:
    global _idle_until
    publish = bool(settings.REDIS_URL) and _clock() >= _idle_until
    if not publish and not event_emitted.has_listeners():
        return
    payload = {"time": datetime.now(UTC).isoformat(), **payload}
    event_emitted.send(sender=None, name=name, payload=payload)
    if publish:
        message = json.dumps({"event": name, **payload}, default=str)
        try:
            # Short timeouts, and no attempt at all for a while after a failure: a hung Redis
            # must not add its timeout to every search.
            receivers = redis_client.run(lambda client: client.publish(REDIS_CHANNEL, message))
        except redis_client.RedisUnavailable as exc:
            logger.debug("event %s not published: %s", name, exc)
        else:
            if not receivers:
                _idle_until = _clock() + IDLE_RECHECK_SECONDS
