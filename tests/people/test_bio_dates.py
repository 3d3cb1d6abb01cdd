"""A bio line built from a message keeps its relative dates anchored to the day the message was sent.

Found by a QA trial: "Неделю назад Маша вернулась из Праги" became Маша's bio as it was, and a month
later the prompt still said "a week ago". The words stay; the dates they meant follow them.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, date, datetime

import pytest

from memoryhub.dates import anchor_relative_dates
from memoryhub.models import Tenant
from people import services
from people.models import Person
from tests.factories import append_messages
from tests.llm_server import OpenAICompatServer

SAID = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)  # a Saturday


@pytest.mark.parametrize(("text", "anchored"), [
    ("Неделю назад Маша вернулась из Праги.", "Неделю назад (2025-02-17 – 2025-02-23) Маша вернулась из Праги."),
    ("Лена уволилась 3 дня назад, теперь ищет работу.", "Лена уволилась 3 дня назад (2025-02-26), теперь ищет работу."),
    ("Вчера Петя купил машину, а в прошлом году уехал в Казань.",
     "Вчера (2025-02-28) Петя купил машину, а в прошлом году (2024) уехал в Казань."),
    ("Tom moved to Berlin last month.", "Tom moved to Berlin last month (2025-02)."),
    ("Two days ago Anna got married.", "Two days ago (2025-02-27) Anna got married."),
    ("Tom came back 2 weeks ago.", "Tom came back 2 weeks ago (2025-02-10 – 2025-02-16)."),
    ("上周小王去了北京出差。", "上周(2025-02-17 – 2025-02-23)小王去了北京出差。"),
    ("张伟昨天生了孩子。", "张伟昨天(2025-02-28)生了孩子。"),
    ("小李2天前换了工作。", "小李2天前(2025-02-27)换了工作。"),
])
def test_a_relative_date_is_followed_by_the_dates_it_meant(text: str, anchored: str) -> None:
    assert anchor_relative_dates(text, SAID) == anchored
    # Read again later, or passed again as a whole: anchored once.
    assert anchor_relative_dates(anchored, datetime(2026, 1, 1, tzinfo=UTC)) == anchored


@pytest.mark.parametrize("text", [
    "Коллега Петров 5 мая 2024 года переехал в Казань.",
    "Tom left on June 9, 2023.",
    "In 2020 Tom moved to Lisbon.",
    "2023年3月小王去了北京。",
    "Мой близкий коллега Петров ведёт со мной проект X.",
    "",
])
def test_a_text_without_a_relative_date_is_left_as_it_is(text: str) -> None:
    assert anchor_relative_dates(text, SAID) == text
    assert anchor_relative_dates("Вчера Маша вернулась.", None) == "Вчера Маша вернулась."
    assert anchor_relative_dates("Вчера Маша вернулась.", date(2025, 3, 1)) == "Вчера (2025-02-28) Маша вернулась."


# Found by a QA trial: "we talk every Sunday" became "every Sunday (2026-08-30)", the last Sunday before
# the message, as if the talks had happened once.
@pytest.mark.parametrize("text", [
    "My sister Anna lives in Chicago, we talk every Sunday.",
    "We meet each Sunday.",
    "Tom calls every other Sunday.",
    "Tom calls on Sunday mornings.",
    "Every January Tom goes skiing.",
    "Tom visits every year at Christmas.",
    "Tom visits once a year at Christmas.",
    "Every morning Tom runs.",
    "Мы с Машей созваниваемся каждое воскресенье.",
    "Каждое Рождество Маша приезжает к нам.",
    "Раз в год на Пасху Маша печёт кулич.",
    "Маша каждый год в мае ездит на дачу.",
    "По воскресеньям Маша ходит в бассейн.",
    "Каждый день Маша бегает.",
    "我们每个周日都聊天。",
    "小王每周日来。",
    "小王每逢周日来。",
    "小王每年春节回家。",
    "小王每月初来。",
    "小王每天跑步。",
])
def test_a_recurring_time_is_no_date_and_stays_unanchored(text: str) -> None:
    assert anchor_relative_dates(text, SAID) == text


@pytest.mark.parametrize(("text", "anchored"), [
    ("Tom calls every Sunday, and he called yesterday.",
     "Tom calls every Sunday, and he called yesterday (2025-02-28)."),
    ("Tom runs every morning since last month.", "Tom runs every morning since last month (2025-02)."),
    ("Маша звонит каждое воскресенье, а вчера не позвонила.",
     "Маша звонит каждое воскресенье, а вчера (2025-02-28) не позвонила."),
    ("小王每年春节回家，去年没回。", "小王每年春节回家，去年(2024)没回。"),
])
def test_a_date_beside_a_recurring_time_is_still_anchored(text: str, anchored: str) -> None:
    assert anchor_relative_dates(text, SAID) == anchored


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "name"), [
    ("My sister Anna lives in Chicago, we talk every Sunday.", "Anna"),
    ("Моя сестра Аня живёт в Казани и каждое Рождество приезжает к нам.", "Аня"),
    ("我的同事张伟每年春节都回老家。", "张伟"),
])
def test_the_rule_archivists_bio_keeps_a_recurring_time_as_said(tenant: Tenant, text: str, name: str) -> None:
    result = append_messages(tenant, "u1", "s1", [text], start=SAID)
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=result.created)
    assert Person.objects.get(display_name=name).bio == text


@pytest.mark.django_db
@pytest.mark.parametrize(("text", "name", "bio"), [
    ("Неделю назад Маша вернулась из Праги.", "Маша",
     "Неделю назад (2025-02-17 – 2025-02-23) Маша вернулась из Праги."),
    ("My friend Anna got married two days ago.", "Anna", "My friend Anna got married two days ago (2025-02-27)."),
    ("我的同事张伟昨天生了孩子。", "张伟", "我的同事张伟昨天(2025-02-28)生了孩子。"),
])
def test_the_rule_archivists_bio_line_is_anchored_to_its_message(tenant: Tenant, text: str, name: str,
                                                                 bio: str) -> None:
    result = append_messages(tenant, "u1", "s1", [text], start=SAID)
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=result.created)
    person = Person.objects.get(display_name=name)
    assert person.bio == bio
    assert bio in person.context_line()  # what the prompt shows


@pytest.mark.django_db
def test_each_line_is_anchored_to_its_own_message(tenant: Tenant) -> None:
    """One extraction of several days' messages: each line's "вчера" is the day before its own message,
    not before the last one."""
    first = append_messages(tenant, "u1", "s1", ["Вчера Маша вернулась из Праги."], start=SAID)
    later = append_messages(tenant, "u1", "s1", ["Маша вчера уволилась с работы."],
                            start=datetime(2025, 3, 10, 9, 0, tzinfo=UTC))
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=[*first.created, *later.created])
    assert Person.objects.get(display_name="Маша").bio == \
        "Вчера (2025-02-28) Маша вернулась из Праги. Маша вчера (2025-03-09) уволилась с работы."


@pytest.mark.django_db
def test_the_llm_archivists_bio_is_anchored_to_the_last_message_naming_the_person(
    tenant: Tenant, make_person: Callable[..., Person], llm: OpenAICompatServer
) -> None:
    """The prompt asks the model for dates; a relative one it wrote anyway is anchored by the service."""
    llm.script_chat({"people_operations": [
        {"op": "Added", "person": {"display_name": "Маша", "circle": "Friends",
                                   "bio": "Подруга. Неделю назад вернулась из Праги."}},
        {"op": "Added", "person": {"display_name": "Tom", "bio": "Moved to Berlin in the week of 2025-02-17."}},
    ]})
    result = append_messages(tenant, "u1", "s1", ["Неделю назад Маша вернулась из Праги, а Tom переехал."],
                             start=SAID)
    services.people_extract_from_messages(tenant=tenant, user_id="u1", messages=result.created)
    assert Person.objects.get(display_name="Маша").bio == \
        "Подруга. Неделю назад (2025-02-17 – 2025-02-23) вернулась из Праги."
    assert Person.objects.get(display_name="Tom").bio == "Moved to Berlin in the week of 2025-02-17."
    (request,) = llm.chat_requests
    assert "relative to when they spoke" in request["messages"][0]["content"]


# Found by a QA trial (`make run`, a Russian user): "Моя начальница вечно ставит дедлайны на пятницу" became "на
# пятницу (2026-09-25)", the last Friday before the message, as if it had happened once.
@pytest.mark.parametrize("text", [
    "Моя начальница вечно ставит дедлайны на пятницу.",
    "Маша обычно звонит в субботу.",
    "She always calls on Friday.",
    "Tom usually mows the lawn on the weekend.",
    "我老板总是周五布置任务。",
    "小王一般周六来。",
])
def test_a_habit_on_a_weekday_is_no_date(text: str) -> None:
    assert anchor_relative_dates(text, SAID) == text


@pytest.mark.parametrize(("text", "anchored"), [
    ("He usually calls, but yesterday he didn't.", "He usually calls, but yesterday (2025-02-28) he didn't."),
    ("Tom often visits; he came last Sunday.", "Tom often visits; he came last Sunday (2025-02-23)."),
    ("Обычно бегаю, но в прошлую пятницу отдыхала.", "Обычно бегаю, но в прошлую пятницу (2025-02-28) отдыхала."),
    ("我总是很忙，昨天也加班了。", "我总是很忙，昨天(2025-02-28)也加班了。"),
])
def test_a_date_beside_a_habit_is_still_anchored(text: str, anchored: str) -> None:
    assert anchor_relative_dates(text, SAID) == anchored
