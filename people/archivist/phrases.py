"""Phrase shapes of the rule-based archivist: which name a cue word belongs to, relations, aliases,
and the user's relatives who have no name.

Works on the typed tokens both tokenisers produce (NAME, CUE, VERB, OWN, COP, PRON, POSS, PUNCT,
OF, ALIAS, NAMED, PET, OTHER): "my boss Tom" and "Tom, my boss" give Tom a circle; "Tom's wife Maria",
"Мария — жена Петрова", "Lisa and Tom, her husband" and "玛丽是彼得的妻子" give a relation instead;
"мы с Лёшей дружим" and "I report to Priya" give a circle by the verb; "Maria aka Masha" an alias.
`read_phrases` runs it all, drops the names of pets ("my dog Rex", "我的猫叫米饭"), and turns the user's
own relative without a name ("my mom", "мама", "我老婆的妹妹") into a person named by the kin word.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Sequence

from memoryhub.text import normalize
from people import lexicon
from people.archivist.tokens import CYR, HAN, Mention, Tok
from people.names import kin_name, kin_of, morph, ru_lemma, ru_lemmas, search_words, strip_possessive

Relation = tuple[Mention, Mention, lexicon.Cue, str]

_FAMILY = "Family"
_OTHER = "Other"
_WORK = frozenset({"Work_Inner", "Work_Outer"})
# The user themself in a sentence: a verb of relation ("work with") needs them to take part.
_FIRST_PERSON = frozenset({"i", "me", "we", "us", "i'm", "i’m", "я", "мы", "меня", "мне", "мной", "нас", "нам",
                           "нами", "我", "我们", "咱们"})
_AND = frozenset({"and", "и", "和", "跟", "与", "同"})
# Russian "Лена с мужем": a relative after "NAME с" is that person's, for these kinds of kin.
_COMITATIVE = frozenset({"kin:spouse", "kin:partner", "kin:child", "kin:mother", "kin:father", "kin:parents"})
# Words before a kin word that make it nobody's in particular ("какой-то дед", "this guy's mom").
_NOT_MINE = frozenset({"какой-то", "какая-то", "какого-то", "какой-нибудь", "один", "одна", "этот", "эта", "тот",
                       "та", "чей-то", "чья-то", "чужой", "чужая", "некий", "некая", "a", "an", "the", "some", "this",
                       "that", "your", "这个", "那个", "一个", "别人", "人家", "你", "你的"})
# English kin words that name the user's own parent even without "my" ("Mom says hi", "Called Dad").
_EN_NAME_LIKE = frozenset({"mother", "father", "grandmother", "grandfather"})
_STOPS = frozenset({".", "!", "?", "。", "！", "？", ";", "；"})
# Prepositions opening a Russian cue word's complement ("соседка по даче", "друг из Казани").
_RU_COMPLEMENT = frozenset({"по", "из"})
_DASHES = frozenset({"—", "–", "-"})


def own_before(toks: list[Tok], c: int) -> bool:
    """An OWN word ("my", "мой", "我的") before position c, with at most two plain words between."""
    for others, j in enumerate(range(c - 1, max(-1, c - 4), -1)):
        kind = toks[j].kind
        if kind == "OWN":
            return True
        if kind != "OTHER" or others >= 2:
            return False
    return False


def own_after(toks: list[Tok], c: int) -> bool:
    """"братишка мой", "начальница наша", "руководитель нашего проекта": an OWN word right after the
    cue, unless it opens another cue the first one belongs to ("отец моей жены")."""
    if c + 1 >= len(toks) or toks[c + 1].kind != "OWN":
        return False
    return not (c + 2 < len(toks) and toks[c + 2].kind == "CUE")


# English head nouns a cue word may qualify before the name: "The vendor rep, Angela Moss".
_CUE_HEADS = frozenset({"rep", "representative", "contact", "guy", "lady"})


# Russian kin words said before an older person's name as a form of address: "тётя Валя", "дядя Миша".
_RU_ADDRESS_KIN = frozenset({"тётя", "тетя", "дядя"})


def _address_word(tok: Tok) -> bool:
    return tok.kind == "CUE" and tok.script == "ru" and ru_lemma(normalize(tok.text)) in _RU_ADDRESS_KIN


def _where_phrase_end(toks: list[Tok], j: int) -> int | None:
    """The comma after a short phrase of where the cue's person is, right after the cue word, when a name follows
    it ("at work, Oluwaseun", "from college, Ana", "на работе, Олег"); else None."""
    if not (j < len(toks) and toks[j].kind == "OTHER" and normalize(toks[j].text) in lexicon.WHERE_PREPOSITIONS):
        return None
    for end in range(j + 1, min(j + 4, len(toks) - 1)):
        if toks[end].kind == "PUNCT" and toks[end].text == ",":
            return end if toks[end + 1].kind == "NAME" and not toks[end + 1].possessive else None
        if toks[end].kind not in ("OTHER", "OWN"):
            return None
    return None


def _name_after(toks: list[Tok], c: int, skip: int | None = None) -> int | None:
    j = c + 1
    if j < len(toks) and toks[j].kind == "OTHER" and normalize(toks[j].text) in _CUE_HEADS:
        j += 1
    if j < len(toks) and toks[j].kind == "OWN" and CYR.search(toks[j].text):
        j += 1  # "дружбан мой Толян", "сестра моя, Леночка"
    if j + 2 < len(toks) and toks[j].kind == "OTHER" and normalize(toks[j].text) in _RU_COMPLEMENT and \
            toks[j + 1].kind == "OTHER":
        j += 2  # the cue's complement: "соседка по даче Нина", "коллега по работе, Сеня"
    if j == skip:
        j += 1  # the possessor between: "Дети Наташи, Миша и Соня"
    if (end := _where_phrase_end(toks, j)) is not None:
        j = end  # "My mentor at work, Oluwaseun", "my friend from college, Ana": where the cue is, then the name
    if j < len(toks) and toks[j].kind == "PUNCT" and toks[j].text in {",", "，", ":", "：", "(", "（"}:
        j += 1
    elif j < len(toks) and toks[j].kind == "COP" and toks[j].text in _DASHES:
        j += 1  # "Начальница — Ольга Викторовна", "Мама - Людмила Петровна": the dash names who the cue is
    elif j + 1 < len(toks) and toks[j].kind == "COP" and toks[j + 1].kind == "NAME" and \
            not toks[j + 1].possessive and not toks[j + 1].genitive:
        # "my boss is Kate Lee", "我的新经理是李娜": the name the copula gives is who the cue is, not a name
        # before it ("王强离职了，我的新经理是李娜" is no new role of 王强's). "My boss is Tom's brother" is not Tom.
        j += 1
    if j == skip:
        j += 1
    if j + 1 < len(toks) and _address_word(toks[j]) and toks[j + 1].kind == "NAME":
        j += 1  # "Соседка по даче, тётя Валя": how the neighbour is called, not whose aunt she is
    if j < len(toks) and toks[j].kind == "OTHER" and normalize(toks[j].text).rstrip(".") in lexicon.EN_SURNAME_TITLES:
        # a title written before the surname is no word between cue and name: "The client, Mrs. Whitfield"
        j += 2 if j + 1 < len(toks) and toks[j + 1].text == "." else 1
    elif j + 1 < len(toks) and toks[j].kind == "OTHER" and toks[j].text[:1].isupper() and \
            normalize(toks[j].text) in lexicon.EN_CLERGY_TITLES and toks[j + 1].kind == "NAME":
        j += 1  # "Our pastor, Father Declan"
    if j + 1 < len(toks) and toks[j].kind == "PUNCT" and toks[j].text in "，," and toks[j + 1].kind == "NAMED" and \
            HAN.search(toks[j + 1].text):
        j += 1  # "生了个女儿，取名叫朵朵"
    if j < len(toks) and (toks[j].kind == "NAMED" or (toks[j].kind == "OTHER" and normalize(toks[j].text) == "called")):
        j += 1  # "my friend named Bob", "a baby girl called Mia", "女朋友叫林琳"
        if j < len(toks) and toks[j].kind == "NAMED":
            j += 1  # "女儿取名叫朵朵"
    if j + 1 < len(toks) and toks[j].kind == "OTHER" and toks[j + 1].kind == "NAME" and _genitive_noun(toks[j].text):
        j += 1  # "начальник отдела Сидоров": the cue's own genitive complement sits between
    return j if j < len(toks) and toks[j].kind == "NAME" else None


# What joins the names of a list: "Emma and Leo", "Amy, Beth, and Jo", "Маша, Катя и Лена", "Дима, а также
# Коля", "王磊、李娜和陈静". The Chinese "，" parts clauses, not names.
_LIST_JOINS = frozenset({",", "、", "and", "и", "также", "和", "跟", "与", "同", "及", "以及"})


def _several(tok: Tok) -> bool:
    """Whether a cue word may stand for several people: a plural ("my kids", "мои сёстры", "коллегами");
    Chinese has none, so there any cue but a one-person kin (老公, 妈妈)."""
    if tok.script == "zh":
        kin = kin_of(strip_possessive(tok.text))
        return not (kin and kin.unique)
    return tok.plural or tok.maybe_plural


def _listed(toks: list[Tok], j: int, step: int, *, several: bool) -> list[int]:
    """The names listed with the name at j after it (step 1: "my kids Emma and Leo") or before it
    (step -1: "Chloe and Ryan are my best friends"), when the cue word may stand for several people;
    "my boss Tom and Sarah from marketing" lists no one. A possessive name ends the list."""
    out: list[int] = []
    while several:
        k = j + step
        joins = []
        while 0 <= k < len(toks) and toks[k].kind in ("PUNCT", "OTHER") and len(joins) < 3:
            joins.append(normalize(toks[k].text))
            k += step
        words = joins if step == 1 else joins[::-1]
        joined = bool(words) and all(w in _LIST_JOINS or (w == "а" and words[i + 1:i + 2] == ["также"])
                                     for i, w in enumerate(words))
        if not (joined and 0 <= k < len(toks) and toks[k].kind == "NAME") or toks[k].possessive or \
                (step == -1 and toks[j].possessive):
            break
        out.append(k)
        j = k
    return out


def _genitive_noun(word: str) -> bool:
    if not CYR.search(word):
        return False
    best = morph().parse(word)[0]
    return best.tag.POS == "NOUN" and best.tag.case == "gent"


def _pronoun_antecedent(toks: list[Tok], c: int, *, own: bool) -> int | None:
    """"…Sarah Connor…; she is my team lead", "Андрей Викторович, он руководитель проекта": the name a
    pronoun right before the cue stands for. Without an OWN word only a pronoun next to the cue
    (a copula between at most) counts."""
    for j in range(c - 1, max(-1, c - 6), -1):
        kind = toks[j].kind
        if kind == "PRON":
            if not own and any(t.kind not in ("COP",) for t in toks[j + 1:c]):
                return None
            return next((n for n in range(j - 1, -1, -1) if toks[n].kind == "NAME"), None)
        if kind not in ("OWN", "COP", "OTHER"):
            return None
    return None


_AFFILIATION_FROM = frozenset({"из", "from", "on"})
_AFFILIATION_OTHER = frozenset({"другого", "соседнего", "другой", "соседней", "чужого", "another", "other",
                                "different", "the", "a"})
_AFFILIATION_UNIT = ("отдел", "департамент", "команд", "подразделени", "team", "department", "division")


_FROM_WORK = (["from", "work"], ["from", "the", "office"], ["from", "my", "office"], ["from", "my", "work"],
              ["с", "работы"], ["из", "офиса"], ["с", "моей", "работы"],
              # a relative clause: "Hannah, who I work with", "Ксюша, с которой мы работаем"
              [",", "who", "i", "work with"], [",", "who", "works with", "me"],
              [",", "с", "которой", "мы", "работаем"], [",", "с", "которым", "мы", "работаем"],
              [",", "с", "которой", "я", "работаю"], [",", "с", "которым", "я", "работаю"],
              # a department of the user's workplace: "Marisol from HR", "Веня из бухгалтерии"
              *([prep, dept] for prep in ("from", "из") for dept in lexicon.DEPARTMENTS),
              *(["from", "the", dept] for dept in lexicon.DEPARTMENTS))


def affiliations(toks: list[Tok]) -> None:
    """"Кузнецов из соседнего отдела", "Anna from another team": a colleague from elsewhere
    (Work_Outer); "Оля из нашего отдела", "Tom from my team": a close colleague (Work_Inner)."""
    for k, tok in enumerate(toks):
        if tok.kind != "NAME" or tok.mention is None or tok.mention.circle:
            continue
        rest = [normalize(t.text) for t in toks[k + 1:k + 7]]
        kinds = [t.kind for t in toks[k + 1:k + 5]]
        if said := next((rest[:n] for n in (6, 5, 4, 3, 2) if rest[:n] in _FROM_WORK), None):
            # "Tom and Alice from work", "Вера с работы": colleagues, every name listed before it too.
            cue = " ".join(said).lstrip(", ")
            for one in (k, *_listed(toks, k, -1, several=True)):
                mention = toks[one].mention
                if mention is not None and not mention.circle:
                    mention.circle, mention.cue = "Work_Inner", cue
            continue
        if k >= 4 and toks[k - 1].text in (",", "named", "called") and (unit := _own_unit_before(toks, k - 1)):
            # "The new guy on my team, Dmitri", "someone in our department named Li": a close colleague.
            tok.mention.circle, tok.mention.cue = "Work_Inner", unit
            continue
        rest = rest[:4]
        if not rest or rest[0] not in _AFFILIATION_FROM:
            continue
        if len(rest) > 2 and kinds[1] == "OWN" and rest[2].startswith(_AFFILIATION_UNIT):
            tok.mention.circle, tok.mention.cue = "Work_Inner", " ".join(rest[:3])
            continue
        j = 1
        while j < len(rest) and rest[j] in _AFFILIATION_OTHER:
            j += 1
        if 1 < j < len(rest) and rest[j].startswith(_AFFILIATION_UNIT):
            tok.mention.circle = "Work_Outer"
            tok.mention.cue = " ".join(rest[: j + 1])


def _outer_side(toks: list[Tok], c: int) -> None:
    """"Our vendor's rep, Yusuf", "our client's CFO, Dana", "客户的刘经理": someone of the client's or the vendor's
    side, named after the possessive cue and a word or two of their role, is a work contact from outside
    (Work_Outer), as the client is. Not the client's family ("the client's wife, Anna": the kin word is a cue
    of its own, which ends the search)."""
    j = c + 1
    while j < len(toks) and j - c <= 2 and (toks[j].kind == "OTHER" or (
            toks[j].kind == "CUE" and toks[j].cue is not None and toks[j].cue.circle in _WORK and
            not toks[j].possessive)):
        j += 1
    if j < len(toks) and toks[j].kind == "PUNCT" and toks[j].text in {",", "，", ":", "："}:
        j += 1
    if j < len(toks) and toks[j].kind == "NAME" and not toks[j].possessive and (mention := toks[j].mention) \
            and not mention.circle:
        mention.circle, mention.cue = "Work_Outer", " ".join(t.text for t in toks[c:j] if t.kind != "PUNCT")


def _own_unit_before(toks: list[Tok], end: int) -> str:
    """"on my team", "in our department", "из нашего отдела" right before position `end` (the words, or "")."""
    words = [normalize(t.text) for t in toks[max(0, end - 3):end]]
    if len(words) == 3 and words[0] in ("on", "in", "from", "из", "в") and toks[end - 2].kind == "OWN" and \
            words[2].startswith(_AFFILIATION_UNIT):
        return " ".join(words)
    return ""


def _name_before(toks: list[Tok], c: int, *, need_own: bool) -> int | None:
    """A NAME before position c linked to it by a copula, comma, dash or pronoun: "Tom is my boss"."""
    others = 0
    seen_own = False
    for j in range(c - 1, max(-1, c - 9), -1):
        kind = toks[j].kind
        if kind == "NAME":
            return j if (seen_own or not need_own) else None
        if kind in ("CUE", "VERB"):
            return None
        if kind == "OWN":
            seen_own = True
        elif kind == "OTHER":
            others += 1
            if others > 3:
                return None
        elif kind == "PUNCT" and toks[j].text in _STOPS:
            return None
    return None


def _possessive_pronoun(toks: list[Tok], c: int) -> int | None:
    """The index of "his"/"her"/"её"/"своим"/"他的"/"她" owning the cue at c ("her husband Mark",
    "её мужем", "他的老婆"); one adjective may sit between ("her little brother")."""
    for j in (c - 1, c - 2):
        if j < 0:
            return None
        kind = toks[j].kind
        if kind == "POSS" or (kind == "PRON" and (normalize(toks[j].text) == "her" or toks[j].text in ("他", "她"))):
            return j
        if kind != "OTHER" or j == c - 2:
            return None
    return None


_PRONOUN_GENDER = {"her": "femn", "his": "masc", "её": "femn", "ее": "femn", "его": "masc", "她": "femn", "他": "masc"}
# Kin whose word says a woman or a man (people.lexicon.KIN ids); the rest (spouse, partner, cousin) say neither.
_FEMALE_KIN = frozenset({
    "mother", "wife", "girlfriend", "fiancee", "daughter", "sister", "elder_sister", "younger_sister", "grandmother",
    "grandmother_paternal", "grandmother_maternal", "aunt", "aunt_paternal", "aunt_maternal", "aunt_maternal_younger",
    "cousin_elder_sister", "cousin_younger_sister", "niece", "granddaughter", "mother_in_law", "wifes_mother",
    "husbands_mother", "sister_in_law", "husbands_sister", "wifes_sister", "brothers_wife", "elder_brothers_wife",
    "younger_brothers_wife", "stepmother"})
_MALE_KIN = frozenset({
    "father", "husband", "boyfriend", "fiance", "son", "brother", "elder_brother", "younger_brother", "grandfather",
    "grandfather_paternal", "grandfather_maternal", "uncle", "uncle_paternal_younger", "uncle_paternal_elder",
    "uncle_maternal", "cousin_elder_brother", "cousin_younger_brother", "nephew", "grandson", "father_in_law",
    "wifes_father", "husbands_father", "brother_in_law", "wifes_brother", "husbands_brother", "sisters_husband",
    "elder_sisters_husband", "younger_sisters_husband", "stepfather"})


def _mention_gender(mention: Mention | None, text: str = "") -> str | None:
    """"femn", "masc" or None: by the kin word the person was named with ("my wife Laura", "сын Миша", "老婆小美"),
    else by a Russian first name."""
    kin = kin_of(mention.cue) if mention is not None and mention.cue else None
    if kin is not None and kin.id in _FEMALE_KIN:
        return "femn"
    if kin is not None and kin.id in _MALE_KIN:
        return "masc"
    return _gender(text or (mention.name if mention is not None else ""))


def _antecedent(toks: list[Tok], before: int, exclude: set[int], context: Sequence[Mention],
                pronoun: str) -> Mention | None:
    """Who a possessive pronoun stands for: the nearest name before it in the sentence, else the last person
    of the message's earlier sentences (or of the user's message before), of the pronoun's gender where the
    words say one ("her" is no "son Max"'s; a Russian name says its own). Of earlier sentences, none when
    no one agrees: "My son Max turned six. Tom, her brother, …" ties Tom to no one rather than to Max."""
    want = _PRONOUN_GENDER.get(normalize(pronoun))
    names = [j for j in range(before - 1, -1, -1) if toks[j].kind == "NAME" and j not in exclude and toks[j].mention]
    if want:
        agreeing = [j for j in names if _mention_gender(toks[j].mention, toks[j].text) in (want, None)]
        names = agreeing or names
    if names:
        return toks[names[0]].mention
    if want:
        return next((m for m in reversed(context) if _mention_gender(m) in (want, None)), None)
    return context[-1] if context else None


def _gender(name: str) -> str | None:
    if not CYR.search(name):
        return None
    for p in morph().parse(name.split()[0]):
        if "Name" in p.tag.grammemes and {"masc", "femn"} & p.tag.grammemes:
            return str(p.tag.gender)
    return None


def _first_person(toks: list[Tok]) -> bool:
    for tok in toks:
        if tok.kind == "OWN" or normalize(tok.text) in _FIRST_PERSON:
            return True
        if tok.kind == "VERB" and tok.script == "ru" and any(
                "1per" in p.tag for p in morph().parse(tok.text.split()[0])):
            return True  # "работаем", "дружу": the verb's ending says "we", "I"
    return False


def _partner(toks: list[Tok]) -> int | None:
    """The name joined with the user: "Sam and I", "me and Sam", "мы с Лёшей", "我和陈静"."""
    for j, tok in enumerate(toks):
        if tok.kind != "NAME":
            continue
        before = [normalize(t.text) for t in toks[max(0, j - 2):j]]
        after = [normalize(t.text) for t in toks[j + 1:j + 3]]
        if len(after) == 2 and after[0] in _AND and after[1] in ("i", "me", "я", "我"):
            return j
        if len(before) == 2 and before[1] in _AND and before[0] in ("i", "me", "я", "我", "我们"):
            return j
        if len(before) == 2 and before[0] in ("мы", "я") and before[1] in ("с", "со"):
            return j
    return None


def tie(toks: list[Tok], context: Sequence[Mention] = ()) -> list[Relation]:
    """Give names their circles from cues and relation verbs; return relations (subject, object,
    cue, label). `context`: people of the message's earlier sentences, for "her" and "его"."""
    relations: list[Relation] = []
    partner = _partner(toks)
    me = _first_person(toks)
    _born_words_as_kin(toks)
    for c, tok in enumerate(toks):
        if tok.kind == "VERB" and tok.verb is not None:
            if not tok.verb.ends:  # read last, over what the cue words say (`_tie_ending`)
                _tie_verb(toks, c, partner=partner, me=me)
            continue
        if tok.kind != "CUE" or tok.cue is None:
            continue
        cue = tok.cue
        if tok.possessive:
            if cue.circle == "Work_Outer":
                _outer_side(toks, c)
            continue  # "my cousin's wife": the cousin owns the next cue, and has no name of their own here
        if tok.genitive and c >= 1 and ((tok.script == "ru" and toks[c - 1].kind == "CUE") or (
                c >= 2 and toks[c - 1].kind == "OWN" and toks[c - 2].kind == "CUE")):
            # "Отец моей жены, Иван", "подруга жены Катя", "учительница сына Елена Петровна": the genitive kin word
            # owns the cue before it; the name is the wife's father, her friend, the son's teacher
            continue
        own = own_before(toks, c) or own_after(toks, c) or (
            cue.concept == "kin:child" and _born_to(toks, c) == "me")
        possessor: int | None = None
        if not own:
            j = c - 1
            while j >= 0 and toks[j].kind == "OTHER" and c - j <= 2:
                j -= 1
            if j >= 0 and toks[j].kind == "NAME" and toks[j].possessive:
                possessor = j
            elif c + 2 < len(toks) and toks[c + 1].kind == "OF" and toks[c + 2].kind == "NAME":
                possessor = c + 2
            elif c + 1 < len(toks) and toks[c + 1].kind == "NAME" and toks[c + 1].genitive:
                possessor = c + 1
            elif c >= 2 and toks[c - 1].kind == "NAME" and normalize(toks[c - 2].text) == "у":
                possessor = c - 1  # "У Светы муж …"
            elif (owner := _comitative_owner(toks, c)) is not None:
                possessor = owner  # "Лена с мужем Игорем", "Лена приехала с мужем Андреем"
        if possessor is None and not own and cue.concept == "kin:child":
            possessor = _parent_of_born(toks, c)
        if possessor is not None:
            tok.tied = True
            subject = _name_after(toks, c, skip=possessor)
            listed = _listed(toks, subject, 1, several=_several(tok)) if subject is not None else []
            if subject is None or subject == possessor:
                subject = _name_before(toks, min(c, possessor), need_own=False)
                listed = _listed(toks, subject, -1, several=_several(tok)) if subject is not None else []
            for one in (subject, *listed) if subject is not None and subject != possessor else ():
                a, b = toks[one].mention, toks[possessor].mention
                if a and b and one != possessor:
                    relations.append((a, b, cue, tok.text))
                    _family_of_family(a, b, cue)
            continue
        pronoun = None if own else _possessive_pronoun(toks, c)
        if pronoun is not None:
            # Someone else's relative: a relation to whom the pronoun stands for, no circle of the user's.
            tok.tied = True
            subject = _name_after(toks, c)
            listed = _listed(toks, subject, 1, several=_several(tok)) if subject is not None else []
            if subject is None:
                subject = _name_before(toks, pronoun, need_own=False)
                listed = _listed(toks, subject, -1, several=_several(tok)) if subject is not None else []
            if subject is not None and toks[subject].mention is not None:
                owner = _antecedent(toks, pronoun, {subject, *listed}, context, toks[pronoun].text)
                for one in (subject, *listed):
                    mention = toks[one].mention
                    if owner is not None and mention is not None and owner is not mention and \
                            owner.name != mention.name:
                        relations.append((mention, owner, cue, tok.text))
                        _family_of_family(mention, owner, cue)
            continue
        if c > 0 and toks[c - 1].kind == "CUE" and toks[c - 1].possessive:
            tok.tied = True  # "my boss's wife, Angela": the boss's family, not the user's
            continue
        if _needs_own(tok) and not _owned_closely(toks, c):
            continue  # "одна девушка Катя", "合作对象张伟": no partner of the user's
        subject = _name_after(toks, c)
        listed = _listed(toks, subject, 1, several=_several(tok)) if subject is not None else []
        if subject is None:
            subject = _name_before(toks, c, need_own=True)
            if subject is None and tok.script == "ru" and c >= 2 and toks[c - 1].text in (",", "(") and \
                    toks[c - 2].kind == "NAME":
                subject = c - 2  # "Вадик (сосед по комнате)", "Вадик, сосед по комнате,": Russian leaves "мой" out
            listed = _listed(toks, subject, -1, several=_several(tok)) if subject is not None else []
        described = False  # "…, she is a doctor": what the person is, not what they are to the user
        if subject is None:
            subject = _pronoun_antecedent(toks, c, own=own)
            described = subject is not None and not own
        if subject is None and own:
            subject = _nearest_name(toks, c, 4)
        if subject is None and partner is not None and (
                tok.maybe_plural or any(t.kind == "COP" for t in toks[max(0, c - 2):c])):
            subject = partner  # "Victor and I are old friends", "мы с Петей коллеги", "我和陈静是同学"
        if subject is not None and toks[subject].mention is not None:
            tok.tied = True
            mention = toks[subject].mention
            if described and (mention.circle or cue.circle == _OTHER):
                # "我妈妈叫王丽，她是医生", "Мою маму зовут Ольга, она врач": her job, and she stays the user's
                # mother. Only a role that places her ("…, он руководитель проекта") fills an empty circle;
                # "she is my doctor" is the user's own cue, and goes on below.
                continue
            if mention.circle and not own and _address_word(tok):
                continue  # "Соседка по даче, тётя Валя": the neighbour's cue said who she is
            if mention.circle == _FAMILY and cue.circle in _WORK:
                # "My sister Anna is my manager now", "Моя сестра Анна, она теперь мой начальник", "我姐姐安娜是我的
                # 经理": kin is who she is, the work role what she does; she stays in Family (a later sentence
                # or batch is ranked alike, `rules._kin_kept`).
                continue
            mention.circle = cue.circle
            mention.cue = tok.text
            mention.ex = mention.ex or cue.concept == _EX  # "my ex-husband Mark"
            for one in listed:  # "my kids Emma and Leo": Leo is a child too, unless a cue of his own says
                other = toks[one].mention
                if other is not None and not other.circle:
                    other.circle, other.cue = cue.circle, tok.text
            # Russian and Chinese say whose without a word ("муж Игорь", "老公叫张伟"): the user's, unless
            # someone else owns the kin word (`_users_kin`), as "мой муж Игорь" says it.
            mine = own or (tok.script != "en" and _users_kin(toks, c) and not _with_someone(toks, c))
            kin = kin_of(strip_possessive(tok.text)) if mine else None
            if kin is not None and kin.unique:
                # "my mom Olga": she is also who "мама" means from now on (one mother per user).
                mention.aliases.append(kin_name(kin, tok.script or "en"))
    for c, tok in enumerate(toks):
        if tok.kind == "VERB" and tok.verb is not None and tok.verb.ends:
            _tie_ending(toks, c, partner=partner)
    return relations


def _needs_own(tok: Tok) -> bool:
    """A partner word that is the user's partner only when the user owns it (`PARTNER_WORDS_NEED_OWN`)."""
    words = normalize(tok.text)
    if tok.script == "ru":
        words = " ".join(ru_lemma(w) for w in words.split())
    return words in lexicon.PARTNER_WORDS_NEED_OWN


def _owned_closely(toks: list[Tok], c: int) -> bool:
    """An OWN word right before the cue ("моя девушка", "у меня парень", "我对象"), with one Russian adjective
    between at most ("мой новый парень"), or right after it ("парень мой")."""
    if own_after(toks, c):
        return True
    if c >= 1 and toks[c - 1].kind == "OWN":
        return True
    return toks[c].script == "ru" and c >= 2 and toks[c - 2].kind == "OWN" and toks[c - 1].kind == "OTHER" and \
        bool(CYR.search(toks[c - 1].text))


# "with me", "со мной", "from me": the user on the other side of an ending ("Tom broke up with me").
_WITH = frozenset({"with", "from", "с", "со"})
_ME = frozenset({"me", "мной", "меня"})


def _tie_ending(toks: list[Tok], c: int, *, partner: int | None) -> None:
    """"Tom and I broke up", "мы с Олей расстались", "我和小红分手了", "мы с мужем Игорем развелись", "I broke up
    with my boyfriend Tom", "я развелась с Игорем", "Tom broke up with me": the user's counterpart is an ex
    from now on, whatever circle a cue word gave them (`VerbCue.ends`). Someone else's break-up ("I heard
    Tom broke up with Anna", "Петя и Оля расстались") changes no one's circle."""
    verb = toks[c].verb
    assert verb is not None
    words = [normalize(t.text) for t in toks]
    subject = partner
    # The user first, then "and"/"с", then whom, a cue word between ("мы с мужем Игорем", "我和老公张伟").
    for j in range(c - 1, 0, -1):
        if subject is not None or toks[j].kind == "VERB":
            break
        if toks[j].kind != "NAME":
            continue
        k = j - 1
        while k > 0 and toks[k].kind in ("CUE", "OWN"):
            k -= 1
        if k > 0 and words[k] in _AND | {"с", "со"} and words[k - 1] in _FIRST_PERSON:
            subject = j
    before = c - 1
    while before >= 0 and toks[before].kind == "OTHER" and words[before] not in _FIRST_PERSON | _AND:
        before -= 1  # "I finally broke up", "Tom just broke up", "I got divorced"
    if subject is None and before >= 0 and words[before] in _FIRST_PERSON:
        # The user ended it: whom after the verb ("with", "my", "boyfriend" may stand between).
        for j in range(c + 1, min(len(toks), c + 5)):
            if toks[j].kind == "NAME":
                subject = j
                break
            if not (toks[j].kind in ("OWN", "CUE") or words[j] in _WITH):
                break
    if subject is None and before >= 0 and toks[before].kind == "NAME" and any(
            words[j] in _WITH and words[j + 1] in _ME for j in range(c + 1, min(len(toks) - 1, c + 3))):
        subject = before  # the other ended it: "Tom broke up with me", "Дима расстался со мной"
    if subject is None or toks[subject].possessive or toks[subject].mention is None:
        return
    mention = toks[subject].mention
    assert mention is not None
    mention.circle, mention.cue = verb.circle, toks[c].text
    toks[c].tied = True
    if verb.concept == _EX:
        # "my husband Mark and I got divorced": "Husband" names him no more, nor finds him for a new husband.
        mention.ex = True
        mention.aliases = [a for a in mention.aliases if not partner_word(a)]


_EX = "role:ex"
_PARTNER_CONCEPTS = frozenset({"kin:spouse", "kin:partner"})


def partner_word(name: str) -> bool:
    """Whether a name is only a word for the user's partner: "Husband", "муж", "老公", "Boyfriend", "парень",
    "男朋友" (an alias the kin word left, `tie`), which an ex no longer goes by."""
    kin = kin_of(name)
    if kin is not None:
        return kin.concept in _PARTNER_CONCEPTS
    found = search_words(name)
    return len(found) == 1 and found[0].concept in _PARTNER_CONCEPTS


# "Anna had a daughter", "gave birth to", "has a son"; "у Ани родилась дочка", "Аня родила сына", "у неё есть
# сын"; "小丽生了一个儿子", "她有个女儿": the words between a parent and their child's kin word.
_BIRTH_WORDS = frozenset({"had", "has", "have", "welcomed", "birth", "adopted", "родила", "родил", "родился",
                          "родилась", "родились", "есть", "появился", "появилась", "усыновила", "удочерила", "生",
                          "生了", "有", "添了"})
_BIRTH_FILLERS = frozenset({"just", "recently", "finally", "gave", "to", "a", "an", "her", "his", "their", "baby",
                            "girl", "boy", "little", "newborn", "two", "twin", "у", "неё", "нее", "него", "них",
                            "недавно", "наконец", "уже",
                            "了", "个", "一个", "一", "位", "刚", "刚刚", "又", "宝贝", "小"})


# A newborn named without a kin word: "had a baby girl called Mia", "родилась малышка Соня", "生了个宝宝叫乐乐".
_BABY_WORDS = frozenset({"baby", "girl", "boy", "малыш", "малышка", "宝宝", "男孩", "女孩", "男宝", "女宝"})
_CHILD = next(cue for cue in lexicon.CUES if cue.concept == "kin:child")


def _born_words_as_kin(toks: list[Tok]) -> None:
    """The last baby word after a birth word, before the baby's name, reads as "child"."""
    for c, tok in enumerate(toks):
        if tok.kind != "OTHER" or normalize(tok.text) not in _BABY_WORDS:
            continue
        following = toks[c + 1:c + 3]
        if following and normalize(following[0].text) in _BABY_WORDS:
            continue  # "baby girl": the last of them
        if not any(t.kind == "NAME" for t in following) or _born_to(toks, c) in (None, "other"):
            continue
        tok.kind, tok.cue, tok.script = "CUE", _CHILD, "zh" if HAN.search(tok.text) else (
            "ru" if CYR.search(tok.text) else "en")


def _born_to(toks: list[Tok], c: int) -> int | str | None:
    """Who had the child of the kin word at c: the index of the name before a birth word ("Anna just had a
    baby girl called Mia", "Аня родила сына Лёву", "小丽生了一个儿子叫豆豆"), "me" for the user ("I had a
    baby boy", "у меня родилась дочка", "我生了个女儿"), "other" for someone named by a cue word ("Моя сестра
    родила дочку", "我嫂子刚生了个女儿": the sister's daughter), else None. Only fillers may stand between."""
    seen_birth = False
    for j in range(c - 1, max(-1, c - 9), -1):
        kind, word = toks[j].kind, normalize(toks[j].text)
        if kind == "NAME":
            return j if seen_birth else None
        if seen_birth and word in _FIRST_PERSON:
            return "me"
        if seen_birth and kind == "CUE":
            return "other"
        if kind == "OTHER" and (word in _BIRTH_WORDS or _zh_birth(word)):
            seen_birth = True
        elif not (kind == "OTHER" and word in _BIRTH_FILLERS):
            return None
    return None


def _zh_birth(word: str) -> bool:
    """A birth word jieba glued to the adverb before it: 刚生, 又生了."""
    return bool(HAN.search(word)) and any(word.startswith(f) and word[len(f):] in _BIRTH_WORDS
                                          for f in ("刚刚", "刚", "又", "才"))


def _parent_of_born(toks: list[Tok], c: int) -> int | None:
    """The child's parent when it is someone the sentence names (`_born_to`): the child is theirs, not
    the user's (the user's family only when the parent is: `_family_of_family`)."""
    parent = _born_to(toks, c)
    return parent if isinstance(parent, int) else None


def _family_of_family(subject: Mention, owner: Mention, cue: lexicon.Cue) -> None:
    """"my sister Kate and her husband Mark", "отец моей жены": the family of the user's family is
    family too."""
    if owner.circle == _FAMILY and cue.circle == _FAMILY and not subject.circle:
        subject.circle = _FAMILY
        subject.cue = cue.concept


def _tie_verb(toks: list[Tok], c: int, *, partner: int | None, me: bool) -> None:
    """"I report to Priya", "Kelly and I work together", "мы с Лёшей дружим", "руководит отделом Х":
    the person the verb relates to the user. A circle a cue word gave stays (it says more)."""
    verb = toks[c].verb
    assert verb is not None
    if verb.needs_user and not me:
        return
    subject = partner
    if subject is None:
        for j in range(c + 1, min(len(toks), c + 5)):
            kind = toks[j].kind
            if kind == "NAME":
                subject = j
                break
            if kind not in ("OTHER", "OWN") and not (kind == "PUNCT" and toks[j].text == "."):
                break
    if subject is None:
        for j in range(c - 1, max(-1, c - 4), -1):
            kind = toks[j].kind
            if kind == "NAME":
                subject = j
                break
            if kind not in ("OTHER", "OWN"):
                break
    if subject is None and any(normalize(t.text) in ("мы", "we", "我们") for t in toks[max(0, c - 3):c]):
        # "Вчера болтала с Верой, мы вместе работаем", "Had lunch with Vera, we work together": "we" is the user
        # and the one person the sentence names.
        named = [j for j, t in enumerate(toks) if t.kind == "NAME"]
        subject = named[0] if len(named) == 1 else None
    if subject is None or toks[subject].possessive:
        return
    mention = toks[subject].mention
    if mention is not None and not mention.circle:
        mention.circle = verb.circle
        mention.cue = toks[c].text
        toks[c].tied = True


def _with_someone(toks: list[Tok], c: int) -> bool:
    """"Света с мужем Игорем": a kin word after "с" and a capitalised word (a name the dictionary may
    not read as one at the start of a sentence) is that person's; "мы с мужем Игорем" is the user's."""
    return c >= 2 and normalize(toks[c - 1].text) in ("с", "со") and toks[c - 2].text[:1].isupper() and \
        normalize(toks[c - 2].text) not in _FIRST_PERSON


# What may stand between a cue word and the name it is, besides punctuation and a dash: a title ("Our client
# Mr. Henderson"), a place adverb ("мой начальник там — Петров") and a preposition with its word ("мой начальник
# в Тинькофф — Петров", "my boss at Acme, Dana").
_GAP_ADVERBS = frozenset({"there", "here", "там", "тут", "здесь"})
_GAP_PREPOSITIONS = frozenset({"at", "in", "from", "since", "в", "на", "из", "по", "с"})


def _apposition_gap(between: Sequence[Tok]) -> bool:
    """Whether the tokens between a cue word and a name leave the name the cue's: not a verb and its object
    ("My mom met Lily", "Моя мама заберёт Машу", "我妈会帮忙接朵朵" made Lily, Маша and 朵朵 the mother)."""
    i = 0
    while i < len(between):
        tok = between[i]
        word = normalize(tok.text).rstrip(".")
        if tok.kind == "PUNCT" or tok.text in _DASHES or not word or word in lexicon.EN_TITLES or \
                word in _GAP_ADVERBS:
            i += 1
        elif word in _GAP_PREPOSITIONS and i + 1 < len(between):
            # Its word, or up to three set off by a comma or dash: "my best friend since high school, Alex".
            stop = next((j for j in range(i + 1, min(len(between), i + 5))
                         if between[j].kind == "PUNCT" or between[j].text in _DASHES), None)
            i = stop if stop is not None else i + 2
        else:
            return False
    return True


def _nearest_name(toks: list[Tok], c: int, window: int) -> int | None:
    for d in range(1, window + 1):
        for j in (c + d, c - d):
            if 0 <= j < len(toks) and toks[j].kind == "NAME":
                between = toks[min(j, c) + 1:max(j, c)]
                if any(t.kind == "CUE" for t in between):
                    continue  # another cue stands between: the name is that cue's
                if any(normalize(t.text) in _AND for t in between):
                    continue  # "my kids and Tom", "我妈妈和王阿姨": someone beside the cue's person, not them
                if not _apposition_gap(between):
                    continue
                return j
    return None


def aliases(toks: list[Tok]) -> None:
    """`Maria aka Masha`, `Петров, он же Петя`, `张伟也叫小张`: the second name becomes an alias.
    `小张 (Xiao Zhang)`: a name in another script right after a name, in brackets, is its alias, and
    brings its circle along ("小张 (my good friend Xiao Zhang)")."""
    for k, tok in enumerate(toks):
        if tok.kind == "PUNCT" and tok.text in ("(", "（") and k > 0 and toks[k - 1].kind == "NAME":
            main = toks[k - 1].mention
            inner = next((j for j in range(k + 1, min(len(toks), k + 8)) if toks[j].text in (")", "）")
                          or toks[j].kind == "NAME"), None)
            if main and inner is not None and toks[inner].kind == "NAME" and toks[inner].mention and \
                    toks[inner].script != toks[k - 1].script and toks[inner].mention.name:
                alias = toks[inner].mention
                main.aliases.append(alias.name)
                main.circle = main.circle or alias.circle
                main.cue = main.cue or alias.cue
                alias.name = ""
            continue
        if tok.kind != "ALIAS":
            continue
        before = next((j for j in range(k - 1, max(-1, k - 3), -1) if toks[j].kind == "NAME"), None)
        after = next((j for j in range(k + 1, min(len(toks), k + 3)) if toks[j].kind == "NAME"), None)
        if after is None and k + 1 < len(toks) and toks[k + 1].kind == "OTHER" and toks[k + 1].text[:1].isupper():
            toks[k + 1] = Tok("NAME", toks[k + 1].text, mention=Mention(name=toks[k + 1].text))
            after = k + 1
        if before is not None and after is not None:
            main, alias = toks[before].mention, toks[after].mention
            if main and alias:
                main.aliases.append(alias.name)
                alias.name = ""  # folded into the main mention


# --- departures from work ---------------------------------------------------------------------------------

_OUT = "Other"  # out of the company: the work tie has ended, as an ex's has (`role:ex`)
_ELSEWHERE = "Work_Outer"  # to another team: a colleague from elsewhere (`affiliations`)
_SUBJECT_PRONOUNS = frozenset({"he", "she", "он", "она", "他", "她"})


def departures(toks: list[Tok], context: Sequence[Mention] = ()) -> None:
    """"Tom left the company", "Tom and Anna were laid off", "Петров, мой начальник, уволился", "王强上个月离职了",
    "He retired" (the person before, or of the message's earlier sentences): mark each subject with the circle
    a departure from work moves them to (`Mention.left`); `rules.extract` moves only someone at work with the
    user, as it knows their circle. Leaving a place ("Tom left early today", "Петров ушёл домой", "他走了")
    or something else ("Tom quit smoking"), or a negation ("Tom didn't quit", "王强没离职"), is no departure."""
    words = [normalize(t.text) for t in toks]
    k = 0
    while k < len(toks):
        subjects = _departure_subjects(toks, words, k, context)
        if not subjects:
            k += 1
            continue
        end = subjects[-1][1] + 1
        circle = _departure_after(toks, words, end)
        for mention, _ in subjects if circle else ():
            mention.left = circle
        k = end


def _departure_subjects(toks: list[Tok], words: list[str], k: int,
                        context: Sequence[Mention]) -> list[tuple[Mention, int]]:
    """The subject at k, with the names listed after it ("Tom and Anna"), each with its position; a pronoun
    stands for the nearest name before it, else the last person of the earlier sentences."""
    tok = toks[k]
    if tok.kind == "PRON" and words[k] in _SUBJECT_PRONOUNS:
        names = [j for j in range(k - 1, -1, -1) if toks[j].kind == "NAME" and toks[j].mention]
        mention = toks[names[0]].mention if names else (context[-1] if context else None)
        return [(mention, k)] if mention is not None else []
    if tok.kind != "NAME" or tok.mention is None or tok.genitive:
        return []
    if tok.possessive and not (k + 1 < len(toks) and (words[k + 1] in lexicon.EN_DEPARTURE_FILLERS or
                                                        _departure_after(toks, words, k + 1))):
        return []  # "Tom's wife left the company"; "Tom's left the company" is Tom's own leaving
    out = [(tok.mention, k)]
    j = k + 1
    while j + 1 < len(toks) and words[j] in _AND and toks[j + 1].kind == "NAME" and toks[j + 1].mention and \
            not toks[j + 1].possessive:
        out.append((toks[j + 1].mention, j + 1))
        j += 2
    return out


def _departure_after(toks: list[Tok], words: list[str], j: int) -> str:
    """The circle the words from j on move their subject to, or "": an apposition ("Tom, my boss, left …")
    and fillers ("has finally", "was", "уже", "上个月") may come first."""
    if j < len(toks) and words[j] in (",", "，"):
        close = next((e for e in range(j + 1, min(len(toks), j + 6)) if words[e] in (",", "，")), None)
        if close is not None and any(t.kind == "CUE" for t in toks[j + 1:close]) and \
                all(t.kind in ("CUE", "OWN", "OTHER") for t in toks[j + 1:close]):
            j = close + 1
        elif j >= 2 and words[j - 2] in (",", "，") and toks[j - 1].kind == "NAME":
            j += 1  # the name is the apposition: "my manager, Steve, just quit"
    if j >= len(toks):
        return ""
    if HAN.search(toks[j].text):
        return _departure_zh(toks, j)
    if CYR.search(toks[j].text):
        return _departure_ru(toks, words, j)
    return _departure_en(toks, words, j)


def _plain_end(toks: list[Tok], j: int) -> bool:
    return j >= len(toks) or toks[j].kind == "PUNCT"


def _en_object(words: list[str], j: int, *, need_determiner: bool) -> str:
    """"the company", "his job" (Other), "the team", "another team" (Work_Outer) at j, or ""."""
    if j < len(words) and words[j] in lexicon.EN_OBJECT_DETERMINERS:
        j += 1
    elif need_determiner:
        return ""
    if j < len(words) and words[j] in lexicon.EN_ANOTHER:
        j += 1
    if j < len(words) and words[j] in lexicon.EN_WORKPLACE_WORDS:
        return _OUT
    if j < len(words) and words[j] in lexicon.EN_TEAM_WORDS:
        return _ELSEWHERE
    return ""


def _departure_en(toks: list[Tok], words: list[str], j: int) -> str:
    passive = False
    for _ in range(4):
        if j < len(words) and words[j] in lexicon.EN_DEPARTURE_FILLERS:
            passive = passive or words[j] in lexicon.EN_PASSIVE_AUX
            j += 1
    if j >= len(words):
        return ""
    verb = words[j]
    if verb == "retired":
        return _OUT
    if verb == "left":
        # "left the company", "left his job", "left the team"; "left for another company"; not "left early",
        # "left the office", "left work at five".
        if j + 1 < len(words) and words[j + 1] == "for":
            return _OUT if _en_object(words, j + 2, need_determiner=False) else ""
        return _en_object(words, j + 1, need_determiner=True)
    if verb in ("quit", "resigned"):
        nxt = j + 1
        if nxt < len(words) and words[nxt] == "from":
            return _en_object(words, nxt + 1, need_determiner=False)
        if _plain_end(toks, nxt) or words[nxt] in lexicon.EN_AFTER_QUITTING:
            return _OUT
        return _en_object(words, nxt, need_determiner=False)
    if passive and (verb in lexicon.EN_DISMISSED or " ".join(words[j:j + 2]) in lexicon.EN_DISMISSED):
        return _OUT
    if verb in lexicon.EN_MOVE_VERBS:
        # "moved to another team", "transferred to a different department", "switched teams", "joined
        # another company"; "moved to Berlin", "went to the team dinner" are no moves of the job.
        nxt = j + 1 + (j + 1 < len(words) and words[j + 1] == "to")
        k = nxt + (nxt < len(words) and words[nxt] in ("a", "an", "the"))
        if k < len(words) and (words[k] in lexicon.EN_ANOTHER or (verb in ("switched", "changed") and k == nxt)):
            return _en_object(words, k, need_determiner=False)
    return ""


def _ru_any(word: str, lemmas: frozenset[str]) -> bool:
    return bool(CYR.search(word)) and any(lemma in lemmas for lemma in ru_lemmas(word)[:2])


def _ru_object(words: list[str], j: int) -> str:
    """"компании", "нашей фирмы", "другую компанию" (Other); "отдела", "другую команду" (Work_Outer) at j."""
    while j < len(words) and (words[j] in lexicon.RU_OWN or _ru_any(words[j], lexicon.RU_ANOTHER)):
        j += 1
    if j < len(words) and _ru_any(words[j], lexicon.RU_WORKPLACE_WORDS):
        return _OUT
    if j < len(words) and _ru_any(words[j], lexicon.RU_TEAM_WORDS):
        return _ELSEWHERE
    return ""


def _departure_ru(toks: list[Tok], words: list[str], j: int) -> str:
    for _ in range(4):
        if j < len(words) and (words[j] in lexicon.RU_DEPARTURE_FILLERS or (
                CYR.search(words[j]) and morph().parse(words[j])[0].tag.POS == "ADVB")):
            j += 1
        elif j + 2 < len(words) and words[j] in ("в", "на") and _ru_any(words[j + 1], frozenset({"прошлый"})):
            j += 3  # "в прошлом месяце", "на прошлой неделе"
    if j >= len(words) or not CYR.search(words[j]):
        return ""
    word, nxt = words[j], words[j + 1] if j + 1 < len(words) else ""
    if _ru_any(word, lexicon.RU_QUIT_LEMMAS) or any(
            p.normal_form == "уволить" and "PRTS" in p.tag for p in morph().parse(word)):
        return _OUT  # "уволился", "уволена"
    if word == "на" and _ru_any(nxt, frozenset({"пенсия"})):
        return _OUT  # "Петров уже на пенсии"
    if nxt == "на" and _ru_any(word, lexicon.RU_RETIRE_LEMMAS) and j + 2 < len(words) and \
            _ru_any(words[j + 2], frozenset({"пенсия"})):
        return _OUT  # "ушёл на пенсию", "вышла на пенсию"
    if _ru_any(word, lexicon.RU_LEAVE_LEMMAS):
        # "ушёл из компании", "ушла с работы", "ушёл в другую компанию", "ушёл из отдела"; not "ушёл домой",
        # "ушла в отпуск".
        if nxt in ("из", "с", "со"):
            return _ru_object(words, j + 2)
        if nxt in ("в", "во") and j + 2 < len(words) and _ru_any(words[j + 2], lexicon.RU_ANOTHER):
            return _ru_object(words, j + 2)
        return ""
    if _ru_any(word, lexicon.RU_MOVE_LEMMAS) and nxt in ("в", "во", "на"):
        # "перешёл в другой отдел" (Work_Outer), "перешла в другую компанию" (Other); "перешёл в Яндекс" is
        # left: a capitalised word may be a team's name as well.
        found = _ru_object(words, j + 2)
        return found if found == _ELSEWHERE or (j + 2 < len(words) and _ru_any(words[j + 2], lexicon.RU_ANOTHER)) \
            else ""
    if _ru_any(word, lexicon.RU_CHANGE_LEMMAS):
        return _ru_object(words, j + 1)  # "сменил работу", "поменяла отдел"
    return ""


def _departure_zh(toks: list[Tok], j: int) -> str:
    """"离职了", "上个月辞职了", "被开除了", "退休了" (Other); "调到别的部门", "转岗了" (Work_Outer)."""
    clause = ""
    for tok in toks[j:]:
        if tok.kind == "PUNCT":
            break
        clause += tok.text
    stripped = True
    while stripped:
        stripped = False
        for filler in lexicon.ZH_DEPARTURE_FILLERS:
            if clause.startswith(filler):
                clause, stripped = clause[len(filler):], True
                break
    if clause.startswith(lexicon.ZH_DEPARTED):
        return _OUT
    if clause.startswith(lexicon.ZH_TEAM_MOVES):
        return _ELSEWHERE
    for verb in lexicon.ZH_MOVE_VERBS:
        if clause.startswith(verb):
            rest = clause[len(verb):]
            for other in lexicon.ZH_ANOTHER:
                if rest.startswith(other):
                    rest = rest[len(other):]
                    if rest.startswith(lexicon.ZH_TEAM_WORDS):
                        return _ELSEWHERE
                    return _OUT if rest.startswith(("公司", "单位")) else ""
            return ""
    return ""


# --- pets ---------------------------------------------------------------------------------------------------

# What may stand between a pet word and its name: "my dog, Rex", "my dog is called Rex", "мою кошку зовут
# Муся", "кошка моя Муся", "собака по кличке Шарик", "我的猫叫米饭", "我养了一条狗，叫豆豆", "my pet rabbit Bun".
_PET_LINKS = frozenset({",", "，", ":", "：", "—", "–", "-", "("})
# Before a pet word, after the copula: "Rex is my dog", "Муся — наша кошка", "米饭是我家的猫", "Rex is a good dog".
_PET_DETERMINERS = frozenset({"a", "an", "the"})


def _pet_name_after(toks: list[Tok], c: int) -> int | None:
    j, skipped = c + 1, 0
    # "my dog's name is Rex", "我的猫的名字叫米饭"; any other noun the pet owns ("my dog's vet Anna") is
    # someone else.
    if toks[c].possessive and not (j < len(toks) and normalize(toks[j].text) in ("name", "名字")):
        return None
    while j < len(toks) and skipped < 4 and (
            toks[j].kind in ("COP", "NAMED", "PET") or (toks[j].kind == "OWN" and CYR.search(toks[j].text)) or
            (toks[j].kind == "PUNCT" and toks[j].text in _PET_LINKS) or
            (toks[j].kind == "OTHER" and normalize(toks[j].text) in lexicon.PET_NAMING_WORDS)):
        j, skipped = j + 1, skipped + 1
    if j < len(toks) and toks[j].kind == "NAME" and not toks[j].possessive:
        return j
    return None


def _pet_name_before(toks: list[Tok], c: int) -> int | None:
    """"Rex is my dog", "Rex, our puppy", "Муся — моя любимая кошка", "米饭是我家的猫"."""
    j = c - 1
    adjectives = 0
    while j >= 0 and toks[j].kind == "OTHER" and adjectives < 2 and \
            normalize(toks[j].text) not in _AND | _PET_DETERMINERS:
        j, adjectives = j - 1, adjectives + 1
    if j >= 0 and (toks[j].kind == "OWN" or normalize(toks[j].text) in _PET_DETERMINERS):
        j -= 1
    elif adjectives:
        return None  # "Anna is walking the dog" has its determiner; "Anna walks dogs" no link at all
    if not (j >= 1 and (toks[j].kind == "COP" or (toks[j].kind == "PUNCT" and toks[j].text in _PET_LINKS))):
        return None
    j -= 1
    return j if toks[j].kind == "NAME" and not toks[j].possessive else None


def pets(toks: list[Tok]) -> list[Tok]:
    """The tokens with each pet's name folded into its pet word: "my dog Rex", "мою кошку зовут Муся",
    "我的猫叫米饭" name an animal, not a person, so no later reading takes the name for one (nor as the
    person a cue word stands for: "my friend walks my dog Rex" names no friend). The profile keeps the pet."""
    drop: set[int] = set()
    for c, tok in enumerate(toks):
        if tok.kind != "PET":
            continue
        name = _pet_name_after(toks, c)
        if name is not None:
            drop.add(name)
            # "my dogs Rex and Max", "мои кошки Муся и Маша"; Chinese says no plural, and "我的狗豆豆和李娜"
            # is a walk with a person.
            drop.update(_listed(toks, name, 1, several=tok.plural))
        elif not tok.possessive and (name := _pet_name_before(toks, c)) is not None:
            drop.add(name)
    return [Tok("PET", t.text, script=t.script) if k in drop else t for k, t in enumerate(toks)]


# --- the user's relatives without a name ---------------------------------------------------------------


# A Russian verb of one person between them and "с мужем": past ("приехала", "вернулась") or present ("едет");
# not a plural, whose subject is more than the name ("Мы с Леной пришли с мужем").
_RU_VERB = re.compile(r"[а-яё]{2,}(?:л|ла|ло)(?:сь|ся)?|[а-яё]{2,}(?:ет|ит|ёт)(?:ся)?")


def _comitative_owner(toks: list[Tok], c: int) -> int | None:
    """Whose the Russian relative at c is when said "with" someone: "Лена с мужем Игорем", "Лена приехала с
    мужем Андреем" (one verb between); the person's index, for the kinds of kin one comes with (`_COMITATIVE`)."""
    tok = toks[c]
    if tok.cue is None or tok.cue.concept not in _COMITATIVE or c < 2 or normalize(toks[c - 1].text) not in ("с", "со"):
        return None
    if toks[c - 2].kind == "NAME":
        return c - 2
    if c >= 3 and toks[c - 2].kind == "OTHER" and _RU_VERB.fullmatch(normalize(toks[c - 2].text)) and \
            toks[c - 3].kind == "NAME" and not (c >= 4 and normalize(toks[c - 4].text) in ("с", "со")):
        return c - 3
    return None


def _owned_by_someone_else(toks: list[Tok], c: int) -> bool:
    """"Sofia's mom", "his wife", "её мама", "У Наташи мама", "Лена с мужем", "мама Пети", "他妈妈"."""
    tok = toks[c]
    j = c - 1
    while j >= 0 and toks[j].kind == "OTHER" and c - j <= 2 and tok.script == "en":
        j -= 1  # "Sofia's little brother"
    prev = toks[j] if j >= 0 else None
    if prev is not None:
        if prev.kind == "NAME" and (prev.possessive or tok.script == "zh"):
            return True
        if prev.kind in ("POSS", "PRON") and _possessive_pronoun(toks, c) is not None:
            return True
        if prev.kind == "CUE" and prev.possessive:
            return True  # "my boss's wife"
        if prev.kind == "CUE" and tok.script == "zh" and \
                ((owner := kin_of(prev.text)) is None or owner.concept in ("kin:spouse", "kin:partner")):
            # "他同学妈妈", "我同事老公", "我老公妈妈": Chinese needs no 的. "爷爷奶奶", "爸爸妈妈" list two of
            # the user's own.
            return True
        if normalize(prev.text) in _NOT_MINE:
            return True
    if c >= 2 and toks[c - 1].kind in ("NAME", "PRON") and normalize(toks[c - 2].text) == "у":
        return True
    if _comitative_owner(toks, c) is not None:
        return True
    nxt = toks[c + 1] if c + 1 < len(toks) else None
    if nxt is not None and nxt.kind == "NAME" and nxt.genitive:
        return True
    return bool(nxt is not None and nxt.kind == "OF" and c + 2 < len(toks) and toks[c + 2].kind in ("NAME", "OWN"))


def _users_kin(toks: list[Tok], c: int) -> bool:
    """Whether the kin word at c is the user's own: English says so ("my", or "Mom"/"Dad" used as a
    name); Russian and Chinese leave it out ("Мама звонила", "周末陪奶奶"), so there it is the user's
    unless someone else owns it."""
    tok = toks[c]
    if _owned_by_someone_else(toks, c):
        return False
    if tok.cue is not None and tok.cue.concept == "kin:child" and _born_to(toks, c) == "other":
        return False  # "Моя сестра родила дочку": her daughter
    if own_before(toks, c) or own_after(toks, c):
        return True
    if tok.script != "en":
        return not _grandchild_of_elders(toks, c)
    if c >= 2 and normalize(toks[c - 1].text) in ("and", "or", "&") and toks[c - 2].kind == "CUE" and \
            kin_of(strip_possessive(toks[c - 2].text)) is not None and _users_kin(toks, c - 2):
        return True  # "my mom and dad": the "my" of the first is the second's too
    kin = kin_of(strip_possessive(tok.text))
    holiday = c + 1 < len(toks) and normalize(toks[c + 1].text) == "day"  # "Happy Father's Day"
    return bool(kin and kin.id in _EN_NAME_LIKE and tok.text[:1].isupper() and not holiday)


# The user's parents and parents-in-law: a grandchild they come to see is the user's child.
_ELDERS = frozenset({"grandmother", "grandfather", "grandmother_paternal", "grandfather_paternal",
                     "grandmother_maternal", "grandfather_maternal", "mother", "father", "wifes_mother", "wifes_father",
                     "husbands_mother", "husbands_father"})
_GRANDCHILDREN = frozenset({"grandson", "granddaughter"})


def _grandchild_of_elders(toks: list[Tok], c: int) -> bool:
    """"公公婆婆下周来看孙子", "Свекровь приехала понянчить внука": a grandchild no one is said to own, after the
    user's parents or parents-in-law in the sentence, is theirs (the user's child), not the user's grandchild."""
    kin = kin_of(strip_possessive(toks[c].text))
    if kin is None or kin.id not in _GRANDCHILDREN:
        return False
    return any(t.kind == "CUE" and (k := kin_of(strip_possessive(t.text))) is not None and k.id in _ELDERS
               for t in toks[:c])


# Between "я" / "我" and a kin word that says what the user is ("я теперь тётя", "я стала мамой", "我当姑姑了").
_RU_BECOMING = frozenset({"теперь", "уже", "стала", "стал", "буду", "стану", "становлюсь", "тоже", "снова", "же",
                          "наконец", "скоро", "—", "–", "-"})
_ZH_BECOMING = frozenset({"当", "当上", "当了", "成了", "成为", "做", "做了", "是"})
_ZH_BECOMING_FILLERS = frozenset({"也", "现在", "已经", "终于", "要", "快", "了", "就", "马上"})


def _the_user_is(toks: list[Tok], c: int) -> bool:
    """Whether the kin word at c says what the user is, not who someone is: "Назвали Соней, я теперь тётя", "я
    стала мамой", "我现在当姑姑了", "我是姐姐" (no person "тётя" or "姑姑" of the user's)."""
    tok = toks[c]
    if tok.script == "ru":
        if not any(p.tag.case in ("nomn", "ablt") for p in morph().parse(normalize(tok.text))):
            return False  # "я маме позвонила": the mother, in the dative
        words = [normalize(t.text) for t in toks[max(0, c - 4):c]]
        while words and words[-1] in _RU_BECOMING:
            words.pop()
        return bool(words) and words[-1] == "я"
    if tok.script == "zh":
        words = [normalize(t.text) for t in toks[max(0, c - 5):c]]
        becoming = False
        while words and (words[-1] in _ZH_BECOMING or words[-1] in _ZH_BECOMING_FILLERS):
            becoming = words.pop() in _ZH_BECOMING or becoming
        return becoming and bool(words) and words[-1] in ("我", "我也")
    return False


def unnamed_kin(toks: list[Tok], tied: Sequence[bool]) -> list[Tok]:
    """The tokens with each of the user's relatives who has no name here turned into a NAME named by
    the kin word ("мама", "Mom", "妈妈"), circle Family; the OWN word before it is folded in.
    `tied[c]`: the cue at c already describes a named person ("my mom Olga"), so it is no one new.

    Right to left, so that in "отец моей жены" the wife is a person first, and the father is then
    hers, not the user's."""
    slots: list[Tok | None] = list(toks)
    for c in range(len(toks) - 1, -1, -1):
        tok = toks[c]
        if tok.kind != "CUE" or tied[c] or tok.plural or not tok.whole_word:
            continue
        kin = kin_of(strip_possessive(tok.text))
        if kin is None or (tok.cue is not None and tok.cue.concept != kin.concept):
            continue  # a kin word read as another cue ("my partner at the firm") is no relative
        view = [t for t in slots if t is not None]
        at = sum(1 for t in slots[:c] if t is not None)
        if not _users_kin(view, at) or _the_user_is(view, at):
            continue
        mention = Mention(name=kin_name(kin, tok.script or "en"), circle=_FAMILY, cue=tok.text, kin_word=True)
        # "отец моей жены": a genitive kin word after another cue word is that word's owner.
        genitive = tok.genitive and any(t is not None and t.kind in ("CUE", "OWN") for t in slots[max(0, c - 2):c])
        slots[c] = Tok("NAME", tok.text, mention=mention, possessive=tok.possessive, genitive=genitive,
                       script=tok.script)
        if c > 0 and slots[c - 1] is not None and slots[c - 1].kind == "OWN":  # type: ignore[union-attr]
            slots[c - 1] = None
    return [t for t in slots if t is not None]


# What makes a role at work one the user had: "my old manager Siddharth", "my former boss", "бывший начальник",
# "前同事周洁", "原来的领导". Only at work: "my old friend" is a friend of long standing.
_FORMER = frozenset({"former", "old", "previous", "ex", "бывший", "бывшая", "бывшего", "бывшей", "бывшему", "бывшим",
                     "бывшую", "прежний", "прежняя", "прежнего", "прежней", "前", "原", "原来的", "以前的", "之前的"})


def former_roles(toks: list[Tok]) -> None:
    """A work cue word after a word saying it was before names someone the user worked with once: circle Other,
    as a colleague who left is (`departures`); the role stays the cue's, for search ("my old boss")."""
    for c, tok in enumerate(toks):
        if tok.kind != "CUE" or tok.cue is None or tok.cue.circle not in _WORK or c == 0:
            continue
        before = normalize(toks[c - 1].text)
        if before in _FORMER or (tok.script == "zh" and before.endswith(("前", "原"))):
            tok.cue = dataclasses.replace(tok.cue, circle="Other")


def read_phrases(toks: list[Tok], context: Sequence[Mention] = ()) -> tuple[list[Tok], list[Relation]]:
    """Circles, relations, aliases and unnamed relatives of one sentence's tokens: a first reading
    tells which cue words describe a named person; the relatives left without a name become people;
    the second reading ties everything, those relatives included ("my cousin's wife Jenna")."""
    toks = pets(toks)
    former_roles(toks)
    trial = copy.deepcopy(toks)
    tie(trial, [copy.copy(m) for m in context])
    toks = unnamed_kin(toks, [t.tied for t in trial])
    relations = tie(toks, context)
    affiliations(toks)
    departures(toks, context)
    aliases(toks)
    return toks, relations
