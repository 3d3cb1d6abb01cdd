"""Facts as new chat users state them, found by a QA pass as three users (Marcus in English, 小陈 in Chinese, Аня in
Russian) that gave no fact: a job about to begin, where from before where to, a job said before its employer, a
pet's colour or breed, a greeting that says who writes, a birthday, a food they do not eat."""

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
    # A birthday, and a food kept out, had no rule at all.
    ("My birthday is October 28.", {("birthday", "October 28")}),
    ("my bday is on the 3rd of May", {("birthday", "May 3")}),
    ("I was born on May 3, 1990.", {("birthday", "May 3")}),
    ("У меня день рождения 5-го ноября, хочу позвать подруг.", {("birthday", "5 ноября")}),
    ("Я родилась 5 ноября.", {("birthday", "5 ноября")}),
    ("我的生日是10月28日。", {("birthday", "10月28日")}), ("我生日在三月五号。", {("birthday", "3月5日")}),
    ("我是5月3号出生的。", {("birthday", "5月3日")}),
    ("I don't eat meat anymore.", {("diet", "no meat")}),
    ("Я, кстати, не ем мясо уже три года.", {("diet", "не ест мясо")}),
    ("对了，我不吃辣，同事总拉我去吃湘菜，好痛苦。", {("diet", "不吃辣")}),
    # A promotion, and where the household lives.
    ("Also I finally got promoted to charge nurse at Providence.",
     {("occupation", "charge nurse"), ("employer", "Providence")}),
    ("I got promoted to senior engineer.", {("occupation", "senior engineer")}),
    ("А меня, кстати, повысили до руководителя отдела.", {("occupation", "руководитель отдела")}),
    ("Меня повысили до старшего инженера.", {("occupation", "старший инженер")}),
    ("对了，我上个月升职当了技术总监。", {("occupation", "技术总监")}),
    ("我被提拔为部门经理。", {("occupation", "部门经理")}),
    ("Мы живём в Казани, на Азино.", {("location", "Казань")}),
    ("我们住在杭州滨江，想找附近的学校。", {("location", "杭州滨江")}),
    # When or how often said before the liking.
    ("I teach high school chemistry in Baltimore.", {("occupation", "chemistry teacher")}),
    ("我平时喜欢打羽毛球。", {("likes", "打羽毛球")}), ("我周末喜欢爬山。", {("likes", "爬山")}),
    ("我最近喜欢上了瑜伽。", {("likes", "瑜伽")}), ("我平时不喜欢运动。", {("dislikes", "运动")}),
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
    ("My sister's birthday is October 28.", set()), ("also my birthday is on the 28th", set()),
    ("У мамы день рождения 5 ноября.", set()), ("我妈妈的生日是10月28日。", set()),
    ("I don't eat breakfast.", set()), ("My son doesn't eat meat.", set()), ("Мой сын не ест мясо.", set()),
    ("我不吃早饭。", set()), ("I don't eat meat, I'm vegetarian.", {("diet", "vegetarian")}),
    ("My sister got promoted to manager.", set()), ("I got promoted to a new team.", set()),
    ("Его повысили до начальника.", set()), ("Меня повысили до уровня выше.", set()), ("他升职当了总监。", set()),
    ("他平时喜欢打羽毛球。", set()), ("我喜欢上海。", set()),
])
def test_what_is_no_fact_of_theirs_stays_out(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("Hi, I'm Sarah. I teach math at Lincoln High in Portland.",
     {("name", "Sarah"), ("occupation", "math teacher"), ("employer", "Lincoln High")}),
    ("I teach high school chemistry at Roosevelt High School.",
     {("occupation", "chemistry teacher"), ("employer", "Roosevelt High School")}),
    ("I teach yoga at the YMCA on weekends.", {("occupation", "yoga teacher"), ("employer", "YMCA")}),
    # Where, whom or how one teaches is no subject.
    ("I teach at Stanford.", {("employer", "Stanford")}),
    ("I teach my kids at home.", set()),
    ("I teach math in Portland.", {("occupation", "math teacher")}),  # a town after "in" is nobody's employer
])
def test_where_a_teacher_teaches_is_the_employer(text: str, expected: set[tuple[str, str]]) -> None:
    """A QA pass: "I teach math at Lincoln High in Portland" gave the job and not the school; "I teach at
    Stanford" gave an "at teacher"."""
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("We adopted a cat yesterday! Her name is Mochi.", {("pets", "cat (Mochi)")}),
    ("I just got a puppy. His name's Biscuit and he chews everything.", {("pets", "dog (Biscuit)")}),
    ("Мы завели кошку! Зовут Муся.", {("pets", "кошка (Муся)")}),
    ("Завели щенка. Назвали его Бублик.", {("pets", "щенок (Бублик)")}),
    ("我们养了一只小狗。它叫豆豆，很可爱。", {("pets", "狗 (豆豆)")}),
    # Another's name in the next sentence is not the pet's.
    ("We adopted a cat. My sister's name is Anna.", {("pets", "cat")}),
    ("I have a dog. My boss is called Tom.", {("pets", "dog")}),
])
def test_a_pet_named_in_the_next_sentence(text: str, expected: set[tuple[str, str]]) -> None:
    """A QA pass: "We adopted a cat yesterday! Her name is Mochi." stored `pets: cat`; the rules read one
    sentence at a time."""
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("I just moved to Portland for a job at Nike, I design running shoes.",
     {("location", "Portland"), ("employer", "Nike")}),
    ("We moved to Austin for my new job at Dell.", {("location", "Austin"), ("employer", "Dell")}),
    ("I relocated to Berlin for a job with Zalando.", {("location", "Berlin"), ("employer", "Zalando")}),
    ("Moved to Seattle to work at Amazon.", {("location", "Seattle"), ("employer", "Amazon")}),
    ("Я переехал в Казань ради работы в Яндексе.", {("location", "Казань"), ("employer", "Яндекс")}),
    ("Переехала в Москву, устроилась в Сбер.", {("location", "Москва"), ("employer", "Сбер")}),
    ("Недавно переехала в Питер работать в Тинькофф.", {("location", "Питер"), ("employer", "Тинькофф")}),
    ("Меня зовут Оля, я недавно переехала в Казань, устроилась дизайнером в Яндекс.",
     {("name", "Оля"), ("location", "Казань"), ("employer", "Яндекс"), ("occupation", "дизайнер")}),
    ("Переехал в Питер, устроился в Газпром программистом.",
     {("location", "Питер"), ("employer", "Газпром"), ("occupation", "программист")}),
    ("我搬到深圳去腾讯工作了。", {("location", "深圳"), ("employer", "腾讯")}),
    ("为了阿里巴巴的工作我搬到了杭州。", {("location", "杭州"), ("employer", "阿里巴巴")}),
    # The purpose said in a clause of its own, or between 我 and 搬 (QA: the comma gave no employer).
    ("为了阿里巴巴的工作，我搬到了杭州。", {("location", "杭州"), ("employer", "阿里巴巴")}),
    ("我为了腾讯的工作搬到了深圳。", {("location", "深圳"), ("employer", "腾讯")}),
    ("我为了孩子上学，搬到了海淀区。", {("location", "海淀区")}),
    ("为了老公的工作，我们搬到了成都。", {("location", "成都")}),
    ("我们搬到上海来了。", {("location", "上海")}),
    # Someone else's move, and a move for something else.
    ("My sister moved to Boston for a job at Google.", set()), ("I moved to Paris for love.", {("location", "Paris")}),
    ("Сестра переехала в Москву, устроилась дизайнером в Сбер.", set()), ("我姐姐搬到深圳去腾讯工作了。", set()),
])
def test_a_move_for_a_job_gives_the_employer(text: str, expected: set[tuple[str, str]]) -> None:
    """A QA pass: "I just moved to Portland for a job at Nike" kept the city and not the employer; "我搬到深圳去腾讯
    工作了" made the user live in "深圳去腾讯"."""
    assert facts(text) == expected
