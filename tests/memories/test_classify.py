"""determine_memory_kind, calculate_importance, emotion detection, goals and plans, and the dates a plan
means, in en/ru/zh."""

from __future__ import annotations

from datetime import date

import pytest

from rag.memories.classify import (
    calculate_importance,
    detect_emotions,
    determine_memory_kind,
    dominant_emotion,
    personal_statement,
)
from rag.memories.when import anchor_dates

WEDNESDAY = date(2024, 5, 8)


@pytest.mark.parametrize(("text", "speaker", "kind"), [
    ("I love rock music", "user", "user"),
    ("My friend Tom plays drums", "user", "third_party"),
    ("You are really funny", "user", "self"),
    ("I think I am a good singer", "assistant", "self"),
    ("You said you like rock", "Neiri", "user"),
    ("Neiri sings badly", "user", "self"),
    ("Я люблю рок", "user", "user"),
    # "вдруг" (suddenly) contains "друг" (friend) but is not the word: still about the user.
    ("Вдруг я понял, что устал", "user", "user"),
    ("Мой друг играет на гитаре", "user", "third_party"),
    ("Ты очень смешная", "user", "self"),
    ("我喜欢摇滚乐", "user", "user"),
    ("我的朋友会弹吉他", "user", "third_party"),
    # "我们" (we) is not "我" plus a third party, and "你" from the character is the user.
    ("你喜欢摇滚吗", "assistant", "user"),
    ("The smothered fire", "user", "user"),  # "mother" inside a word is not a mother
    # Calling the character by name is no talk about it: the user's own day stays the user's.
    ("Hi Neiri, I had a rough day at work", "user", "user"),
    ("Good night Neiri, I am off to sleep", "user", "user"),
    ("Привет, Neiri! Я сегодня очень устала", "user", "user"),
    ("Neiri，我今天很累", "user", "user"),
    ("Neiri, you are so funny", "user", "self"),
    ("That's a great dream, Neiri!", "user", "self"),
    ("I think Neiri sings beautifully", "user", "self"),
])
def test_kind_from_speaker_and_whole_words(text: str, speaker: str, kind: str) -> None:
    assert determine_memory_kind(text, speaker, "Neiri") == kind


def test_importance_rule_orders_obvious_cases() -> None:
    trivial = calculate_importance("ok thanks")
    plain = calculate_importance("we talked about the weather today")
    personal = calculate_importance("My birthday is on 12 May, remember it, it is important")
    assert trivial < plain < personal
    assert trivial <= 0.25 and personal >= 0.9
    assert calculate_importance("Запомни: у меня аллергия на орехи") >= 0.8
    assert calculate_importance("记住，我对花生过敏") >= 0.8
    assert calculate_importance("哈哈") < 0.5
    assert 0.0 <= calculate_importance("") <= 1.0


def test_emotions_in_three_languages_with_negation_and_intensity() -> None:
    assert detect_emotions("I am so happy today") == {"joy": 0.9}
    assert detect_emotions("I am not happy") == {}
    assert "sadness" in detect_emotions("Мне очень грустно")
    assert "fear" in detect_emotions("я боюсь темноты")
    assert "joy" in detect_emotions("我今天很开心")
    assert detect_emotions("the table is brown") == {}


@pytest.mark.parametrize(("said", "emotion"), [
    ("Я вчера поссорился с братом Димой, мне грустно", "sadness"), ("Мне обидно.", "sadness"),
    ("Я расстроен.", "sadness"), ("Я так расстроилась из-за экзамена.", "sadness"), ("Мне страшно.", "fear"),
    ("I'm upset about my grades.", "sadness"), ("I'm feeling down today.", "sadness"), ("I'm so bummed.", "sadness"),
    ("I'm nervous about my exam.", "fear"), ("I'm really frustrated with work.", "anger"),
    ("我很郁闷。", "sadness"), ("我好难过。", "sadness"), ("我最近很沮丧。", "sadness"), ("我有点焦虑。", "fear"),
])
def test_everyday_predicative_forms_of_a_feeling_are_its_emotion(said: str, emotion: str) -> None:
    # "мне грустно" was found, "обидно", "расстроен", "upset", "down", "bummed", "郁闷" were not.
    assert dominant_emotion(said) == emotion, detect_emotions(said)


@pytest.mark.parametrize("said", ["Please sit down.", "I'm down for pizza tonight.", "We walked down the road.",
                                  "I'm not upset at all."])
def test_down_is_a_feeling_only_where_it_says_one(said: str) -> None:
    assert detect_emotions(said) == {}


@pytest.mark.parametrize("said", [
    "I promised myself I'd start running.", "I've decided to quit smoking.",
    "My New Year's resolution is to read more.",
    "Я пообещала себе начать бегать.", "Я дал себе слово бросить курить.", "Я решила, что больше не буду есть сладкое.",
    "我答应自己要开始跑步。", "我下定决心戒烟。",
])
def test_a_resolution_is_a_goal_not_something_past(said: str) -> None:
    assert personal_statement(said) == "goals"


@pytest.mark.parametrize("said", ["I promised you I'd call.", "Я решила задачу.", "I decided to stay home yesterday."])
def test_a_promise_to_someone_or_a_past_decision_is_no_resolution(said: str) -> None:
    assert personal_statement(said) is None


@pytest.mark.parametrize("said", [
    "I'm nervous about my exam next Friday.", "next month I'm flying to Lisbon", "Tomorrow I have a job interview.",
    "My sister is getting married next month.", "I'm so excited, on Saturday I'm going to a concert.",
    "В субботу мы едем на дачу.", "Завтра у меня собеседование.", "В следующем месяце я лечу в Москву.",
    "我下个月要去上海出差。", "明天我要考试。", "我们周六去爬山。",
])
def test_what_the_speaker_has_ahead_is_a_plan_by_its_date(said: str) -> None:
    assert personal_statement(said) is None or personal_statement(said) == "plans"
    assert personal_statement(said, WEDNESDAY) == "plans"
    assert calculate_importance(said, WEDNESDAY) >= 0.6  # a plan counts as a personal fact


@pytest.mark.parametrize("said", [
    "I'll talk to you tomorrow!", "Good night, see you tomorrow!", "Every Friday I go swimming.",
    "I went to the cinema on Saturday.", "I'm so tired today.", "The weather will be nice tomorrow.",
    "До завтра, поговорим потом!", "По субботам мы ездим на дачу.", "В субботу мы ездили на дачу.",
    "明天见！", "我每周六去爬山。", "我周六去爬山了。",
])
def test_a_sign_off_a_habit_or_what_is_past_is_no_plan(said: str) -> None:
    assert personal_statement(said, WEDNESDAY) is None


@pytest.mark.parametrize(("said", "anchored"), [
    ("I'm nervous about my exam next Friday", "I'm nervous about my exam next Friday (2024-05-10)"),
    # A bare weekday of a plan is the coming one; the readers alone take the last one (2024-05-04).
    ("On Saturday we're going to the dacha", "On Saturday (2024-05-11) we're going to the dacha"),
    ("next month I'm flying to Lisbon", "next month (2024-06) I'm flying to Lisbon"),
    ("В субботу мы едем на дачу", "В субботу (2024-05-11) мы едем на дачу"),
    ("Завтра у меня собеседование", "Завтра (2024-05-09) у меня собеседование"),
    ("我下个月要去上海出差", "我下个月(2024-06)要去上海出差"),
    ("我周六去爬山", "我周六(2024-05-11)去爬山"),
    # What looks back keeps its reading; a date written out or a recurring time gets none; nor twice.
    ("Last Saturday I booked a flight for next month", "Last Saturday (2024-05-04) I booked a flight for next month "
                                                       "(2024-06)"),
    ("My exam is on May 17", "My exam is on May 17"),
    ("Every Friday I go swimming", "Every Friday I go swimming"),
    ("next Friday (2024-05-10) is my exam", "next Friday (2024-05-10) is my exam"),
])
def test_a_plans_relative_dates_get_the_days_they_meant_when_said(said: str, anchored: str) -> None:
    assert anchor_dates(said, WEDNESDAY) == anchored
