"""Reads of the profiles app: a user's facts, a key's history, and the profile block of the prompt."""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db.models import OuterRef, Q, QuerySet, Subquery

from memoryhub.registry import Decision
from memoryhub.text import HAN_CHAR, analyze, pronoun_terms
from profiles.conf import confidence_threshold
from profiles.keys import BY_NAME, FAVORITE_THINGS, KEY_ORDER, british_spellings, value_norm
from profiles.models import FactEvent, UserProfile

CONTEXT_HEADERS = {
    "zh": "以下是用户的长期记忆信息：",
    "ru": "Долговременная память о пользователе:",
    "en": "What we know about the user (long-term memory):",
}


def _ordered(facts: list[UserProfile]) -> list[UserProfile]:
    """Registry keys in registry order (name, age, …), then free-form keys alphabetically; within a
    key, the most confident value first."""
    return sorted(facts, key=lambda f: (KEY_ORDER.get(f.key, len(KEY_ORDER)), f.key, -f.confidence, f.value))


def with_current_value(facts: QuerySet[UserProfile]) -> QuerySet[UserProfile]:
    """Annotate each fact with `current_value` and `current_confidence`: the active value of the
    same single-valued key when that is another row (the value a pending fact competes with)."""
    current = UserProfile.objects.filter(
        tenant=OuterRef("tenant"), user_id=OuterRef("user_id"), key=OuterRef("key"),
        status=UserProfile.Status.ACTIVE, multi=False,
    ).exclude(pk=OuterRef("pk"))
    return facts.annotate(current_value=Subquery(current.values("value")[:1]),
                          current_confidence=Subquery(current.values("confidence")[:1]))


def profile_facts(*, tenant_id: int, user_id: str, status: str = UserProfile.Status.ACTIVE) -> list[UserProfile]:
    facts = UserProfile.objects.filter(tenant_id=tenant_id, user_id=user_id, status=status)
    return _ordered(list(with_current_value(facts)))


# Searches ask for the user's own name on every call, and it changes about never: a process keeps it
# for OWN_NAME_TTL_S seconds (a name stated or corrected counts that much later; nothing else reads it).
OWN_NAME_TTL_S = 30.0
_OWN_NAMES_MAX = 10_000
_own_names: dict[tuple[int, str], tuple[float, frozenset[str]]] = {}
_own_names_lock = threading.Lock()


def own_name_terms(*, tenant_id: int, user_id: str) -> frozenset[str]:
    """The BM25 terms of the user's own name (the active `name` facts): "Kate" → {"kate"}."""
    key, now = (tenant_id, user_id), time.monotonic()
    cached = _own_names.get(key)
    if cached is not None and now - cached[0] < OWN_NAME_TTL_S:
        return cached[1]
    values = UserProfile.objects.filter(tenant_id=tenant_id, user_id=user_id, key="name",
                                        status=UserProfile.Status.ACTIVE).values_list("value", flat=True)
    terms = frozenset(term for value in values for term in analyze(value))
    with _own_names_lock:
        if len(_own_names) >= _OWN_NAMES_MAX:
            _own_names.clear()
        _own_names[key] = (now, terms)
    return terms


def own_name_forget(*, tenant_id: int, user_id: str) -> None:
    """Drop this process's copy of a user's name (their erasure): other processes' copies expire
    within OWN_NAME_TTL_S."""
    with _own_names_lock:
        _own_names.pop((tenant_id, user_id), None)


# A meal's words, which ask for what the user eats: not "еда" (stemmed "ед", as "еду" of ехать is) nor "order"
# and "заказать" (a taxi, a ticket).
_MEALS = ("eat", "food", "cook", "meal", "dinner", "lunch", "breakfast", "snack", "recipe", "restaurant", "menu",
          "поесть", "съесть", "ужин", "обед", "завтрак", "перекус", "приготовить", "рецепт", "ресторан", "меню",
          "吃", "饭", "晚饭", "午饭", "早饭", "晚餐", "午餐", "早餐", "菜", "做饭", "菜谱", "餐厅", "点菜", "外卖")
# Words a question asks a key by, besides its name and synonyms (profiles.keys): "where do I live?" asks
# for `location`, which it names by no synonym. Each language's verb, analysed as a query is.
_QUESTION_CUES: dict[str, tuple[str, ...]] = {
    "location": ("live", "living", "based", "reside", "живу", "живёшь", "живет", "живём", "проживаю", "жил", "жила",
                 "住"),
    "employer": ("work", "работаю", "работаешь", "工作", "上班"),
    "occupation": ("work", "работаю", "кем", "工作", "做什么"),
    "hometown": ("grew", "born", "вырос", "выросла", "родился", "родилась", "长大", "出生"),
    "age": ("old", "多大"),
    "birthday": ("born", "родился", "родилась", "出生"),
    # What to eat or cook asks for what the user must not or will not eat: "晚饭吃什么好？" at 150 tokens showed
    # name, job and employer, and not the peanut allergy.
    "allergies": _MEALS,
    "diet": _MEALS,
}


@cache
def key_terms(key: str) -> frozenset[str]:
    """The query terms that ask for `key`: its name's, its synonyms' and its question cues' (pronouns
    left out, and the analyzer's stopwords: "where" asks for nothing by itself)."""
    spec = BY_NAME.get(key)
    texts = [key.replace("_", " "), *(spec.synonyms if spec else ()), *_QUESTION_CUES.get(key, ())]
    if key.startswith("favorite_"):
        # "Какой мой любимый цвет?", "我最喜欢的颜色是什么？" ask for favorite_color (FAVORITE_THINGS).
        texts += [word for word, what in FAVORITE_THINGS.items() if what == key.removeprefix("favorite_")]
        texts += ["любимый", "любимая", "любимое", "最喜欢", "最爱", *british_spellings(key.replace("_", " "))]
    # Not the single characters a Chinese word is also indexed by (年龄 → 年, 龄): 年 and 大 ask for no age.
    return frozenset(term for text in texts for term in analyze(text)
                     if not (len(term) == 1 and HAN_CHAR.match(term) and term != text)) - pronoun_terms()


# The events by which a message stated a key's value (new_value is what it said).
_STATED = (FactEvent.Action.CREATED, FactEvent.Action.CONFIRMED, FactEvent.Action.UPDATED, FactEvent.Action.REPLACED,
           FactEvent.Action.APPROVED, FactEvent.Action.EDITED)


@dataclass(frozen=True)
class Correction:
    """The active value of a key a message stated otherwise, and the message that states it."""

    message_id: int
    key: str
    value: str


def corrections_of(*, tenant_id: int, user_id: str, message_ids: list[int]) -> dict[int, Correction]:
    """For each of `message_ids` that stated a single-valued fact since replaced ("I live in Boston"
    after "I moved to Seattle"), the key's active value and the message that states it. A prompt shown
    the old statement without the new one reads it as current (the profile line says Seattle, the
    remembered turn Boston). Two indexed reads, none when no message stated a fact."""
    if not message_ids:
        return {}
    stated = list(FactEvent.objects.filter(tenant_id=tenant_id, user_id=user_id, source_message_id__in=message_ids,
                                           action__in=_STATED).exclude(new_value="")
                  .values_list("source_message_id", "key", "new_value"))
    if not stated:
        return {}
    current = {fact.key: fact for fact in UserProfile.objects.filter(
        tenant_id=tenant_id, user_id=user_id, key__in={key for _, key, _ in stated}, multi=False,
        status=UserProfile.Status.ACTIVE, source_message__isnull=False)}
    corrections: dict[int, Correction] = {}
    for message_id, key, value in stated:
        fact = current.get(key)
        if fact is not None and fact.source_message_id != message_id and fact.value_norm != value_norm(value):
            corrections.setdefault(message_id, Correction(fact.source_message_id, key, fact.value))
    return corrections


# A question about what a key held before: "where did I live before?", "what was my previous job?", "где я
# раньше жил?", "мой бывший работодатель", "我以前住在哪里？". The profile's active rows hold today's values only;
# the key's story (FactEvent) holds the ones a stated change replaced or a statement ended.
_ASKS_ABOUT_PAST = re.compile(
    r"\b(?:before|previous(?:ly)?|used to|earlier|former(?:ly)?|prior|old|past)\b"
    r"|(?<![а-яё])(?:раньше|прежде|до этого|бывш|прежн|прошл)"
    r"|以前|之前|原来|过去|曾经|从前|上一")
FORMER_VALUES_MAX = 3


def asks_about_past(query: str) -> bool:
    return bool(_ASKS_ABOUT_PAST.search(query.lower()))


@dataclass(frozen=True)
class FormerValue:
    """A value a key held until a statement replaced it ("I moved to Seattle") or ended it ("I quit Google")."""

    event_id: int
    key: str
    value: str
    until: datetime  # when that statement was said (a dated conversation's own time), else recorded


def former_values(*, tenant_id: int, user_id: str) -> dict[str, list[FormerValue]]:
    """Per key, the values it held before, newest first, at most FORMER_VALUES_MAX, none it holds now. A
    replacement counts, and an end the user stated; a client's or an editor's deletion does not (it says the
    value was wrong, not that it was once true). One indexed read of the history, one of the active values."""
    events = (FactEvent.objects.filter(tenant_id=tenant_id, user_id=user_id)
              .filter(Q(action=FactEvent.Action.REPLACED) | Q(action=FactEvent.Action.DELETED, meta__ended=True))
              .exclude(old_value="").order_by("-created_at", "-id")
              .values_list("pk", "key", "old_value", "created_at", "source_message__created_at")[:200])
    if not events:
        return {}
    held = {(key, value_norm(value)) for key, value in UserProfile.objects.filter(
        tenant_id=tenant_id, user_id=user_id, status=UserProfile.Status.ACTIVE).values_list("key", "value")}
    former: dict[str, list[FormerValue]] = {}
    for pk, key, value, recorded, said in events:
        norm = value_norm(value)
        values = former.setdefault(key, [])
        if (key, norm) in held or len(values) >= FORMER_VALUES_MAX or any(value_norm(v.value) == norm for v in values):
            continue
        values.append(FormerValue(pk, key, value, said or recorded))
    return {key: values for key, values in former.items() if values}


def fact_history(*, tenant_id: int, user_id: str, key: str) -> QuerySet[FactEvent]:
    return (FactEvent.objects.filter(tenant_id=tenant_id, user_id=user_id, key=key)
            .select_related("reviewer").order_by("-created_at", "-id"))


def profile_for_context(*, tenant_id: int, user_id: str) -> tuple[str, list[str]]:
    """The profile block for the prompt: (header, one line per key), or ("", []) when nothing is known.

    Only active facts at or above the confidence threshold: pending, rejected and decayed-below
    facts never reach a prompt. Multi-valued keys are joined on one line ("likes: jazz, tea").
    The header follows the user's language preference when it is known, English otherwise.
    """
    header, items = profile_context_items(tenant_id=tenant_id, user_id=user_id)
    return header, [line for _, line in items]


def profile_context_items(*, tenant_id: int, user_id: str) -> tuple[str, list[tuple[str, str]]]:
    """`profile_for_context` with each line's reference: `fact:<id>[,<id>…]`, the facts it shows,
    so a client told that a line was cut knows which facts were left out."""
    facts = _ordered(list(
        UserProfile.objects.filter(tenant_id=tenant_id, user_id=user_id, status=UserProfile.Status.ACTIVE,
                                   confidence__gte=confidence_threshold())
    ))
    if not facts:
        return "", []
    by_key: dict[str, list[UserProfile]] = {}
    for fact in facts:
        by_key.setdefault(fact.key, []).append(fact)
    items = [(f"fact:{','.join(str(f.pk) for f in group)}", f"{key}: {', '.join(f.value for f in group)}")
             for key, group in by_key.items()]
    language = by_key["language_preference"][0].value if "language_preference" in by_key else ""
    return CONTEXT_HEADERS.get(language, CONTEXT_HEADERS["en"]), items


# --- The review queue (the admin's dashboard) ---------------------------------------------------
REVIEW_DECISIONS = (FactEvent.Action.APPROVED, FactEvent.Action.EDITED, FactEvent.Action.REJECTED,
                    FactEvent.Action.REOPENED)


def review_pending() -> QuerySet[UserProfile]:
    return UserProfile.objects.filter(status=UserProfile.Status.PENDING)


def review_describe(fact: UserProfile) -> str:
    return f"{fact.user_id}: {fact.key} = {fact.value} ({fact.confidence:.2f})"


def review_decided_since(moment: datetime) -> list[Decision]:
    events = (FactEvent.objects.filter(created_at__gte=moment, action__in=REVIEW_DECISIONS)
              .order_by("-created_at", "-id")[:50])
    return [Decision(when=e.created_at, who=e.who,
                     what=f"fact {e.get_action_display().lower()}: {e.user_id} {e.key} = {e.new_value or e.old_value}")
            for e in events]
