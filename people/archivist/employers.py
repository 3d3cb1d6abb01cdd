"""Whom the user works for: a person or an organisation ("I work for Kowalski" / "I work for Stripe").

"work for", "работаю на" and "给…打工" take a person (the boss) as readily as a company, and nothing in the
phrase tells them apart. The rule archivist decides by the name, and leans to no one: a company saved as a
person of the user's inner circle misleads every later prompt, while a boss left out here is still found by
any cue ("my boss Kowalski") or verb ("Kowalski said") that names him.

English, first rule that applies (`en_names_no_one`):
1. a firm's word in the name run or right after it ("Kowalski Labs", "Acme Co", "Kowalski & Sons"): no one;
2. a person the user already has, a word the conversation calls "he" or "she" (`said_as_people`), a listed first
   name or diminutive ("Dana", "Masha"): the person;
3. a firm's shape: a capital inside the word ("PayPal", "McKinsey"), a firm's ending ("Infosoft", "Sberbank"),
   a firm known to wear a surname ("Kaspersky"): no one;
4. a surname's shape ("Kowalski", "Jan Kowalski", "Ivanov", "Shevchenko"; `lexicon.EN_SURNAME_ENDINGS`): the
   person;
5. anything else ("Stripe", "Target", "Zorblax"): no one, as before.
Russian says it by the case (`ru_names_no_one`): "работаю на" takes the accusative, which for a person is not
the nominative ("на Ковальского", "на Иванову"; indeclinable "на Шевченко" reads both ways) and for a thing is
("на Зорбликс", "на Газпром"). Chinese names a company by no name shape the name finders take (腾讯, 华为), so
"我给王强打工" reads the boss from the frame alone (`chinese._zh_boss_frame`).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from memoryhub.text import normalize
from people import lexicon
from people.archivist.tokens import CYR, LAT, TOKEN, KnownIndex
from people.names import NAME_GRAMMEMES, en_cue, full_names_of, morph, ru_lemmas

_VOWELS = frozenset("aeiouy")
# What a conversation may end a pronoun with: "she's", "he'd", "he’ll".
_CLITIC = ("'", "’")


def _base(word: str) -> str:
    return word[:-2] if word.endswith(("'s", "’s")) else word


def _is_cap(word: str) -> bool:
    return word[:1].isupper() and not (len(word) > 1 and word.isupper())


def firm_shaped(word: str) -> bool:
    low = normalize(word)
    inner_capital = any(a.islower() and b.isupper() for a, b in itertools.pairwise(word))
    return inner_capital or low in lexicon.ORG_NAMES_LIKE_SURNAMES or any(
        low.endswith(end) and len(low) >= len(end) + 3 for end in lexicon.EN_ORG_SUFFIXES)


def _surname_shaped(word: str) -> bool:
    low = normalize(word)
    if low.endswith(lexicon.EN_NOT_SURNAME_ENDINGS):
        return False
    for end in lexicon.EN_SURNAME_ENDINGS:
        if not low.endswith(end) or len(low) < len(end) + 3:
            continue
        before = low[-len(end) - 1]
        # A short ending is a surname's only after a consonant: "Kowalska", "Pushkin"; not "Alaska", "Bahrain".
        if len(end) > 3 or (before.isalpha() and before not in _VOWELS):
            return True
    return False


def en_names_no_one(raw: Sequence[str], k: int, end: int, known: KnownIndex, persons: frozenset[str]) -> bool:
    """Whether the name run raw[k:end] after "work for" names no person (the rules in the module's docstring).
    `persons`: the words the conversation calls "he" or "she" (`said_as_people`)."""
    run = [_base(w) for w in raw[k:end]]
    lows = [normalize(w) for w in run]
    # What follows a possessive is the owner's ("Kowalski's company", "Stripe's payments team"), not the name's.
    after = [] if raw[end - 1].endswith(("'s", "’s")) else [normalize(w) for w in raw[end:end + 2]]
    if any(w in lexicon.EN_ORG_WORDS for w in lows) or (after and after[0] in lexicon.EN_ORG_WORDS) or (
            len(after) == 2 and after[0] == "and" and _is_cap(raw[end + 1]) and after[1] in lexicon.EN_ORG_WORDS):
        return True
    if any(known.word_is_known(w) for w in run) or lows[0] in persons or lows[0] in lexicon.EN_FIRST_NAMES or \
            full_names_of(lows[0]):
        return False
    if any(firm_shaped(w) for w in run):
        return True
    return not any(_surname_shaped(w) for w in run)


def ru_work_for_before(norms: Sequence[str], j: int) -> bool:
    """"работаю на", "работаю сейчас на", "тружусь на": a verb of working for among the two words before the
    "на" at j, with no other verb between."""
    for i in range(j - 1, max(-1, j - 3), -1):
        if not CYR.search(norms[i]):
            return False
        if any(lemma in lexicon.RU_WORK_FOR_LEMMAS for lemma in ru_lemmas(norms[i])[:2]):
            return True
        if any(p.tag.POS in ("VERB", "INFN") for p in morph().parse(norms[i])[:1]):
            return False
    return False


def ru_names_no_one(word: str, known: KnownIndex) -> bool:
    """Whether the word after "работаю на" names no person: not someone the user has, and no name reading in
    the accusative ("на Зорбликс", "на Тинькофф": a firm wearing a surname)."""
    if known.word_is_known(word):
        return False
    names = [p for p in morph().parse(word)
             if NAME_GRAMMEMES & p.tag.grammemes and p.tag.case == "accs" and p.tag.number != "plur"]
    if not names:
        return True
    return normalize(word) in lexicon.ORG_NAMES_LIKE_SURNAMES or any(
        normalize(p.normal_form) in lexicon.ORG_NAMES_LIKE_SURNAMES for p in names)


def said_as_people(sentences: Sequence[str]) -> frozenset[str]:
    """The words after "work for" that the conversation calls "he" or "she", before or after: "I work for Harrison.
    She is tough.", "Harrison yelled again, he never listens." … "I work for Harrison". An occurrence counts when
    the first pronoun after it, in the rest of its sentence or in the next one, is a person's ("he", "her"), not
    a thing's ("it", "they": "I work for Zorblax, they make games"), and no one else it could stand for comes
    first: a cue word ("my sister says she …"), a listed first name, a capitalised word inside a sentence."""
    tokenized = [TOKEN.findall(s) for s in sentences]
    normed = [[normalize(t) for t in raw] for raw in tokenized]
    candidates = {normalize(_base(raw[i])) for raw, norms in zip(tokenized, normed, strict=True)
                  for i in range(2, len(raw))
                  if norms[i - 1] == "for" and norms[i - 2] in lexicon.EN_WORK_WORDS and LAT.search(raw[i]) and
                  _is_cap(raw[i])}
    found: set[str] = set()
    for s, norms in enumerate(normed):
        for i, norm in enumerate(norms):
            key = normalize(_base(norm))
            if key in candidates and key not in found and _person_pronoun_after(tokenized, normed, s, i, key):
                found.add(key)
    return frozenset(found)


def _person_pronoun_after(tokenized: list[list[str]], normed: list[list[str]], s: int, i: int, key: str) -> bool:
    spans = [(s, i + 1)] + ([(s + 1, 0)] if s + 1 < len(tokenized) else [])
    for t, start in spans:
        raw, norms = tokenized[t], normed[t]
        first = next((j for j, w in enumerate(raw) if w[:1].isalnum()), 0)
        for j in range(start, len(raw)):
            word = norms[j]
            for mark in _CLITIC:
                word = word.split(mark)[0]
            if word in lexicon.EN_PERSON_PRONOUNS:
                return True
            if word in lexicon.EN_THING_PRONOUNS:
                return False
            if word == "i" or normalize(_base(norms[j])) == key:
                continue
            if en_cue(norms, j) or word in lexicon.EN_FIRST_NAMES or (
                    j != first and LAT.search(raw[j]) and _is_cap(raw[j])):
                return False
    return False
