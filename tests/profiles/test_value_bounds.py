"""A value the rules read ends where a new clause with its own subject starts, in English, Russian and Chinese.

QA: "My favorite color is green and I love jazz music." stored favorite_color = "green and i love jazz music",
shown first in every context. A value may still hold the conjunction itself ("black and white", "黑白").
"""

from __future__ import annotations

import pytest

from profiles.rules import extract


def facts(text: str) -> set[tuple[str, str]]:
    return {(f.key, f.value) for f in extract(text) if not f.ended}


@pytest.mark.parametrize(("text", "expected"), [
    ("My favorite color is green and I love jazz music.", {("favorite_color", "green"), ("likes", "jazz music")}),
    ("My favorite color is green and i love jazz.", {("favorite_color", "green"), ("likes", "jazz")}),
    ("My favorite color is green so I painted my room.", {("favorite_color", "green")}),
    ("My favorite band is Radiohead and they are great.", {("favorite_band", "Radiohead")}),
    ("My favorite city is New York and I want to live there.", {("favorite_city", "New York")}),
    ("My hobby is painting and I love jazz.", {("hobbies", "painting"), ("likes", "jazz")}),
    ("I like jazz and I play guitar.", {("likes", "jazz")}),
])
def test_an_english_value_ends_where_a_clause_of_its_own_starts(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("My favourite colour is black and white.", {("favorite_color", "black and white")}),
    ("My favorite music is rock and roll, and I play guitar.", {("favorite_music", "rock and roll")}),
    ("My favorite cartoon is Tom and Jerry and I watch it daily.", {("favorite_cartoon", "Tom and Jerry")}),
    ("My favorite seasoning is salt and pepper but I use chili too.", {("favorite_seasoning", "salt and pepper")}),
    # A clause between two values is the phrasing's own: both are read.
    ("I'm from Cork but I'm in Dublin these days.", {("hometown", "Cork"), ("location", "Dublin")}),
])
def test_an_english_value_keeps_an_and_without_a_subject_after_it(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "value"), [
    ("My favorite band is the Beatles.", "the Beatles"),
    ("My favourite phone is the iPhone and I use it daily.", "the iPhone"),
    ("My favorite color is green.", "green"),
])
def test_a_favorite_keeps_the_users_casing(text: str, value: str) -> None:
    """A value that opened in lower case was lowered whole: "the beatles", "iphone", "green and i love…"."""
    assert [f.value for f in extract(text) if f.key.startswith("favorite_")] == [value]


@pytest.mark.parametrize(("text", "expected"), [
    ("Моё хобби — акварель и я рисую каждый день.", {("hobbies", "акварель")}),
    ("Я люблю джаз и я играю на гитаре.", {("likes", "джаз")}),
    ("Мне нравится джаз и я хожу на концерты.", {("likes", "джаз")}),
    ("Мне нравится рок-н-ролл и я танцую.", {("likes", "рок-н-ролл")}),
    ("Моё хобби — рыбалка и охота, а я ещё пою.", {("hobbies", "рыбалка"), ("hobbies", "охота")}),
])
def test_a_russian_value_ends_where_a_clause_of_its_own_starts(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("我的爱好是弹吉他而且我喜欢爬山。", {("hobbies", "弹吉他"), ("likes", "爬山")}),
    ("我的爱好是弹吉他但是我没时间。", {("hobbies", "弹吉他")}),
    ("我的爱好是弹吉他因为它很放松。", {("hobbies", "弹吉他")}),
    ("我喜欢爵士乐而且我会弹吉他。", {("likes", "爵士乐")}),
    ("我喜欢爵士乐但是我不会唱。", {("likes", "爵士乐")}),
    ("我住在北京而且我在腾讯工作。", {("location", "北京"), ("employer", "腾讯")}),
    ("我喜欢黑白。", {("likes", "黑白")}),
])
def test_a_chinese_value_ends_where_a_clause_of_its_own_starts(text: str, expected: set[tuple[str, str]]) -> None:
    assert facts(text) == expected
