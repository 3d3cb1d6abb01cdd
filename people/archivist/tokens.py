"""Shared pieces of the rule-based archivist: message shape, known people, tokens, sentences."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from memoryhub.text import normalize
from people.lexicon import Cue, VerbCue
from people.names import full_names_of, name_key, name_terms, ru_lemma

BIO_MAX_CHARS = 280


class MessageLike(Protocol):
    pk: Any
    role: str
    text: str
    created_at: datetime | None
    meta: dict[str, Any]


@dataclass(frozen=True)
class KnownPerson:
    id: int
    display_name: str
    aliases: tuple[str, ...] = ()
    username: str | None = None
    telegram_id: int | None = None
    # The circle the person is in now: a departure from work ("Tom left the company") moves only a
    # person who is at work with the user (`rules.extract`).
    circle: str | None = None


@dataclass
class Mention:
    name: str
    username: str | None = None
    telegram_id: int | None = None
    circle: str | None = None
    cue: str = ""
    aliases: list[str] = field(default_factory=list)
    sentence: str = ""
    known_id: int | None = None
    # The circle a stated departure from work moves the person to, if they work with the user ("Tom left
    # the company": Other; "Tom moved to another team": Work_Outer), `phrases.departures`.
    left: str = ""
    # The user's partner no more ("Mark and I got divorced", "my ex-husband Mark"): the kin word that named
    # the partner ("Husband", "муж", "老公") is no name of theirs now.
    ex: bool = False
    # Named by the kin word alone ("Sister", "мама", "姐姐"): the user's relative without a name here
    # (`phrases.unnamed_kin`).
    kin_word: bool = False


# --- known people ---------------------------------------------------------------------------------------


class KnownIndex:
    """Resolves a found name to a known person: by its full key, or by a word only one person has."""

    def __init__(self, people: Sequence[KnownPerson]) -> None:
        self.people: dict[int, KnownPerson] = {}
        self.by_key: dict[str, int] = {}
        self.by_word: dict[str, set[int]] = {}
        self.by_username: dict[str, int] = {}
        self.han_names: list[tuple[str, int]] = []
        self.first_names: set[str] = set()  # each known person's first name, as `full_names_of` gives it
        self.add(people)

    def add(self, people: Sequence[KnownPerson]) -> None:
        """Index more people (the names a batch has found so far, `rules.extract`)."""
        for p in people:
            self.people[p.id] = p
            for name in (p.display_name, *p.aliases):
                key = name_key(name)
                if key:
                    self.by_key.setdefault(key, p.id)
                    first = key.partition(" ")[0]
                    self.first_names.update((first, ru_lemma(first)))
                    if re.search("[\u4e00-\u9fff]", key):
                        self.han_names.append((key, p.id))
            for term in name_terms([p.display_name, *p.aliases]):
                if " " not in term and len(term) >= 3:
                    self.by_word.setdefault(term, set()).add(p.id)
            if p.username:
                self.by_username[p.username.lower()] = p.id
        self.han_names.sort(key=lambda item: -len(item[0]))

    def resolve(self, name: str, username: str | None = None) -> KnownPerson | None:
        if username and username in self.by_username:
            return self.people[self.by_username[username]]
        key = name_key(name)
        if key in self.by_key:
            return self.people[self.by_key[key]]
        parts = key.split()
        if len(parts) == 1:
            forms = {parts[0], ru_lemma(parts[0])}
            ids = set().union(*(self.by_word.get(f, set()) for f in forms))
            if len(ids) == 1:
                return self.people[next(iter(ids))]
        return None

    def word_is_known(self, word: str) -> bool:
        norm = normalize(word)
        return bool(self.by_word.get(norm) or self.by_word.get(ru_lemma(norm)))

    def is_known_first_name(self, word: str) -> bool:
        """A form of a known person's first name: "Света" or "Светка" when Светлана is known."""
        return bool(full_names_of(word) & self.first_names)


# --- sentence splitting and tokens ----------------------------------------------------------------------

TOKEN = re.compile(r"@[A-Za-z][A-Za-z0-9_]{2,31}|[^\W\d_]+(?:['’-][^\W\d_]+)*|\d+|[—–]|[^\w\s]")
HAN = re.compile("[\u3400-\u4dbf\u4e00-\u9fff]")
CYR = re.compile("[\u0400-\u052f]")
LAT = re.compile("[A-Za-z\u00c0-\u024f]")


# A question states nothing about the people in it ("what's my sister's name?", "Как зовут мою сестру?",
# "我姐姐叫什么名字？", "我哥哥知道吗"). A statement with a tag question after it still states what it says
# ("My sister Emma is coming, right?", "…, да?", "…，对吧？"), as rag.memories.rules reads them too.
_QUESTION_END = re.compile(r"\?[\s\"'”»)]*$|.吗[\s.]*$")
_TAG_QUESTION = re.compile(r"(?:,|\s[-–—])\s*(?:right|huh|eh|yeah|ok|okay|isn't\s+it|you\s+know|правда|да|ведь"
                           r"|не\s+так\s+ли|верно)\W*$|(?:对吧|是吧|好吗|对不对|是不是)\W*$")


def is_question(sentence: str) -> bool:
    said = normalize(sentence)  # NFKC: "？" is "?" here
    return bool(_QUESTION_END.search(said)) and not _TAG_QUESTION.search(said)


# A question that asks the assistant for help or advice tells of the relative it is for ("Can you help me plan a
# surprise party for my husband?", "Что подарить маме на юбилей?", "帮我给老婆挑个礼物？"): the user has one. It is
# still no bio line of theirs. A question about the relative ("what's my sister's name?", "Did my wife call?")
# tells nothing new.
_ASKS_FOR_HELP = re.compile(
    r"^(?:(?:so|ok|okay|hey|hi|also|and|but)\W+)*(?:(?:can|could|would|will)\s+you\s+(?:please\s+)?"
    r"(?:help|suggest|recommend|give\s+me|think\s+of)|(?:please\s+)?help\s+me|what\s+(?:should|could|can)\s+i"
    r"\s+(?:get|buy|give|gift|make|cook|bake|say|write|tell|do)|how\s+(?:do|can|should)\s+i|any\s+(?:good\s+)?"
    r"(?:ideas?|tips?|advice|suggestions?|recommendations?)\b)"
    r"|^(?:(?:а|ну|слушай|кстати)\W+)*(?:помоги|помогите|подскажи|подскажите|посоветуй|посоветуйте|что\s+(?:мне\s+)?"
    r"(?:подарить|купить|приготовить|сказать|написать)|как\s+(?:мне|лучше))"
    r"|帮我|帮忙|送什么|买什么|有什么(?:好的)?(?:建议|推荐|礼物)|怎么(?:跟|和|对|给|哄|安慰)", re.IGNORECASE)


def asks_for_help(sentence: str) -> bool:
    return bool(_ASKS_FOR_HELP.search(normalize(sentence).strip()))


@dataclass
class Tok:
    # NAME CUE VERB OWN COP PRON POSS PUNCT OF ALIAS NAMED PET OTHER. POSS: "his", "её", "своим", "他的";
    # NAMED: "named", "по имени", "叫"; VERB: a relation verb ("work with", "дружить", "一起工作");
    # PET: an animal word ("dog", "кошку", "猫"), whose name is no person.
    kind: str
    text: str
    mention: Mention | None = None
    cue: Cue | None = None
    verb: VerbCue | None = None
    possessive: bool = False  # "Tom's", "张伟的", and a cue word's "cousin's", "老婆的"
    genitive: bool = False  # a Russian name (or kin word) read in the genitive ("жена Петрова", "отец жены")
    plural: bool = False  # a cue word only readable in the plural ("sisters", "родители"): no one person
    maybe_plural: bool = False  # a cue word with a plural reading ("коллеги", also the genitive singular)
    script: str = ""  # "en", "ru" or "zh": the language an unnamed relative is named in
    tied: bool = False  # set by `phrases.tie`: the cue found the person it describes
    # A Chinese cue found as a substring may end inside a longer word ("老公" in "老公司"): no relative then.
    whole_word: bool = True
