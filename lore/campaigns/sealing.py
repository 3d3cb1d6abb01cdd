"""Encryption at rest of thread state (seed 003 §8.9 "можно зашифровать"): with THREAD_STATE_KEY set, a
checkpoint's state and metadata and each pending write's value are stored as Fernet tokens of their JSON
(MultiFernet: the first key seals, every key opens), and `sealed_by` names the sealing key by a
fingerprint. `threads_reseal` (the hourly beat, after expiry) re-seals rows sealed by another key (or
none) with the first, so after a rotation the old key can go once it reports nothing left. A sealed row
no configured key opens is a 503 `thread_state_key`.

Kept apart from `threads` (the thread and checkpoint rules) because the admin opens sealed values too,
and because key handling is what a security review reads on its own."""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections import Counter
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Q

from lore.campaigns.models import Checkpoint, PendingWrite
from memoryhub.exceptions import ApplicationError

logger = logging.getLogger(__name__)

# Sealing is CPU work on up to THREAD_STATE_MAX_BYTES a row: small batches keep each pass short.
RESEAL_BATCH = 100


def compact_json(value: Any) -> bytes:
    """A value as the API measures and seals it: compact JSON, UTF-8."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class StateKeyError(ApplicationError):
    """A sealed row that THREAD_STATE_KEY cannot open: the deployment's key, not the request, is at fault."""

    def __init__(self, message: str) -> None:
        super().__init__(message, code="thread_state_key", status_code=503)


@functools.lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> Any:
    from cryptography.fernet import Fernet, MultiFernet

    return MultiFernet([Fernet(key) for key in keys])


def key_fingerprint(key: str) -> str:
    """Names a key in `sealed_by` without revealing it."""
    return hashlib.sha256(b"memoryhub thread state key\0" + key.encode()).hexdigest()[:16]


def configured_keys() -> tuple[str, ...]:
    return tuple(settings.THREAD_STATE_KEY)


def seal(value: Any) -> tuple[Any, str]:
    """`value` as stored, and the fingerprint of the key that sealed it ("" when THREAD_STATE_KEY is unset)."""
    keys = configured_keys()
    if not keys:
        return value, ""
    return _fernet(keys).encrypt(compact_json(value)).decode("ascii"), key_fingerprint(keys[0])


def unseal(stored: Any, sealed_by: str) -> Any:
    if not sealed_by:
        return stored
    keys = configured_keys()
    if not keys:
        raise StateKeyError("This thread's state is encrypted and THREAD_STATE_KEY is unset: set it to the key "
                            "(or keys) it was written with.")
    from cryptography.fernet import InvalidToken

    try:
        return json.loads(_fernet(keys).decrypt(str(stored).encode("ascii")))
    except (InvalidToken, ValueError):
        logger.error("thread state sealed by key %s opens with none of THREAD_STATE_KEY's %d key(s)", sealed_by,
                     len(keys))
        raise StateKeyError("This thread's state was encrypted with a key THREAD_STATE_KEY does not hold: put that "
                            "key back (after the new one) until the hourly re-sealing has moved every row.") from None


def threads_reseal() -> dict[str, int]:
    """Seal with THREAD_STATE_KEY's first key every checkpoint and pending write stored under another key
    or none (after a rotation, or once a key is set), in small batches without holding locks while
    encrypting: each row is replaced only if it is still as it was read. Rows no configured key opens are
    left and counted (`reseal_unreadable`)."""
    keys = configured_keys()
    counts: Counter[str] = Counter(resealed_checkpoints=0, resealed_writes=0, reseal_unreadable=0)
    if not keys:
        return dict(counts)
    primary = key_fingerprint(keys[0])
    # Two ranges rather than `<>`, so the index on sealed_by finds the few rows left.
    other = Q(sealed_by__lt=primary) | Q(sealed_by__gt=primary)
    for model, fields, counter in ((Checkpoint, ("state", "metadata"), "resealed_checkpoints"),
                                   (PendingWrite, ("value",), "resealed_writes")):
        last_pk = 0
        while rows := list(model.objects.filter(other, pk__gt=last_pk).order_by("pk")
                           .values("pk", "sealed_by", *fields)[:RESEAL_BATCH]):
            last_pk = rows[-1]["pk"]
            changes = []
            for row in rows:
                try:
                    opened = {name: unseal(row[name], row["sealed_by"]) for name in fields}
                except StateKeyError:
                    counts["reseal_unreadable"] += 1
                    continue
                changes.append((row, {name: seal(value)[0] for name, value in opened.items()}))
            with transaction.atomic():
                for row, values in changes:
                    # A row deleted (pruned, expired) or replaced (a negative idx) meanwhile is left alone.
                    counts[counter] += model.objects.filter(pk=row["pk"], sealed_by=row["sealed_by"]).update(
                        **values, sealed_by=primary)
    if counts["reseal_unreadable"]:
        logger.warning("threads_reseal: %d row(s) open with none of THREAD_STATE_KEY's keys",
                       counts["reseal_unreadable"])
    logger.info("threads_reseal: %s", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return dict(sorted(counts.items()))
