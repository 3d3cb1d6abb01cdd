"""Dates that a text mentions, resolved against the moment it was said (English, Russian, Chinese).

Conversation memory is full of relative time: "last Friday", "на прошлой неделе", "上个月". A
question asks in absolute terms ("Where was Tim in the week before 16 November 2023?", "в июле
2022") or just "when". Both sides are turned into the same date *terms*, which BM25 matches like
words, so no extra ranking stage is needed:

- ``@d2023-11-10`` a day, ``@w2023-45`` an ISO week, ``@m2023-11`` a month, ``@mo11`` a month of
  any year ("in June"), ``@y2023`` a year. A span yields the terms of every unit it overlaps that is
  not much longer than the span itself (a week yields its days, its week and its month).
- ``@t``: the text refers to a time at all; a "when" question asks for it (`asks_when`).
- ``@dur``: the text states how long something lasted ("for 3 years", "уже два года", "养了三年");
  a "how long" question asks for it (`asks_how_long`).

`chunk_terms(text, said_at)` gives a stored turn the terms of the day it was said plus those of
every expression it contains, resolved against that day; `query_terms(query, now)` gives a query
the terms of the dates it names (relative ones resolved against now). Rules, not a model: the
forms people write in chat, kept small enough to read. Pure Python, no Django.
"""

from __future__ import annotations

import calendar
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime, timedelta

__all__ = ["Span", "asks_how_long", "asks_when", "chunk_terms", "mentions", "query_terms", "query_weights",
           "span_terms"]

TIME_REFERENCE = "@t"
DURATION = "@dur"


@dataclass(frozen=True)
class Span:
    """An inclusive range of days; `month_only` marks "June" said without a year."""

    start: date
    end: date
    month_only: int = 0

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1


def _day(d: date) -> Span:
    return Span(d, d)


def _month(year: int, month: int) -> Span:
    return Span(date(year, month, 1), date(year, month, calendar.monthrange(year, month)[1]))


def _year(year: int) -> Span:
    return Span(date(year, 1, 1), date(year, 12, 31))


def _week_of(d: date) -> Span:
    monday = d - timedelta(days=d.weekday())
    return Span(monday, monday + timedelta(days=6))


def _shift_month(year: int, month: int, delta: int) -> tuple[int, int]:
    index = year * 12 + (month - 1) + delta
    return index // 12, index % 12 + 1


def _weekday_before(anchor: date, weekday: int) -> date:
    """The last such weekday strictly before the anchor ("last Friday", "в пятницу")."""
    return anchor - timedelta(days=(anchor.weekday() - weekday - 1) % 7 + 1)


def _weekday_after(anchor: date, weekday: int) -> date:
    return anchor + timedelta(days=(weekday - anchor.weekday() - 1) % 7 + 1)


def _past_month(anchor: date, month: int) -> int:
    """The year of a month named without one, as said on `anchor`: the latest that is not ahead."""
    return anchor.year if month <= anchor.month else anchor.year - 1


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def _season(year: int, season: str) -> Span:
    # Northern-hemisphere meteorological seasons; winter belongs to the year it starts in.
    if season == "winter":
        return Span(date(year, 12, 1), date(year + 1, 3, 1) - timedelta(days=1))
    first = {"spring": 3, "summer": 6, "autumn": 9}[season]
    return Span(date(year, first, 1), _month(year, first + 2).end)


# ---------------------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------------------

_EN_MONTHS = {name: i for i, names in enumerate(
    [("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
     ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
     ("november", "nov"), ("december", "dec")], start=1) for name in names}
_EN_MONTH = r"(?P<month>" + "|".join(sorted(_EN_MONTHS, key=len, reverse=True)) + r")\.?"
_EN_WEEKDAYS = {d: i for i, d in enumerate(
    ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"])}
_EN_WEEKDAY = r"(?P<weekday>" + "|".join(_EN_WEEKDAYS) + r")"
_EN_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
               "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "couple of": 2, "a couple of": 2,
               "few": 3, "a few": 3, "several": 3}
_EN_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")"
_EN_UNIT = r"(?P<unit>day|week|month|year)s?"
_SEASONS_EN = {"spring": "spring", "summer": "summer", "autumn": "autumn", "fall": "autumn", "winter": "winter"}

# Russian months by stem, which covers every case form ("май", "мая", "мае", "в июле", "июля").
_RU_MONTHS = {"январ": 1, "феврал": 2, "март": 3, "апрел": 4, "ма": 5, "июн": 6, "июл": 7, "август": 8,
              "сентябр": 9, "октябр": 10, "ноябр": 11, "декабр": 12}
_RU_MONTH = r"(?P<month>январ[ьяюе]|феврал[ьяюе]|март[ауе]?|апрел[ьяюе]|ма[йяюе]|июн[ьяюе]|июл[ьяюе]|" \
            r"август[ауе]?|сентябр[ьяюе]|октябр[ьяюе]|ноябр[ьяюе]|декабр[ьяюе])"
_RU_WEEKDAYS = {"понедельник": 0, "вторник": 1, "сред": 2, "четверг": 3, "пятниц": 4, "суббот": 5,
                "воскресень": 6}
_RU_WEEKDAY = r"(?P<weekday>понедельник|вторник|сред[ауы]|четверг|пятниц[ауы]|суббот[ауы]|воскресень[ея])"
_RU_NUMBERS = {"один": 1, "одну": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6,
               "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "пару": 2, "несколько": 3}
_RU_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(_RU_NUMBERS) + r")"
_RU_UNITS = {"д": "day", "н": "week", "м": "month", "г": "year", "л": "year"}
_RU_UNIT = r"(?P<unit>дн(?:я|ей)|день|недел[ьюяи]|месяц(?:а|ев)?|год(?:а)?|лет)"
_SEASONS_RU = {"весн": "spring", "лет": "summer", "осен": "autumn", "зим": "winter"}

_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_NUM = r"(?:\d{1,4}|[零一二两三四五六七八九十]{1,3})"


def _zh_number(text: str) -> int:
    if text.isdigit():
        return int(text)
    if "十" in text:
        tens, _, ones = text.partition("十")
        return (_ZH_DIGITS.get(tens, 1) if tens else 1) * 10 + (_ZH_DIGITS.get(ones, 0) if ones else 0)
    value = 0
    for ch in text:
        value = value * 10 + _ZH_DIGITS[ch]
    return value


def _count(word: str, table: dict[str, int]) -> int:
    word = word.strip().lower()
    return int(word) if word.isdigit() else table.get(word, 1)


# ---------------------------------------------------------------------------------------------------------
# Rules: each pattern turns a match and the anchor into spans
# ---------------------------------------------------------------------------------------------------------

_FLAGS = re.IGNORECASE


def _ago(n: int, unit: str, anchor: date, sign: int = -1) -> Span:
    if unit == "day":
        return _day(anchor + timedelta(days=sign * n))
    if unit == "week":
        return _week_of(anchor + timedelta(days=sign * 7 * n))
    if unit == "month":
        return _month(*_shift_month(anchor.year, anchor.month, sign * n))
    return _year(anchor.year + sign * n)


def _relative_unit(which: str, unit: str, anchor: date) -> Span:
    delta = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}[which]
    if unit == "week":
        return _week_of(anchor + timedelta(days=7 * delta))
    if unit == "weekend":
        saturday = (_weekday_before(anchor, 5) if delta <= 0 and anchor.weekday() < 5
                    else _weekday_after(anchor, 5) if delta > 0 else anchor - timedelta(days=anchor.weekday() - 5))
        if delta < 0 and anchor.weekday() >= 5:
            saturday -= timedelta(days=7)
        return Span(saturday, saturday + timedelta(days=1))
    if unit == "month":
        return _month(*_shift_month(anchor.year, anchor.month, delta))
    return _year(anchor.year + delta)


def _part_of_month(part: str, span: Span) -> Span:
    part = part.lower()
    if part in ("beginning", "start", "early", "начал", "начале", "初"):
        return Span(span.start, span.start + timedelta(days=9), span.month_only)
    if part in ("end", "late", "конц", "конце", "底", "末"):
        return Span(span.end - timedelta(days=9), span.end, span.month_only)
    return Span(span.start + timedelta(days=9), span.start + timedelta(days=19), span.month_only)


def _month_span(month: int, year: int | None, anchor: date, *, query: bool) -> Span:
    if year is not None:
        return _month(year, month)
    if query:
        # "in June" in a question: any year's June (the @mo term), plus the most recent one.
        span = _month(_past_month(anchor, month), month)
        return Span(span.start, span.end, month)
    return _month(_past_month(anchor, month), month)


class _Claims:
    """Stretches of a text already read as a date: a pattern tried later (a weekday, a bare month)
    must not read a part of a longer expression found first (a range, "the week before ...")."""

    def __init__(self) -> None:
        self.taken: list[tuple[int, int]] = []

    def free(self, m: re.Match[str]) -> bool:
        """Claim the match's span unless it overlaps one claimed before."""
        if any(m.start() < end and start < m.end() for start, end in self.taken):
            return False
        self.taken.append(m.span())
        return True


def _en(text: str, anchor: date, query: bool) -> Iterable[Span]:
    lowered = text.lower()
    free = _Claims().free

    # Ranges first: "between August 11 and August 15 2023", "the week before 16 November 2023".
    for m in re.finditer(r"\bthe (?P<unit>week|weekend|day|month) (?P<dir>before|after) (?P<rest>[^?.!,;]{3,40})",
                         lowered):
        inner = list(_en_absolute(m.group("rest"), anchor, query))
        if inner and free(m):
            pivot = inner[0]
            length = {"day": 1, "weekend": 2, "week": 7, "month": 30}[m.group("unit")]
            if m.group("dir") == "before":
                yield Span(pivot.start - timedelta(days=length), pivot.start - timedelta(days=1))
            else:
                yield Span(pivot.end + timedelta(days=1), pivot.end + timedelta(days=length))
    for m in re.finditer(r"\bbetween (?P<a>[^?.!;]{3,30}?) and (?P<b>[^?.!;]{3,30})", lowered):
        a = list(_en_absolute(m.group("a") + " " + _trailing_year(m.group("b")), anchor, query))
        b = list(_en_absolute(m.group("b"), anchor, query))
        if a and b and a[0].start <= b[-1].end and (b[-1].end - a[0].start).days <= 400 and free(m):
            yield Span(a[0].start, b[-1].end)
    for m in re.finditer(r"\b(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th) week of " + _EN_MONTH
                         + r"(?:,? (?P<year>(?:19|20)\d\d))?", lowered):
        if free(m):
            month = _EN_MONTHS[m.group("month")]
            span = _month_span(month, int(m.group("year")) if m.group("year") else None, anchor, query=query)
            nth = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
            if m.group("nth") == "last":
                yield Span(span.end - timedelta(days=6), span.end, span.month_only)
            else:
                start = span.start + timedelta(days=7 * nth[m.group("nth")])
                yield Span(start, start + timedelta(days=6), span.month_only)
    for m in re.finditer(r"\b(?:the )?(?P<part>beginning|start|end|middle|early|late|mid)(?: of|-| )\s*"
                         + _EN_MONTH + r"(?:,? (?P<year>(?:19|20)\d\d))?", lowered):
        if free(m):
            month = _EN_MONTHS[m.group("month")]
            span = _month_span(month, int(m.group("year")) if m.group("year") else None, anchor, query=query)
            yield _part_of_month(m.group("part"), span)

    for pattern, resolve in _EN_RULES:
        for m in re.finditer(pattern, lowered):
            if not free(m):
                continue
            span = resolve(m, anchor, query)
            if span is not None:
                yield span


def _trailing_year(text: str) -> str:
    m = re.search(r"\b(?:19|20)\d\d\b", text)
    return m.group(0) if m else ""


def _en_absolute(text: str, anchor: date, query: bool) -> Iterable[Span]:
    for pattern, resolve in _EN_RULES[:4]:
        for m in re.finditer(pattern, text):
            span = resolve(m, anchor, query)
            if span is not None:
                yield span


def _en_month_day(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    month = _EN_MONTHS[m.group("month")]
    day = int(m.group("day"))
    year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
    found = _safe_date(year, month, day)
    return _day(found) if found else None


def _en_month_year(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    return _month(int(m.group("year")), _EN_MONTHS[m.group("month")])


def _en_iso(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    found = _safe_date(int(m.group("y")), int(m.group("m")), int(m.group("d")))
    return _day(found) if found else None


def _en_month_alone(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    word = m.group("month")
    if word == "may" and not m.group("prep"):
        return None  # the verb: only "in/of/since May" is the month
    if word in ("mar", "jun", "jan") and not m.group("prep"):
        return None
    return _month_span(_EN_MONTHS[word], None, anchor, query=query)


def _en_year(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    return _year(int(m.group("year")))


def _en_nth(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    day = int(m.group("day"))
    year, month = (anchor.year, anchor.month) if day <= anchor.day else _shift_month(anchor.year, anchor.month, -1)
    found = _safe_date(year, month, day)
    return _day(found) if found else None


def _en_simple(offset: int) -> object:
    def resolve(m: re.Match[str], anchor: date, query: bool) -> Span:
        return _day(anchor + timedelta(days=offset))
    return resolve


def _en_relative(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _relative_unit(m.group("which"), m.group("unit"), anchor)


def _en_weekday(m: re.Match[str], anchor: date, query: bool) -> Span:
    weekday = _EN_WEEKDAYS[m.group("weekday")]
    if m.group("which") in ("next", "this coming", "coming"):
        return _day(_weekday_after(anchor, weekday))
    return _day(_weekday_before(anchor, weekday))


def _en_ago(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _ago(_count(m.group("n"), _EN_NUMBERS), m.group("unit"), anchor)


def _en_in(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _ago(_count(m.group("n"), _EN_NUMBERS), m.group("unit"), anchor, sign=1)


def _en_season(m: re.Match[str], anchor: date, query: bool) -> Span:
    if m.group("season2"):
        return _season(int(m.group("year")), _SEASONS_EN[m.group("season2")])
    return _season(anchor.year + {"last": -1, "this": 0, "next": 1}[m.group("which")], _SEASONS_EN[m.group("season")])


_EN_RULES: list[tuple[str, object]] = [
    (r"\b" + _EN_MONTH + r" (?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d\d))?\b", _en_month_day),
    (r"\b(?P<day>[0-3]?\d)(?:st|nd|rd|th)? (?:of )?" + _EN_MONTH + r",? (?P<year>(?:19|20)\d\d)?\b",
     _en_month_day),
    (r"\b" + _EN_MONTH + r",? (?P<year>(?:19|20)\d\d)\b", _en_month_year),
    (r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b", _en_iso),
    (r"\b(?P<prep>in |of |since |during |until |by |early |late )?" + _EN_MONTH + r"\b", _en_month_alone),
    (r"\b(?:(?P<which>last|this|next) (?P<season>spring|summer|autumn|fall|winter)"
     r"|(?P<season2>spring|summer|autumn|fall|winter) of (?P<year>(?:19|20)\d\d))\b", _en_season),
    (r"\b(?:in |of |since |during |until |by )(?P<year>(?:19|20)\d\d)\b", _en_year),
    (r"\bthe (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b", _en_nth),
    (r"\bday before yesterday\b", _en_simple(-2)),
    (r"\b(?:yesterday|last night)\b", _en_simple(-1)),
    (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", _en_simple(0)),
    (r"\btomorrow\b", _en_simple(1)),
    (r"\b(?P<which>last|past|previous|this|next|coming)(?: past)? (?P<unit>week|weekend|month|year)\b",
     _en_relative),
    (r"\b(?P<which>last|this past|this coming|next|coming|on|this)? ?" + _EN_WEEKDAY + r"\b", _en_weekday),
    (r"\b" + _EN_NUMBER + r" " + _EN_UNIT + r" ago\b", _en_ago),
    (r"\bin " + _EN_NUMBER + r" " + _EN_UNIT + r"\b", _en_in),
]


def _ru(text: str, anchor: date, query: bool) -> Iterable[Span]:
    lowered = text.lower().replace("ё", "е")
    free = _Claims().free

    def month_number(word: str) -> int:
        for stem, number in _RU_MONTHS.items():
            if word.startswith(stem) and (stem != "ма" or (len(word) == 3 and word[2] in "йяюе")):
                return number
        return 0

    for m in re.finditer(r"(?<!\w)(?P<day>[0-3]?\d)[-\s]*(?:го\s+)?" + _RU_MONTH + r"(?:\s+(?P<year>(?:19|20)\d\d))?",
                         lowered):
        month = month_number(m.group("month"))
        year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
        found = _safe_date(year, month, int(m.group("day")))
        if found and free(m):
            yield _day(found)
    for m in re.finditer(r"(?:в\s+|во\s+|с\s+|до\s+|к\s+)?(?:(?P<part>начал[ео]|конц[еа]|середин[еуы])\s+)?"
                         + r"(?<!\w)" + _RU_MONTH + r"(?:\s+(?P<year>(?:19|20)\d\d))?(?!\w)", lowered):
        month = month_number(m.group("month"))
        if not month or (month == 5 and not m.group(0).startswith(("в", "с", "до", "к")) and not m.group("year")):
            continue  # "мая"/"мае" alone is the month; "май" fine, but "мая" as a word part is not
        if free(m):
            span = _month_span(month, int(m.group("year")) if m.group("year") else None, anchor, query=query)
            yield _part_of_month(m.group("part")[:5] if m.group("part") else "", span) if m.group("part") else span
    for m in re.finditer(r"(?<!\w)(?:в\s+)?(?P<year>(?:19|20)\d\d)\s*(?:г\.|году|года|год)", lowered):
        if free(m):
            yield _year(int(m.group("year")))
    simple = {r"позавчера": -2, r"вчера": -1, r"сегодня": 0, r"послезавтра": 2, r"завтра": 1}
    for word, offset in simple.items():
        for m in re.finditer(r"(?<!\w)" + word + r"(?!\w)", lowered):
            if free(m):
                yield _day(anchor + timedelta(days=offset))
    relative = [
        (r"(?:на\s+)?(?P<which>прошл|эт|следующ)\w*\s+недел\w*", "week"),
        (r"(?:в\s+)?(?P<which>прошл|эт|следующ)\w*\s+выходн\w*", "weekend"),
        (r"(?:в\s+)?(?P<which>прошл|эт|следующ)\w*\s+месяц\w*", "month"),
        (r"(?:в\s+)?(?P<which>прошл|эт|следующ)\w*\s+год\w*", "year"),
    ]
    for pattern, unit in relative:
        for m in re.finditer(r"(?<!\w)" + pattern, lowered):
            if free(m):
                which = {"прошл": "last", "эт": "this", "следующ": "next"}[m.group("which")]
                yield _relative_unit(which, unit, anchor)
    for m in re.finditer(r"(?<!\w)(?:в\s+|во\s+)(?:(?P<which>прошл|эт|следующ)\w*\s+)?" + _RU_WEEKDAY, lowered):
        if free(m):
            weekday = next(n for stem, n in _RU_WEEKDAYS.items() if m.group("weekday").startswith(stem))
            next_one = m.group("which") == "следующ"
            yield _day(_weekday_after(anchor, weekday) if next_one else _weekday_before(anchor, weekday))
    for m in re.finditer(r"(?<!\w)" + _RU_NUMBER + r"\s+" + _RU_UNIT + r"\s+назад", lowered):
        if free(m):
            unit = _RU_UNITS[m.group("unit")[0]]
            yield _ago(_count(m.group("n"), _RU_NUMBERS), unit, anchor)
    for m in re.finditer(r"(?<!\w)(?:(?P<which>прошл|эт|следующ)\w*\s+)?(?P<season>весн|лет|осен|зим)(?:ой|ом|ою)"
                         r"(?:\s+(?P<year>(?:19|20)\d\d))?(?!\w)", lowered):
        if (m.group("which") or m.group("year")) and free(m):
            season = _SEASONS_RU[m.group("season")]
            if m.group("year"):
                yield _season(int(m.group("year")), season)
            else:
                yield _season(anchor.year + {"прошл": -1, "эт": 0, "следующ": 1}[m.group("which")], season)


def _zh(text: str, anchor: date, query: bool) -> Iterable[Span]:
    free = _Claims().free

    relative_years = {"前年": -2, "去年": -1, "今年": 0, "明年": 1}
    for m in re.finditer(r"(?:(?P<year>\d{4})年|(?P<rel>前年|去年|今年|明年))?(?P<month>" + _ZH_NUM + r")(?:个)?月"
                         r"(?:(?P<day>" + _ZH_NUM + r")[日号]|(?P<part>初|中旬|中|底|末))?", text):
        month = _zh_number(m.group("month"))
        if ("个" in m.group(0) and not m.group("day")) or not 1 <= month <= 12 or not free(m):
            continue  # "三个月" is a duration, not March
        year = (int(m.group("year")) if m.group("year")
                else anchor.year + relative_years[m.group("rel")] if m.group("rel") else None)
        if m.group("day"):
            found = _safe_date(year or _past_month(anchor, month), month, _zh_number(m.group("day")))
            if found:
                yield _day(found)
        else:
            span = _month_span(month, year, anchor, query=query)
            yield _part_of_month(m.group("part")[0], span) if m.group("part") else span
    for m in re.finditer(r"(?P<year>\d{4})年", text):
        if free(m):
            yield _year(int(m.group("year")))
    simple = {"大前天": -3, "前天": -2, "昨天": -1, "昨晚": -1, "今天": 0, "今晚": 0, "明天": 1, "后天": 2}
    for word, offset in simple.items():
        for m in re.finditer(word, text):
            if free(m):
                yield _day(anchor + timedelta(days=offset))
    for m in re.finditer(r"(?P<which>上|这|本|下)(?:个)?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])?", text):
        if free(m):
            delta = {"上": -1, "这": 0, "本": 0, "下": 1}[m.group("which")]
            week = _week_of(anchor + timedelta(days=7 * delta))
            if m.group("weekday"):
                yield _day(week.start + timedelta(days=_ZH_WEEKDAYS[m.group("weekday")]))
            else:
                yield week
    for m in re.finditer(r"(?P<which>上|这|本|下)(?:个)?月", text):
        if free(m):
            yield _relative_unit({"上": "last", "这": "this", "本": "this", "下": "next"}[m.group("which")],
                                 "month", anchor)
    for word, delta in {"前年": -2, "去年": -1, "今年": 0, "明年": 1}.items():
        for m in re.finditer(word, text):
            if free(m):
                yield _year(anchor.year + delta)
    for m in re.finditer(r"(?P<n>" + _ZH_NUM + r"|几|两)(?P<unit>天|个?星期|周|个月|年)(?:以?前)", text):
        if free(m):
            n = 3 if m.group("n") == "几" else _zh_number(m.group("n"))
            unit = m.group("unit")
            yield _ago(n, "day" if unit == "天" else "year" if unit == "年" else "month" if "月" in unit else "week",
                       anchor)


# ---------------------------------------------------------------------------------------------------------
# Public interface
# ---------------------------------------------------------------------------------------------------------

_CYRILLIC = re.compile("[\u0400-\u04ff]")
_HAN = re.compile("[\u4e00-\u9fff]")


def mentions(text: str, anchor: date, *, query: bool = False) -> list[Span]:
    """Every date span the text mentions, resolved against `anchor` (the day it was said)."""
    spans = list(_en(text, anchor, query))
    if _CYRILLIC.search(text):
        spans += _ru(text, anchor, query)
    if _HAN.search(text):
        spans += _zh(text, anchor, query)
    return [s for s in spans if s.start <= s.end]


def span_terms(span: Span) -> list[str]:
    """The terms of the units a span overlaps: days up to a fortnight, ISO weeks up to two
    months, months up to a season and a half, years always."""
    terms: list[str] = []
    days = span.days
    if days <= 14:
        terms += [f"@d{(span.start + timedelta(days=i)).isoformat()}" for i in range(days)]
    if days <= 62:
        weeks = {(span.start + timedelta(days=i)).isocalendar()[:2] for i in range(0, days, 1)}
        terms += [f"@w{y}-{w:02d}" for y, w in sorted(weeks)]
    if days <= 140:
        months = sorted({(d.year, d.month) for d in (span.start + timedelta(days=i) for i in range(days))})
        terms += [f"@m{y}-{m:02d}" for y, m in months]
        terms += sorted({f"@mo{m:02d}" for _, m in months})
    terms += [f"@y{y}" for y in range(span.start.year, span.end.year + 1)]
    return terms


def chunk_terms(text: str, said_at: datetime | date) -> list[str]:
    """A stored turn's date terms: the day it was said, every date it mentions, and @t when it
    mentions any."""
    anchor = said_at.date() if isinstance(said_at, datetime) else said_at
    spans = mentions(text, anchor)
    terms = span_terms(_day(anchor))
    for span in spans:
        terms += span_terms(span)
    if spans:
        terms.append(TIME_REFERENCE)
    if states_duration(text):
        terms.append(DURATION)
    return terms


# A stated duration: "for 3 years", "under a year", "the past few weeks", "уже два года", "три месяца",
# "养了三年", "两个月了". Counted durations followed by "ago"/"назад"/"前" are dates, found above. One
# pattern per script, run only when the text has the script and a unit word: a long dialogue query
# or turn has none most of the time, and one alternation tried at every position cost ~0.3 ms.
_DURATION_EN = re.compile(
    r"\b(?:for|over|about|almost|nearly|under)\s+(?:the\s+(?:past|last)\s+)?(?:a\s+|an\s+)?"
    r"(?:\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|few|couple of|several)?\s*"
    r"(?:day|week|month|year|decade)s?\b(?!\s+ago)"
)
_DURATION_RU = re.compile(
    r"(?<!\w)(?:\d{1,3}|один|одну|два|две|три|четыре|пять|шесть|семь|восемь|девять|десять|пару|несколько)\s+"
    r"(?:дн(?:я|ей)|день|недел[ьюяи]|месяц(?:а|ев)?|год(?:а)?|лет)(?!\s+назад)(?!\w)"
)
_DURATION_ZH = re.compile(
    r"(?<!第)(?:\d{1,3}|[一二两三四五六七八九十几]{1,3})(?:个)?(?:天|星期|周|月|年)(?:了|多|半)(?!前|以前|后|以后)"
)
_UNITS_EN = ("day", "week", "month", "year", "decade")
_UNITS_RU = ("дн", "день", "недел", "месяц", "год", "лет")
_UNITS_ZH = ("天", "星期", "周", "月", "年")
_HOW_LONG_EN = re.compile(r"\bhow (?:long|many (?:days|weeks|months|years))\b(?!\s+ago)")
_HOW_LONG_RU = re.compile(r"(?<!\w)(?:как долго|сколько (?:времени|дней|недель|месяцев|лет))(?!\s+назад)(?!\w)")
_HOW_LONG_ZH = re.compile(r"多久(?!以前)|多长时间")


def states_duration(text: str) -> bool:
    lowered = text.lower()
    return bool(
        (any(u in lowered for u in _UNITS_EN) and _DURATION_EN.search(lowered))
        or (_CYRILLIC.search(lowered) and any(u in lowered for u in _UNITS_RU) and _DURATION_RU.search(lowered))
        or (_HAN.search(lowered) and any(u in lowered for u in _UNITS_ZH) and _DURATION_ZH.search(lowered))
    )


def asks_how_long(query: str) -> bool:
    lowered = query.lower()
    return bool(
        ("how " in lowered and _HOW_LONG_EN.search(lowered))
        or (("как долго" in lowered or "сколько" in lowered) and _HOW_LONG_RU.search(lowered))
        or (("多久" in lowered or "多长时间" in lowered) and _HOW_LONG_ZH.search(lowered))
    )


_WHEN = re.compile(
    r"\b(?:when|what (?:time|date|day|month|year)|which (?:day|week|month|year)|how long ago|since when)\b"
    r"|(?<!\w)(?:когда|в каком (?:году|месяце)|какого числа|в какой день|сколько (?:дней|лет|месяцев) назад)(?!\w)"
    r"|什么时候|哪天|哪一天|几月|几号|哪年|哪一年|多久以前|何时",
)


def asks_when(query: str) -> bool:
    return bool(_WHEN.search(query.lower()))


def query_terms(query: str, now: datetime | date) -> list[str]:
    """A query's date terms: the dates it names (a month without a year as @mo, any year's), and
    @t when it asks "when"."""
    anchor = now.date() if isinstance(now, datetime) else now
    terms: list[str] = []
    for span in mentions(query, anchor, query=True):
        if span.month_only:
            # A month named without a year: only the month-of-year term says it; the most
            # recent such month is a guess, not something the question stated.
            terms.append(f"@mo{span.month_only:02d}")
            continue
        terms += span_terms(span)
    if asks_when(query):
        terms.append(TIME_REFERENCE)
    if asks_how_long(query):
        terms.append(DURATION)
    return terms


# How much a query's date terms weigh in BM25, where each query word weighs 1. The terms of a level
# share its weight, so "the week before 16 November" (seven day terms) weighs like "16 November";
# a year or a month of any year says less than a month or a day. Chosen on the tuning half of the
# LoCoMo split (conversations 0-2): 1x, 2x, 3x differ by < 0.005 recall@10; see docs/retrieval.md.
DATE_WEIGHT = 2.0
WHEN_WEIGHT = 1.0
_LEVELS = (("@mo", 0.5), ("@d", 1.0), ("@w", 1.0), ("@m", 1.0), ("@y", 0.5))


def _level(term: str) -> tuple[str, float]:
    return next(((prefix, weight) for prefix, weight in _LEVELS if term.startswith(prefix)), ("", 1.0))


def query_weights(query: str, now: datetime | date) -> dict[str, float]:
    """`query_terms` with their BM25 weights."""
    terms = query_terms(query, now)
    per_level: dict[str, int] = {}
    for term in terms:
        per_level[_level(term)[0]] = per_level.get(_level(term)[0], 0) + 1
    weights = {}
    for term in terms:
        if term in (TIME_REFERENCE, DURATION):
            weights[term] = WHEN_WEIGHT
            continue
        prefix, weight = _level(term)
        weights[term] = DATE_WEIGHT * weight / per_level[prefix]
    return weights
