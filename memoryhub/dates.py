"""Relative dates in a bio or a remembered turn, anchored to the day they were said.

A bio line quoted from "Неделю назад Маша вернулась из Праги" is read months later, in a prompt whose
"now" is another day: "a week ago" is then wrong; so is a turn the context shows to a question that asks when
(`rag.context`). Each relative date (`memoryhub.timeexpr`, en/ru/zh:
"last month", "3 дня назад", "上周") keeps its words and gets the dates it meant on the day it was said,
in ISO form, which a prompt in any language reads alike: "Неделю назад (2024-05-06 – 2024-05-12) Маша
вернулась из Праги". A recurring time ("every Sunday", "каждое Рождество", "每年春节") names no one date and
is left as it is. Pure functions, no database.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

from memoryhub import timeexpr

# Dates already written after an expression: a text is never anchored twice (a rule archivist's line
# is anchored at its message, and the draft's bio passes again as a whole in the services).
_DATES = r"\(\d{4}(?:-\d{2}){0,2}(?: – \d{4}(?:-\d{2}){0,2})?\)"
_ANCHORED = re.compile(_DATES)
_WRITTEN_AFTER = re.compile(rf"\s?{_DATES}")
# Sentences and clauses: a date expression is looked for within one, and read in its sentence's tense (a bare
# weekday or weekend: "В субботу (2026-11-28) мы едем на дачу", "В субботу (2026-11-21) мы ездили на дачу").
_SENTENCE = re.compile(r"[^.!?;\n。！？；]*[.!?;\n。！？；]*")
_CLAUSE = re.compile(r"[^.!?;,\n。！？；，]*[.!?;,\n。！？；，]*")
# Words, and each Han character on its own (Chinese writes no spaces: "2天前" is three of them).
_TOKEN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]|[^\W\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WINDOW_TOKENS = 6
# Another day to read the text on: what resolves alike on both days is absolute ("June 9, 2023",
# "in 2020"); what differs was relative ("2 weeks ago", "last June", a "June 9" without its year).
_ELSEWHEN = timedelta(weeks=157)
# A recurring time names no one date: "we talk every Sunday" is every Sunday, not the last one before the
# message. The readers take the date words after a recurrence word for one date ("Sunday", "Christmas",
# "на Пасху", "春节", "月初"), so an expression that starts right after one of these stays unanchored:
# "every", "each (other)", "once a year", "каждый", "ежегодно", "раз в год", "每", "每年", "每逢", "每个月".
# The unit a marker counts in may be part of it ("every year at Christmas", "каждый год на Пасху"), and
# a preposition or article may stand between.
_RECURRENCE = re.compile(
    r"\b(?:every|each)(?:\s+(?:other|second|third|single))?(?:\s+(?:year|month|week|day|time))?\b"
    r"|\b(?:once|twice|\w+\s+times)\s+(?:a|an|per|every|each)\s+(?:year|month|week|day)\b"
    r"|(?<!\w)(?:кажд|ежегодн|ежемесячн|еженедельн|ежедневн)\w*(?:\s+(?:год|недел|месяц|день|раз)\w*)?"
    r"|(?<!\w)(?:раз|дважды|трижды|\w+\s+раза)\s+в\s+(?:год|неделю|месяц|день)(?!\w)"
    r"|每(?:[个逢到当]|一个?)?(?:年|个?月|周|星期|礼拜|天)?(?:的)?",
    re.IGNORECASE)
_RECURRENCE_GAP = re.compile(r"(?:[\s,]+|(?<![^\W\d_])(?:on|at|in|around|about|during|over|the|в|во|на|к|под|с)"
                             r"(?![^\W\d_]))*", re.IGNORECASE)
# A habit said of a bare weekday is every such day: "Моя начальница вечно ставит дедлайны на пятницу" (QA: read as
# the last Friday before the message), "She always calls on Friday", "我老板总是周五布置任务". A date that reads alike
# in either tense ("usually, but yesterday…") keeps its anchor.
_HABITUAL = re.compile(r"\b(?:always|usually|normally|typically|generally|often|tends?\s+to)\b"
                       r"|(?<!\w)(?:всегда|вечно|обычно|постоянно|часто|как\s+правило)(?!\w)"
                       r"|总是|老是|经常|通常|一般|往往|常常", re.IGNORECASE)
# "on Sunday mornings", "Friday nights": a plural time of day after a weekday makes it every such day.
_RECURRING_AFTER = re.compile(r"\s*(?:mornings|afternoons|evenings|nights)\b", re.IGNORECASE)


def _recurrence_reach(clause: str) -> list[tuple[int, int]]:
    """(start, reach) of each recurrence word of the clause: an expression overlapping it, or starting no
    later than `reach`, is what it counts ("every Sunday", "每年春节"; "每月初", whose 月 both share)."""
    return [(m.start(), _RECURRENCE_GAP.match(clause, m.end()).end())  # type: ignore[union-attr]
            for m in _RECURRENCE.finditer(clause)]


def _recurring(clause: str, start: int, end: int, reach: list[tuple[int, int]]) -> bool:
    """Whether the date expression at clause[start:end] is a recurring time, not a date."""
    return any(start <= last and first < end for first, last in reach) or bool(_RECURRING_AFTER.match(clause, end))


def _where(clause: str, span: timeexpr.Span, anchor: date, reach: list[tuple[int, int]], past: bool | None
           ) -> int | None:
    """The end of the shortest (then first) run of words of the clause that says `span`: where a form
    `timeexpr.relative_expressions` does not place ("2 weeks ago", "last June", "2天前") ends. A run a
    recurrence word counts ("every January") says no date."""
    tokens = [(m.start(), m.end()) for m in _TOKEN.finditer(clause)]
    for size in range(1, _WINDOW_TOKENS + 1):
        for i in range(len(tokens) - size + 1):
            start, end = tokens[i][0], tokens[i + size - 1][1]
            if span in timeexpr.mentions(clause[start:end], anchor, past=past) and \
                    not _recurring(clause, start, end, reach):
                return end
    return None


def _anchor_clause(clause: str, anchor: date, relative: set[timeexpr.Span], past: bool | None,
                   by_tense: bool = True) -> str:
    """The clause with its relative dates anchored. `past` is its sentence's tense (`timeexpr.tense`): a clause
    or an expression read apart from the sentence would lose it ("Мы едем на дачу к Сергею, в субботу").
    `by_tense` False: only the dates that read alike in either tense."""
    spans = [s for s in timeexpr.mentions(clause, anchor, past=past) if s in relative]
    if spans and (not by_tense or _HABITUAL.search(clause)):
        alike = set(timeexpr.mentions(clause, anchor, past=True)) & set(timeexpr.mentions(clause, anchor, past=False))
        spans = [s for s in spans if s in alike]
    if not spans or _ANCHORED.search(clause):
        return clause
    reach = _recurrence_reach(clause)
    inserts: dict[int, list[timeexpr.Span]] = {}
    placed: set[timeexpr.Span] = set()
    for start, end in timeexpr.relative_expressions(clause, anchor):
        # Read apart from its clause, a day something was arranged for would lose that ("booked … for Saturday").
        tense = False if timeexpr.arranged_for(clause, start, end) else past
        said = [s for s in timeexpr.mentions(clause[start:end], anchor, past=tense) if s in spans]
        placed.update(said)  # a recurring one too: its span is said, as no date
        if said and not _recurring(clause, start, end, reach):
            inserts.setdefault(end, []).extend(said)
    for span in dict.fromkeys(s for s in spans if s not in placed):
        end = _where(clause, span, anchor, reach, past)
        if end is not None:
            inserts.setdefault(end, []).append(span)
    out, last = [], 0
    for end in sorted(inserts):
        said = inserts[end]
        hull = timeexpr.Span(min(s.start for s in said), max(s.end for s in said))
        out += [clause[last:end], hull.note(clause[:end])]
        last = end
    return "".join(out) + clause[last:]


def anchor_relative_dates(text: str, said_at: datetime | date | None, *, by_tense: bool = True) -> str:
    """`text` with the dates each relative date expression meant on `said_at` right after it, in
    parentheses; unchanged without a moment, without a relative date, or where the dates are written.
    `by_tense` False: a date whose reading hangs on its sentence's tense (a bare weekday or weekend, the last
    one of the past, the coming one of the future) is left as said, for a reader who cannot be asked:
    "We met on Monday and will talk on Friday" (but a day something was arranged for, "I booked the dentist for
    Monday", is the coming one either way: `timeexpr.arranged_for`)."""
    if not text or said_at is None:
        return text
    anchor = said_at.date() if isinstance(said_at, datetime) else said_at
    said = timeexpr.mentions(text, anchor)
    if not said:
        return text
    relative = set(said) - set(timeexpr.mentions(text, anchor - _ELSEWHEN))
    if not relative:
        return text
    out = []
    for sentence in _SENTENCE.finditer(text):
        past = timeexpr.tense(sentence.group())
        out += [_anchor_clause(m.group(), anchor, relative, past, by_tense) for m in _CLAUSE.finditer(sentence.group())]
    return "".join(out)


def without_dates(text: str) -> str:
    """`text` without the dates `anchor_relative_dates` writes: a turn as it was said, to find it quoted."""
    return _WRITTEN_AFTER.sub("", text)


@lru_cache(maxsize=4096)
def dated_as_said(text: str, said_at: datetime | None) -> str:
    """`text` as a context shows it to a question that asks when (`rag.context`): its relative dates anchored,
    a bare weekday left as said (`by_tense` False) unless it is a day something was arranged for ("I booked the
    dentist for Monday", the coming one). Cached: the same turns and memories come back query after query."""
    return anchor_relative_dates(text, said_at, by_tense=False)
