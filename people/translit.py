"""Latin and Cyrillic spellings of one name, for deduplication: "Igor" / "Игорь", "Julia" / "Юлия".

A Cyrillic name key is transliterated letter by letter, then both sides are folded into one Latin
spelling that absorbs the variants people actually write, so "Sergei", "Sergey" and "Сергей" meet.
No package does this here: the requirements carry none (and `pypinyin` is absent, so Chinese
names are not transliterated at all). Pure functions over name keys (`people.names.name_key`:
casefolded, ё already folded into е).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable

# One letter, one spelling: BGN/PCGN for Russian, with е always "e" and the soft and hard signs
# dropped as ICAO 9303 drops ь (ICAO also differs in й → i, ю → iu, я → ia, ъ → ie), plus the
# Ukrainian and Belarusian letters. The variants of the other schemes, of passports and of habit
# (й → i/y/j, х → kh/h, ё → e/yo/jo, ы → y/i, ий → y/iy/ii/ij, ю → yu/iu/ju, я → ya/ia/ja, е → e/ye,
# кс → ks/x, soft and hard signs dropped or written) are not enumerated here: `fold` maps every one
# of them to the same letters on both sides.
_CYRILLIC_TO_LATIN = {
    "а": "a", "б": "b", "в": "v", "г": "g", "д": "d", "е": "e", "ё": "e", "ж": "zh", "з": "z",
    "и": "i", "й": "y", "к": "k", "л": "l", "м": "m", "н": "n", "о": "o", "п": "p", "р": "r",
    "с": "s", "т": "t", "у": "u", "ф": "f", "х": "kh", "ц": "ts", "ч": "ch", "ш": "sh", "щ": "shch",
    "ъ": "", "ы": "y", "ь": "", "э": "e", "ю": "yu", "я": "ya",
    "і": "i", "ї": "yi", "є": "ye", "ґ": "g", "ў": "u",
}
_TABLE = str.maketrans(_CYRILLIC_TO_LATIN)
_CYR = re.compile("[\u0400-\u052f]")
_LAT = re.compile("[a-z\u00c0-\u024f]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")

# In order: each step sees the previous one's output. The spelling a step keeps is arbitrary; what
# matters is that every variant of one sound ends up the same on both sides.
_FOLDS = (
    (re.compile("x"), "ks"),                    # Alexander / Aleksandr, Xenia / Ksenia
    (re.compile("shch|sch"), "sh"),             # Щукин / Shchukin; German Sascha
    (re.compile("dzh|dj"), "j"),                # Джон / John (then j → y, as for both)
    (re.compile("kh"), "h"),                    # Михаил / Mikhail / Mihail
    (re.compile("ph"), "f"),                    # Филипп / Philipp
    (re.compile("ck"), "k"),
    (re.compile("c(?!h)"), "k"),                # Nicolai / Николай; "ch" is ч
    (re.compile("w"), "v"),                     # Wladimir / Владимир
    (re.compile("q"), "k"),
    (re.compile("tz"), "ts"),
    (re.compile("j"), "y"),                     # Julia / Юлия, Sergej / Сергей, Jana / Яна
    (re.compile(r"(\w)\1+"), r"\1"),            # Anna / Ана, Philipp / Филипп, Майя mayya / Maya
    (re.compile("iy(?=[aeiou])"), "y"),         # Мария mariya / Maria, Юлия yuliya / Yulia
    (re.compile("i(?=[aou])"), "y"),            # Maria → marya, Ilia → ilya, Iurii → yurii
    (re.compile("y[eo]"), "e"),                 # Yelena / Елена, Fyodor / Фёдор, Semyon / Семён
    (re.compile("y(?![aeiou])"), "i"),          # й and ы before a consonant or at the end: Sergey / Sergei
    (re.compile(r"(\w)\1+"), r"\1"),            # again for what the folds doubled: Dmitriy → dmitrii → dmitri
)


def has_cyrillic(key: str) -> bool:
    return bool(_CYR.search(key))


def has_latin(key: str) -> bool:
    return bool(_LAT.search(key))


def crosses_scripts(a: str, b: str) -> bool:
    """One key is Cyrillic and the other Latin (Chinese takes no part: nothing transliterates it)."""
    if _HAN.search(a) or _HAN.search(b):
        return False
    return (has_cyrillic(a) and not has_cyrillic(b) and bool(_LAT.search(b))) or \
        (has_cyrillic(b) and not has_cyrillic(a) and bool(_LAT.search(a)))


@functools.lru_cache(maxsize=16_384)
def fold(key: str) -> str:
    """The one Latin spelling a name key folds to: `игорь` → `igor`, `sergey petrov` → `sergei petrov`,
    `юлия`, `yulia` and `julia` → `yulya`."""
    text = key.translate(_TABLE)
    for pattern, replacement in _FOLDS:
        text = pattern.sub(replacement, text)
    return text


def skeleton(folded: str) -> str:
    """A folded name's first letter and consonants, word by word: `aleksandr` and `aleksander` →
    `alksndr`. Transliterations differ in their vowels; another name differs in its consonants
    (Maria `mr` / Марина `mrn`)."""
    return " ".join(w[0] + re.sub("[aeiouy]", "", w[1:]) for w in folded.split())


def lookup_term(key: str) -> str:
    """The term a person's name key is found by from the other script: `cyr:igr` for `игорь`, `lat:igr`
    for `igor`; '' for a Chinese key or one without letters. The two prefixes keep a lookup from
    finding the same script's names, which the other rules compare already."""
    if not key or _HAN.search(key) or key.startswith("kin:"):
        return ""
    if has_cyrillic(key):
        return "cyr:" + skeleton(fold(key))
    return "lat:" + skeleton(fold(key)) if _LAT.search(key) else ""


def other_script_term(key: str) -> str:
    """The term a person of the other script carries if their name folds as `key` does."""
    term = lookup_term(key)
    if not term:
        return ""
    return ("lat:" if term.startswith("cyr:") else "cyr:") + term[4:]


def translit_terms(keys: Iterable[str]) -> list[str]:
    """The lookup terms of a person's name keys, once each."""
    return list(dict.fromkeys(t for t in map(lookup_term, keys) if t))


# A word's skeleton needs this many letters to be looked up near: a typo is one edit, and the rule
# (`dedup._translit`) accepts one edit only in a word of five letters or more, whose skeleton rarely
# has fewer than four. Shorter skeletons ("ivn", "srg") would each find hundreds of people.
_NEAR_MIN_LETTERS = 4


def _one_dropped(skel: str) -> list[str]:
    """A skeleton with one letter after the first dropped from one word: `srg ptrv` → `srg prv`,
    `srg ptv`, `srg ptr`. Two skeletons one consonant apart share one of these (a consonant mistyped,
    missing, added, or two swapped: Petrov `ptrv` / Петроф `ptrf` / Pertov `prtv`)."""
    words = skel.split()
    out = [" ".join([*words[:i], w[:j] + w[j + 1:], *words[i + 1:]])
           for i, w in enumerate(words) if len(w) >= _NEAR_MIN_LETTERS for j in range(1, len(w))]
    return list(dict.fromkeys(out))


def near_terms(key: str) -> list[str]:
    """The terms a person's name key is found near by from the other script: `cyr~:srg prv`, … for
    `сергей петров`. A typo on top of a transliteration changes a consonant ("Sergey Petrof"), and
    then the skeletons of `lookup_term` differ: these meet where one consonant is off."""
    term = lookup_term(key)
    if not term:
        return []
    return [f"{term[:3]}~:{v}" for v in _one_dropped(term[4:])]


def near_query_terms(key: str) -> list[str]:
    """The terms a person of the other script carries if their name is one consonant away from
    `key`'s in Latin letters (the exact `other_script_term` aside): their skeleton with one dropped
    equals ours, or ours with one dropped, or the two with one dropped each."""
    term = other_script_term(key)
    if not term:
        return []
    prefix, skel = term[:3], term[4:]
    dropped = _one_dropped(skel)
    if not dropped:
        return []
    return [f"{prefix}~:{skel}", *(f"{prefix}:{v}" for v in dropped), *(f"{prefix}~:{v}" for v in dropped)]


def translit_near_terms(keys: Iterable[str]) -> list[str]:
    """The near terms of a person's name keys, once each."""
    return list(dict.fromkeys(t for k in keys for t in near_terms(k)))


# People search reads a name written in the other script ("Masha" for "Маша", "Маши" for "Masha") by
# whole folded words: one term per word of a person's names, in the index `name_terms` already has.
# Equal folds, not skeletons: a search answers at once, with no review, so "Misha" must not find
# "Маша" as dedup's candidates may. `=` keeps these apart from dedup's `cyr:`/`lat:` terms.
@functools.lru_cache(maxsize=16_384)
def word_term(word: str) -> str:
    """The term a person's name word is found by from the other script: `cyr=masha` for `маша`,
    `lat=masha` for `masha`; '' for a Chinese word, a kin key or one without letters."""
    if not word or " " in word or _HAN.search(word) or word.startswith("kin:"):
        return ""
    if has_cyrillic(word):
        return "cyr=" + fold(word)
    return "lat=" + fold(word) if _LAT.search(word) else ""


def other_script_word_term(word: str) -> str:
    """The term a person carries if a word of their name in the other script folds as `word` does:
    `cyr=masha` for the query word `masha`."""
    term = word_term(word)
    if not term:
        return ""
    return ("lat=" if term.startswith("cyr=") else "cyr=") + term[4:]


def word_terms(words: Iterable[str]) -> list[str]:
    """The word terms of a person's name words (and their dictionary forms), once each."""
    return list(dict.fromkeys(t for t in map(word_term, words) if t))
