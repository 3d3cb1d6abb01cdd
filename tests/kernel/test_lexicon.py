"""Noun categories from WordNet (memoryhub/lexicon.py): a stored turn carries the categories of the
nouns it says; a query gets a category's term only when it asks for that category."""

from __future__ import annotations

import pytest

from memoryhub import lexicon


def test_a_turn_carries_the_categories_of_its_nouns() -> None:
    terms = lexicon.chunk_terms("We spent a week in Rome.")
    assert "^city.1" in terms and "^national_capital.1" in terms
    assert all(t.startswith(lexicon.CATEGORY_PREFIX) for t in terms)


def test_plural_nouns_find_their_lemma() -> None:
    assert "^dog.1" in lexicon.chunk_terms("I adopted two puppies last spring")


def test_a_two_word_noun_is_read_as_one() -> None:
    # "ice cream" is a dessert; "cream" alone is first of all the elite ("the cream of the crop").
    assert "^dessert.1" in lexicon.chunk_terms("We had ice cream after dinner")
    assert "^dessert.1" not in lexicon.chunk_terms("She is the cream of the crop")


def test_the_general_top_of_the_hierarchy_is_left_out() -> None:
    terms = lexicon.chunk_terms("The violin, the salmon, the city and the idea of a trip to the sea")
    assert terms
    too_general = {"^entity.1", "^physical_entity.1", "^abstraction.6", "^object.1", "^whole.2", "^event.1",
                   "^psychological_feature.1"}
    assert not too_general & set(terms)


def test_function_words_and_short_words_carry_nothing() -> None:
    assert lexicon.chunk_terms("it is so on and off, I do") == []


@pytest.mark.parametrize(("query", "category"), [
    ("Which cities has Jon visited?", "^city.1"),
    ("What sports does John play?", "^sport.1"),
    ("What kind of art does Caroline make?", "^art.1"),
    ("What types of music does he like?", "^music.1"),
])
def test_a_query_asking_for_a_category_gets_its_term(query: str, category: str) -> None:
    weights = lexicon.query_weights(query)
    assert weights[category] == lexicon.CATEGORY_WEIGHT


@pytest.mark.parametrize("query", [
    "What did Jon do in the city?",  # singular, not after "kind of": a place, not a list
    "What inspired her sculpture for the art show?",
    "What did her sons say?",  # a plural, but "son" has no kinds below it worth asking for
    "how are you",
])
def test_a_query_that_does_not_ask_for_a_category_gets_none(query: str) -> None:
    assert lexicon.query_weights(query) == {}


def test_the_query_side_meets_the_stored_side() -> None:
    asked = lexicon.query_weights("Which cities has Jon visited?")
    assert set(asked) <= set(lexicon.chunk_terms("Last summer we finally saw Paris and Berlin."))
    assert not set(asked) & set(lexicon.chunk_terms("I made pasta with salmon for dinner."))


def test_the_tables_are_read_once_per_process() -> None:
    first = lexicon.stats()
    assert first["synsets"] > 80_000 and first["lemmas"] > 100_000 and first["categories"] > 1_000
    assert lexicon._get() is lexicon._get()
