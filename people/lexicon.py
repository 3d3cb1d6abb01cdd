"""Word lists the rule-based archivist, deduplication and people search share.

Data only. Russian words are given as dictionary forms: lookups fold case forms first (Snowball
stems for cues, pymorphy3 for names). Chinese cues are matched as substrings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path


def _wordlist(text: str) -> frozenset[str]:
    return frozenset(text.split())


@dataclass(frozen=True)
class Cue:
    """A word that says how the user relates to someone ("my boss Tom") or two people relate."""

    concept: str  # a language-neutral tag for search: "role:boss" matches начальник and 老板 alike
    circle: str  # the user's circle when the cue is the user's ("my boss")
    relation: str  # PersonRelation.Kind when the cue has another person as possessor ("Tom's boss")
    en: tuple[str, ...] = ()
    ru: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()
    # Roles related but not one ("role:doctor" and "role:nurse" are both "role:medical"): people search
    # finds the related one for the other, below the same role said with another word or in another language.
    family: str = ""


F, WI, FR, WO, OT = "Family", "Work_Inner", "Friends", "Work_Outer", "Other"

# --- kin without a name -----------------------------------------------------------------------------
# The user's own relative mentioned only by the kin word ("my mom", "мама", "妈妈") is a person too,
# named by the first word of the language the user wrote in. Every word of one entry is the same
# person, in any language and (Russian) any case form, so dedup treats "Mom", "мамой" and "妈妈" as
# one. Only true synonyms share an entry: Chinese names the elder and younger sibling and the two
# grandmothers apart, Russian the wife's and the husband's mother (тёща, свекровь), so those are
# entries of their own. Every word here is also a family cue (CUES).


@dataclass(frozen=True)
class Kin:
    id: str  # the identity key: name_keys carry "kin:<id>"
    concept: str  # the family cue it belongs to (its circle and relation)
    en: tuple[str, ...] = ()
    ru: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()
    # One per user (a mother, a father, a spouse): the kin word is also an alias of the person once
    # the user names her ("my mom Olga"), so a later "мама" is Olga.
    unique: bool = False


KIN: tuple[Kin, ...] = (
    Kin("mother", "kin:mother", ("Mom", "mother", "mum", "mommy", "mummy", "mama", "momma"),
        ("мама", "мать", "мамочка", "матушка", "мамуля", "маман"), ("妈妈", "母亲", "老妈", "妈", "妈咪"),
        unique=True),
    Kin("father", "kin:father", ("Dad", "father", "daddy", "papa"),
        ("папа", "отец", "батя", "папочка", "папуля", "батюшка"), ("爸爸", "父亲", "老爸", "爸", "爹"), unique=True),
    Kin("wife", "kin:spouse", ("Wife", "wifey"), ("жена", "супруга", "жёнушка", "женушка"),
        ("老婆", "妻子", "太太", "媳妇"), unique=True),
    Kin("husband", "kin:spouse", ("Husband", "hubby"), ("муж", "супруг", "муженёк", "муженек"), ("老公", "丈夫"),
        unique=True),
    Kin("spouse", "kin:spouse", ("Spouse",), (), ("爱人",)),
    Kin("girlfriend", "kin:partner", ("Girlfriend", "gf"), (), ("女朋友", "女友")),
    Kin("boyfriend", "kin:partner", ("Boyfriend", "bf"), (), ("男朋友", "男友")),
    # A partner is family ("my partner Daniel"); "business partner" and the like are cues of their own
    # (the longer phrase wins), and "our partner", "partners", "my partner at the firm" are work
    # (EN_PARTNER_NOT_KIN_BEFORE, EN_PARTNER_AT_WORK_AFTER).
    Kin("partner", "kin:partner", ("Partner", "life partner", "domestic partner"), (), ("伴侣",)),
    Kin("fiancee", "kin:partner", ("Fiancée", "fiancee"), ("невеста",), ("未婚妻",)),
    Kin("fiance", "kin:partner", ("Fiancé", "fiance"), ("жених",), ("未婚夫",)),
    Kin("son", "kin:child", ("Son",), ("сын", "сынок", "сынишка", "сыночек"), ("儿子",)),
    Kin("daughter", "kin:child", ("Daughter",), ("дочь", "дочка", "доченька", "дочурка"), ("女儿", "闺女")),
    Kin("brother", "kin:sibling", ("Brother", "bro"), ("брат", "братишка", "братик", "братец")),
    Kin("sister", "kin:sibling", ("Sister", "sis"), ("сестра", "сестрёнка", "сестренка", "сестричка")),
    Kin("elder_brother", "kin:sibling", zh=("哥哥",)),
    Kin("younger_brother", "kin:sibling", zh=("弟弟",)),
    Kin("elder_sister", "kin:sibling", zh=("姐姐",)),
    Kin("younger_sister", "kin:sibling", zh=("妹妹",)),
    Kin("grandmother", "kin:grandparent", ("Grandma", "grandmother", "granny", "gran", "nana", "grandmom"),
        ("бабушка", "бабуля", "бабуленька")),
    Kin("grandfather", "kin:grandparent", ("Grandpa", "grandfather", "granddad", "grandad", "gramps"),
        ("дедушка", "дед", "деда", "дедуля")),
    Kin("grandmother_paternal", "kin:grandparent", zh=("奶奶",)),
    Kin("grandfather_paternal", "kin:grandparent", zh=("爷爷",)),
    Kin("grandmother_maternal", "kin:grandparent", zh=("外婆", "姥姥")),
    Kin("grandfather_maternal", "kin:grandparent", zh=("外公", "姥爷")),
    Kin("aunt", "kin:relative", ("Aunt", "auntie", "aunty"), ("тётя", "тетя", "тётушка", "тетушка", "тётка", "тетка")),
    Kin("uncle", "kin:relative", ("Uncle",), ("дядя", "дядюшка")),
    Kin("aunt_paternal", "kin:relative", zh=("姑姑", "姑妈")),
    Kin("aunt_maternal", "kin:relative", zh=("姨妈",)),
    Kin("aunt_maternal_younger", "kin:relative", zh=("小姨",)),
    Kin("uncle_paternal_younger", "kin:relative", zh=("叔叔",)),
    Kin("uncle_paternal_elder", "kin:relative", zh=("伯伯", "伯父")),
    Kin("uncle_maternal", "kin:relative", zh=("舅舅",)),
    Kin("cousin", "kin:relative", ("Cousin",), ("кузен", "кузина")),
    Kin("cousin_elder_brother", "kin:relative", zh=("表哥", "堂哥")),
    Kin("cousin_younger_brother", "kin:relative", zh=("表弟", "堂弟")),
    Kin("cousin_elder_sister", "kin:relative", zh=("表姐", "堂姐")),
    Kin("cousin_younger_sister", "kin:relative", zh=("表妹", "堂妹")),
    Kin("niece", "kin:relative", ("Niece",), ("племянница",), ("侄女", "外甥女")),
    Kin("nephew", "kin:relative", ("Nephew",), ("племянник",), ("侄子", "外甥")),
    Kin("grandson", "kin:relative", ("Grandson",), ("внук", "внучок"), ("孙子", "外孙")),
    Kin("granddaughter", "kin:relative", ("Granddaughter",), ("внучка", "внученька"), ("孙女", "外孙女")),
    # In-laws: Russian and Chinese say whose parent or sibling, so each word is a relative of its own.
    Kin("mother_in_law", "kin:relative", ("Mother-in-law",)),
    Kin("father_in_law", "kin:relative", ("Father-in-law",)),
    Kin("wifes_mother", "kin:relative", ru=("тёща", "теща"), zh=("岳母", "丈母娘")),
    Kin("wifes_father", "kin:relative", ru=("тесть",), zh=("岳父", "老丈人")),
    Kin("husbands_mother", "kin:relative", ru=("свекровь",), zh=("婆婆",)),
    Kin("husbands_father", "kin:relative", ru=("свёкор", "свекор"), zh=("公公",)),
    Kin("sister_in_law", "kin:relative", ("Sister-in-law",)),
    Kin("brother_in_law", "kin:relative", ("Brother-in-law",)),
    Kin("husbands_sister", "kin:relative", ru=("золовка",), zh=("小姑子", "大姑子")),
    Kin("wifes_sister", "kin:relative", ru=("свояченица",), zh=("小姨子",)),
    Kin("brothers_wife", "kin:relative", ru=("невестка",)),
    Kin("elder_brothers_wife", "kin:relative", zh=("嫂子",)),
    Kin("younger_brothers_wife", "kin:relative", zh=("弟媳",)),
    Kin("wifes_brother", "kin:relative", ru=("шурин",), zh=("小舅子",)),
    Kin("husbands_brother", "kin:relative", ru=("деверь",), zh=("小叔子", "大伯子")),
    Kin("sisters_husband", "kin:relative", ru=("зять",)),
    Kin("elder_sisters_husband", "kin:relative", zh=("姐夫",)),
    Kin("younger_sisters_husband", "kin:relative", zh=("妹夫",)),
    Kin("stepmother", "kin:relative", ("Stepmom", "stepmother"), ("мачеха",), ("继母", "后妈")),
    Kin("stepfather", "kin:relative", ("Stepdad", "stepfather"), ("отчим",), ("继父",)),
    Kin("stepsister", "kin:relative", ("Stepsister", "half-sister", "half sister"), ("сводная сестра",)),
    Kin("stepbrother", "kin:relative", ("Stepbrother", "half-brother", "half brother"), ("сводный брат",)),
    # Godparents and godchildren, and кум / кума (a child's godparent to its parents): family by choice.
    Kin("godmother", "kin:relative", ("Godmother",), ("крёстная", "крестная"), ("干妈",)),
    Kin("godfather", "kin:relative", ("Godfather",), ("крёстный", "крестный"), ("干爹",)),
    Kin("goddaughter", "kin:relative", ("Goddaughter",), ("крестница",), ("干女儿",)),
    Kin("godson", "kin:relative", ("Godson",), ("крестник",), ("干儿子",)),
    Kin("kum", "kin:relative", ru=("кум",)),
    Kin("kuma", "kin:relative", ru=("кума",)),
)


# Family cues: the kin words above, by concept, plus words that name no one person ("kid", "parents",
# "родители", "爸妈": several people, or not the same one each time).
_FAMILY: tuple[tuple[str, str, tuple[str, ...], tuple[str, ...], tuple[str, ...]], ...] = (
    ("kin:mother", "parent", (), (), ()),
    ("kin:father", "parent", (), (), ()),
    ("kin:parents", "parent", ("parents",), ("родители", "родитель"), ("爸妈", "父母")),
    ("kin:spouse", "spouse", (), (), ()),
    ("kin:partner", "partner", (), ("девушка", "парень", "молодой человек"), ("对象",)),
    ("kin:child", "child", ("kid", "child", "children"), ("ребёнок", "ребенок"), ("孩子",)),
    ("kin:sibling", "sibling", ("twin",), (), ()),
    ("kin:grandparent", "relative", ("grandparent",), (), ()),
    ("kin:relative", "relative", ("relative",), ("родственник", "родственница", "двоюродный брат",
                                                  "двоюродная сестра"), ("亲戚",)),
)


# Words for a partner that as often mean a girl, a guy or an object ("девушка Катя из магазина", "какой-то
# парень", "合作对象"): the user's partner only when the user owns the word right there ("моя девушка Катя",
# "мой новый парень Дима", "у меня есть парень", "парень мой", "我对象张伟"). Dictionary forms.
PARTNER_WORDS_NEED_OWN = frozenset({"девушка", "парень", "молодой человек", "对象"})


def _family_cues() -> tuple[Cue, ...]:
    out = []
    for concept, relation, en, ru, zh in _FAMILY:
        kin = [k for k in KIN if k.concept == concept]
        words = [(tuple(w.lower() for k in kin for w in k.en) + en), tuple(w for k in kin for w in k.ru) + ru,
                 tuple(w for k in kin for w in k.zh) + zh]
        out.append(Cue(concept, "Family", relation, *(tuple(dict.fromkeys(ws)) for ws in words)))
    return tuple(out)



CUES: tuple[Cue, ...] = (
    *_family_cues(),
    # --- close work ---
    Cue("role:boss", WI, "manager",
        ("boss", "manager", "supervisor", "teamlead", "team lead", "tech lead", "chief", "director", "cto",
         "ceo", "line manager", "mentor", "advisor", "adviser"),
        ("начальник", "руководитель", "шеф", "босс", "тимлид", "директор", "начальница", "руководительница",
         "шефиня", "заведующий", "заведующая", "начальство", "научрук", "научный руководитель", "наставник",
         "наставница", "завотделом", "завлаб", "завкафедрой"),
        ("老板", "领导", "上司", "经理", "主管", "组长", "总监", "导师")),
    Cue("role:colleague", WI, "colleague",
        ("colleague", "coworker", "co-worker", "teammate", "cofounder", "co-founder", "workmate",
         "business partner"),
        ("коллега", "сослуживец", "сослуживица", "напарник", "напарница", "сотрудник", "сотрудница",
         "сооснователь", "компаньон", "компаньонка", "партнёр по бизнесу", "партнер по бизнесу"),
        ("同事", "搭档", "合伙人", "队友")),
    Cue("role:report", WI, "report", ("intern", "subordinate", "direct report", "deputy", "assistant"),
        ("подчинённый", "подчинённая", "подчиненный", "подчиненная", "стажёр", "стажер", "зам", "заместитель",
         "заместительница", "помощник", "помощница", "ассистент", "ассистентка"),
        ("下属", "实习生", "助理", "副手")),
    # --- distant work ---
    Cue("role:client", WO, "other", ("client", "customer"), ("клиент", "клиентка", "заказчик", "заказчица"),
        ("客户", "甲方", "合作方")),
    Cue("role:vendor", WO, "other", ("vendor", "contractor", "supplier", "freelancer", "consultant", "sales rep",
                                     "account manager", "account executive"),
        ("подрядчик", "поставщик", "фрилансер", "консультант"), ("供应商", "承包商", "顾问", "乙方")),
    Cue("role:recruiter", WO, "other", ("recruiter", "hr", "headhunter", "investor"),
        ("рекрутер", "эйчар", "инвестор", "кадровик"), ("猎头", "招聘", "投资人")),
    # --- friends ---
    Cue("role:friend", FR, "friend", ("friend", "buddy", "pal", "bestie", "bff", "mate", "best friend",
                                      "tennis partner", "dance partner", "running partner", "climbing partner",
                                      "gym partner", "sparring partner"),
        ("друг", "подруга", "подружка", "приятель", "приятельница", "дружище", "кореш", "корефан", "дружбан",
         "друган", "дружок"),
        ("朋友", "好朋友", "闺蜜", "哥们", "好友", "发小", "死党")),
    Cue("role:classmate", FR, "friend", ("classmate", "roommate", "roomie", "flatmate", "schoolmate", "groupmate",
                                         "lab partner", "study partner"),
        ("одноклассник", "одноклассница", "однокурсник", "однокурсница", "сокурсник", "сокурсница",
         "одногруппник", "одногруппница", "однокашник", "сосед по комнате", "соседка по комнате"),
        ("同学", "室友", "舍友", "同桌")),
    # --- others ---
    Cue("role:neighbour", OT, "other", ("neighbour", "neighbor"), ("сосед", "соседка"), ("邻居",)),
    Cue("role:clergy", OT, "other", ("pastor", "priest", "rabbi", "imam", "vicar", "chaplain"),
        ("священник", "батюшка", "пастор", "раввин", "имам"), ("牧师", "神父")),
    # Medical roles: related, not one (a nurse is no doctor, "терапевт" is a GP, "therapist" is not).
    Cue("role:doctor", OT, "other", ("doctor", "physician"), ("врач", "доктор", "терапевт"), ("医生", "大夫"),
        family="role:medical"),
    Cue("role:nurse", OT, "other", ("nurse",), ("медсестра",), ("护士",), family="role:medical"),
    Cue("role:dentist", OT, "other", ("dentist",), ("стоматолог",), ("牙医",), family="role:medical"),
    Cue("role:therapist", OT, "other", ("therapist",), ("психолог",), family="role:medical"),
    Cue("role:vet", OT, "other", ("vet",), family="role:medical"),
    Cue("role:teacher", OT, "other", ("teacher", "tutor", "coach", "trainer", "professor", "instructor"),
        ("учитель", "учительница", "репетитор", "тренер", "преподаватель", "профессор", "препод", "классная",
         "классный руководитель"), ("老师", "教练", "教授", "班主任", "家教")),
    Cue("role:service", OT, "other", ("landlord", "lawyer", "accountant", "nanny", "barber", "plumber",
                                      "financial advisor", "financial adviser"),
        ("арендодатель", "юрист", "адвокат", "бухгалтер", "няня", "парикмахер", "сантехник"),
        ("房东", "律师", "会计", "保姆")),
    # An ex is no longer family: the longer word wins over the kin word inside it ("ex-wife", "前妻").
    Cue("role:ex", OT, "other", ("ex", "ex-wife", "ex-husband", "ex-girlfriend", "ex-boyfriend", "ex-partner"),
        ("бывший муж", "бывшая жена", "бывший парень", "бывшая девушка"), ("前妻", "前夫", "前男友", "前女友", "前任")),
)


@dataclass(frozen=True)
class VerbCue:
    """A verb that states how the user and someone relate: "I report to Priya", "мы с Лёшей дружим",
    "我跟刘伟一起工作". English phrases are a verb (matched by its stem, so "works", "worked") and the
    word after it; Russian ones are dictionary forms; Chinese ones substrings."""

    concept: str
    circle: str
    en: tuple[str, ...] = ()
    ru: tuple[str, ...] = ()
    zh: tuple[str, ...] = ()
    # The user must take part ("I", "мы с", "我和", a first-person verb): "Tom works with Ann" says
    # nothing about the user. Russian "руководит отделом Х" does not need it, as "начальник отдела Х".
    needs_user: bool = True
    # The verb ends the relationship ("Tom and I broke up"): its circle replaces the one a cue word gave in the
    # same sentence ("my boyfriend Tom and I broke up"), and only the user's own counterpart takes it
    # ("Tom and I", "I broke up with Tom", "Tom broke up with me"; not "I heard Tom broke up with Anna").
    ends: bool = False


VERB_CUES: tuple[VerbCue, ...] = (
    VerbCue("role:colleague", WI, ("work with", "work together", "work alongside"), ("работать", "сотрудничать"),
            ("一起工作", "一起上班", "共事")),
    VerbCue("role:boss", WI, ("report to", "work for", "work under", "manage", "supervise", "lead"),
            ("подчиняться",), ("管我们", "带我们")),
    VerbCue("role:boss", WI, ru=("руководить", "руководство", "возглавлять"), needs_user=False),
    VerbCue("role:friend", FR, ("friends with",), ("дружить",)),
    # "Встретила Наташку, мы вместе учились в школе": who studied with the user is a classmate.
    VerbCue("role:classmate", FR, ("study together", "study with"), ("учиться",), ("一起上学", "一起读书")),
    VerbCue("kin:spouse", F, ("married to", "engaged to"), ("женатый", "замужем", "жениться"), ("嫁给",)),
    # A break-up or a divorce makes an ex, no longer family: Other, as "my ex Tom" (the role:ex cue).
    VerbCue("role:ex", OT, ("break up", "broke up", "broken up", "split up", "divorce"), ("расстаться", "развестись"),
            ("分手", "离婚"), ends=True),
)

# English cue words that are plural though listed ("my parents", "my children"): several people.
EN_PLURAL_CUE_WORDS = frozenset({"parents", "children"})
# "partner" is no kin after "our" ("our partner Globex": a business's) nor in the plural ("partners"), and
# a colleague before "at" ("my partner at the firm").
EN_PARTNER_NOT_KIN_BEFORE = frozenset({"our"})
EN_PARTNER_AT_WORK_AFTER = frozenset({"at"})

# Words that signal the user's own side of a cue ("my boss"), not someone else's ("Tom's boss").
EN_OWN = frozenset({"my", "our"})
RU_OWN = frozenset({"мой", "моя", "моё", "мое", "мои", "моего", "моей", "моему", "моим", "моих", "мою", "моем",
                    "моём", "наш", "наша", "наши", "нашего", "нашей", "нашему", "нашим", "наших", "нашу"})

# Titles before a surname or a full name.
# Titles a person is called by with their surname ("Dr. Green"), as written; kin titles ("Uncle Bob") are cue words.
EN_SURNAME_TITLES = {"mr": "Mr.", "mrs": "Mrs.", "ms": "Ms.", "miss": "Miss", "dr": "Dr.", "prof": "Prof.",
                     "coach": "Coach"}
EN_TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "prof", "uncle", "aunt", "auntie", "grandma", "grandpa",
                       "sir", "madam", "coach"})

# Departments of a workplace, as said after "from" / "из": "Anna from accounting", "Веня из бухгалтерии".
DEPARTMENTS = frozenset({
    "hr", "accounting", "finance", "payroll", "marketing", "sales", "legal", "it", "engineering", "procurement",
    "compliance", "recruiting", "ops", "operations", "support", "qa", "design", "product",
    "бухгалтерии", "кадров", "маркетинга", "продаж", "снабжения", "юротдела", "техподдержки", "hr-отдела",
})

# What only a person has, after a capitalised word's "'s": "Priyanka's wedding" names someone ("Apple's launch" no one).
EN_PERSON_EVENTS = frozenset({
    "wedding", "birthday", "funeral", "graduation", "retirement", "engagement", "divorce", "surgery", "pregnancy",
    "bday", "shower", "bachelorette", "bachelor", "christening", "baptism", "housewarming", "memorial",
})

# What one has "with" a person only, before a capitalised word: "a long call with Tariq", "lunch with Ines".
# No "meeting" ("a meeting with Stripe") or "game" ("a game with Arsenal"): a company or a team has those too.
EN_TIME_WITH = frozenset({
    "call", "lunch", "dinner", "breakfast", "brunch", "coffee", "drinks", "beers", "date", "hangout", "sleepover",
    "playdate", "chat", "catch-up", "catchup", "heart-to-heart", "facetime", "walk", "dance", "picnic",
})

# Verbs after a capitalised word that make it a person ("Kowalski said").
EN_PERSON_VERBS = frozenset({
    "said", "says", "told", "tells", "asked", "asks", "called", "calls", "texted", "texts", "wrote", "writes",
    "thinks", "thought", "wants", "wanted", "mentioned", "invited", "suggested", "promised", "emailed",
    "messaged", "replied", "answered", "complained", "laughed", "agreed", "insists", "insisted", "believes",
    "recommended", "admitted", "explained", "visited", "helped", "hired", "fired", "married", "joined",
})
RU_PERSON_VERBS = frozenset({
    "сказать", "говорить", "написать", "позвонить", "спросить", "попросить", "предложить", "считать",
    "рассказать", "ответить", "обещать", "пообещать", "думать", "хотеть", "пригласить", "посоветовать",
})

# Capitalised words that are not people (English). Sentence-initial function words are filtered
# separately: only gazetteer names, cued or titled words and known people start a sentence as names.
EN_NON_NAMES = _wordlist("""
i i'm i've i'd i'll im ive id ok okay yes no hi hey hello thanks thank please sorry wow oh well so
monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday tonight weekend
january february march april may june july august september october november december
christmas easter thanksgiving halloween ramadan
english russian chinese german french spanish italian japanese korean american british european asian
google apple microsoft amazon facebook meta telegram whatsapp slack zoom teams github gitlab jira notion
uber netflix spotify youtube instagram twitter linkedin tesla iphone android windows linux python java
london paris berlin moscow beijing shanghai tokyo york new san francisco boston chicago rome madrid
russia china germany france spain italy japan usa america england europe asia canada mexico india
the a an this that these those it its my our your his her their we you he she they there here what
when where why how who which if but and or because also just still maybe anyway actually
mom dad mum grandma grandpa boss doc god lord project team office covid day days
""")

# A compact gazetteer of first names written in Latin script: common English ones plus the
# international names English-speaking users mention most. Kept by hand, and trusted where a larger list
# is not: a sentence's first word, a name typed in lower case ("my bf jake").
EN_COMMON_FIRST_NAMES = _wordlist("""
aaron abby abigail adam adrian aidan alan albert alex alexander alexandra alexis alfred alice alicia alison
amanda amber amelia amy andrea andrew andy angela anna anne annie anthony antonio ari ariana arthur ashley
austin ava barbara ben benjamin beth betty bill billy blake bob bobby bonnie brad bradley brandon brenda brian
bridget brittany bruce bryan caleb cameron carl carlos carol caroline carrie catherine charles charlie charlotte
chelsea cheryl chloe chris christian christina christine christopher cindy claire clara colin connor craig
cynthia dan dana daniel danielle danny david dean debbie deborah dennis derek diana diane dmitri dmitry dominic donald
donna doris dorothy doug douglas dylan ed eddie edward elena eli elijah elizabeth ella ellen emily emma eric erica
erin ethan eugene eva evan evelyn fiona frank fred gabriel gary george gerald gina grace greg gregory hannah
harold harry heather helen henry holly howard ian igor isaac isabel isabella ivan jack jackie jacob jake james
jamie jane janet jason jeff jeffrey jen jennifer jenny jeremy jerry jess jessica jill jim jimmy joan joe joel john
johnny jon jonathan jordan jose joseph josh joshua joyce juan judy julia julian julie justin karen kate katherine
kathleen kathy katie keith kelly ken kenneth kevin kim kimberly kyle larry laura lauren leah lee leo leon liam
lily linda lisa liz logan louis louise lucas lucy luis luke lydia madison maggie marco margaret maria marie marina
mark martha martin mary mason matt matthew max megan melissa mia michael michelle mike mila mohammed molly monica
nancy natalie natasha nathan nicholas nick nicole nikita nina noah olga oliver olivia oscar owen pablo pam pamela
patricia patrick paul paula peter phil philip rachel ralph randy raj rebecca richard rick rob robert robin roger
ron ronald rose ruby russell ruth ryan sally sam samantha samuel sandra sara sarah scott sean sergei sergey
sharon shawn sofia sophia sophie stacy stan stephanie stephen steve steven sue susan tammy tanya taylor ted terry
theresa thomas tim timothy tina todd tom tommy tony tracy tyler valerie vanessa victor victoria vincent walter
wayne wendy will william yuri zach zachary zoe wei li ming hiroshi yuki kenji priya rahul arjun ahmed ali omar
fatima aisha hans klaus pierre jean luca giulia sven lars ingrid olaf pedro miguel diego sasha misha masha
katya lena olya dasha pasha kostya zhenya vova petya kolya
dave davey meg becky pat don pete chad hank walt gus jun mei hiro ana lucia abe archie barry bert bev brett brooke
cassie chuck cliff clint cody curt dale darren dawn deb del dom drew dustin earl eileen elle elliot elsa emma ernie
felix fran frankie gail gabe gavin gemma gene glen glenn gordon hal harriet hayley herb irene iris isla jade jan
jared jay jed jenna jo jodie joey josie kara karl kat kay kelsey kirk kris kurt lance leila lenny les lexi lila
lou lyle mandy marcus marge marty mel mick mickey mindy mitch moira monty nate ned neil nell nora norm olly ollie
pam patty penny percy pippa quinn ray reggie rex rhys rod ross roy russ sadie shane shelby sid simon skye stu
suzie tara tess tessa tom tommy trish trevor troy val vera vic vicky viv wes willow
""")

FIRST_NAMES_TABLE = Path(__file__).resolve().parents[1] / "data" / "names" / "first_names_latin.txt"


def _first_names_table(path: Path = FIRST_NAMES_TABLE) -> frozenset[str]:
    """The shipped gazetteer (`manage.py first_names_build`: Faker's names of the English-speaking world and
    the languages its users mention most, less the words English uses otherwise)."""
    with path.open(encoding="utf-8") as fh:
        return frozenset(w for line in fh if (w := line.strip()) and not w.startswith("#"))


# Every Latin-script first name the archivist knows: the common ones and the gazetteer ("Ellie", "Rita",
# "Ravi" were no one mid-sentence without a cue).
EN_FIRST_NAMES = EN_COMMON_FIRST_NAMES | (_first_names_table() - EN_NON_NAMES)


# English first names that are also ordinary words: names only when not sentence-initial or when
# a cue, title or verb supports them.
EN_AMBIGUOUS_NAMES = frozenset({"will", "mark", "bill", "rose", "grace", "max", "may", "june", "april", "rob",
                                "sue", "pat", "jack", "dean", "eve", "hope", "joy", "robin", "frank", "ken",
                                "lee", "sam", "ted", "tim", "don", "chuck", "cliff", "dawn", "drew", "gene", "gus",
                                "hal", "jade", "jan", "jay", "kat", "kay", "lance", "les", "lou", "mel", "mick",
                                "ned", "neil", "nell", "norm", "penny", "ray", "rex", "rod", "ross", "roy", "russ",
                                "sid", "skye", "val", "vic", "wes", "willow", "iris", "herb", "glen", "dale", "earl",
                                "percy", "quinn", "troy", "mandy", "patty", "pippa", "vera"})

EN_NAME_PARTICLES = frozenset({"van", "von", "de", "der", "da", "di", "del", "la", "le", "bin", "al"})

# Names that are part of a place's or an institution's name: after a prefix ("St Mary", "Mount Pleasant",
# "Lake Louise") or before a noun of places ("Lincoln High School", "Grace Church", "Victoria Station").
EN_PLACE_PREFIXES = frozenset({"st", "saint", "ste", "mount", "mt", "fort", "ft", "lake", "cape", "port", "san",
                               "santa", "santo"})
# A capitalised kin word before a name, owned by no one, is how a priest, nun or monk is called: "Father Declan".
EN_CLERGY_TITLES = frozenset({"father", "sister", "brother", "mother"})
# What a short phrase of where opens between a cue word and its name: "My mentor at work, Oluwaseun".
WHERE_PREPOSITIONS = frozenset({"at", "from", "in", "on", "на", "из", "в", "с"})
# A work a name run stands before is by someone famous, not someone the user knows: "the new Wes Anderson movie",
# "a Taylor Swift concert", "that Stephen King novel". No word that is also a verb after a subject ("Anna books
# the tickets", "Tom films the kids").
EN_WORK_NOUNS = frozenset({
    "movie", "movies", "film", "album", "albums", "song", "songs", "novel", "novels", "documentary", "biopic",
    "concert", "tour", "podcast", "musical", "exhibition", "retrospective",
})

EN_PLACE_NOUNS = frozenset({
    "hospital", "clinic", "school", "high", "elementary", "academy", "college", "university", "institute",
    "church", "cathedral", "chapel", "abbey", "temple", "mosque", "street", "st", "road", "rd", "avenue", "ave",
    "lane", "drive", "boulevard", "blvd", "square", "park", "station", "airport", "hotel", "inn", "bridge",
    "mall", "library", "museum", "gallery", "stadium", "arena", "theatre", "theater", "hall", "center",
    "centre", "bank", "county", "beach", "valley", "river", "island", "falls", "mountain", "canyon",
    # a company's legal form ("Globex Inc", "Acme Ltd")
    "inc", "llc", "ltd", "corp", "corporation", "gmbh", "plc",
})
# Capitalised inside a name run these are surnames as often as places ("Tom Hall", "Jimin Park").
EN_PLACE_NOUNS_ALSO_SURNAMES = frozenset({"hall", "park", "lane", "bank", "church", "bridge", "beach", "street",
                                          "drive", "inn", "river", "falls", "high"})

# --- the life of an inner circle ------------------------------------------------------------------
# Words by which a question speaks of the part of life an inner circle belongs to, though it names no one in
# it: "Где я работаю?", "how is work?", "我在哪里上班？" ask about the boss and the colleagues before the
# daughter; "how is the family?", "как дела у родных?", "家里怎么样？" about the family. Read by the context's
# inner-circle order (`people.selectors.circle_topic_terms`); the words are analysed as queries are.
CIRCLE_TOPIC_WORDS: dict[str, tuple[str, ...]] = {
    "Work_Inner": (
        "work", "works", "working", "job", "jobs", "office", "career", "company", "workplace", "colleague",
        "colleagues", "coworker", "coworkers", "boss", "manager", "team",
        "работа", "работы", "работе", "работу", "работаю", "работаешь", "работает", "работать", "работал",
        "работала", "служба", "службе", "офис", "офисе", "карьера", "компания", "компании", "коллега", "коллеги",
        "коллегами", "начальник", "начальница", "шеф", "команда", "команде",
        "工作", "上班", "公司", "单位", "同事", "领导", "老板", "职业", "团队"),
    "Family": (
        "family", "relatives", "kids", "children", "parents",
        "семья", "семьи", "семье", "семью", "родные", "родных", "родственники", "родственников", "дети",
        "детей", "детьми", "родители", "родителей",
        "家人", "家里", "家庭", "亲戚", "孩子", "父母"),
}

# --- workplaces -------------------------------------------------------------------------------------
# A name where a workplace stands is an organisation, not a person: "работаю в Тинькофф", "в компании
# Тинькофф", "I work at Stripe", "我在腾讯工作", "李宁公司". Read by the rule archivist (`rules._workplace`,
# `chinese._workplace`). Russian words are lemmas.
RU_WORK_WORDS = frozenset({"работать", "устроиться", "перейти", "трудиться", "стажироваться", "подрабатывать",
                           "уволиться", "уйти", "служить", "работа", "стажировка", "должность"})
# Prepositions of a workplace after those words ("работаю в", "ушла из"); "на" is left out, as "работаю на
# Петрова" names a person.
RU_WORK_PREPOSITIONS = frozenset({"в", "во", "из"})
RU_ORG_NOUNS = frozenset({"компания", "фирма", "банк", "корпорация", "стартап", "организация", "агентство",
                          "холдинг", "студия", "концерн", "издательство", "завод", "фабрика", "ооо", "оао", "зао",
                          "пао", "ао"})
EN_WORK_WORDS = frozenset({"work", "works", "worked", "working", "job", "intern", "interns", "interned",
                           "interning", "internship", "employed", "started"})
# "for" is read apart (`archivist.employers`): "I work for Dana" names a person as often as "I work for
# Stripe" a company.
EN_WORK_PREPOSITIONS = frozenset({"at", "in"})
ZH_ORG_NOUNS = ("公司", "集团", "银行", "科技", "工作室", "事务所")
ZH_WORK_VERBS = ("工作", "上班", "实习", "任职", "就职", "打工")
# What one eats or drinks is no person, though jieba tags some dishes and teas as names ("喝龙井茶",
# "吃宫保鸡丁", "一盒龙井茶"): a word ending in one of these, or right after a verb of eating or drinking or a
# measure word, unless a possessive or a verb follows ("吃了王强做的饭" names him).
ZH_FOOD_ENDINGS = frozenset("茶酒汤粥饭菜鸡鸭鹅鱼肉饼糕饺粉")
ZH_FOOD_BEFORE = re.compile(r"(?:[喝吃尝品泡煮炒烤炖涮](?:了|过|着)?"
                            r"|[一二两三四五六七八九十几半][杯盒壶碗份瓶包斤袋罐盘串])$")

# --- whom the user works for ------------------------------------------------------------------------
# "I work for X", "работаю на X", "我给X打工" take a person (the boss) as readily as a company; the name's
# shape decides (`archivist.employers`). Words that make a name run a firm's: "Kowalski Labs", "Acme Co",
# "Kowalski & Sons".
EN_ORG_WORDS = frozenset({
    "inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited", "llc", "llp", "plc", "gmbh",
    "ag", "labs", "lab", "group", "systems", "technologies", "technology", "tech", "software", "solutions",
    "partners", "associates", "holdings", "consulting", "industries", "international", "ventures", "capital",
    "media", "studios", "studio", "games", "bank", "sons", "brothers", "bros", "enterprises", "foods", "motors",
    "pharma", "pharmaceuticals", "logistics", "services", "agency", "networks", "global", "digital", "analytics",
    "robotics", "energy", "airlines", "insurance", "&",
})
# A firm's name made as one word: "Infosoft", "Medtech", "Rostelecom", "Sberbank", "Dreamworks".
EN_ORG_SUFFIXES = ("soft", "tech", "tek", "tronics", "tron", "corp", "bank", "com", "ware", "works", "labs", "media")
# The surname shapes a single word after "work for" is read as a person by: Slavic, Polish, Baltic, Georgian
# and Armenian endings, which English words and firms' names rarely have ("Kowalski", "Ivanov", "Petrova",
# "Shevchenko", "Kravchuk", "Novakovich", "Mickiewicz", "Beridze"). An ending of three letters or fewer counts
# only after a consonant ("Pushkin", "Kowalska"), so that "Bahrain", "Bitcoin" or "Alaska" are no surnames. No
# English surname shape: "-son" is as much a firm's ("Ericsson") as a person's.
EN_SURNAME_ENDINGS = ("ski", "ska", "sky", "skiy", "skyi", "cki", "cka", "dzki", "dzka", "ov", "ova", "ev", "eva",
                      "yov", "yova", "enko", "chuk", "czuk", "yuk", "iuk", "vich", "vych", "wicz", "czyk", "shvili",
                      "dze", "yan", "in")
# Endings inside those that English words and firms have: "Virgin", "Origin", "Margin".
EN_NOT_SURNAME_ENDINGS = ("gin",)
# Firms that wear a surname's shape (and those a Russian says with "работаю на" in a surname's case).
ORG_NAMES_LIKE_SURNAMES = frozenset({"kaspersky", "sikorsky", "kalashnikov", "tupolev", "ilyushin", "smirnoff",
                                     "касперский", "калашников", "тинькофф", "тиньков"})
# "работаю на Ковальского": the verbs whose "на" takes whom one works for. "работаю на заводе", "на Кипре" are
# places (another case), read apart (`rules._ru_place_after_preposition`). Lemmas.
RU_WORK_FOR_LEMMAS = frozenset({"работать", "трудиться", "подрабатывать", "вкалывать", "пахать", "батрачить"})
# Pronouns that say a word after "work for" is a person or a thing: "I work for Harrison. She is tough." /
# "I work for Zorblax, they make games." Only English: Russian "он"/"она" stand for a company by its noun's
# gender as well ("Яндекс — он …").
EN_PERSON_PRONOUNS = frozenset({"he", "she", "him", "her", "his", "hers", "himself", "herself"})
EN_THING_PRONOUNS = frozenset({"it", "its", "itself", "they", "them", "their", "theirs", "themselves"})
# "我给王强打工", "我替老王干活", "我在李总手下工作": the name inside is the user's boss. 为 is left out: it ends
# too many words (因为, 认为, 作为).
ZH_WORK_FOR_BEFORE = ("给", "替")
ZH_WORK_FOR_AFTER = ("打工", "干活", "做事", "卖命", "打下手", "工作")
ZH_UNDER_AFTER = ("手底下", "手下", "底下", "麾下")

# --- departures from work ---------------------------------------------------------------------------
# "Tom left the company", "Петров уволился", "王强离职了": someone who worked with the user no longer does
# (`phrases.departures`). Out of the company, the work tie has ended: Other, as an ex is (`role:ex`). To
# another team, a colleague from elsewhere: Work_Outer, as "Anna from another team" (`phrases.affiliations`).
# "Tom left early", "Петров ушёл домой", "他走了" leave a place, not the job. Russian words are lemmas.
EN_WORKPLACE_WORDS = frozenset({"company", "firm", "job", "organisation", "organization", "business", "startup",
                                "agency", "employer", "corporation", "jobs", "companies", "firms"})
EN_TEAM_WORDS = frozenset({"team", "department", "dept", "division", "unit", "teams", "departments"})
EN_OBJECT_DETERMINERS = frozenset({"the", "our", "his", "her", "their", "my", "this", "that", "a", "an", "its"})
EN_ANOTHER = frozenset({"another", "other", "different", "new"})
# Between the person and the verb: "Tom has finally left the company", "Tom was fired".
EN_DEPARTURE_FILLERS = frozenset({"has", "have", "had", "just", "finally", "recently", "already", "officially",
                                  "also", "actually", "suddenly", "apparently", "unexpectedly", "eventually",
                                  "quietly", "then", "both", "was", "were", "got", "gotten", "been", "is", "'s"})
EN_PASSIVE_AUX = frozenset({"was", "were", "got", "gotten", "been", "is", "'s"})
# Words that may follow "quit" or "resigned" used alone ("Tom quit last week"); any other word makes it
# something else he quit ("Tom quit smoking").
EN_AFTER_QUITTING = frozenset({"today", "yesterday", "tonight", "recently", "last", "this", "on", "in", "after",
                               "before", "and", "but", "so", "because", "early", "abruptly", "suddenly",
                               "officially", "finally", "already", "again", "without", "over", "a", "two",
                               "three", "months", "weeks", "out", "unexpectedly"})  # "out of nowhere"
# Passive only ("Tom was fired"; "Tom fired Anna" says what Tom did).
EN_DISMISSED = frozenset({"fired", "sacked", "dismissed", "laid off", "let go"})
EN_MOVE_VERBS = frozenset({"moved", "transferred", "switched", "went", "joined", "changed"})
RU_QUIT_LEMMAS = frozenset({"уволиться", "увольняться"})
RU_LEAVE_LEMMAS = frozenset({"уйти", "уходить"})
RU_RETIRE_LEMMAS = frozenset({"выйти", "выходить", "уйти", "уходить", "отправиться"})  # "… на пенсию"
RU_MOVE_LEMMAS = frozenset({"перейти", "переходить", "перевестись", "переводиться"})
RU_CHANGE_LEMMAS = frozenset({"сменить", "поменять", "менять"})  # "сменил работу"
RU_WORKPLACE_WORDS = RU_ORG_NOUNS | {"работа", "должность", "контора"}
RU_TEAM_WORDS = frozenset({"отдел", "команда", "департамент", "подразделение", "группа"})
RU_ANOTHER = frozenset({"другой", "новый", "соседний"})
RU_DEPARTURE_FILLERS = frozenset({"уже", "наконец", "недавно", "вчера", "сегодня", "тоже", "также", "официально",
                                  "внезапно", "неожиданно", "таки", "всё-таки", "все-таки", "же", "был", "была",
                                  "было", "были", "всё", "все", "давно", "взял", "взяла", "и"})
ZH_DEPARTED = ("离职", "辞职", "退休", "被开除", "被辞退", "被解雇", "被裁", "被炒", "跳槽", "离开公司", "离开了公司",
               "不干了")
ZH_TEAM_MOVES = ("转岗", "调岗", "换部门", "换组", "换团队")
ZH_MOVE_VERBS = ("被调到", "被调去", "调到", "调去", "调往", "转到", "转去", "去了", "去")
ZH_ANOTHER = ("别的", "其他", "其它", "另一个", "另外一个", "隔壁")
ZH_TEAM_WORDS = ("部门", "项目组", "团队", "小组", "组")
ZH_DEPARTURE_FILLERS = ("已经", "刚刚", "刚", "上周", "上个月", "上个星期", "上礼拜", "去年", "今年", "前年", "年初",
                        "年底", "月初", "月底", "昨天", "前天", "前几天", "最近", "终于", "也", "突然", "早就", "就",
                        "都", "正式", "居然", "竟然", "上月", "今天")

# Confirmations that turn the bot's preceding claim into the user's ("Your boss is Sidorov?" "Yes").
CONFIRMATIONS = frozenset({
    "yes", "yeah", "yep", "yup", "right", "exactly", "correct", "true", "sure", "indeed",
    "да", "ага", "угу", "верно", "точно", "именно", "конечно", "правильно",
    "对", "是", "是的", "没错", "对的", "嗯", "正确",
})

# --- pets -----------------------------------------------------------------------------------------
# A name the user gives an animal is no person ("my dog Rex", "мою кошку зовут Муся", "我的猫叫米饭"): the
# rule archivist reads these words as PET tokens and drops the name tied to one (`phrases.pets`); the
# profile keeps the pet (the `pets` fact). Words that are as often an endearment for a person ("котик",
# "зайка", "рыбка") are left out: "мой котик Саша" is more likely a boyfriend than a cat.
EN_PETS = frozenset({
    "dog", "dogs", "puppy", "puppies", "pup", "pups", "doggo", "doggy", "cat", "cats", "kitten", "kittens",
    "kitty", "pet", "pets", "hamster", "hamsters", "parrot", "parrots", "rabbit", "rabbits", "bunny", "bunnies",
    "goldfish", "turtle", "turtles", "tortoise", "ferret", "ferrets", "gerbil", "gerbils", "budgie",
    "cockatiel", "lizard", "gecko", "iguana", "snake", "horse", "horses", "pony", "chinchilla", "hedgehog",
    "labrador", "retriever", "poodle", "beagle", "corgi", "pug", "husky", "dachshund", "terrier", "spaniel",
})
EN_PLURAL_PETS = frozenset({w for w in EN_PETS if w.endswith("s") and w[:-1] in EN_PETS} | {"puppies", "bunnies"})
EN_PET_PHRASES = frozenset({"guinea pig", "guinea pigs"})
# After a pet word these make it a person's trade or taste: "my dog walker Anna", "a cat person".
EN_PET_COMPOUND_NOUNS = frozenset({
    "walker", "walkers", "sitter", "sitters", "trainer", "trainers", "groomer", "groomers", "breeder", "breeders",
    "owner", "owners", "person", "people", "lover", "lovers", "whisperer", "lady", "mom", "mum", "dad", "parent",
    "parents", "nanny", "handler", "doctor", "shelter", "rescue",
})
# Dictionary forms (lemmas, е for ё).
RU_PETS = frozenset({
    "собака", "собачка", "пес", "песик", "щенок", "щеночек", "кошка", "кошечка", "кот", "котенок", "кошак",
    "хомяк", "хомячок", "попугай", "попугайчик", "кролик", "черепаха", "черепашка", "шиншилла", "хорек", "свинка",
    "питомец", "питомица", "ящерица", "лошадь", "конь", "пони", "такса", "овчарка", "лабрадор", "мопс", "шпиц",
    "корги", "хаски", "той-терьер", "терьер", "спаниель", "пудель", "бульдог", "ретривер",
})
# Words that name the pet right after the pet word: "собака по кличке Шарик", "dog called Rex", "my dog's name is".
PET_NAMING_WORDS = frozenset({"called", "named", "name", "по", "кличке", "кличка", "名字", "名叫", "叫做", "叫"})
ZH_PETS = ("宠物狗", "宠物猫", "宠物", "猫咪", "小猫", "猫猫", "狗狗", "小狗", "猫", "狗", "兔子", "小兔", "仓鼠",
           "鹦鹉", "金鱼", "乌龟", "龙猫", "刺猬", "喵星人", "汪星人", "柯基", "泰迪", "柴犬", "金毛", "哈士奇",
           "布偶猫", "英短", "橘猫", "狸花猫")
# Words holding a pet word that are no pet: the pet word found inside one of these is skipped
# ("单身狗" and "舔狗" are people's nicknames, "猫奴" a cat's owner).
ZH_NOT_PETS = ("熊猫", "热狗", "单身狗", "舔狗", "走狗", "海狗", "夜猫子", "猫粮", "狗粮", "猫砂", "猫头鹰",
               "狗仔", "猫眼", "狗窝", "猫窝", "猫奴", "狗血", "猫腻", "猫咖", "狗屎", "猫爬架", "遛狗的", "铲屎官")

# --- Russian diminutives ------------------------------------------------------------------------
# Full name → its common diminutive and hypocoristic forms (dictionary form, lower case, е for ё).
RU_DIMINUTIVES: dict[str, tuple[str, ...]] = {
    "александр": ("саша", "шура", "саня", "санек", "сашка", "сашенька", "алекс"),
    "александра": ("саша", "шура", "сашка", "сашенька"),
    "алексей": ("леша", "лешка", "алеша", "лешенька", "алешка", "леха"),
    "анастасия": ("настя", "настена", "настенька", "ася", "настюха", "настюша"),
    "анатолий": ("толя", "толик", "толян"),
    "андрей": ("андрюша", "андрюха", "дрюша", "андрюшка"),
    "анна": ("аня", "анечка", "анюта", "нюра", "анька"),
    "антон": ("тоша", "антоша", "тоха", "антоха"),
    "артем": ("тема", "темка", "артемка", "темыч"),
    "борис": ("боря", "борька"),
    "вадим": ("вадик", "вадя"),
    "валентина": ("валя",),
    "валентин": ("валя",),
    "василий": ("вася", "васька"),
    "виктор": ("витя", "витек", "витька"),
    "виктория": ("вика",),
    "владимир": ("вова", "володя", "вовка", "вовочка", "вовчик"),
    "владислав": ("влад", "владик", "слава"),
    "вячеслав": ("слава", "славик"),
    "галина": ("галя",),
    "геннадий": ("гена",),
    "георгий": ("жора", "гоша", "гера"),
    "григорий": ("гриша",),
    "дарья": ("даша", "дашка", "дашенька", "дашуля"),
    "егор": ("егорка", "егорушка", "егорыч"),
    "денис": ("дэн", "дениска", "денчик"),
    "дмитрий": ("дима", "митя", "димка", "димон", "димас"),
    "евгений": ("женя", "женька", "жека"),
    "евгения": ("женя", "женька"),
    "екатерина": ("катя", "катюша", "катька", "катенька", "катюха"),
    "елена": ("лена", "леночка", "ленка", "аленка"),
    "елизавета": ("лиза", "лизка", "лизонька"),
    "иван": ("ваня", "ванька", "ванечка", "ванюша", "ванек"),
    "игорь": ("игорек", "гоша"),
    "илья": ("илюша", "илюха", "илюшка"),
    "ирина": ("ира", "ирка", "ирочка", "ириша"),
    "кирилл": ("киря", "кирюша", "кирюха"),
    "константин": ("костя", "костик", "костян"),
    "ксения": ("ксюша", "ксюха", "ксюшка"),
    "лариса": ("лара",),
    "любовь": ("люба",),
    "людмила": ("люда", "мила", "люся"),
    "максим": ("макс", "максик", "максимка"),
    "марина": ("мариша",),
    "мария": ("маша", "машка", "машенька", "маня", "муся", "маруся"),
    "михаил": ("миша", "мишка", "мишаня", "миха"),
    "надежда": ("надя",),
    "наталья": ("наташа", "ната", "наталка", "наташка", "натаха"),
    "наталия": ("наташа", "ната"),
    "никита": ("никитос",),
    "николай": ("коля", "колька", "коленька", "колян"),
    "нина": ("ниночка",),
    "олег": ("олежка", "олежек"),
    "ольга": ("оля", "олечка", "олька", "оленька"),
    "павел": ("паша", "пашка", "павлик", "пашуля"),
    "петр": ("петя", "петька", "петенька"),
    "полина": ("поля",),
    "роман": ("рома", "ромка", "ромочка", "ромыч"),
    "светлана": ("света", "светик", "светочка", "светка"),
    "святослав": ("слава",),
    "семен": ("сеня",),
    "сергей": ("сережа", "серега", "сережка"),
    "софья": ("соня", "софа"),
    "софия": ("соня", "софа"),
    "станислав": ("стас", "слава"),
    "степан": ("степа",),
    "тамара": ("тома",),
    "татьяна": ("таня", "танюша", "танька", "танечка", "танюха"),
    "тимофей": ("тима", "тимоша", "тимоха", "тимошка"),
    "тимур": ("тима",),
    "федор": ("федя",),
    "юлия": ("юля", "юлька", "юленька", "юляша"),
    "юрий": ("юра", "юрка"),
    "ярослав": ("слава", "ярик"),
    # Common English pairs, since users mix them in.
    "robert": ("bob", "bobby", "rob", "robbie"),
    "william": ("bill", "billy", "will", "willy"),
    "michael": ("mike", "mikey", "mick"),
    "elizabeth": ("liz", "lizzy", "beth", "betty", "eliza"),
    "katherine": ("kate", "katie", "kathy", "kat"),
    "catherine": ("kate", "katie", "cathy", "cat"),
    "richard": ("rick", "dick", "richie"),
    "james": ("jim", "jimmy", "jamie"),
    "thomas": ("tom", "tommy"),
    "alexander": ("alex", "sasha", "xander"),
    "jennifer": ("jen", "jenny"),
    "christopher": ("chris", "topher"),
    "nicholas": ("nick", "nicky"),
    "jonathan": ("jon", "johnny"),
    "margaret": ("maggie", "meg", "peggy"),
    "anthony": ("tony",),
    "daniel": ("dan", "danny"),
    "matthew": ("matt",),
    "benjamin": ("ben", "benny"),
    "joseph": ("joe", "joey"),
    "samuel": ("sam", "sammy"),
    "steven": ("steve",),
    "stephen": ("steve",),
    "edward": ("ed", "eddie", "ted"),
    "patricia": ("pat", "patty", "trish"),
}

# --- Chinese names --------------------------------------------------------------------------------
ZH_COMPOUND_SURNAMES = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "令狐", "慕容", "尉迟", "长孙", "夏侯", "公孙")
ZH_SURNAMES = frozenset(
    "王李张刘陈杨黄赵吴周徐孙马朱胡郭何林高罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘蒋蔡余杜叶程苏魏吕丁任沈姚卢"
    "姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤"
    "常温康施文牛樊葛邢安齐易乔伍庞颜倪庄聂章鲁岳翟殷詹申欧耿关兰焦俞左柳甘祝包宁尚符舒阮柯纪梅童凌毕"
    "单季裴霍涂成苗谷盛曲翁冉骆蓝路游辛靳管柴蒙鲍华喻祁蒲房滕屈饶解牟艾尤阳时穆农司卓古吉缪简车项连芦"
    "麦褚娄窦戚岑景党宫费卜冷晏席卫米柏宗瞿桂全佟应臧闵苟邬边卞姬师和仇栾隋商刁沙荣巫寇桑郎甄丛仲虞敖"
    "巩明佘池查麻苑迟邝"
)
# A title after a surname makes a name ("王总", "李老师").
ZH_TITLES = ("总", "经理", "老师", "医生", "大夫", "先生", "女士", "小姐", "主任", "教授", "律师", "阿姨", "叔叔",
             "师傅", "老板", "部长", "处长", "局长", "书记", "科长", "工", "董", "姐", "哥", "总监", "博士",
             # kin words said after a surname address an older neighbour, not a relative: 李奶奶, 王大爷
             "奶奶", "爷爷", "大爷", "大妈", "大娘", "伯伯", "婆婆", "大叔")
# Characters that end a name: particles, verbs and time words that commonly follow one.
ZH_NAME_STOPS = frozenset(
    "说是和跟在的了也都要去来给让请对把被今明昨后前一很又还就会能想告问叫帮刚已最不没他她我你们这那着过吗呢吧啊"
    "，。！？、；：（）()“”\"' ,.!?;:\n\t从向与及或同送约找见看听带陪负做当开吃喝打买出住借教"
)
# Two-character words jieba tags as names although they are not (surname char + common char).
ZH_NOT_NAMES = frozenset({
    "师傅", "高兴", "王国", "周末", "林业", "黄色", "马上", "方便", "石头", "金融", "江南",
    "白天", "许多", "任何", "于是", "何时", "向前", "万一", "程序", "方法", "高速",
    "钱包", "高手", "安全", "文化", "明天", "明白", "时间", "常常", "常见", "关于",
    "关系", "华为", "平安", "方面", "方案", "文件", "成功", "成本", "路上", "车上",
    "安排", "和平", "高铁", "周一", "周二", "周三", "周四", "周五", "周六", "周日",
    "包括", "全部", "单位", "单独", "简单", "管理", "连续", "宁可", "黄金", "白色",
    "金色", "龙虾", "熊猫", "牛奶", "史上", "游戏", "游泳", "曲子", "应该", "江湖",
    "高级", "高中", "谢谢", "谢意", "周到", "周围", "安静", "文明", "方向", "成长",
    "成绩", "高度", "吉他", "车站", "费用", "景色", "项目", "段时间", "和她", "和他",
    "毕业", "毛病", "童年", "甘心",
}) | frozenset(w for cue in CUES for w in cue.zh)  # a cue word is no name, though a surname opens it: 岳父, 干妈
