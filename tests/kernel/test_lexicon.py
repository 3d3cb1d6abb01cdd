"""Noun categories from WordNet (memoryhub/lexicon.py): a stored turn carries the categories of the
nouns it says; a query gets a category's term only when it asks for that category."""

from __future__ import annotations

import io

import pytest

from memoryhub import lexicon


def test_a_turn_carries_the_categories_of_its_nouns() -> None:
    terms = lexicon.chunk_terms("We spent a week in Rome.")
    assert "^city.1" in terms and "^national_capital.1" in terms
    assert all(t.startswith(lexicon.CATEGORY_PREFIX) for t in terms)


def test_a_name_that_is_also_a_noun_for_a_person_carries_none_of_its_categories() -> None:
    """QA: "hiking in the White Mountains with my friend Tom" carried ^person_of_color.1 and ^black.5 (Uncle
    Tom), so a category question about people could find it. A place keeps its own; the noun said in lower
    case keeps them too."""
    terms = lexicon.chunk_terms("This weekend I plan to go hiking in the White Mountains with my friend Tom.")
    assert "^person_of_color.1" not in terms and "^black.5" not in terms
    assert "^person_of_color.1" in lexicon.chunk_terms("He called him a tom.")
    assert "^person_of_color.1" in lexicon.chunk_terms("Tom is no tom.")
    assert "^city.1" in lexicon.chunk_terms("Tom and I spent a week in Rome.")
    assert "^health_professional.1" in lexicon.chunk_terms("Nurses work hard. My sister is a nurse.")


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
    assert first["lemmas"] > 100_000 and first["categories"] > 1_000 and first["category_terms"] > 10_000
    assert lexicon._get() is lexicon._get()


# WordNet's own format, two noun synsets under a root: what `manage.py lexicon_build` reads.
_DATA_NOUN = """  1 This is a licence header line, as WordNet's files begin.
00000001 03 n 01 entity 0 001 ~ 00000002 n 0000 | that which exists
00000002 03 n 01 abstraction 0 002 @ 00000001 n 0000 ~ 00000003 n 0000 | a concept
00000003 03 n 01 group 0 002 @ 00000002 n 0000 ~ 00000004 n 0000 | things together
00000004 03 n 01 set 0 002 @ 00000003 n 0000 ~ 00000005 n 0000 | a collection
00000005 03 n 02 band 0 musical_group 0 002 @ 00000004 n 0000 ~ 00000006 n 0000 | musicians
00000006 03 n 01 jazz_band 0 001 @ 00000005 n 0000 | plays jazz
"""
_INDEX_NOUN = """  1 This is a licence header line.
abstraction n 1 1 ~ 1 0 00000002
band n 1 2 @ ~ 1 0 00000005
entity n 1 1 ~ 1 0 00000001
group n 1 2 @ ~ 1 0 00000003
jazz_band n 1 1 @ 1 0 00000006
musical_group n 1 2 @ ~ 1 0 00000005
set n 1 2 @ ~ 1 0 00000004
"""


def test_lexicon_build_writes_the_table_the_module_reads(tmp_path) -> None:
    from django.core.management import call_command

    (tmp_path / "dict").mkdir()
    (tmp_path / "dict" / "data.noun").write_text(_DATA_NOUN, encoding="latin-1")
    (tmp_path / "dict" / "index.noun").write_text(_INDEX_NOUN, encoding="latin-1")
    out = tmp_path / "table.tsv.gz"
    call_command("lexicon_build", str(tmp_path / "dict"), "--out", str(out), stdout=io.StringIO())
    built = lexicon.build_tables(tmp_path / "dict")
    loaded = lexicon._load(out)
    assert loaded.doc == built.doc and loaded.query == built.query
    # A jazz band is a band (depth 4, kept); set, group, abstraction are too general (depth < 4).
    assert loaded.doc["jazz_band"] == ("^band.1",) and loaded.doc["band"] == ()
    lexicon.write_table(built, tmp_path / "again.gz")
    assert out.read_bytes() == (tmp_path / "again.gz").read_bytes()  # reproducible: a rebuild diffs only on change


def test_a_gunicorn_worker_reads_the_search_tables_before_its_first_request(monkeypatch) -> None:
    import runpy

    from django.conf import settings

    from memoryhub import wordvectors

    monkeypatch.setattr(lexicon, "_tables", None)
    monkeypatch.setattr(wordvectors, "_vectors", None)
    conf = runpy.run_path(str(settings.BASE_DIR / "gunicorn.conf.py"))
    conf["post_worker_init"](object())
    assert lexicon._tables is not None and wordvectors._vectors is not None
