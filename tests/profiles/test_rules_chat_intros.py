"""Facts as new chat users state them, found by a QA pass as three users (Marcus in English, 小陈 in Chinese, Аня in
Russian) that gave no fact: a job about to begin, where from before where to, a job said before its employer, a
pet's colour or breed, a greeting that says who writes."""

from __future__ import annotations

import pytest

from profiles.rules import extract


def facts(text: str) -> set[tuple[str, str]]:
    return {(f.key, f.value) for f in extract(text)}


@pytest.mark.parametrize(("text", "expected"), [
    ("boxes everywhere lol. I start at Dell on Monday as a product manager",
     {("employer", "Dell"), ("occupation", "product manager")}),
    ("I'm starting at Dell as a product manager.", {("employer", "Dell"), ("occupation", "product manager")}),
    ("I'll start my new job at Google next week.", {("employer", "Google")}),
    ("I start at Dell tomorrow!", {("employer", "Dell")}),
    ("hey, it's Marcus.", {("name", "Marcus")}),
    ("Hi, it's Marcus here!", {("name", "Marcus")}),
    ("大家好，我是小陈，刚从北京搬到深圳，在腾讯做前端开发。",
     {("name", "小陈"), ("occupation", "前端开发"), ("employer", "腾讯")}),
    ("我从北京搬到深圳了。", {("location", "深圳")}),
    ("我养了一只橘猫叫大黄，它最近不爱吃东西。", {("pets", "猫 (大黄)")}),
    ("我养了一只金毛狗。", {("pets", "狗")}),
    ("Я переехала из Новосибирска в Питер.", {("location", "Питер")}),
    ("Мы переехали из Омска в Казань.", {("location", "Казань")}),
    ("Потихоньку. Устроилась дизайнером в Яндекс.", {("occupation", "дизайнер"), ("employer", "Яндекс")}),
    ("Я устроился программистом в Сбер.", {("occupation", "программист"), ("employer", "Сбер")}),
])
def test_a_new_users_facts_are_found(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I start at 9am.", set()), ("I start at Monday.", set()), ("My sister starts at Dell on Monday.", set()),
    ("Hey, it's Monday.", set()), ("Hi, it's Christmas!", set()), ("hey, it's Marcus's birthday.", set()),
    ("我有一只熊猫玩偶。", set()), ("我有一个毛绒狗。", set()),
    # A bank is where, not an employer; Moscow is a city.
    ("我在银行做前端开发。", {("occupation", "前端开发")}),
    ("Устроилась дизайнером в Москве.", {("occupation", "дизайнер")}),
    ("Сестра переехала из Омска в Казань.", set()),
])
def test_what_is_no_fact_of_theirs_stays_out(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected
