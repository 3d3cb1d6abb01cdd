"""What a search query asks for, as weighted BM25 terms.

Two shapes of query need more than its words:
- a query that names dates or asks "when" gets date terms (memoryhub/timeexpr.py); a conversation
  gets the dates it names, but its "when" and "how long" are not questions;
- a query that is itself a conversation (a companion app sends the last turns of a dialogue to find
  the memories they should bring back) weighs the user's turns over the assistant's: the
  assistant's replies echo and console ("How lovely! You'll do great!") rather than say what
  happened. Chosen on the MADial tune half (BM25 alone, recall@5: zh 0.516 -> 0.558, en up too);
  weighing later turns more, pruning to the rarest terms, and embedding only the user's turns
  helped one language and hurt the other there, so none is done (docs/retrieval.md);
- in such a conversation a word's weight grows with the log of how often it is said, not linearly;
- a query that asks for a category ("Which cities…", "what kind of art…") gets its category terms,
  which stored turns carry for the nouns they say (memoryhub/lexicon.py);
- personal pronouns are no search words of a question (memoryhub.text.pronoun_terms): "I" and "my"
  are on most of a user's turns and matched unrelated ones where nothing else did;
- nor are the words of a date said relative to the question ("last week", "вчера", "去年"): its
  date terms say which days it means;
- "what did I tell you last time?" asks for the day of the user's previous conversation, which the
  search looks up and passes as `previous_day`.
"""

from __future__ import annotations

import math
import re
from datetime import date, datetime

from memoryhub import lexicon, timeexpr
from memoryhub.text import analyze, pronoun_terms

ASSISTANT_TURN_WEIGHT = 0.3
# The words of a date said relative to the question ("last week"): at 1 a turn of another week that
# says "last week" outranked last week's turns; at 0 LoCoMo's tune half lost MRR (0.595 -> 0.587:
# its questions say "last weekend" of the conversation's own time, as the evidence turn does). 0.3
# keeps last week's turns first (tests/rag/test_query.py) for MRR 0.591 on tune, test unchanged.
RELATIVE_WORD_WEIGHT = 0.3

# "<Bart>: ...", "Assistant: ...", "用户：..." — a speaker label of at most a few words at the start
# of a line.
_TURN = re.compile(r"^\s*(?:<(?P<tagged>[^<>\n]{1,40})>|(?P<plain>[^\s:：<>][^:：\n]{0,30}?))\s*[:：]\s*(?P<text>.*)$")
_ASSISTANT_LABELS = frozenset({"assistant", "ai", "bot", "system", "companion", "助手", "助理", "机器人", "ассистент",
                               "бот", "помощник"})


def dialogue_turns(query: str) -> list[tuple[str, str]] | None:
    """(speaker, text) per turn when the query is a conversation of two turns or more, else None."""
    lines = [line for line in query.splitlines() if line.strip()]
    if len(lines) < 2:
        return None
    turns: list[tuple[str, str]] = []
    for line in lines:
        m = _TURN.match(line)
        if m:
            turns.append(((m.group("tagged") or m.group("plain")).strip(), m.group("text").strip(' "“”')))
        elif turns:
            turns[-1] = (turns[-1][0], f"{turns[-1][1]} {line.strip()}")
        else:
            return None  # prose that merely has a colon somewhere
    return turns if len(turns) >= 2 else None


# A conversation that says "when" or "how long" ("I was so happy when we won") is not asking for a time:
# the question words belong to a plain query. Measured on MADial (docs/retrieval.md).
ASKS = frozenset({timeexpr.TIME_REFERENCE, timeexpr.DURATION})


def _outermost(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Sorted ranges without those inside or overlapping an earlier one: each blanked once."""
    out: list[tuple[int, int]] = []
    for start, end in ranges:
        if out and start < out[-1][1]:
            continue
        out.append((start, end))
    return out


def _is_assistant(speaker: str) -> bool:
    return speaker.casefold() in _ASSISTANT_LABELS


def weighted_terms(query: str, now: datetime, previous_day: date | None = None) -> dict[str, float]:
    """Each BM25 term of the query with its weight (a word said once in a plain query weighs 1).
    `previous_day`: the day of the user's previous conversation, which a question about "last time"
    asks for (`timeexpr.last_conversation_phrases`)."""
    weights: dict[str, float] = {}
    pronouns = pronoun_terms()
    turns = dialogue_turns(query)
    if turns is None:
        # "Last week", "вчера", "去年": the date terms below say which days; as full words they matched
        # turns that said them of other days. (A conversation's are kept: it is not asking about a time.)
        # So do "last time" and "в прошлый раз" when the previous conversation's day stands for them.
        words, said = query, []
        relative = timeexpr.relative_expressions(query, now.date())
        if previous_day is not None:
            relative = sorted(relative + timeexpr.last_conversation_phrases(query))
            weights[f"@d{previous_day.isoformat()}"] = timeexpr.DATE_WEIGHT
        for start, end in reversed(_outermost(relative)):
            said.append(words[start:end])
            words = words[:start] + " " * (end - start) + words[end:]
        for term in analyze(words):
            if term not in pronouns:
                weights[term] = weights.get(term, 0.0) + 1.0
        for term in analyze(" ".join(said)):
            if term not in pronouns:
                weights[term] = weights.get(term, 0.0) + RELATIVE_WORD_WEIGHT
    else:
        # A conversation keeps its pronouns: dropping them moved both MADial test halves down
        # (en recall@5 0.603 -> 0.596, zh 0.500 -> 0.489) for en tune +0.006 and zh tune 0.
        for speaker, text in turns:
            weight = ASSISTANT_TURN_WEIGHT if _is_assistant(speaker) else 1.0
            for term in analyze(text):
                weights[term] = weights.get(term, 0.0) + weight
        # A word a dialogue repeats matters more, but not in proportion: a companion's chat says
        # "happy" or the child's name in every turn, and as a plain sum that drowned the one-off
        # words that name what happened. log(1 + count) was chosen on the MADial tune half.
        weights = {term: math.log1p(weight) for term, weight in weights.items()}
    for term, weight in [*timeexpr.query_weights(query, now).items(), *lexicon.query_weights(query).items()]:
        if turns is not None and term in ASKS:
            continue
        weights[term] = weights.get(term, 0.0) + weight
    return weights

