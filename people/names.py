"""Name handling shared by the archivist, deduplication and search: normal forms, keys, similarity.

Pure functions (no database). Russian morphology comes from pymorphy3 (offline dictionaries), loaded
once per process on first use.
"""

from __future__ import annotations

import functools
import re
import unicodedata
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from memoryhub.morph import analyzer as morph
from memoryhub.text import analyze, normalize, words
from people import lexicon, translit

_CYR = re.compile("[\u0400-\u052f]")
_HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LAT = re.compile("[A-Za-z\u00c0-\u024f]")
USERNAME = re.compile(r"^[A-Za-z][A-Za-z0-9_]{2,31}$")



def _term(token: str) -> str:
    """The `memoryhub.text` index term of one word ('' for a stopword)."""
    terms = analyze(token)
    return terms[0] if terms else ""


NAME_GRAMMEMES = frozenset({"Name", "Surn", "Patr"})


# --- normal forms and keys --------------------------------------------------------------------------------


def clean_name(name: str | None) -> str:
    """A display name as stored: NFKC, no surrounding punctuation or quotes, single spaces, at most 200 chars."""
    if not name:
        return ""
    text = unicodedata.normalize("NFKC", str(name))
    text = " ".join(text.split())
    text = text.strip(" \t\"'«»“”„()[]{}<>.,;:!?-–—*_#")
    return text[:200]


def name_key(name: str | None) -> str:
    """The comparison key of a name or alias: casefolded, ё→е, punctuation dropped."""
    return " ".join(words(clean_name(name).lstrip("@")))


def clean_username(username: str | None) -> str | None:
    """`@Petya_K` → `petya_k`; None when absent or not a valid Telegram-style username."""
    if not username:
        return None
    value = str(username).strip().lstrip("@").strip()
    if not USERNAME.match(value):
        return None
    return value.lower()


def script_of(text: str) -> str:
    if _HAN.search(text):
        return "zh"
    if _CYR.search(text):
        return "ru"
    return "en"


def title_case(word: str) -> str:
    """`петров` → `Петров`, `римский-корсаков` → `Римский-Корсаков`, `o'brien` → `O'Brien`."""
    return re.sub(r"(^|[-'’\s])(\w)", lambda m: m.group(1) + m.group(2).upper(), word.lower())


@functools.lru_cache(maxsize=65_536)
def ru_lemmas(word: str) -> tuple[str, ...]:
    """Dictionary forms of a Cyrillic word, name readings first (`петровым` → `петров`)."""
    parses = morph().parse(word)
    names = [p.normal_form for p in parses if NAME_GRAMMEMES & p.tag.grammemes]
    others = [p.normal_form for p in parses]
    return tuple(dict.fromkeys(normalize(w) for w in [*names, *others]))


# The suffixes a Russian first name takes in speech, and the ending of the name they replace: Егор → Егорка,
# Таня → Танька, Катя → Катюха, Вова → Вован, Толя → Толян, Дима → Димон, Рома → Ромыч, Вова → Вовчик.
_RU_COLLOQUIAL = (("ька", "я"), ("ка", ""), ("ка", "а"), ("ка", "я"), ("юха", "я"), ("уха", "а"), ("юша", "я"),
                  ("ан", "а"), ("ян", "я"), ("он", "а"), ("ос", "а"), ("ыч", "а"), ("ек", "я"), ("ок", "а"),
                  ("чик", "а"))


@functools.lru_cache(maxsize=16_384)
def ru_colloquial_name(word: str) -> str | None:
    """The nominative of a colloquial form of a first name the dictionary does not list ("Егорка", "Вованом" →
    вован, "Катюха"), or None. A word the dictionary knows is left alone, whatever its look: "Иран" and "Милан"
    are places, not Ира's and Мила's."""
    key = normalize(word)
    if not _CYR.search(key) or morph().word_is_known(key):
        return None
    for form in dict.fromkeys([key, *(normalize(p.normal_form) for p in morph().parse(key))]):
        for suffix, ending in _RU_COLLOQUIAL:
            if form.endswith(suffix) and len(form) - len(suffix) >= 2:
                base = form[: -len(suffix)] + ending
                if any("Name" in p.tag.grammemes and p.tag.case == "nomn" and p.tag.number == "sing" and
                       normalize(p.normal_form) == base for p in morph().parse(base)):
                    return form
    return None


@functools.lru_cache(maxsize=65_536)
def ru_lemma(word: str) -> str:
    return ru_lemmas(word)[0] if _CYR.search(word) else word


def name_terms(names: Iterable[str], username: str | None = None) -> list[str]:
    """Lookup terms of a person's names: each normalised word, its Russian dictionary form, the whole
    name (Chinese names have no spaces), the username, and the kin key of a kin word ("kin:mother")."""
    names = list(names)
    terms: list[str] = []
    for name in names:
        key = name_key(name)
        if not key:
            continue
        terms.append(key)
        for word in key.split():
            word = _strip_possessive(word)
            terms.append(word)
            if _CYR.search(word):
                terms.append(ru_lemma(word))
    if username:
        terms.append(username.lower())
    terms.extend(kin_key(name) for name in names)
    return list(dict.fromkeys(t for t in terms if t))


def query_name_terms(text: str) -> list[str]:
    """Terms of free text that may name someone: words, their Russian name readings, Han substrings."""
    terms: list[str] = []
    for word in words(text):
        word = _strip_possessive(word)
        if _HAN.search(word):
            continue
        terms.append(word)
        if _CYR.search(word):
            terms.extend(ru_lemmas(word)[:3])
    for run in re.findall(f"[{_HAN.pattern[1:-1]}]+", normalize(text)):
        for size in (2, 3, 4):
            terms.extend(run[i:i + size] for i in range(len(run) - size + 1))
    for username in re.findall(r"@([A-Za-z][A-Za-z0-9_]{2,31})", text):
        terms.append(username.lower())
    # Kin words name the relative in any language and case: "маме", "Mom" and "我妈说" find "мама".
    terms.extend(key for key in (kin_key(t) for t in list(terms) if not _HAN.search(t)) if key)
    for run in re.findall(f"[{_HAN.pattern[1:-1]}]+", normalize(text)):
        terms.extend(key for key in (kin_key(run[start:end]) for start, end, _ in zh_cues(run)) if key)
    return list(dict.fromkeys(terms))


def _strip_possessive(word: str) -> str:
    return word[:-2] if word.endswith(("'s", "’s")) and len(word) > 3 else word


def strip_possessive(word: str) -> str:
    """"cousin's" → "cousin"."""
    return _strip_possessive(word)


# --- similarity ---------------------------------------------------------------------------------------------


def osa_distance(a: str, b: str, limit: int | None = None) -> int:
    """Optimal string alignment distance: Levenshtein plus adjacent transpositions ("petorv" ↔ "petrov" = 1)."""
    if a == b:
        return 0
    if abs(len(a) - len(b)) > (limit if limit is not None else max(len(a), len(b))):
        return abs(len(a) - len(b))
    prev2: list[int] = []
    prev = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        cur = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + cost)
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                cur[j] = min(cur[j], prev2[j - 2] + 1)
        prev2, prev = prev, cur
    return prev[len(b)]


def typo_budget(word: str) -> int:
    """Edits a typo may add to a word of this length: none under 4 characters, then 1, then 2 from 8."""
    if len(word) < 4:
        return 0
    return 1 if len(word) < 8 else 2


def similarity(a: str, b: str) -> float:
    """1 - OSA distance / longer length, over name keys."""
    if not a or not b:
        return 0.0
    return 1.0 - osa_distance(a, b) / max(len(a), len(b))


_GENDER_PAIRS = (("", "а"), ("", "a"), ("ий", "ая"), ("ой", "ая"), ("ый", "ая"), ("ii", "aya"), ("iy", "aya"))


def gendered_pair(a: str, b: str) -> bool:
    """Petrov/Petrova, Достоевский/Достоевская: the same surname in two genders, so two people."""
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb):
        return False
    diffs = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
    if len(diffs) != 1:
        return False
    x, y = diffs[0]
    for m, f in _GENDER_PAIRS:
        for p, q in ((x, y), (y, x)):
            stem = p[: len(p) - len(m)] if m else p
            if (not m or p.endswith(m)) and q == stem + f and len(stem) >= 3:
                return True
    return False


def is_word_prefix(short: str, full: str) -> bool:
    """`maria` is a prefix of `maria ivanovna` at a word boundary; `иван` is not one of `иванов`."""
    return bool(short) and full.startswith(short + " ")


@functools.cache
def _diminutive_index() -> dict[str, frozenset[str]]:
    index: dict[str, set[str]] = {}
    for full, forms in lexicon.RU_DIMINUTIVES.items():
        full_key = normalize(full)
        index.setdefault(full_key, set()).add(full_key)
        for form in forms:
            index.setdefault(normalize(form), set()).add(full_key)
    return {k: frozenset(v) for k, v in index.items()}


@functools.cache
def _latin_diminutive_index() -> dict[str, frozenset[str]]:
    """The Russian names of the table by their Latin spelling (`people.translit.fold`): `masha` →
    {мария}, `dima` → {дмитрий}, so "Masha" and "Мария" are forms of one name as "Маша" and "Мария"
    are. The folded spelling absorbs the transliteration schemes ("Mascha", "Dmitriy", "Katja")."""
    index: dict[str, set[str]] = {}
    for key, full in _diminutive_index().items():
        if _CYR.search(key):
            index.setdefault(translit.fold(key), set()).update(full)
    return {k: frozenset(v) for k, v in index.items()}


def full_names_of(first_name: str) -> frozenset[str]:
    """Full names a first name may stand for: `маша` → {мария}, `саша` → {александр, александра},
    `masha` → {мария}, `sasha` → {alexander, александр, александра}."""
    key = normalize(first_name)
    if _CYR.search(key):
        # And the English names it is a form of, as their table writes it in Latin letters: "Саша"
        # is Alexander's "sasha".
        lemma = ru_lemma(key)
        return _diminutive_index().get(lemma, frozenset()) | {
            n for n in _diminutive_index().get(translit.fold(lemma), ()) if not _CYR.search(n)}
    found = _diminutive_index().get(key, frozenset())
    return found | _latin_diminutive_index().get(translit.fold(key), frozenset()) if _LAT.search(key) else found


def is_listed_name(word: str) -> bool:
    """A full name or diminutive of the table as written (`петров` is no `петр`)."""
    return normalize(word) in _diminutive_index()


def is_full_form(first_name: str) -> bool:
    key = normalize(first_name)
    if key in lexicon.RU_DIMINUTIVES:
        return True
    return bool(_LAT.search(key)) and not _CYR.search(key) and \
        any(translit.fold(key) == translit.fold(full) for full in full_names_of(key))


def diminutive_match(a: str, b: str) -> str | None:
    """The full name two name keys share as diminutive and full (or two diminutives) of, or None.

    The remaining words must agree: one side has none, or both the same, in Latin letters across
    scripts (`маша` ↔ `мария иванова`, `masha petrova` ↔ `мария петрова`, but not `маша петрова` ↔
    `мария иванова`). One name in two scripts ("Masha" ↔ "Маша") is the transliteration rule's.
    """
    wa, wb = a.split(), b.split()
    if not wa or not wb or translit.fold(wa[0]) == translit.fold(wb[0]):
        return None
    if gendered_pair(translit.fold(wa[0]), translit.fold(wb[0])):
        return None  # "Ivan" ↔ "Ивана": read as Иван's genitive, but a name key is a nominative, hers
    shared = full_names_of(wa[0]) & full_names_of(wb[0])
    if not shared:
        return None
    rest_a, rest_b = wa[1:], wb[1:]
    if rest_a and rest_b and [translit.fold(w) for w in rest_a] != [translit.fold(w) for w in rest_b]:
        return None
    return sorted(shared)[0]


# --- kin without a name ----------------------------------------------------------------------------------


@functools.cache
def _kin_index() -> dict[str, lexicon.Kin]:
    index: dict[str, lexicon.Kin] = {}
    for kin in lexicon.KIN:
        for word in (*kin.en, *kin.ru, *kin.zh):
            index.setdefault(name_key(word), kin)
    return index


def kin_of(name: str | None) -> lexicon.Kin | None:
    """The kin a name is only a word for ("Mom", "мамой", "妈妈" → mother), or None for a real name.

    Russian case forms fold to the dictionary form first (pymorphy3), so "маме" is "мама"."""
    key = name_key(name)
    if not key:
        return None
    index = _kin_index()
    if key in index:
        return index[key]
    if key in _ZH_SIBLING_WORD:  # "我哥": the short form zh_cues reads after 我 only
        return index[_ZH_SIBLING_WORD[key]]
    if " " not in key and _CYR.search(key):
        for lemma in ru_lemmas(key)[:3]:
            if lemma in index:
                return index[lemma]
    return None


def kin_key(name: str | None) -> str:
    """`kin:<id>` for a kin word, '' for anything else: the identity key every word of one kin shares."""
    kin = kin_of(name)
    return f"kin:{kin.id}" if kin else ""


def kin_name(kin: lexicon.Kin, script: str) -> str:
    """What an unnamed relative is called: the kin's first word in the script the user wrote in."""
    words = {"zh": kin.zh, "ru": kin.ru}.get(script) or kin.en
    return (words or kin.en or kin.ru or kin.zh)[0]


# --- cue words and concepts -----------------------------------------------------------------------------


@functools.cache
def _cue_tables() -> tuple[dict[str, lexicon.Cue], list[tuple[str, lexicon.Cue]]]:
    """(Russian lemma (or lemma pair, or lemma + preposition + word) → cue, Chinese words longest first)."""
    ru: dict[str, lexicon.Cue] = {}
    zh: list[tuple[str, lexicon.Cue]] = []
    for cue in lexicon.CUES:
        for phrase in cue.ru:
            parts = [normalize(w) for w in phrase.split()]
            if len(parts) == 3:  # noun, preposition, its object: the object in its dictionary form
                parts[2] = ru_lemma(parts[2])
            ru.setdefault(" ".join(parts), cue)
        for word in cue.zh:
            zh.append((word, cue))
    zh.sort(key=lambda item: -len(item[0]))
    return ru, zh


@functools.cache
def _en_cue_forms() -> dict[tuple[str, ...], lexicon.Cue]:
    """English cue phrases as word sequences, the last word also in its plural ("sisters",
    "roommates", "nannies"). Exact words, not stems: "manages" is no "manager", "working" no "work"."""
    forms: dict[tuple[str, ...], lexicon.Cue] = {}
    for cue in lexicon.CUES:
        for phrase in cue.en:
            *head, last = normalize(phrase).split()
            plurals = {last, f"{last}s", f"{last}es"}
            if last.endswith("y") and last[-2:-1] not in "aeiou":
                plurals.add(f"{last[:-1]}ies")
            for form in plurals:
                forms.setdefault((*head, form), cue)
    return forms


def en_cue(tokens: Sequence[str], i: int) -> tuple[lexicon.Cue, int] | None:
    """The cue starting at normalised English token i, and how many tokens it spans. A hyphenated word
    is a cue as a whole or not at all: "mother-in-law" is no "mother", "ex-wife" no "wife"."""
    forms = _en_cue_forms()
    for span in (2, 1):
        if i + span <= len(tokens):
            words = tuple(_strip_possessive(t) for t in tokens[i:i + span])
            if words in forms:
                return forms[words], span
            if span == 1 and "-" in words[0] and (words[0].replace("-", ""),) in forms:
                return forms[(words[0].replace("-", ""),)], 1  # "co-worker"
    return None


def ru_cue(tokens: Sequence[str], i: int) -> tuple[lexicon.Cue, int] | None:
    ru, _ = _cue_tables()
    if i + 2 < len(tokens) and tokens[i + 1] in ("по", "из"):
        # "сосед по комнате", "соседка по даче": the noun's complement may make it another cue.
        for lemma in ru_lemmas(tokens[i])[:2]:
            key = f"{lemma} {tokens[i + 1]} {ru_lemma(tokens[i + 2])}"
            if key in ru:
                return ru[key], 3
    if i + 1 < len(tokens):
        pair = f"{ru_lemma(tokens[i])} {tokens[i + 1]}"
        for key in (pair, f"{ru_lemma(tokens[i])} {ru_lemma(tokens[i + 1])}"):
            if key in ru:
                return ru[key], 2
    token = tokens[i]
    # The word as written too: "завотделом" does not decline, and the dictionary guesses lemmas for it.
    for lemma in (*ru_lemmas(token)[:2], token) if _CYR.search(token) else ():
        if lemma in ru:
            return ru[lemma], 1
    return None


@functools.cache
def _verb_tables() -> tuple[list[tuple[str, tuple[str, ...], lexicon.VerbCue]], dict[str, lexicon.VerbCue],
                            list[tuple[str, lexicon.VerbCue]]]:
    en: list[tuple[str, tuple[str, ...], lexicon.VerbCue]] = []
    ru: dict[str, lexicon.VerbCue] = {}
    zh: list[tuple[str, lexicon.VerbCue]] = []
    for cue in lexicon.VERB_CUES:
        for phrase in cue.en:
            verb, *rest = phrase.split()
            en.append((_term(verb) or verb, tuple(rest), cue))
        for word in cue.ru:
            ru.setdefault(normalize(word), cue)
        zh.extend((word, cue) for word in cue.zh)
    en.sort(key=lambda item: -len(item[1]))
    zh.sort(key=lambda item: -len(item[0]))
    return en, ru, zh


def en_verb_cue(tokens: Sequence[str], i: int) -> tuple[lexicon.VerbCue, int] | None:
    """A relation verb at normalised English token i ("reports to", "worked with"), and its span."""
    en, _, _ = _verb_tables()
    stem = _term(tokens[i])
    for verb, rest, cue in en:
        if stem == verb and tuple(tokens[i + 1:i + 1 + len(rest)]) == rest:
            return cue, 1 + len(rest)
    return None


def ru_verb_cue(tokens: Sequence[str], i: int) -> tuple[lexicon.VerbCue, int] | None:
    _, ru, _ = _verb_tables()
    token = tokens[i]
    if not _CYR.search(token):
        return None
    for lemma in ru_lemmas(token)[:2]:
        if lemma in ru:
            return ru[lemma], 1
    return None


def zh_verb_cues(text: str) -> list[tuple[int, int, lexicon.VerbCue]]:
    _, _, zh = _verb_tables()
    found = []
    for word, cue in zh:
        start = text.find(word)
        while start >= 0:
            found.append((start, start + len(word), cue))
            start = text.find(word, start + len(word))
    return sorted(found, key=lambda item: item[0])


def zh_cues(text: str) -> list[tuple[int, int, lexicon.Cue]]:
    """Non-overlapping (start, end, cue) of Chinese cue words in `text`, longest match first."""
    _, zh = _cue_tables()
    taken = [False] * len(text)
    found: list[tuple[int, int, lexicon.Cue]] = []
    for word, cue in zh:
        start = text.find(word)
        while start >= 0:
            end = start + len(word)
            if not any(taken[start:end]):
                found.append((start, end, cue))
                for k in range(start, end):
                    taken[k] = True
            start = text.find(word, end)
    # "我哥", "我姐", "我弟", "我妹": the spoken short form of a sibling word, only right after 我 (or 我的) and not
    # in a longer word ("我哥们" is a buddy, "帅哥" nobody's brother): "我哥会开车" found no brother.
    for m in _ZH_SHORT_SIBLING.finditer(text):
        start = m.start(1)
        if not taken[start]:
            found.append((start, start + 1, _zh_sibling_cues()[m.group(1)]))
            taken[start] = True
    return sorted(found, key=lambda item: item[0])


_ZH_SIBLING_WORD = {"哥": "哥哥", "姐": "姐姐", "弟": "弟弟", "妹": "妹妹"}
_ZH_SHORT_SIBLING = re.compile(r"我的?([哥姐弟妹])(?![哥姐弟妹们儿夫媳子])")


@functools.cache
def _zh_sibling_cues() -> dict[str, lexicon.Cue]:
    """The cue of each short sibling word: its full word's (`_ZH_SIBLING_WORD`)."""
    cues = dict(_cue_tables()[1])
    return {short: cues[word] for short, word in _ZH_SIBLING_WORD.items()}


class SearchWord(NamedTuple):
    """A word of a text as people search matches it: its own terms (`memoryhub.text` stems; a cue
    phrase's words, "сосед по комнате") and, for a cue word, its concept ("nurse": `role:nurse`, as
    "медсестра" and "护士") and the concept's family (`role:medical`, a doctor's too)."""

    terms: tuple[str, ...]
    concept: str = ""
    family: str = ""


def search_words(text: str) -> list[SearchWord]:
    """The words of a text, cue words with their concept (`начальник`, `руководитель`, `boss`, `老板`
    are all `role:boss`), so a description matches a query that names the same relationship with
    another word or in another language."""
    tokens = words(text)
    out: list[SearchWord] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if _HAN.search(token):
            cues = zh_cues(token)
            out.extend(SearchWord(tuple(t for t in (_term(token[s:e]),) if t), c.concept, c.family)
                       for s, e, c in cues)
            if not cues or len(token) > max(e - s for s, e, _ in cues):
                term = _term(token)
                if term:
                    out.append(SearchWord((term,)))
            i += 1
            continue
        hit = ru_cue(tokens, i) if _CYR.search(token) else en_cue(tokens, i)
        if hit is not None:
            cue, span = hit
            out.append(SearchWord(tuple(t for t in map(_term, tokens[i:i + span]) if t), cue.concept, cue.family))
            i += span
            continue
        term = _term(token)
        if term:
            out.append(SearchWord((term,)))
        i += 1
    return out


@functools.lru_cache(maxsize=4096)
def _relations(text: str) -> frozenset[str]:
    return frozenset(w.concept for w in search_words(text) if w.concept.startswith(("kin:", "role:")))


def relation_aliases(display_name: str, aliases: Iterable[str]) -> list[str]:
    """The aliases that say who someone is to the user ("жена", "my boss", "старший брат", "妈妈", "the
    neighbor"), not what they are called ("Ленка", "Dr. Green"), nor what the display name says already
    ("mom" beside "Мама")."""
    said = _relations(display_name)
    return [a for a in aliases if (relations := _relations(a)) and not relations <= said]


def concept_terms(text: str) -> list[str]:
    """Search terms of a text (a bio's `search_terms`): every word's own terms, every cue's concept and
    its family. A cue word keeps its own terms beside the concept: "physician" and "doctor" are both
    `role:doctor`, and only their stems tell the bio that says the query's word."""
    return [t for word in search_words(text) for t in (word.concept, word.family, *word.terms) if t]
