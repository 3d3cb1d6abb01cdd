"""A weekday said without "last" or "next" ("on Saturday", "в субботу", "周六"): the coming one when its sentence
speaks of the future or an intention, the last one when it is told in the past or says neither; a habit is no date.

Found by a QA pass: on Wednesday 2026-11-25 "В субботу мы с другом Сергеем едем на дачу" made the friend's bio say
"В субботу (2026-11-21) …", the Saturday before; so did "On Friday I have my dentist appointment", "I'm meeting Tom
on Saturday", "周六我要去看牙医", "星期五我们去爬山". And a date written after a Chinese expression had a space
before it ("我下个月 (2027-01)要去"), where Chinese writes none between words.
"""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr
from memoryhub.dates import anchor_relative_dates
from rag.memories.when import anchor_dates, names_days_ahead

WEDNESDAY = date(2026, 11, 25)
SATURDAY = date(2026, 11, 28)
LAST = {"monday": "2026-11-23", "friday": "2026-11-20", "saturday": "2026-11-21", "sunday": "2026-11-22"}
COMING = {"monday": "2026-11-30", "friday": "2026-11-27", "saturday": "2026-11-28", "sunday": "2026-11-29"}


def read(text: str, anchor: date = WEDNESDAY, *, query: bool = False) -> list[str]:
    return [span.iso() for span in timeexpr.mentions(text, anchor, query=query)]


@pytest.mark.parametrize(("text", "day"), [
    ("On Friday I have my dentist appointment", "friday"),
    ("I'm meeting Tom on Saturday", "saturday"),
    ("We're having a party on Saturday!", "saturday"),
    ("I will call my mom on Sunday", "sunday"),
    ("I need to finish the report by Friday", "friday"),
    ("this Friday we're going to the zoo", "friday"),
    ("В субботу мы с другом Сергеем едем на дачу", "saturday"),
    ("в пятницу идём в кино", "friday"),
    ("В воскресенье летим в Сочи.", "sunday"),
    ("В субботу встречаемся с Машей у метро", "saturday"),
    ("Лена приезжает в воскресенье", "sunday"),
    ("Я устала, но в субботу поеду к маме", "saturday"),
    ("В субботу собираемся в театр", "saturday"),
    ("в пятницу я собирался к врачу", "friday"),
    ("周六我要去看牙医", "saturday"),
    ("星期五我们去爬山", "friday"),
    ("礼拜天我们打算去公园", "sunday"),
    ("周日你来我家吧", "sunday"),
    # Only the sentence's own tense counts; an intention outweighs a past word beside it.
    ("We went to the beach. On Saturday we will hike.", "saturday"),
    ("I was thinking we will hike on Saturday", "saturday"),
    # A wish is no habit ("I like to swim on Saturdays" is one).
    ("I'd love to see you on Friday", "friday"),
    ("周日的音乐会我会去", "sunday"),
    # A promise or an invitation dates what was promised, though told in the past (a QA pass: on a Sunday
    # "Коллега Дима обещал подменить меня в понедельник" dated the colleague's bio to the Monday before, and
    # "Моя подруга Катя зовёт в субботу в театр" to the day before).
    ("Коллега Дима обещал подменить меня в понедельник", "monday"),
    ("Катя зовёт в субботу в театр", "saturday"),
    ("Соседи пригласили нас в гости в воскресенье", "sunday"),
    ("My colleague promised to cover for me on Monday", "monday"),
    ("Kate invited us to the theatre on Saturday", "saturday"),
    ("Kate invites us to dinner on Friday", "friday"),
    ("小王答应周一帮我代班", "monday"),
    ("朋友邀请了我周六去他家", "saturday"),
    # A clause of its own tells the weekday's tense, a past word in the sentence's other clause aside (a QA pass:
    # on a Sunday "Jess just got promoted, we are celebrating on Friday" dated the bio to the Friday before).
    ("My girlfriend Jess just got promoted, we are celebrating on Friday", "friday"),
    ("Звонила мама, в субботу едем к ней", "saturday"),
    ("我去了医院，周六还要复查", "saturday"),
])
def test_a_bare_weekday_of_the_future_is_the_coming_one(text: str, day: str) -> None:
    assert read(text) == [COMING[day]]


@pytest.mark.parametrize(("text", "day"), [
    ("On Saturday we went to the lake", "saturday"),
    ("I was at the store on Friday when it started to rain", "friday"),
    ("в субботу мы ездили на дачу", "saturday"),
    ("В пятницу шли в кино, а попали на концерт", "friday"),
    # "Собирали" is gathering, told in the past; only the reflexive "собираться" intends (a QA pass: a bio
    # dated "В выходные ездили … собирали яблоки" to the coming weekend).
    ("В субботу ездили на дачу, собирали яблоки", "saturday"),
    ("в субботу собирали грибы", "saturday"),
    ("周六我们去了海边", "saturday"),
    ("星期五我去过那家店", "friday"),
    # Neither told in the past nor of the future: chat about what happened mostly means the last one.
    ("the concert on Saturday", "saturday"),
    ("в субботу концерт", "saturday"),
    ("周日的音乐会", "sunday"),
    # The tense is the weekday's clause's first: "I'm taking" is of another one.
    ("I saw the doctor on Friday and I'm taking new pills", "friday"),
    ("We hiked on Saturday and we will rest a bit", "saturday"),
    ("Mom called, on Saturday", "saturday"),
])
def test_a_bare_weekday_told_in_the_past_or_with_neither_is_the_last_one(text: str, day: str) -> None:
    assert read(text) == [LAST[day]]


@pytest.mark.parametrize(("text", "expected"), [
    ("Happy Saturday!", "2026-11-28"),
    ("в субботу дома", "2026-11-28"),
    ("周六快乐", "2026-11-28"),
    ("On Saturday we went to the lake", "2026-11-21"),
    ("в субботу мы ездили на дачу", "2026-11-21"),
    ("周六我们去了海边", "2026-11-21"),
    ("I'm meeting Tom on Saturday", "2026-12-05"),
    ("В субботу мы едем на дачу", "2026-12-05"),
    ("周六我要去看牙医", "2026-12-05"),
])
def test_said_on_that_very_weekday_it_is_today_unless_its_tense_says_a_week_back_or_on(text: str,
                                                                                         expected: str) -> None:
    assert read(text, SATURDAY) == [expected]


@pytest.mark.parametrize("text", [
    "every Saturday I go swimming", "On Saturdays I go swimming", "I usually go swimming on Saturday",
    "I'd love to, but on Friday I always work late",
    "по субботам хожу в бассейн", "каждую субботу хожу в бассейн", "в субботу я обычно сплю до обеда",
    "我每周六去游泳", "周六我一般在家", "星期天我喜欢去公园",
])
def test_a_weekday_that_recurs_is_no_date(text: str) -> None:
    assert read(text) == []


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm going to tell you about last Saturday", LAST["saturday"]),
    ("Last Friday I booked the tickets, next Saturday we fly", f"{LAST['friday']} {COMING['saturday']}"),
    ("в прошлую субботу будем вспоминать долго", LAST["saturday"]),
    ("в следующую пятницу мы ездили бы", COMING["friday"]),
    ("上周六的事我要告诉你", LAST["saturday"]),
    ("下周五我们去了吗", "2026-12-04"),
])
def test_a_weekday_named_last_or_next_keeps_its_reading(text: str, expected: str) -> None:
    assert " ".join(read(text)) == expected


@pytest.mark.parametrize(("query", "day"), [
    ("What am I doing on Saturday?", COMING["saturday"]),
    ("Что мы будем делать в субботу?", COMING["saturday"]),
    ("我周六要做什么？", COMING["saturday"]),
    ("What did I do on Saturday?", LAST["saturday"]),
    ("Что я делал в субботу?", LAST["saturday"]),
    ("我周六做了什么？", LAST["saturday"]),
])
def test_a_question_about_a_weekday_asks_for_the_one_its_tense_means(query: str, day: str) -> None:
    terms = timeexpr.query_terms(query, WEDNESDAY)
    assert f"@d{day}" in terms
    assert [term for term in terms if term.startswith("@d")] == [f"@d{day}"]


@pytest.mark.parametrize(("sentence", "tense"), [
    ("We went to the lake", True), ("We will go to the lake", False), ("I'm meeting Tom", False), ("Hi", None),
    ("Мы ездили на дачу", True), ("Мы едем на дачу", False), ("Привет", None),
    ("我们去了海边", True), ("我们去爬山", False), ("你好", None),
])
def test_a_sentences_tense(sentence: str, tense: bool | None) -> None:
    assert timeexpr.tense(sentence) is tense


@pytest.mark.parametrize(("text", "anchored"), [
    ("В субботу мы с другом Сергеем едем на дачу.", "В субботу (2026-11-28) мы с другом Сергеем едем на дачу."),
    ("В субботу Сергей ездил на дачу.", "В субботу (2026-11-21) Сергей ездил на дачу."),
    # A clause read apart from its sentence keeps the sentence's tense.
    ("Мы едем на дачу к Сергею, в субботу.", "Мы едем на дачу к Сергею, в субботу (2026-11-28)."),
    ("I'm meeting Tom on Saturday.", "I'm meeting Tom on Saturday (2026-11-28)."),
    ("Tom has his dentist appointment on Friday.", "Tom has his dentist appointment on Friday (2026-11-27)."),
    ("Tom went hiking on Friday.", "Tom went hiking on Friday (2026-11-20)."),
    ("周六我要和小王去看牙医。", "周六(2026-11-28)我要和小王去看牙医。"),
    ("星期五小王去了北京。", "星期五(2026-11-20)小王去了北京。"),
    ("小王下个月要去上海。", "小王下个月(2026-12)要去上海。"),
    ("Tom swims every Saturday.", "Tom swims every Saturday."),
    ("Маша по субботам ходит в бассейн.", "Маша по субботам ходит в бассейн."),
    ("小王每周六去游泳。", "小王每周六去游泳。"),
])
def test_a_bios_weekday_is_anchored_by_its_sentences_tense(text: str, anchored: str) -> None:
    assert anchor_relative_dates(text, WEDNESDAY) == anchored
    assert anchor_relative_dates(anchored, SATURDAY) == anchored  # anchored once


@pytest.mark.parametrize(("said", "on_wednesday", "on_saturday"), [
    ("On Saturday I have a concert", "On Saturday (2026-11-28) I have a concert",
     "On Saturday (2026-12-05) I have a concert"),
    ("В субботу мы едем на дачу", "В субботу (2026-11-28) мы едем на дачу", "В субботу (2026-12-05) мы едем на дачу"),
    ("我周六去爬山", "我周六(2026-11-28)去爬山", "我周六(2026-12-05)去爬山"),
])
def test_a_plans_weekday_is_the_coming_one_a_week_on_when_said_that_day(said: str, on_wednesday: str,
                                                                        on_saturday: str) -> None:
    """A typed memory's plan reads its weekday as the readers read one of the future; said on that very weekday
    it was the Saturday before (and so no plan at all), as "today" would have been said for today."""
    assert anchor_dates(said, WEDNESDAY) == on_wednesday
    assert anchor_dates(said, SATURDAY) == on_saturday
    assert names_days_ahead(said, SATURDAY)
    assert anchor_dates(said, SATURDAY, told_in_past=True) != on_saturday


@pytest.mark.parametrize("query", ["What do I usually do on Saturday?", "Что я обычно делаю в субботу?",
                                   "我周六一般做什么？"])
def test_a_question_about_a_recurring_weekday_keeps_its_words_and_names_no_day(query: str) -> None:
    """Its words are the topic ("Saturday" matches the turns that tell of Saturdays), not a date taken out of it."""
    assert timeexpr.query_terms(query, WEDNESDAY) == []
    assert timeexpr.relative_expressions(query, WEDNESDAY) == []
