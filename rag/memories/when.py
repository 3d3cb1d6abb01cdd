"""What is ahead: the days a stated plan or upcoming event means, read on the day it was said (en/ru/zh).

A companion keeps "I'm nervous about my exam next Friday", "В субботу мы едем на дачу", "我下个月要去上海出差"
to ask about them later, when "next Friday" is another day. `memoryhub.timeexpr` reads the date words;
here each relative one gets the days it meant written after it, in ISO form, as people's bios do
("next Friday (2024-05-10)", "下个月(2024-06)"). The readers take a bare weekday or weekend ("в субботу", "on
Saturday", "на выходных") by its sentence's tense (`timeexpr.tense`): the coming one of the future, the last
one told in the past, and a weekday said with neither the last one, as a chat about what happened mostly
means. Here an expression is read apart from its sentence, with the text's tense (`told_in_past`), and a text
told of something ahead and not in the past is a plan: its bare weekday is the coming one, said on that very
weekday a week on (today would be "today"), as the readers take a weekday of the future.
A recurring time ("every Friday", "по субботам", "每周六") names no one date: such a text is read for none.
Pure functions, no database.
"""

from __future__ import annotations

import re
from datetime import date, timedelta

from memoryhub import timeexpr

_RECURRING = re.compile(
    r"\b(?:every|each|usually|weekly|daily|monthly|yearly)\b|\b(?:once|twice|\w+\s+times)\s+a\s+(?:day|week|month|year)\b"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days\b|\b(?:weekends|mornings|evenings|nights)\b"
    r"|(?<!\w)(?:кажд|ежедневн|еженедельн|ежемесячн|ежегодн|обычно)\w*|(?<!\w)раз\s+в\s+(?:день|неделю|месяц|год)"
    r"|(?<!\w)по\s+(?:понедельник|вторник|сред|четверг|пятниц|суббот|воскресень|выходн|утр|вечер)ам(?!\w)"
    r"|[每]|通常|平时",
    re.IGNORECASE)
# Words of an expression that looks back ("last Friday", "в прошлую субботу", "上周六", "3 days ago"): it is
# read as said, never as the coming one.
_BACK = re.compile(r"\b(?:ago|last|past|previous|before)\b|назад|прошл|вчера|上(?![午班学])|[前昨]|去年", re.IGNORECASE)
# Days already written after an expression: a text is never anchored twice.
_WRITTEN = re.compile(r"\(\d{4}(?:-\d{2}){0,2}(?: – \d{4}(?:-\d{2}){0,2})?\)")


def _read(expression: str, said_on: date, told_in_past: bool) -> timeexpr.Span | None:
    # Read apart from its sentence, the expression has no tense of its own ("this weekend", "в субботу"): the
    # caller's says it, and a plan's is the future.
    spans = timeexpr.mentions(expression, said_on, past=told_in_past)
    if not spans:
        return None
    hull = timeexpr.Span(min(s.start for s in spans), max(s.end for s in spans))
    if hull.end >= said_on or told_in_past or _BACK.search(expression):
        return hull
    # Read back, but not told so: the coming one, a week on for a day or a weekend, a year on for a month or
    # a season ("this summer" said in the autumn of a plan).
    later = said_on + (timedelta(days=7) if hull.days <= 7 else timedelta(days=365))
    ahead = [s for s in timeexpr.mentions(expression, later) if s.start > said_on]
    return timeexpr.Span(min(s.start for s in ahead), max(s.end for s in ahead)) if ahead else hull


def relative_dates(text: str, said_on: date, *, told_in_past: bool = False) -> list[tuple[int, int, timeexpr.Span]]:
    """Each relative date expression of `text` (`timeexpr.relative_expressions`: no digit, month or holiday
    in it) with the days it meant on `said_on`; a bare weekday or weekend is the coming one unless the
    text is `told_in_past`. None in a text that names a recurring time."""
    if _RECURRING.search(text):
        return []
    out = []
    for start, end in timeexpr.relative_expressions(text, said_on):
        # A day something was arranged for is ahead however the arranging is told ("I booked a table for Saturday").
        span = _read(text[start:end], said_on, told_in_past and not timeexpr.arranged_for(text, start, end))
        if span is not None:
            out.append((start, end, span))
    return out


def names_days_ahead(text: str, said_on: date, *, told_in_past: bool = False) -> bool:
    """Whether `text` names a day after `said_on`: a relative date read as `relative_dates` does, or a date
    written out ("on June 3", "in April" said in March). Today is not ahead."""
    if _RECURRING.search(text):
        return False
    # Most chat lines name no date: one reading decides them.
    said = timeexpr.mentions(text, said_on)
    if not said or any(span.start > said_on for span in said):
        return bool(said)
    return any(span.start > said_on for _, _, span in relative_dates(text, said_on, told_in_past=told_in_past))


def anchor_dates(text: str, said_on: date, *, told_in_past: bool = False) -> str:
    """`text` with the days each relative date expression meant on `said_on` right after it, in parentheses:
    "I'm nervous about my exam next Friday (2024-05-10)". Unchanged where the days are written already."""
    if _WRITTEN.search(text):
        return text
    out, last = [], 0
    for start, end, span in relative_dates(text, said_on, told_in_past=told_in_past):
        if start < last:
            continue
        out += [text[last:end], span.note(text[start:end])]
        last = end
    return "".join(out) + text[last:]
