"""Who a memory is about (`determine_memory_kind`), how much it matters (`calculate_importance`),
and which emotions a text shows (`detect_emotions`), by rules, in English, Russian and Chinese.

Everything matches whole words from `memoryhub.text.words` (Unicode word split, casefolded, ё→е,
Chinese segmented), never substrings: "вдруг" (suddenly) is not "друг" (friend), "mother" is
not in "smothered", and "我们" (we) is not "我" (I).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from datetime import date

from memoryhub.text import normalize, words
from rag.memories import when
from rag.memories.vocab import MemoryKind, valence


def _set(*groups: str) -> frozenset[str]:
    return frozenset(w for group in groups for w in group.split())


FIRST_PERSON = _set(
    "i me my mine myself i'm i've i'll i'd im ive",
    "я меня мне мной мой моя мое моё мои моего моей моих моим себя сам сама",
    "我 我的 本人 自己",
)
# Words that may open a Russian sentence before its verb without being its subject ("А в субботу едем…").
_RU_BEFORE_VERB = _set("а и но ну вот да так кстати короче недавно вчера позавчера сегодня утром вечером уже",
                       "наконец тоже также ещё еще потом сначала снова опять только вообще наверное")


@functools.lru_cache(maxsize=4096)
def ru_implied_speaker(text: str) -> str | None:
    """"i" or "we" when a Russian sentence names its speaker by the verb alone, else None. The verb's person says it
    ("Работаю бухгалтером", "А в субботу едем на дачу"); a past verb, which does not, opening the sentence with no
    subject before it is the speaker's in chat ("Записалась к стоматологу на четверг", "Недавно переехала в
    Казань"). These were no first-person statements, and the consolidation kept none of them."""
    from memoryhub.morph import analyzer

    tokens = [t for t in memory_words(text) if "а" <= t[:1] <= "я"]
    opening = True
    for token in tokens:
        parse = analyzer().parse(token)[0]
        tag = parse.tag
        if tag.POS == "VERB" and tag.person == "1per" and tag.mood == "indc":
            return "we" if tag.number == "plur" else "i"
        if opening and tag.POS == "VERB" and tag.tense == "past":
            return "we" if tag.number == "plur" else "i"
        opening = opening and (token in _RU_BEFORE_VERB or tag.POS in ("ADVB", "PREP", "CONJ", "PRCL")
                               or (tag.POS in ("NOUN", "ADJF", "NUMR") and tag.case not in ("nomn", None)))
    return None


# An English sentence that opens on a verb of the speaker's doings, the subject left out as chat does: "Just moved
# to Denver", "Booked a dentist appointment for Thursday", "Finished the half marathon in 1:52!". Not a reaction
# to something said ("Got it", "Loved that!").
_EN_OPENS_ON_DOING = re.compile(
    r"^\W*(?:(?:so|well|and|also|oh|btw|anyway|just|finally|recently|officially|already|today|yesterday|tonight"
    r"|this\s+morning|last\s+(?:night|week|weekend|month|year))[,\s]+)*"
    r"(?:moved|booked|got|started|finished|ran|bought|adopted|joined|quit|signed\s+up|visited|went|took|passed|landed"
    r"|scheduled|planning|going\s+to|heading|flying|leaving|spent|met|made|had|won|lost|broke|graduated|applied)\b"
    r"(?!\s+(?:it|that|this|you|me)\b)", re.IGNORECASE)
# A Chinese sentence with no subject that opens (after when) on a plan or a change of the speaker's: "下周要去北京出差",
# "刚搬到杭州". Not the weather ("明天要下雨").
_ZH_OPENS_ON_DOING = re.compile(
    r"^(?:今天|明天|后天|昨天|前天|下周|下个?月|上周|上个?月|周末|这周末|这个周末|最近|马上|过几天|上午|下午|晚上|早上|今晚"
    r"|明年|今年|去年)*(?:刚刚?|已经|终于|要|打算|准备|想|得|搬|换了?|开始|报名|预约|订了|去了|参加了|跑完|考完|拿到)")
_ZH_NOT_DOING = re.compile(r"下雨|下雪|刮风|天气|降温|升温|[你他她它您]|我")
_CYRILLIC = re.compile(r"[а-яё]", re.IGNORECASE)


# Asked twice of each sentence a consolidation reads (its kind, its statement): kept for the texts seen last.
@functools.lru_cache(maxsize=4096)
def implied_speaker(text: str) -> str | None:
    """"i" or "we" when a sentence names its speaker by its verb alone, in any of the three languages
    (`ru_implied_speaker`, `_EN_OPENS_ON_DOING`, `_ZH_OPENS_ON_DOING`), else None."""
    if _CYRILLIC.search(text):
        return ru_implied_speaker(text)
    if _EN_OPENS_ON_DOING.search(text):
        return "i"
    said = normalize(text)
    if _ZH_OPENS_ON_DOING.search(said) and not _ZH_NOT_DOING.search(said) and \
            not set(memory_words(text)) & THIRD_PARTY:
        return "i"
    return None


# "We" counts where the speaker's own doings are meant: "В субботу мы едем на дачу" is the user's plan.
FIRST_PERSON_PLURAL = _set("we us our ours we're we'll we've", "мы нас нам нами наш наша наше наши", "我们 咱们")
SECOND_PERSON = _set(
    "you your yours yourself you're you've you'll u ur",
    "ты тебя тебе тобой твой твоя твое твои вы вас вам вами ваш ваша ваше ваши",
    "你 你的 您 您的",
)
# Other people: relatives, friends, colleagues, and third-person pronouns.
THIRD_PARTY = _set(
    "friend friends mom mum mother dad father brother sister son daughter wife husband girlfriend boyfriend "
    "grandma grandmother grandpa grandfather aunt uncle cousin colleague colleagues coworker boss neighbour "
    "neighbor teacher he she him her his hers they them their",
    "друг друга другу другом друзья друзей друзьями подруга подруги подруге подругой подругу "
    "мама мамы маме мамой маму мать отец отца папа папы папой "
    "брат брата братом сестра сестры сестрой сын сына дочь жена жены муж мужа "
    "бабушка дедушка тетя дядя коллега коллеги "
    "начальник сосед соседка учитель он она его ее её ему ей они их им",
    "朋友 妈妈 母亲 爸爸 父亲 哥哥 弟弟 姐姐 妹妹 儿子 女儿 妻子 老婆 丈夫 老公 女朋友 男朋友 "
    "奶奶 爷爷 外婆 外公 姥姥 姥爷 父母 爸妈 同事 老板 邻居 老师 他 她 他们 她们 "
    # Said as people talk: jieba keeps "我妈" (my mom) as one word, "我跟我妈吵架了" splits "我 妈".
    "妈 爸 我妈 我爸",
)


# One consolidation asks about each sentence several times (its kind, its importance, its emotions,
# twice): the analyses are pure functions of the text, kept for the texts seen last.
@functools.lru_cache(maxsize=4096)
def memory_words(text: str) -> tuple[str, ...]:
    # "friend's" is the word "friend"; "i'm" stays as it is (it is listed).
    return tuple(w[:-2] if w.endswith("'s") else w for w in words(text))


def determine_memory_kind(text: str, speaker: str, character: str = "") -> MemoryKind:
    """Whom a memory is about, from who said it and whom the words point at.

    `speaker` is "user"/"assistant" (or "USER"/"AI"), or a display name: the character's own name
    (`character`) counts as the assistant. Rules, first match wins:
    1. other people (family, friends, colleagues, he/she/they) → third_party;
    2. a speaker talking to the other side ("you" without "I") → the other side: the user's
       "you are funny" is about the character (self), the character's "you like rock" about the user;
    3. the character named → self, even in the user's mouth; but a name that only addresses the
       character ("Hi Neiri, I had a rough day", "Neiri, я…", "…, Neiri!") is taken out first when the
       rest speaks in the first person: the user greeting the character by name still talks about
       themselves, while "That's a great dream, Neiri!" stays about her;
    4. otherwise the speaker talks about themselves: the user → user, the character → self.
    """
    role = speaker.strip().casefold()
    is_character = role in {"assistant", "ai", "character", "bot"} or (
        bool(character) and role == character.strip().casefold())
    if character and not is_character:
        # Only when the rest speaks of the user: "That's a great dream, Neiri!" is still about her.
        addressed = _without_address(text, character)
        if addressed != text and set(memory_words(addressed)) & FIRST_PERSON:
            text = addressed
    tokens = memory_words(text)
    present = set(tokens)
    if present & THIRD_PARTY:
        return MemoryKind.THIRD_PARTY
    if present & SECOND_PERSON and not present & FIRST_PERSON:
        return MemoryKind.USER if is_character else MemoryKind.SELF
    if character and set(memory_words(character)) and set(memory_words(character)) <= present:
        return MemoryKind.SELF
    return MemoryKind.SELF if is_character else MemoryKind.USER


# Words a name follows when it calls someone rather than talks about them: greetings and thanks.
_GREETING = (r"hi|hello|hey|dear|thanks|thank\s+you|good\s+(?:morning|night|evening)|goodnight|bye|goodbye|"
             r"привет|здравствуй(?:те)?|спасибо|пока|доброе\s+утро|добрый\s+(?:день|вечер)|спокойной\s+ночи|"
             r"你好|您好|嗨|谢谢|晚安|早上好|早安|再见")


@functools.lru_cache(maxsize=256)
def _address(character: str) -> re.Pattern[str]:
    # The name opens the sentence, follows a greeting or a comma, and ends a phrase: "Hi Neiri, …",
    # "Neiri，我…", "…, Neiri!". "Neiri sings badly" or "I told Neiri everything" keep it: they talk about her.
    return re.compile(rf"(?:^|(?<=[,，、:;—–]))\s*(?:(?:{_GREETING})\s*[,，!！]?\s*)?{re.escape(character.strip())}"
                      rf"(?=\s*(?:[,，、!！.。?？:;—–…]|$))", re.IGNORECASE)


def _without_address(text: str, character: str) -> str:
    return _address(character).sub(" ", text) if character.strip() else text


# --- Goals, plans, preferences -------------------------------------------------------------
# What the speaker says they want, mean to do, or like and avoid, in the first person. Matched on the
# normalised text (casefolded, ё→е, one apostrophe, full-width punctuation folded). Each pattern leaves
# out what is only the conversation itself: "I want to know / ask / tell you", "хочу спросить / спать",
# "我想知道 / 我想你" (I miss you), "I like it / you", "люблю тебя", "我爱你".
_HEDGE_EN = r"(?:really\s+|still\s+|so\s+|just\s+|also\s+|always\s+|only\s+|usually\s+|mostly\s+)?"
_TALK_EN = r"(?:know|ask|say|tell|talk|hear|see|chat|thank|share|help|sleep|rest|go\s+(?:to\s+)?(?:bed|sleep|home))\b"
_AT_YOU_EN = r"(?:it|that|this|you|them|him|her|your|how|when|what|the\s+idea|the\s+way|talking|chatting)\b"
_WHEN_EN = (r"\b(?:tomorrow|tonight|next|soon|someday"
            r"|this\s+(?:week(?:end)?|month|year|spring|summer|autumn|fall|winter)"
            r"|in\s+(?:january|february|march|april|may|june|july|august|september|october|november|december"
            r"|spring|summer|autumn|fall|winter|a\s+(?:week|month|year)|\d+\s+(?:days|weeks|months|years)))\b")
_HEDGE_RU = r"(?:очень\s+|правда\s+|давно\s+|тоже\s+|еще\s+|уже\s+|просто\s+|вообще\s+|обычно\s+)?"
_TALK_RU = r"(?:спросить|сказать|узнать|рассказать|поговорить|услышать|спать|поспать|отдохнуть|пить|есть)\b"
_AT_YOU_RU = r"(?:тебя|тебе|вас|вам|это|этого|его|ее|их)\b"
_WHO_RU = r"(?:^|(?<=[,;:—–-])\s*|\bя\s+)"  # "Хочу…" opens a sentence: Russian drops the pronoun
_NOT_AT_YOU_ZH = r"(?!你|您|他|她|它|这|那|了)"
STATEMENTS: dict[str, tuple[re.Pattern[str], ...]] = {
    "goals": (
        re.compile(rf"\bi\s+{_HEDGE_EN}(?:want|wanna|hope|aim)\s+to\s+(?!{_TALK_EN})\w"),
        re.compile(rf"\bi(?:'d|\s+would)\s+(?:really\s+)?(?:love|like)\s+to\s+(?!{_TALK_EN})\w"),
        re.compile(r"\bmy\s+(?:big\s+)?(?:goal|dream)\s+is\b|\bi\s+dream\s+(?:of|about)\b"),
        # Resolutions, told in the past tense of what is ahead: "I promised myself I'd start running".
        re.compile(r"\bi(?:'ve|\s+have)?\s+(?:finally\s+|just\s+|really\s+)?(?:promised\s+(?:to\s+)?myself|vowed|swore\s+to\s+myself"
                   r"|made\s+(?:a\s+)?(?:new\s+year's\s+)?resolution|set\s+myself\s+a\s+goal"
                   r"|decided\s+to\s+(?:start|stop|quit|give\s+up|take\s+up|learn|become))\b"
                   r"|\bi(?:'ve|\s+have)\s+(?:finally\s+)?(?:decided|made\s+up\s+my\s+mind)\b|\bmy\s+(?:new\s+year's\s+)?resolution\b"),
        re.compile(rf"{_WHO_RU}{_HEDGE_RU}(?:хочу|хотел[аи]?\s+бы|мечтаю|надеюсь)\s+(?!{_TALK_RU}|с\s+тобой\b)\w"),
        re.compile(r"\bмоя\s+(?:цель|мечта)\b"),
        re.compile(rf"{_WHO_RU}(?:твердо\s+)?(?:(?:по)?обещал[аи]?\s+себе|дал[аи]?\s+себе\s+(?:слово|обещание)"
                   r"|поклял(?:ся|ась|ись)|зарекл(?:ся|ась|ись)"
                   r"|решил[аи]?,?\s+(?:что\s+)?(?:начать|начну|бросить|брошу|перестать|больше\s+не|заняться|стать|научиться))"),
        re.compile(rf"我(?:很|真的|一直|也|特别|非常|还)?(?:想要|想|希望|梦想){_NOT_AT_YOU_ZH}(?!知道|问|说|听|睡|休息)"),
        re.compile(r"我(?:已经)?(?:答应(?:过)?自己|(?:跟|对|向)自己(?:发誓|保证|承诺|说好)|(?:下定|下了)决心|发誓要|立志)"),
    ),
    "plans": (
        re.compile(rf"\b(?:i(?:'m|\s+am)|we(?:'re|\s+are))\s+{_HEDGE_EN}(?:planning|thinking\s+(?:of|about)\s+\w+ing)\b"),
        re.compile(rf"\b(?:i|we)\s+{_HEDGE_EN}(?:plan|intend)\s+(?:to|on)\s+(?!{_TALK_EN})\w"),
        re.compile(rf"\b(?:i(?:'m|\s+am)|we(?:'re|\s+are))\s+going\s+to\s+(?!{_TALK_EN}).*{_WHEN_EN}"),
        re.compile(r"\bmy\s+plan\s+is\b"),
        re.compile(r"\bi(?:'m|\s+am)\s+(?:going\s+to|gonna)\s+(?:start|stop|quit|give\s+up|take\s+up)\b"),
        re.compile(rf"(?:^|(?<=[,;:—–-])\s*|\b(?:я|мы)\s+){_HEDGE_RU}(?:планирую|планируем|собираюсь|собираемся)"
                   rf"\s+(?!{_TALK_RU})\w"),
        re.compile(r"\bу\s+меня\s+в\s+планах\b|\bмой\s+план\b"),
        re.compile(r"我(?:们)?(?:也|还|已经)?(?:打算|计划|准备|决定)(?!睡|休息)"),
    ),
    "preferences": (
        re.compile(rf"\bi\s+{_HEDGE_EN}(?:don't\s+|do\s+not\s+|never\s+|can't\s+stand\s+|cannot\s+stand\s+)?"
                   rf"{_HEDGE_EN}(?:like|love|prefer|enjoy|hate|drink|eat|smoke)\s+(?!{_AT_YOU_EN}|to\s+{_TALK_EN})\w"),
        re.compile(r"\bi(?:'m|\s+am)\s+(?:a\s+)?(?:vegetarian|vegan|teetotal(?:er)?)\b"),
        re.compile(r"\bi(?:'m|\s+am)\s+(?:not\s+)?(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of\b"),
        re.compile(rf"{_WHO_RU}{_HEDGE_RU}(?:не\s+|никогда\s+не\s+|терпеть\s+не\s+могу\s+)?{_HEDGE_RU}"
                   rf"(?:пью|ем|курю|люблю|обожаю|предпочитаю|ненавижу)\s+(?!{_AT_YOU_RU})\w"),
        re.compile(r"\bя\s+(?:вегетарианец|вегетарианка|веган|веганка|не\s+пью)\b"),
        re.compile(rf"我(?:从来|从|一直|平时|只|也|很|最|特别|非常|比较|更|都)*(?:不太|不|没|只)?"
                   rf"(?:喜欢|爱|讨厌|偏爱|喝|吃|抽烟){_NOT_AT_YOU_ZH}"),
    ),
}
# One search per kind of statement: most chat lines are none, and each is looked at once per consolidation.
_STATEMENTS = {statement: re.compile("|".join(f"(?:{p.pattern})" for p in patterns))
               for statement, patterns in STATEMENTS.items()}
_STATEMENT_WORDS = frozenset({"i", "i'm", "i'd", "i've", "i'll", "we", "we're", "we'll", "my", "our"})
_CYRILLIC_OR_WO = re.compile(r"[а-я]|我")
_WO = re.compile(r"[我咱]")
_QUESTION = re.compile(r"[?？]\s*$|^(?:do|does|did|can|could|would|will|are|is|what|why|how|when|where|who)\b"
                       r"|\bли\b|吗\s*[。.]?$|呢\s*[。.]?$")
_CONDITION = re.compile(r"^(?:if|when|unless|если|когда|如果|要是|假如)\b|^(?:如果|要是|假如)")


# What a plan by its date is not: the two sides' next talk ("I'll talk to you tomorrow", "до завтра", "明天见").
_SIGN_OFF = re.compile(r"\b(?:talk|chat|speak|see|catch\s+up\s+with|tell|write|text|call)\s+(?:to\s+|with\s+)?you\b"
                       r"|\bgood\s*night\b|(?<!\w)(?:поговорим|спишемся|созвонимся|увидимся|до\s+завтра"
                       r"|(?:расскажу|напишу|позвоню)\s+тебе)(?!\w)|再聊|再见|(?:明天|回头|下次|晚点|待会儿?|一会儿?)见|告诉你|跟你说")


@functools.lru_cache(maxsize=4096)
def personal_statement(text: str, said_on: date | None = None) -> str | None:
    """"goals", "plans" or "preferences" when the text states one of the speaker's own ("I want to learn
    Portuguese", "я не пью кофе", "我打算四月去日本"), else None. A question or a condition states nothing:
    "Do you want to…?", "Если я захочу…", "你想学吗？".

    With `said_on` (the day it was said), what the speaker or their people have ahead is a plan too, by its
    date alone: "I'm nervous about my exam next Friday", "В субботу мы едем на дачу", "我下个月要去上海出差"
    (`when.names_days_ahead`), but not the two sides' next talk ("I'll talk to you tomorrow")."""
    said = normalize(text)
    tokens = memory_words(text)
    # Every English pattern starts at one of these words; three chat lines in four have none.
    if not (set(tokens) & _STATEMENT_WORDS or _CYRILLIC_OR_WO.search(said) or implied_speaker(text)):
        return None
    if _QUESTION.search(said) or _CONDITION.search(said):
        return None
    for statement, pattern in _STATEMENTS.items():
        if pattern.search(said):
            return statement
    # jieba keeps "我要" as one word: 我 or 咱 anywhere is the speaker.
    if said_on is not None and (set(tokens) & (FIRST_PERSON | FIRST_PERSON_PLURAL) or _WO.search(said)
                                or implied_speaker(text)) \
            and not _SIGN_OFF.search(said) and when.names_days_ahead(text, said_on, told_in_past=is_past(tokens)):
        return "plans"
    return None


# --- Told in the past -----------------------------------------------------------------------
PAST_MARKERS = _set(
    "yesterday ago last went was were had did visited met moved saw got bought finished started fought",
    "вчера позавчера недавно прошлой прошлом прошлый прошлую назад",
    "昨天 前天 上周 上个月 去年 以前 了 过 曾经",
)
# With the reflexive ones: "Я поссорилась с мамой", "мы поругались", "он развёлся" told what happened too.
_RU_PAST_ENDINGS = ("ал", "ял", "ил", "ел", "ла", "ли", "лся", "лась", "лось", "лись")
_EN_PAST = re.compile(r"^[a-z]{3,}ed$")
# "I'm so excited", "I am worried", "feeling stressed": a word in -ed after these describes, it tells nothing past.
_DESCRIBES = _set("i'm im am is are be being feel feeling feels get getting so very too quite pretty")


def is_past(tokens: Sequence[str]) -> bool:
    """Whether words (`memory_words`) tell of something past: a past marker ("yesterday", "вчера", "了"), an
    English verb in -ed (not an adjective after "I'm", "so", "feel"…), a Russian past verb."""
    for i, token in enumerate(tokens):
        if token in PAST_MARKERS or (_EN_PAST.match(token) and not (i and tokens[i - 1] in _DESCRIBES)):
            return True
        if len(token) >= 4 and token.endswith(_RU_PAST_ENDINGS) and "а" <= token[0] <= "я":
            return True
    return False


# --- Importance -----------------------------------------------------------------------------
# Words that make a memory worth keeping: explicit asks to remember, identity and life facts,
# strong preferences, health, and milestones. Matched as whole words (stems by prefix for Russian).
EMPHASIS = _set(
    "important remember never always forget promise must essential",
    "важно важный важная запомни запомнить помни никогда всегда обещаю обещай обязательно",
    "重要 记住 别忘了 永远 从不 一定 答应",
)
PERSONAL = _set(
    "name born birthday live lives lived moved work works job married divorced pregnant allergic allergy "
    "diagnosed love hate "
    "favorite favourite dream afraid sick died graduated",
    "зовут родился родилась живу переехал переехала работаю женат замужем аллергия люблю ненавижу любимый "
    "любимая мечтаю боюсь болею умер умерла окончил "
    # Of the user's people, as English has "lives" and "works": "Моя сестра живёт в Мадриде".
    "живет живут работает работают",
    "名字 叫 出生 生日 住 搬 工作 结婚 过敏 喜欢 讨厌 最 梦想 害怕 生病 去世 毕业",
)
TRIVIAL = _set(
    "hi hello hey ok okay lol haha thanks thx yes no yeah yep bye hmm",
    "привет ок ладно спасибо да нет пока хм ага лол",
    "你好 好的 谢谢 是 不 哈哈 嗯 再见",
)
_NUMBER = re.compile(r"\d")


@functools.lru_cache(maxsize=4096)
def calculate_importance(text: str, said_on: date | None = None) -> float:
    """Importance 0..1 of a memory the writer gave none for, by a transparent additive rule.

    Start at 0.4 (a little under the neutral 0.5, since most chat lines are not worth much), then
    + 0.3 when the text asks to be remembered or is absolute ("important", "никогда", "记住"),
    + 0.2 when it states a personal fact (name, birthday, where one lives or works, allergies,
      loves and hates, fears, losses) or one's goal, plan or preference (`personal_statement`; with
      `said_on`, what is ahead by its date too),
    + 0.1 when it carries a number or date (ages, dates, amounts are what people ask back),
    + 0.1 when it expresses an emotion from the vocabulary,
    - 0.2 when it is shorter than three words (and no such statement);
    and small talk only ("ok thanks", "спасибо", "哈哈") is 0.1 whatever else it shows.
    Clamped to 0..1 and rounded to two decimals, so the same text always scores the same.
    """
    tokens = memory_words(text)
    present = set(tokens)
    if tokens and present <= TRIVIAL:
        return 0.1
    score = 0.4
    statement = personal_statement(text, said_on)
    if present & EMPHASIS:
        score += 0.3
    if present & PERSONAL or any(t.startswith(("люб", "ненавид", "переех", "работа", "жив")) for t in tokens) \
            or statement:
        score += 0.2
    if _NUMBER.search(text):
        score += 0.1
    if detect_emotions(text):
        score += 0.1
    if len(tokens) < 3 and not statement:  # jieba keeps "我想学" as one word: "我想学葡萄牙语" is no fragment
        score -= 0.2
    return round(min(1.0, max(0.0, score)), 2)


# --- Emotions -------------------------------------------------------------------------------
# Cue words per emotion id (rag.memories.vocab). Russian cues are matched as word prefixes
# (inflection), the others as whole words.
_CUES_EN: dict[str, tuple[str, ...]] = {
    "joy": ("happy", "glad", "joy", "delighted", "great", "awesome", "yay", "wonderful"),
    "sadness": ("sad", "unhappy", "depressed", "miserable", "cry", "crying", "lonely", "upset", "bummed",
                "heartbroken", "gutted", "devastated", "down"),
    "anger": ("angry", "mad", "furious", "annoyed", "hate", "pissed", "frustrated"),
    "fear": ("afraid", "scared", "terrified", "anxious", "worried", "fear", "nervous", "stressed"),
    "surprise": ("surprised", "wow", "unexpected", "shocked"),
    "disgust": ("disgusting", "gross", "disgusted"),
    "calm": ("calm", "relaxed", "peaceful"),
    "excitement": ("excited", "thrilled", "can't", "cannot"),
    "love": ("love", "adore"),
    "shame": ("ashamed", "embarrassed"),
    "nostalgia": ("nostalgic", "miss"),
    "pride": ("proud",),
    "envy": ("jealous", "envy", "envious"),
    "gratitude": ("thank", "thanks", "grateful", "appreciate"),
    "disappointment": ("disappointed", "letdown"),
    "hope": ("hope", "hopefully", "hoping"),
    "boredom": ("bored", "boring"),
    "interest": ("interesting", "curious", "interested"),
}
_CUES_RU: dict[str, tuple[str, ...]] = {
    "joy": ("рад", "счастл", "радост", "ура", "здорово", "отлично"),
    "sadness": ("грустн", "груст", "грущ", "печал", "тоскл", "плач", "одинок", "обидн", "обид", "расстро",
                "подавлен"),
    "anger": ("злюсь", "злой", "зла", "бесит", "раздраж", "ненавиж", "ярост", "взбеш", "бешенств"),
    "fear": ("боюсь", "страшн", "страх", "тревож", "волнуюсь", "нервнича", "переживаю"),
    "surprise": ("удивл", "ого", "неожидан"),
    "disgust": ("отвратит", "мерзк", "противн"),
    "calm": ("спокойн", "спокоен"),
    "excitement": ("жду", "не терпится", "взволнов"),
    "love": ("люблю", "обожаю"),
    "shame": ("стыдно", "стыд", "неловко"),
    "nostalgia": ("скучаю", "ностальг"),
    "pride": ("горжусь", "горд"),
    "envy": ("завидую", "завист"),
    "gratitude": ("спасибо", "благодар"),
    "disappointment": ("разочаров",),
    "hope": ("надеюсь", "надежд"),
    "boredom": ("скучно", "скука"),
    "interest": ("интересно", "любопытно"),
}
_CUES_ZH: dict[str, tuple[str, ...]] = {
    "joy": ("开心", "高兴", "快乐", "幸福", "太好了"),
    "sadness": ("难过", "伤心", "悲伤", "哭", "孤独", "郁闷", "沮丧", "难受", "委屈", "失落"),
    "anger": ("生气", "愤怒", "气死", "讨厌", "烦躁"),
    "fear": ("害怕", "担心", "恐惧", "紧张", "焦虑"),
    "surprise": ("惊讶", "没想到", "哇"),
    "disgust": ("恶心",),
    "calm": ("平静", "放松"),
    "excitement": ("兴奋", "激动", "期待"),
    "love": ("爱", "喜欢"),
    "shame": ("丢脸", "尴尬", "羞"),
    "nostalgia": ("怀念", "想念"),
    "pride": ("骄傲", "自豪"),
    "envy": ("嫉妒", "羡慕"),
    "gratitude": ("谢谢", "感谢", "感激"),
    "disappointment": ("失望",),
    "hope": ("希望",),
    "boredom": ("无聊",),
    "interest": ("有趣", "好奇", "感兴趣"),
}
_CUE_TABLES = {id(table): table for table in (_CUES_EN, _CUES_RU, _CUES_ZH)}
# jieba keeps "不再" (no longer), "从不" (never) as one word: "我不再喜欢摇滚" is no love.
_NEGATIONS = _set("not no never don't didn't isn't wasn't", "не нет никогда", "不 没 没有 别 不再 从不 从没 并不")
_INTENSIFIERS = _set("very so really extremely super", "очень так сильно ужасно", "很 非常 太 特别 超 好 真")
# Cues that are a feeling only after these words and not before those: "I'm feeling down", "I'm so down";
# not "sit down", "down the road", nor "I'm down for it" (willing).
_ONLY_BETWEEN = {"down": (_set("feel feeling feels felt i'm im am so pretty bit kinda really very"),
                          _set("for to with if there here the"))}


@functools.cache
def _cue_index(cues_id: int, prefix: bool) -> tuple[dict[str, tuple[str, ...]], int]:
    """cue -> the emotions it signals, and the longest cue: a token is looked up once (or, for
    prefix cues, once per prefix length) instead of being compared with every cue."""
    cues = _CUE_TABLES[cues_id]
    index: dict[str, list[str]] = {}
    for emotion, words_ in cues.items():
        for cue in words_:
            index.setdefault(cue, []).append(emotion)
    return {cue: tuple(emotions) for cue, emotions in index.items()}, max(map(len, index)) if prefix else 0


def _hits(tokens: Sequence[str], cues: dict[str, tuple[str, ...]], prefix: bool) -> dict[str, int]:
    """Emotion -> position of its first cue among `tokens` (whole tokens, or their beginnings)."""
    index, longest = _cue_index(id(cues), prefix)
    found: dict[str, int] = {}
    for i, token in enumerate(tokens):
        if token in _ONLY_BETWEEN:
            after, before = _ONLY_BETWEEN[token]
            if not (i and tokens[i - 1] in after) or (i + 1 < len(tokens) and tokens[i + 1] in before):
                continue
        keys = (token[:n] for n in range(1, min(len(token), longest) + 1)) if prefix else (token,)
        for key in keys:
            for emotion in index.get(key, ()):
                found.setdefault(emotion, i)
    return found


def detect_emotions(text: str) -> dict[str, float]:
    """Emotions a text shows, each with an intensity 0..1: 0.6 for a cue, 0.9 when an intensifier
    ("very", "очень", "很") precedes it. A negation right before the cue ("not happy", "не рад",
    "不开心") drops it: inverting an emotion by rule guesses wrong too often to be worth it."""
    return dict(_emotions(text))


@functools.lru_cache(maxsize=4096)
def _emotions(text: str) -> tuple[tuple[str, float], ...]:
    tokens = memory_words(text)
    found: dict[str, float] = {}
    for cues, prefix in ((_CUES_EN, False), (_CUES_RU, True), (_CUES_ZH, False)):
        for emotion, at in _hits(tokens, cues, prefix).items():
            before = tokens[max(0, at - 2):at]
            if set(before) & _NEGATIONS:
                continue
            found[emotion] = max(found.get(emotion, 0.0), 0.9 if set(before) & _INTENSIFIERS else 0.6)
    return tuple(found.items())


def dominant_emotion(text: str) -> str:
    """The emotion a text shows most (intensity × |valence|, then intensity), or "" when it shows none:
    a memory's colouring (seed 004's `emotion`)."""
    found = detect_emotions(text)
    if not found:
        return ""
    return max(found, key=lambda name: (found[name] * abs(valence(name)), found[name]))



# --- Whom a feeling is about (mood) ----------------------------------------------------------
# Seed 004 moved a character's affinity and trust by every emotion of the user's: fury at a landlord or
# sadness confided to the character cooled the relationship. `emotion_target` says whom a sentence's
# feeling is about, so that rag.memories.mood moves the relationship by what concerns the character.
OUTWARD_EMOTIONS = frozenset({"anger", "disgust", "boredom"})  # aimed at something, when no one is named
# Other people besides THIRD_PARTY's words: roles a grievance names ("my landlord", "моего арендодателя",
# "我房东"). Russian by the beginning of the word (its case), Chinese as substrings (jieba joins "我老板").
_PEOPLE_EN = _set("landlord landlady manager supervisor roommate flatmate housemate ex partner doctor professor "
                  "coach classmate client customer customers kids children parents family team guy girl man woman "
                  "people someone somebody everyone everybody bosses neighbours neighbors teachers friends")
_PEOPLE_RU = ("арендодател", "хозяин", "хозяйк", "начальни", "руководител", "босс", "шеф", "коллег", "сосед",
              "подруг", "бывш", "парн", "девушк", "родител", "дети", "детей", "детям", "детьми", "ребен", "сын",
              "доч", "брат", "сестр", "мам", "пап", "муж", "жен", "учител", "препода", "клиент", "менеджер")
_PEOPLE_ZH = re.compile(r"老板|上司|领导|经理|同事|房东|室友|邻居|老师|朋友|妈妈|爸爸|父母|哥哥|姐姐|弟弟|妹妹"
                        r"|老公|老婆|男朋友|女朋友|男友|女友|前任|孩子|儿子|女儿|客户|(?<!其)他|她")
# Said to the character to share, not to address it: "you know", "just between us", "только тебе скажу",
# "我只告诉你". They are taken out before looking for "you", and make a turn's unattributed feelings the user's.
_CONFIDES = re.compile(
    r"\b(?:you\s+know|between\s+(?:us|you\s+and\s+me)|(?:i'm\s+)?only\s+(?:telling|tell)\s+you(?:\s+this)?"
    r"|don't\s+tell\s+anyone|i(?:'ve|\s+have)\s+never\s+told\s+anyone|can\s+i\s+tell\s+you\s+something)\b"
    r"|(?<!\w)(?:знаешь|между\s+нами|только\s+тебе(?:\s+(?:скажу|расскажу|говорю))?|никому\s+не\s+(?:говори|рассказывай)"
    r"|по\s+секрету|никому\s+не\s+рассказывал[аи]?)(?!\w)"
    r"|你知道吗|你知道|(?:我)?只(?:跟|对)?(?:告诉|跟)你(?:说)?|别告诉别人|不要告诉别人|你别说出去|我没跟别人说过")
# Hostility at the character, en/ru/zh: insults and "I hate you" are anger at it whatever words of feeling
# they carry ("you're useless" has none).
_HOSTILE = re.compile("|".join((
    r"\byou(?:'re|\s+are|\s+r)\s+(?:(?:so|such|really|totally|completely|absolutely|just|a|an|the)\s+)*"
    r"(?:useless|stupid|dumb|idiot|moron|worthless|pathetic|annoying|boring|terrible|awful|worst"
    r"|garbage|trash|lame|incompetent|hopeless|disappointing|joke|clueless)\b",
    r"\bi\s+(?:really\s+|just\s+)?(?:hate|despise|can't\s+stand)\s+you\b|\b(?:shut\s+up|screw\s+you|f\w*k\s+you)\b",
    r"\byou\s+(?:suck|never\s+listen|don't\s+(?:even\s+)?care|always\s+forget|ruin\w*|annoy\s+me|disgust\s+me)\b",
    r"\b(?:angry|mad|furious|annoyed|pissed|disappointed|sick|tired|fed\s+up)\s+(?:at|with|of|in)\s+you\b",
    r"(?<!\w)(?:ты|вы)\s+(?:(?:такой|такая|такие|совсем|просто|абсолютно|полностью|реально|очень|меня)\s+)*"
    r"(?:бесполез\w*|туп\w*|глуп\w*|дура?|идиот\w*|никчем\w*|ужас\w*|отстой\w*|скуч\w*|бестолков\w*"
    r"|бесишь|бесите|раздражаешь|достал[аи]?|надоел[аи]?|задолбал[аи]?)(?!\w)",
    r"(?<!\w)(?:ненавижу\s+(?:тебя|вас)|(?:тебя|вас)\s+ненавижу|(?:зол|зла|злюсь|сержусь|обижен[аы]?)\s+на\s+(?:тебя|вас)"
    r"|заткнись|отстань)(?!\w)",
    r"(?:你|您)(?:真|太|好|很|就是个?|这个|简直)*(?:没用|笨|蠢|烦人?|无聊|差劲|垃圾|废物|讨厌|白痴|傻)"
    r"|(?:讨厌|恨|受不了)(?:你|您)|生(?:你|您)的气|对(?:你|您)(?:很|太|真)?(?:失望|生气|不满)|闭嘴",
)))
# A name said in passing ("I'm furious at Tom", "Я поругалась с Олей"): a capital not opening the sentence.
_NON_INITIAL_CAPITAL = re.compile(r"(?<=[\w,;:—–-]\s)[A-ZА-ЯЁ][a-zа-яё]+")


def confides(text: str) -> bool:
    """Whether the user shares something in confidence ("just between us", "только тебе скажу", "我只告诉你")."""
    return bool(_CONFIDES.search(normalize(text)))


def hostility(text: str) -> float:
    """The intensity (0.6, 0.9 with an intensifier) of hostility at the character in a user's sentence, else 0."""
    said = normalize(text)
    found = _HOSTILE.search(said)
    if not found:
        return 0.0
    return 0.9 if set(memory_words(said[:found.end()])) & _INTENSIFIERS else 0.6


def emotion_target(text: str, character: str = "") -> str | None:
    """Whom the feeling of a user's sentence is about: "character" (hostility at it, or it is spoken to:
    "thank you", "я зла на тебя"), "third_party" (someone else is named: "my landlord", "Tom", "我老板"),
    "user" (the speaker's own life: "I'm so sad today"), or None (no one: "ugh, this is annoying")."""
    if _HOSTILE.search(normalize(text)):
        return "character"
    without = _without_address(text, character) if character else text
    said = _CONFIDES.sub(" ", normalize(without))
    tokens = memory_words(said)
    present = set(tokens)
    named = {m.casefold() for m in _NON_INITIAL_CAPITAL.findall(without)} - {character.strip().casefold(), "i"}
    if (present & (THIRD_PARTY | _PEOPLE_EN) or named or _PEOPLE_ZH.search(said)
            or any(t.startswith(_PEOPLE_RU) for t in tokens if "а" <= t[:1] <= "я")):
        return "third_party"
    if present & SECOND_PERSON or "你" in said or "您" in said:
        return "character"
    if present & FIRST_PERSON or "我" in said:
        return "user"
    return None
