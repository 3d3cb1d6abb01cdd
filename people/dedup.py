"""Duplicate detection between two people of one user, rule by rule, in a fixed order.

1. Telegram id, 2. @username, 3. normalised name or alias, 4. kin ("Mom", "мамой" and "妈妈" are the
   user's one mother) — exact keys: a match merges at once; two *different* Telegram ids or
   usernames veto every later rule (two people, for sure);
5. Russian diminutives (Маша ↔ Мария), 6. name prefix at a word boundary in the same circle
   ("Maria Ivanovna" ↔ "Maria"), 7. a one-word name that is the first or last word of a fuller one,
   whatever the circles ("Jake" ↔ "Jake Miller", "Петров" ↔ "Сергей Петров"), 8. two named people
   the user calls by the same kin word ("my mom Olga", "my mom Irina"), 9. fuzzy name similarity
   (typos, transliteration slips), 10. a name in the other script, Latin ↔ Cyrillic ("Igor" ↔ "Игорь",
   "Sergey Petrov" ↔ "Сергей Петров"; `people.translit`), 11. embedding similarity — weak: they become
   a MergeProposal for review.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np
from django.db.models import Q

from memoryhub.search.vectors import nearest
from memoryhub.text import normalize, split_sentences
from people import conf, lexicon, translit
from people.models import Person
from people.names import (
    diminutive_match,
    full_names_of,
    gendered_pair,
    is_full_form,
    is_listed_name,
    is_word_prefix,
    kin_key,
    morph,
    name_key,
    ru_lemma,
    similarity,
)

EXACT_RULES = ("telegram_id", "username", "name", "alias", "kin")
WEAK_RULES = ("diminutive", "prefix", "name_part", "kin_alias", "fuzzy", "translit", "embedding")


@dataclass(frozen=True)
class Match:
    rule: str
    score: float
    detail: str

    @property
    def exact(self) -> bool:
        return self.rule in EXACT_RULES

    def evidence(self) -> dict[str, object]:
        return {"rule": self.rule, "score": round(self.score, 4), "detail": self.detail}


def hard_key_conflict(a: Person, b: Person) -> bool:
    return bool((a.telegram_id and b.telegram_id and a.telegram_id != b.telegram_id)
                or (a.username and b.username and a.username != b.username))


def exact_match(a: Person, b: Person) -> Match | None:
    if a.telegram_id and a.telegram_id == b.telegram_id:
        return Match("telegram_id", 1.0, f"telegram id {a.telegram_id}")
    if a.username and a.username == b.username:
        return Match("username", 1.0, f"@{a.username}")
    if hard_key_conflict(a, b):
        return None
    if a.name_key and a.name_key == b.name_key:
        return Match("name", 1.0, f"both named {a.display_name!r}")
    shared = sorted(set(a.name_keys) & set(b.name_keys))
    names = [k for k in shared if not k.startswith("kin:")]
    if names:
        return Match("alias", 1.0, f"shared name or alias {names[0]!r}")
    if shared and (kin_key(a.display_name) or kin_key(b.display_name)):
        # One of them has no name but the kin word: the user's mother is the user's mother.
        return Match("kin", 1.0, f"both are the user's {shared[0][4:].replace('_', ' ')}")
    return None


def _kin_alias(a: Person, b: Person) -> Match | None:
    """Two named people the user calls by one kin word: a stepmother, a second marriage — or a
    duplicate. Not for a machine to decide."""
    shared = sorted(k for k in set(a.name_keys) & set(b.name_keys) if k.startswith("kin:"))
    if shared:
        return Match("kin_alias", 0.6, f"both called the user's {shared[0][4:].replace('_', ' ')}")
    return None


def name_part(a: str, b: str) -> str | None:
    """The one-word name key that is the first or last word of the other, longer one, or None:
    "jake" ↔ "jake miller", "петров" ↔ "сергей петров". Words compare as written (names are stored in
    the nominative), so "петрова" is no part of "сергей петров"."""
    short, full = sorted((a, b), key=lambda k: len(k.split()))
    words = full.split()
    if len(short.split()) != 1 or len(words) < 2 or len(short) < 2:
        return None
    return short if short in (words[0], words[-1]) else None


def merged_display_name(source: Person, target: Person) -> str:
    """The name a merge of `source` into `target` keeps: the fuller name wins a prefix or name-part
    pair ("Jake Miller", "Сергей Петров"), the full form a diminutive pair, a real name a bare
    username or a kin word ("Olga", not "мама"); else the target's."""
    s, t = source.name_key, target.name_key
    if kin_key(target.display_name) and not kin_key(source.display_name):
        return source.display_name
    if kin_key(source.display_name) and not kin_key(target.display_name):
        return target.display_name
    if is_word_prefix(t, s) or (len(t.split()) == 1 and len(s.split()) > 1 and name_part(t, s)):
        return source.display_name
    if diminutive_match(s, t) and is_full_form(s.split()[0]) and not is_full_form(t.split()[0]):
        return source.display_name
    if target.username and t == name_key(target.username) and s != name_key(source.username or ""):
        return source.display_name
    return target.display_name


# Per word, not per pair of people: people compare by id, so a cache of merged_display_name kept a
# renamed person's old name.
@functools.lru_cache(maxsize=8192)
def _is_first_name(word: str) -> bool:
    if word in lexicon.EN_FIRST_NAMES or full_names_of(word) or word in lexicon.RU_DIMINUTIVES:
        return True
    return any("Name" in p.tag.grammemes for p in morph().parse(word)) if word.isalpha() else False


@functools.lru_cache(maxsize=8192)
def _is_first_name_as_written(word: str) -> bool:
    """`_is_first_name` for a word as written, not as any inflection of a name: "петров", "иванов" and
    "сергеев" are genitive plurals of Пётр, Иван and Сергей, and the commonest surnames. Names are
    stored in the nominative, so only a nominative reading (or a listed form) makes a first name."""
    if not translit.has_cyrillic(word):
        return _is_first_name(word)
    if is_listed_name(word):
        return True
    return any("Name" in p.tag.grammemes and normalize(p.normal_form) == word for p in morph().parse(word))


def _fuzzy(a: str, b: str) -> float:
    """Similarity of two name keys for typo detection, word by word.

    0 when the differing words are two real first names (Марина ≠ Мария), a gender pair
    (Петров/Петрова), or start with different letters: typos rarely hit the first letter, while
    different surnames often differ exactly there (Ёлкин/Белкин, Петров/Ветров).
    """
    if len(a) < 5 or len(b) < 5 or gendered_pair(a, b):
        return 0.0
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb):
        return similarity(a, b) if a[0] == b[0] else 0.0
    scores = []
    for x, y in zip(wa, wb, strict=True):
        if x == y or ru_lemma(x) == ru_lemma(y):
            continue
        if x[0] != y[0] or min(len(x), len(y)) < 4 or (_is_first_name(x) and _is_first_name(y)):
            return 0.0
        scores.append(similarity(x, y))
    return min(scores) if scores else 0.0


def _translit(a: str, b: str) -> float:
    """Similarity of a Latin and a Cyrillic name key, both folded into one Latin spelling
    (`people.translit.fold`): 1 when they fold alike ("igor" ↔ "игорь", "julia" ↔ "юлия"), else
    `_fuzzy`'s measure, threshold and guards over the folded words (a typo on top: "petrov" ↔
    "петроф"); 0 for two keys of one script, which the other rules compare.

    Where `_fuzzy` refuses any two different first names, here a first name may differ in its vowels
    only: transliterations disagree there (Alexander ↔ Александр, "aleksander" ↔ "aleksandr"), while
    another name differs in a consonant (Maria ↔ Марина, Marta ↔ Мария)."""
    if not translit.crosses_scripts(a, b):
        return 0.0
    fa, fb = translit.fold(a), translit.fold(b)
    if fa == fb:
        return 1.0
    if len(fa) < 5 or len(fb) < 5 or gendered_pair(fa, fb):
        return 0.0
    wa, wb, la, lb = a.split(), b.split(), fa.split(), fb.split()
    if not len(wa) == len(la) == len(wb) == len(lb):
        return similarity(fa, fb) if fa[0] == fb[0] else 0.0
    scores = []
    for x, y, fx, fy in zip(wa, wb, la, lb, strict=True):
        if fx == fy:
            continue
        if fx[0] != fy[0] or min(len(fx), len(fy)) < 4:
            return 0.0
        if (_is_first_name_as_written(x) or _is_first_name_as_written(y)) and \
                translit.skeleton(fx) != translit.skeleton(fy):
            return 0.0
        if _other_names(x, y):
            return 0.0
        scores.append(similarity(fx, fy))
    return min(scores) if scores else 1.0


def _other_names(x: str, y: str) -> bool:
    """Two words the diminutives table knows as forms of different names, one vowel apart in Latin
    letters: Misha (Михаил) ↔ Маша (Мария). Full names compare by their skeleton, as the rule does:
    Alexander is the English table's and Александр the Russian's, and they are one name."""
    names_x, names_y = full_names_of(x), full_names_of(y)
    if not names_x or not names_y:
        return False
    skeletons_x = {translit.skeleton(translit.fold(n)) for n in names_x}
    return skeletons_x.isdisjoint(translit.skeleton(translit.fold(n)) for n in names_y)


def _best_pair(keys_a: Iterable[str], keys_b: Iterable[str], score: Callable[[str, str], float],
               ) -> tuple[float, tuple[str, str]]:
    """The highest score of any key of one person against any of the other's, and that pair."""
    best, pair = 0.0, ("", "")
    for ka in keys_a:
        for kb in keys_b:
            value = score(ka, kb)
            if value > best:
                best, pair = value, (ka, kb)
    return best, pair


def compare(a: Person, b: Person, *, cosine: float | None = None) -> Match | None:
    """The first rule that matches two people, in the documented order, or None."""
    exact = exact_match(a, b)
    if exact is not None or hard_key_conflict(a, b):
        return exact
    for ka in a.name_keys:
        for kb in b.name_keys:
            shared = diminutive_match(ka, kb) if not (ka.startswith("kin:") or kb.startswith("kin:")) else None
            if shared:
                return Match("diminutive", 0.85, f"{ka!r} and {kb!r} are both forms of {shared!r}")
    keys_a = [k for k in a.name_keys if not k.startswith("kin:")]
    keys_b = [k for k in b.name_keys if not k.startswith("kin:")]
    if a.circle == b.circle:
        for ka in keys_a:
            for kb in keys_b:
                if is_word_prefix(ka, kb) or is_word_prefix(kb, ka):
                    return Match("prefix", 0.8, f"{min(ka, kb, key=len)!r} begins {max(ka, kb, key=len)!r}")
    for ka in keys_a:
        for kb in keys_b:
            part = name_part(ka, kb)
            if part:
                return Match("name_part", 0.7, f"{part!r} is part of {max(ka, kb, key=len)!r}")
    kin = _kin_alias(a, b)
    if kin is not None:
        return kin
    best, pair = _best_pair(keys_a, keys_b, _fuzzy)
    if best >= conf.get("PEOPLE_DEDUP_FUZZY_THRESHOLD"):
        return Match("fuzzy", best, f"{pair[0]!r} ≈ {pair[1]!r}")
    best, pair = _best_pair(keys_a, keys_b, _translit)
    if best >= conf.get("PEOPLE_DEDUP_FUZZY_THRESHOLD"):
        folded = " ≈ ".join(dict.fromkeys(repr(translit.fold(k)) for k in pair))
        return Match("translit", best, f"{pair[0]!r} ≈ {pair[1]!r} in Latin letters ({folded})")
    if cosine is not None and cosine >= conf.get("PEOPLE_DEDUP_EMBEDDING_THRESHOLD") and not _described_together(a, b):
        return Match("embedding", cosine, f"profiles are {cosine:.2f} similar")
    return None


def _described_together(a: Person, b: Person) -> bool:
    """Bios that share a sentence came from one message about both people ("Tom and his wife Maria…"):
    their likeness says nothing about identity."""
    sentences_a = {normalize(s) for s in split_sentences(a.bio)}
    return any(normalize(s) in sentences_a for s in split_sentences(b.bio))


def _diminutive_keys(key: str) -> set[str]:
    """Keys the diminutive rule can match: the first name swapped for its other forms, with the same
    remaining words or none (`маша петрова` → `мария петрова`, `мария`, `маня петрова`, …)."""
    words = key.split()
    if not words:
        return set()
    forms: set[str] = set()
    for full in full_names_of(words[0]):
        forms.add(full)
        forms.update(normalize(f) for f in lexicon.RU_DIMINUTIVES.get(full, ()))
    forms.discard(words[0])
    rest = " ".join(words[1:])
    return forms | ({f"{f} {rest}" for f in forms} if rest else set())


def candidates(person: Person) -> list[tuple[Person, Match]]:
    """Other living people of the same user who may be `person`, each with the first rule that matched.

    Exact keys are looked up on their own, so a user with thousands of people never loses them to
    the cap on the weaker (and broader) candidate queries.
    """
    base = Person.objects.filter(tenant_id=person.tenant_id, user_id=person.user_id,
                                 status=Person.Status.ACTIVE).exclude(pk=person.pk).defer("embedding")
    keys = [k for k in person.name_keys if k]
    exact = Q(name_keys__overlap=keys) if keys else Q(pk__in=[])
    keys = [k for k in keys if not k.startswith("kin:")]
    if person.telegram_id:
        exact |= Q(telegram_id=person.telegram_id)
    if person.username:
        exact |= Q(username=person.username)
    found = {p.pk: p for p in base.filter(exact)[:50]}
    weak = Q(pk__in=[])
    for key in keys:
        words = key.split()
        diminutives = sorted(_diminutive_keys(key))
        weak |= Q(name_key__in=diminutives)
        if len(words) == 1:  # "маша" may be "мария иванова"
            for form in diminutives:
                weak |= Q(name_key__startswith=f"{form} ")
        prefixes = [" ".join(words[:n]) for n in range(1, len(words))]
        weak |= Q(name_key__startswith=f"{key} ") | Q(name_key__in=prefixes)
        if len(words) == 1:  # "петров" may be "сергей петров"
            weak |= Q(name_terms__contains=[key])
        else:  # "сергей петров" may be "петров"
            weak |= Q(name_key=words[-1])
        if len(key) >= 5:
            weak |= Q(name_key__trigram_similar=key)
        # "igor" may be "игорь": people of the other script whose names fold to the same consonants,
        # or to consonants one off ("sergey petrof" ↔ "сергей петров"), which the rule then weighs.
        other_script = [translit.other_script_term(key), *translit.near_query_terms(key)]
        # "masha" may be "мария" and "мария петрова" "Masha Petrova": the other forms of the first name
        # as a person of either script is looked up by.
        for form in diminutives:
            other_script.append(translit.other_script_term(form))
            if translit.has_cyrillic(form) and translit.has_latin(form):  # "мария petrova"
                other_script.append(translit.lookup_term(form))
        other_script = [t for t in other_script if t]
        if other_script:
            weak |= Q(name_terms__overlap=sorted(set(other_script)))
    found.update({p.pk: p for p in base.filter(weak).exclude(pk__in=list(found)).order_by("-mention_count", "pk")
                  [:200]})
    cosines: dict[int, float] = {}
    if person.embedding is not None and np.any(np.asarray(person.embedding)):
        pool = base.filter(embedding__isnull=False)
        for pk, cosine in nearest(pool, person.embedding, 5, namespace_size=pool.count()):
            cosines[pk] = cosine
        missing = [pk for pk, c in cosines.items() if pk not in found
                   and c >= conf.get("PEOPLE_DEDUP_EMBEDDING_THRESHOLD")]
        found.update({p.pk: p for p in base.filter(pk__in=missing)})
    out: list[tuple[Person, Match]] = []
    for other in found.values():
        match = compare(person, other, cosine=cosines.get(other.pk))
        if match is not None:
            out.append((other, match))
    rank = {rule: i for i, rule in enumerate((*EXACT_RULES, *WEAK_RULES))}
    out.sort(key=lambda item: (rank[item[1].rule], -item[1].score, -item[0].mention_count, item[0].pk))
    return out
