"""The rule-based archivist: people, circles, relations and bios from messages, without an LLM.

Used when `LLM_PROVIDER=off`, and as the fallback when the model's reply cannot be used. Per
sentence it finds names (English: a first-name gazetteer, titles, cue words and speech verbs;
Russian: pymorphy3's Name/Surn/Patr readings, folded to the nominative; Chinese: surname + title,
小/老 + surname, cue + name and jieba's person tags), @usernames and cue words (mom, boss, друг,
同事 …), then ties each cue to a name by the shape of the phrase: "my boss Tom", "Tom, my boss",
"Петров — мой начальник", "我的同事张伟" give a circle; "Tom's wife Maria", "Мария — жена
Петрова", "玛丽是彼得的妻子" give a relation instead. The sentence becomes the bio.

Facts come only from the user's own lines; a line of the bot counts when the user's next line
confirms it ("yes", "да", "对").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from memoryhub.dates import anchor_relative_dates
from memoryhub.text import join_sentences, normalize, split_sentences
from people import lexicon
from people.archivist.chinese import tokens_zh
from people.archivist.employers import (
    en_names_no_one,
    firm_shaped,
    ru_names_no_one,
    ru_work_for_before,
    said_as_people,
)
from people.archivist.phrases import own_before, partner_word, read_phrases
from people.archivist.tokens import (
    BIO_MAX_CHARS,
    CYR,
    HAN,
    LAT,
    TOKEN,
    KnownIndex,
    KnownPerson,
    Mention,
    MessageLike,
    Tok,
    asks_for_help,
    is_question,
)
from people.names import (
    NAME_GRAMMEMES,
    clean_name,
    clean_username,
    en_cue,
    en_verb_cue,
    full_names_of,
    kin_of,
    morph,
    name_key,
    ru_colloquial_name,
    ru_cue,
    ru_lemmas,
    ru_verb_cue,
    title_case,
)
from people.ops import AddOp, Extraction, PersonDraft, RelationDraft

__all__ = ["KnownPerson", "extract", "sentence_mentions", "usable_messages"]

_EN_COP = frozenset({"is", "was", "are", "were", "'s", "be", "being"})
_EN_PRON = frozenset({"he", "she", "they", "him", "her"})
_EN_POSS = frozenset({"his", "their"})  # "her" is a PRON; before a cue word it is read as possessive
_RU_COP = frozenset({"—", "–", "-", "это", "является", "был", "была"})
_RU_PRON = frozenset({"он", "она", "они"})
_RU_POSS = frozenset({"его", "её", "ее", "их"})  # and every form of "свой" (by lemma)
_EN_ALIAS = ("aka", "a.k.a", "alias", "nicknamed")
_RU_ALIAS = frozenset({"он же", "она же", "по прозвищу", "aka"})
_PUNCT_LINK = frozenset({",", ":", "(", ")", "—", "–", "-"})
# Prepositions after which a Russian name is not in the nominative ("с Петровым", "у Маши").
_RU_GOVERNING = frozenset({"с", "со", "у", "к", "ко", "от", "о", "об", "обо", "про", "для", "без", "до", "из",
                           "за", "над", "под", "перед", "при", "между", "по", "через", "ради", "насчет", "насчёт"})
_RU_NOT_NAMES = frozenset({"бог", "господи", "господь", "боже", "спасибо", "привет", "пока", "ладно", "окей",
                           "интернет", "телеграм", "телеграмм", "гугл", "яндекс"})


def _is_cap(word: str) -> bool:
    return word[:1].isupper() and not (len(word) > 1 and word.isupper())


# --- English and Russian ----------------------------------------------------------------------------------


def _raw_tokens(sentence: str) -> list[str]:
    return TOKEN.findall(sentence)


def _ru_name_parses(word: str) -> list[Any]:
    return [p for p in morph().parse(word) if NAME_GRAMMEMES & p.tag.grammemes and p.tag.number != "plur"]


def _ru_is_name(word: str, *, initial: bool, known: KnownIndex, after_cue: bool,
                before_name_part: bool = False) -> bool:
    norm = normalize(word)
    if norm in _RU_NOT_NAMES or len(norm) < 2:
        return False
    if known.word_is_known(word):
        return True
    if initial and known.is_known_first_name(word):
        # "Света нашла работу": a sentence's first word, and the genitive of "свет" more often than a name,
        # but Светлана is the user's wife (a new Света is then proposed to merge with her, as mid-sentence).
        return True
    if ru_colloquial_name(word):
        # "Племянник Егорка", "с другом Вованом", "Катюха, подружка моя": a first name said as friends say it,
        # which the dictionary does not list (it guesses a place for "Егорка" and "Вован").
        return True
    parses = morph().parse(word)
    name_score = sum(p.score for p in parses if NAME_GRAMMEMES & p.tag.grammemes)
    if name_score == 0:
        # Unknown surnames and nicknames after a cue ("мой начальник Сидорчук", "дружбан мой Толян"),
        # which the dictionary cannot tag.
        return after_cue and not initial and not any({"Geox", "Orgn"} & p.tag.grammemes for p in parses)
    if initial:
        return name_score >= 0.5 or before_name_part
    top = parses[0].tag.grammemes
    return not ({"Geox", "Orgn"} & top) or name_score >= 0.3


# The cases a place takes after a preposition of where: "в Питер", "в Питере", "на Кипре", "из Питера".
_RU_PLACE_CASES = {"в": {"accs", "loct", "loc2"}, "во": {"accs", "loct", "loc2"}, "на": {"accs", "loct", "loc2"},
                   "из": {"gent"}, "до": {"gent"}, "под": {"ablt", "accs"}}


def _ru_place_after_preposition(word: str, prev: str, known: KnownIndex) -> bool:
    """"переехать в Питер", "живёт в Софии": a word that can be a place in the case its preposition asks
    for is the place, though it is also a name (Питер, Владимир). A person there takes another form
    ("влюбилась в Питера", "к Питеру"), so those stay names; a person the user already has stays one."""
    cases = _RU_PLACE_CASES.get(prev)
    if not cases or known.word_is_known(word):
        return False
    return any("Geox" in p.tag.grammemes and p.tag.case in cases for p in morph().parse(word))


def _ru_nominative(words: list[str], prefer: str, verb_gender: str | None = None) -> tuple[str, bool]:
    """Fold a Russian name group to the nominative; also say whether a genitive reading exists.

    `prefer`: "nomn" (subject position), "oblique" (after a preposition), "gent" (after a cue, with
    another name before it: "Мария — жена Петрова"), "case:<case>" (an apposition agrees with its cue
    word: "подругу Алину" is accusative, so Алина, not the dative of Алин). A word already read in the
    nominative, or a listed diminutive ("Дениска", which the dictionary only knows as Дениск), is kept
    as written.
    """
    want = prefer[5:] if prefer.startswith("case:") else ("nomn" if prefer == "nomn" else None)
    parses = [_ru_name_parses(w) for w in words]
    gender = None
    for options in parses:
        firsts = [p for p in options if "Name" in p.tag.grammemes]
        if prefer.startswith("case:"):  # the cue word's case decides between readings of two genders
            firsts = [p for p in firsts if p.tag.case == want] or firsts
        if verb_gender and want == "nomn":
            # The verb agrees with its subject: "Дина пришла" is Дина, though the dictionary's likeliest
            # reading is the genitive of Дин ("шутки Вадима" has no such verb, and stays Вадим's).
            firsts = [p for p in firsts if p.tag.case == "nomn" and p.tag.gender == verb_gender] or firsts
        if want != "nomn":
            # Out of the nominative a declining name is likelier than an indeclinable homonym that the
            # dictionary lists first: "у Ани", "у дочки Ани" are Аня's genitive, not the masculine Ани.
            firsts = [p for p in firsts if "Fixd" not in p.tag.grammemes] or firsts
        if firsts and {"masc", "femn"} & firsts[0].tag.grammemes:
            gender = str(firsts[0].tag.gender)
            break
    out: list[str] = []
    genitive = False
    for word, options in zip(words, parses, strict=True):
        if normalize(word) in _DIMINUTIVE_FORMS:
            out.append(title_case(word))  # a nominative diminutive from the table
            continue
        if not options:
            colloquial = ru_colloquial_name(word)
            out.append(title_case(colloquial) if colloquial else _unknown_nominative(word, want))
            continue
        if gender:
            same = [p for p in options if p.tag.gender is None or {gender, "ms-f"} & p.tag.grammemes]
            options = same or options
        nomn = [p for p in options if p.tag.case == "nomn"]
        gent = [p for p in options if p.tag.case == "gent"]
        genitive = genitive or bool(gent)
        agreeing = [p for p in options if want and p.tag.case == want]
        if agreeing:
            chosen = agreeing
        elif prefer == "gent" and gent:
            chosen = gent
        elif prefer == "oblique" and [p for p in options if p.tag.case != "nomn"]:
            chosen = [p for p in options if p.tag.case != "nomn"]
        elif nomn:
            chosen = nomn
        else:
            chosen = options
        # Equal readings ("Косте": Коста or Костя) go to the name in the diminutives table.
        best = max(chosen, key=lambda p: (p.score, bool(full_names_of(p.normal_form))))
        if best.tag.case == "nomn":
            out.append(title_case(word))  # already the nominative ("Палыч" is not "Павлович")
            continue
        inflected = best.inflect({"nomn"})
        out.append(title_case(inflected.word if inflected else best.normal_form))
    return " ".join(out), genitive


_DIMINUTIVE_FORMS = frozenset(normalize(f) for forms in lexicon.RU_DIMINUTIVES.values() for f in forms
                              if CYR.search(f))


def _past_gender(word: str) -> str | None:
    """The gender a Russian past-tense verb shows ("пришла": femn), if the word reads only as one."""
    if not CYR.search(word):
        return None
    parses = morph().parse(word)
    genders = {str(p.tag.gender) for p in parses if p.tag.POS == "VERB" and p.tag.tense == "past" and p.tag.gender}
    return genders.pop() if len(genders) == 1 and parses[0].tag.POS == "VERB" else None


def _ru_object_of_verb(raw: Sequence[str], k: int, reach: int = 4) -> bool:
    """Whether the nearest word before raw[k] that reads first as a verb, within its clause and `reach` words,
    is a transitive one: what governs a name, also after an adverb or a place ("встретила в парке Олесю")."""
    for j in range(k - 1, max(-1, k - 1 - reach), -1):
        if not raw[j][:1].isalnum():
            return False
        parses = morph().parse(raw[j]) if CYR.search(raw[j]) else []
        if parses and parses[0].tag.POS in ("VERB", "INFN"):
            return "tran" in parses[0].tag.grammemes
    return False


def _unknown_nominative(word: str, case: str | None) -> str:
    """A name the dictionary does not know ("Вованом"): read as a noun in the case its cue word is in."""
    if case and case != "nomn":
        nouns = [p for p in morph().parse(word) if p.tag.POS == "NOUN" and p.tag.case == case
                 and p.tag.number != "plur"]
        if nouns:
            best = max(nouns, key=lambda p: ("anim" in p.tag.grammemes, p.score))
            inflected = best.inflect({"nomn"})
            return title_case(inflected.word if inflected else best.normal_form)
    return title_case(word)


_CONTRACTION = re.compile(r"['’](?:re|m|ve|ll|d|t)$")


def _en_is_name(tokens: list[str], i: int, *, initial: bool, known: KnownIndex, after_cue: bool,
                after_title: bool, after_name: bool) -> bool:
    word = tokens[i]
    base = word[:-2] if word.endswith(("'s", "’s")) else word
    low = normalize(base)
    if not _is_cap(base) and after_cue and base.isalpha() and base.islower() and \
            low in lexicon.EN_COMMON_FIRST_NAMES and low not in lexicon.EN_AMBIGUOUS_NAMES:
        return True  # typed in lower case, as chat often is: "my coworker dana", "my bf jake"
    if not _is_cap(base) or low in lexicon.EN_TITLES or _CONTRACTION.search(low):
        return False  # "We're married!": a contraction is nobody's name
    if known.word_is_known(base):
        return True
    if low in lexicon.EN_NON_NAMES:
        return after_title
    nxt = normalize(tokens[i + 1]) if i + 1 < len(tokens) else ""
    verb_follows = nxt in lexicon.EN_PERSON_VERBS or (base != word and nxt in lexicon.EN_PERSON_EVENTS)
    # "Grace and I finished the marathon": who does something with the user is someone.
    verb_follows = verb_follows or (base == word and nxt == "and" and i + 2 < len(tokens)
                                    and tokens[i + 2] in ("I", "me"))
    if low in lexicon.EN_FIRST_NAMES:
        if low in lexicon.EN_AMBIGUOUS_NAMES and initial:
            return verb_follows or after_cue
        return True
    if after_title or after_cue or after_name:
        return True
    return verb_follows


_EN_LOCATIVE = frozenset({"in", "near", "outside", "around"})
_EN_MOTION = frozenset({"move", "moved", "moving", "moves", "fly", "flew", "flying", "flies", "drive", "drove",
                        "driving", "relocate", "relocated", "relocating", "trip", "travel", "traveled", "travelled",
                        "traveling", "travelling", "flight", "headed", "heading", "return", "returned", "returning"})


def _drop_en_place_names(raw: list[str], norms: list[str], is_name: list[bool], known: KnownIndex) -> None:
    """Unmark an English name run that names a place or an institution: "a nurse at St Mary hospital",
    "Lincoln High School", "Mount Pleasant". A possessive names the person ("Tom's school"), and a person
    the user already has stays one."""
    k = 0
    while k < len(raw):
        if not (is_name[k] and LAT.search(raw[k])):
            k += 1
            continue
        end = k + 1
        while end < len(raw) and is_name[end] and LAT.search(raw[end]):
            end += 1
        before = k - 2 if k >= 2 and raw[k - 1] == "." else k - 1
        prefixed = before >= 0 and norms[before].rstrip(".") in lexicon.EN_PLACE_PREFIXES
        # "a conference in Austin", "moved to Austin": where, not who (Austin is a first name too), unless
        # the run owns something ("in Austin's car").
        prefixed = prefixed or (k > 0 and not raw[end - 1].endswith(("'s", "’s")) and (
            norms[k - 1] in _EN_LOCATIVE or (k > 1 and norms[k - 1] == "to" and norms[k - 2] in _EN_MOTION)))
        # The place noun may be capitalised and so inside the run ("Grace Church", "Victoria Station").
        nouns = [j for j in range(k + 1, min(end + 1, len(raw))) if norms[j] in lexicon.EN_PLACE_NOUNS and not (
            j < end and norms[j] in lexicon.EN_PLACE_NOUNS_ALSO_SURNAMES)]
        followed = bool(nouns) and not raw[nouns[0] - 1].endswith(("'s", "’s"))
        # A work the run stands before: "the new Wes Anderson movie" (no one the user knows).
        followed = followed or (end < len(raw) and norms[end] in lexicon.EN_WORK_NOUNS and
                                not raw[end - 1].endswith(("'s", "’s")))
        if (prefixed or followed) and not any(known.word_is_known(w) for w in raw[k:end]):
            for j in range(k, end):
                is_name[j] = False
        k = end


# Parts of speech that end the look back from a workplace's preposition to its work word: another verb
# governs what follows ("работаю и влюблена в Петю").
_RU_VERB_POS = frozenset({"VERB", "INFN", "PRTS", "PRTF", "GRND", "ADJS"})


def _ru_work_word_before(norms: list[str], j: int) -> bool:
    """A work word ("работаю", "устроилась", "стажировка") among the three words before position j, with
    no other verb or punctuation between: "работаю в", "работаю сейчас в", "работаю с Машей в"."""
    for i in range(j - 1, max(-1, j - 4), -1):
        if not CYR.search(norms[i]):
            return False
        lemmas = ru_lemmas(norms[i])[:2]
        if any(lemma in lexicon.RU_WORK_WORDS for lemma in lemmas):
            return True
        if any(p.tag.POS in _RU_VERB_POS for p in morph().parse(norms[i])[:1]):
            return False
    return False


def _workplace(raw: list[str], norms: list[str], k: int, end: int, noun_cue: set[int], known: KnownIndex,
               persons: frozenset[str]) -> int:
    """How many words of the name run raw[k:end] name a workplace, not a person: all of it after a work
    word ("работаю в Тинькофф", "ушла из Авито", "I work at Stripe", "a job in Globex") or an organisation
    noun ("в компании Тинькофф"), its first word after a cue word ("мой начальник в Тинькофф — Петров",
    "коллега из Тинькофф Петров"). A name in a person's form is left ("в компании Маши" is in her company,
    a genitive). After "work for" and "работаю на", which take a person as well as a company, the name's
    shape decides (`archivist.employers`)."""
    if k == 0:
        return 0
    j = k - 1
    while j > 0 and raw[j] in ("«", '"', "“", "'"):
        j -= 1  # "в компании «Тинькофф»"
    prev = norms[j]
    if LAT.search(raw[k]) and j > 0 and prev == "for" and norms[j - 1] in lexicon.EN_WORK_WORDS:
        return len(raw) if en_names_no_one(raw, k, end, known, persons) else 0
    if raw[k].endswith(("'s", "’s")):
        return 0  # "I work at Tom's": Tom's place, and Tom
    if CYR.search(raw[k]):
        if prev == "на" and ru_work_for_before(norms, j):
            return len(raw) if ru_names_no_one(raw[k], known) else 0
        if prev in lexicon.RU_WORK_PREPOSITIONS:
            if _ru_work_word_before(norms, j):
                return len(raw)
            return 1 if j - 1 in noun_cue else 0
        if CYR.search(prev) and any(lemma in lexicon.RU_ORG_NOUNS for lemma in ru_lemmas(prev)[:2]) and \
                not any("Name" in p.tag.grammemes and p.tag.case == "gent" for p in _ru_name_parses(raw[k])):
            return len(raw)
        return 0
    if LAT.search(raw[k]) and j > 0 and prev in lexicon.EN_WORK_PREPOSITIONS and norms[j - 1] in lexicon.EN_WORK_WORDS:
        return len(raw)
    return 0


def _drop_workplaces(raw: list[str], norms: list[str], is_name: list[bool], noun_cue: set[int],
                     known: KnownIndex, persons: frozenset[str]) -> None:
    """Unmark the names that name a workplace (`_workplace`): a company after "работаю в" took the
    relation verb's circle and became a person of the user's inner circle."""
    k = 0
    while k < len(raw):
        if not is_name[k]:
            k += 1
            continue
        end = k + 1
        while end < len(raw) and is_name[end]:
            end += 1
        for j in range(k, min(end, k + _workplace(raw, norms, k, end, noun_cue, known, persons))):
            is_name[j] = False
        k = end


def _alias_after(tokens: list[str], i: int) -> bool:
    return normalize(tokens[i]).rstrip(".") in _EN_ALIAS


def _name_is_after(raw: list[str], norms: list[str], k: int) -> int:
    """How many words at k say "name is" after a possessive cue word, or 0: "my sister's name is Emma",
    "my dad's name's Viktor". The name they give is who the cue is, as in "my sister Emma"; the cue owns
    no one there, so its "'s" is no possessive."""
    if not (0 < k < len(raw) and LAT.search(raw[k - 1]) and raw[k - 1].endswith(("'s", "’s"))):
        return 0
    if norms[k] == "name's":
        return 1
    return 2 if k + 1 < len(raw) and norms[k] == "name" and norms[k + 1] in ("is", "was") else 0


def _cue_tok(raw: list[str], norms: list[str], k: int, span: int, cue: lexicon.Cue | lexicon.VerbCue) -> Tok:
    text = " ".join(raw[k:k + span])
    script = "ru" if CYR.search(text) else "en"
    if isinstance(cue, lexicon.VerbCue):
        return Tok("VERB", text, verb=cue, script=script)
    tok = Tok("CUE", text, cue=cue, script=script, possessive=raw[k + span - 1].endswith(("'s", "’s")))
    if script == "en":
        words = " ".join(norms[k:k + span])
        words = words[:-2] if tok.possessive else words
        # "sisters", "best friends": not a listed phrase, but a listed phrase's plural; "parents" is listed.
        tok.plural = tok.maybe_plural = (words.endswith("s") and words not in {w.lower() for w in cue.en}) or \
            words in lexicon.EN_PLURAL_CUE_WORDS
    elif span == 1:
        words = {normalize(w) for w in cue.ru}
        readings = [p for p in morph().parse(raw[k]) if normalize(p.normal_form) in words] or morph().parse(raw[k])
        numbers = {p.tag.number for p in readings}
        tok.plural, tok.maybe_plural = numbers == {"plur"}, "plur" in numbers
        tok.genitive = any(p.tag.case == "gent" and p.tag.number == "sing" for p in readings)
    return tok


# What joins the names of a list after a cue word: "my sisters Amy, Beth and Jo", "Дима, а также Коля".
_LIST_JOINS = frozenset({",", "and", "и", "а", "также"})
_COLLEAGUE = next(cue for cue in lexicon.CUES if cue.concept == "role:colleague")


def _en_partner(norms: list[str], i: int, hit: tuple[lexicon.Cue, int] | None) -> tuple[lexicon.Cue, int] | None:
    """"partner" is the user's life partner ("my partner Daniel", "Daniel is my partner") unless it is a
    business's: "our partner Globex", "partners" are no cue, "my partner at the firm" is a colleague."""
    if hit is None or hit[0].concept != "kin:partner" or hit[1] != 1:
        return hit
    word = norms[i][:-2] if norms[i].endswith(("'s", "’s")) else norms[i]
    if word not in ("partner", "partners"):
        return hit
    if word == "partners" or (i > 0 and norms[i - 1] in lexicon.EN_PARTNER_NOT_KIN_BEFORE):
        return None
    if i + 1 < len(norms) and norms[i + 1] in lexicon.EN_PARTNER_AT_WORK_AFTER:
        return _COLLEAGUE, 1
    return hit


def _cue_before(k: int, raw: list[str], norms: list[str], noun_cue: set[int]) -> bool:
    """A cue word ends right before token k: "друг Вася", "друг, Вася", "дружбан мой Толян",
    "соседка по даче Нина"."""
    j = k - 1
    if j >= 0 and raw[j] == ",":
        j -= 1
    while j >= 0 and (norms[j] in lexicon.RU_OWN or norms[j] in lexicon.EN_OWN):
        j -= 1
    if j >= 2 and norms[j - 1] in ("по", "из") and j - 2 in noun_cue:
        j -= 2  # the cue's complement sits between: "соседка по даче Нина"
    return j in noun_cue


def _pet_span(raw: list[str], norms: list[str], k: int, first_word: int) -> int:
    """How many tokens from k make a pet word ("dog", "guinea pig", "кошку"), or 0. Capitalised it is a
    name ("Kitty called"; Russian only inside a sentence: "Кошку зовут Муся"); before a noun that makes it
    a trade or a taste ("my dog walker Anna", "a cat person") it is no pet."""
    word = raw[k]
    if LAT.search(word):
        # English capitalises a pet word only as a name, even first ("Kitty called").
        if _is_cap(word):
            return 0
        base = norms[k][:-2] if norms[k].endswith("'s") else norms[k]
        if k + 1 < len(raw) and f"{base} {norms[k + 1]}" in lexicon.EN_PET_PHRASES:
            return 2
        if base not in lexicon.EN_PETS:
            return 0
        return 0 if k + 1 < len(raw) and norms[k + 1] in lexicon.EN_PET_COMPOUND_NOUNS else 1
    if _is_cap(word) and k != first_word:
        return 0
    if CYR.search(word):
        # Nouns only: "кот" is also a rare name, but "Кот" mid-sentence is already a name above.
        return 1 if any(p.tag.POS == "NOUN" and normalize(p.normal_form) in lexicon.RU_PETS
                        for p in morph().parse(word)) else 0
    return 0


def _pet_tok(raw: list[str], norms: list[str], k: int, span: int) -> Tok:
    text = " ".join(raw[k:k + span])
    tok = Tok("PET", text, script="ru" if CYR.search(text) else "en",
              possessive=raw[k + span - 1].endswith(("'s", "’s")))
    if tok.script == "en":
        words = " ".join(norms[k:k + span])
        tok.plural = words in lexicon.EN_PLURAL_PETS or (span > 1 and words.endswith("s"))
    else:
        # "кошки" is also the genitive singular; the names after it are listed all the same ("мои кошки
        # Муся и Маша"), since a pet's name is no person whichever reading is right.
        tok.plural = "plur" in {p.tag.number for p in morph().parse(raw[k]) if p.tag.POS == "NOUN"}
    return tok


_SURNAME_TITLES = lexicon.EN_SURNAME_TITLES


def _title_before(raw: list[str], norms: list[str], k: int) -> str:
    """The title said right before the English name at k, as it is written with a surname, or ''."""
    if k > 1 and raw[k - 1] == "." and norms[k - 2] in _SURNAME_TITLES:
        return _SURNAME_TITLES[norms[k - 2]]
    if k > 0 and LAT.search(raw[k]) and norms[k - 1].rstrip(".") in _SURNAME_TITLES:
        return _SURNAME_TITLES[norms[k - 1].rstrip(".")]
    if k > 0 and _clergy_title(raw, norms, k - 1):
        return raw[k - 1]
    return ""


def _two_first_names(word: str, after: str) -> bool:
    """Two Russian first names in a row are two people, not one's name and surname: "Жених Ани Дима" (Anya's
    fiancé Dima) was a person named "Ани Дима". A surname or patronymic reading of the second joins them
    ("Сергей Петров", "Анна Сергеевна")."""
    if not (CYR.search(word) and CYR.search(after)):
        return False
    second = {g for p in morph().parse(after) for g in p.tag.grammemes}
    return "Name" in second and not second & {"Surn", "Patr"} and \
        any("Name" in p.tag.grammemes for p in morph().parse(word))


# A possessive adjective made of a first name: "Анин жених" (Anya's fiancé), "Машина мама", "Димины родители".
_RU_POSSESSIVE_ENDINGS = ("иного", "иному", "иной", "ином", "иным", "иных", "ину", "ина", "ино", "ины", "ин")


def _ru_possessive_of(word: str, cue_word: str, cue: lexicon.Cue, said: Sequence[str]) -> str | None:
    """The first name a possessive adjective is made of ("Анин" → Аня, "Димины" → Дима), or None. pymorphy has no
    reliable reading of these: it gives "Анин" as a man's name. A stem may make two names ("Ленин": Лена or Лёня):
    one said before in the conversation wins, then one of the other sex than a partner word's ("Ленин муж" is
    Лена's), then the dictionary's likelier."""
    ending = next((e for e in _RU_POSSESSIVE_ENDINGS if word.endswith(e) and len(word) > len(e) + 1), None)
    if ending is None:
        return None
    readings: list[tuple[float, str, str | None]] = []
    for name in (word[:-len(ending)] + "я", word[:-len(ending)] + "а"):
        parses = [p for p in morph().parse(name) if "Name" in p.tag.grammemes and p.tag.case == "nomn"]
        if parses and morph().word_is_known(name):
            readings.append((max(p.score for p in parses), name, parses[0].tag.gender))
    if not readings:
        return None
    partner_of = {p.tag.gender for p in morph().parse(cue_word) if p.tag.POS == "NOUN"} \
        if cue.relation in ("spouse", "partner") else set()
    readings.sort(key=lambda r: (r[1] not in said, r[2] in partner_of, -r[0]))
    return readings[0][1]


_OWNERS = lexicon.EN_OWN | _EN_POSS | {"her", "your"}  # whose kin word it is


def _clergy_title(raw: list[str], norms: list[str], i: int) -> bool:
    """"Father Declan", "Sister Mary Agnes": a capitalised kin word before a capitalised name, owned by no one, is a
    title of a priest, nun or monk ("my Father Tom", "Sister Anna" opening "Sister Anna is…" after "my" stay kin)."""
    return norms[i] in lexicon.EN_CLERGY_TITLES and raw[i][:1].isupper() and i + 1 < len(raw) and \
        raw[i + 1][:1].isupper() and raw[i + 1].isalpha() and not (i > 0 and norms[i - 1] in _OWNERS)


def _tokens_en_ru(sentence: str, known: KnownIndex, persons: frozenset[str] = frozenset(),
                  said: Sequence[str] = ()) -> list[Tok]:
    raw = _raw_tokens(sentence)
    norms = [normalize(t) for t in raw]
    # Cue spans first: a cue word is never a name ("Мама сказала"). Then relation verbs ("работаем").
    cue_at: dict[int, tuple[lexicon.Cue | lexicon.VerbCue, int]] = {}
    i = 0
    while i < len(raw):
        hit: tuple[lexicon.Cue | lexicon.VerbCue, int] | None = None
        if CYR.search(raw[i]):
            hit = ru_cue(norms, i) or ru_verb_cue(norms, i)
        elif LAT.search(raw[i]):
            # "friends with" is a verb phrase before "friends" is a noun.
            verb = en_verb_cue(norms, i)
            hit = (verb if verb and verb[1] > 1 else None) or _en_partner(norms, i, en_cue(norms, i)) or verb
            if hit and _clergy_title(raw, norms, i):
                hit = None  # "Our pastor, Father Declan": how a priest is called, no one's father
        if hit:
            cue_at[i] = hit
            i += hit[1]
        else:
            i += 1
    in_cue = {k for start, (_, span) in cue_at.items() for k in range(start, start + span)}
    noun_cue = {start + span - 1 for start, (cue, span) in cue_at.items() if isinstance(cue, lexicon.Cue)}
    cue_end = {start + span - 1 for start, (_, span) in cue_at.items()}
    name_is = {start: n for start, (cue, span) in cue_at.items()
               if isinstance(cue, lexicon.Cue) and (n := _name_is_after(raw, norms, start + span))}
    named = {start + cue_at[start][1] + n for start, n in name_is.items()}  # where the cue's stated name stands

    first_word = next((k for k, t in enumerate(raw) if t[:1].isalnum() or t.startswith("@")), 0)
    # Pet words next: an animal word is never a name either ("Кот" opening a sentence).
    pet_at: dict[int, int] = {}
    i = 0
    while i < len(raw):
        span = 0 if i in in_cue else _pet_span(raw, norms, i, first_word)
        if span:
            pet_at[i] = span
        i += span or 1
    in_pet = {k for start, span in pet_at.items() for k in range(start, start + span)}
    # "Дима, Анин жених": the name whose the cue word after it is, as "Amy's fiancé" (it was a person "Анин").
    owner_of_cue = {start - 1: name for start, (cue, _) in cue_at.items()
                    if isinstance(cue, lexicon.Cue) and start > 0 and start - 1 not in in_cue | in_pet
                    and CYR.search(raw[start - 1]) and _is_cap(raw[start - 1])
                    and (name := _ru_possessive_of(raw[start - 1], norms[start], cue, said))}
    is_name = [False] * len(raw)
    cued: set[int] = set()  # names a cue word stands before, and the names listed after them
    for k, token in enumerate(raw):
        if k in in_cue or k in in_pet or k in owner_of_cue or token.startswith("@") or not token[:1].isalpha():
            continue
        initial = k == first_word or (k > 0 and raw[k - 1] in {"«", '"', "“", ":"})
        after_cue = k - 1 in noun_cue or (k >= 2 and k - 2 in noun_cue and raw[k - 1] == ",") or (
            # "My mentor at work, Oluwaseun": a short phrase of where between the cue word and the name
            raw[k - 1] == "," and any(j in noun_cue and norms[j + 1] in lexicon.WHERE_PREPOSITIONS
                                      for j in range(max(0, k - 5), k - 2)))
        joined = k - 1
        while joined >= max(0, k - 3) and norms[joined] in _LIST_JOINS:
            joined -= 1
        # "my sisters Amy, Beth and Jo"; "my dad's name is Viktor"
        after_cue = after_cue or (joined < k - 1 and joined in cued) or k in named
        if CYR.search(token):
            if _is_cap(token) and k > 0 and _ru_place_after_preposition(token, norms[k - 1], known):
                continue
            if _is_cap(token):
                before_name_part = k + 1 < len(raw) and _is_cap(raw[k + 1]) and any(
                    {"Patr", "Surn"} & p.tag.grammemes for p in morph().parse(raw[k + 1]))
                is_name[k] = _ru_is_name(token, initial=initial, known=known, before_name_part=before_name_part,
                                         after_cue=after_cue or _cue_before(k, raw, norms, noun_cue))
        elif LAT.search(token):
            if _clergy_title(raw, norms, k):
                continue  # "Father" of "Father Declan" is his title, as "Dr." is
            prev = norms[k - 1].rstrip(".") if k > 0 else ""
            after_title = prev in lexicon.EN_TITLES or (k > 1 and raw[k - 1] == "." and norms[k - 2] in
                                                         lexicon.EN_TITLES)
            after_title = after_title or (k > 0 and _clergy_title(raw, norms, k - 1))
            after_name = k > 0 and is_name[k - 1] and not raw[k - 1].endswith(("'s", "’s"))
            # Joined to a name: "Tom and Ann came over" (Ann, in no list of first names, was no one).
            after_name = after_name or (k > 1 and norms[k - 1] in ("and", "&") and is_name[k - 2]
                                        and not raw[k - 2].endswith(("'s", "’s")))
            # After a relation verb too: "I'm married to Jonas", "I report to Priya"; after what one has with a
            # person only: "a long call with Tariq" (a firm's shape is no one's: "drinks with PayPal folks").
            after_cue = after_cue or k - 1 in cue_end or (
                k >= 2 and norms[k - 1] == "with" and norms[k - 2] in lexicon.EN_TIME_WITH and
                not firm_shaped(raw[k]))
            is_name[k] = _en_is_name(raw, k, initial=initial, known=known, after_cue=after_cue,
                                     after_title=after_title, after_name=after_name)
        if is_name[k] and (after_cue or k - 1 in cued):
            cued.add(k)

    _drop_en_place_names(raw, norms, is_name, known)
    _drop_workplaces(raw, norms, is_name, noun_cue, known, persons)

    toks: list[Tok] = []
    k = 0
    while k < len(raw):
        token, norm = raw[k], norms[k]
        if k in cue_at:
            cue, span = cue_at[k]
            toks.append(_cue_tok(raw, norms, k, span, cue))
            stated = name_is.get(k, 0)
            k += span
            if k < len(raw) and raw[k] in ("'", "’") and raw[k - 1].endswith("s") and LAT.search(raw[k - 1]):
                toks[-1].possessive = True  # "my parents' neighbours": the parents own the next cue
                k += 1
            if stated:
                toks[-1].possessive, toks[-1].text = False, toks[-1].text[:-2]
                toks.append(Tok("NAMED", " ".join(raw[k:k + stated])))
                k += stated
            continue
        if k in pet_at:
            toks.append(_pet_tok(raw, norms, k, pet_at[k]))
            k += pet_at[k]
            continue
        if k in owner_of_cue:
            toks.append(Tok("NAME", owner_of_cue[k], mention=Mention(name=owner_of_cue[k]), possessive=True,
                            script="ru"))
            k += 1
            continue
        if token.startswith("@"):
            username = clean_username(token)
            if username and toks and toks[-1].kind == "NAME" and toks[-1].mention and not toks[-1].mention.username:
                toks[-1].mention.username = username
            elif username and len(toks) >= 2 and toks[-1].text == "(" and toks[-2].kind == "NAME" and \
                    toks[-2].mention and not toks[-2].mention.username:
                toks[-2].mention.username = username
                toks.pop()  # the "(" opened the username aside
            elif username:
                toks.append(Tok("NAME", token, mention=Mention(name=username, username=username)))
            k += 1
            continue
        if is_name[k]:
            end = k + 1
            while end < len(raw) and (is_name[end] or (
                    normalize(raw[end]) in lexicon.EN_NAME_PARTICLES and end + 1 < len(raw) and is_name[end + 1])):
                if raw[end - 1].endswith(("'s", "’s")) or _two_first_names(raw[end - 1], raw[end]):
                    break
                end += 1
            group = raw[k:end]
            possessive = group[-1].endswith(("'s", "’s"))
            if possessive:
                group = [*group[:-1], group[-1][:-2]]
            genitive = False
            if any(CYR.search(w) for w in group):
                prev = norms[k - 1] if k > 0 else ""
                prefer = "nomn"
                # "Жених Ани Дима": a name between a cue word and another name is whose the cue is.
                owner_between = toks and toks[-1].kind == "CUE" and end < len(raw) and is_name[end] and \
                    _two_first_names(raw[end - 1], raw[end])
                if prev in _RU_GOVERNING:
                    prefer = "oblique"
                elif _ru_object_of_verb(raw, k) and not (toks and toks[-1].kind == "CUE") and any(
                        p.tag.case == "accs" for p in _ru_name_parses(group[0])):
                    # The object of "видела", "позвал": "видела Дину", "встретила в парке Олесю" are Дина's and
                    # Олеся's accusatives, not the datives of Дин and Олесь the dictionary ranks first; a name with
                    # no accusative reading stays the subject ("сказала Маша").
                    prefer = "case:accs"
                elif toks and toks[-1].kind == "CUE" and not own_before(toks, len(toks) - 1) and (
                        owner_between or any(t.kind == "NAME" for t in toks[:-1])):
                    prefer = "gent"
                elif toks and toks[-1].kind == "CUE" and CYR.search(toks[-1].text):
                    # An apposition agrees with its noun: "другу Косте" is dative, so Костя, not Коста.
                    # One name after the cue: its singular reading ("у дочки Ани" is not "daughters").
                    readings = morph().parse(toks[-1].text.split()[0])
                    case = ([p for p in readings if p.tag.number == "sing"] or readings)[0].tag.case
                    prefer = f"case:{case}" if case else "nomn"
                name, genitive = _ru_nominative(group, prefer, _past_gender(raw[end]) if end < len(raw) else None)
                # "Мама Пети", "Дети Наташи": a name that cannot agree with the cue word before it, and
                # reads as a genitive, is whose the cue is, not who.
                genitive = genitive and (prefer == "gent" or (
                    prefer.startswith("case:") and prefer != "case:gent" and
                    not any(p.tag.case == prefer[5:] for p in _ru_name_parses(group[0]))))
            else:
                # A name typed in lower case ("my coworker dana") is shown as a name is written.
                lower = all(w.isalpha() and w.islower() for w in group)  # not "Ana de Armas"
                name = " ".join(w.capitalize() if lower else w for w in group)
            mention = Mention(name=clean_name(name))
            if title := _title_before(raw, norms, k):
                # "Dr. Green", "Mrs. Patel": how the user calls them, and what a question will say.
                mention.aliases.append(f"{title} {clean_name(group[-1])}")
            toks.append(Tok("NAME", name, mention=mention, possessive=possessive,
                             genitive=genitive, script="ru" if CYR.search(name) else "en"))
            k = end
            continue
        if norm in lexicon.EN_OWN or norm in lexicon.RU_OWN:
            kind = "OWN"
        elif norm in ("меня", "нас") and toks and normalize(toks[-1].text) == "у":
            toks.pop()  # "у меня муж", "у нас шеф": the user's own
            kind = "OWN"
        elif norm in _EN_COP or norm in _RU_COP or token in {"—", "–"}:
            kind = "COP"
        elif norm in _EN_PRON or norm in _RU_PRON:
            kind = "PRON"
        elif norm in _EN_POSS or norm in _RU_POSS or (CYR.search(norm) and ru_lemmas(norm)[:1] == ("свой",)):
            kind = "POSS"
        elif norm == "of":
            kind = "OF"
        elif norm in ("named", "зовут") or (norm == "по" and k + 1 < len(raw) and norms[k + 1] == "имени"):
            kind = "NAMED"
            k += 1 if norm == "по" else 0
        elif _alias_after(raw, k) or (k + 1 < len(raw) and f"{norm} {norms[k + 1]}" in _RU_ALIAS):
            kind = "ALIAS"
            if k + 1 < len(raw) and f"{norm} {norms[k + 1]}" in _RU_ALIAS:
                k += 1
        elif norm in {"also"} and k + 2 < len(raw) and norms[k + 1] == "known" and norms[k + 2] == "as":
            kind = "ALIAS"
            k += 2
        elif token in _PUNCT_LINK or not token[:1].isalnum():
            kind = "PUNCT"
        else:
            kind = "OTHER"
        toks.append(Tok(kind, token))
        k += 1
    return toks


# --- messages → people ---------------------------------------------------------------------------------


# E-mail addresses and links name no one: "anna@example.com" is not a mention of @example, nor
# "medium.com/@jake" of @jake. They are blanked before the tokenizers see the sentence.
# ASCII classes, not \w: Chinese has no spaces, and "张伟的邮箱是zw@qq.com" must keep 张伟.
_ADDRESSES = re.compile(
    r"[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"  # e-mail
    r"|(?<![A-Za-z0-9.-])(?:https?://|www\.)[^\s，。！？、]+"  # link with a scheme
    r"|(?<![A-Za-z0-9.-])[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/[^\s，。！？、]*",  # domain/path
    re.IGNORECASE)


# How the user introduces themself: the name after it is theirs, no person they know ("Привет! Я Дина, работаю
# бухгалтером" made a person of Дина, and the service's check against the profile's name missed her as "Дин").
_SELF_NAMED = (("меня", "зовут"), ("my", "name", "is"), ("我", "叫"), ("我", "的", "名字", "是"), ("我", "名字", "叫"))
# "Я Дина", "I'm Sam", "我是王芳" only where the name ends the phrase: "Я Маше позвонила", "我是王芳的朋友" are not.
_SELF_IS = (("я",), ("i'm",), ("i’m",), ("i", "am"), ("我", "是"))
_SELF_ENDS = frozenset({"из", "from", "and", "и", "here", "тут", "здесь"})


def _without_self(toks: list[Tok]) -> list[Tok]:
    """The tokens with the name the user introduces themself by, at the start of a sentence or clause, read as
    no name."""
    out = list(toks)
    for k, tok in enumerate(toks):
        if tok.kind != "NAME" or tok.possessive:
            continue
        for phrases, open_end in ((_SELF_NAMED, True), (_SELF_IS, False)):
            for phrase in phrases:
                start = k - len(phrase)
                if start < 0 or tuple(normalize(t.text) for t in toks[start:k]) != phrase:
                    continue
                if start > 0 and toks[start - 1].kind != "PUNCT":
                    continue
                after = toks[k + 1] if k + 1 < len(toks) else None
                if open_end or after is None or after.kind == "PUNCT" or normalize(after.text) in _SELF_ENDS:
                    out[k] = Tok("OTHER", tok.text, script=tok.script)
    return out


def sentence_mentions(sentence: str, known: KnownIndex, context: Sequence[Mention] = (), *, confirmed: bool = False,
                      persons: frozenset[str] = frozenset(), seen: KnownIndex | None = None
                      ) -> tuple[list[Mention], list[RelationDraft]]:
    """People and relations of one sentence. `context`: the people of the message's earlier
    sentences, whom "her" or "его" may stand for ("I saw Dana. Her husband Mike …"). `confirmed`: a bot
    line the user said yes to, which states what it asks ("Your sister is Emma?" "Yes"). `persons`: the
    words the conversation calls "he" or "she" (`employers.said_as_people`), a person after "work for". `seen`:
    the names to read the sentence with, the known people's and those the batch named before it (`extract`);
    a name resolves to a known person by `known` alone."""
    scan = _ADDRESSES.sub(" ", sentence)
    names = seen or known
    if HAN.search(scan):
        said = [m.name for m in context if m.name and not m.kin_word and HAN.search(m.name) and len(m.name) >= 2]
        toks = tokens_zh(scan, names, latin=lambda phrase: _tokens_en_ru(phrase, names, persons), said=said)
    else:
        toks = _tokens_en_ru(scan, names, persons, said=[m.name for m in context if m.name])
    toks, relations = read_phrases(_without_self(toks), context)
    mentions = [t.mention for t in toks if t.kind == "NAME" and t.mention and t.mention.name]
    # A question states nothing ("what's my sister's name?", "Did Anna call?"): who it names counts a
    # mention, but it is no bio line, and a relative it names only by the kin word is no one new.
    question = is_question(sentence) and not confirmed
    for m in mentions:
        resolved = known.resolve(m.name, m.username)
        if resolved is not None:
            m.known_id = resolved.id
            # A surname alone becomes the known full name; a new name next to a known username stays,
            # so the services can rename a bare "@jake_r" to "Jake Ross".
            if not (m.username and m.username == resolved.username and m.name != m.username):
                m.name = resolved.display_name
        m.sentence = "" if question else sentence
    # The family of the user's family is family (`phrases._family_of_family`), where the owner's circle was said in
    # an earlier sentence or batch: "My sister Amy is getting married. Josh, Amy's fiancé, is a chef." ("her
    # fiancé" found Amy of the sentence before, with her circle; "Amy's" is this sentence's Amy, without it).
    for a, b, cue, _ in relations:
        if cue.circle == "Family" and not a.circle and "Family" in (
                b.circle, _known_circle(known, b), *(m.circle for m in context if m.name == b.name)):
            a.circle, a.cue = "Family", cue.concept
    unknown_kin = [m for m in mentions if question and m.kin_word and not m.known_id and not asks_for_help(sentence)]
    mentions = [m for m in mentions if not any(m is k for k in unknown_kin)]
    drafts = [RelationDraft(subject=a.name, object=b.name, kind=cue.relation, label=label)
              for a, b, cue, label in relations if a.name and b.name and a.name != b.name and
              not any(x is k for x in (a, b) for k in unknown_kin)]
    return mentions, drafts


def usable_messages(messages: Sequence[MessageLike]) -> list[MessageLike]:
    """The user's lines, plus a bot line the user's next line confirms."""
    out: list[MessageLike] = []
    for i, msg in enumerate(messages):
        if msg.role == "user":
            out.append(msg)
        elif msg.role == "assistant" and i + 1 < len(messages) and messages[i + 1].role == "user":
            reply = normalize(messages[i + 1].text)
            first = re.split(r"[\s,.!?，。！？]+", reply, maxsplit=1)[0] if reply else ""
            if first in lexicon.CONFIRMATIONS or reply[:2] in lexicon.CONFIRMATIONS or reply[:1] in ("对", "是"):
                out.append(msg)
    return out


def _bio_sentence(sentence: str, name: str, said_at: datetime | None = None) -> str:
    """The sentence as a bio line, unless it says nothing beyond the name; a relative date in it
    ("неделю назад") followed by the dates it meant when the message was sent."""
    rest = sentence.replace(name, " ")
    if HAN.search(sentence):
        if len(re.sub(r"\W", "", rest)) < 4:
            return ""
    elif len(re.findall(r"\w+", rest)) < 2:
        return ""
    text = anchor_relative_dates(" ".join(sentence.split()), said_at)
    return text if len(text) <= BIO_MAX_CHARS else text[: BIO_MAX_CHARS - 1].rstrip() + "…"


def _meta_mentions(msg: MessageLike) -> Iterable[Mention]:
    """Telegram-style mention entities a client sends in `meta.mentions`: name, username, telegram_id."""
    entries = (msg.meta or {}).get("mentions") if isinstance(msg.meta, dict) else None
    for entry in entries if isinstance(entries, list) else []:
        if not isinstance(entry, dict):
            continue
        username = clean_username(entry.get("username"))
        raw_id = entry.get("telegram_id") or entry.get("user_id")
        telegram_id = int(raw_id) if isinstance(raw_id, int | str) and str(raw_id).isdigit() else None
        name = clean_name(entry.get("name")) or username or ""
        if name:
            yield Mention(name=name, username=username, telegram_id=telegram_id)


_AT_WORK = frozenset({"Work_Inner", "Work_Outer"})
_FAMILY = "Family"


def _known_circle(known: KnownIndex, mention: Mention) -> str | None:
    person = known.people.get(mention.known_id) if mention.known_id else None
    return person.circle if person else None


def _kin_kept(circle: str | None, new: str) -> bool:
    """Kin is who someone is: a work role said of a relative ("My sister Anna … She is my manager now", "Анна
    теперь мой начальник", "她现在是我的经理") is what she does, and leaves her in Family, in this batch or
    from an earlier one (`phrases.tie` ranks the cues of one sentence alike). A break-up or a departure is no
    work role: an ex leaves Family (`role:ex`). An editor's circle is locked in the services either way."""
    return circle == _FAMILY and new in _AT_WORK


_SUBJECT_PRONOUNS = frozenset({"he", "she", "он", "она"})
_ZH_SUBJECT_PRONOUN = re.compile(r"^[他她](?![们人])")


# Two names joined ("Tom and Ann came over"): a "she" after it is one of two, though the rules knew only one.
_TWO_NAMES = re.compile(r"(?:\b(?:and|or)|(?<!\w)(?:и|или))\s+[A-ZА-ЯЁ][a-zа-яё]")

# A birth told without the child's name ("Сестра родила дочку!", "My sister had a baby girl!", "我姐姐生了个女儿！"),
# and the sentence right after it that names the child ("Назвали Соней", "They named her Mia", "取名叫朵朵").
_BIRTH = re.compile(r"(?:\b(?:had|welcomed) (?:a |her |their )?(?:baby|son|daughter|girl|boy|twins)|gave birth"
                    r"|(?<!\w)родил[аи]?(?!\w)|生了)", re.IGNORECASE)
_CHILD_NAMED = re.compile(r"^\W*(?:(?:they|we|she|he) named (?:her|him|the baby) (?-i:[A-Z])"
                          r"|(?:her|his|the baby'?s) name is (?-i:[A-Z])"
                          r"|(?:(?:её|ее|его|малышку|малыша)\s+)?назвали(?:\s+(?:её|ее|его))?\s+(?-i:[А-ЯЁ])"
                          r"|(?:取名|起名|名字)叫?)", re.IGNORECASE)


# The user's own birth: "У меня родилась дочка!", "I had a baby girl!", "我生了个女儿！".
_OWN_BIRTH = re.compile(r"(?:\b(?:i|we) (?:just )?(?:had|gave birth to|welcomed) (?:a |our )?"
                        r"(?:baby|son|daughter|girl|boy|twins)"
                        r"|(?<!\w)у (?:меня|нас) родил(?:ся|ась|ись)|^\W*(?:я )?родила(?!\w)|我(?:刚|刚刚)?生了)",
                        re.IGNORECASE)
_USER = Mention(name="")  # the user as the parent of a newborn (`_named_newborn`)


def _named_newborn(sentence: str, mentions: list[Mention], parent: Mention | None) -> Mention | None:
    """The child of a birth the sentence before told without a name, named by this one: the child of its
    parent ("Сестра родила дочку! Назвали Соней": Соня is the sister's, and Family as the sister is); the
    user's own child is Family ("У меня родилась дочка! Назвали Соней")."""
    if parent is None or not _CHILD_NAMED.search(sentence):
        return None
    named = [m for m in mentions if m.name != parent.name and not m.kin_word]
    if len(named) != 1:
        return None
    child = named[0]
    if (parent is _USER or parent.circle == "Family") and not child.circle:
        child.circle, child.cue = "Family", "kin:child"
    return child


def _unnamed_children(mentions: Sequence[Mention]) -> list[Mention]:
    """The user's children a birth sentence names by the kin word alone ("У меня родилась дочь!")."""
    return [m for m in mentions if m.kin_word and (kin := kin_of(m.name)) is not None and kin.concept == "kin:child"]


def _drop_mentions(mentions: Sequence[Mention], found: list[Mention], drafts: dict[str, PersonDraft],
                   order: list[str], message: int | None) -> None:
    """Forget `mentions`: from this message's `found`, or, said in the user's message before, from the drafts
    that message alone made."""
    for m in mentions:
        if any(f is m for f in found):
            found[:] = [f for f in found if f is not m]
            continue
        key = name_key(clean_name(m.name))
        draft = drafts.get(key)
        if draft is not None and not m.known_id and set(draft.message_ids) <= {message}:
            del drafts[key]
            order.remove(key)


def _about_them(sentence: str) -> bool:
    """A statement whose subject is "he" or "she" ("She is a doctor.", "Он работает врачом.", "她是医生。"),
    the one person of the sentence before being who it is about."""
    if is_question(sentence):
        return False
    stripped = sentence.lstrip(" \"'«“(")
    if _ZH_SUBJECT_PRONOUN.match(stripped):
        return True
    first = normalize(stripped.split(maxsplit=1)[0]) if stripped.strip() else ""
    return first.split("'")[0].split("’")[0].rstrip(",") in _SUBJECT_PRONOUNS


def extract(messages: Sequence[MessageLike], known_people: Sequence[KnownPerson] = ()) -> Extraction:
    """Added operations (one per person found) and relations from a batch of messages.

    Identity is resolved later, in the services: an Added person whose name is already known
    updates that person.
    """
    known = KnownIndex(known_people)
    drafts: dict[str, PersonDraft] = {}
    order: list[str] = []
    relations: list[RelationDraft] = []
    dropped: list[str] = []
    usable = usable_messages(messages)
    persons = said_as_people([s for msg in usable for s in split_sentences(_ADDRESSES.sub(" ", msg.text or ""))])
    last: list[Mention] = []  # the people of the sentence before, a user's message's last one included
    before = ""
    # The people of the user's message before: a chat splits one thought over messages ("My wife Laura is a
    # teacher." / "Tom, her brother, is visiting us"), and "her" of the second is Laura.
    previous: list[Mention] = []
    # The names the batch has found so far read the later sentences as known names do: "…with my girlfriend
    # Tasha" then "Tasha's a pediatric nurse" (a capitalised first word in no list of first names was no one).
    seen_names = {p.display_name for p in known_people}
    seen: KnownIndex | None = None
    # Whose unnamed child a birth told of, for the next sentence that names it, in the user's next message too
    # ("У меня родилась дочь!" / "Назвали Алисой."); and the kin word the user's own newborn had till then.
    parent: Mention | None = None
    unnamed: list[Mention] = []
    birth_message: int | None = None
    for msg in usable:
        at = msg.created_at
        found: list[Mention] = list(_meta_mentions(msg))
        said: list[Mention] = []  # this message's people so far, for the pronouns of its next sentences
        if msg.role != "user":
            last, previous, parent = [], [], None
        for sentence in split_sentences(msg.text or ""):
            mentions, rels = sentence_mentions(sentence, known, said or previous, confirmed=msg.role != "user",
                                               persons=persons, seen=seen)
            if not mentions and not rels and len({m.name for m in last}) == 1 and _about_them(sentence) \
                    and not _TWO_NAMES.search(before):
                # "I had lunch with my friend Alex. She is a doctor at the children's hospital.": the sentence
                # after the one that named a single person, opening with "she", says what Alex is.
                mentions = [Mention(name=last[-1].name, username=last[-1].username, known_id=last[-1].known_id,
                                    sentence=sentence)]
            if (newborn := _named_newborn(sentence, mentions, parent)) is not None:
                if parent is _USER:
                    # The daughter of "У меня родилась дочь!" is Алиса now: one person, not two.
                    _drop_mentions(unnamed, found, drafts, order, birth_message)
                else:
                    relations.append(RelationDraft(subject=newborn.name, object=parent.name, kind="child", label=""))
            found.extend(mentions)
            said.extend(mentions)
            relations.extend(rels)
            parent = _USER if _OWN_BIRTH.search(sentence) else mentions[0] if len(mentions) == 1 and \
                _BIRTH.search(sentence) and not any(m.circle == "Family" and m.cue == "kin:child" for m in mentions) \
                else None
            unnamed, birth_message = (_unnamed_children(mentions), msg.pk) if parent is _USER else ([], None)
            last, before = mentions, sentence
        if msg.role == "user":
            previous = said
        new_names = sorted({clean_name(m.name) for m in found if m.name and not m.known_id and not m.kin_word
                            and not m.username} - seen_names - {""})
        if new_names:
            # Ids below zero: a name the batch found is no known person to resolve to.
            seen = seen or KnownIndex(known_people)
            seen.add([KnownPerson(id=-(len(seen_names) + i + 1), display_name=name)
                      for i, name in enumerate(new_names)])
            seen_names.update(new_names)
        for m in found:
            display = clean_name(m.name)
            if not display:
                dropped.append("a mention without a name")
                continue
            key = f"known:{m.known_id}" if m.known_id else (f"@{m.username}" if m.username else name_key(display))
            draft = drafts.get(key)
            if draft is None:
                draft = drafts[key] = PersonDraft(display_name=display, username=m.username,
                                                  telegram_id=m.telegram_id, first_seen=at)
                order.append(key)
            if m.username and not draft.username:
                draft.username = m.username
            if m.telegram_id and not draft.telegram_id:
                draft.telegram_id = m.telegram_id
            if m.circle and not _kin_kept(draft.circle or _known_circle(known, m), m.circle):
                draft.circle = m.circle  # the last stated circle wins
            if m.left and (draft.circle or _known_circle(known, m)) in _AT_WORK:
                # "Tom left the company": out of the user's work, if he was in it ("my friend Tom quit his
                # job" changes nothing between them); the bio keeps the sentence.
                draft.circle = m.left
            if m.ex:
                draft.aliases = [a for a in draft.aliases if not partner_word(a)]
            for alias in m.aliases:
                if alias and name_key(alias) not in {name_key(a) for a in draft.aliases}:
                    draft.aliases.append(clean_name(alias))
            bio = _bio_sentence(m.sentence, m.name, at) if m.sentence else ""
            if bio and bio not in draft.bio:
                draft.bio = join_sentences([draft.bio, bio])
            if msg.pk is not None and msg.pk not in draft.message_ids:
                draft.message_ids.append(msg.pk)
            draft.last_seen = at
    ops = [AddOp(person=drafts[key]) for key in order]
    return Extraction(ops=list(ops), relations=relations, dropped=dropped, source="rules")
