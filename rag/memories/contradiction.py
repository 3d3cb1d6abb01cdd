"""Typed memories that a newer one contradicts (consolidation), by rules, en/ru/zh.

A companion that remembers "User: I love rock music." and later "User: I don't like rock music anymore."
put both in the prompt, and the model picked either. The newer statement wins: when consolidation writes a
memory about the same subject (same kind, the same object words) that says the opposite, or states a new
preference over the old one ("now prefers green tea to black tea"), the older memory is superseded: its
chunk leaves search and context (deleted through `chunks_delete`, whose log every cached index follows),
and its record is kept in the new memory's `meta.supersedes` (its id, text, kind, category, importance, when
it was said, and why), as the consolidation run's `result.superseded` lists it too.

Conservative on purpose, since a memory wrongly hidden is lost to the prompt:
- only statements of a state (FactsAboutUser, KeyFacts, SelfBeliefs, Objectives): past events happened
  each on its day, "I didn't go to the gym today" does not undo "I went to the gym yesterday";
- the same object words exactly (stems; the subject, sentiment verbs, negations and fillers set aside):
  "I don't like jazz anymore" leaves "I love rock music" alone, "My sister doesn't like rock" (another
  kind, and another person) too;
- polarity is the parity of negations ("not", "no longer", "больше не", "不再", "再也不"), verbs of the
  opposite feeling ("hate", "ненавижу", "讨厌") and of a past state ("used to", "раньше", "以前", "quit");
- a statement with a contrast ("but", "но", "但是") or a question says two things or none: never compared.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from memoryhub.text import analyze, normalize, words
from rag.memories.vocab import Category
from rag.models import Chunk, user_namespace

if TYPE_CHECKING:
    from rag.memories.services import MemoryInput

# What a later statement can change; an event, an emotion summary, a mood or small talk is of its moment.
STATE_CATEGORIES = frozenset({Category.FACTS_ABOUT_USER.value, Category.KEY_FACTS.value,
                              Category.SELF_BELIEFS.value, Category.OBJECTIVES.value})
# Held memories compared with one run's candidates, newest first: a user's memories of a character are few.
HELD_LIMIT = 500


def _set(*groups: str) -> frozenset[str]:
    return frozenset(w for group in groups for w in group.split())


_LABEL = re.compile(r"^[^\s:：|]{1,40}[:：]\s*")  # "User: …", "Anna: …" (rules keep who said it)
_NEGATIONS = _set(
    "not no never nor neither don't doesn't didn't isn't aren't wasn't weren't won't can't cannot couldn't "
    "wouldn't haven't hasn't hadn't ain't dont doesnt didnt isnt arent wasnt wont cant",
    "не нет ни никогда ничуть нисколько",
)
# A state that was and is no more: a negation and a change in one ("used to love", "раньше любил", "quit smoking").
_FORMERLY = _set("formerly quit stopped", "раньше прежде")
_FORMERLY_PREFIXES = ("перестал", "перестав", "бросил")
_NOW = _set("now nowadays", "теперь сейчас")
# Verbs and nouns of liking, and of its opposite: set aside from the object, their sign kept.
_LIKE_STEMS = frozenset(analyze("love like enjoy adore prefer fond fan favorite favourite keen"))
_DISLIKE_STEMS = frozenset(analyze("hate dislike detest loathe despise"))
_PREFER_STEMS = frozenset(analyze("prefer"))
_LIKE_PREFIXES = ("люб", "нрав", "обожа", "предпочит", "предпочта", "предпочел", "предпочла")
_DISLIKE_PREFIXES = ("ненавид", "ненавиж")
_PREFER_PREFIXES = ("предпочит", "предпочта", "предпочел", "предпочла")
# Neither object nor polarity: who the statement is about, the change words, the verbs of "can't stand",
# "терпеть не могу", and degree words the stopword list keeps.
_FILLERS = _set(
    "user users i me my mine myself i'm im i've i'd i'll anymore any more longer again still much lot big huge "
    "truly totally actually absolutely lately days stand used to",
    "пользователь пользователя пользователю я меня мне мной мой моя мое моё мои себя больше уже терпеть могу "
    "может сильно реально правда вообще совсем действительно прям просто",
)
_FILLER_TERMS = frozenset(t for w in _FILLERS for t in analyze(w))
_CONTRAST = _set("but however although though whereas yet", "но однако зато хотя")
_BE = _set("am i'm is are was were be been get got getting im")
# Chinese, read on the text before segmentation (jieba joins "不爱", "我生", "不想" into one word). Longest first;
# words that only look negative ("不错", "不过", "别人", "未来") are kept as they are.
_ZH = re.compile("|".join(f"(?P<{name}>{pattern})" for name, pattern in (
    ("keep", r"不错|不少|不久|不同|不断|不仅|不管|不但|不得不|差不多|没事|别人|别的|未来|可爱|恋爱|爱人|爱情|爱好"),
    ("contrast", r"但是|可是|不过|然而|但"),
    ("formerly", r"以前|曾经|过去|原来"),
    ("prefer", r"更喜欢|更爱|偏爱|宁愿|更倾向于?"),
    ("negation", r"不再|再也不|从来不|从不|从没有?|并不|没有|不|没|别|未"),
    ("dislike", r"讨厌|厌恶|受不了|反感|恨"),
    ("like", r"最喜欢|喜欢|喜爱|热爱|钟爱|爱"),
    ("now", r"现在|如今|目前"),
    ("filler", r"用户|我们|我|已经|再也|再|了|还是|依然|仍然|很|非常|特别|真的|真|也|都|还|挺|超级|太|比较|一直|的|对"),
)))


@dataclass(frozen=True)
class Statement:
    """What a memory's text says for this comparison: its object words, whether it denies them, whether it
    speaks of now, whether it states a liking or a preference, and whether it mixes two claims."""

    objects: frozenset[str]
    negative: bool
    now: bool = False
    likes: bool = False
    prefers: bool = False
    mixed: bool = False


@lru_cache(maxsize=4096)
def statement(text: str, subjects: frozenset[str] = frozenset()) -> Statement:
    """`subjects`: the stems of the names the memories of this user and character call their subjects by
    (the user's nickname, the character's), set aside like "user" and "I"."""
    said = normalize(_LABEL.sub("", text.strip(), count=1))
    flips = 0
    flags = {"now": False, "likes": False, "prefers": False, "mixed": said.endswith(("?", "？"))}

    def zh(match: re.Match[str]) -> str:
        nonlocal flips
        kind = match.lastgroup
        if kind == "keep":
            return f" {match.group()} "
        if kind in ("negation", "dislike", "formerly"):
            flips += 1
        flags["mixed"] |= kind == "contrast"
        flags["now"] |= kind == "now"
        flags["likes"] |= kind in ("like", "prefer")
        flags["prefers"] |= kind == "prefer"
        return " "

    said = _ZH.sub(zh, said)
    tokens = words(said)
    objects: set[str] = set()
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token in _CONTRAST:
            flags["mixed"] = True
        elif token in _NEGATIONS or token in _FORMERLY or token.startswith(_FORMERLY_PREFIXES) or (
                token == "used" and following == "to" and not (i and tokens[i - 1] in _BE)):
            flips += 1
        elif token in _NOW:
            flags["now"] = True
        else:
            stem = next(iter(analyze(token)), "")
            if stem in _DISLIKE_STEMS or token.startswith(_DISLIKE_PREFIXES):
                flips += 1
            elif stem in _LIKE_STEMS or token.startswith(_LIKE_PREFIXES):
                flags["likes"] = True
                flags["prefers"] |= stem in _PREFER_STEMS or token.startswith(_PREFER_PREFIXES)
            elif stem and token not in _FILLERS and stem not in _FILLER_TERMS and stem not in subjects:
                objects.add(stem)
    return Statement(frozenset(objects), bool(flips % 2), **flags)


def subject_terms(names: Iterable[str]) -> frozenset[str]:
    return frozenset(t for name in names if name for t in analyze(name))


def supersedes(newer: Statement, older: Statement) -> str:
    """Why the newer statement replaces the older one, or "" when both stand."""
    if newer.mixed or older.mixed or not newer.objects or not older.objects:
        return ""
    if newer.objects == older.objects and newer.negative != older.negative:
        return "says the opposite"
    # "now prefers coffee to tea" after "prefers tea": the new preference names the old one's object.
    if (newer.now and newer.prefers and older.likes and not newer.negative and not older.negative
            and newer.objects > older.objects):
        return "states a new preference"
    return ""


# --- A consolidation's plan -----------------------------------------------------------------------
@dataclass(frozen=True)
class Held:
    """A memory already held that a candidate may contradict."""

    chunk_id: int
    memory_uid: str
    text: str
    kind: str
    said_at: datetime


@dataclass
class Plan:
    """Per candidate (its index in the run's list): the held memories it supersedes, the older candidates
    of the same run it supersedes, or the newer held memory that supersedes it (then it is not written)."""

    held: dict[int, list[tuple[Held, str]]] = field(default_factory=dict)
    candidates: dict[int, list[tuple[int, str]]] = field(default_factory=dict)
    outdated: dict[int, tuple[Held, str]] = field(default_factory=dict)
    dropped: set[int] = field(default_factory=set)  # outdated, or superseded by a newer candidate


def held_memories(*, tenant_id: int, user_id: str, conf_uid: str, items: Sequence[MemoryInput],
                  subjects: frozenset[str]) -> list[Held]:
    """The user's memories of the character that could contradict one of `items`: of a state category and
    an item's kind, sharing an object word (an overlap of the chunks' own BM25 terms). Reads only."""
    kinds = {item.kind for item in items if item.category in STATE_CATEGORIES}
    objects = {t for item in items if item.category in STATE_CATEGORIES for t in statement(item.text, subjects).objects}
    if not kinds or not objects:
        return []
    rows = (Chunk.objects.filter(tenant_id=tenant_id, namespace=user_namespace(user_id), type=Chunk.Type.MEMORY,
                                 conf_uid=conf_uid, kind__in=sorted(kinds), category__in=sorted(STATE_CATEGORIES),
                                 terms__overlap=sorted(objects))
            .order_by("-created_ts", "-id").values_list("id", "memory_uid", "text", "kind", "created_ts")[:HELD_LIMIT])
    return [Held(pk, str(uid), text, kind, said_at) for pk, uid, text, kind, said_at in rows]


def repeats(text: str, held_text: str, subjects: frozenset[str] = frozenset()) -> bool:
    """Whether a near-duplicate by its vector may count as a repeat of a held memory: not when one denies what
    the other states ("我姐姐不喜欢爵士乐" is no repeat of "我喜欢爵士乐", however close their vectors)."""
    mine, theirs = statement(text, subjects), statement(held_text, subjects)
    return mine.mixed or theirs.mixed or mine.negative == theirs.negative


def contradicted(item: MemoryInput, held: Sequence[Held], subjects: frozenset[str]) -> set[int]:
    """The held memories that `item` and they cannot both be true: a near-duplicate among them is no repeat."""
    if item.category not in STATE_CATEGORIES:
        return set()
    mine = statement(item.text, subjects)
    return {h.chunk_id for h in held if h.kind == item.kind
            and (supersedes(mine, statement(h.text, subjects)) or supersedes(statement(h.text, subjects), mine))}


def plan(items: Sequence[MemoryInput], written: Iterable[int], held: Sequence[Held],
         subjects: frozenset[str]) -> Plan:
    """Which of the `written` candidates (indices into `items`) supersede what, newest first: a held memory
    goes to the newest candidate that contradicts it; a candidate said before a held memory that contradicts
    it, or before a candidate of the run that does, is history from the start."""
    out = Plan()
    said = {i: items[i].occurred_at for i in written if items[i].category in STATE_CATEGORIES}
    # Newest first; a candidate without a date was said now. Ties by the order the consolidator listed them.
    order = sorted(said, key=lambda i: (said[i].timestamp() if said[i] else float("inf"), i), reverse=True)
    taken: set[int] = set()
    for position, i in enumerate(order):
        if i in out.dropped:
            continue
        mine = statement(items[i].text, subjects)
        for h in held:
            if h.kind != items[i].kind or h.chunk_id in taken:
                continue
            if said[i] is not None and h.said_at > said[i]:
                reason = supersedes(statement(h.text, subjects), mine)
                if reason:
                    out.outdated[i] = (h, reason)
                    out.dropped.add(i)
                    break
            elif reason := supersedes(mine, statement(h.text, subjects)):
                out.held.setdefault(i, []).append((h, reason))
                taken.add(h.chunk_id)
        if i in out.dropped:
            out.held.pop(i, None)
            continue
        for j in order[position + 1:]:
            if j in out.dropped or items[j].kind != items[i].kind:
                continue
            if reason := supersedes(mine, statement(items[j].text, subjects)):
                out.candidates.setdefault(i, []).append((j, reason))
                out.dropped.add(j)
    return out


def record(*, memory_uid: str | None, text: str, kind: str, category: str, importance: float, said_at: Any,
           reason: str, by_uid: str, by_text: str, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """The superseded memory as the superseding one keeps it: enough to show, restore or audit it."""
    entry: dict[str, Any] = {
        "memory_id": memory_uid, "text": text, "kind": kind, "category": category, "importance": importance,
        "said_at": said_at.isoformat() if isinstance(said_at, datetime) else said_at,
        "superseded_by": by_uid, "reason": f"superseded by “{by_text}”: {reason}",
    }
    for key in ("source_message_ids", "supersedes"):  # its evidence, and what it had superseded itself
        if meta and meta.get(key):
            entry[key] = meta[key]
    return entry
