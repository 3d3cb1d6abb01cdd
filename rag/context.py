"""Context assembly: the blocks the next prompt needs, packed into a token budget.

Blocks are packed in the order of `config/prompt_budgets.yaml`; each may take up to its share of
the budget and never more than what is left. What is still unused at the end (memories take the rest,
so only when there were too few of them) goes back to the blocks that cut items for budget: the inner
circle, the profile and the relevant people, in that order (not the recent turns: a turn they cut may be
among the memories already). Whatever does not fit is reported as cut, with its reason, so a client can
see what the model will not see.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import date
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

import yaml
from django.conf import settings
from django.utils import timezone

from memoryhub import text, timeexpr
from memoryhub.dates import dated_as_said, without_dates
from memoryhub.embeddings import cosine_floor
from memoryhub.models import Message
from memoryhub.selectors import session_recent_messages_by_ids
from memoryhub.sensitive import redact
from memoryhub.validation import iso_instant
from people.selectors import (
    circle_topic_terms,
    full_name_terms,
    inner_circle_context_items,
    relation_name_terms,
    relevant_people_context_items,
)
from profiles.selectors import asks_about_past, corrections_of, former_values, key_terms, profile_context_items
from rag.chunk_cache import chunk_matches
from rag.filler import is_filler
from rag.memories.context import typed_memories_block
from rag.models import Chunk
from rag.selectors import SearchFilters, SearchItem, SearchResult, chunks_search, turn_chunks

# The same lines (a chunk's memory line, a person's, a fact's) come back request after request,
# and estimating tokens scans every character: ~25 counts were ~7% of a context's CPU in process.
count_tokens = lru_cache(maxsize=4096)(text.count_tokens)


@dataclass
class BlockItem:
    text: str
    tokens: int
    ref: str
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class Block:
    name: str
    items: list[BlockItem] = field(default_factory=list)
    cut: list[dict[str, Any]] = field(default_factory=list)
    header: str = ""
    # Candidates cut for budget alone, and every candidate's rank: what a top-up may still add, and where.
    waiting: list[BlockItem] = field(default_factory=list)
    rank: dict[str, int] = field(default_factory=dict)

    @property
    def tokens(self) -> int:
        header = count_tokens(self.header) if self.header and self.items else 0
        return header + sum(i.tokens for i in self.items)

    def render(self) -> str:
        if not self.items:
            return ""
        body = "\n".join([*([self.header] if self.header else []), *(i.text for i in self.items)])
        return f"<{self.name}>\n{body}\n</{self.name}>"


@dataclass
class Context:
    budget: int
    blocks: list[Block]

    @property
    def used(self) -> int:
        return sum(b.tokens for b in self.blocks)

    def render(self) -> str:
        return "\n\n".join(r for r in (b.render() for b in self.blocks) if r)


@cache
def budgets() -> dict[str, Any]:
    path = Path(getattr(settings, "PROMPT_BUDGETS_CONFIG", settings.BASE_DIR / "config" / "prompt_budgets.yaml"))
    return yaml.safe_load(path.read_text())


def _share(spec: dict[str, Any], budget: int) -> int:
    """A block's cap: its share of the budget, and at least its `min_tokens` (the profile's header alone
    is 12 tokens: 15% of a 50-token budget held none of it, and a turn took the whole context)."""
    return max(int(budget * spec["max_share"]), int(spec.get("min_tokens", 0)))


def _fmt_time(item_time: Any) -> str:
    # isoformat, not strftime("%Y"): glibc writes year 1 as "1", and the line read "[1-01-05 00:00]".
    return f"{item_time.date().isoformat()} {item_time:%H:%M}" if item_time else ""


def _turn_line(message: Message) -> str:
    text = redact(message.text, where="context")
    speaker = redact(message.speaker, where="context") if message.speaker else message.role
    return f"[{_fmt_time(message.created_at)}] {speaker}: {text}"


def _memory_line(item: SearchItem, dated: bool = False) -> str:
    """A remembered chunk's line, without its day: the memories block shows each day once, as a
    header over that day's lines (`_pack_by_day`). `dated`: a turn's relative dates are followed by the
    days they meant when it was said (`_asks_for_dates`)."""
    chunk = item.chunk
    if chunk["type"] != "dialog":
        return _line(chunk["text"])
    return _line(dated_as_said(chunk["text"], chunk["created_ts"]) if dated else chunk["text"],
                 chunk["speaker"] or chunk["role"])


def _asks_for_dates(query: str) -> bool:
    """Whether the question asks when, or how long ago: then a remembered "I went to a support group yesterday"
    reads "yesterday (2023-05-07)", and the model asked "When did Caroline go?" need not count back from the
    day header. Other questions keep the turn as said: the dates cost tokens (about five each) that at a
    200-token budget are a turn's room (docs/retrieval.md, "Relative dates in a remembered turn")."""
    return timeexpr.asks_when(query) or timeexpr.asks_how_long(query)


def _line(text: str, who: str = "") -> str:
    return f"- {who}: {text}" if who else f"- {text}"


def _day(item: SearchItem) -> str:
    # The day, not the minute: a remembered turn's time of day rarely matters. ISO, so that days sort.
    return item.chunk["created_ts"].date().isoformat() if item.chunk["created_ts"] else ""


_MONTH_ABBREVIATIONS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


@lru_cache(maxsize=1024)
def _day_header(day: str) -> str:
    """"8 May 2023:" for 2023-05-08: about 5 tokens where "[2023-05-08]" costs 8, which at a 200-token
    budget is more often the room for one more turn (docs/retrieval.md). Not locale-dependent."""
    return f"{_short_date(date.fromisoformat(day))}:"


def _short_date(day: date) -> str:
    return f"{day.day} {_MONTH_ABBREVIATIONS[day.month - 1]} {day.year}"


# The cut reason of a line packed only with another (`_pack_by_day`), by the meta key naming that other.
_WITHOUT = {"reply_to": "without_its_turn", "answered_by": "without_its_answer",
            "corrects": "without_what_it_corrects"}


def _pack_by_day(block: Block, candidates: list[BlockItem], cap: int) -> int:
    """Pack in rank order like `_pack`, but a day's header is paid once, by its first line; then
    show the lines day by day in time order, each day under its header. A date costs ~5 tokens:
    on every line it was a turn less at a 200-token budget (docs/retrieval.md)."""
    used = 0
    days: set[str] = set()
    for item in candidates:
        pair = next((key for key in _WITHOUT if key in item.meta), None)
        if pair is not None and not any(i.ref == item.meta[pair] for i in block.items):
            # A reaction without the turn it answers ("That makes me so happy, Alex.") tells the model
            # nothing, and read as a memory of its own, something wrong; so does a question fetched for
            # its answer without it (`_with_turns_answered`), or a correction of a line not shown.
            block.cut.append({"ref": item.ref, "tokens": item.tokens, "reason": _WITHOUT[pair]})
            continue
        day = item.meta["day"]
        header = count_tokens(_day_header(day)) if day and day not in days else 0
        if used + item.tokens + header > cap:
            block.cut.append({"ref": item.ref, "tokens": item.tokens, "reason": "budget"})
            continue
        block.items.append(item)
        days.add(day)
        used += item.tokens + header
    first = next((i for i in candidates if not (_WITHOUT.keys() & i.meta.keys())), None)
    header = count_tokens(_day_header(first.meta["day"])) if first and first.meta["day"] else 0
    if not block.items and first is not None and cap - header >= MIN_MEMORY_CLIP_TOKENS:
        # Nothing whole fits (a small budget, long turns): the best memory's beginning, not an empty block.
        block.cut = [c for c in block.cut if c["ref"] != first.ref]
        block.items.append(_turn_within(first, cap - header, block))
        used = block.items[0].tokens + header
    # Turns of one batch sent without times share their arrival time: the chunk id, given in the
    # order the turns were said, keeps a reply after its question.
    ordered = sorted(block.items, key=lambda i: (i.meta["day"], i.meta["at"], int(i.ref.partition(":")[2])))
    block.items = []
    for i, item in enumerate(ordered):
        day = item.meta["day"]
        if day and (i == 0 or ordered[i - 1].meta["day"] != day):
            header = _day_header(day)
            item = BlockItem(f"{header}\n{item.text}", item.tokens + count_tokens(header), item.ref, item.meta)
        block.items.append(item)
    return used


def _pack(block: Block, candidates: list[BlockItem], cap: int, max_items: int | None = None,
          contiguous: bool = False) -> int:
    """Add candidates in order while they fit; return the tokens used. `contiguous`: stop at the first
    that does not fit (the recent turns: a short turn from further back after a gap, "hello again"
    before "Thanks!", reads to the model as the last thing said)."""
    used = 0
    full = False
    for item in candidates:
        block.rank.setdefault(item.ref, len(block.rank))
        if max_items is not None and len(block.items) >= max_items:
            block.cut.append({"ref": item.ref, "tokens": item.tokens, "reason": "max_items"})
        elif full or used + item.tokens > cap:
            block.cut.append({"ref": item.ref, "tokens": item.tokens, "reason": "budget"})
            block.waiting.append(item)
            full = contiguous
        else:
            block.items.append(item)
            used += item.tokens
    return used


_SENTENCE_END = re.compile(r"(?<=[.!?…])\s+|(?<=[。！？])")


def _clipped(item: BlockItem, room: int, query: str = "") -> BlockItem | None:
    """A person's line (`[Person:3] Daniel | Family | 7 mentions | bio`) with the sentences of its bio that
    fit `room`: the first (who they are to the user), then those that say words of the query, then the
    newest, shown in the bio's order, a gap and a cut end marked with an ellipsis; where not even the first
    sentence fits, its beginning (`_beginning`). A bio gathers what is said of someone in the order said: its
    first sentences alone showed "My sister Anna lives in Denver" long after "Anna moved to Chicago"."""
    parts = item.text.split(" | ", 3)
    if len(parts) < 4:
        return None
    sentences = [s for s in _SENTENCE_END.split(parts[3]) if s]
    if len(sentences) < 2:
        return _beginning(item, parts, room)
    wanted = set(text.analyze(query))
    shared = {i: len(wanted & set(text.analyze(sentences[i]))) for i in range(1, len(sentences))}
    asked = sorted((i for i in shared if shared[i]), key=lambda i: -shared[i])
    order = [0, *asked, *(i for i in range(len(sentences) - 1, 0, -1) if i not in asked)]
    best = None
    chosen: list[int] = []
    for i in order:
        trial = sorted([*chosen, i])
        if len(trial) == len(sentences):
            break  # all of it is the whole line, which did not fit
        shown = []
        for n, j in enumerate(trial):
            if n and j != trial[n - 1] + 1:
                shown.append("…")
            shown.append(sentences[j])
        if trial[-1] != len(sentences) - 1:
            shown.append("…")
        line = " | ".join([*parts[:3], text.join_sentences(shown)])
        tokens = count_tokens(line)
        if tokens > room:
            if not chosen:
                return _beginning(item, parts, room)
            continue  # a shorter one further down the order may still fit
        chosen = trial
        best = BlockItem(line, tokens, item.ref, {**item.meta, "clipped": True})
    return best


# The least of a bio a clipped person's line shows: fewer words say nothing the name and circle do not.
MIN_BIO_TOKENS = 6


def _beginning(item: BlockItem, parts: list[str], room: int) -> BlockItem | None:
    """The person's line with the beginning of a bio whose first sentence does not fit `room`, cut at a word
    and marked with an ellipsis, else the name, circle and mentions alone; None when not even those fit. QA:
    at 150 tokens the inner circle's friend, whose bio was one 54-token sentence, left the prompt altogether."""
    header = " | ".join(parts[:3])
    if count_tokens(header) > room:
        return None
    shown = header
    if count_tokens(header) + MIN_BIO_TOKENS < room:
        head = _head(item.text, room)
        if count_tokens(head) - count_tokens(header) >= MIN_BIO_TOKENS:
            shown = head
    return BlockItem(shown, count_tokens(shown), item.ref, {**item.meta, "clipped": True})


# The least room a clipped recent turn gets: its time, speaker and a sentence or two.
MIN_TURN_TOKENS = 48
# A context searches this many results at least (the API's `k` before it scaled with the budget) and at most.
MIN_RESULTS, MAX_RESULTS = 20, 100
# The least room in which the memories block shows the beginning of a memory too long for all of it.
MIN_MEMORY_CLIP_TOKENS = 16


def _head(line: str, room: int) -> str:
    """The longest beginning of `line` that fits `room` tokens with an ellipsis, cut at a space."""
    low, high = 0, len(line)
    while low < high:  # the longest prefix within room, by bisection: a line may be 16,000 characters
        middle = (low + high + 1) // 2
        if count_tokens(line[:middle] + " …") <= room:
            low = middle
        else:
            high = middle - 1
    head = line[:low]
    if " " in head[len(head) * 4 // 5:]:  # at a word's end, unless the text has no spaces (Chinese)
        head = head[:head.rindex(" ")]
    return f"{head.rstrip()} …"


def _turn_within(item: BlockItem, room: int, block: Block) -> BlockItem:
    """The turn's line, or, longer than `room` tokens, its longest beginning that fits, cut at a space
    and marked with an ellipsis (the cut is noted in the block, as a clipped bio's is)."""
    if item.tokens <= room:
        return item
    text = _head(item.text, room)
    clipped = BlockItem(text, count_tokens(text), item.ref, {**item.meta, "clipped": True})
    block.cut.append({"ref": item.ref, "tokens": item.tokens - clipped.tokens, "reason": "clipped"})
    return clipped


def _pack_clipping(block: Block, candidates: list[BlockItem], cap: int, query: str = "") -> int:
    """`_pack` for people's lines: one too long for what is left shows the sentences of its bio that fit
    (`_clipped`) rather than none of it. The inner circle is ranked (family first, those the query names first): a
    partner whose bio had grown past the share gave way to a former boss with a short one. The whole
    line waits for budget left over at the end (`_top_up`)."""
    used = 0
    for item in candidates:
        block.rank.setdefault(item.ref, len(block.rank))
        if used + item.tokens <= cap:
            block.items.append(item)
            used += item.tokens
            continue
        block.waiting.append(item)
        clipped = _clipped(item, cap - used, query)
        if clipped is None:
            block.cut.append({"ref": item.ref, "tokens": item.tokens, "reason": "budget"})
        else:
            block.items.append(clipped)
            used += clipped.tokens
            block.cut.append({"ref": item.ref, "tokens": item.tokens - clipped.tokens, "reason": "clipped"})
    return used


def context_assemble(
    *,
    tenant_id: int,
    user_id: str,
    query: str,
    session_id: str | None,
    budget_tokens: int | None = None,
    k: int | None = None,
    memory_filters: SearchFilters | None = None,
) -> Context:
    config = budgets()
    floor = config["relevance_floor"]
    budget = budget_tokens or int(config["default_budget_tokens"])
    # The results searched: as many as the budget could show (`results_per_tokens`), 20 to 100.
    k = k or min(MAX_RESULTS, max(MIN_RESULTS, budget // int(config["results_per_tokens"])))
    asked = frozenset(text.analyze(query))  # the query's terms, for every step that weighs lines by them
    dated = _asks_for_dates(query)
    shares = config["blocks"]
    remaining = budget
    blocks: list[Block] = []

    # Who the user is: active profile facts above the confidence threshold, always first.
    header, lines = profile_context_items(tenant_id=tenant_id, user_id=user_id)
    if asks_about_past(query):
        lines = _with_former_values(lines, asked, tenant_id=tenant_id, user_id=user_id)
    scored = _relevance(lines, asked, asks=lambda line: key_terms(_profile_key(line)))
    block = Block("profile", header=header)
    cap = min(remaining, _share(shares["profile"], budget)) - count_tokens(header)
    asked_facts = frozenset(ref for (ref, _), shared in scored if shared)
    if scored and scored[0][1]:
        # Facts the query does not ask for get the block's share, not its floor (`min_tokens`, which keeps a
        # line or two where the share holds none): at 50 tokens four facts "what's my sister's name?" needed
        # none of took the room of the sister. They wait for what is left at the end (`_top_up`).
        used = _pack(block, _lines([line for line, shared in scored if shared]), cap)
        share = int(budget * shares["profile"]["max_share"]) - count_tokens(header)
        _pack(block, _lines([line for line, shared in scored if not shared]), min(cap, share) - used)
    else:
        _pack(block, _lines([line for line, _ in scored]), cap)
    remaining -= block.tokens
    blocks.append(block)
    profile = block

    # The inner circle (Family, Work_Inner) always reaches the prompt, with full bios; those the query
    # speaks of first ("a gift for my wife" keeps the wife when the share holds one line).
    block = Block("inner_circle")
    # And those it names by how they relate to the user: "What is my sister's name?" says no word of "Маша |
    # Family | …на выходных мы с сестрой Машей…", and at 150 tokens the colleague came first and the sister not.
    # And by a diminutive of their first name: "Когда у Тимохи плавание?" asks about Тимофей.
    related = frozenset(relation_name_terms(tenant_id=tenant_id, user_id=user_id, query=query)) | \
        full_name_terms(query)
    # And those of the part of life it asks about: "Где я работаю?" names no one, but asks about the boss before
    # the daughter (`circle_topic_terms`; at 120 tokens the daughter alone was shown).
    lines = _by_relevance(inner_circle_context_items(tenant_id=tenant_id, user_id=user_id),
                          _whole_words(asked) | related, asks=lambda line: circle_topic_terms(_circle_of(line)))
    if named := _whole_words(asked) | related:
        # The one so named before those whose bio merely mentions them: "我老公是做什么的？" put the daughter first,
        # her bio saying "我老公张伟是医生" as his does, and at 150 tokens the husband's line was not shown; "Что
        # случилось с Пашей?" put his wife Лена first, her bio saying "Ленин муж Паша попал в аварию".
        lines.sort(key=lambda line: not named & _name_terms(line[1]))
    remaining -= _pack_clipping(block, _lines(lines), min(remaining, _share(shares["inner_circle"], budget)), query)
    blocks.append(block)
    circle = block
    # The facts the query asks for that the profile's share could not hold, before the turns and memories: "Где я
    # раньше жила?" at 150 tokens showed the husband's whole bio, and the answer, "former location: Екатеринбург",
    # stayed cut. A fact is one short line, a distilled answer; the inner circle keeps its floor (`min_tokens`).
    remaining -= _take_waiting(profile, asked_facts, remaining)

    # Recent turns of this session: short-term memory, the newest that fit without a gap, shown oldest first.
    recent_ids: set[int] = set()
    spec = shares["recent_turns"]
    block = Block("recent_turns")
    messages = session_recent_messages_by_ids(tenant_id=tenant_id, user_id=user_id, session_id=session_id,
                                              limit=settings.SESSION_RECENT_MAX) if session_id else []
    if messages:
        cap = min(remaining, int(budget * spec["max_share"]))
        # A turn longer than the whole share shows its beginning, in half of it: one pasted text (an
        # itinerary, a letter) was cut whole, and with it, the block being contiguous, every turn
        # before it. Shorter turns are whole or not at all, as before.
        candidates = [BlockItem(_turn_line(m), count_tokens(_turn_line(m)), f"message:{m.pk}",
                                {"at": iso_instant(m.created_at) or ""}) for m in reversed(messages)]
        if cap // 2 >= MIN_TURN_TOKENS:  # at a tiny budget a few words of a turn say nothing
            candidates = [_turn_within(c, cap // 2, block) if c.tokens > cap else c for c in candidates]
        remaining -= _pack(block, candidates, cap, spec.get("max_items"), contiguous=True)
        block.items.reverse()
        recent_ids = {int(i.ref.split(":")[1]) for i in block.items}
    blocks.append(block)

    # Retrieved memories, best first: searched before the typed memories are packed, so that a
    # typed memory that only restates a turn this block shows in full does not take budget twice.
    result = chunks_search(tenant_id=tenant_id, user_id=user_id, query=query, k=k)
    # The query's days, weeks and months, and the results' stored terms (read once, when a check needs them).
    period, stored = _period_terms(query), _conversation_rows(result)
    outside, best_share = _outside_period(query, period, stored), _best_share(result)
    relevant = RelevanceFloor(cosine_floor(floor["vector_only_min_cosine"]), floor.get("memories_bm25_share", 0.0),
                              result.bm25_ceiling, _found_by_characters(result, query, period, stored), outside,
                              floor["outside_period_bm25_share"] * best_share if outside else 0.0)
    typed_cap = min(remaining, int(budget * shares.get("typed_memories", {"max_share": 0.0})["max_share"]))
    block, typed_ids, typed_sources = typed_memories_block(
        tenant_id=tenant_id, user_id=user_id, query=query, cap=typed_cap, k=k, filters=memory_filters,
        shown_messages=_turns_that_fit(result.items, remaining - typed_cap, recent_ids, relevant, dated),
        min_bm25_share=max(floor["typed_memories_bm25_share"] * best_share,
                           _weakest_displaced(result, remaining, typed_cap, recent_ids, relevant, dated)),
        min_cosine=relevant.min_cosine, min_share=relevant.min_share, dated=dated)
    remaining -= block.tokens
    blocks.append(block)
    typed_block, typed_restate = block, set().union(*typed_sources.values())
    # The typed memories' floor is their own (a share of the best result's share): one it left out must not
    # come back through the memories block's lower floor, which showed what the response said it cut.
    typed_below = {cut["ref"] for cut in block.cut if cut["reason"] == "below_floor"}

    # Turns already shown as recent are not repeated.
    block = Block("memories")
    typed_wanted = replace(memory_filters, types=("memory",)) if memory_filters else None
    candidates = []
    turn_of: dict[str, int] = {}  # a dialog line's message
    answered: dict[str, tuple[int, str]] = {}  # an assistant's reply's line: the message it answers, its text
    sources_of: dict[str, frozenset[int]] = {}  # the turns a consolidated memory or insight restates
    in_circle: set[int] = set()  # the turns an inner-circle bio shows word for word
    said_of: dict[str, str] = {}  # a dialog line's turn's text
    for item in result.items:
        if item.chunk["id"] in typed_ids:
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "in_typed_memories"})
            continue
        if typed_wanted and item.chunk["type"] == "memory" and not chunk_matches(item.chunk, typed_wanted):
            # The filters name the typed memories this context may show (another character's are
            # not this one's to tell): none of the others comes in through this block.
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "memory_filters"})
            continue
        if item.chunk["meta"].get("message_id") in recent_ids:
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "in_recent_turns"})
            continue
        if item.chunk["type"] == "dialog" and (grown := _quoted_by(circle, item, remaining, dated)) is not None:
            # A bio gathers what the user said of someone, word for word: the turn is shown there (its line
            # made whole if it was clipped, for no more than the memory's own line would have cost).
            remaining -= grown
            in_circle.add(item.chunk["meta"].get("message_id"))
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "in_inner_circle"})
            continue
        if relevant.below(item) or f"chunk:{item.chunk['id']}" in typed_below:
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "below_floor"})
            continue
        if item.chunk["type"] == "dialog" and is_filler(item.chunk["text"]):
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "filler"})
            continue
        if "echo" in item.components and _asked_again(item.chunk["text"], asked):
            # The query asked before ("when is my dentist appointment?" last week): the asking is no memory,
            # the answer is (the turn after it keeps the lift the question gave it). Only a question all of
            # whose words the query says: one that shares half of them may be what the query asks about.
            block.cut.append({"ref": f"chunk:{item.chunk['id']}", "tokens": 0, "reason": "asked_before"})
            continue
        line, ref = _memory_line(item, dated), f"chunk:{item.chunk['id']}"
        candidates.append(BlockItem(line, count_tokens(line), ref,
                                    {"score": round(item.score, 6), "type": item.chunk["type"], "day": _day(item),
                                     "at": iso_instant(item.chunk["created_ts"]) or "",
                                     **({"role": item.chunk["role"]} if item.chunk["type"] == "dialog" else {})}))
        if item.chunk["type"] == "dialog" and item.chunk["meta"].get("message_id") is not None:
            turn_of[ref] = item.chunk["meta"]["message_id"]
            said_of[ref] = item.chunk["text"]
            if item.chunk["role"] == "assistant" and item.chunk["meta"].get("context_message_ids"):
                answered[ref] = (item.chunk["meta"]["context_message_ids"][-1], item.chunk["text"])
        elif item.chunk["meta"].get("source_message_ids"):
            sources_of[ref] = frozenset(item.chunk["meta"]["source_message_ids"])
    # Other people relevant to this query, beside the memories that mention them. Their share is
    # reserved before the memories are packed, so memories cannot crowd them out.
    people_cap = min(remaining, int(budget * shares["relevant_people"]["max_share"]))
    people = Block("relevant_people")
    people_candidates = _lines(relevant_people_context_items(tenant_id=tenant_id, user_id=user_id, query=query))
    # Someone the query names by name may take more than the share, before the memories: "Who is Priyanka?" at 150
    # tokens cut her line (26 tokens against a share of 22) and gave the room to unasked inner-circle bios. The turn
    # her line quotes is then said there, not again as a memory.
    named_people = [i for i in people_candidates if _names(query, asked, i.text)]
    people_used = _pack(people, named_people, remaining)
    people_used += _pack(people, [i for i in people_candidates if i not in named_people], people_cap - people_used)
    cap = min(remaining - people_used, int(budget * shares["memories"]["max_share"]))
    candidates = _with_corrections(block, candidates, turn_of, sources_of, recent_ids, typed_restate, asked,
                                   tenant_id=tenant_id, user_id=user_id, dated=dated)
    candidates = _with_turns_answered(block, candidates, turn_of, answered, recent_ids, asked, in_circle,
                                      tenant_id=tenant_id, user_id=user_id, dated=dated)
    # A turn a shown typed memory restates counts as said: an insight summing it up adds nothing. After the
    # turns the replies bring: "My colleague Petrov and I…", fetched for the assistant's reply to it, came
    # with the memory and the insight that restate it, three times in 150 tokens.
    # A turn an inner-circle bio quotes is said there, and so are the query's words the bios say: "Where do I
    # live?" showed the insight of the user's introduction and of their daughter's turn, one in Anna's bio.
    candidates = _without_restatements(block, candidates, cap, turn_of, sources_of,
                                       recent_ids | typed_restate | in_circle, asked,
                                       asked.intersection(text.analyze(" ".join(i.text for i in circle.items))))
    # A turn a relevant person's line shows word for word is said there ("我闺蜜林晓下周结婚。" twice in 150 tokens).
    quoted = _quoted(people, candidates, said_of)
    block.cut += [{"ref": i.ref, "tokens": 0, "reason": "in_relevant_people"} for i in candidates if i.ref in quoted]
    remaining -= _pack_by_day(block, [i for i in candidates if i.ref not in quoted], cap)
    remaining += _without_turns_shown(typed_block, typed_sources, recent_ids | {
        turn_of[i.ref] for i in block.items if i.ref in turn_of and not i.meta.get("clipped")})
    blocks.extend([block, people])
    context = Context(budget=budget, blocks=blocks)
    # Older recent turns last, and not one the memories already show: those lines say it.
    said = {f"message:{turn_of[i.ref]}" for i in block.items if i.ref in turn_of}
    _top_up(context, ("inner_circle", "profile", "relevant_people", "recent_turns"), contiguous={"recent_turns"},
            shown=said, clipping=frozenset({"inner_circle"}))
    _without_quoted(block, (circle, people), said_of)
    return context


def _with_former_values(lines: list[tuple[str, str]], asked: frozenset[str], *, tenant_id: int,
                        user_id: str) -> list[tuple[str, str]]:
    """The profile's lines with, after the line of each key a question about the past asks for, the values it
    held before ("former location: Boston (until 1 Jun 2024)", referenced by its history event): "where did I
    live before?" is answered by the key's story, which the active facts ("location: Seattle") no longer hold,
    and the turn that said "I live in Boston" may share no word with it ("где я раньше жил?" and "живу" stem
    apart). A line of its own, so that a small budget keeps today's value and cuts the history first."""
    former = {key: values for key, values in former_values(tenant_id=tenant_id, user_id=user_id).items()
              if asked & key_terms(key)}
    if not former:
        return lines

    def line(key: str) -> tuple[str, str]:
        values = "; ".join(f"{v.value} (until {_short_date(v.until.date())})" for v in former[key])
        return f"event:{former[key][0].event_id}", f"{FORMER}{key}: {values}"

    shown: list[tuple[str, str]] = []
    for ref, line_text in lines:
        shown.append((ref, line_text))
        if (key := _profile_key(line_text)) in former:
            shown.append(line(key))
            del former[key]
    return shown + [line(key) for key in former]  # keys that hold nothing now: a job the user quit


FORMER = "former "


def _profile_key(line: str) -> str:
    return line.partition(":")[0].removeprefix(FORMER)


def _person_name(line: str) -> str:
    """The name of a person's context line (`[Person:42] Петров | Work_Inner | …`)."""
    return line.split(" | ", 1)[0].partition("] ")[2]


@lru_cache(maxsize=4096)
def _name_terms(line: str) -> frozenset[str]:
    """The terms of the name of a person's context line: a Chinese name's whole word, not its characters (张伟's
    张 is no word of 张明's)."""
    name = _person_name(line)
    return frozenset(t for t in text.analyze(name) if not (len(t) == 1 and text.HAN_CHAR.match(t) and t != name))


def _names(query: str, asked: frozenset[str], line: str) -> bool:
    """Whether the query says the name of a person's context line: one of its words, or, in Chinese, the name
    anywhere in it (jieba reads "林晓是谁？" as 林晓是 | 谁)."""
    name = _person_name(line)
    return bool(_whole_words(asked) & _name_terms(line)) or (
        len(name) > 1 and bool(text.HAN_CHAR.match(name)) and name in query)


def _whole_words(terms: frozenset[str]) -> frozenset[str]:
    """The query's terms less the single Chinese characters a longer term of it holds: "我上周末干什么了？" is
    indexed by 上周末 and by 周 too, and 周 put 老周, whose bio says "下周", first in the inner circle."""
    longer = [t for t in terms if len(t) > 1]
    return frozenset(t for t in terms
                     if not (len(t) == 1 and text.HAN_CHAR.match(t) and any(t in word for word in longer)))


def _circle_of(line: str) -> str:
    """The circle of a person's context line (`[Person:42] Петров | Work_Inner | …`)."""
    fields = line.split(" | ", 2)
    return fields[1] if len(fields) > 2 else ""


@lru_cache(maxsize=4096)
def _plain(line: str) -> str:
    """A line's words as a bio quotes them: without the dates a bio adds, in one kind of spacing."""
    return " ".join(without_dates(line).split())


def _quoted(people: Block, lines: list[BlockItem], said: dict[str, str]) -> set[str]:
    """The refs of the dialog `lines` whose turn (`said`) a whole person's line of `people` quotes word for word."""
    bios = [_plain(i.text) for i in people.items if not i.meta.get("clipped")]
    return {i.ref for i in lines if (quote := _plain(said.get(i.ref, ""))) and any(quote in bio for bio in bios)} \
        if bios else set()


def _without_quoted(block: Block, people: tuple[Block, ...], said: dict[str, str]) -> None:
    """The memories block without the turns a person's line the top-up made whole (or added) quotes word for word:
    clipped when the turns were weighed (`_quoted_by`), Priya's line grew back with "She used to work at Google
    and she is vegan…", which the memories showed too. A line packed only with one of them goes too (`_WITHOUT`);
    a removed line's day header goes to the next line of its day."""
    reason = {ref: f"in_{shown.name}" for shown in reversed(people) for ref in _quoted(shown, block.items, said)}
    quoted = set(reason)
    if not quoted:
        return
    gone = quoted | {i.ref for i in block.items if any(i.meta.get(key) in quoted for key in _WITHOUT)}
    for ref in [i.ref for i in block.items if i.ref in gone]:
        at = next(n for n, i in enumerate(block.items) if i.ref == ref)
        item = block.items.pop(at)
        block.cut.append({"ref": ref, "tokens": 0, "reason": reason.get(ref) or _WITHOUT[next(
            key for key in _WITHOUT if item.meta.get(key) in quoted)]})
        header = _day_header(item.meta["day"]) if item.meta.get("day") else ""
        following = block.items[at] if at < len(block.items) else None
        if header and item.text.startswith(f"{header}\n") and following and following.meta["day"] == item.meta["day"]:
            block.items[at] = replace(following, text=f"{header}\n{following.text}",
                                      tokens=following.tokens + count_tokens(header))


def _quoted_by(circle: Block, item: SearchItem, room: int, dated: bool) -> int | None:
    """The tokens the inner circle grows by to show the dialog turn `item` word for word (0: a shown line says
    it), or None when it does not, or only a clipped line's whole would, for more than the turn's own line
    costs or is left (`room`); the clipped line is then made whole."""
    said = _plain(item.chunk["text"])
    if not said:
        return None
    if any(said in _plain(line.text) for line in circle.items):
        return 0
    cost = min(room, count_tokens(_memory_line(item, dated)))
    for whole in circle.waiting:
        shown = next((i for i in circle.items if i.ref == whole.ref), None)
        grows = whole.tokens - (shown.tokens if shown else 0)
        if shown is not None and grows <= cost and said in _plain(whole.text):
            circle.items[circle.items.index(shown)] = whole
            circle.waiting.remove(whole)
            circle.cut = [c for c in circle.cut if c["ref"] != whole.ref]
            return grows
    return None


def _asked_again(question: str, asked: frozenset[str]) -> bool:
    """A question all of whose words (`asked`: the query's terms) the query says."""
    said = set(text.analyze(question)) - text.pronoun_terms()
    return bool(said) and said <= asked


def _with_corrections(block: Block, candidates: list[BlockItem], turn_of: dict[str, int],
                      sources_of: dict[str, frozenset[int]], recent_ids: set[int], typed: set[int],
                      asked: frozenset[str], *, tenant_id: int, user_id: str, dated: bool) -> list[BlockItem]:
    """The candidates with, right before a line that states a fact the user has since changed ("I live
    in Boston", or a memory consolidated from it), the turn that states its current value ("I moved to
    Seattle last week!"): the old statement alone reads as current, and the new one, sharing no word
    with "where do I live now?", was below the floor. Dated, the two lines tell the change. A turn
    that a shown typed memory restates (`typed`) is corrected first of all. Not when the recent turns
    show the correction. A correction the search did not return, for a query that does not ask for its
    fact, comes after the line it corrects and only with it (`corrects`): "what's my sister's name?" at
    50 tokens showed "I moved to Seattle last week." alone, the turn it corrected cut for budget."""
    said = {message_id: ref for ref, message_id in turn_of.items()}
    # What each line states: a turn, or the turns a memory restates; first the typed memories block's.
    stated = [(None, set(typed)), *((c, {turn_of[c.ref]} if c.ref in turn_of else set(sources_of.get(c.ref, ())))
                                    for c in candidates)]
    found = corrections_of(tenant_id=tenant_id, user_id=user_id,
                           message_ids=sorted(set().union(*(turns for _, turns in stated))))
    corrections = {stale: c.message_id for stale, c in found.items()}
    asks_for = {c.message_id for c in found.values() if asked & key_terms(c.key)}
    wanted = {new for new in corrections.values() if new not in recent_ids}
    if not wanted:
        return candidates
    by_ref = {c.ref: c for c in candidates}
    fetched = turn_chunks(tenant_id=tenant_id, user_id=user_id, message_ids=wanted - said.keys())
    out: list[BlockItem] = []
    placed: set[int] = set()
    for item, turns in stated:
        message_id = turn_of.get(item.ref) if item is not None else None
        if message_id in placed:
            continue  # moved up before the statement it corrects
        after: list[BlockItem] = []
        for new in sorted({corrections[m] for m in turns if m in corrections} & wanted - placed):
            correction = by_ref[said[new]] if new in said else _chunk_item(fetched.get(new), turn_of, dated,
                                                                             correction=True)
            if correction is None:
                continue
            if item is None or new in said or new in asks_for:
                out.append(correction)
            else:
                after.append(replace(correction, meta={**correction.meta, "corrects": item.ref}))
            placed.add(new)
            block.cut = [c for c in block.cut if c["ref"] != correction.ref]
        if item is not None:
            out.append(item)
        out.extend(after)
        if message_id is not None:
            placed.add(message_id)
    return out


def _chunk_item(chunk: Chunk | None, turn_of: dict[str, int], dated: bool, **meta: Any) -> BlockItem | None:
    """A memories line for a dialog chunk that the search did not return."""
    if chunk is None:
        return None
    said = dated_as_said(chunk.text, chunk.created_ts) if dated else chunk.text
    line, ref = _line(said, chunk.speaker or chunk.role), f"chunk:{chunk.pk}"
    turn_of[ref] = int(chunk.source_id.partition(":")[2])
    day = chunk.created_ts.date().isoformat() if chunk.created_ts else ""
    return BlockItem(line, count_tokens(line), ref, {"score": 0.0, "type": "dialog", "day": day,
                                                       "at": iso_instant(chunk.created_ts) or "", **meta})


def _with_turns_answered(block: Block, candidates: list[BlockItem], turn_of: dict[str, int],
                         answered: dict[str, tuple[int, str]], recent_ids: set[int], asked: frozenset[str],
                         in_circle: set[int], *, tenant_id: int, user_id: str, dated: bool) -> list[BlockItem]:
    """The candidates with each assistant's reply beside the turn it answers (`answered`: the reply's
    line → that turn's message and the reply's own text), fetched when the search did not return it. A
    reply's search text holds the turns before it, so a reply that says no word of the query matched
    through its turn: at a small budget the reaction alone ("That makes me so happy, Alex.") took the
    room of the news it reacted to. Such a reply comes right after its turn and is packed only with it
    (`reply_to`); one that answers the query itself ("Your dentist appointment is on Monday") ranks
    first and brings its turn after it, for the room left (a turn the search left out only with it:
    `answered_by`). Not when the recent turns show the turn, nor
    when the turn is another reply, filler, or the query asked before. A turn an inner-circle bio shows word for
    word (`in_circle`) is not shown again for its reply ("Как вам Потсдам?" brought back the trip its bio
    quotes), and a reply to it stays only if it answers the query itself."""
    wanted = {ref: answer for ref, answer in answered.items() if answer[0] not in recent_ids}
    if not wanted:
        return candidates
    said = {message_id: ref for ref, message_id in turn_of.items()}
    by_ref = {c.ref: c for c in candidates}
    fetched = turn_chunks(tenant_id=tenant_id, user_id=user_id,
                          message_ids={message_id for message_id, _ in wanted.values()} - said.keys())
    out: list[BlockItem] = []
    placed: set[str] = set()
    for item in candidates:
        if item.ref in placed:
            continue  # moved beside the reply that answers it
        message_id, reply = wanted.get(item.ref, (None, ""))
        if message_id in in_circle:
            if asked & set(text.analyze(reply)):
                out.append(item)
            else:
                block.cut.append({"ref": item.ref, "tokens": 0, "reason": "turn_in_inner_circle"})
            placed.add(item.ref)
            continue
        turn = None
        if message_id in said and by_ref[said[message_id]].meta.get("role") != "assistant":
            turn = by_ref[said[message_id]]
        elif message_id in fetched and fetched[message_id].role != "assistant" and \
                not is_filler(fetched[message_id].text) and not _asked_again(fetched[message_id].text, asked):
            turn = _chunk_item(fetched[message_id], turn_of, dated, role=fetched[message_id].role)
        if turn is None:
            out.append(item)
        elif asked & set(text.analyze(reply)):
            if turn.ref not in by_ref:  # fetched for the reply: "Can you remind me when?" says nothing alone
                turn = replace(turn, meta={**turn.meta, "answered_by": item.ref})
            out.extend([item] if turn.ref in placed else [item, turn])
        else:
            out.extend([] if turn.ref in placed else [turn])
            out.append(replace(item, meta={**item.meta, "reply_to": turn.ref}))
        if turn is not None:
            placed.add(turn.ref)
            block.cut = [c for c in block.cut if c["ref"] != turn.ref]
        placed.add(item.ref)
    return out


def _without_turns_shown(typed: Block, sources: dict[str, frozenset[int]], said: set[int]) -> int:
    """Drop the typed memories whose turns the context came to show whole after all, and give back their
    tokens. The typed block leaves out a memory whose turn the memories block will show, judged by the
    search's ranking; a turn that ranked below it can still come, as the turn a reply answers or the
    one that corrects a fact, and the memory then said the turn's words again beside it."""
    freed = 0
    for item in list(typed.items):
        if sources.get(item.ref) and said.issuperset(sources[item.ref]):
            typed.items.remove(item)
            typed.cut.append({"ref": item.ref, "tokens": 0, "reason": "turn_in_memories"})
            freed += item.tokens
    return freed


def _without_restatements(block: Block, candidates: list[BlockItem], cap: int, turn_of: dict[str, int],
                          sources_of: dict[str, frozenset[int]], recent_ids: set[int], asked: frozenset[str],
                          said_words: frozenset[str]) -> list[BlockItem]:
    """The candidates without a consolidated memory or insight whose turns the context says anyway
    ("User: I am allergic to peanuts" beside the turn that says it, whichever ranks first): the turns
    that a packing without any such restatement shows decide, and, in rank order, the turns of the
    restatements kept before it (an insight summing up a turn shown and a memory made from the other
    adds nothing). One that restates a turn shown and others not says nothing more the query asks when
    each query term (`asked`) it holds a line shown holds too (or `said_words`, the inner circle's): an
    insight of a user's introduction and their project repeated the project's turn for "What project am
    I planning?", to add the introduction; "我儿子在学什么？" brought the insight of the son's piano lessons
    (quoted by his bio) and of the user's penicillin allergy. One that says "Potsdam" of a Russian turn
    not shown, for "Potsdam and oolong tea", stays."""
    if not sources_of:
        return candidates

    def said(item: BlockItem, shown: set[int], words: set[str]) -> bool:
        sources = sources_of[item.ref]
        if shown.issuperset(sources):
            return True
        return bool(sources & shown) and words.issuperset(asked.intersection(text.analyze(item.text)))

    def terms(items: list[BlockItem]) -> set[str]:
        return set().union(*(asked.intersection(text.analyze(i.text)) for i in items))

    trial = Block("memories")
    _pack_by_day(trial, [c for c in candidates if c.ref not in sources_of], cap)
    shown = recent_ids | {turn_of[i.ref] for i in trial.items if i.ref in turn_of}
    words = terms(trial.items) | said_words
    kept = []
    for item in candidates:
        if item.ref in sources_of and said(item, shown, words):
            block.cut.append({"ref": item.ref, "tokens": 0, "reason": "turn_in_memories"})
        else:
            kept.append(item)
    # Then restatements of each other, in rank order: only one that fits speaks for its turns.
    trial = Block("memories")
    _pack_by_day(trial, kept, cap)
    packed = {i.ref for i in trial.items}
    final = []
    for item in kept:
        if item.ref in sources_of:
            if said(item, shown, words):
                block.cut.append({"ref": item.ref, "tokens": 0, "reason": "turn_in_memories"})
                continue
            if item.ref in packed:
                shown = shown | sources_of[item.ref]
                words = words | terms([item])
        final.append(item)
    return final


def _take_waiting(block: Block, refs: frozenset[str], room: int) -> int:
    """Add the block's items waiting for budget whose reference is in `refs`, in rank order, while they fit in
    `room`; return the tokens they took (with the block's header, when the block showed nothing before)."""
    before = block.tokens
    for item in [i for i in block.waiting if i.ref in refs]:
        header = count_tokens(block.header) if block.header and not block.items else 0
        if block.tokens - before + header + item.tokens > room:
            continue
        block.items.append(item)
        block.waiting.remove(item)
        block.cut = [c for c in block.cut if not (c["ref"] == item.ref and c["reason"] == "budget")]
    block.items.sort(key=lambda i: block.rank[i.ref])
    return block.tokens - before


def _top_up(context: Context, order: tuple[str, ...], contiguous: frozenset[str] | set[str] = frozenset(),
            shown: frozenset[str] | set[str] = frozenset(), clipping: frozenset[str] = frozenset()) -> None:
    """Give what the blocks left of the budget to those that cut items for budget, block by block in
    `order`, each block's items in their rank order: a share is a cap while others need the room, and
    an inner circle cut at 15% while half the budget stays unused helps no one (nor a session's last
    user turn cut with a third of the budget left). A `contiguous` block (the recent turns, ranked newest
    first and shown oldest first) stops at the first item that does not fit, or that another block
    already `shown`, so that no gap opens in it."""
    by_name = {b.name: b for b in context.blocks}
    for name in order:
        block = by_name[name]
        chained = name in contiguous
        added = False
        for item in list(block.waiting):
            header = count_tokens(block.header) if block.header and not block.items else 0
            shown_clipped = next((i for i in block.items if i.ref == item.ref), None)  # a clipped line, made whole
            grows = item.tokens - (shown_clipped.tokens if shown_clipped else 0) + header
            too_big = context.used + grows > context.budget
            if too_big and name in clipping and shown_clipped is None and item.ref not in shown:
                # As `_pack_clipping` does: a person's line the rest of the budget cannot hold whole shows what of
                # it fits, before a lower-ranked one that fits whole ("С кем я работаю?" at 250 tokens showed the
                # sister's short line and not the colleague one token too long).
                clipped = _clipped(item, context.budget - context.used - header)
                if clipped is not None:
                    block.items.append(clipped)
                    block.cut = [c for c in block.cut if not (c["ref"] == item.ref and c["reason"] == "budget")]
                    block.cut.append({"ref": item.ref, "tokens": item.tokens - clipped.tokens, "reason": "clipped"})
                    added = True
                continue
            if too_big or item.ref in shown:
                if chained:
                    break
                continue
            if shown_clipped is not None:
                block.items.remove(shown_clipped)
            block.items.append(item)
            block.waiting.remove(item)
            block.cut = [c for c in block.cut if not (c["ref"] == item.ref and c["reason"] in ("budget", "clipped"))]
            added = True
        if added:
            block.items.sort(key=lambda i: block.rank[i.ref], reverse=chained)


def _by_relevance(lines: list[tuple[str, str]], asked: frozenset[str],
                  asks: Callable[[str], frozenset[str]] | None = None) -> list[tuple[str, str]]:
    """Lines that share words with the query first (so a small budget keeps the profile's `location`
    for "where should I eat tonight?", the inner circle's wife for a gift to her), their own order
    otherwise. `asks`: more words a line counts as shared (a profile line's key's: "where do I live now?"
    names no word of "location: Seattle", and at 50 tokens that line was the one cut)."""
    return [line for line, _ in _relevance(lines, asked, asks)]


def _relevance(lines: list[tuple[str, str]], asked: frozenset[str],
               asks: Callable[[str], frozenset[str]] | None = None) -> list[tuple[tuple[str, str], int]]:
    """Each line with how many of the query's terms (`asked`) it says (`_by_relevance`), most first."""
    if not asked:
        return [(line, 0) for line in lines]

    def shared(line: tuple[str, str]) -> int:
        said = set(text.analyze(line[1].replace("_", " ")))
        return len(asked & (said | asks(line[1]) if asks is not None else said))

    return sorted(((line, shared(line)) for line in lines), key=lambda scored: -scored[1])


@dataclass(frozen=True)
class RelevanceFloor:
    """What a result must reach to spend budget: a cosine, or a share of the query's BM25 ceiling."""

    min_cosine: float
    min_share: float
    ceilings: dict[str, float]
    # Results a Chinese query's words found only through their characters (`_found_by_characters`).
    by_characters: frozenset[int] = frozenset()
    # Results of the user's conversation from outside the days, weeks or months the query names (`_outside_period`),
    # and the share of the query's BM25 ceiling they must reach by words.
    outside_period: frozenset[int] = frozenset()
    outside_min_share: float = 0.0

    def below(self, item: SearchItem) -> bool:
        """Near the query in neither space: unrelated, not remembered. By words, a result must answer
        `min_share` of the query (a turn matched by "I" alone is not about "what should I cook?")."""
        if item.components.get("dated"):
            # The turn that dates a hit of a "when" question ("Last weekend I went to an event.") shares no word
            # with it: its hit's words found it (rag.selectors._dated_turns_lifted).
            return False
        ceiling = self.ceilings.get(item.chunk["namespace"], 0.0)
        bm25 = item.components.get("bm25")
        if item.chunk["id"] in self.by_characters:
            # Its vector is no evidence either: feedback moved the query towards the best word matches, whose
            # vectors embed the turns before them, and the offline vectors of Chinese are its characters.
            return True
        weak_words = bm25 is None or (ceiling > 0 and bm25 / ceiling < self.min_share)
        if item.chunk["id"] in self.outside_period:
            # The query asks about a time, and the offline vectors know no dates: asked "What did I do last
            # weekend?", "Good luck this year!" of September came in at cosine 0.36 (and brought the turn it
            # answers). Nor is a word enough that the period's own turns share too: "上周末我做了什么？" showed
            # the user's introduction for its 做. Such a result must match at least half as well as the best one.
            return bm25 is None or (ceiling > 0 and bm25 / ceiling < max(self.min_share, self.outside_min_share))
        cosine = item.query_cosine if item.query_cosine is not None else item.components.get("vector", 0.0)
        return weak_words and cosine < self.min_cosine


_DATED_TERM = re.compile(r"^@[dwm]\d")  # a day, a week, a month of a year (memoryhub.timeexpr)


def _period_terms(query: str) -> frozenset[str]:
    """The days, weeks and months of a year that the query names ("last weekend", "в мае", "上周末")."""
    return frozenset(term for term in timeexpr.query_weights(query, timezone.now()) if _DATED_TERM.match(term))


_Rows = Callable[[], dict[int, tuple[list[str], str]]]


def _conversation_rows(result: SearchResult) -> _Rows:
    """The stored terms and text of the results of the user's conversation, by id: one read, at the first call,
    and none when no check needs them."""
    @cache
    def rows() -> dict[int, tuple[list[str], str]]:
        ids = [item.chunk["id"] for item in result.items if item.chunk["type"] in _CONVERSATION]
        return {pk: (terms, said) for pk, terms, said in
                Chunk.objects.filter(pk__in=ids).values_list("id", "terms", "text")} if ids else {}

    return rows


def _outside_period(query: str, period: frozenset[str], stored: _Rows) -> frozenset[int]:
    """The conversation results that neither were said in nor name a day, week or month (`period`) the query
    names relative to now ("last weekend", "вчера", "上周末"). A date with no year ("on Aug 15th") is left out:
    the year it is read in is a guess (this year's, if it has passed), and a turn of the year before may be
    what is asked for."""
    if not period or not timeexpr.relative_expressions(query, timezone.now().date()):
        return frozenset()
    # The narrowest the query names: "last weekend" asks for its two days, not the Friday of its week.
    finest = next(kept for unit in ("@d", "@w", "@m") if (kept := {t for t in period if t.startswith(unit)}))
    return frozenset(pk for pk, (terms, _said) in stored().items() if finest.isdisjoint(terms))


def _found_by_characters(result: SearchResult, query: str, period: frozenset[str], stored: _Rows) -> frozenset[int]:
    """The conversation results that share no word with a Chinese query, only characters of its words.

    A Han word's characters are BM25 terms of their own (`text.analyze`), so that a question segmented
    otherwise still finds its word ("茶" asked finds "乌龙茶" said). But "谁推荐的家教？" also met
    "我在杭州一家银行上班" through 家 of 家教 and of 一家, above the floor's share. A result's stored terms
    (its preceding turns' too, which find a reply) must hold one of the query's words: a word said, or a
    character said as a word; or a day, week or month the query names ("上周末我做了什么？" is answered by
    "今天给朵朵买了一只小狗", said last Sunday, which shares no word with it)."""
    if not text.HAN_CHAR.search(query):
        return frozenset()
    words = {term for word in text.words(query) if (term := text.term(word))} - text.pronoun_terms()
    # Not a year alone nor a month of any year (`@y2026`, `@mo12`): nearly every turn has one of those.
    words |= period
    compounds = [word for word in words if len(word) > 1 and text.HAN_CHAR.match(word)]
    if not compounds:
        return frozenset()  # no word of several characters, so no match by its characters alone
    ids = [item.chunk["id"] for item in result.items if item.chunk["type"] in _CONVERSATION
           and "bm25" in item.components]
    if not ids:
        return frozenset()

    def shares_a_word(terms: list[str], said: str) -> bool:
        # A word inside the other counts: "火锅店" asked finds "火锅" said, "家教" asked finds "家教课" said. So does
        # a word all of whose characters the turn itself says (not the turns before it that its terms carry):
        # jieba reads "我们家的狗叫什么？" as 狗叫 (a dog's bark), and "一只小狗，叫豆豆" says 狗 and 叫; "我在杭州一家
        # 银行上班" says 家 but not 教 of 家教.
        return not words.isdisjoint(terms) or any(
            term in word or word in term for term in terms if len(term) > 1 and text.HAN_CHAR.match(term)
            for word in compounds) or any(all(c in said for c in word) for word in compounds)

    rows = stored()
    return frozenset(pk for pk in ids if pk in rows and not shares_a_word(*rows[pk]))


# What the user said and what was made of it: the typed memories' floor is measured against these, not
# against a document (a tenant's menu saying "seafood" six times pushed "I am allergic to seafood" out).
_CONVERSATION = frozenset({Chunk.Type.DIALOG, Chunk.Type.MEMORY, Chunk.Type.INSIGHT})


def _best_share(result: SearchResult) -> float:
    """The largest share of its namespace's BM25 ceiling that a result of the user's conversation reaches. A
    share, not a score: the typed memories' own search, of memories alone, scores on its own scale."""
    shares = [item.components["bm25"] / result.bm25_ceiling[item.chunk["namespace"]] for item in result.items
              if item.chunk["type"] in _CONVERSATION and "bm25" in item.components
              and result.bm25_ceiling.get(item.chunk["namespace"], 0.0) > 0]
    return max(shares, default=0.0)


def _weakest_displaced(result: SearchResult, remaining: int, typed_cap: int, recent_ids: set[int],
                       floor: RelevanceFloor, dated: bool) -> float:
    """The least share of the query's BM25 ceiling among the turns the typed memories' room pushes out of the
    memories block (0 when it pushes none out). A typed memory shown instead of them must answer the query as
    well: "Joanna: It must be really awesome!" (user/KeyFacts), found by the date, took the room of Nate's turn
    saying which tournament he won (docs/retrieval.md "Evidence in context")."""
    displaced = (_turns_that_fit(result.items, remaining, recent_ids, floor, dated)
                 - _turns_that_fit(result.items, remaining - typed_cap, recent_ids, floor, dated))
    return min((item.components.get("bm25", 0.0) / result.bm25_ceiling[item.chunk["namespace"]]
                for item in result.items if item.chunk["meta"].get("message_id") in displaced
                and result.bm25_ceiling.get(item.chunk["namespace"], 0.0) > 0), default=0.0)


def _turns_that_fit(items: list[SearchItem], cap: int, recent_ids: set[int], floor: RelevanceFloor,
                    dated: bool) -> frozenset[int]:
    """The message ids of the dialog results that the memories block will show within `cap`."""
    shown: set[int] = set()
    days: set[str] = set()
    used = 0
    for item in items:
        chunk = item.chunk
        if (chunk["type"] != "dialog" or chunk["meta"].get("message_id") in recent_ids or is_filler(chunk["text"])
                or floor.below(item)):
            continue
        day = _day(item)
        used += count_tokens(_memory_line(item, dated)) + (count_tokens(_day_header(day)) if day not in days else 0)
        days.add(day)
        if used > cap:
            break
        shown.add(chunk["meta"]["message_id"])
    return frozenset(shown)


def _lines(items: list[tuple[str, str]]) -> list[BlockItem]:
    """(reference, line) pairs as block items; the reference names the rows shown (`fact:12`,
    `person:7`), like `chunk:<id>` and `message:<id>` do, never a position."""
    return [BlockItem(line, count_tokens(line), ref) for ref, line in items]
