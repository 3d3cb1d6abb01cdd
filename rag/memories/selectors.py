"""Reads of typed memories."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import datetime

from django.db.models import F, QuerySet

from memoryhub.registry import Decision
from memoryhub.text import analyze
from rag.memory_models import Character, MemoryReview
from rag.models import Chunk

# A user id that is one word of letters is the nickname the memories call the user by ("alex" writes
# "Alex loves rock music", seed 004's "Зритель Alex"); "u_1842" or "7f3a…" names no one.
_NICKNAME = re.compile(r"[^\W\d_]{2,40}")


def memory_subject_terms(*, tenant_id: int, user_id: str, kinds: Sequence[str] = (),
                         conf_uids: Sequence[str] = ()) -> frozenset[str]:
    """The BM25 terms of the names a typed-memory search's memories are about, besides the user's own name
    (`profiles.selectors.own_name_terms`, which the caller has): the user's id when it is a nickname, for
    memories about the user (`kinds` empty or with "user"); the character's id and name, for a search of
    the character's own memories only (`kinds` ["self"], with `conf_uids`). Such a name is in nearly every
    memory searched, so as a search word it ranks "Alex loves rock music" first for "what food does Alex
    like?" (rag.selectors leaves these out of the query, as it does the user's own name)."""
    terms: set[str] = set()
    if (not kinds or "user" in kinds) and _NICKNAME.fullmatch(user_id):
        terms.update(analyze(user_id))
    if set(kinds) == {"self"} and conf_uids:
        for conf_uid, name in Character.objects.filter(tenant_id=tenant_id, conf_uid__in=list(conf_uids)) \
                .values_list("conf_uid", "name"):
            terms.update(analyze(f"{conf_uid if _NICKNAME.fullmatch(conf_uid) else ''} {name}"))
    return frozenset(terms)


def memories_list(
    *,
    tenant_id: int,
    conf_uid: str,
    user_id: str | None = None,
    kind: str | None = None,
    category: str | None = None,
    emotion: str | None = None,
    history_uid: str | None = None,
    tag: str | None = None,
    limit: int = 100,
    offset: int = 0,
) -> tuple[list[Chunk], int]:
    """A page of a character's memories, most important first, then newest, and how many match in all.
    Served by chunk_memory_idx."""
    rows = Chunk.objects.filter(tenant_id=tenant_id, type=Chunk.Type.MEMORY, conf_uid=conf_uid).defer(
        "embedding", "rerank_embedding", "english_rerank_embedding", "terms")
    for column, value in (("user_id", user_id), ("kind", kind), ("category", category), ("emotion", emotion),
                          ("history_uid", history_uid)):
        if value:
            rows = rows.filter(**{column: value})
    if tag:
        rows = rows.filter(tags__contains=[tag])
    page = list(rows.order_by(F("importance").desc(), F("created_ts").desc(), "-id")[offset:offset + limit])
    # A short first page is the whole set: no second query for the count.
    count = offset + len(page) if len(page) < limit and (page or offset == 0) else rows.count()
    return page, count


# --- The review queue (the admin's dashboard) ---------------------------------------------------
def review_pending() -> QuerySet[MemoryReview]:
    return MemoryReview.objects.filter(status=MemoryReview.Status.PENDING)


def review_describe(item: MemoryReview) -> str:
    return f"{item.user_id} / {item.conf_uid}: {item.category} “{item.text[:80]}” ({item.confidence:.2f})"


def review_decided_since(moment: datetime) -> list[Decision]:
    decided = (MemoryReview.objects.filter(decided_at__gte=moment).exclude(status=MemoryReview.Status.PENDING)
               .order_by("-decided_at")[:50])
    return [Decision(when=item.decided_at, who=item.decided_by or "—",
                     what=f"typed memory {item.status}: {item.user_id} {item.category} “{item.text[:60]}”")
            for item in decided]
