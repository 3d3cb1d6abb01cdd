"""determine_memory_kind, calculate_importance and emotion detection, in en/ru/zh."""

from __future__ import annotations

import pytest

from rag.memories.classify import calculate_importance, detect_emotions, determine_memory_kind


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
