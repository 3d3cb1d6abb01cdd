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
forms people write in chat (dates, relative days and weeks, ranges, "the week of", ordinal
weekdays, holidays), kept small enough to read. A text is split into words once and a rule is tried
only when one of its words occurs, since most turns name no date. Pure Python, no Django.
"""

from __future__ import annotations

import calendar
import contextlib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import date, datetime, timedelta

__all__ = ["Span", "asks_how_long", "asks_last_conversation", "asks_when", "chunk_terms", "last_conversation_phrases",
           "mentions", "query_terms", "query_weights", "span_terms", "tense"]

TIME_REFERENCE = "@t"
DURATION = "@dur"


@dataclass(frozen=True)
class Span:
    """An inclusive range of days; `month_only` marks "June" said without a year; `either` marks one of two
    readings a question leaves open (`_either_side`), asked for by its days and week only."""

    start: date
    end: date
    month_only: int = 0
    either: bool = False

    @property
    def days(self) -> int:
        return (self.end - self.start).days + 1

    def iso(self) -> str:
        """`2024-05-14` for a day, `2024-04` for a whole month, `2023` for a whole year, else `start – end`:
        what a relative date meant, written after it in a bio or a plan ("next Friday (2024-05-10)")."""
        start, end = self.start, self.end
        if start == end:
            return start.isoformat()
        if start.year == end.year and (start.month, start.day, end.month, end.day) == (1, 1, 12, 31):
            return str(start.year)
        if (start.year, start.month) == (end.year, end.month) and start.day == 1 and \
                end.day == calendar.monthrange(end.year, end.month)[1]:
            return f"{start.year}-{start.month:02d}"
        return f"{start.isoformat()} – {end.isoformat()}"

    def note(self, said: str) -> str:
        """`iso()` in parentheses, to write right after the expression `said`: " (2024-05-10)", and with no space
        after a Chinese one, whose writing has none between words ("我下个月(2024-06)要去")."""
        return f"({self.iso()})" if said and _HAN.match(said[-1]) else f" ({self.iso()})"


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


def _said_year(anchor: date, month: int, query: bool, said: re.Match[str] | None = None) -> int:
    """The year of a month named without one, where `said` found it (its clause or sentence tells the tense,
    `_tense_text`). A question asks about the latest that is not ahead; so does a stored turn told in the past
    ("in December we skied", said in November), but one that is not means the coming month when it is at most
    two months ahead ("my birthday is in April", "день рождения в апреле", said in March; as for holidays), and
    one that speaks of the future or an intention the coming month however far ("We will fly to Rome in March",
    "В марте поедем в Рим", "我们三月要去罗马", said in December), as does a month something was arranged for
    ("my boss approved my vacation for March", `_arranged_for`)."""
    text = _tense_text(said) if said is not None else ""
    ahead = month != anchor.month
    if not query and ahead and (((month - anchor.month) % 12 <= 2 and not _PAST.search(text))
                                or tense(text) is False or (said is not None and _arranged_for(said))):
        return anchor.year + (1 if month < anchor.month else 0)
    return _past_month(anchor, month)


# A text told in the past: an English verb in -ed or a common irregular past, a Russian past verb (-л, -ла,
# -ло, -ли, reflexive too), a Chinese 了 or 过. Crude on purpose: it only keeps a month a little ahead in the
# past, as every month was read before; "excited" or "школа" read as past cost nothing more than that.
_PAST = re.compile(
    r"(?<![a-z])(?:[a-z]{2,}ed|was|were|did|had|went|got|came|saw|made|took|gave|told|said|ran|ate|met|bought|"
    r"spent|left|found|thought|felt|began|won|lost|flew|drove|wrote|sang|swam)(?![a-z])"
    r"|(?<![а-яё])[а-яё]{2,}(?:л|ла|ло|ли)(?:сь|ся)?(?![а-яё])|[了过]",
    re.IGNORECASE,
)


# A weekend said without "last" or "next" ("on the weekend", "this weekend", "на выходных", "周末") is the
# coming one or the one just past by the tense of its sentence. Past is `_PAST` less the words it takes for
# past that are common beside a weekend and are none ("I need to", "so excited", "как дела", "为了", "不过",
# "过来"); what says the future or an intention ("will", "going to", "поедем", "собираемся", "打算", "要")
# outweighs a past word in the same sentence ("I was thinking we will hike this weekend"); so does a promise or an
# invitation, whose day is that of what was promised ("Дима обещал подменить меня в понедельник", "Tom invited us
# for Saturday", "小王答应周一帮我代班"). Of "собирать(ся)" only
# the reflexive intends ("собираемся", "собирался"): "в выходные собирали яблоки" is told in the past. The 会 of a
# gathering ("音乐会", "聚会", "开会", "机会") or of "一会儿" is no "will".
_NOT_PAST = frozenset({"need", "indeed", "speed", "excited", "interested", "tired", "bored", "worried", "scared",
                       "supposed", "дела", "тепло", "весело", "мало", "светло", "школа", "сила", "число", "числа",
                       "мысли", "цели"})
_ZH_PAST = re.compile(r"(?<![为除])了(?!解)|(?<![不难])过(?![来去])")
_FUTURE = re.compile(
    r"(?<![a-z'])(?:will|shall|gonna|wanna|going to|plan|plans|planning|want to|wants to|hope to|hoping to|"
    r"would like|would love|intend|intends|about to|looking forward|can't wait|need to|needs to|have to|has to|"
    r"let's|promised to|promise to|promises to|invited (?:me|us))(?![a-z])"
    r"|'ll(?![a-z])|'d (?:like|love)"
    r"|(?<![а-яё])(?:буд(?:у|ем|ешь|ет|ете|ут)|собира(?:юсь|ешься|ется|емся|етесь|ются|лс[яь]|лась|лось|лись)|"
    r"планиру\w*|хоч(?:у|ешь|ет)|хотим|хотите|хотят|давай\w*|"
    r"надо|нужно|(?:по|при|у|за|вы|съ)ед(?:у|ем|ешь|ет|ете|ут)|(?:пой|зай|вый|уй)д[уеё]\w*|съездим|сходим|"
    r"(?:по)?обеща(?:л|ла|ли|ю|ет|ют)|пригласил[аи]?|позвал[аи]?)(?![а-яё])"
    r"|打算|准备|计划|想|答应|邀请|(?<![重主只])要|将|(?<![乐唱晚聚舞约宴开大动机社学协展年一])会(?![议儿])",
    re.IGNORECASE,
)
# The present told of what is ahead, weaker than `_FUTURE`: it counts only in a sentence with no past word. The
# present of a schedule is one ("Emma starts kindergarten in September", said in June, is the coming September). A
# weekday or weekend names no time going on now, so its present is a plan: the English progressive ("I'm meeting
# Tom on Saturday", "what are you doing on Friday?", "we are celebrating on Friday") and "have a/my …"
# ("On Friday I have my dentist appointment", "Tom has his exam on Monday"); the Russian imperfective present
# of the verbs of motion and of "встречаться" ("в субботу едем на дачу", "идём", "летим", "приезжает",
# "встречаемся"); an invitation in the present ("Катя зовёт в субботу в театр", "Kate invites us on Friday");
# a Chinese 去 or 来 without 了 or 过 ("星期五我们去爬山"; not 去年, 去世, 过去, 失去, 后来, 原来, 以来, 来自).
_PRESENT_FOR_FUTURE = re.compile(
    r"(?:'m|'re|'s|(?<![a-z])(?:am|are|is)(?:\s+(?:i|you|we|they|he|she))?)\s+[a-z]{2,}ing(?![a-z])"
    r"|(?<![a-z])(?:starts|begins|opens|graduates|is\s+due|are\s+due)(?![a-z])"
    r"|(?<![a-z])invites?(?![a-z])"
    r"|(?<![a-z])(?:have|has)\s+(?:an?|my|our|your|his|her|their)(?![a-z])"
    r"|(?<![а-яё])(?:ид(?:у|[её]шь|[её]т|[её]м|[её]те|ут)|ед(?:у|ешь|ет|ем|ете|ут)|лет(?:ишь|ит|им|ите|ят)|лечу|"
    r"плыв(?:у|[её]шь|[её]т|[её]м|[её]те|ут)|(?:при|у|вы|за|от|пере)(?:езжа|лета)(?:ю|ешь|ет|ем|ете|ют)|"
    r"встреча(?:юсь|ешься|ется|емся|етесь|ются)|зов(?:у|[её]шь|[её]т|[её]м|[её]те|ут)|"
    r"жен(?:юсь|ишься|ится|имся|итесь|ятся)|выход(?:ит|ишь)\s+замуж|выхожу\s+замуж|"
    r"приглаша(?:ю|ешь|ет|ем|ете|ют))(?![а-яё])"
    r"|(?<![过失])去(?![年世了过])|(?<![后原本看起出以从向未])来(?![自了过])",
    re.IGNORECASE,
)
# A weekend or weekday that recurs: "usually at the weekend", "в выходные обычно", "周末我一般…", "周末我喜欢…"
# (a liking is no one weekend), "every Saturday", "周六我一般…". "Every weekend", "on weekends", "по выходным",
# "каждую субботу", "每个周末", "每周六" are not read at all. "I'd love to", like "I'd like to", is a wish.
_HABITUAL = re.compile(
    r"(?<![a-z])(?:usually|always|often|normally|typically|generally|sometimes|every|enjoy|enjoys|"
    r"(?<!'d )(?<!would )(?:like|love) to)(?![a-z])"
    r"|(?<![а-яё])(?:обычно|всегда|часто|иногда|постоянно|кажд\w*|люб(?:лю|ишь|ит|им|ите|ят))(?![а-яё])"
    r"|一般|通常|经常|常常|平时|总是|往往|喜欢|每",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?;\n。！？；]")


def _sentence_start(m: re.Match[str]) -> int:
    """Where the sentence a match stands in begins."""
    return max((end.end() for end in _SENTENCE_END.finditer(m.string, 0, m.start())), default=0)


def _sentence(m: re.Match[str]) -> str:
    """The sentence a match stands in: a tense is a sentence's, not a whole turn's."""
    text = m.string
    found = _SENTENCE_END.search(text, m.end())
    return text[_sentence_start(m):found.start() if found else len(text)]


# Where a clause ends inside a sentence: its tense is the weekday's first (`_tense_at`).
_CLAUSE_BREAK = re.compile(r"[,:—–，：、]|\s(?:and|but|so|while|а|но|и|зато)\s", re.IGNORECASE)


def _clause(m: re.Match[str]) -> str:
    """The clause of its sentence a match stands in, between commas and conjunctions."""
    sentence_start = _sentence_start(m)
    found = _SENTENCE_END.search(m.string, m.end())
    sentence_end = found.start() if found else len(m.string)
    start = max((b.end() for b in _CLAUSE_BREAK.finditer(m.string, sentence_start, m.start())), default=sentence_start)
    after = _CLAUSE_BREAK.search(m.string, m.end(), sentence_end)
    return m.string[start:after.start() if after else sentence_end]


def _tense_at(m: re.Match[str]) -> bool | None:
    """`tense` of the clause a weekday or weekend stands in, where it says one, else of its sentence: "Jess got
    promoted, we are celebrating on Friday" celebrates the coming Friday, "We hiked on Saturday and we will rest
    next week" hiked on the last one; "Mom called, on Saturday" says nothing of its own and stays past."""
    return False if _arranged_for(m) else tense(_tense_text(m))


# A day or month something was arranged for: "I booked a table for Saturday", "my boss approved my vacation for
# March", "the dentist moved my appointment to Friday", "записалась к врачу на пятницу", "отпуск перенесли на
# март", "我订了周六的餐厅", "会议改到周五". The arranging is told in the past; the day it was arranged for is
# ahead of it, the coming one. The target is the date right after "for", "to", "until", "на", "до" (in Chinese,
# before 的 or right after 到 or the verb, "预约了周一"), in a sentence with a verb or noun of arranging ("I paid
# the rent for October" arranges nothing, and "On Monday I booked a table for Saturday" booked on the last Monday).
# It holds whatever tense a caller passes (`mentions(past=…)`): that is the sentence's, not the target's.
_ARRANGED = re.compile(
    r"(?<![a-z])(?:book|books|booked|booking|reserve|reserved|reservation|schedule|scheduled|reschedule|"
    r"rescheduled|approve|approved|postpone|postponed|moved|pushed|put off|arranged|signed up|registered|"
    r"appointment|tickets?)(?![a-z])"
    r"|(?<![а-яё])(?:заброниров\w*|бронь|брони|записал(?:а|и|ся|ась|ись)?|договорил(?:ись|ся|ась)|записан[аы]?|одобрил[аи]?|назначил[аи]?|"
    r"назначен[аоы]?|перенесл[аи]|перенес|перенесли|билет\w*|заказал[аи]?)(?![а-яё])"
    r"|订|预约|约了|约好|批了|改到|推迟到|挪到|提前到|挂了号|报名|票",
    re.IGNORECASE,
)
_TARGET_BEFORE = re.compile(r"(?:(?<![a-z])(?:for|to|until|till)|(?<![а-яё])(?:на|до))\s+(?:the\s+|this\s+|эту\s+|"
                            r"этот\s+)?$", re.IGNORECASE)
_ZH_TARGET_BEFORE = re.compile(r"(?:到|订了|约了|约在|约好|预约了|预约在|挂了)$")
# What was signed up for starts then: "I signed up for a Spanish course, starting in January", "записалась на курсы,
# начинаю в январе", "报名了日语课，一月份开始上" (read by the sentence's past as the January gone).
_START_BEFORE = re.compile(r"(?:(?<![a-z])(?:starting|starts|start|begins|beginning|begin)(?:\s+(?:on|in|at|from))?"
                           r"|(?<![а-яё])(?:начина\w*|начн\w*|стартует|стартуют)(?:\s+(?:в|во|с|со))?)\s+$",
                           re.IGNORECASE)
_ZH_START_AFTER = re.compile(r"(?:份|的时候)?(?:开始|开课|起)")
_TARGET_LEAD = re.compile(r"(?:for|to|until|till|на|до)\s", re.IGNORECASE)


# A decision told before the date it is for: "We decided to go to Georgia in November", "We agreed to meet on
# Friday", "Мы решили поехать в Грузию в ноябре", "Решили в субботу съездить на дачу", "我们决定了周六去爬山". The
# deciding is told in the past, what was decided is ahead, as for an arrangement. Only a decision said before
# the date: "In March we decided to sell the car" decided in the March gone. In English the date follows the
# decision's "to" and verb ("We decided on Saturday to go" decided on the Saturday); Russian, freer in its order,
# needs an infinitive after the decision anywhere in the sentence.
_DECIDED_EN = re.compile(r"(?<![a-z])(?:decided|agreed|chose|promised|made up (?:my|our|their) minds?)\s+to\s+[a-z]+",
                         re.IGNORECASE)
_DECIDED_RU = re.compile(r"(?<![а-яё])(?:решил[аи]?|договорил(?:ись|ся|ась)|надумал[аи]?)(?![а-яё])", re.IGNORECASE)
_RU_INFINITIVE = re.compile(r"(?<![а-яё])[а-яё]{2,}(?:ть|ться|ти|чь)(?![а-яё])", re.IGNORECASE)
_DECIDED_ZH = re.compile(r"决定|说好|商量好|约定")


def _decided_for(m: re.Match[str]) -> bool:
    """Whether the date `m` found is what a decision told before it in its sentence was for (`_DECIDED_EN`)."""
    start = m.end() - len(m.group(0).lstrip())
    before = m.string[_sentence_start(m):start]
    if _DECIDED_EN.search(before) or _DECIDED_ZH.search(before):
        return True
    decided = _DECIDED_RU.search(before)
    return decided is not None and _RU_INFINITIVE.search(_sentence(m), decided.end()) is not None


def _arranged_for(m: re.Match[str]) -> bool:
    """Whether the date `m` found is what its sentence arranged something for (`_ARRANGED`), or decided
    (`_decided_for`)."""
    if _decided_for(m):
        return True
    if not _ARRANGED.search(_sentence(m)):
        return False
    text, said = m.string, m.group(0).lstrip()
    start = m.end() - len(said)
    if (_TARGET_LEAD.match(said) or _TARGET_BEFORE.search(text, max(0, start - 12), start)
            or _START_BEFORE.search(text, max(0, start - 20), start)):
        return True
    return (text.startswith("的", m.end()) or bool(_ZH_TARGET_BEFORE.search(text, max(0, start - 4), start))
            or bool(_ZH_START_AFTER.match(text, m.end())))


def arranged_for(text: str, start: int, end: int) -> bool:
    """Whether `text[start:end]`, a date expression, is what its sentence arranged something for ("I booked a
    table for Saturday"): the coming one, whatever the sentence's tense (`_arranged_for`)."""
    found = _ANY.match(text, start, end)
    return found is not None and _arranged_for(found)


_ANY = re.compile(r"[\s\S]+")


def _tense_text(m: re.Match[str]) -> str:
    """The words whose tense a date stands in: its clause where that says one, else its sentence (`_tense_at`)."""
    clause = _clause(m)
    return clause if tense(clause) is not None else _sentence(m)


# A participle, not a past: "is getting married", "I'm excited", "will be finished".
_BEFORE_PARTICIPLE = re.compile(r"(?:(?<![a-z])(?:is|are|am|be|being|been|get|gets|getting)|'m|'re|'s)\s+$",
                                re.IGNORECASE)


def _told_in_past(sentence: str) -> bool:
    words = [m.group(0).lower() for m in _PAST.finditer(sentence)
             if not (m.group(0).lower().endswith("ed") and _BEFORE_PARTICIPLE.search(sentence, 0, m.start()))]
    return any(word not in _NOT_PAST and word not in ("了", "过") for word in words) or bool(_ZH_PAST.search(sentence))


def tense(sentence: str) -> bool | None:
    """Whether a sentence is told in the past (True), of the future or an intention (False), or says neither
    (None), as a bare weekend or weekday in it is read; `mentions(past=…)` takes the same values. An intention
    outweighs a past word ("I was thinking we will hike on Saturday"); the present said of what is ahead does
    not ("Mom called, we're visiting her on Saturday" stays past: in chat about what happened it mostly is)."""
    if _FUTURE.search(sentence):
        return False
    if _told_in_past(sentence):
        return True
    return False if _PRESENT_FOR_FUTURE.search(sentence) else None


# A question about a plan told in the past: "what did I plan for the weekend?", "что я планировал на выходные?",
# "what was I going to do on Saturday?" (any intention with a past word), and in Chinese, which marks no tense, any
# with a plan word ("我周末计划做什么？"). The plan was made before its day, and asked about a few days later that
# day may be over or still ahead: its words do not say which. Plans asked of in the present ("what are my plans
# for the weekend?", "какие у меня планы на выходные?") are those still ahead, as before.
_ZH_PLAN = re.compile(r"计划|打算|安排|准备|规划")
_PLAN = re.compile(
    r"(?<![a-z])plan(?:s|ned|ning)?(?![a-z])"
    r"|(?<![а-яё])(?:за)?план(?:ы|ов|ах|ами|ир\w*)?(?![а-яё])|(?<![а-яё])хотел(?:а|и)?(?![а-яё])|"
    + _ZH_PLAN.pattern,
    re.IGNORECASE,
)


def _asks_about_plan(sentence: str) -> bool:
    if _ZH_PLAN.search(sentence):
        return True
    return bool(_PLAN.search(sentence) or _FUTURE.search(sentence)) and _told_in_past(sentence)


def _either_side(last: Span, coming: Span) -> list[Span]:
    """Both readings of a weekday or weekend a question about a plan names (`Span.either`). Asked on a Monday the
    plan was mostly for the weekend just past, on a Thursday mostly for the coming one, but neither is sure. A
    user's turns rarely hold plans for both, so asking for both finds the one there is, and where there are
    two, their words decide. Each reading asks for its days as the one reading would, and for its week, where a
    plan for it is mostly told (the turn said on Wednesday of "Saturday" carries that week twice), but not for its
    month and year as a past date does: widened so, the weekend just past matched every turn said that month
    above the plan told on Tuesday for the coming Saturday."""
    return [replace(last, either=True), replace(coming, either=True)]


def _weekend(anchor: date, m: re.Match[str], past: bool | None, query: bool = False) -> list[Span]:
    """"This weekend", "на этих выходных", "这个周末" and a bare weekend: said on a Saturday or Sunday, that
    very weekend; else the one just past when the sentence (or the caller, by `past`) tells it in the past and
    says no intention, the coming one otherwise (a plan, or a weekday's talk of what is ahead). A question
    about a plan asks for both ("what did I plan for the weekend?", "что я планировал на выходные?", "我周末
    计划做什么？" asked on a Monday mean Saturday's plan, the same asked on a Thursday mostly the next one's)."""
    if anchor.weekday() >= 5:
        return [_relative_unit(0, "weekend", anchor)]
    if past is None and query and _asks_about_plan(_sentence(m)):
        return _either_side(_relative_unit(-1, "weekend", anchor), _relative_unit(1, "weekend", anchor))
    if not query and _arranged_for(m):
        past = False  # what was arranged for a weekend is ahead, whatever the caller's tense
    elif past is None:
        past = _tense_at(m) is True
    return [_relative_unit(-1 if past else 1, "weekend", anchor)]


def _bare_weekday(anchor: date, weekday: int, m: re.Match[str], past: bool | None, query: bool = False
                  ) -> list[Span]:
    """A weekday with no "last" or "next" ("on Saturday", "this Friday", "в субботу", "周六"), read by its
    sentence's tense (or the caller's, by `past`) as a bare weekend is, but where a weekend said with neither
    tense is the coming one, a weekday stays the last one: chat about what happened mostly means that. Of the
    future or an intention, the coming one ("В субботу мы едем на дачу", "周六我要去看牙医"); told in the past
    or with neither, the last one. Said on that very weekday with neither, that day: "Happy Friday!",
    "周六快乐" name today, and a Saturday told of on a Saturday with nothing past about it is more likely today
    (or, for a message stamped past midnight UTC, the evening before its stamp) than a week back; told in the
    past it is a week back, of the future a week on, since today would be "today". A question about a plan asked
    on another day asks for both the last and the coming one, as of a weekend (`_weekend`). None when the
    sentence tells of a habit ("I usually swim on Saturday", "周六我一般在家")."""
    sentence = _sentence(m)
    if _HABITUAL.search(sentence):
        return []
    if past is None and query and anchor.weekday() != weekday and _asks_about_plan(sentence):
        return _either_side(_day(_weekday_before(anchor, weekday)), _day(_weekday_after(anchor, weekday)))
    if not query and _arranged_for(m):
        past = False  # what was arranged for a day is ahead, whatever the caller's tense (`_arranged_for`)
    elif past is None:
        past = _tense_at(m)
    if past is None and anchor.weekday() == weekday:
        return [_day(anchor)]
    return [_day(_weekday_after(anchor, weekday) if past is False else _weekday_before(anchor, weekday))]


def _bare_weekend(anchor: date, m: re.Match[str], query: bool, past: bool | None) -> list[Span]:
    """A weekend with no "this", "last", "next": none when its sentence tells of a habit, nor in a question
    that asks when (in "when did we hike on the weekend?" the weekend is what is asked, not the last one)."""
    sentence = _sentence(m)
    if _HABITUAL.search(sentence) or (query and asks_when(sentence)):
        return []
    return _weekend(anchor, m, past, query)


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


def _relative_season(anchor: date, season: str, delta: int) -> Span:
    """"Last summer" is the latest summer over by the anchor (in December, this year's; in July, last
    year's), "the summer before last" the one before; "this winter" the winter under way, else this year's;
    "next" the one after "this"."""
    spans = [_season(year, season) for year in range(anchor.year - 3, anchor.year + 2)]
    if delta < 0:
        return [span for span in spans if span.end < anchor][delta]
    current = next((span for span in spans if span.start <= anchor <= span.end), _season(anchor.year, season))
    return _season(current.start.year + delta, season)


def _nth_weekday(year: int, month: int, weekday: int, nth: int) -> date | None:
    """The nth such weekday of a month ("the second Sunday of May"); nth -1 is the last."""
    if nth < 0:
        last = _month(year, month).end
        return last - timedelta(days=(last.weekday() - weekday) % 7)
    first = date(year, month, 1)
    found = first + timedelta(days=(weekday - first.weekday()) % 7 + 7 * (nth - 1))
    return found if found.month == month else None


def _easter(year: int) -> date:
    """Western Easter Sunday (the anonymous Gregorian computus)."""
    a, (b, c) = year % 19, divmod(year, 100)
    d, e = divmod(b, 4)
    g = (b - (b + 8) // 25 + 1) // 3
    h = (19 * a + b - d - g + 15) % 30
    i, k = divmod(c, 4)
    weekday = (32 + 2 * e + 2 * i - h - k) % 7
    m = (a + 11 * h + 22 * weekday) // 451
    month, day = divmod(h + weekday - 7 * m + 114, 31)
    return date(year, month, day + 1)


def _orthodox_easter(year: int) -> date:
    """Orthodox Easter Sunday: the Julian computus, shifted to the Gregorian calendar (1900-2099)."""
    a, b, c = year % 4, year % 7, year % 19
    d = (19 * c + 15) % 30
    e = (2 * a + 4 * b - d + 34) % 7
    month, day = divmod(d + e + 114, 31)
    return date(year, month, day + 1) + timedelta(days=13)


# Lunar holidays as Gregorian days: the Spring Festival (春节) and the Mid-Autumn Festival (中秋).
# Outside these years they resolve to nothing rather than to a wrong day.
_SPRING_FESTIVAL = {2015: (2, 19), 2016: (2, 8), 2017: (1, 28), 2018: (2, 16), 2019: (2, 5), 2020: (1, 25),
                    2021: (2, 12), 2022: (2, 1), 2023: (1, 22), 2024: (2, 10), 2025: (1, 29), 2026: (2, 17),
                    2027: (2, 6), 2028: (1, 26), 2029: (2, 13), 2030: (2, 3)}
_MID_AUTUMN = {2015: (9, 27), 2016: (9, 15), 2017: (10, 4), 2018: (9, 24), 2019: (9, 13), 2020: (10, 1),
               2021: (9, 21), 2022: (9, 10), 2023: (9, 29), 2024: (9, 17), 2025: (10, 6), 2026: (9, 25)}


def _from_table(table: dict[int, tuple[int, int]], shift: int = 0) -> Callable[[int], date | None]:
    def day(year: int) -> date | None:
        return date(year, *table[year]) + timedelta(days=shift) if year in table else None
    return day


# A holiday's day in a given year, by a name every language's words map to.
_HOLIDAYS: dict[str, Callable[[int], date | None]] = {
    "christmas_eve": lambda y: date(y, 12, 24),
    "christmas": lambda y: date(y, 12, 25),
    "orthodox_christmas": lambda y: date(y, 1, 7),
    "new_years_eve": lambda y: date(y, 12, 31),
    "new_year": lambda y: date(y, 1, 1),
    "valentine": lambda y: date(y, 2, 14),
    "halloween": lambda y: date(y, 10, 31),
    "independence_day": lambda y: date(y, 7, 4),
    "thanksgiving": lambda y: _nth_weekday(y, 11, 3, 4),
    "mothers_day": lambda y: _nth_weekday(y, 5, 6, 2),
    "mothers_day_ru": lambda y: _nth_weekday(y, 11, 6, -1),
    "fathers_day": lambda y: _nth_weekday(y, 6, 6, 3),
    "easter": _easter,
    "orthodox_easter": _orthodox_easter,
    "memorial_day": lambda y: _nth_weekday(y, 5, 0, -1),
    "labor_day": lambda y: _nth_weekday(y, 9, 0, 1),
    "labour_day_cn": lambda y: date(y, 5, 1),
    "national_day_cn": lambda y: date(y, 10, 1),
    "spring_festival": _from_table(_SPRING_FESTIVAL),
    "spring_festival_eve": _from_table(_SPRING_FESTIVAL, -1),
    "mid_autumn": _from_table(_MID_AUTUMN),
}


def _holiday(name: str, anchor: date, *, year: int | None = None, delta: int | None = None,
             query: bool = False, said: re.Match[str] | None = None, past: bool | None = None) -> Span | None:
    """A holiday's day: of the year given; the last one before the anchor (delta -1), the next one
    after it (+1), this year's (0). Said without any of these in a stored turn, as a month is (`_said_year`,
    where `said` found it): the coming one where its clause or sentence speaks of the future or of an
    arrangement ("Linda is coming to visit for Thanksgiving", said in September), the last one where it is told
    in the past ("We celebrated Christmas with my parents", said on 10 December), else the coming one when it is
    at most two months ahead ("for Christmas" on 10 December) and the last one otherwise; in a question, any
    year's (its month, like "in June"). `past`: the tense as the caller knows it (a phrase read apart from its
    sentence), over the one its own words tell."""
    day_of = _HOLIDAYS[name]
    if year is not None:
        found = day_of(year)
        return _day(found) if found else None
    if delta == 0:
        found = day_of(anchor.year)
        return _day(found) if found else None
    days = [d for d in (day_of(anchor.year + i) for i in (-2, -1, 0, 1)) if d is not None]
    if (delta is not None and delta < 0) or (delta is None and query):
        before = [d for d in days if d < anchor or (delta is None and d == anchor)]
        if not before:
            return None
        return Span(before[-1], before[-1], before[-1].month if delta is None else 0)
    if delta is not None:
        after = [d for d in days if d > anchor]
        return _day(after[0]) if after else None
    told = past if past is not None else tense(_tense_text(said)) if said is not None else None
    soon = [d for d in days if anchor <= d <= anchor + timedelta(days=62 if told is None else 366)]
    gone = [d for d in days if d <= anchor]
    if said is not None and (told is False or _arranged_for(said)):
        return _day(soon[0]) if soon else None
    if told:
        return _day(gone[-1]) if gone else None
    return _day(soon[0]) if soon else _day(gone[-1]) if gone else None


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
               "few": 3, "a few": 3, "several": 3, "couple": 2, "a couple": 2}
_EN_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(sorted(_EN_NUMBERS, key=len, reverse=True)) + r")"
_EN_UNIT = r"(?P<unit>day|weekend|week|month|year)s?"
_SEASONS_EN = {"spring": "spring", "summer": "summer", "autumn": "autumn", "fall": "autumn", "winter": "winter"}
_EN_WEEKDAY_ABBREVIATIONS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3, "fri": 4,
                             "sat": 5, "sun": 6}
_EN_NTH = {"first": 1, "1st": 1, "second": 2, "2nd": 2, "third": 3, "3rd": 3, "fourth": 4, "4th": 4, "fifth": 5,
           "5th": 5, "last": -1}
_EN_HOLIDAYS = {"christmas eve": "christmas_eve", "christmas": "christmas", "xmas": "christmas",
                "new year's eve": "new_years_eve", "new years eve": "new_years_eve", "new year's day": "new_year",
                "new year's": "new_year", "new years": "new_year", "valentine's day": "valentine",
                "valentines day": "valentine", "valentine's": "valentine", "halloween": "halloween",
                "independence day": "independence_day", "fourth of july": "independence_day",
                "4th of july": "independence_day", "thanksgiving": "thanksgiving", "mother's day": "mothers_day",
                "mothers day": "mothers_day", "father's day": "fathers_day", "fathers day": "fathers_day",
                "easter": "easter", "memorial day": "memorial_day", "labor day": "labor_day",
                "labour day": "labor_day"}
_EN_HOLIDAY = r"(?P<holiday>" + "|".join(sorted(map(re.escape, _EN_HOLIDAYS), key=len, reverse=True)) + r")"

# Russian months by stem, which covers every case form ("май", "мая", "мае", "в июле", "июля").
_RU_MONTHS = {"январ": 1, "феврал": 2, "март": 3, "апрел": 4, "ма": 5, "июн": 6, "июл": 7, "август": 8,
              "сентябр": 9, "октябр": 10, "ноябр": 11, "декабр": 12}
_RU_MONTH = r"(?P<month>январ[ьяюе]|феврал[ьяюе]|март[ауе]?|апрел[ьяюе]|ма[йяюе]|июн[ьяюе]|июл[ьяюе]|" \
            r"август[ауе]?|сентябр[ьяюе]|октябр[ьяюе]|ноябр[ьяюе]|декабр[ьяюе])"
_RU_WEEKDAYS = {"понедельник": 0, "вторник": 1, "сред": 2, "четверг": 3, "пятниц": 4, "суббот": 5,
                "воскресень": 6}
_RU_WEEKDAY = r"(?P<weekday>понедельник|вторник|сред[ауы]|четверг|пятниц[ауы]|суббот[ауы]|воскресень[ея])"
_RU_NUMBERS = {"один": 1, "одну": 1, "два": 2, "две": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6,
               "семь": 7, "восемь": 8, "девять": 9, "десять": 10, "пару": 2, "несколько": 3, "двое": 2, "трое": 3}
_RU_NUMBER = r"(?P<n>\d{1,3}|" + "|".join(_RU_NUMBERS) + r")"
_RU_UNITS = {"д": "day", "н": "week", "м": "month", "г": "year", "л": "year", "в": "weekend"}
_RU_UNIT = r"(?P<unit>дн(?:я|ей)|день|недел[ьюяи]|месяц(?:а|ев)?|год(?:а)?|лет|выходн(?:ых|ые))"
_RU_WHICH = {"позапрошл": -2, "прошл": -1, "эт": 0, "следующ": 1}
_RU_ONE_AGO = re.compile(r"(?<!\w)(?P<unit>день|неделю|месяц|год|пол\s?года)\s+(?:тому\s+)?назад")
# Ahead, as "in two weeks": "через три дня", "через неделю" (the count left unsaid: one), "через полгода".
_RU_AHEAD = re.compile(r"(?<!\w)через\s+(?:" + _RU_NUMBER + r"\s+)?"
                       r"(?P<unit>дн(?:я|ей)|день|недел[ьюяи]|месяц(?:а|ев)?|год(?:а)?|лет|пол\s?года)(?!\w)")
_SEASONS_RU = {"весн": "spring", "лет": "summer", "осен": "autumn", "зим": "winter"}

_ZH_DIGITS = {"零": 0, "一": 1, "二": 2, "两": 2, "三": 3, "四": 4, "五": 5, "六": 6, "七": 7, "八": 8, "九": 9}
_ZH_WEEKDAYS = {"一": 0, "二": 1, "三": 2, "四": 3, "五": 4, "六": 5, "日": 6, "天": 6}
_ZH_WHICH = {"上上": -2, "上": -1, "这": 0, "本": 0, "下": 1, "下下": 2}
# Only past and next years: "后年" (the year after next) is also the tail of "之后年…", "以后年…".
_ZH_RELATIVE_YEARS = {"大前年": -3, "前年": -2, "去年": -1, "今年": 0, "明年": 1}
_ZH_RELATIVE_YEAR = r"(?P<rel>大前年|前年|去年|今年|明年)"
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
    if unit == "weekend":
        return _relative_unit(sign * n, "weekend", anchor)
    if unit == "day":
        return _day(anchor + timedelta(days=sign * n))
    if unit == "week":
        return _week_of(anchor + timedelta(days=sign * 7 * n))
    if unit == "month":
        return _month(*_shift_month(anchor.year, anchor.month, sign * n))
    return _year(anchor.year + sign * n)


_WHICH = {"last": -1, "past": -1, "previous": -1, "this": 0, "next": 1, "coming": 1}


def _relative_unit(delta: int, unit: str, anchor: date) -> Span:
    """The unit `delta` steps from the anchor's: "last week" -1, "the week before last" -2."""
    if unit == "week":
        return _week_of(anchor + timedelta(days=7 * delta))
    if unit == "weekend":
        saturday = (_weekday_before(anchor, 5) if delta <= 0 and anchor.weekday() < 5
                    else _weekday_after(anchor, 5) if delta > 0 else anchor - timedelta(days=anchor.weekday() - 5))
        if delta < 0 and anchor.weekday() >= 5:
            saturday -= timedelta(days=7)
        if abs(delta) > 1:  # "two weekends ago", "the weekend after next"
            saturday += timedelta(days=7 * (delta + (1 if delta < 0 else -1)))
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


def _month_span(month: int, year: int | None, anchor: date, *, query: bool, said: re.Match[str] | None = None
                ) -> Span:
    if year is not None:
        return _month(year, month)
    if query:
        # "in June" in a question: any year's June (the @mo term), plus the most recent one.
        span = _month(_past_month(anchor, month), month)
        return Span(span.start, span.end, month)
    return _month(_said_year(anchor, month, query, said), month)


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


def _en(text: str, anchor: date, query: bool, claims: _Claims | None = None, past: bool | None = None
        ) -> Iterable[Span]:
    lowered = text.lower().replace("’", "'")
    free = (claims or _Claims()).free
    words = _en_words(lowered)
    months = bool(words & _MONTH_WORDS)

    # Longer expressions first, so that the rules below do not read their parts: "the week before
    # last", "the week of 5 March", "the second Sunday of May", "between August 11 and August 15
    # 2023", "the week before 16 November 2023", "May 3-7".
    if "before last" in lowered or "after next" in lowered:
        for m in _EN_BEFORE_LAST.finditer(lowered):
            if free(m):
                yield _relative_unit(-2 if m.group("dir") == "before last" else 2, m.group("unit"), anchor)
    for m in _EN_WEEK_OF.finditer(lowered) if "week of" in lowered or "weekend of" in lowered else ():
        inner = list(_en_absolute(m.group("rest"), anchor, query))
        if inner and free(m):
            # "The weekend of 15 July": the Saturday and Sunday of that day's (ISO) week.
            week = _week_of(inner[0].start)
            first = week.start + timedelta(days=5) if m.group("unit") == "weekend" else week.start
            yield Span(first, week.end, inner[0].month_only)
    for m in _EN_NTH_WEEKDAY.finditer(lowered) if months and words & _EN_WEEKDAY_WORDS else ():
        if free(m):
            month = _EN_MONTHS[m.group("month")]
            year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
            found = _nth_weekday(year, month, _EN_WEEKDAYS[m.group("weekday")], _EN_NTH[m.group("nth")])
            if found:
                yield Span(found, found, month if query and not m.group("year") else 0)
    for m in _EN_BEFORE_AFTER.finditer(lowered) if "before" in words or "after" in words else ():
        inner = list(_en_absolute(m.group("rest"), anchor, query))
        if inner and free(m):
            yield _before_after(inner[0], m.group("unit"), m.group("dir") == "before")
    for m in _EN_DAY_RANGE.finditer(lowered) if months and "#d" in words else ():
        # "May 3-7, 2023", "3-7 May": one month's days.
        month = _EN_MONTHS[m.group("month") or m.group("monthb")]
        year_text = m.group("year") or m.group("yearb")
        year = int(year_text) if year_text else _past_month(anchor, month)
        first = _safe_date(year, month, int(m.group("d1") or m.group("d1b")))
        last = _safe_date(year, month, int(m.group("d2") or m.group("d2b")))
        if first and last and first < last and free(m):
            yield Span(first, last)
    for m in _EN_BETWEEN.finditer(lowered) if "between" in words or "from" in words else ():
        a = list(_en_absolute(m.group("a") + " " + _trailing_year(m.group("b")), anchor, query))
        b = list(_en_absolute(m.group("b"), anchor, query))
        if a and b and a[0].start <= b[-1].end and (b[-1].end - a[0].start).days <= 400 and free(m):
            yield Span(a[0].start, b[-1].end)
    for m in _EN_NTH_WEEK.finditer(lowered) if months and "week" in words else ():
        if free(m):
            month = _EN_MONTHS[m.group("month")]
            year = int(m.group("year")) if m.group("year") else None
            span = _month_span(month, year, anchor, query=query, said=m)
            nth = {"first": 0, "1st": 0, "second": 1, "2nd": 1, "third": 2, "3rd": 2, "fourth": 3, "4th": 3}
            if m.group("nth") == "last":
                yield Span(span.end - timedelta(days=6), span.end, span.month_only)
            else:
                start = span.start + timedelta(days=7 * nth[m.group("nth")])
                yield Span(start, start + timedelta(days=6), span.month_only)
    for m in _EN_PART_OF_MONTH.finditer(lowered) if months else ():
        if free(m):
            month = _EN_MONTHS[m.group("month")]
            year = int(m.group("year")) if m.group("year") else None
            span = _month_span(month, year, anchor, query=query, said=m)
            yield _part_of_month(m.group("part"), span)

    for m in _EN_WEEKEND.finditer(lowered) if "weekend" in words else ():
        # Before "this weekend" of the rules below, which is also "this past weekend" and "the weekend" of
        # "the weekend before 27 June" (taken above).
        spans = _weekend(anchor, m, past, query) if m.group("this") else _bare_weekend(anchor, m, query, past)
        if spans and free(m):
            yield from spans
    for pattern, resolve, needs in _EN_RULES:
        if not all(words & need for need in needs):
            continue
        for m in pattern.finditer(lowered):
            if resolve is _en_weekday:
                # Claimed only when a date: the words of a weekday that recurs ("what do I do every Saturday?")
                # stay words of the question, as a recurring weekend's do.
                spans = _en_weekday(m, anchor, query, past)
                if spans and free(m):
                    yield from spans
                continue
            if not free(m):
                continue
            span = _en_holiday(m, anchor, query, past) if resolve is _en_holiday else resolve(m, anchor, query)
            if span is not None:
                yield span
    for m in _EN_WEEKDAY_SHORT.finditer(lowered) if words & _EN_WEEKDAY_ABBREVIATION_WORDS else ():
        # "last Fri", "next Tues."; after a bare "on" only when written with a capital ("on Sun"),
        # since "on sun" and "on sat" are words too.
        if m.group("which") != "on" or text[m.start("weekday"):m.start("weekday") + 1].isupper():
            weekday = _EN_WEEKDAY_ABBREVIATIONS[m.group("weekday")]
            which = m.group("which")
            spans = ([_day(_weekday_after(anchor, weekday))] if which in ("next", "this coming")
                     else [_day(_weekday_before(anchor, weekday))] if which in ("last", "this past")
                     else _bare_weekday(anchor, weekday, m, past, query))
            if spans and free(m):
                yield from spans
    if "weekend" in lowered:
        for m in _EN_OVER_THE_WEEKEND.finditer(lowered):
            # Said Monday to Thursday, the weekend just gone; on Friday, the one to come.
            if free(m):
                yield _relative_unit(1 if anchor.weekday() == 4 else -1 if anchor.weekday() < 4 else 0, "weekend",
                                     anchor)


def _before_after(pivot: Span, unit: str, before: bool) -> Span:
    """"The week before" / "the day after" a day: the span of that length next to it."""
    length = {"day": 1, "weekend": 2, "week": 7, "month": 30}[unit]
    if before:
        return Span(pivot.start - timedelta(days=length), pivot.start - timedelta(days=1), pivot.month_only)
    return Span(pivot.end + timedelta(days=1), pivot.end + timedelta(days=length), pivot.month_only)


def _trailing_year(text: str) -> str:
    m = re.search(r"\b(?:19|20)\d\d\b", text)
    return m.group(0) if m else ""


def _en_absolute(text: str, anchor: date, query: bool) -> Iterable[Span]:
    """The days a text names outright (a date, a holiday), for "the week before ...", ranges."""
    for pattern, resolve, _ in _EN_RULES[:5]:
        for m in pattern.finditer(text):
            span = resolve(m, anchor, query)
            if span is not None:
                yield span


def _en_month_day(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    month = _EN_MONTHS[m.group("month")]
    day = int(m.group("day"))
    year = int(m.group("year")) if m.group("year") else _said_year(anchor, month, query, m)
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
    return _month_span(_EN_MONTHS[word], None, anchor, query=query, said=m)


def _en_year(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    return _year(int(m.group("year")))


def _en_nth(m: re.Match[str], anchor: date, query: bool) -> Span | None:
    return _day_of_month(int(m.group("day")), m, anchor, query)


def _day_of_month(day: int, m: re.Match[str], anchor: date, query: bool) -> Span | None:
    """A day of the month said alone ("the 20th", "20-го", "20号"): of this month or the one before, the latest
    that is not ahead; in a stored turn of the future or an intention ("my parents are flying in on the 20th",
    said on the 2nd) or of what was arranged for it, the coming one, and a day later this month with no past word
    ("the party is on the 5th") is ahead too, as a month a little ahead is (`_said_year`)."""
    ahead = False
    if not query:
        text = _tense_text(m)
        ahead = _arranged_for(m) or tense(text) is False or (day > anchor.day and not _told_in_past(text))
    if ahead:
        year, month = (anchor.year, anchor.month) if day >= anchor.day else _shift_month(anchor.year, anchor.month, 1)
    else:
        year, month = (anchor.year, anchor.month) if day <= anchor.day else _shift_month(anchor.year, anchor.month, -1)
    found = _safe_date(year, month, day)
    return _day(found) if found else None


def _en_simple(offset: int) -> Callable[..., Span]:
    def resolve(m: re.Match[str], anchor: date, query: bool) -> Span:
        return _day(anchor + timedelta(days=offset))
    return resolve


def _en_relative(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _relative_unit(_WHICH[m.group("which")], m.group("unit"), anchor)


def _en_weekday(m: re.Match[str], anchor: date, query: bool, past: bool | None = None) -> list[Span]:
    weekday = _EN_WEEKDAYS[m.group("weekday")]
    if m.group("which") in ("next", "this coming", "coming"):
        return [_day(_weekday_after(anchor, weekday))]
    if m.group("which") in ("last", "this past"):
        return [_day(_weekday_before(anchor, weekday))]
    return _bare_weekday(anchor, weekday, m, past, query)


def _en_ago(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _ago(_count(m.group("n"), _EN_NUMBERS), m.group("unit"), anchor)


def _en_half_year_ago(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _ago(6, "month", anchor)


def _en_in(m: re.Match[str], anchor: date, query: bool) -> Span:
    return _ago(_count(m.group("n"), _EN_NUMBERS), m.group("unit"), anchor, sign=1)


def _en_holiday(m: re.Match[str], anchor: date, query: bool, past: bool | None = None) -> Span | None:
    which = m.group("which")
    return _holiday(_EN_HOLIDAYS[m.group("holiday")], anchor, year=int(m.group("year")) if m.group("year") else None,
                    delta=None if which is None else -1 if which in ("last", "this past") else 0 if which == "this"
                    else 1, query=query, said=m, past=past)


def _en_year_part(m: re.Match[str], anchor: date, query: bool) -> Span:
    """"Early 2023" (January to April), "mid-2022", "the end of 2021" (September to December)."""
    year, part = int(m.group("year")), m.group("part")
    first = 1 if part in ("early", "beginning", "start") else 5 if part in ("mid", "middle") else 9
    return Span(date(year, first, 1), _month(year, first + 3).end)


def _en_season(m: re.Match[str], anchor: date, query: bool) -> Span:
    if m.group("season2"):
        return _season(int(m.group("year")), _SEASONS_EN[m.group("season2")])
    delta = {"last": -1, "this": 0, "next": 1}[m.group("which")]
    return _relative_season(anchor, _SEASONS_EN[m.group("season")], delta)


# Each rule with the words it cannot match without: a text is split into words once, and a rule none
# of whose words occur is not tried (most turns name no date; trying every pattern cost ~60 µs a turn).
# "#d" stands for any digit, "#h" for a holiday's name.
_DIGIT_WORD = frozenset({"#d"})
_HOLIDAY_WORD = frozenset({"#h"})
_MONTH_WORDS = frozenset(_EN_MONTHS)
_NEEDS_MONTH_DIGIT = (_MONTH_WORDS, _DIGIT_WORD)
_UNIT_WORDS = frozenset(u + s for u in ("day", "weekend", "week", "month", "year") for s in ("", "s"))
_EN_RULE_TEXTS: list[tuple[str, Callable[..., Span | None], tuple[frozenset[str], ...]]] = [
    (r"\b" + _EN_MONTH + r" (?P<day>[0-3]?\d)(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d\d))?\b",
     _en_month_day, _NEEDS_MONTH_DIGIT),
    (r"\b(?P<day>[0-3]?\d)(?:st|nd|rd|th)? (?:of )?" + _EN_MONTH + r",? (?P<year>(?:19|20)\d\d)?\b",
     _en_month_day, _NEEDS_MONTH_DIGIT),
    (r"\b" + _EN_MONTH + r",? (?P<year>(?:19|20)\d\d)\b", _en_month_year, _NEEDS_MONTH_DIGIT),
    (r"\b(?P<y>(?:19|20)\d\d)-(?P<m>[01]\d)-(?P<d>[0-3]\d)\b", _en_iso, (_DIGIT_WORD,)),
    (r"\b(?:(?P<which>last|this past|this coming|this|next|coming) )?" + _EN_HOLIDAY
     + r"(?:,? (?P<year>(?:19|20)\d\d))?(?!\w)", _en_holiday, (_HOLIDAY_WORD,)),
    (r"\b(?:the )?(?P<part>early|mid|late|beginning|start|middle|end)(?: of|-| ) ?(?P<year>(?:19|20)\d\d)\b",
     _en_year_part, (_DIGIT_WORD, frozenset({"early", "mid", "late", "beginning", "start", "middle", "end"}))),
    (r"\b(?P<prep>in |of |since |during |until |by |early |late )?" + _EN_MONTH + r"\b",
     _en_month_alone, (_MONTH_WORDS,)),
    (r"\b(?:(?P<which>last|this|next) (?P<season>spring|summer|autumn|fall|winter)"
     r"|(?P<season2>spring|summer|autumn|fall|winter) of (?P<year>(?:19|20)\d\d))\b",
     _en_season, (frozenset(_SEASONS_EN),)),
    (r"\b(?:in |of |since |during |until |by )(?P<year>(?:19|20)\d\d)\b", _en_year, (_DIGIT_WORD,)),
    (r"\bthe (?P<day>[0-3]?\d)(?:st|nd|rd|th)\b", _en_nth, (_DIGIT_WORD, frozenset({"the"}))),
    (r"\bday before yesterday\b", _en_simple(-2), (frozenset({"yesterday"}),)),
    (r"\bday after tomorrow\b", _en_simple(2), (frozenset({"tomorrow"}),)),
    (r"\b(?:yesterday|last night)\b", _en_simple(-1), (frozenset({"yesterday", "night"}),)),
    (r"\b(?:today|tonight|this (?:morning|afternoon|evening))\b", _en_simple(0),
     (frozenset({"today", "tonight", "morning", "afternoon", "evening"}),)),
    (r"\btomorrow\b", _en_simple(1), (frozenset({"tomorrow"}),)),
    (r"\b(?P<which>last|past|previous|this|next|coming)(?: past)? (?P<unit>week|weekend|month|year)\b",
     _en_relative, (frozenset({"week", "weekend", "month", "year"}),)),
    (r"\b(?P<which>last|this past|this coming|next|coming|on|this)? ?" + _EN_WEEKDAY + r"\b",
     _en_weekday, (frozenset(_EN_WEEKDAYS),)),
    # "Half a year ago" is six months back, not the "a year ago" inside it.
    (r"\bhalf a year (?:ago|back)\b", _en_half_year_ago, (frozenset({"half"}), frozenset({"ago", "back"}))),
    (r"\b" + _EN_NUMBER + r" " + _EN_UNIT + r" (?:ago|back)\b", _en_ago, (frozenset({"ago", "back"}), _UNIT_WORDS)),
    (r"\bin " + _EN_NUMBER + r" " + _EN_UNIT + r"\b", _en_in, (frozenset({"in"}), _UNIT_WORDS)),
]
_EN_RULES = [(re.compile(pattern), resolve, needs) for pattern, resolve, needs in _EN_RULE_TEXTS]
_EN_WORDS = re.compile(r"[a-z0-9]+")
_DIGIT = re.compile(r"\d")
_EN_HOLIDAY_HINTS = ("christmas", "xmas", "new year", "valentine", "halloween", "independence", "of july",
                     "thanksgiving", "mother", "father", "easter", "memorial", "labor day", "labour day")


def _en_words(lowered: str) -> set[str]:
    """The words of a lower-cased text, with "#d" when it has a digit and "#h" a holiday's name."""
    words = set(_EN_WORDS.findall(lowered))
    if _DIGIT.search(lowered):
        words.add("#d")
    if any(hint in lowered for hint in _EN_HOLIDAY_HINTS):
        words.add("#h")
    return words


_EN_WEEKDAY_WORDS = frozenset(_EN_WEEKDAYS)
_EN_WEEKDAY_ABBREVIATION_WORDS = frozenset(_EN_WEEKDAY_ABBREVIATIONS)
_EN_BEFORE_AFTER = re.compile(r"\bthe (?P<unit>week|weekend|day|month) (?P<dir>before|after) (?P<rest>[^?.!,;]{3,40})")
_EN_BETWEEN = re.compile(r"\b(?:between|from) (?P<a>[^?.!;]{3,30}?) (?:and|to|until|till|through) "
                         r"(?P<b>[^?.!;]{3,30})")
_EN_NTH_WEEK = re.compile(r"\b(?P<nth>first|second|third|fourth|last|1st|2nd|3rd|4th) week of " + _EN_MONTH
                          + r"(?:,? (?P<year>(?:19|20)\d\d))?")
_EN_PART_OF_MONTH = re.compile(r"\b(?:the )?(?P<part>beginning|start|end|middle|early|late|mid)(?: of|-| )\s*"
                               + _EN_MONTH + r"(?:,? (?P<year>(?:19|20)\d\d))?")
_EN_BEFORE_LAST = re.compile(r"\bthe (?P<unit>week|weekend|month|year) (?P<dir>before last|after next)\b")
_EN_WEEK_OF = re.compile(r"\bthe (?P<unit>week|weekend) of (?P<rest>[^?.!,;]{3,30})")
_EN_NTH_WEEKDAY = re.compile(r"\b(?:the )?(?P<nth>" + "|".join(_EN_NTH) + r") " + _EN_WEEKDAY + r" (?:of|in) "
                             + _EN_MONTH + r"(?:,? (?P<year>(?:19|20)\d\d))?")
_EN_DAY_RANGE = re.compile(
    r"\b" + _EN_MONTH + r" (?P<d1>[0-3]?\d)(?:st|nd|rd|th)? ?(?:-|–|—|to|until|through)"
    r" ?(?P<d2>[0-3]?\d)(?:st|nd|rd|th)?(?:,? (?P<year>(?:19|20)\d\d))?\b"
    r"|\b(?P<d1b>[0-3]?\d)(?:st|nd|rd|th)? ?(?:-|–|—) ?(?P<d2b>[0-3]?\d)(?:st|nd|rd|th)? (?:of )?"
    + _EN_MONTH.replace("?P<month>", "?P<monthb>") + r"(?:,? (?P<yearb>(?:19|20)\d\d))?\b")
_EN_WEEKDAY_SHORT = re.compile(r"\b(?P<which>last|this past|this coming|next|on) (?P<weekday>"
                               + "|".join(sorted(_EN_WEEKDAY_ABBREVIATIONS, key=len, reverse=True)) + r")\b\.?")
_EN_OVER_THE_WEEKEND = re.compile(r"\bover the weekend\b")
# "This weekend", "on/at/during/for the weekend"; not "on weekends" (every one).
_EN_WEEKEND = re.compile(r"\b(?:(?P<this>this)|(?:on|at|during|for) the) weekend\b")


def _ru_month_number(word: str) -> int:
    for stem, number in _RU_MONTHS.items():
        if word.startswith(stem) and (stem != "ма" or (len(word) == 3 and word[2] in "йяюе")):
            return number
    return 0


def _ru_absolute(lowered: str, anchor: date, query: bool, past: bool | None = None
                 ) -> Iterable[tuple[re.Match[str], Span]]:
    """The days a text names outright ("5 мая 2022", "на Рождество"), with their matches."""
    for m in _RU_DAY_MONTH.finditer(lowered):
        month = _ru_month_number(m.group("month"))
        year = int(m.group("year")) if m.group("year") else _said_year(anchor, month, query, m)
        found = _safe_date(year, month, int(m.group("day")))
        if found:
            yield m, _day(found)
    for m in _RU_HOLIDAY.finditer(lowered):
        name = next(name for stem, name in _RU_HOLIDAYS if stem in m.group("holiday"))
        which = m.group("which")
        span = _holiday(name, anchor, year=int(m.group("year")) if m.group("year") else None,
                        delta=_RU_WHICH[which] if which else None, query=query, said=m, past=past)
        if span is not None:
            yield m, span


def _ru(text: str, anchor: date, query: bool, claims: _Claims | None = None, past: bool | None = None
        ) -> Iterable[Span]:
    lowered = text.lower().replace("ё", "е")
    free = (claims or _Claims()).free
    month_number = _ru_month_number

    # Longer expressions first: "за неделю до 5 мая", "с 3 по 7 мая", "в первое воскресенье мая".
    for m in _RU_BEFORE_AFTER.finditer(lowered):
        inner = [span for _, span in _ru_absolute(m.group("rest"), anchor, query)]
        if inner and free(m):
            unit = {"ден": "day", "нед": "week", "вых": "weekend", "мес": "month"}[m.group("unit")[:3]]
            yield _before_after(inner[0], unit, m.group("dir") != "после")
    for m in _RU_DAY_RANGE.finditer(lowered):
        month = month_number(m.group("month"))
        first_month = month_number(m.group("month1")) if m.group("month1") else month
        year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
        first = _safe_date(year, first_month, int(m.group("d1") or m.group("d1b")))
        last = _safe_date(year, month, int(m.group("d2")))
        if first and last and first < last and (last - first).days <= 400 and free(m):
            yield Span(first, last)
    for m in _RU_NTH_WEEKDAY.finditer(lowered):
        month = month_number(m.group("month"))
        year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
        weekday = next(n for stem, n in _RU_WEEKDAYS.items() if m.group("weekday").startswith(stem))
        found = _nth_weekday(year, month, weekday, _RU_NTH[m.group("nth")])
        if found and free(m):
            yield Span(found, found, month if query and not m.group("year") else 0)
    for m, span in _ru_absolute(lowered, anchor, query, past):
        if free(m):
            yield span
    for m in _RU_DAY_ALONE.finditer(lowered) if "го" in lowered or "числа" in lowered else ():
        span = _day_of_month(int(m.group("day") or m.group("day2")), m, anchor, query)
        if span and free(m):
            yield span
    for m in re.finditer(r"(?:в\s+|во\s+|с\s+|до\s+|к\s+)?(?:(?P<part>начал[ео]|конц[еа]|середин[еуы])\s+)?"
                         + r"(?<!\w)" + _RU_MONTH + r"(?:\s+(?P<year>(?:19|20)\d\d))?(?!\w)", lowered):
        month = month_number(m.group("month"))
        if not month or (month == 5 and not m.group(0).startswith(("в", "с", "до", "к")) and not m.group("year")):
            continue  # "мая"/"мае" alone is the month; "май" fine, but "мая" as a word part is not
        if free(m):
            year = int(m.group("year")) if m.group("year") else None
            span = _month_span(month, year, anchor, query=query, said=m)
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
        (r"(?:на\s+)?(?P<which>позапрошл|прошл|эт|следующ)\w*\s+недел\w*", "week"),
        (r"(?:в\s+|на\s+)?(?P<which>позапрошл|прошл|эт|следующ)\w*\s+выходн\w*", "weekend"),
        (r"(?:в\s+)?(?P<which>позапрошл|прошл|эт|следующ)\w*\s+месяц\w*", "month"),
        (r"(?:в\s+)?(?P<which>позапрошл|прошл|эт|следующ)\w*\s+год\w*", "year"),
    ]
    for pattern, unit in relative:
        for m in re.finditer(r"(?<!\w)" + pattern, lowered):
            if free(m):
                yield from _weekend(anchor, m, past, query) if unit == "weekend" and m.group("which") == "эт" else \
                    [_relative_unit(_RU_WHICH[m.group("which")], unit, anchor)]
    for m in _RU_WEEKEND.finditer(lowered) if "выходн" in lowered else ():
        spans = _bare_weekend(anchor, m, query, past)
        if spans and free(m):
            yield from spans
    for m in re.finditer(r"(?<!\w)(?:в\s+|во\s+|на\s+)(?:(?P<which>прошл|эт|следующ)\w*\s+)?" + _RU_WEEKDAY, lowered):
        weekday = next(n for stem, n in _RU_WEEKDAYS.items() if m.group("weekday").startswith(stem))
        spans = _ru_weekday(anchor, weekday, m, past, query)
        if spans and free(m):
            yield from spans
    for m in _RU_WEEKDAY_SHORT.finditer(lowered):
        spans = _ru_weekday(anchor, _RU_WEEKDAY_ABBREVIATIONS[m.group("weekday")], m, past, query)
        if spans and free(m):
            yield from spans
    for m in re.finditer(r"(?<!\w)" + _RU_NUMBER + r"\s+" + _RU_UNIT + r"\s+(?:тому\s+)?назад", lowered):
        if free(m):
            unit = _RU_UNITS[m.group("unit")[0]]
            yield _ago(_count(m.group("n"), _RU_NUMBERS), unit, anchor)
    # The count left unsaid: "неделю назад", "месяц назад", "год назад"; "полгода назад" is six months.
    for m in _RU_ONE_AGO.finditer(lowered):
        if free(m):
            unit = m.group("unit")
            yield _ago(6, "month", anchor) if unit.startswith("пол") else _ago(1, _RU_UNITS[unit[0]], anchor)
    for m in _RU_AHEAD.finditer(lowered) if "через" in lowered else ():
        if free(m):
            unit = m.group("unit")
            n = _count(m.group("n"), _RU_NUMBERS) if m.group("n") else 1
            yield _ago(6, "month", anchor, sign=1) if unit.startswith("пол") else \
                _ago(n, _RU_UNITS[unit[0]], anchor, sign=1)
    for m in re.finditer(r"(?<!\w)(?:(?P<which>позапрошл|прошл|эт|следующ)\w*\s+)?(?P<season>весн|лет|осен|зим)"
                         r"(?:ой|ом|ою|ью)(?:\s+(?P<year>(?:19|20)\d\d))?(?!\w)", lowered):
        if (m.group("which") or m.group("year")) and free(m):
            season = _SEASONS_RU[m.group("season")]
            if m.group("year"):
                yield _season(int(m.group("year")), season)
            else:
                yield _relative_season(anchor, season, _RU_WHICH[m.group("which")])


def _ru_weekday(anchor: date, weekday: int, m: re.Match[str], past: bool | None, query: bool = False
                ) -> list[Span]:
    """"В следующую субботу" the coming one, "в прошлую" the last; "в субботу", "в эту субботу" by the tense."""
    if m.group("which") == "следующ":
        return [_day(_weekday_after(anchor, weekday))]
    if m.group("which") == "прошл":
        return [_day(_weekday_before(anchor, weekday))]
    return _bare_weekday(anchor, weekday, m, past, query)


_RU_DAY_MONTH = re.compile(r"(?<!\w)(?P<day>[0-3]?\d)[-\s]*(?:го\s+)?" + _RU_MONTH
                           + r"(?:\s+(?P<year>(?:19|20)\d\d))?")
# Stems of holiday names to their day; "католическое Рождество" is 25 December, plain "Рождество" the
# Orthodox 7 January. "Новый год" is the holiday in the forms "на Новый год", "под Новый год", "с Новым
# годом", never "в новом году" (in the new year).
_RU_HOLIDAYS = (("католическ", "christmas"), ("рождеств", "orthodox_christmas"), ("канун", "new_years_eve"),
                ("новогодн", "new_years_eve"), ("матер", "mothers_day_ru"), ("валентин", "valentine"),
                ("ллоуин", "halloween"), ("пасх", "orthodox_easter"), ("нов", "new_year"))
# A day of the month alone: "20-го", "20 числа", "20-го числа" (not "20-го мая", read first by `_RU_DAY_MONTH`).
_RU_DAY_ALONE = re.compile(r"(?<![\w.,])(?P<day>[0-3]?\d)(?:-?го)?\s+числа(?!\w)"
                           r"|(?<![\w.,])(?P<day2>[0-3]?\d)-го(?!\w)")
_RU_HOLIDAY = re.compile(
    r"(?<!\w)(?:(?P<which>позапрошл|прошл|эт|следующ)\w*\s+)?(?P<holiday>католическ\w*\s+рождеств\w*|рождеств\w*"
    r"|канун\w*\s+нового\s+года|новогодн\w*\s+ноч\w*|нов(?:ый|ого|ому|ым)\s+год(?:а|у|ом)?(?!\w)"
    r"|х[эе]ллоуин\w*|пасх\w*|(?:день|дня|дню|днем)\s+(?:святого\s+)?валентина|(?:день|дня|дню|днем)\s+матери)"
    r"(?:\s+(?P<year>(?:19|20)\d\d))?"
)
_RU_BEFORE_AFTER = re.compile(r"(?<!\w)(?:за\s+|через\s+|на\s+следующ\w*\s+)?(?P<unit>день|неделю|выходные|месяц)"
                              r"\s+(?P<dir>до|перед|после)\s+(?P<rest>[^?.!,;]{3,40})")
_RU_DAY_RANGE = re.compile(
    r"(?<!\w)(?:с\s+(?P<d1>[0-3]?\d)(?:\s+" + _RU_MONTH.replace("?P<month>", "?P<month1>") + r")?\s+(?:по|до)\s+"
    r"|(?P<d1b>[0-3]?\d)\s*[-–—]\s*)(?P<d2>[0-3]?\d)\s+" + _RU_MONTH + r"(?:\s+(?P<year>(?:19|20)\d\d))?"
)
_RU_NTH = {"перв": 1, "втор": 2, "трет": 3, "четверт": 4, "пят": 5, "последн": -1}
_RU_NTH_WEEKDAY = re.compile(r"(?<!\w)(?:в|во)\s+(?P<nth>перв|втор|трет|четверт|пят|последн)\w*\s+" + _RU_WEEKDAY
                             + r"\s+" + _RU_MONTH + r"(?:\s+(?P<year>(?:19|20)\d\d))?")
# "На выходных", "в выходные", "на выходные"; not "по выходным", "каждые выходные" (every one) nor "в
# выходные дни" (days off).
_RU_WEEKEND = re.compile(r"(?<!\w)(?:на|в)\s+выходн(?:ых|ые)(?!\w)(?!\s+дн)")
_RU_WEEKDAY_ABBREVIATIONS = {"пн": 0, "вт": 1, "ср": 2, "чт": 3, "пт": 4, "сб": 5, "вс": 6}
_RU_WEEKDAY_SHORT = re.compile(r"(?<!\w)(?:в|во)\s+(?P<which>прошл|эт|следующ)\w*\s+(?P<weekday>пн|вт|ср|чт|пт|сб|вс)"
                               r"(?!\w)")


_ZH_DATE = (r"(?:(?P<year>\d{4})年|" + _ZH_RELATIVE_YEAR + r")?(?P<month>" + _ZH_NUM + r")(?:个)?月"
            r"(?:(?P<day>" + _ZH_NUM + r")[日号]|(?P<part>初|中旬|中|底|末))?")
# A day of the month alone, in digits: "20号", "3日" (not "3号楼", "1号线", "5号码", nor the day of
# "9月20号", read first).
_ZH_DAY_ALONE = re.compile(r"(?<![\d月第几.])(?P<day>[1-9]|[12]\d|3[01])[号日]"
                           r"(?![楼线码车位房门床机桌店厅馆室院口台本子记元])")
_ZH_HOLIDAYS = {"圣诞节": "christmas", "圣诞": "christmas", "平安夜": "christmas_eve", "元旦": "new_year",
                "跨年夜": "new_years_eve", "情人节": "valentine", "万圣节": "halloween", "感恩节": "thanksgiving",
                "母亲节": "mothers_day", "父亲节": "fathers_day", "复活节": "easter", "国庆节": "national_day_cn",
                "国庆": "national_day_cn", "劳动节": "labour_day_cn", "五一假期": "labour_day_cn",
                "春节": "spring_festival", "除夕": "spring_festival_eve", "中秋节": "mid_autumn", "中秋": "mid_autumn"}
_ZH_HOLIDAY = re.compile(r"(?:(?P<year>\d{4})年|" + _ZH_RELATIVE_YEAR + r")?(?P<holiday>"
                         + "|".join(sorted(_ZH_HOLIDAYS, key=len, reverse=True)) + r")")
# A day named outright, for "5月3日那周", "圣诞节前一周", "5月3日到7日": a date with its day, or a holiday.
_ZH_PIVOT = (r"(?P<pivot>(?:\d{4}年|大前年|前年|去年|今年|明年)?" + _ZH_NUM + r"月" + _ZH_NUM + r"[日号]|"
             + "|".join(sorted(_ZH_HOLIDAYS, key=len, reverse=True)) + r")")
_ZH_WEEK_OF = re.compile(_ZH_PIVOT + r"(?:的)?(?:那|这)(?:一)?(?:个)?(?P<unit>周末|周|星期|礼拜)")
_ZH_BEFORE_AFTER = re.compile(_ZH_PIVOT + r"(?:的)?(?P<dir>前|后|之前|之后|以前|以后)(?:的)?一(?:个)?"
                              r"(?P<unit>天|周末|周|星期|礼拜|月)")
_ZH_DAY_RANGE = re.compile(r"(?:(?P<year>\d{4})年)?(?P<month>" + _ZH_NUM + r")月(?P<d1>" + _ZH_NUM + r")[日号]?"
                           r"(?:到|至|[-–—~～])(?:(?P<month2>" + _ZH_NUM + r")月)?(?P<d2>" + _ZH_NUM + r")[日号]")
_ZH_NTH_WEEKDAY = re.compile(r"(?:(?P<year>\d{4})年)?(?P<month>" + _ZH_NUM + r")月(?:的)?(?:第(?P<nth>[一二三四五1-5])|"
                             r"(?P<last>最后一))个(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])")
# A bare "周末" (not "每周末", "每个周末", "一个周末"; "上周末", "这个周末" are read before it).
_ZH_WEEKEND = re.compile(r"(?<![上下这本每个])周末")
# After 到 it ends a range ("周一到周五"), unless a verb moves something to it ("改到周五", "推迟到周一", "挪到周六",
# `_arranged_for`).
_ZH_BARE_WEEKDAY = re.compile(r"(?<![上这本下每个至“「『\"])(?<!(?<![改迟挪前])到)"
                              r"(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])"
                              r"(?![到至”」』\"天次个年])")
# "去年夏天", "今年春季", "2022年冬天": a season of a named year (a bare "夏天" says no year, as "in the
# summer" does not). Before the years, which would otherwise read "去年" as the whole year.
_SEASONS_ZH = {"春": "spring", "夏": "summer", "秋": "autumn", "冬": "winter"}
_ZH_SEASON = re.compile(r"(?:(?P<year>\d{4})年|" + _ZH_RELATIVE_YEAR + r")(?:的)?(?P<season>[春夏秋冬])(?:天|季)")
# "月初", "上个月底", "这个月中旬": a part of this, last or next month. A numbered month ("5月初") is _ZH_DATE's.
_ZH_PART_OF_MONTH = re.compile(r"(?<![\d零一二两三四五六七八九十个])(?:(?P<which>上上|上|这|本|下)(?:个)?)?月"
                               r"(?P<part>初|中旬|底|末)")
_ZH_UNITS = {"天": "day", "周末": "weekend", "周": "week", "星期": "week", "礼拜": "week", "月": "month"}


def _zh_absolute(text: str, anchor: date, query: bool) -> Span | None:
    """The day `_ZH_PIVOT` matched: a date ("2023年5月3日", "5月3号") or a holiday."""
    if text in _ZH_HOLIDAYS:
        return _holiday(_ZH_HOLIDAYS[text], anchor, query=query)
    m = re.fullmatch(_ZH_DATE, text)
    if m is None or not m.group("day"):
        return None
    month = _zh_number(m.group("month"))
    year = (int(m.group("year")) if m.group("year")
            else anchor.year + _ZH_RELATIVE_YEARS[m.group("rel")] if m.group("rel") else _past_month(anchor, month))
    found = _safe_date(year, month, _zh_number(m.group("day"))) if 1 <= month <= 12 else None
    return _day(found) if found else None


def _zh(text: str, anchor: date, query: bool, claims: _Claims | None = None, past: bool | None = None
        ) -> Iterable[Span]:
    free = (claims or _Claims()).free

    # Longer expressions first: "5月3日那周", "圣诞节前一周", "5月3日到7日", "五月的第二个星期日".
    if "周" in text or "星期" in text or "礼拜" in text:
        for m in _ZH_WEEK_OF.finditer(text):
            pivot = _zh_absolute(m.group("pivot"), anchor, query)
            if pivot and free(m):
                week = _week_of(pivot.start)
                first = week.start + timedelta(days=5) if m.group("unit") == "周末" else week.start
                yield Span(first, week.end, pivot.month_only)
        for m in _ZH_NTH_WEEKDAY.finditer(text):
            month = _zh_number(m.group("month"))
            if not 1 <= month <= 12:
                continue
            year = int(m.group("year")) if m.group("year") else _past_month(anchor, month)
            nth = -1 if m.group("last") else _zh_number(m.group("nth"))
            found = _nth_weekday(year, month, _ZH_WEEKDAYS[m.group("weekday")], nth)
            if found and free(m):
                yield Span(found, found, month if query and not m.group("year") else 0)
    for m in _ZH_BEFORE_AFTER.finditer(text):
        pivot = _zh_absolute(m.group("pivot"), anchor, query)
        if pivot and free(m):
            unit = _ZH_UNITS[m.group("unit")]
            yield _before_after(pivot, unit, m.group("dir")[-1] == "前")
    for m in _ZH_DAY_RANGE.finditer(text):
        month = _zh_number(m.group("month"))
        last_month = _zh_number(m.group("month2")) if m.group("month2") else month
        if not (1 <= month <= 12 and 1 <= last_month <= 12):
            continue
        year = int(m.group("year")) if m.group("year") else _past_month(anchor, last_month)
        first = _safe_date(year, month, _zh_number(m.group("d1")))
        last = _safe_date(year, last_month, _zh_number(m.group("d2")))
        if first and last and first < last and free(m):
            yield Span(first, last)
    for m in _ZH_HOLIDAY.finditer(text):
        year = (int(m.group("year")) if m.group("year")
                else anchor.year + _ZH_RELATIVE_YEARS[m.group("rel")] if m.group("rel") else None)
        span = _holiday(_ZH_HOLIDAYS[m.group("holiday")], anchor, year=year, query=query, said=m, past=past)
        if span and free(m):
            yield span

    for m in _ZH_SEASON.finditer(text) if "年" in text else ():
        if free(m):
            year = int(m.group("year")) if m.group("year") else anchor.year + _ZH_RELATIVE_YEARS[m.group("rel")]
            yield _season(year, _SEASONS_ZH[m.group("season")])
    for m in _ZH_PART_OF_MONTH.finditer(text) if "月" in text else ():
        if free(m):
            month = _relative_unit(_ZH_WHICH[m.group("which")] if m.group("which") else 0, "month", anchor)
            yield _part_of_month(m.group("part")[0], month)
    for m in re.finditer(_ZH_DATE, text):
        month = _zh_number(m.group("month"))
        if ("个" in m.group(0) and not m.group("day")) or not 1 <= month <= 12 or not free(m):
            continue  # "三个月" is a duration, not March
        year = (int(m.group("year")) if m.group("year")
                else anchor.year + _ZH_RELATIVE_YEARS[m.group("rel")] if m.group("rel") else None)
        if m.group("day"):
            found = _safe_date(year or _said_year(anchor, month, query, m), month,
                               _zh_number(m.group("day")))
            if found:
                yield _day(found)
        else:
            span = _month_span(month, year, anchor, query=query, said=m)
            yield _part_of_month(m.group("part")[0], span) if m.group("part") else span
    for m in _ZH_DAY_ALONE.finditer(text) if "号" in text or "日" in text else ():
        span = _day_of_month(int(m.group("day")), m, anchor, query)
        if span and free(m):
            yield span
    for m in re.finditer(r"(?P<year>\d{4})年", text):
        if free(m):
            yield _year(int(m.group("year")))
    simple = {"大前天": -3, "前天": -2, "前几天": -3, "昨天": -1, "昨晚": -1, "今天": 0, "今晚": 0, "明天": 1,
              "后天": 2}
    for word, offset in simple.items():
        for m in re.finditer(word, text):
            if free(m):
                yield _day(anchor + timedelta(days=offset))
    for m in re.finditer(r"(?P<which>上上|下下|上|这|本|下)(?:个)?周末", text):
        if not free(m):
            continue
        if _ZH_WHICH[m.group("which")] == 0:
            yield from _weekend(anchor, m, past, query)  # "这周末", "这个周末": as a bare "周末"
        else:
            # Weeks start on Monday: "上周末" is the Saturday and Sunday of last week.
            week = _week_of(anchor + timedelta(days=7 * _ZH_WHICH[m.group("which")]))
            yield Span(week.start + timedelta(days=5), week.end)
    for m in re.finditer(r"(?P<which>上上|下下|上|这|本|下)(?:个)?(?:周|星期|礼拜)(?P<weekday>[一二三四五六日天])?",
                         text):
        if free(m):
            week = _week_of(anchor + timedelta(days=7 * _ZH_WHICH[m.group("which")]))
            if m.group("weekday"):
                yield _day(week.start + timedelta(days=_ZH_WEEKDAYS[m.group("weekday")]))
            else:
                yield week
    for m in re.finditer(r"(?P<which>上上|下下|上|这|本|下)(?:个)?月", text):
        if free(m):
            yield _relative_unit(_ZH_WHICH[m.group("which")], "month", anchor)
    for word, delta in _ZH_RELATIVE_YEARS.items():
        for m in re.finditer(word, text):
            if free(m):
                yield _year(anchor.year + delta)
    for m in re.finditer(r"(?P<n>" + _ZH_NUM + r"|几|两)(?P<unit>天|个?星期|个?周末|周|个月|年)(?:以?前)", text):
        if free(m):
            n = 3 if m.group("n") == "几" else _zh_number(m.group("n"))
            unit = m.group("unit")
            yield _ago(n, "day" if unit == "天" else "year" if unit == "年" else "month" if "月" in unit
                       else "weekend" if "末" in unit else "week", anchor)
    for m in re.finditer(r"半年(?:以?前)", text) if "半年" in text else ():
        if free(m):
            yield _ago(6, "month", anchor)
    # Ahead: "三天后", "两个星期以后", "一个月之后" (a plan: "三天后我要去上海").
    for m in re.finditer(r"(?P<n>" + _ZH_NUM + r"|几|两)(?P<unit>天|个?星期|周|个月|年)(?:以后|之后|后)", text) \
            if "后" in text else ():
        if free(m):
            n = 3 if m.group("n") == "几" else _zh_number(m.group("n"))
            unit = m.group("unit")
            yield _ago(n, "day" if unit == "天" else "year" if unit == "年" else "month" if "月" in unit else "week",
                       anchor, sign=1)
    # A weekday alone ("周五我们去了…", "星期天"), read by its sentence's tense like "on Friday"; not "每周五"
    # (every Friday), "周一到周五" (a range of days), "一周五天" (five days a week) nor a quoted name (“星期五”).
    for m in _ZH_BARE_WEEKDAY.finditer(text):
        spans = _bare_weekday(anchor, _ZH_WEEKDAYS[m.group("weekday")], m, past, query)
        if spans and free(m):
            yield from spans
    for m in _ZH_WEEKEND.finditer(text) if "周末" in text else ():
        spans = _bare_weekend(anchor, m, query, past)
        if spans and free(m):
            yield from spans


# ---------------------------------------------------------------------------------------------------------
# Public interface
# ---------------------------------------------------------------------------------------------------------

_CYRILLIC = re.compile("[\u0400-\u04ff]")
_HAN = re.compile("[\u4e00-\u9fff]")


def mentions(text: str, anchor: date, *, query: bool = False, past: bool | None = None) -> list[Span]:
    """Every date span the text mentions, resolved against `anchor` (the day it was said). `past`: the text's
    tense as `tense` gives it (True past, False the future, None neither), when the caller knows it better than
    the text's own words do (an expression read apart from its sentence); by default each sentence's tense
    decides where it matters ("this weekend", "on Saturday")."""
    spans = _resolved(_en(text, anchor, query, None, past))
    if _CYRILLIC.search(text):
        spans += _resolved(_ru(text, anchor, query, None, past))
    if _HAN.search(text):
        spans += _resolved(_zh(text, anchor, query, None, past))
    return [s for s in spans if s.start <= s.end]


# What makes a date expression name the same days whenever it is said: a digit, a month, a holiday.
_ANCHORED = re.compile(r"\d|[一二两三四五六七八九十]月|" + _EN_HOLIDAY + "|" + _EN_MONTH.replace("(?P<month>", "(?:")
                       + r"|\b(?:" + "|".join(_RU_MONTHS) + r")|" + "|".join(_ZH_HOLIDAYS), re.IGNORECASE)


def relative_expressions(text: str, anchor: date) -> list[tuple[int, int]]:
    """Where the text says a date relative to when it is said ("last week", "в прошлом году", "去年",
    "two days ago"): their words name different days in every turn that says them, so as search
    words they matched a turn that said "last week" a month before the week a question asks about.
    The question's date terms say which days it means. Expressions with a digit, a month or a
    holiday ("June 9", "last Christmas") are left out: their words are the topic too. So is the plan
    word of a question about a plan whose weekday or weekend it reads both ways ("what did I plan for
    the weekend?", `_either_side`): "plan", "планировал", "计划" are said of plans for every other day
    ("My plans for the evening fell through"), which as a full word outranked the plan told for the
    Saturday that the date terms find."""
    ranges: list[tuple[int, int]] = []
    if len(text.lower()) != len(text):
        return ranges  # a letter whose lower case is longer ("İ"): the readers' places would not be the text's
    readers = [_en] + ([_ru] if _CYRILLIC.search(text) else []) + ([_zh] if _HAN.search(text) else [])
    for reader in readers:
        claims = _Claims()
        spans = _resolved(reader(text, anchor, True, claims))
        ranges += [(a, b) for a, b in claims.taken if not _ANCHORED.search(text[a:b])]
        if any(span.either for span in spans):
            ranges += [m.span() for m in _PLAN.finditer(text)]
    return sorted(ranges)


# "Last time" of a conversation: "what did I tell you last time?", "что я говорил в прошлый раз?",
# "我上次说了什么？". The same words also name the last time something happened ("the last time I went to
# the dentist", "我上次去北京"), whose answer is no conversation's day: so the phrase counts only beside a
# verb of saying said by the user or to them ("what did my sister say last time?" is about her), or as
# "our last conversation" with a word for a conversation.
_LAST_TIME_EN = re.compile(r"\blast\s+time\b|\bwhen\s+we\s+last\b")
_LAST_TALK_EN = re.compile(r"\b(?:our|the)\s+last\s+(?:conversation|chat|talk|session|call)s?\b")
_SAYING_EN = re.compile(r"\b(?:say|said|tell|told|talk(?:ed)?|spoke|speak|mention(?:ed)?|chat(?:ted)?|"
                        r"discuss(?:ed)?|share[d]?|ask(?:ed)?)\b")
_LAST_TIME_RU = re.compile(r"(?<!\w)(?:в\s+)?прошлый\s+раз(?!\w)")
_LAST_TALK_RU = re.compile(r"(?<!\w)(?:в\s+)?(?:прошл(?:ом|ый|ой)|последн(?:ем|ий|ей))\s+(?:наш(?:ем|ей)?\s+)?"
                           r"(?:разговор[еа]?|бесед[еуы]|переписк[еи]|сесси[ию])(?!\w)")
_SAYING_RU = re.compile(r"(?<!\w)(?:говор|сказ|рассказ|упомин|упомян|обсужд|обсуди|болта|общал|беседова|писал|"
                        r"спрашива|делил)\w*")
_LAST_TIME_ZH = re.compile(r"上一?次|上回")
_SAYING_ZH = re.compile(r"[说聊讲提谈问]|告诉")
_US_EN = re.compile(r"\b(?:i|we|you)\b")
_US_RU = re.compile(r"(?<!\w)(?:я|мы|ты|вы|мне|нам|тебе|вам)(?!\w)")
_US_ZH = re.compile(r"[我你咱]")


def last_conversation_phrases(text: str) -> list[tuple[int, int]]:
    """Where a question refers to the user's previous conversation (the phrase and its verbs of
    saying); empty when it does not. The search resolves it to that conversation's day
    (`memoryhub.selectors.previous_conversation_day`)."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return []  # as in relative_expressions: places in the lower-cased text must be the text's
    found: list[tuple[int, int]] = []
    for phrase, saying, us in ((_LAST_TIME_EN, _SAYING_EN, _US_EN), (_LAST_TIME_RU, _SAYING_RU, _US_RU),
                               (_LAST_TIME_ZH, _SAYING_ZH, _US_ZH)):
        spans = [m.span() for m in phrase.finditer(lowered)]
        verbs = [m.span() for m in saying.finditer(lowered)]
        if spans and verbs and us.search(lowered):
            found += spans + verbs  # the verb is the question's frame too: "tell" is no topic of it
    found += [m.span() for talk in (_LAST_TALK_EN, _LAST_TALK_RU) for m in talk.finditer(lowered)]
    return sorted(found)


def asks_last_conversation(text: str) -> bool:
    return bool(last_conversation_phrases(text))


def _resolved(spans: Iterable[Span]) -> list[Span]:
    """The spans up to one outside the calendar: "last Friday" said on 2 January of year 1 (a client may
    date a message so) is before date.min, and its OverflowError failed the index job on every retry."""
    out: list[Span] = []
    with contextlib.suppress(OverflowError, ValueError):
        out.extend(spans)  # keeps the spans made before the one that failed
    return out


def span_terms(span: Span, *, widen: bool = True) -> list[str]:
    """The terms of the units a span overlaps: days up to a fortnight, ISO weeks up to two
    months, months up to a season and a half, years always. Without `widen`, only the units no
    longer than the span: a day is not its week, month and year."""
    terms: list[str] = []
    days = span.days
    if days <= 14:
        terms += [f"@d{(span.start + timedelta(days=i)).isoformat()}" for i in range(days)]
    if days <= 62 and (widen or days >= 7):
        weeks = {(span.start + timedelta(days=i)).isocalendar()[:2] for i in range(0, days, 1)}
        terms += [f"@w{y}-{w:02d}" for y, w in sorted(weeks)]
    if days <= 140 and (widen or days >= 28):
        months = sorted({(d.year, d.month) for d in (span.start + timedelta(days=i) for i in range(days))})
        terms += [f"@m{y}-{m:02d}" for y, m in months]
        terms += sorted({f"@mo{m:02d}" for _, m in months})
    if widen or days >= 365:
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
    r"(?<!\w)(?<!через\s)(?:\d{1,3}|один|одну|два|две|три|четыре|пять|шесть|семь|восемь|девять|десять|пару|несколько)\s+"
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
    r"\b(?:when|(?:what|which) (?:time|date|day|week|weekend|month|season|year)|how long ago|since when"
    r"|(?:after )?how (?:long|many (?:days|weeks|months|years)) (?:\w+ )?(?:passed|elapsed|went by|between|after"
    r"|before|since|later|earlier|ago)|after how (?:long|many)|how recently)\b"
    r"|(?<!\w)(?:когда|в каком (?:году|месяце)|какого числа|в какой день|как давно|через сколько"
    r"|сколько (?:дней|недель|лет|месяцев) (?:назад|прошло|спустя))(?!\w)"
    r"|什么时候|哪天|哪一天|几月|几号|哪年|哪一年|哪个月|哪一周|多久以前|多少(?:天|年|个月)前|何时|相隔|隔了多久|过了多久",
)


def asks_when(query: str) -> bool:
    return bool(_WHEN.search(query.lower()))


def query_terms(query: str, now: datetime | date) -> list[str]:
    """A query's date terms: the dates it names (a month without a year as @mo, any year's), and
    @t when it asks "when".

    A past date widens to its week, month and year, so a turn said a day off still matches. "Today"
    ("…tonight?", "сегодня", "今晚") is the moment of asking, not a date to look up: today's turns are
    the conversation the prompt already holds, and as terms it matched every turn said this week and
    month above the one the question is about ("What should I cook for dinner tonight?"). A date
    reaching today or later ("this week", "tomorrow") asks for itself: it is not widened. Either reading of a
    weekday or weekend that a question about a plan leaves open (`Span.either`) asks for its days and its week."""
    return [term for term, _ in _query_terms(query, now)]


def _query_terms(query: str, now: datetime | date) -> list[tuple[str, float]]:
    """`query_terms`, each with its share of its level's count (`query_weights`): 1, or 1/2 for a term of
    either of the two readings a question leaves open (`_either_side`), which are alternatives, not a longer
    span that shares the weight: each weighs as the question's only reading would."""
    anchor = now.date() if isinstance(now, datetime) else now
    terms: list[tuple[str, float]] = []
    for span in mentions(query, anchor, query=True):
        if span.month_only:
            # A month named without a year: only the month-of-year term says it; the most
            # recent such month is a guess, not something the question stated.
            terms.append((f"@mo{span.month_only:02d}", 1.0))
            continue
        if span.start == span.end == anchor:
            continue
        if span.either:
            year, week, _ = span.start.isocalendar()
            terms += [(term, 0.5) for term in [*span_terms(span, widen=False), f"@w{year}-{week:02d}"]]
            continue
        terms += [(term, 1.0) for term in span_terms(span, widen=span.end < anchor)]
    if asks_when(query):
        terms.append((TIME_REFERENCE, 1.0))
    if asks_how_long(query):
        terms.append((DURATION, 1.0))
    return terms


# How much a query's date terms weigh in BM25, where each query word weighs 1. The terms of a level
# share its weight, so "the week before 16 November" (seven day terms) weighs like "16 November";
# a year or a month of any year says less than a month or a day. Chosen on the tuning half of the
# LoCoMo split (conversations 0-2): 1x, 2x, 3x differ by < 0.005 recall@10; see docs/retrieval.md.
DATE_WEIGHT = 2.0
WHEN_WEIGHT = 1.0
# A "when" question is also answered by how long: "When did Nate get his turtles?" by "I've had them for 3
# years now" (@dur), which names no date. Chosen on the LoCoMo tune half from 0.3 / 0.5 / 1 (temporal recall@10
# 0.956 -> 0.967 / 0.967 / 0.944); test 0.817 -> 0.817, recall@25 0.871 -> 0.886 (docs/retrieval.md "Date terms").
WHEN_DURATION_WEIGHT = 0.5
_LEVELS = (("@mo", 0.5), ("@d", 1.0), ("@w", 1.0), ("@m", 1.0), ("@y", 0.5))


def _level(term: str) -> tuple[str, float]:
    return next(((prefix, weight) for prefix, weight in _LEVELS if term.startswith(prefix)), ("", 1.0))


def query_weights(query: str, now: datetime | date) -> dict[str, float]:
    """`query_terms` with their BM25 weights."""
    terms = _query_terms(query, now)
    per_level: dict[str, float] = {}
    for term, share in terms:
        per_level[_level(term)[0]] = per_level.get(_level(term)[0], 0.0) + share
    weights = {DURATION: WHEN_DURATION_WEIGHT} if any(term == TIME_REFERENCE for term, _ in terms) else {}
    for term, _ in terms:
        if term in (TIME_REFERENCE, DURATION):
            weights[term] = WHEN_WEIGHT
            continue
        prefix, weight = _level(term)
        weights[term] = DATE_WEIGHT * weight / per_level[prefix]
    return weights
