"""Whose d20 rolls a statement speaks of, for `lore_assert`.

"Attack rolls against the creature have advantage, and the creature's attack rolls have disadvantage"
names both members of the advantage pair in one sentence, so the word checks of `tools.assertion` find
the statement's word whichever it is and call "A blinded creature has advantage on attack rolls"
supported. What decides is the side: the creature's own rolls, or the rolls made against it.

Each clause that gives a roll (an attack, a saving throw, an ability check) a polarity (advantage or
disadvantage, an automatic success or failure, can or can't attack) is read as a `Roll`: its kind, the
polarity and the side, own or against. The side is read from a few patterns only, in English and
Russian, and is None where none applies ("The charmer has advantage…", "Otherwise, the attack roll has
disadvantage" after a sentence of no readable side): such a clause never decides, it only keeps a
contradiction from being called. Chinese has no pattern yet (the bundled SRD has no Chinese text): it
reads as nothing, and the word checks decide as before.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from memoryhub.morph import analyzer as morph
from memoryhub.text import term, words
from tools import contrast

OWN, AGAINST = "own", "against"

# Who a rule speaks of when it does not name the entry: "the creature", "it", "you" (the SRD's player).
# English as written; Russian by lemma ("существу", "нему"). Not "target": a spell's target is not the
# spell, and "броски атаки по целям" are the creature's own rolls at others.
SUBJECT_EN = frozenset({"creature", "creatures", "it", "they", "them", "you", "he", "she", "him", "her"})
POSSESSIVE_EN = frozenset({"its", "their", "your", "his", "her"})
SUBJECT_RU = frozenset({"существо", "он", "оно", "она", "они", "вы", "ты"})
POSSESSIVE_RU = frozenset({"его", "её", "ее", "их", "ваш", "твой", "свой"})
# Verbs that follow a subject which rolls itself: "A blinded creature has…", "Существо совершает…".
HOLDER_EN = frozenset({"has", "have", "had", "gets", "get", "gains", "gain", "makes", "make", "attacks", "attack",
                       "rolls", "roll", "can", "can't", "cannot", "automatically", "fails", "fail", "succeeds",
                       "succeed", "always", "suffers", "suffer"})
HOLDER_RU = frozenset({"совершать", "иметь", "получать", "атаковать", "бросать", "делать", "мочь", "автоматически",
                       "проваливать", "преуспевать", "обладать", "не"})
ARTICLES_EN = frozenset({"the", "a", "an", "any", "each", "every"})
MODALS_EN = frozenset({"can", "can't", "cannot", "could", "couldn't", "may", "might", "must", "to", "not", "will",
                       "won't", "would", "never"})
OTHER = frozenset({"other", "another", "другой", "иной"})
AUTOMATIC = frozenset({"automatically", "always", "автоматически", "всегда"})
# Words before "creature" that do not say which one: "the creature", "all creatures", "самого существа".
UNNAMING = frozenset({"all", "сам", "весь", "любой", "каждый"})
NEGATIONS = frozenset({"not", "no", "never", "without", "не", "нет", "никогда", "без", "ни"})
# "Otherwise, the attack roll has disadvantage": the side of the clause before.
OTHERWISE = ("otherwise", "в противном случае", "иначе")
# Clauses: a sentence's parts joined by a comma and a conjunction, or a semicolon. Not a bare comma: "has
# advantage if the attacker is within 5 feet of the creature" is one clause however it is punctuated.
CLAUSE = re.compile(r"\s*(?:;|,\s*(?=(?:and|but|while|whereas|а|но|и|однако)\b))\s*", re.IGNORECASE)
WINDOW = 3  # words between "against" / "по" and the creature it names ("against a blinded creature")


@dataclass(frozen=True)
class Roll:
    """One clause's word on a kind of roll."""

    kind: str  # "attack", "save", "check"
    cls: str  # the polarity's class: contrast's "roll" and "outcome", or "ability" (can / can't attack)
    member: str  # "advantage", "failure", "cannot"…
    side: str | None  # OWN, AGAINST or unread
    word: str  # the polarity word as written
    clause: str  # the sentence it was read from
    named: str = ""  # the title's word for who rolls ("baboon"), where not "the creature", "it" or "you"
    specific: bool = False  # the clause says which creature ("a blinded creature"), not only "the creature"


@functools.lru_cache(maxsize=16_384)
def _lemma(word: str) -> tuple[str, str]:
    """A Russian word's likeliest lemma and part of speech; ("", "") for other scripts."""
    if not any("\u0400" <= ch <= "\u04ff" for ch in word):
        return "", ""
    parse = morph().parse(word)[0]
    return parse.normal_form.replace("ё", "е"), str(parse.tag.POS or "")


def _kind(words_: list[str], i: int) -> str | None:
    word = words_[i]
    lemma, pos = _lemma(word)
    if lemma:
        if word.startswith("спасброс"):
            return "save"
        if lemma == "проверка":
            return "check"
        # "атакующий" is the attacker, not an attack.
        if lemma in ("атака", "атаковать") and pos not in ("PRTF", "PRTS"):
            return "attack"
        return None
    stem = term(word)
    if stem == "attack" and not word.startswith("attacker"):
        return "attack"
    if stem == "save" or (word == "throws" and i and words_[i - 1] == "saving"):
        return "save"
    if stem == "check":
        return "check"
    return None


def _attack_verb(words_: list[str], i: int) -> bool:
    """Whether word `i` is "attack" as a verb: after a modal ("can't attack the charmed creature") in English,
    where "a melee weapon attack, a creature that…" is the noun; by its part of speech in Russian."""
    if i + 1 < len(words_) and _kind(words_, i + 1):
        return False  # "attack rolls"
    lemma, pos = _lemma(words_[i])
    if lemma:
        return lemma == "атаковать" and pos in ("VERB", "INFN")
    return words_[i] in ("attack", "attacks") and i > 0 and words_[i - 1] in MODALS_EN


def _is_subject(word: str, title: frozenset[str]) -> bool:
    lemma, _ = _lemma(word)
    if lemma:
        return lemma in SUBJECT_RU or term(word) in title
    base = word[:-2] if word.endswith("'s") else word
    return base in SUBJECT_EN or (bool(term(base)) and term(base) in title)


def _side(words_: list[str], title: frozenset[str]) -> tuple[str | None, bool, str, int | None]:
    """The clause's side for an attack; whether a subject holds the clause's rolls (the side of its saves
    and checks, which are never made against anyone); the title's word that names the holder, if one
    does ("The baboon has…": "baboon"; "The creature has…": ""); and the word the side was read from."""
    n = len(words_)
    lemmas = [_lemma(w)[0] for w in words_]
    subject = [_is_subject(w, title) for w in words_]
    generic = [w in SUBJECT_EN or lemma in SUBJECT_RU for w, lemma in zip(words_, lemmas, strict=True)]
    # A word of the title, not a roll's ("Making an Attack").
    titled = [bool(t := term(w)) and t in title and not _kind(words_, i) for i, w in enumerate(words_)]
    for i in range(1, n):
        if words_[i - 1] in OTHER or lemmas[i - 1] in OTHER:  # "other creatures have disadvantage…"
            subject[i] = generic[i] = titled[i] = False

    def named(i: int) -> str:
        return term(words_[i].removesuffix("'s")) if titled[i] and not generic[i] else ""

    # Who rolls: the word before the clause's first verb of rolling ("A blinded creature has…", "The shark
    # has…", "Существо совершает…"), and whether it is the subject.
    actor = next((i for i in range(n - 1) if (words_[i + 1] in HOLDER_EN or lemmas[i + 1] in HOLDER_RU)
                  and term(words_[i]) and not _kind(words_, i) and words_[i] not in MODALS_EN), None)
    holder = actor if actor is not None and subject[actor] else None

    # Rolls made against the creature: the word naming it.
    target: int | None = None
    for i, word in enumerate(words_):
        # "against the creature", "по ослеплённому существу". A word for the creature itself, not only the
        # title's: "you have disadvantage on attack rolls against demons" is Demon Armor's wearer attacking.
        if word in ("against", "по", "против"):
            target = next((k for k in range(i + 1, min(n, i + 1 + WINDOW)) if generic[k]), None)
        # "is attacked", "Ослеплённое существо атакуют" (a plural verb: the creature is its object).
        elif word == "attacked" and i > 1 and words_[i - 1] in ("is", "are", "was", "be", "been", "being") and (
                subject[i - 2]):
            target = i - 2
        elif word == "атакуют" and "существо" in words_ and "существа" not in words_:
            target = words_.index("существо")
        # "can't attack the charmed creature", "атаковать существо"; not "attack the charmer".
        elif _attack_verb(words_, i):
            k = i + 1
            while k < n and (words_[k] in ARTICLES_EN or titled[k]):
                k += 1
            target = k if k < n and generic[k] else None
        if target is not None:
            break
    if target is not None:
        # "You have advantage on attack rolls against a blinded creature": the one named is the subject.
        # "The baboon has advantage on an attack roll against a creature if…": the entry's own subject, by
        # name, attacks someone else. "The shark has advantage … against any creature" where the shark is
        # not the entry's: whose side is not read.
        if any(titled[max(0, target - WINDOW):target + 1]) or actor is None or generic[actor]:
            return AGAINST, False, "", target
        if holder is not None:
            return OWN, True, named(holder), holder
        return None, False, "", None

    for i, word in enumerate(words_):
        nxt = words_[i + 1] if i + 1 < n else ""
        # "the creature's attack rolls", "its attack rolls", "его броски атаки".
        if word.endswith("'s") and subject[i] and nxt and _kind(words_, i + 1):
            return OWN, True, named(i), i
        if (word in POSSESSIVE_EN or lemmas[i] in POSSESSIVE_RU or word in POSSESSIVE_RU) and nxt and (
                _kind(words_, i + 1) or nxt == "own" or lemmas[i + 1] == "бросок"):
            return OWN, True, "", i
        # "броски атаки самого существа", "Броски атаки ослеплённого существа": no "по" between.
        if lemmas[i] == "атака":
            k = i + 1
            while k < n and k <= i + WINDOW and not generic[k] and _lemma(words_[k])[1] in ("ADJF", "PRTF", "ADJS"):
                k += 1
            if k < n and subject[k]:
                return OWN, True, named(k), k
    if holder is None:
        return None, False, "", None
    return OWN, True, named(holder), holder


Polarity = tuple[str, str, str]  # (class, member, word)


def _polarities(words_: list[str]) -> list[Polarity]:
    """(class, member, word) of the clause's polarity words, a negated one left out ("doesn't have
    advantage" says nothing of disadvantage)."""
    out = []
    for i, word in enumerate(words_):
        nxt = words_[i + 1] if i + 1 < len(words_) else ""
        attack_next = bool(nxt) and (term(nxt) == "attack" or _lemma(nxt)[0] == "атаковать")
        if word in ("can't", "cannot") and attack_next:
            out.append(("ability", "cannot", word))
            continue
        if word == "can" and attack_next:
            out.append(("ability", "can", word))
            continue
        if _lemma(word)[0] == "мочь" and attack_next:
            negated = i > 0 and words_[i - 1] == "не"
            out.append(("ability", "cannot" if negated else "can", f"не {word}" if negated else word))
            continue
        before = words_[max(0, i - WINDOW):i]
        if any(w in NEGATIONS or w.endswith("n't") for w in before):
            continue
        for cls, member in contrast.senses(word):
            # A success or failure is a rule only when automatic: "on a failed save", "a successful save
            # means…", "if a creature fails its saving throw" say what follows one, not that it happens.
            if cls == "roll" or (cls == "outcome" and any(
                    w in AUTOMATIC for w in words_[max(0, i - WINDOW):i + 1 + WINDOW])):
                out.append((cls, member, word))
    return out


# What a clause hands the next of its sentence: its polarities, side, whether a subject holds the rolls,
# the holder's title word and whether the clause says which creature.
Carried = tuple[list[Polarity], str | None, bool, str, bool]


def _clause_rolls(clause: str, sentence: str, title: frozenset[str], previous: dict[str, str | None],
                  carried: Carried) -> tuple[list[Roll], Carried]:
    """The clause's rolls, and what the next clause of its sentence takes when it names rolls only: "has
    advantage on Strength saving throws, and on Dexterity checks"."""
    found = words(clause)
    kinds = {k for i in range(len(found)) if (k := _kind(found, i))}
    polarities = _polarities(found)
    side, holds, named, at = _side(found, title)
    # Whether the clause says which creature: a word of the title, or one before the word the side was read
    # from ("a blinded creature", "ослеплённого существа"; not "the creature", "самого существа").
    specific = any(term(w) in title for i, w in enumerate(found) if term(w) and not _kind(found, i)) or (
        at is not None and at > 0 and bool(term(found[at - 1])) and found[at - 1] not in SUBJECT_EN
        and _lemma(found[at - 1])[0] not in SUBJECT_RU | UNNAMING and found[at - 1] not in UNNAMING)
    if kinds and not polarities and carried[0] and side is None and not holds:
        # A list going on ("…, ability checks, and saving throws"), not a clause of its own ("…, and it
        # can't make more than one attack").
        polarities, side, holds, named, specific = carried
    if not kinds or not polarities:
        return [], (polarities, side, holds, named, specific)
    inherit = re.sub(r"^\W+", "", clause).lower().startswith(OTHERWISE)
    out = []
    for cls in sorted({c for c, _, _ in polarities}):
        members = {(m, w) for c, m, w in polarities if c == cls}
        if len({m for m, _ in members}) != 1:
            continue  # both members in one clause: which goes with which is not read
        member, word = min(members)
        for kind in sorted(kinds):
            kind_side = side if kind == "attack" else OWN if holds else None
            if kind_side is None and inherit:
                kind_side = previous.get(kind)
            out.append(Roll(kind, cls, member, kind_side, word, sentence, named if kind_side == OWN else "",
                            specific))
    return out, (polarities, side, holds, named, specific)


def read(sentences: list[str], title: frozenset[str]) -> list[Roll]:
    """The rolls `sentences` (a statement's, or an entry's in order) speak of, clause by clause. `title`:
    the index terms of the entry's title, which stand for its subject ("A goblin has advantage…" in
    Monsters/goblin, "A blinded creature…" in Conditions/blinded)."""
    out: list[Roll] = []
    previous: dict[str, str | None] = {}
    for sentence in sentences:
        carried: Carried = ([], None, False, "", False)
        for clause in CLAUSE.split(sentence):
            if not clause.strip():
                continue
            rolls, carried = _clause_rolls(clause, sentence.strip(), title, previous, carried)
            for roll in rolls:
                previous[roll.kind] = roll.side
            out.extend(rolls)
    return out


@dataclass(frozen=True)
class Finding:
    verdict: str  # "contradicted", "unknown" (the entry speaks only of another side or kind) or "agreed"
    claim: Roll
    source: Roll


def compare(claim: list[Roll], entry: list[Roll]) -> list[Finding]:
    """Each of the statement's readable rolls against the entry's rolls of the same kind and class: agreed
    where the entry gives the same polarity on the same side; contradicted where, on that side, it gives
    only the other; unknown where it speaks only of the other side, or of that class only for other kinds
    of roll. A clause of the entry whose side is unread and that gives the statement's polarity might be
    the very rule: then nothing is decided."""
    findings = []
    for said in claim:
        # A holder named by the title is the entry's subject only where the entry names it so too: "Air
        # elementals have…" in Ring of Air Elemental Command, whose "you" is the wearer, are not.
        # "The creature automatically fails…" names no creature: whichever entry the search put first, the
        # statement is not about it.
        if said.side is None or not said.specific or (said.named and not any(r.named == said.named
                                                                             for r in entry)):
            continue
        pool = [r for r in entry if r.kind == said.kind and r.cls == said.cls]
        same = [r for r in pool if r.side == said.side]
        maybe = any(r.side is None and r.member == said.member for r in pool)
        agreeing = [r for r in same if r.member == said.member]
        if agreeing and len(same) > len(agreeing):
            # Both on one side, each under its own condition ("The kobold has advantage … if at least one of
            # its allies is within 5 ft", "While in sunlight, the kobold has disadvantage on attack rolls"):
            # which the statement means is for the word checks to find.
            continue
        if agreeing:
            findings.append(Finding("agreed", said, agreeing[0]))
        elif same and not maybe:
            findings.append(Finding("contradicted", said, same[0]))
        elif not same and not maybe and (other := [r for r in pool if r.side is not None]):
            findings.append(Finding("unknown", said, other[0]))
        elif not pool and (other := [r for r in entry if r.cls == said.cls]):
            # "Attack rolls against a paralyzed creature automatically fail": the entry's automatic failures
            # are saving throws.
            findings.append(Finding("unknown", said, other[0]))
    return findings


def describe(roll: Roll) -> str:
    """Whose rolls, in words for a hint: "attack rolls against the creature", "the creature's own saving throws"."""
    kind = {"attack": "attacks" if roll.cls == "ability" else "attack rolls", "save": "saving throws",
            "check": "ability checks"}[roll.kind]
    return f"{kind} against the creature" if roll.side == AGAINST else f"the creature's own {kind}"
