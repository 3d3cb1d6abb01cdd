"""Russian phrasings of the user's facts about themselves.

First-person verb forms ("живу", "работаю", "говорю") name the speaker on their own, so "я" is
optional before them; values come back in the nominative through pymorphy3 ("в Москве" → Москва,
"работаю учителем" → учитель).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from profiles import morph
from profiles.keys import language_code, timezone_canonical
from profiles.rules.common import (
    Emit,
    Rule,
    RuleFact,
    SentenceFilters,
    SharedSubject,
    favorite,
    lexicon,
    one,
    run_rules,
    said_case,
    words_before,
)

CYR = "А-Яа-яЁё"
WORD = rf"[{CYR}][{CYR}\-]*"
CAP = r"(?-i:[А-ЯЁ][а-яё]+(?:-(?:[А-ЯЁ][а-яё]+|на|де|ла|он|upon))*)"
LATIN_NAME = r"(?-i:[A-Z][\w&'’.\-]*(?:\s+[A-Z][\w&'’.\-]*){0,2})"
PLACE = rf"({CAP}(?:\s+{CAP}){{0,2}}|{LATIN_NAME})"
# An employer by its name, with the kind of place it is when that follows in lower case ("в Ак Барс банке", "в Первой
# городской больнице"): the name alone read "Первая".
ORG_KIND = (r"(?-i:(?:[а-яё]+(?:ой|ей|ий|ый|ая|яя|ое|ее|ом|ем|ую|юю)\s+){0,2}(?:банк|больниц|клиник|поликлиник|школ"
            r"|гимнази|лице|университет|институт|колледж|академи|компани|фирм|завод|фабрик|магазин|ресторан|кафе"
            r"|библиотек|музе|театр|агентств|студи)[а-яё]*)")
ORG = rf"({CAP}(?:\s+{CAP}){{0,2}}(?:\s+{ORG_KIND})?|{LATIN_NAME}(?:\s+{ORG_KIND})?)"
NAME_CAP = r"(?-i:[А-ЯЁ][а-яё]+(?:-[А-ЯЁ][а-яё]+)?(?:\s+[А-ЯЁ][а-яё]+){0,2})"
NAME_ANY = rf"((?-i:[{CYR}][а-яё]+(?:\s+[А-ЯЁ][а-яё]+){{0,2}})|{LATIN_NAME})"
ADV = r"(?:(?:сейчас|теперь|уже|давно|тоже|также|пока|постоянно|вообще-то)\s+)?"
LANG_WORD = rf"(?:по-[{CYR}]+|на\s+[{CYR}]+(?:\s+языке)?|[{CYR}]+)"
TZ = (r"((?:UTC|GMT|МСК|MSK)\s*[+\-−]\s*\d{1,2}(?::?\d{2})?|[A-Za-z]+/[A-Za-z_]+(?:/[A-Za-z_]+)?|UTC|GMT|МСК|MSK"
      r"|московское\s+время)")
NUMBER_WORDS = {
    "десять": 10, "одиннадцать": 11, "двенадцать": 12, "тринадцать": 13, "четырнадцать": 14, "пятнадцать": 15,
    "шестнадцать": 16, "семнадцать": 17, "восемнадцать": 18, "девятнадцать": 19, "двадцать": 20, "тридцать": 30,
    "сорок": 40, "пятьдесят": 50, "шестьдесят": 60, "семьдесят": 70, "восемьдесят": 80, "девяносто": 90,
}
UNITS = {"один": 1, "одна": 1, "два": 2, "три": 3, "четыре": 4, "пять": 5, "шесть": 6, "семь": 7, "восемь": 8,
         "девять": 9}
SMALL_NUM = r"(?:один|одна|два|две|три|четыре|пять|шесть|семь|восемь|девять|полтора)"
NUM = r"(\d{1,3}|(?:" + "|".join(NUMBER_WORDS) + r")(?:\s+(?:" + "|".join(UNITS) + r"))?)"

OCCUPATIONS = lexicon("""
программист разработчик инженер дизайнер менеджер учитель учительница преподаватель преподавательница врач медсестра
медбрат юрист адвокат нотариус бухгалтер экономист архитектор студент студентка аспирант аспирантка школьник школьница
учёный исследователь профессор доцент писатель писательница журналист журналистка редактор художник художница музыкант
певец певица актёр актриса фотограф повар пекарь кондитер бариста официант официантка бармен водитель таксист пилот
механик электрик сантехник плотник столяр фермер военный офицер полицейский пожарный фармацевт провизор психолог
психотерапевт консультант аналитик предприниматель бизнесмен фрилансер переводчик переводчица библиотекарь кассир
продавец продавщица секретарь администратор тестировщик маркетолог рекрутер стажёр пенсионер пенсионерка домохозяйка
няня уборщик уборщица строитель сварщик шахтёр рыбак портной швея парикмахер модель танцор танцовщица спортсмен
спортсменка блогер судья дипломат священник курьер математик физик химик биолог лингвист историк философ тренер
стоматолог хирург ветеринар директор руководитель сисадмин логист менеджер воспитатель воспитательница фельдшер
акушерка медик педагог сотрудник бариста визажист стилист кинолог геолог агроном технолог конструктор
проектировщик сметчик оператор
""")
PETS = lexicon("собака собачка пёс щенок кошка кошечка кот котик котёнок хомяк хомячок попугай кролик черепаха "
                 "рыбка змея ящерица хорёк лошадь конь крыса шиншилла ёж ёжик канарейка морская свинка")
_PET_CANONICAL = {"собачка": "собака", "пёс": "собака", "кошечка": "кошка", "котик": "кот", "хомячок": "хомяк",
                  "ёжик": "ёж"}
# An animal word, with an adjective before it ("маленькая собачка"): the first word only where it ends as one, so
# that "собака по кличке Бублик" is not the phrase "собака по".
PET_PHRASE = r"(?:(?-i:[а-яё]+(?:ая|ую|ой|ый|ий|ое|ого|ые|ие|ых|их))\s+)?(?-i:[а-яё]+)"
PRONOUNS = lexicon("тебя вас его её ее их это то тебе вам меня нас всех всё все мне себя него неё нее")
STOP = lexicon("в во на с со к ко у по из за для и а но или уже тоже сейчас потому когда что который которая "
                 "которые где как очень")


def _ru_number(raw: str) -> str | None:
    if raw.isdigit():
        return raw
    parts = raw.lower().split()
    total = NUMBER_WORDS.get(parts[0], 0) + (UNITS.get(parts[1], 0) if len(parts) > 1 else 0)
    return str(total) if total else None


def _clip(raw: str) -> list[str]:
    out = []
    for word in raw.split():
        if word.lower() in STOP:
            break
        out.append(word)
    return out


def _name(raw: str) -> str | None:
    words = raw.split()
    if not words or words[0].lower() in PRONOUNS | STOP:
        return None
    name = " ".join(words)
    return name.title() if name.islower() else name


def _name_after_ya(raw: str) -> str | None:
    """"я Дмитрий", "я Сергей Иванов": only when the word is a known first name."""
    words = raw.split()
    if not words or not morph.is_given_name(words[0]):
        return None
    kept = [words[0]]
    for word in words[1:]:
        if any(("Surn" in p.tag or "Patr" in p.tag) and p.tag.case == "nomn" for p in morph.tags(word)):
            kept.append(word)
        else:
            break
    return " ".join(kept)


def _proper_nominative(word: str) -> bool:
    """A capitalised word read only as a proper noun in the nominative ("София" is a city to pymorphy3,
    "Кайла"…): no reading as a common noun, adjective or verb that a sentence could mean instead."""
    parses = morph.tags(word)
    proper = [p for p in parses if {"Name", "Surn", "Geox"} & set(p.tag.grammemes) and p.tag.case == "nomn"]
    common = [p for p in parses if not {"Name", "Surn", "Patr", "Geox", "Orgn"} & set(p.tag.grammemes)]
    return bool(proper) and not common


def _first_person_clause(text: str) -> bool:
    """", работаю в банке", ", мне 30", ", живу в Туле": the next clause goes on about the speaker."""
    match = re.match(rf"\s*[,—–]\s*(?:я\s+)?(?:(?:сейчас|уже|тоже)\s+)?([{CYR}]+)", text)
    if not match:
        return False
    word = match.group(1).lower()
    return word == "мне" or any(p.tag.POS == "VERB" and p.tag.person == "1per" and p.tag.number == "sing"
                                for p in morph.tags(word))


def _name_ya(match: re.Match[str]) -> Emit:
    """"я Дмитрий" (a known first name) at the rule's confidence. "я София, работаю…": a word read only
    as a proper noun (pymorphy3 knows София as a city) is a name when the next clause goes on about the
    speaker, less surely ("я Москва, а ты?" says where they are from)."""
    if name := _name_after_ya(match.group(1)):
        return [("name", name)]
    words = match.group(1).split()
    if len(words) == 1 and _proper_nominative(words[0]) and _first_person_clause(match.string[match.end():]):
        return [("name", words[0], 0.7)]
    return []


def _job_ablt(raw: str) -> str | None:
    """"программистом" → программист; the phrase must start in the instrumental."""
    words = _clip(raw)
    if words and words[0].lower() in OCCUPATIONS:
        return said_case(" ".join(words).lower(), raw)  # indeclinable: "работаю бариста"
    if not words or not any(p.tag.case == "ablt" for p in morph.tags(words[0])):
        return None
    return said_case(morph.phrase_to_nominative(words, ("ablt",)).lower(), raw)


def _job_nominative(raw: str, *, lexicon: bool = True) -> str | None:
    """"дизайнер интерьеров", "старший инженер", "инженер-строитель": a nominative head noun (in the
    lexicon unless an explicit phrase such as "по профессии" introduced it) and its genitive attributes."""
    words = _clip(raw)
    for i, word in enumerate(words[:2]):
        parses = [p for p in morph.tags(word) if p.tag.POS == "NOUN" and p.tag.case == "nomn"]
        heads = {p.normal_form for p in parses} | {p.normal_form.split("-")[0] for p in parses}
        if parses and (not lexicon or heads & OCCUPATIONS):
            if i == 1 and not any(p.tag.POS == "ADJF" and p.tag.case == "nomn" for p in morph.tags(words[0])):
                return None
            tail = []
            for dep in words[i + 1 :]:
                if any(p.tag.POS == "NOUN" and p.tag.case == "gent" for p in morph.tags(dep)):
                    tail.append(dep)
                else:
                    break
            return said_case(" ".join(words[: i + 1] + tail).lower(), raw)
    return None


def _place(cases: tuple[str, ...], prefer: str = "Geox") -> Callable[[str], str | None]:
    def transform(raw: str) -> str | None:
        words = raw.split()
        return morph.phrase_to_nominative(words, cases, prefer) if words else None

    return transform


# "работаю в HR": a department or a field, not an employer.
DEPARTMENTS = frozenset({"HR", "IT", "PR", "QA", "R&D", "SMM", "SEO", "BI", "DEVOPS", "SALES", "MARKETING",
                         "SUPPORT"})


def _employer(raw: str) -> str | None:
    words = raw.split()
    if not words or re.split(r"[-.,]", words[0])[0].upper() in DEPARTMENTS:
        return None
    if all(any("Geox" in p.tag for p in morph.tags(w)) for w in words if re.match(f"[{CYR}]", w)) and re.match(
        f"[{CYR}]", words[0]
    ):
        return None  # "работаю в Москве" says where, not for whom
    named = morph.phrase_to_nominative(words, ("loct", "datv"), "Orgn")
    kind = [w for w in words if w.islower()]
    if kind and named.endswith(" " + words[-1]) and len(kind) < len(words):
        # "в Ак Барс банке": a name that does not decline stopped the phrase; its kind declines on its own.
        name = words[: len(words) - len(kind)]
        return f"{morph.phrase_to_nominative(name, ('loct', 'datv'), 'Orgn')} " \
               f"{morph.phrase_to_nominative(kind, ('loct', 'datv'))}"
    return named


def _employer_accs(raw: str) -> str | None:
    """"перешёл в Яндекс": the employer in the accusative, not a city ("устроился в Москве" says where)."""
    words = raw.split()
    if not words:
        return None
    if re.match(f"[{CYR}]", words[0]) and all(any("Geox" in p.tag for p in morph.tags(w))
                                              for w in words if re.match(f"[{CYR}]", w)):
        return None
    return morph.phrase_to_nominative(words, ("accs",), "Orgn")


def _job_at_org(match: re.Match[str]) -> Emit:
    """"я дизайнер в Яндексе": the job and its employer, both or neither ("я врач в Москве" says where)."""
    job, employer = _job_nominative(match.group(1)), _employer(match.group(2))
    return [("occupation", job), ("employer", employer)] if job and employer else []


# Workplaces one quits by their kind ("уволилась из больницы"): the employer whose name holds the word.
WORKPLACES = lexicon("больница поликлиника клиника школа гимназия садик компания фирма банк университет институт "
                     "колледж академия редакция агентство магазин ресторан кафе завод фабрика офис министерство "
                     "лаборатория библиотека музей театр стартап студия")


def _ended_employer(raw: str) -> str | None:
    """"из Сбербанка" → Сбербанк, "из больницы" → больница; "из-за начальника" and "из дома" name no employer."""
    words = raw.split()
    if not words:
        return None
    if re.match(f"[{CYR}]", words[0]) and words[0][:1].islower():
        lemma = morph.singular_nominative(words[0]).lower()
        return lemma if len(words) == 1 and lemma in WORKPLACES else None
    return morph.phrase_to_nominative(words, ("gent",), "Orgn")


def _job_gent(raw: str) -> str | None:
    """"руководителя отдела", "старшего инженера" after "повысили до": a job of the lexicon in the genitive, with
    its adjective before it, in the nominative; the genitive attributes after it stay ("отдела")."""
    words = _clip(raw)
    for i, word in enumerate(words[:2]):
        noun = next((p for p in morph.tags(word) if p.tag.POS == "NOUN" and p.tag.case == "gent"
                     and p.normal_form in OCCUPATIONS), None)
        if noun is None:
            continue
        head = [noun.normal_form]
        if i == 1:
            # The adjective agrees with the job's own gender: "старшего инженера" → "старший инженер".
            adjective = next((p for p in morph.tags(words[0]) if p.tag.POS == "ADJF" and p.tag.case == "gent"), None)
            agreed = adjective.inflect({"nomn", "sing", noun.tag.gender or "masc"}) if adjective else None
            if agreed is None:
                return None
            head.insert(0, agreed.word)
        return " ".join([*head, *words[i + 1:]]).lower()
    return None


def _job_ablt_known(raw: str) -> str | None:
    """"аналитиком", "старшим аналитиком" after the employer: the instrumental phrase must end on a job of
    the lexicon, since "работаю в Сбере вторым годом" puts other instrumentals there."""
    words = _clip(raw)
    for i, word in enumerate(words):
        if any(p.tag.POS == "NOUN" and p.tag.case == "ablt" and p.normal_form in OCCUPATIONS for p in morph.tags(word)):
            return _job_ablt(" ".join(words[: i + 1]))
        if not any(p.tag.POS == "ADJF" and p.tag.case == "ablt" for p in morph.tags(word)):
            return None
    return None


def _all_nominal(raw: str) -> bool:
    """"я бухгалтер из Омска": the words between "я" and "из" are a noun phrase, not a verb
    ("я вернулся из Омска" says where they were, not where they are from); "я Женя, учительница из Перми" too."""
    words = re.findall(rf"[{CYR}][{CYR}\-]*", raw)
    return bool(words) and all(
        any(p.tag.POS in ("NOUN", "ADJF") and p.tag.case == "nomn" for p in morph.tags(w)) for w in words
    )


# Words that open a message before the speaker does ("В общем, я Марина…", "Кстати, я…").
_OPENERS = r"(?:в\s+общем|короче|кстати|итак|ну|так|привет|всем\s+привет|здравствуйте|добрый\s+день|да|ага|слушай)"
_SPEAKER_CLAUSE = re.compile(r"^\s*(?:(?:а|и|но|да)\s+)?я\b", re.IGNORECASE)
_OTHER_CLAUSE = re.compile(r"^\s*(?:(?:а|и|но)\s+)?(?:мо[йяеи]|моего|моей|он|она|оно|они|мы|ты|вы|его|её|ее|их|наш"
                           r"[а-я]*|ваш[а-я]*|тво[йяеи])\b", re.IGNORECASE)


def _speaker_before(sentence: str, pos: int, nominal: bool = False) -> bool:
    """", 34 года", ", из Казани", ", вегетарианец": a clause with no subject of its own is the speaker's when
    the clauses before it go back to one opened by "я" ("Я Тимур, 31 год, из Казани"; "…, я не ем мясо,
    вегетарианец") with no one else's clause between ("Моя дочь Вера, 7 лет" is the daughter's). `nominal`:
    those clauses must only name and describe the speaker ("я Тимур, 31 год"), since after a verb the clause
    may be about its object ("Я знаю Олега, из Казани")."""
    for clause in reversed(re.split(r"[,;:—–]", sentence[:pos])):  # the match opens on its comma
        clause = re.sub(rf"^\s*(?:{_OPENERS}\s*)+$", "", clause, flags=re.IGNORECASE)
        if not clause.strip():
            continue
        if _SPEAKER_CLAUSE.match(clause):
            rest = _SPEAKER_CLAUSE.sub("", clause).strip()
            return not nominal or _all_nominal(rest) or morph.is_given_name(rest.split()[0] if rest else "")
        if nominal and not (re.fullmatch(rf"\s*{NUM}\s*(?:лет|год|года)?\s*", clause, re.IGNORECASE)
                            or _all_nominal(clause)):
            return False
        if _OTHER_CLAUSE.match(clause) or re.search(rf"\b(?:у|к|от|для)\s+(?!меня)[{CYR}]+", clause, re.IGNORECASE):
            return False
    return False


def _clause_value(builder: Callable[[re.Match[str]], Emit], nominal: bool = False) -> Callable[[re.Match[str]], Emit]:
    def build(match: re.Match[str]) -> Emit:
        return builder(match) if _speaker_before(match.string, match.start(), nominal) else []

    return build


LANG_ADV = (r"(?:немного|немножко|чуть-чуть|чуть|слегка|свободно|хорошо|неплохо|отлично|плохо|более-менее|также|тоже"
            r"|ещё|еще)")
_LANG_ADVERBS = re.compile(rf"^{LANG_ADV}\s+", re.IGNORECASE)


def _allergens(match: re.Match[str]) -> Emit:
    """"на пыль и на кошачью шерсть": each allergen in the nominative, the repeated "на" dropped."""
    out: Emit = []
    for part in re.split(r"\s*,\s*|\s+и\s+", match.group(1).strip()):
        words = re.sub(r"^на\s+", "", part.strip(), flags=re.IGNORECASE).split()
        if not words or words[0].lower() in PRONOUNS or len(words) > 3:
            return []
        out.append(("allergies", morph.phrase_to_nominative(words, ("accs",)).lower()))
    return out


_DETAIL = {"покороче": "кратко", "короче": "кратко", "кратко": "кратко", "коротко": "кратко", "лаконично": "кратко",
           "кратче": "кратко", "подробнее": "подробно", "подробно": "подробно", "детально": "подробно",
           "развёрнуто": "подробно", "развернуто": "подробно", "детальнее": "подробно"}


def _lang(raw: str) -> str | None:
    return language_code(raw)


def _langs(match: re.Match[str]) -> Emit:
    """"английским и немного испанским": each language, its adverb dropped; a part that names no language
    ("и работаю переводчиком") is skipped."""
    parts = re.split(r"\s*,\s*|\s+и\s+", match.group(1))
    return [("languages_spoken", code) for part in parts if (code := language_code(_LANG_ADVERBS.sub("", part)))]


def _pet(match: re.Match[str]) -> Emit:
    words = match.group(1).lower().split()
    if not words or words[0] in {"нет", "не", "никаких", "ни"}:
        return []
    lemma = " ".join(morph.singular_nominative(w) for w in words).lower()
    lemma = lemma if lemma in PETS else morph.singular_nominative(words[-1]).lower()
    if lemma not in PETS:
        return []
    name = next((g for g in match.groups()[1:] if g), None)
    animal = _PET_CANONICAL.get(lemma, lemma)
    return [("pets", f"{animal} ({name})" if name else animal)]


def _object_first(key: str) -> Callable[[re.Match[str]], Emit]:
    """"Фильмы ужасов не люблю": the object opens the clause, so it must read as a noun phrase (a noun or
    adjective in the nominative/accusative/genitive first, not "Очень", "Вообще", "Тебя")."""
    def build(match: re.Match[str]) -> Emit:
        words = match.group(1).split()
        if not words or len(words) > 3 or any(w.lower() in PRONOUNS | STOP | _NEGATORS | {"я"} for w in words):
            return []
        if not any(p.tag.POS in ("NOUN", "ADJF") and p.tag.case in ("nomn", "accs", "gent") and "Apro" not in p.tag
                   for p in morph.tags(words[0])):
            return []
        # Lower-cased first: a capital opens the sentence ("Котов обожаю" is not the surname Котов).
        return [(key, morph.phrase_to_nominative([w.lower() for w in words], ("accs",)).lower())]

    return build


def _pet_accs(match: re.Match[str]) -> Emit:
    """"завели собаку Бублика": the animal in the accusative; its name after it in the accusative too, unless
    said with "по кличке" (nominative)."""
    found = _pet(match)
    if found and match.group(3):
        animal = found[0][1].split(" (")[0]
        name = morph.phrase_to_nominative([match.group(3)], ("accs",), "Name")
        return [("pets", f"{animal} ({name})")]
    return found


def _pet_age(match: re.Match[str]) -> Emit:
    """"Моей кошке Луне уже 3 года": my pet in the dative, its name, its age."""
    lemma = morph.singular_nominative(match.group(1)).lower()
    if lemma not in PETS:
        return []
    animal = _PET_CANONICAL.get(lemma, lemma)
    if not match.group(2):
        return [("pets", animal)]
    name = morph.phrase_to_nominative([match.group(2)], ("datv",), "Name")
    return [("pets", f"{animal} ({name})")]


def _likes(cases: tuple[str, ...]) -> Callable[[re.Match[str]], Emit]:
    def build(match: re.Match[str]) -> Emit:
        out: Emit = []
        for part in re.split(r"\s*,\s*|\s+и\s+", match.group(1).strip()):
            words = part.split()
            if not words or words[0].lower() in PRONOUNS or len(words) > 3:
                return []
            out.append(("likes", morph.phrase_to_nominative(words, cases).lower()))
        return out

    return build


_ID_KEYS = {"телефон": "phone_number", "номер телефона": "phone_number", "паспорт": "passport_number",
            "номер паспорта": "passport_number", "снилс": "snils", "номер карты": "card_number",
            "карта": "card_number", "номер снилс": "snils", "iban": "iban", "почта": "email", "email": "email",
            "e-mail": "email", "инн": "inn"}


def _identifier(match: re.Match[str]) -> Emit:
    key = _ID_KEYS.get(" ".join(match.group(1).lower().split()))
    return [(key, match.group(2).strip())] if key else []


def _teacher_of(subject: str | None) -> str:
    """"преподаватель английского" of "английский", "преподаватель математики" of "математику"."""
    if not subject:
        return "преподаватель"
    words = []
    for word in subject.lower().split():
        parse = next((p for p in morph.tags(word) if p.tag.case in ("accs", "nomn")), None)
        gent = parse.inflect({"gent"}) if parse is not None else None
        words.append(gent.word if gent is not None else word)
    return "преподаватель " + " ".join(words)


def _r(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


# "теперь я дизайнер", "теперь работаю в Озоне": the job of today, said against the one before.
_NOW = _r(r"\bтеперь\b")
_DONE = r"(?:недавно|уже|наконец|только\s+что|вчера|сегодня|официально)"
# Joining a job: "перешла", "устроился", and "меня взяли" ("Меня взяли в Яндекс дизайнером").
_JOINED = rf"(?:перешёл|перешел|перешла|устроил(?:ся|ась)|меня\s+(?:{_DONE}\s+)*взяли)"
# The user's move, to the end of where to ("Я недавно переехала в Казань"), and a job taken right after it ("…,
# устроилась"): the move's sentence says whose the job is.
_MOVED = rf"(?:\b(?:я|мы)\s+|^\W*(?:{_OPENERS}\W+)*)(?:{_DONE}\s+)*переехал[аи]?\s+в\s+[^,.;!?]{{1,40}}?"
_MOVED_THEN_JOINED = rf"{_MOVED}\s*,\s*(?:и\s+)?(?:{_DONE}\s+)*{_JOINED}\s+(?:работать\s+|на\s+работу\s+)?"


_RU_MONTHS_GENT = r"(?:января|февраля|марта|апреля|мая|июня|июля|августа|сентября|октября|ноября|декабря)"
# A diet the sentence names ("я не ем мясо, вегетарианец") is the value.
_NAMED_DIET = re.compile(r"вегетариан|веган|пескетариан|сыроед", re.IGNORECASE)
# "не ем мяса" is said too: the value keeps one form.
_NOT_EATEN = {"мяса": "мясо", "свинины": "свинину", "рыбы": "рыбу", "сладкого": "сладкое", "молочного": "молочное",
              "острого": "острое"}


RULES: tuple[Rule, ...] = (
    # name
    Rule("ru.name.zovut", _r(rf"\b(?:меня\s+(?:все\s+|друзья\s+|обычно\s+)?зовут|зовут\s+меня|зовите\s+меня)\s+"
                             rf"{NAME_ANY}"), one("name", transform=_name), 0.9),
    Rule("ru.name.moe_imya", _r(rf"\b(?:мо[её]\s+имя|имя\s+мо[её])\s*(?:[—–:-]|это)?\s*{NAME_ANY}"),
         one("name", transform=_name), 0.9),
    Rule("ru.name.ya", _r(rf"(?:^|[,;:!]\s*|\b(?:привет|здравствуйте|добрый\s+день)[,!]?\s+)я\s*[—–-]?\s*({NAME_CAP})"),
         _name_ya, 0.8),
    # age
    Rule("ru.age.mne", _r(rf"\bмне\s+(?:уже\s+|сейчас\s+|только\s+|всего\s+|ровно\s+)?{NUM}(?:\s*(?:лет|год|года))?"
                          rf"(?=\s*(?:$|[,.!;)]|и\b|а\b|но\b|уже\b|сейчас\b))"),
         one("age", transform=_ru_number), 0.85),
    Rule("ru.age.ispolnilos", _r(rf"\bмне\s+(?:уже\s+|недавно\s+|только\s+что\s+)?исполнил(?:ось|ся|ось\s+уже)"
                                 rf"\s+{NUM}"),
         one("age", transform=_ru_number), 0.85),
    # "Я Вера, 27 лет", "я Марина, 34 года": the age right after the speaker's first name.
    Rule("ru.age.after_name", _r(rf"\bя\s*[—–-]?\s*({NAME_CAP})\s*,\s*{NUM}(?:\s*(?:лет|год|года))?"
                                 rf"(?=\s*(?:$|[,.!;]))"),
         lambda m: [("age", a)] if _name_after_ya(m.group(1)) and (a := _ru_number(m.group(2))) else [], 0.8),
    Rule("ru.age.vozrast", _r(r"\bмой\s+возраст\s*(?:[—–:-]|это)?\s*(\d{1,3})"), one("age"), 0.9),
    # "У меня день рождения 5 ноября", "мой день рождения — 5-го ноября", "я родилась 5 ноября".
    Rule("ru.birthday", _r(rf"(?:\b(?:у\s+меня|мой)\s+день\s+рождения\s*(?:[—–:-]\s*|будет\s+)?"
                           rf"|\bя\s+родил(?:ся|ась)\s+)(\d{{1,2}})(?:-?го)?\s+({_RU_MONTHS_GENT})"),
         lambda m: [("birthday", f"{int(m.group(1))} {m.group(2).lower()}")] if 1 <= int(m.group(1)) <= 31 else [],
         0.85),
    # occupation, employer, diet
    Rule("ru.job.rabotayu", _r(rf"\b(?:я\s+)?{ADV}(?:работаю|тружусь)\s+((?:{WORD}\s+){{0,2}}{WORD})"),
         one("occupation", transform=_job_ablt), 0.9, change_when=_NOW),
    # "Я преподаю английский в школе", "преподаю математику": a teacher of the subject, as "I teach math" is a math
    # teacher; "преподаю в университете" names no subject.
    Rule("ru.job.prepodayu", _r(rf"\b(?:я\s+)?{ADV}преподаю\s+((?!в\b|на\b|уже\b){WORD}(?:\s+язык)?)?"),
         lambda m: [("occupation", _teacher_of(m.group(1)))], 0.75, change_when=_NOW),
    Rule("ru.job.po_professii", _r(rf"\b(?:по\s+профессии\s+я|я\s+по\s+профессии|моя\s+профессия)\s*(?:[—–:-]|это)?"
                                   rf"\s*((?:{WORD}\s+){{0,2}}{WORD})"),
         one("occupation", transform=lambda raw: _job_nominative(raw, lexicon=False)), 0.9, change_when=_NOW),
    Rule("ru.job.ya", _r(rf"\bя\s*[—–-]?\s*{ADV}((?:{WORD}\s+){{0,2}}{WORD})"),
         one("occupation", transform=_job_nominative), 0.85, change_when=_NOW),
    # "Я Женя, учительница из Перми": the job after the name.
    Rule("ru.job.name_comma", _r(rf"\bя\s+{NAME_CAP}\s*,\s*((?:{WORD}\s+){{0,1}}{WORD})"
                                 rf"(?=\s+(?:из|в)\s|\s*(?:$|[,.!;]))"),
         one("occupation", transform=_job_nominative), 0.8),
    # "работаю в Москве врачом", "работаю в Бостоне, медсестрой в больнице"
    Rule("ru.job.rabotayu_v_org", _r(rf"\b(?:я\s+)?{ADV}(?:работаю|тружусь)\s+в\s+(?:компании\s+)?[«\"]?{PLACE}[»\"]?"
                                     rf"\s*,?\s+"
                                     rf"((?:{WORD}\s+){{0,1}}{WORD})"),
         one("occupation", 2, transform=_job_ablt_known), 0.85, change_when=_NOW),
    Rule("ru.employer.rabotayu_v", _r(rf"\b(?:я\s+)?{ADV}работаю\s+(?:[{CYR}]+\s+){{0,3}}?в\s+(?:компании\s+)?[«\"]?"
                                      rf"{ORG}"),
         one("employer", transform=_employer), 0.85, change_when=_NOW),
    # "Работаю удалённо на Яндекс": for whom, in the accusative ("на заводе", "на себя" name no employer).
    Rule("ru.employer.rabotayu_na", _r(rf"\b(?:я\s+)?{ADV}работаю\s+(?:[{CYR}]+\s+){{0,2}}?на\s+[«\"]?{ORG}"),
         one("employer", transform=_employer_accs), 0.8, change_when=_NOW),
    # "Меня повысили до руководителя отдела": the job promoted to, in the genitive.
    Rule("ru.job.povysili", _r(rf"\bменя\s*,?\s*(?:(?:{_DONE}|кстати|наконец-то)\s*,?\s*)*повысили\s+до\s+"
                               rf"((?:{WORD}\s+){{0,2}}{WORD})"),
         one("occupation", transform=_job_gent), 0.8, change=True),
    # "Я не ем мясо": what they keep out of their food.
    Rule("ru.diet.ne_em", _r(r"\bя(?:\s*,\s*(?:кстати|вообще-то|правда)\s*,)?\s+"
                             r"(?:(?:уже|давно|вообще|совсем|больше)\s+)*не\s+ем\s+(мясо|мяса|свинину|свинины|говядину|"
                             r"рыбу|рыбы|морепродукты|сладкое|сладкого|молочное|молочного|острое|острого|глютен)(?!\w)"),
         lambda m: [] if _NAMED_DIET.search(m.string)
         else [("diet", f"не ест {_NOT_EATEN.get(m.group(1).lower(), m.group(1).lower())}")], 0.8),
    Rule("ru.diet", _r(r"\bя\s*[—–-]?\s*(?:строг(?:ий|ая)\s+)?(вегетарианец|вегетарианка|веган|веганка|пескетарианец"
                       r"|пескетарианка)\b"), one("diet", transform=str.lower), 0.85),
    Rule("ru.diet.clause", _r(r"[,;:—–]\s*(?:строг(?:ий|ая)\s+)?(вегетарианец|вегетарианка|веган|веганка|пескетарианец"
                              r"|пескетарианка)(?=\s*(?:$|[,.!;]))"),
         _clause_value(one("diet", transform=str.lower)), 0.75),
    # where they live and come from
    # "Живу с девушкой в Екатеринбурге": with whom may come between.
    Rule("ru.location.zhivu_v", _r(rf"\b(?:я\s+)?{ADV}живу\s+{ADV}(?:с\s+(?:моей\s+|моим\s+|моими\s+)?[{CYR}]+"
                                   rf"(?:\s+{CAP})?\s+)?в\s+{PLACE}"),
         one("location", transform=_place(("loct", "datv"))), 0.9, change_when=_NOW),
    # "Мы с женой живём в Казани", "Мы живём в Казани": the user's household lives there.
    Rule("ru.location.my_s", _r(rf"\bмы\s+(?:с\s+[{CYR}]+\s+)?"
                                rf"(?:(?:недавно|уже|сейчас|теперь|давно|всей\s+семь[её]й)\s+)?(?:живём\s+в\s+{PLACE}|живем\s+в\s+{PLACE})"),
         lambda m: [("location", v)] if (v := _place(("loct", "datv"))(m.group(1) or m.group(2))) else [], 0.8),
    # "Недавно переехал в Тбилиси": a past verb with no subject at the start of a sentence is the speaker's, as in
    # "перешла в Яндекс" below.
    Rule("ru.location.pereehali", _r(rf"(?:\b(?:я|мы)(?:\s+с\s+[{CYR}]+)?\s+|^\W*(?:{_OPENERS}\W+)*)"
                                     rf"(?:(?:недавно|уже|наконец|только\s+что|всей\s+семьёй|всей\s+семьей)\s+)*"
                                     rf"переехал[аи]?\s+(?:из\s+{CAP}(?:\s+{CAP})?\s+)?в\s+{PLACE}"),
         one("location", transform=_place(("accs",))), 0.8, change=True),
    # "я дизайнер в Яндексе": the job with its employer.
    Rule("ru.job.ya_v_org", _r(rf"\bя\s*[—–-]?\s*{ADV}((?:{WORD}\s+){{0,2}}?{WORD})\s+в\s+(?:компании\s+)?[«\"]?"
                               rf"{ORG}"), _job_at_org, 0.85, change_when=_NOW),
    # "я устроился программистом", "перешла в Яндекс дизайнером": a new job, said as the change it is.
    Rule("ru.job.pereshel", _r(rf"(?:\bя\s+|^\W*)(?:{_DONE}\s+)*{_JOINED}\s+"
                               rf"(?:работать\s+|на\s+работу\s+)?(?:в\s+(?:компанию\s+)?[«\"]?{PLACE}[»\"]?\s+)?"
                               rf"((?:{WORD}\s+){{0,1}}{WORD})"),
         one("occupation", 2, transform=_job_ablt_known), 0.8, change=True),
    # "я уволился из Сбербанка", "ушла из больницы": that employer is no longer the user's.
    Rule("ru.employer.uvolilsya_iz", _r(rf"(?:\bя\s+|^\W*)(?:{_DONE}\s+)*(?:уволил(?:ся|ась)|уш(?:ёл|ел|ла))\s+"
                                        rf"(?:из|с)\s+(?:компании\s+)?[«\"]?({LATIN_NAME}|{CAP}(?:\s+{CAP}){{0,2}}"
                                        rf"|[{CYR}]+)"),
         one("employer", transform=_ended_employer), 0.8, ends=True),
    # "Я на пенсии", "вышла на пенсию": no job now.
    Rule("ru.job.pensiya", _r(r"(?:\bя\s+|^\W*)(?:(?:уже|теперь|сейчас|давно|наконец|недавно|в\s+прошлом\s+году)\s+)*"
                              r"(?:на\s+пенсии|вы(?:шел|шла)\s+на\s+пенсию|ушла?\s+на\s+пенсию|ушёл\s+на\s+пенсию)"),
         lambda _m: [("occupation", "на пенсии")], 0.85, change=True),
    Rule("ru.employer.pensiya", _r(r"(?:\bя\s+|^\W*)(?:(?:уже|теперь|наконец|недавно|в\s+прошлом\s+году)\s+)*"
                                   r"(?:вы(?:шел|шла)|ушла?|ушёл)\s+на\s+пенсию"),
         lambda _m: [("employer", "")], 0.8, ends=True),
    # "я уволился", "ушла с работы": whichever employer the user had.
    Rule("ru.employer.uvolilsya", _r(rf"(?:\bя\s+|^\W*)(?:{_DONE}\s+)*(?:уволил(?:ся|ась)(?!\s+(?:из|с|со)\s)"
                                     rf"|(?:уволил(?:ся|ась)|уш(?:ёл|ел|ла))\s+с\s+работы)"),
         lambda _m: [("employer", "")], 0.8, ends=True),
    # "Переехал в Казань ради работы в Яндексе", "Мы переехали в Москву, чтобы работать в Сбере", "Переехала в Москву,
    # устроилась в Сбер": the move's reason, or the job taken after it, is the new employer (a QA pass: only the city).
    Rule("ru.employer.pereehal_rabota", _r(rf"{_MOVED}\s*,?\s+(?:(?:ради|для)\s+работы|(?:чтобы\s+)?работать)\s+в\s+"
                                           rf"(?:компании\s+)?[«\"]?{ORG}"),
         one("employer", transform=_employer), 0.8, change=True),
    Rule("ru.employer.pereehal_ustroilsya", _r(rf"{_MOVED_THEN_JOINED}(?:[{CYR}]+(?:ом|ем|ой|ей|ью)\s+)?в\s+"
                                               rf"(?:компанию\s+)?[«\"]?{PLACE}"),
         one("employer", transform=_employer_accs), 0.8, change=True),
    Rule("ru.job.pereehal_ustroilsya", _r(rf"{_MOVED_THEN_JOINED}(?:в\s+(?:компанию\s+)?[«\"]?{PLACE}[»\"]?\s+)?"
                                          rf"((?:{WORD}\s+){{0,1}}{WORD})"),
         one("occupation", 2, transform=_job_ablt_known), 0.8, change=True),
    # "Устроилась дизайнером в Яндекс": the job may come before where.
    Rule("ru.employer.pereshel", _r(rf"(?:\bя\s+|^\W*)(?:{_DONE}\s+)*{_JOINED}\s+(?:работать\s+|на\s+работу\s+)?"
                                    rf"(?:[{CYR}]+(?:ом|ем|ой|ей|ью)\s+)?в\s+(?:компанию\s+)?[«\"]?{PLACE}"),
         one("employer", transform=_employer_accs), 0.8, change=True),
    Rule("ru.hometown.iz", _r(rf"\b(?:я\s+(?:сам[а]?\s+)?(?:родом\s+)?|родом\s+)из\s+{PLACE}"),
         one("hometown", transform=_place(("gent",))), 0.85),
    Rule("ru.hometown.x_iz", _r(rf"\bя\s+((?:{WORD}\s+|{NAME_CAP}\s*,\s*){{1,2}}?)из\s+{PLACE}"),
         lambda m: [("hometown", v)] if _all_nominal(m.group(1)) and (v := _place(("gent",))(m.group(2))) else [], 0.8),
    Rule("ru.hometown.iz_clause", _r(rf"[,;:—–]\s*(?:сам[а]?\s+)?(?:родом\s+)?из\s+{PLACE}(?=\s*(?:$|[,.!;]))"),
         _clause_value(one("hometown", transform=_place(("gent",))), nominal=True), 0.75),
    Rule("ru.hometown.rodilsya", _r(rf"(?:\bя\s+|^|[,;]\s*)(?:родил(?:ся|ась)|вырос(?:ла)?)\s+в\s+{PLACE}"),
         one("hometown", transform=_place(("loct", "datv"))), 0.85),
    # language preference and languages spoken
    Rule("ru.lang_pref.imperative", _r(
        rf"\b(?:отвечай(?:те)?|пиши(?:те)?|говори(?:те)?|общайся|общайтесь|разговаривай(?:те)?|давай(?:те)?\s+"
        rf"(?:общаться|говорить|разговаривать|переписываться))(?:\s+(?:со\s+)?мн(?:ой|е))?(?:\s*,?\s*пожалуйста\s*,?)?"
        rf"(?:\s+(?:только|всегда|дальше))?\s+(на\s+[{CYR}]+(?:\s+языке)?|по-[{CYR}]+)"),
        one("language_preference", transform=_lang), 0.85),
    Rule("ru.lang_pref.predpochitayu", _r(rf"\bя\s+предпочитаю\s+(?:общаться\s+|говорить\s+|переписываться\s+)?"
                                          rf"((?:на\s+)?[{CYR}]+)(?:\s+язык[еа]?)?"),
         one("language_preference", transform=_lang), 0.85),
    Rule("ru.lang_pref.udobnee", _r(rf"\bмне\s+(?:удобнее|проще|привычнее)\s+(?:общаться\s+|читать\s+)?(на\s+[{CYR}]+"
                                    rf"|по-[{CYR}]+)"), one("language_preference", transform=_lang), 0.8),
    Rule("ru.languages.govoryu", _r(rf"\b(?:я\s+)?(?:свободно\s+|хорошо\s+|немного\s+|неплохо\s+|тоже\s+|также\s+)?"
                                    rf"говорю\s+((?:по-[{CYR}]+|на\s+[{CYR}]+)(?:(?:\s*,\s*|\s+и\s+)"
                                    rf"(?:{LANG_ADV}\s+)?(?:по-[{CYR}]+|(?:на\s+)?[{CYR}]+))*)"), _langs,
         0.85),
    Rule("ru.languages.vladeyu", _r(rf"(?:\bя\s+|^\W*|[,;]\s*)(?:(?:свободно|хорошо|неплохо|немного|отлично|также|тоже)"
                                    rf"\s+)?владею\s+((?:{LANG_ADV}\s+)?[{CYR}]+(?:(?:\s*,\s*|\s+и\s+)"
                                    rf"(?:{LANG_ADV}\s+)?[{CYR}]+)*)"),
         _langs, 0.85),
    Rule("ru.languages.rodnoy", _r(rf"\bмой\s+родной\s+язык\s*(?:[—–:-]|это)?\s*([{CYR}]+)"), _langs, 0.85),
    # time zone
    Rule("ru.tz.chasovoy_poyas", _r(rf"\bмой\s+часовой\s+пояс\s*(?:[—–:-]|это)?\s*{TZ}"),
         one("preferred_timezone", transform=timezone_canonical), 0.9),
    # "Я в часовом поясе UTC+3", "живу в часовом поясе МСК", "у меня часовой пояс UTC+5".
    Rule("ru.tz.v_poyase", _r(rf"(?:\bя\s+(?:живу\s+)?|^\W*(?:живу\s+)?)в\s+часовом\s+поясе\s*(?:[—–:-])?\s*{TZ}"
                              rf"|\bу\s+меня\s+(?:часовой\s+пояс|время)\s*(?:[—–:-]|это)?\s*{TZ}"),
         lambda m: [("preferred_timezone", v)] if (v := timezone_canonical(m.group(1) or m.group(2))) else [], 0.85),
    Rule("ru.tz.po_vremeni", _r(rf"\b(?:я\s+)?живу\s+по\s+([{CYR}]+\s+времени)"),
         one("preferred_timezone", transform=timezone_canonical), 0.85),
    # pets and likes
    # "у меня есть собака Джесси", "у меня живёт кот Барсик": a capitalised word right after the animal is its name.
    Rule("ru.pets.u_menya", _r(rf"\bу\s+(?:меня|нас)\s+(?:дома\s+)?(?:есть\s+|живёт\s+|живет\s+|живут\s+)?"
                               rf"(?:(?:один|одна|два|две|три|четыре|пять|несколько|\d+)\s+)?"
                               rf"({PET_PHRASE})(?:\s*,?\s+(?:по\s+кличке|которую\s+зовут"
                               rf"|которого\s+зовут)\s+({NAME_CAP})|\s+({NAME_CAP}))?"), _pet, 0.85),
    Rule("ru.pets.age", _r(rf"\b(?:моей|моему)\s+([{CYR}]+)(?:\s+({NAME_CAP}))?\s+(?:уже\s+|сейчас\s+|только\s+|"
                           rf"скоро\s+|недавно\s+)?(?:исполнил(?:ось|ся)\s+)?(?:\d{{1,2}}|{NUM}|{SMALL_NUM})\s*(?:лет|год|года|"
                           rf"месяц|месяца|месяцев|недел[ьи])\b"), _pet_age, 0.8),
    # "Мы завели собаку по кличке Бублик", "Недавно взяла из приюта котёнка Мусю": a pet taken in is the user's.
    Rule("ru.pets.zavela", _r(rf"(?:\b(?:я|мы)(?:\s+с\s+[{CYR}]+)?\s+|^\W*)(?:(?:недавно|наконец|вчера|уже|тоже|"
                              rf"всё-таки|все-таки)\s+)*(?:завел[аи]?|взял[аи]?\s+из\s+приюта|подобрал[аи]?|"
                              rf"приютил[аи]?)\s+(?:себе\s+)?({PET_PHRASE})"
                              rf"(?:\s*,?\s+(?:по\s+кличке|которую\s+зовут|которого\s+зовут|(?:её|ее|его)\s+зовут)\s+"
                              rf"({NAME_CAP})|\s+({NAME_CAP}))?"), _pet_accs, 0.8),
    # "Моя кошка Муся сидит на клавиатуре": the animal and its name as the subject.
    # "Наш пёс Макс заболел", "У нас есть кот": a family's pet is the user's too.
    Rule("ru.pets.moy", _r(rf"\b(?:мо(?:й|я)|наш[а]?)\s+((?-i:[а-яё]+))\s+({NAME_CAP})\b"), _pet, 0.8),
    Rule("ru.pets.zovut", _r(rf"\b(?:мо(?:ю|его|й|я)|наш(?:у|его|а)?)\s+([{CYR}]+)\s+зовут\s+({NAME_CAP})"), _pet, 0.8),
    Rule("ru.likes.lyublyu", _r(rf"\b(?:я\s+)?(?:очень\s+|просто\s+|тоже\s+|также\s+|безумно\s+)?(?:люблю|обожаю)\s+"
                                rf"([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)(?=\s*(?:$|[.!;]|\bно\b|\bпотому\b|\bкогда\b))"),
         _likes(("accs",)), 0.75),
    Rule("ru.likes.nravitsya", _r(rf"\bмне\s+(?:очень\s+)?нрав(?:ится|ятся)\s+([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)"
                                  rf"(?=\s*(?:$|[.!;]|\bно\b|\bпотому\b))"), _likes(("nomn",)), 0.75),
    # "Мой любимый цвет — зелёный", "моя любимая книга – «Мастер и Маргарита»": a favourite of a thing the English
    # key names (`FAVORITE_THINGS`). The thing stands right after "любимый", the value after a dash or "это".
    Rule("ru.favorite", _r(rf"\bмо(?:й|я|ё|е|и)\s+(?:самы[йея]\s+|самая\s+|самое\s+)?любим(?:ый|ая|ое|ые)\s+"
                           rf"([{CYR}]+(?:\s+[{CYR}]+)?)\s*(?:[—–:-]\s*(?:это\s+)?|это\s+)"
                           rf"([«\"“]?[{CYR}A-Za-z0-9][^.!?;,()]{{0,40}}?)(?=\s*(?:$|[.!?;,(]|\bно\b|\bпотому\b))"),
         lambda m: favorite(m.group(1), m.group(2)), 0.8),
    # "моё хобби — акварель", "я увлекаюсь фотографией и йогой": the key names itself.
    Rule("ru.hobbies.moe", _r(rf"\bмо(?:ё|е|и)\s+(?:главное\s+|любимое\s+)?хобби\s*(?:[—–:-]\s*(?:это\s+)?|это\s+)"
                              rf"([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)(?=\s*(?:$|[.!;(…]|\bно\b|,\s*(?:а|хотя|когда)\b))"),
         lambda m: [("hobbies", *rest) for _key, *rest in _likes(("nomn",))(m)], 0.85),
    Rule("ru.hobbies.uvlekayus", _r(rf"\b(?:я\s+)?(?:очень\s+|давно\s+|серь[её]зно\s+|тоже\s+|ещё\s+|еще\s+)?"
                                    rf"увлекаюсь\s+([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)"
                                    rf"(?=\s*(?:$|[.!;(…]|\bно\b|,\s*(?:а|хотя|когда)\b))"),
         lambda m: [("hobbies", *rest) for _key, *rest in _likes(("ablt",))(m)], 0.8),
    Rule("ru.dislikes", _r(rf"\b(?:я\s+)?(?:терпеть\s+не\s+могу|не\s+люблю|ненавижу|не\s+выношу|не\s+переношу"
                           rf"|не\s+перевариваю)\s+"
                           rf"([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)(?=\s*(?:$|[.!;]|\bно\b|\bпотому\b|\bкогда\b))"),
         lambda m: [("dislikes", *rest) for _key, *rest in _likes(("accs",))(m)], 0.75),
    Rule("ru.dislikes.object_first", _r(rf"(?:^|[,;:—–]\s*)((?:{WORD}\s+){{0,2}}?{WORD})\s+(?:я\s+)?(?:терпеть\s+не\s+"
                                        rf"могу|не\s+люблю|ненавижу|не\s+выношу)(?=\s*(?:$|[.!;,]))"),
         _object_first("dislikes"), 0.7),
    Rule("ru.likes.object_first", _r(rf"(?:^|[,;:—–]\s*)((?:{WORD}\s+){{0,2}}?{WORD})\s+(?:я\s+)?"
                                     rf"(?:очень\s+|просто\s+)?(?:люблю|обожаю)(?=\s*(?:$|[.!;,]))"),
         _object_first("likes"), 0.7),
    # "у меня ещё аллергия на пыльцу, весной ад", "на арахис и на кошек, так что в гости не хожу": the list
    # ends where a clause of why or when begins, not only at the sentence's end.
    # "У меня непереносимость лактозы": not an allergy, but what a meal must leave out all the same.
    Rule("ru.allergies.neperenosimost", _r(r"\bу\s+меня\s+(?:(?:ещё|еще|тоже|также|сильная|с\s+детства)\s+)*"
                                           r"(непереносимость\s+(?:лактозы|глютена|молочного|молока|фруктозы|гистамина"
                                           r"|пшеницы|яиц|сои|кофеина|алкоголя))"),
         lambda m: [("allergies", m.group(1).lower())], 0.85),
    Rule("ru.allergies", _r(rf"\bу\s+меня\s+(?:(?:ещё|еще|тоже|также|сильная|жуткая|страшная|с\s+детства)\s+)*"
                            rf"аллергия\s+на\s+([{CYR}a-z][{CYR}a-z\s,\-]{{1,40}}?)"
                            # "…на арахис и она заказала торт": a new clause, not a second allergen.
                            rf"(?=\s*(?:$|[.!;(…]|\bно\b|\bи\s+(?:я|ты|он|она|оно|мы|вы|они|мой|моя|моё|мои|его|её"
                            rf"|их|это|там|тут)\b|,\s*(?:так\s+что|поэтому|потому|а|хотя|из-за|когда|если"
                            rf"|особенно|даже|весной|летом|осенью|зимой|с\s+детства)\b))"), _allergens, 0.85),
    Rule("ru.detail_level", _r(rf"\b(?:отвечай(?:те)?|пиши(?:те)?|объясняй(?:те)?|рассказывай(?:те)?)(?:\s+мне)?"
                               rf"(?:\s*,?\s*пожалуйста\s*,?)?\s+({'|'.join(_DETAIL)})\b"),
         lambda m: [("detail_level", _DETAIL[m.group(1).lower()])], 0.8),
    # identifiers (refused later when they are sensitive numbers)
    Rule("ru.identifier", _r(r"\b(?:мой|моя|моё|мое)\s+(номер\s+телефона|телефон|номер\s+паспорта|паспорт|номер\s+снилс"
                             r"|снилс|номер\s+карты|карта|iban|почта|email|e-mail|инн)\s*(?:[—–:-]|это)?\s*"
                             r"([\w@.+\-№][\w@.+\- №]{2,60}?)(?=\s*(?:$|[,;!]|\.\s|\.$))"), _identifier, 0.8),
)

_QUESTION_START = re.compile(r"^\W*(?:как|где|кто|что|сколько|когда|почему|зачем|откуда|куда|какой|какая|какое"
                             r"|какие|чей|разве|неужели)\b", re.IGNORECASE)
# "если честно" ("to be honest") and "если что" ("just so you know") are not conditions.
_HYPOTHETICAL = re.compile(r"\b(?:если(?!\s+(?:честно|откровенно|что\b))|бы|б|представь(?:те)?|допустим|предположим"
                           r"|вдруг"
                           r"|мечтаю|хочу\s+стать|хотел[аи]?|когда-нибудь|будто|якобы|стану|буду|будет|перееду|раньше|когда-то|в\s+детстве"
                           r"|бывало)\b", re.IGNORECASE)
_REPORTED = re.compile(r"\b(?:сказал[аи]?|говорит|говорят|считает|считают|думает|думают|утверждает|утверждают"
                       r"|по\s+словам|сказали|пишет|пишут)\b", re.IGNORECASE)
_NEGATORS = {"не", "ни", "нет", "никогда"}


def _negated(sentence: str, pos: int) -> bool:
    """A negator just before the match, in its own clause: "я не ем мясо, вегетарианец" negates the eating only."""
    clause_start = max(sentence.rfind(mark, 0, pos + 1) for mark in ",;:—–") + 1
    if clause_start > pos:
        return False  # the match opens its clause with the comma
    return bool(set(words_before(sentence[clause_start:], pos - clause_start, 2)) & _NEGATORS)


FILTERS = SentenceFilters(
    question=lambda s: s.rstrip().endswith("?") or bool(_QUESTION_START.match(s)) or bool(
        re.search(r"\bли\b", s, re.IGNORECASE)),
    hypothetical=lambda s: bool(_HYPOTHETICAL.search(s)),
    reported=lambda s: bool(_REPORTED.search(s)),
    negated=_negated,
    new_clause=re.compile(
        # "джаз и я играю", "зелёный, а я люблю…", "но мне нравится…": a subject of its own after the conjunction;
        # a reason always. "Чёрный и белый" has none: one value.
        r"(?<![\w-])(?:и|а|но|зато|однако|хотя|ведь|поэтому|так\s+что)\s+(?:я|мы|он|она|оно|они|мне|меня|мой|моя|моё|мое"
        r"|мои)(?![\w-])|(?<![\w-])(?:потому\s+что|так\s+как)(?![\w-])|;", re.IGNORECASE),
)


# A past verb after "и" that shares the clause before it's "я": "Я переехала в Самару и устроилась в Сбер" (a past
# verb does not say its person, as "работаю" does); not after a clause that hands it to someone else ("Я думаю, моя
# сестра вышла замуж и переехала в Самару").
SHARED_SUBJECT = SharedSubject(
    predicate=_r(r"\s(?:и|а|но|а\s+потом|и\s+потом|и\s+теперь|а\s+теперь)\s+(?=(?:(?:недавно|уже|наконец|сразу|"
                 r"тоже|также|ещё|еще)\s+)?(?:устроил(?:ся|ась)|перешёл|перешел|перешла|переехал(?:а)?|"
                 r"уволил(?:ся|ась)|ушёл|ушел|ушла|поступил(?:а)?|начал(?:а)?\s+работать)(?![{CYR}]))".replace(
                     "{CYR}", CYR)),
    user_clause=_r(r"(?:^|[,:;—–])\W*(?:(?:ну|так|кстати|короче|новости|вообще)\W+)*я(?![а-яё])[^,:;—–]*$"),
    other_subject=_r(r"(?<![а-яё])(?:мо[йяеи]\w*|он|она|они|его|её|ее|их|котор\w+|что)(?![а-яё])"),
    pronoun="я",
)


def extract_sentence(sentence: str) -> list[RuleFact]:
    return SHARED_SUBJECT.run(sentence, lambda said: run_rules(said, RULES, FILTERS))
