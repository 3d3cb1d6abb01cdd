"""memoryhub.text: normalisation, word split, stemming, stopwords, language detection, token estimates."""

from __future__ import annotations

import pytest

from memoryhub.text import (
    STOPWORDS,
    analyze,
    analyze_many,
    analyze_query,
    char_ngrams,
    count_tokens,
    detect_language,
    normalize,
    truncate_to_tokens,
    words,
)

EN = "I'm 34 years old and I work as a software engineer at Google in Zurich."
RU = "Меня зовут Алексей, мне 34 года, я работаю программистом в Яндексе."
ZH = "我住在北京，我喜欢吃饺子，周末常常去公园跑步。"

# ----------------------------------------------------------------------------------------------- normalize


def test_normalize_nfkc_full_width_and_ideographic_space() -> None:
    assert normalize("ＡＢＣ１２３\u3000ｘ") == "abc123 x"


def test_normalize_casefold_goes_beyond_lower() -> None:
    assert normalize("Straße ПРИВЕТ") == "strasse привет"


def test_normalize_yo_to_ye_both_cases() -> None:
    assert normalize("Ёлка и ёж") == "елка и еж"
    # Decomposed е + combining diaeresis is composed by NFKC first, then folded too.
    assert normalize("е\u0308ж") == "еж"


def test_normalize_collapses_whitespace_and_strips() -> None:
    assert normalize("  a\t\tb\n\nc\u00a0d  ") == "a b c d"


def test_normalize_unifies_apostrophes_and_drops_invisible_chars() -> None:
    assert normalize("don’t") == "don't"
    assert normalize("pro\u00adgram\u200bming") == "programming"


# ----------------------------------------------------------------------------------------------- words


def test_words_english_keeps_internal_apostrophes_and_splits_hyphens_and_underscores() -> None:
    assert words("Don’t e-mail O'Brien about snake_case, OK?") == [
        "don't",
        "e",
        "mail",
        "o'brien",
        "about",
        "snake",
        "case",
        "ok",
    ]


def test_words_russian() -> None:
    assert words("Ёжик в тумане, кто-то там!") == ["ежик", "в", "тумане", "кто", "то", "там"]


def test_words_chinese_is_segmented() -> None:
    assert words("我住在北京") == ["我", "住", "在", "北京"]


def test_words_mixed_script() -> None:
    assert words("我在Google工作") == ["我", "在", "google", "工作"]
    assert words("Я работаю в Google, 我在北京") == ["я", "работаю", "в", "google", "我", "在", "北京"]


def test_words_numbers_and_empty() -> None:
    assert words("version 3.14 released 2024") == ["version", "3", "14", "released", "2024"]
    assert words("") == []
    assert words(" ,.!? ") == []


# ----------------------------------------------------------------------------------------------- analyze


def test_russian_stemming_folds_case_forms_of_surnames() -> None:
    nominative = set(analyze("Петров"))
    for form in ("Петровым", "Петрова", "Петрову", "петровой", "Петровых"):
        assert nominative & set(analyze(form)), form


def test_russian_stemming_folds_nouns() -> None:
    assert analyze("проекта") == analyze("проект") == analyze("проектами")
    assert analyze("Ёлки") == analyze("елка")


def test_english_stemming() -> None:
    assert analyze("running") == analyze("runs") == ["run"]
    assert analyze("Cats") == analyze("cat")


def test_chinese_terms_are_segmented_words() -> None:
    terms = analyze("我住在北京")
    assert "北京" in terms
    assert "在" not in terms  # stopword


def test_stopwords_removed_per_language() -> None:
    assert analyze("The cat is on the mat") == ["cat", "mat"]
    assert analyze("Кот и собака в доме") == analyze("кот собака дом")
    assert "的" not in analyze("我的妹妹是医生")
    assert "妹妹" in analyze("我的妹妹是医生")


def test_negations_survive_so_contradictions_are_not_duplicates() -> None:
    assert analyze("I don't like coffee") != analyze("I like coffee")
    assert analyze("Я не люблю кофе") != analyze("Я люблю кофе")
    assert analyze("我不喜欢咖啡") != analyze("我喜欢咖啡")


def test_stopword_list_is_modest_and_normalised() -> None:
    assert 200 <= len(STOPWORDS) <= 350
    assert all(w == normalize(w) for w in STOPWORDS)
    assert {"не", "not", "no", "不", "没有", "i", "я", "我"}.isdisjoint(STOPWORDS)


def test_analyze_is_case_and_width_insensitive() -> None:
    assert analyze("ＧＯＯＧＬＥ Running") == analyze("google running")


def test_analyze_many_matches_analyze() -> None:
    texts = [EN, RU, ZH, ""]
    assert analyze_many(iter(texts)) == [analyze(t) for t in texts]


# ----------------------------------------------------------------------------------------------- language


@pytest.mark.parametrize(
    ("text", "lang"),
    [
        (EN, "en"),
        (RU, "ru"),
        (ZH, "zh"),
        ("我在Microsoft工作", "zh"),
        ("Я работаю в Google", "ru"),
        ("I love Beijing 北京", "en"),
        ("12345 !!!", "en"),
        ("", "en"),
    ],
)
def test_detect_language(text: str, lang: str) -> None:
    assert detect_language(text) == lang


# ----------------------------------------------------------------------------------------------- tokens


def test_count_tokens_empty_and_never_zero() -> None:
    assert count_tokens("") == 0
    for text in (" ", ".", "a", "я", "我", "\n", "😀"):
        assert count_tokens(text) >= 1, repr(text)


@pytest.mark.parametrize("text", [EN, RU, ZH, "Я работаю в Google, 我在北京 — since 2019!\n\nok"])
def test_count_tokens_monotonic_over_prefixes(text: str) -> None:
    counts = [count_tokens(text[:i]) for i in range(len(text) + 1)]
    assert counts == sorted(counts)
    assert count_tokens(text + " " + text) > count_tokens(text)


def test_count_tokens_known_sentences() -> None:
    # cl100k: 9 words + "." = 10 tokens; "Hello world" = 2.
    assert count_tokens("The quick brown fox jumps over the lazy dog.") == 10
    assert count_tokens("Hello world") == 2


def test_count_tokens_english_band() -> None:
    n_words = len(EN.split())
    tokens = count_tokens(EN)
    assert 1.0 * n_words <= tokens <= 1.6 * n_words
    assert 3.0 <= len(EN) / tokens <= 5.5


def test_count_tokens_russian_band() -> None:
    tokens = count_tokens(RU)
    assert 2.0 <= len(RU) / tokens <= 3.5
    # Cyrillic is markedly more expensive per character than Latin.
    assert len(RU) / tokens < len(EN) / count_tokens(EN)


def test_count_tokens_chinese_band() -> None:
    tokens = count_tokens(ZH)
    assert 0.6 * len(ZH) <= tokens <= 1.5 * len(ZH)


def test_count_tokens_digits_grouped_by_three() -> None:
    assert count_tokens("123") == 1
    assert count_tokens("1234567") == 3


def test_truncate_returns_text_that_fits_unchanged() -> None:
    assert truncate_to_tokens(EN, 1000) == EN
    assert truncate_to_tokens(EN, 0) == ""


@pytest.mark.parametrize("text", [EN, RU, ZH])
@pytest.mark.parametrize("limit", [1, 2, 3, 4, 5, 8, 13])
def test_truncate_respects_limit(text: str, limit: int) -> None:
    out = truncate_to_tokens(text, limit)
    assert count_tokens(out) <= limit
    assert out.endswith("…")
    assert text.startswith(out[:-1])


@pytest.mark.parametrize("text", [EN, RU, ZH])
@pytest.mark.parametrize("limit", [4, 5, 8, 13])
def test_truncate_cuts_at_word_boundary(text: str, limit: int) -> None:
    body = truncate_to_tokens(text, limit)[:-1]
    assert body
    # The body is whole words of the text: its words, joined, equal a prefix of the text's words, joined
    # (joining sidesteps jieba segmenting a fragment such as "我住" differently than in context).
    text_words = words(text)
    joined = "".join(words(body))
    assert joined in {"".join(text_words[:k]) for k in range(1, len(text_words) + 1)}


def test_truncate_keeps_as_much_as_fits() -> None:
    out = truncate_to_tokens("The quick brown fox jumps over the lazy dog.", 5)
    assert out == "The quick brown fox…"


def test_truncate_hard_cuts_a_single_huge_word() -> None:
    out = truncate_to_tokens("x" * 200, 3)
    assert count_tokens(out) <= 3
    assert out.startswith("xxx") and out.endswith("…")


# ----------------------------------------------------------------------------------------------- n-grams


def test_char_ngrams_with_boundary_markers() -> None:
    assert char_ngrams("cat") == ["<ca", "cat", "at>", "<cat", "cat>", "<cat>"]
    assert char_ngrams("кот", 3, 3) == ["<ко", "кот", "от>"]


def test_char_ngrams_short_and_empty_words() -> None:
    assert char_ngrams("a") == ["<a>"]
    assert char_ngrams("a", 4, 5) == ["<a>"]
    assert char_ngrams("") == []


def test_char_ngrams_rejects_bad_ranges() -> None:
    with pytest.raises(ValueError):
        char_ngrams("cat", 0, 3)
    with pytest.raises(ValueError):
        char_ngrams("cat", 4, 3)


def test_a_query_gets_the_verbal_noun_of_a_russian_short_participle():
    # "ослеплён" stems apart from "Ослепление" / "ослеплённое"; the query carries both terms.
    assert analyze("персонаж ослеплён") == ["персонаж", "ослепл"]
    assert analyze_query("персонаж ослеплён") == ["персонаж", "ослепл", "ослеплен"]
    assert analyze_query("ослеплена")[-1] == analyze("Ослепление")[0] == analyze("ослеплённое")[0]
    assert analyze_query("отравлены")[-1] == analyze("Отравление")[0]
    assert analyze_query("очарован")[-1] == analyze("Очарование")[0]
    # Other words are left as analyze() has them.
    assert analyze_query("what happens when blinded") == analyze("what happens when blinded")
    assert analyze_query("персонаж видит") == analyze("персонаж видит")
    assert analyze_query("失明会怎样") == analyze("失明会怎样")
