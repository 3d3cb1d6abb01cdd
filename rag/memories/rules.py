"""The offline consolidator (`LLM_PROVIDER=off`): seed 004's consolidation JSON by rules, en/ru/zh.

It reads the window sentence by sentence, keeping who said each one:
- the user about themselves with a personal fact (name, home, work, likes, fears, health…) → facts_about_user;
- anyone telling something that happened (past markers: "yesterday", "вчера", "昨天", past-tense
  verbs), the user's household too ("Last weekend we went to the lake", "上周末我们去了西湖") → past_events;
- the character only where it speaks of itself ("I", "we"; or its own story of others, in the past): its "I
  think / I believe" and likes ("I love rainy days") → self_beliefs, its "I will / I'll / let's", goals and
  plans ("I'll remind you tomorrow", "Я напомню тебе завтра") → objectives, its own facts → key_facts, never
  about the user and at their own importance (the floors below are the user's);
- any sentence of the user's whose importance (classify.calculate_importance) reaches KEY_FACT_IMPORTANCE, and
  the user's facts about other people ("my sister lives in Madrid", "My mom is a teacher", "我有一个哥哥")
  → key_facts, with topic tags ("play" is `games` only when no instrument or sport is played);
- the user's goals, plans and preferences ("I want to learn Portuguese", "я не пью кофе", "我打算四月去
  日本", "I promised myself I'd start running": classify.personal_statement) → facts_about_user, and so
  is what they have ahead by its date alone ("I'm nervous about my exam next Friday", "В субботу мы едем
  на дачу", "我下个月要去上海出差"); a plan or goal keeps the days its relative dates meant on the day it was
  said ("next Friday (2024-05-10)", rag.memories.when), a relative of theirs' goes to key_facts;
- emotions detected in the user's words → emotions, scored intensity × valence (-1..1), each with whom it is
  about when a rule can tell (`target`: "character", "user", "third_party"; classify.emotion_target), so the
  mood does not cool towards the character for fury at a landlord; an insult to the character ("you're
  useless", "ты бесполезен", "你真没用") is anger at it; each item carries the emotion its own sentence shows
  most ("мне грустно" → sadness) as its `emotion`.
Importance is `calculate_importance`'s; a sentence of the user's (about them or their people) is lifted to the
least of what it is about (MATTERS): health and safety (an allergy, a condition, medication, a phobia; tag
`health`) 0.9, a life's turns (a birthday, a new job, a move, a death, a breakup; tag `life_events`) 0.8, the
person's own likes, wants and plans 0.6; small talk keeps its own (0.4 or less). The first two reach the default
MEMORY_PROTECTED_IMPORTANCE: age alone never prunes them.
Who said a sentence decides whose it is: the user's words are never the character's own memory
unless they talk about the character (calling it by name does not). What is said but states
nothing is skipped: questions, the two sides' "I love you" / "I miss you", the character's stock
replies ("I'll remember that!", "I'm always here for you", "Would you like me to…?"), which carry
emphasis words and would otherwise score as key facts, and its replies that only react to the user's
turn ("I hope Rex was happy there.", "That must have been hard", "Надеюсь, ему там было хорошо",
"那一定很难受"), which told in the past were kept as the character's own past events, and its wishes,
congratulations and encouragement ("Happy birthday!", "Поздравляю с новой работой!", "加油！", "You'll do great");
so are the user's when they only answer the other side ("That must have been tough for you", "I'm always here for
you!"), unless they tell of the user or name one of their people (`_replies`).
Memory texts keep the speaker ("Anna: I moved to Lisbon"), so the user's words and the
character's are never confused downstream. Each item carries a confidence: lower for the
guesses a rule makes most often wrong, which then wait for review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from functools import cache
from typing import Any

from memoryhub.text import analyze, normalize, pronoun_terms, split_sentences
from rag.filler import is_filler
from rag.memories import when
from rag.memories.classify import (
    FIRST_PERSON,
    FIRST_PERSON_PLURAL,
    OUTWARD_EMOTIONS,
    PERSONAL,
    SECOND_PERSON,
    THIRD_PARTY,
    calculate_importance,
    confides,
    detect_emotions,
    determine_memory_kind,
    dominant_emotion,
    emotion_target,
    hostility,
    implied_speaker,
    is_past,
    memory_words,
    personal_statement,
)
from rag.memories.vocab import valence

KEY_FACT_IMPORTANCE = 0.7


@dataclass(frozen=True)
class Turn:
    speaker: str  # display label: the user's name or "User", the character's name
    text: str
    is_character: bool
    # When it was said: what a relative date in it means. None: unknown, read as said today, and the
    # dates of a plan are not written out.
    said_at: datetime | date | None = None


def _set(*groups: str) -> frozenset[str]:
    return frozenset(w for group in groups for w in group.split())


BELIEF = _set("think believe feel guess am consider думаю считаю верю чувствую кажется 觉得 认为 相信 感觉")
# "i'll" is a word of its own ("I will" is two).
OBJECTIVE = _set(
    "will i'll let's gonna plan going promise try буду будем собираюсь планирую попробую давай обещаю "
    "要 会 打算 计划 准备 试试 让我们"
)
TOPIC_TAGS = {
    "games": _set("game games gaming videogame videogames chess игра игры игру играх шахматы 游戏 电子游戏 象棋"),
    "music": _set("music song songs band concert guitar piano violin drums ukulele cello flute saxophone trumpet harp",
                  "clarinet музыка песня песни концерт гитара",
                  "音乐 歌 演唱会 吉他 钢琴 小提琴 鼓 架子鼓 尤克里里 大提琴 长笛 萨克斯 二胡 古筝 琵琶"),
    "technology": _set("computer code coding programming tech software компьютер код программирую 电脑 编程 技术"),
    "sports": _set("sport sports football soccer basketball volleyball tennis hockey golf baseball badminton",
                   "run running gym yoga спорт футбол бег зал йога",
                   "运动 足球 篮球 排球 网球 乒乓球 羽毛球 高尔夫 跑步 健身"),
    "movies": _set("movie movies film films cinema фильм фильмы кино 电影"),
    "books": _set("book books novel read reading книга книги роман читать читаю 书 小说 读书"),
    "family": _set("family mom mum mother dad father parents brother brothers sister sisters son sons daughter "
                   "daughters kids children wife husband grandma grandmother grandpa grandfather "
                   "семья мама папа брат сестра сын дочь "
                   "家人 妈妈 爸爸 妈 爸 我妈 我爸 爸妈 父母 哥哥 姐姐 弟弟 妹妹 儿子 女儿 孩子 妻子 老婆 丈夫 老公"),
    "friends": _set("friend friends друг друзья подруга 朋友"),
    "work": _set("work job office boss colleague работа работаю офис начальник коллега 工作 公司 老板 同事"),
}


# The character's stock replies, en/ru/zh: promises to remember, reassurance, sympathy, assent, offers of
# help. A sentence that is nothing else once they are taken out (`rag.context.is_filler` judges the
# rest) is no memory: "I'll remember that!" and "I'm always here for you" hold "remember" and "always",
# which the importance rule counts as emphasis, and they were kept as the character's key facts.
# "I'll remember that your sister lives in Madrid" keeps what it remembers, and so stays.
_STOCK = re.compile("|".join((
    r"\bi(?:'ll|\s+will)\s+(?:definitely\s+|always\s+|surely\s+)?(?:remember|keep\s+(?:that|it|this)\s+in\s+mind)"
    r"(?:\s+(?:that|this|it))?(?=\W*$|\W*[,;:—–-])",
    r"\bi(?:'ll|\s+will)\s+never\s+forget(?:\s+(?:that|this|it))?\b|\bi\s+won't\s+forget(?:\s+(?:that|this|it))?\b",
    r"\bi\s+promise\b",
    r"\bi(?:'m|\s+am|(?:'ll|\s+will)\s+(?:always\s+)?be)\s+(?:always\s+)?(?:right\s+)?(?:here|there)(?:\s+for\s+you)?(?:\s+always)?"
    r"(?:\s+(?:if|whenever)\s+you\s+need\s+(?:me|anything|to\s+talk))?",
    r"\bi(?:'m|\s+am)\s+(?:so\s+|really\s+|very\s+)?sorry\s+(?:to\s+hear\s+(?:that|it|this)|that\s+happened)",
    r"\b(?:that|this|it)(?:'s|\s+is)?\s+sounds?\s+(?:\w+\s+)?\w+",
    r"\b(?:noted|got\s+it|understood|i\s+see|i\s+understand|makes\s+sense|of\s+course|absolutely|tell\s+me\s+more"
    r"|well\s+done|good\s+for\s+you|how\s+(?:exciting|nice|lovely|cool|sad|awful)|thanks\s+for\s+(?:asking|sharing"
    r"|telling\s+me))\b",
    # "It's been a while since we talked": a greeting, whose "we" and "talked" told the character's past.
    r"(?:\b(?:it(?:'s|\s+has)\s+)?been\s+(?:a\s+(?:while|bit|few\s+\w+|couple(?:\s+of)?\s+\w+)|ages|forever"
    r"|so\s+long)\s+)?since\s+(?:we|i)\s+(?:last\s+)?(?:talked|chatted|chat|spoke|saw\s+you)\b",
    r"\blet\s+me\s+know\s+if\s+you\s+(?:ever\s+)?need\s+(?:anything|me|help)|\bi(?:'d|\s+would)\s+be\s+(?:happy|glad)"
    r"\s+to\s+help(?:\s+you)?.*|\bi\s+can\s+help(?:\s+you)?(?:\s+with\s+that)?\b",
    r"(?:^|\bя\s+)(?:это\s+|обязательно\s+|всегда\s+|точно\s+)*(?:запомню|запомнила?|не\s+забуду)(?:\s+(?:это|этого))?"
    r"(?=\W*$|\W*[,;:—–-])",
    r"\bобещаю\b|\bя\s+(?:всегда\s+)?(?:рядом|с\s+тобой|здесь)(?:\s+всегда)?",
    r"\bмне\s+(?:так\s+|очень\s+)?жаль(?:\s+это\s+слышать)?|\b(?:понятно|понимаю|ясно|расскажи\s+(?:мне\s+)?"
    r"(?:подробнее|больше)|обращайся|молодец)\b|\bесли\s+(?:тебе\s+)?(?:что-то|что-нибудь)\s+понадобится\b",
    r"我(?:会|一定会|永远)?(?:不会忘记|记住|记得)(?:的|了)?(?=\W*$)|记住了|我保证|我答应你",
    r"我(?:会)?(?:一直|永远|随时)?(?:在这里|在这儿|陪着你|在你身边)|(?:很|真)?(?:抱歉|遗憾)(?:听到(?:这个|这些)?)?"
    r"|我(?:明白|理解|懂)(?:了)?|明白了|知道了|多(?:跟我)?说说|随时(?:找我|告诉我)",
)))
# Feelings the two sides say to each other: the mood takes them (as emotions), a memory would only
# repeat the chat. "I love you, Neiri!" is not a fact about the user.
_TO_EACH_OTHER = re.compile(r"\b(?:love|hate|miss|adore)\s+you\b"
                            r"|\b(?:люблю|ненавижу|обожаю|скучаю\s+по)\s+(?:тебя|тебе|вас)\b|(?:爱|喜欢|讨厌|想)(?:你|您)")
# "…, huh?", "…, right?", "… - want to see a pic?": a statement with a tag question, kept for its
# statement ("I started my own clothing store not so long ago - pretty cool, huh?").
_TAG_QUESTION = re.compile(r"(?:,|\s[-–—])\s*(?:pretty\s+\w+,?\s+)?(?:huh|right|eh|yeah|ok|okay|isn't\s+it|you\s+know"
                           r"|don't\s+you\s+think|want\s+to\s+see\b[^?]*|правда|да|ведь|не\s+так\s+ли|верно"
                           r"|对吧|是吧|好吗|对不对|是不是)\W*[?？]\s*$")


# Liking, assent and praise of what the turn does not name, en/ru/zh: "Yeah, I love it.", "Yes, I'd love that.",
# "I'd love to have you over again.", "It must be really awesome!", "Я так это люблю!", "我也很喜欢这个！". Their "love"
# made them the user's preferences (0.7); read later, away from the turn before them, they say nothing of what was
# loved, and in a small context they took the room of the turn that did. The mood still takes what feeling they show.
_REACTING_WORDS = (
    "yeah yes yep yup oh wow love loved loving like liked enjoy enjoyed appreciate adore would i'd i'll again too "
    "also really so very totally absolutely definitely agree agreed awesome amazing great cool nice wonderful "
    "fantastic lovely sounds sound fun wait can't same here "
    "да ага ох ух вау люблю любила любил нравится понравилось обожаю очень так тоже согласен согласна "
    "классно круто здорово отлично супер "
    "喜欢 爱 很 也 真 太 好 棒 对 是 嗯 哇 同意 期待"
)


@cache
def _reacting_terms() -> frozenset[str]:
    return frozenset(analyze(_REACTING_WORDS)) | pronoun_terms()


def _names_nothing(sentence: str) -> bool:
    """A sentence of only liking, assent, praise and pronouns (`_REACTING_WORDS`)."""
    return set(analyze(sentence)) <= _reacting_terms()


def _asks(said: str) -> bool:
    """A question states nothing to remember: "What's her name?", "Do you remember my birthday?" (whose
    emphasis and personal words scored it a key fact), the character's "Would you like me to help?".
    `said`: the sentence normalised (`memoryhub.text.normalize`), as for `_stock`."""
    return said.endswith(("?", "？")) and not _TAG_QUESTION.search(said)


def _stock(said: str) -> bool:
    return is_filler(_STOCK.sub(" ", said))


# The character's replies that only react to the user's turn, en/ru/zh: a wish or sympathy about what the user
# told ("I hope Rex was happy there.", "I'm so glad you had fun", "I bet she loved it", "That must have been
# hard", "What a good boy!"), whatever follows. The user's turn is the memory; the reply, told in the past
# ("was"), was kept as the character's own past event. "I hope to sing in Tokyo one day" (its own hope),
# "I'm happy with my new song", "Надеюсь стать певицей" stay.
_INTERJECTION = r"^(?:(?:oh|aw+|ah|wow|well|yes|yeah|hmm+|ooh|omg|ох|ах|ой|ого|ну|да|ух|эх|哦|噢|啊|哇|嗯|唉|哎)\W*)*"
_REACTION = re.compile(_INTERJECTION + "(?:" + "|".join((
    r"i\s+(?:really\s+|do\s+|just\s+|truly\s+|sure\s+)?(?:hope|bet|wish)\b(?!\s+to\b)",
    r"i(?:'m|\s+am)\s+(?:so\s+|really\s+|very\s+|just\s+)?(?:glad|sorry|sure|certain"
    r"|(?:happy|proud)\b(?!\s+(?:to\s+(?!hear\b)|with\s+my\b|of\s+my\b)))\b",
    r"i\s+can(?:'t|not|\s+only|\s+totally|\s+just)?\s+imagine\b",
    r"(?:that|it|this|you|he|she|they)\s+must\s+(?:have\s+been|be|feel|miss)\b",
    r"(?:he|she|it|they)\s+(?:sounds?|seems?)\s+(?:like\s+)?(?:a\s+)?\w+",
    r"what\s+an?\s",
    # "That was thoughtful of him!", "Это так мило с его стороны", "他真贴心": a judgement of what the user told.
    r"(?:that|it|this)(?:'s|\s+is|\s+was)\s+(?:so\s+|really\s+|very\s+|super\s+)?"
    r"(?!(?:one|some|all|most|both|each|none|part|any|many|few)\s)\w+\s+of\s+(?:him|her|them|you)\b",
    r"(?:я\s+)?(?:очень\s+|так\s+|правда\s+|искренне\s+)?(?:надеюсь(?!,?\s+\w+(?:ть|ться|чь)\b)"
    r"|рад[аы]?,?\s+(?:за\s+тебя|что|слышать|это\s+слышать)|уверен[аы]?|представляю|сочувствую"
    r"|(?:не\s+)?могу\s+(?:себе\s+)?представить|жаль,?\s+что)(?!\w)",
    r"(?:должно\s+быть|наверное,?\s+(?:тебе|это\s+было|было|ему|ей))(?!\w)",
    r"(?:какой|какая|какое|какие)\s",
    r"(?:(?:это|как)\s+)?(?:было\s+)?(?:так\s+|очень\s+)?\w+\s+с\s+(?:его|ее|их|твоей|вашей)\s+стороны",
    r"我?(?:真|也|很|真的)?(?:希望(?=你|您|他|她|它|这|那|一切|大家|[a-z])|相信(?=你|您|他|她|它)"
    r"|为你(?:感到)?(?:高兴|骄傲|难过|开心)|(?:能|可以)想象|想象得到|理解你)",
    r"(?:那|这|他|她|它)?(?:一定|肯定)(?:很|是|让|会)",
    r"(?:真|太)(?:好|棒|可惜|遗憾|可爱|厉害)了?",
    r"(?:他|她|他们|她们)(?:真|太|好|很)(?:是)?(?:贴心|体贴|善良|温柔|细心|好|棒|可爱|厉害)",
)) + ")")


# The character's wishes, congratulations and encouragement, en/ru/zh: "Happy (belated) birthday!", "Congrats on the
# new job!", "Good luck tomorrow!", "You'll do great", "I believe in you", "Поздравляю с новой работой!", "Удачи!",
# "Ты справишься!", "生日快乐！", "恭喜你！", "加油！", "你一定可以的". Like the reactions above they answer the user's
# turn, which is the memory; their "birthday", "job", "happy" and "believe" made them the character's key facts and
# self-beliefs. A name may come first ("Bob, congrats!"), whatever follows goes with them.
_ADDRESS = r"(?:(?:[a-zа-я'-]+\s+)?[a-zа-я'-]+\s*,\s*|(?!我)[\u4e00-\u9fff]{1,3},\s*)?"
_WISH = re.compile(_INTERJECTION + _ADDRESS + "(?:" + "|".join((
    r"(?:(?:have\s+a\s+)?(?:very\s+)?(?:happy|merry)\s+(?:(?:belated|early|late)\s+)?"
    r"(?:birthday|b-?day|anniversary|new\s+year|christmas|holidays?|easter|hanukkah|\w+(?:'s)?\s+day)"
    r"|many\s+happy\s+returns|congrat(?:s|ulations)|(?:good|best\s+of)\s+luck|fingers\s+crossed|break\s+a\s+leg"
    r"|get\s+well(?:\s+soon)?|feel\s+better(?:\s+soon)?|(?:so\s+)?sorry\s+(?:for|about)\s+your\b"
    r"|(?:my\s+)?(?:deepest\s+)?condolences|well\s+deserved|you\s+deserve\s+(?:it|this)"
    r"|hope\s+(?:you|your|it|he|she|they|that|everything|all)\b)\b",
    r"you(?:'ll|\s+will)\s+(?:(?:definitely|surely|totally|absolutely)\s+)?(?:do\s+(?:great|fine|well|amazing(?:ly)?|"
    r"awesome|brilliant(?:ly)?|good)|be\s+(?:fine|great|ok(?:ay)?|alright|all\s+right|amazing)|nail\s+it|ace\s+it"
    r"|crush\s+it|rock\s+it|make\s+it|get\s+through\s+(?:it|this))\b",
    r"(?:you|we)(?:'ve|\s+have)?\s+got\s+this\b|you\s+can\s+do\s+(?:it|this)\b",
    r"i(?:'m|\s+am)?\s+(?:\w+\s+)?(?:rooting|cheering)\s+for\s+you\b",
    r"i\s+(?:really\s+|truly\s+|totally\s+|still\s+|always\s+)?believe\s+in\s+you\b",
    r"(?:я\s+)?(?:от\s+(?:всей\s+)?души\s+|искренне\s+)?поздравля(?:ю|ем)(?!\w)",
    r"с\s+(?:(?:прошедшим|наступающим)\s+)?(?:(?:днем|днюхой)(?:\s+рождения)?|новым\s+годом|рождеством"
    r"|праздником|юбилеем|годовщиной|повышением|новосельем|свадьбой|новой\s+работой)(?!\w)",
    # "Желаю удачи" is a wish, "желаю стать певицей" the character's own.
    r"(?:я\s+)?(?:желаю|пожелаю)(?!\w)(?!\s+\w+(?:ть|ться)\b)|(?:удачи|успехов|ни\s+пуха|выздоравливай|поправляйся)(?!\w)",
    r"(?:ты|вы)\s+(?:обязательно\s+|точно\s+|непременно\s+|все\s+)?(?:справишься|справитесь|сможешь|сможете)(?!\w)",
    r"у\s+(?:тебя|вас)\s+(?:(?:обязательно|точно|все|всё)\s+)*(?:получится|выйдет|будет\s+хорошо)(?!\w)",
    r"(?:я\s+)?(?:в\s+(?:тебя|вас)\s+верю|верю\s+в\s+(?:тебя|вас))(?!\w)|держу\s+(?:за\s+тебя\s+)?кулач?к[иа](?!\w)",
    r"我?(?:祝|恭喜|祝贺)|(?:生日|新年|节日|圣诞|中秋|春节|周末|结婚纪念日)快乐|加油(?!站)|好运|早日康复|一切顺利",
    # "你可以叫我Neiri" (you can call me Neiri) is no encouragement: a bare "你可以" needs its "的" or an adverb.
    r"(?:你|您)也?(?:(?:一定|肯定|绝对|完全)(?:可以|能行|行|没问题|做得到|能做到|会成功|会没事|能搞定|能成功)"
    r"|可以的|能行|行的|没问题的|做得到|能做到|会成功的|能成功的)",
    r"我(?:一直|永远)?(?:相信|支持)(?:你|您)",
)) + ")")


def _replies(said: str, is_character: bool, *, about_the_user: bool) -> bool:
    """A sentence that only answers the other side's turn: a stock reply, a reaction, a wish or praise (the
    patterns here). The character's always; the user's too (in LoCoMo both speakers are users, and consolidated
    "Tim: You must have been elated up there with that trophy." and "Nate: I'm always here for you!" were kept
    as their key facts and past events), unless it tells of the user or their people as well ("I'm so glad I
    moved to Lisbon", "I'm so proud of my son, he got into Stanford!"); a wish never does but when it names them."""
    if is_character:
        return bool(_stock(said) or _REACTION.search(said) or _WISH.search(said) or _OF_YOU.search(said))
    if _THEIR_PERSON.search(said):
        return False
    return bool(_WISH.search(said) or (not about_the_user and (
        _stock(said) or _REACTION.search(said) or _OF_YOU.search(said))))


# The character's praise and comfort as what it thinks or knows of the user, en/ru/zh: "I think you're amazing", "I
# know how hard you work", "I understand how you feel", "Я думаю, ты справишься", "我觉得你很棒". They carry BELIEF's
# words and were kept as its self-beliefs. "I think Dan really cares about you" is its opinion of Dan, and stays.
_OF_YOU = re.compile("|".join((
    r"\bi\s+(?:really\s+|truly\s+|just\s+|do\s+|still\s+|totally\s+|always\s+)?(?:think|believe|feel|guess|know"
    r"|understand|admire|appreciate|love|like|adore)\s+(?:that\s+|how\s+(?:much\s+)?|what\s+|it\s+when\s+"
    r"|the\s+way\s+|(?:that|it|this)\s+about\s+)?(?:you|your|you're|you've|you'll|you'd)\b",
    r"(?<!\w)(?:я\s+)?(?:правда\s+|очень\s+|так\s+|искренне\s+)?(?:думаю|считаю|верю|понимаю|знаю|чувствую"
    r"|восхищаюсь|ценю|горжусь),?\s+(?:что\s+|как\s+|насколько\s+)?(?:ты|тебе|тебя|тобой|твой|твоя|твое|твои|вы|вам"
    r"|вас|вами|ваш|ваша|ваши)(?!\w)",
    r"我(?:真的|很|也|一直|非常)?(?:觉得|认为|相信|知道|理解|明白|欣赏|佩服|懂)(?:你|您)",
)))


# What matters to a companion, most first, en/ru/zh: what keeps the user safe (an allergy or intolerance, a
# condition, medication, a phobia: forgotten, the companion offers the peanut dish), then the turns of a life (a
# birthday, a new job, a move, a death, a breakup, a wedding), then the person's likes, wants and plans
# (PERSONAL_IMPORTANCE). Each is the least its sentence is worth and tags it; `calculate_importance`'s own signals
# (asked to be remembered, a number, a feeling) only lift it, and small talk keeps its score (0.4 or less).
_HEALTH = re.compile("|".join((
    r"\b(?:allerg(?:ic|y|ies)|(?:lactose|gluten)[\s-]+(?:intolerant|intolerance|free)|intolerant\s+to|c(?:o)?eliac"
    r"|diabet(?:es|ic)|asthma(?:tic)?|epilep(?:sy|tic)|seizures?|migraines?|insomnia|hypertension|blood\s+pressure"
    r"|cancer|tumou?r|chemo(?:therapy)?|leukaemia|leukemia|heart\s+(?:condition|disease|problems?|attack)"
    r"|depression|anxiety\s+disorder|panic\s+attacks?|adhd|autis(?:m|tic)|bipolar|ptsd|ocd|disabilit(?:y|ies)|disabled"
    r"|wheelchair|deaf|medications?|meds|insulin|inhaler|epi-?pen|antidepressants?|chronic|diagnosed"
    # A fear, not a prejudice: "homophobic" is no phobia of the speaker's.
    r"|(?!(?:homo|xeno|trans|islamo)phob)\w*phobi(?:a|c))\b",
    r"\b(?:terrified|afraid|scared)\s+of\s+(?:the\s+)?(?:heights?|spiders?|snakes?|dogs?|flying|planes?|needles?|blood"
    r"|(?:deep\s+)?water|dark|crowds?|elevators?|lifts?|bees?|wasps?|insects?|clowns?|(?:open|enclosed)\s+spaces)\b",
    r"(?<!\w)(?:аллерги\w*|непереносимост\w*|целиаки\w*|диабет\w*|астм\w*|эпилепс\w*|мигрен\w*|бессонниц\w*"
    r"|гипертони\w*|онколог\w*|опухол\w*|химиотерапи\w*|депресси\w*|аутиз\w*|биполяр\w*|инвалид\w*|лекарств\w*"
    r"|таблет(?:к\w*|ок)|инсулин\w*|ингалятор\w*|антидепрессант\w*|хроническ\w*|диагноз\w*"
    r"|(?!(?:гомо|ксено|транс|исламо)фоб)\w*фоби\w*"
    r"|клаустрофоб\w*|(?:высок|низк|повышенн|пониженн)\w*\s+давлени\w*|паническ\w*\s+атак\w*"
    r"|(?:болезн|проблем)\w*\s+с\s+сердцем|у\s+\w+\s+(?:нашли\s+|обнаружили\s+)?рак)(?!\w)",
    r"(?<!\w)бо(?:юсь|ится|ятся|ялс[яь]|ялась)\s+(?:высоты|пауков|змей|собак|летать|самолетов|уколов|иголок|крови"
    r"|(?:глубокой\s+)?воды|глубины|темноты|толпы|лифтов|пчел|ос|насекомых|клоунов|замкнутого\s+пространства)(?!\w)",
    r"过敏|不耐受|糖尿病|哮喘|癫痫|偏头痛|失眠症|(?:一直|经常|总是|长期)失眠|高血压|低血压|癌|肿瘤|化疗|心脏病|抑郁症|焦虑症|惊恐发作|多动症|自闭症"
    r"|双相|强迫症|残疾|吃药|服药|药物|胰岛素|吸入器|慢性病|确诊|诊断|恐惧症|恐高|幽闭"
    r"|怕(?:高(?![考兴])|蜘蛛|蛇|狗|坐飞机|打针|针|血|水|黑|电梯|蜜蜂|虫子|小丑)",
)))
_LIFE_EVENT = re.compile("|".join((
    # Not "fired up", "I proposed a new plan", "my phone died": the words of a life's turn only where they are one.
    r"\b(?:birthday|b-?day|turn(?:ed|ing|s)\s+\d+|(?:new|first)\s+job|got\s+(?:a|the)\s+job|promot(?:ed|ion)"
    r"|(?:got|was|been|get|getting)\s+(?:hired|fired)|(?:hired|fired)\s+me|laid\s+off|(?:quit|lost)\s+my\s+job"
    r"|retir(?:ed|ing|ement)|relocat(?:ed|ing)|mov(?:ed|ing)\s+(?:to|into|out|in\s+with|house|abroad|back)"
    r"|new\s+(?:apartment|flat|house|home)|(?<!phone\s)(?<!battery\s)(?<!laptop\s)(?<!computer\s)(?<!car\s)died"
    r"|passed\s+away|funeral|lost\s+my\s+(?:mom|mum|mother|dad|father|wife|husband|brother|sister|son|daughter"
    r"|grand\w+|best\s+friend|dog|cat)|broke\s+up|break-?up|split\s+up|dumped|divorc(?:e|ed|ing)"
    r"|married|wedding|(?:got|are|am|i'm|we're|is|just)\s+engaged|engaged\s+to|engagement"
    r"|proposed\s+to\s+(?:me|her|him)|(?:he|she)\s+proposed|pregnan(?:t|cy)|gave\s+birth|had\s+a\s+baby"
    r"|graduat(?:ed|ing|ion)|anniversary)\b",
    r"(?<!\w)(?:(?:день|дня|дню|днем)\s+рождения|днюх\w*|исполни(?:лось|тся)\s+\d+|нов(?:ая|ую|ой)\s+работ\w*"
    r"|устроил(?:ся|ась)\s+на\s+работу|повысили|(?:получил[аи]?|дали)\s+повышение|уволи\w*|увольнени\w*"
    r"|меня\s+сократили|сократили\s+меня|на\s+пенси\w*"
    r"|переех\w*|переезд\w*|умер(?:ла|ли)?|скончал\w*|похорон\w*|не\s+стало|расстал\w*|развел(?:ся|ась|ись)"
    r"|развод\w*|бросил[аи]?\s+меня|женил(?:ся|ись)|(?:вышла|выхожу|выйду)\s+замуж|свадьб\w*|помолвк\w*"
    r"|обручил\w*|сделал\s+(?:мне\s+)?предложение|беременн\w*|родил(?:а|ся|ась)\s+(?:сын|доч|ребен)\w*"
    r"|окончил[аи]?|выпускн\w*|годовщин\w*)(?!\w)",
    r"生日|岁了|新工作|找到了?工作|换了?工作|入职|升职|炒鱿鱼|解雇|开除|裁员|辞职|退休|搬家|搬到|搬去|去世|过世|葬礼"
    r"|分手|离婚|结婚|婚礼|订婚|求婚|怀孕|生了(?:孩子|儿子|女儿|宝宝)|毕业|周年",
)))
MATTERS: tuple[tuple[str, re.Pattern[str], float], ...] = (
    ("health", _HEALTH, 0.9),
    ("life_events", _LIFE_EVENT, 0.8),
)
PERSONAL_IMPORTANCE = 0.6


def _matters(said: str) -> list[tuple[str, float]]:
    """The table's rows a sentence is about (tag, least importance), most important first. `said`: normalised."""
    return [(tag, floor) for tag, pattern, floor in MATTERS if pattern.search(said)]


# Work as the place where something happened, not what the user does: "I had a rough day at work" is an
# event (PastEvents, a month's half-life), where "I work as a nurse" is a fact about the user.
_AT_WORK = re.compile(r"\b(?:at|after|before|from|to)\s+work\b|\b(?:на|с|после|до)\s+работ[еуы]\b")


# The user telling who their people are, en/ru/zh: a sentence whose subject is one of them ("My mom is a teacher",
# "Мой папа работает врачом", "Мою маму зовут Анна", "我妈妈是老师") or who they have ("I have two sisters", "У меня
# есть брат", "我有一个哥哥"). Told in the present with no word of PERSONAL, "My mom is a teacher" was dropped as small
# talk; what happened with them ("Я поссорилась с мамой") is a past event already.
_KIN_EN = (r"(?:mom|mum|mother|dad|father|parents?|brothers?|sisters?|siblings?|sons?|daughters?|kids?|children|wife"
           r"|husband|girlfriend|boyfriend|partner|fianc[eé]e?|grandma|grandmother|grandpa|grandfather|grandparents?"
           r"|aunt|uncle|cousins?|nieces?|nephews?|in-laws?|family|friends?|colleagues?|coworkers?|boss"
           r"|neighbou?rs?|roommates?)")
# Whole words: "моя тетрадь", "моя папка", "мой другой телефон" are no people.
_KIN_RU = (r"(?:мам\w*|мат(?:ь|ер\w*)|пап(?:а|ы|е|у|ой|ин\w*)|от(?:ец|ц\w*)|брат\w*|сестр\w*|сын\w*|доч\w*|муж\w*"
           r"|жен(?:а|ы|у|е|ой)|парн\w*|девушк\w*|бабушк\w*|дедушк\w*|тет(?:я|и|е|ю|ей)|дяд\w*|родител\w*"
           r"|семь(?:я|и|е|ю|ей)|друг(?:а|у|ом|е|и|ей|ья|ьям|ьями|ьях)?|друз\w*|подруг\w*|коллег\w*|начальни\w*"
           r"|сосед\w*)(?!\w)")
# Not "我的妈呀" (oh my god).
_KIN_ZH = (r"(?:妈妈|妈|母亲|爸爸|爸|父亲|父母|爸妈|哥哥|哥|弟弟|弟|姐姐|姐|妹妹|妹|儿子|女儿|孩子|妻子|老婆|丈夫|老公"
           r"|女朋友|男朋友|女友|男友|奶奶|爷爷|外婆|外公|姥姥|姥爷|家人|朋友|同事|老板|邻居|室友)(?![呀啊耶])")
_OF_THEIR_PEOPLE = re.compile("|".join((
    rf"^(?:(?:and|but|so|well|also|oh|btw|actually|anyway)\W+)*(?:my|our)\s+(?:[a-z'-]+\s+){{0,2}}?{_KIN_EN}\b",
    rf"\bi(?:\s+have|'ve\s+got|\s+have\s+got)\s+(?:a|an|one|two|three|four|five|\d+)\s+(?:[a-z'-]+\s+)?{_KIN_EN}\b",
    rf"^(?:(?:а|и|но|кстати|вот|ну)\W+)*(?:мой|моя|мое|мои|моего|моей|моих|мою|моему|наш|наша|наши)\s+"
    rf"(?:[а-я-]+\s+)?{_KIN_RU}",
    rf"(?<!\w)у\s+меня\s+(?:есть\s+)?(?:[а-я-]+\s+)?{_KIN_RU}",
    rf"^(?:而且|还有|对了)?[，,]?我(?:的)?(?:最好的|亲)?{_KIN_ZH}",
    rf"我有(?:一|两|二|三|四|五|\d)?(?:个|位)?{_KIN_ZH}",
)))

# One of the user's people named anywhere in a sentence ("I'm so glad my sister got the job", "Я рада, что моя сестра
# поступила", "我为我女儿感到骄傲"): a reaction's words around news of them do not make it a reply to the other side.
_THEIR_PERSON = re.compile("|".join((
    rf"\b(?:my|our)\s+(?:[a-z'-]+\s+){{0,2}}?{_KIN_EN}\b",
    rf"(?<!\w)(?:мой|моя|мое|мои|моего|моей|моих|мою|моему|моим|моими|наш|наша|наши|нашей|нашего)\s+"
    rf"(?:[а-я-]+\s+)?{_KIN_RU}",
    rf"我(?:的)?(?:最好的|亲)?{_KIN_ZH}",
)))

_WE = re.compile(r"\bwe(?:'ve|’ve|'re|’re|'d|’d)?\b|(?<![а-яё])мы(?![а-яё])|我们")


def _personal(said: str) -> bool:
    tokens = memory_words(_AT_WORK.sub(" ", said))
    return bool(set(tokens) & PERSONAL) or any(t.startswith(("люб", "работа", "живу", "переех")) for t in tokens)


# Russian names the instrument or the sport in its case ("играть на гитаре", "играю в футбол"): by the stem.
_TAG_STEMS_RU = {
    "music": ("музык", "гитар", "пианин", "фортепиан", "скрипк", "барабан", "флейт", "саксофон", "виолончел",
              "укулеле", "балалайк", "аккордеон", "синтезатор"),
    "sports": ("футбол", "баскетбол", "волейбол", "хоккей", "теннис", "гольф", "бадминтон"),
    "family": ("мам", "папа", "папе", "папу", "папы", "папой", "брат", "сестр", "сын", "дочь", "дочер", "дочк",
               "семья", "семьи", "семье", "семью", "семьей", "родител", "бабушк", "дедушк"),
}
# "Play" is a game only when nothing else is played: "I want to learn to play the guitar" is music, "Я люблю
# играть в футбол" sports ("play" made both `games`), "I played all weekend" still a game.
_PLAY = _set("play plays played playing играть играю играет играем играют играл играла играли поиграть 玩 玩儿")
_PLAYED_INSTEAD = ("music", "sports")


# jieba joins a verb to what it is done with ("踢足球", "弹钢琴", "玩游戏"): a Chinese cue of two characters or more is
# found inside a word too. One character is not: "书" is in "秘书" (a secretary), "玩" in "玩笑" (a joke).
_TAG_CUES_ZH = {tag: tuple(c for c in cues if len(c) > 1 and "\u4e00" <= c[0] <= "\u9fff")
                for tag, cues in TOPIC_TAGS.items()}


def _tags(tokens: set[str]) -> list[str]:
    russian = [t for t in tokens if "а" <= t[:1] <= "я"]
    chinese = [t for t in tokens if len(t) > 2 and "\u4e00" <= t[0] <= "\u9fff"]
    tags = [tag for tag, cues in TOPIC_TAGS.items()
            if tokens & cues or (tag in _TAG_STEMS_RU and any(t.startswith(_TAG_STEMS_RU[tag]) for t in russian))
            or any(cue in t for t in chinese for cue in _TAG_CUES_ZH[tag])]
    if tokens & _PLAY and "games" not in tags and not set(tags) & set(_PLAYED_INSTEAD):
        tags.insert(0, "games")
    return tags


def _sentences(text: str) -> list[str]:
    # Not at the dot of "St. Luke" or "72.5": a memory cut there kept "I work as a nurse at St." alone.
    return [s for s in split_sentences(text) if len(s) > 1]


# The consolidation schema's list bounds (rag.memories.consolidation.CONSOLIDATION_SCHEMA uses these).
MAX_ITEMS = 100
MAX_EMOTIONS = 30
SUMMARY_MAX_CHARS = 2000


def _feel(emotions: dict[tuple[str, str | None], float], found: dict[str, float], target: str | None,
          confided: bool) -> None:
    """Fold a sentence's emotions (intensities) into the window's, the strongest per emotion and target. A feeling
    of the user's own that points outward (anger, disgust, boredom) with no one named is of no known target
    ("I'm so angry!"), unless told in confidence; one told in confidence is the user's."""
    for emotion, intensity in found.items():
        about = target
        if about == "user" and emotion in OUTWARD_EMOTIONS and not confided:
            about = None
        elif about is None and confided:
            about = "user"
        score = round(intensity * valence(emotion), 3)
        if abs(score) > abs(emotions.get((emotion, about), 0.0)):
            emotions[(emotion, about)] = score


def consolidate_rules(turns: Sequence[Turn], character: str = "") -> dict[str, Any]:
    """Seed 004's consolidation JSON from a window of turns, by rules (see the module docstring)."""
    out: dict[str, Any] = {"facts_about_user": [], "past_events": [], "self_beliefs": [], "objectives": [],
                           "emotions": [], "key_facts": []}
    seen: set[str] = set()
    emotions: dict[tuple[str, str | None], float] = {}
    for line, turn in enumerate(turns):
        said_at = turn.said_at
        said_on = (said_at.date() if isinstance(said_at, datetime) else said_at) or date.today()
        # Whom the turn's feelings are about: a sentence naming no one takes the last one named before it in the
        # turn ("My landlord raised the rent again. I'm so furious about it."); in confidence, the user's own.
        confided = not turn.is_character and confides(turn.text)
        about_before: str | None = None
        for sentence in _sentences(turn.text):
            tokens = memory_words(sentence)
            present = set(tokens)
            target, hostile = None, 0.0
            if not turn.is_character:
                target = emotion_target(sentence, character)
                if target in ("user", None):
                    target = about_before or target
                else:
                    about_before = target
                hostile = hostility(sentence)
                if hostile and len(tokens) < 3:  # "You're useless.": too short a sentence to keep, not to feel
                    _feel(emotions, {"anger": hostile}, target, confided)
            said = normalize(sentence)
            implied = implied_speaker(sentence) if not turn.is_character else None
            first_person = bool(present & FIRST_PERSON) or implied == "i"
            # The user's goals, plans and likes are facts about them; the character's are its objectives and beliefs.
            statement = personal_statement(sentence, said_on)
            # What the table of MATTERS finds in it, worth its floor where the user's own life or their people's is
            # told ("Я диабетик", "My mom passed away"); nobody's in "Happy birthday!". The floors keep what a
            # companion must not forget of the user; the character's lines keep their own score.
            matters = _matters(said)
            # jieba keeps "我想学", "我换" as one word.
            own = first_person or bool(present & FIRST_PERSON_PLURAL) or implied == "we" or "我" in said
            # "We" as the one who did it ("Last weekend we went to the lake", "В субботу ходили на Кремль", "上周末我们
            # 去了西湖"): the user's household's past, which was dropped; not "us" or "our" ("It keeps us focused").
            we_did = implied == "we" or bool(_WE.search(said))
            told = own or (not turn.is_character and bool(present & THIRD_PARTY))
            # A short statement is still one, and so is "Я диабетик".
            if len(tokens) < 3 and not statement and not (matters and told):
                continue
            text = f"{turn.speaker}: {sentence}"
            if text in seen:
                continue
            # Emotions come from the user's sentences whether or not one is kept as a memory: the mood takes
            # "I love you, Neiri!" that no memory does.
            if not turn.is_character:
                found = detect_emotions(sentence)
                if hostile:
                    found["anger"] = max(found.get("anger", 0.0), hostile)
                _feel(emotions, found, target, confided)
            about = determine_memory_kind(sentence, "assistant" if turn.is_character else "user", character).value
            personal = statement is not None or (first_person and (_personal(said) or "health" in dict(matters)))
            importance = calculate_importance(sentence, said_on)
            if told and not turn.is_character:
                floors = [floor for _, floor in matters] + ([PERSONAL_IMPORTANCE] if personal else [])
                importance = max([importance, *floors])
            family = not turn.is_character and bool(_OF_THEIR_PEOPLE.search(said))
            confidence = 0.75
            if turn.is_character:
                # The character's line is its memory only where it speaks of itself ("I", "we") or tells its own story
                # of others in the past: "That's important work.", "Always here for you." praise or comfort the user
                # and were kept as its key facts ("important", "work", "always" scored 0.9 and 0.7), one of them as
                # the user's. What it is or likes, said of the user ("I'm always happy when you visit"), is praise too,
                # and so is what it thinks of them (_OF_YOU, below); what it means to do for them ("I'll remind you
                # tomorrow", "Я напомню тебе завтра") is its objective.
                of_the_user = bool(present & SECOND_PERSON) or "你" in said or "您" in said
                if own and (statement in ("goals", "plans") or present & OBJECTIVE):
                    key, about, confidence = "objectives", "self", 0.65
                elif about == "user":  # jieba joined its "我" to a word: the rest speaks of the user
                    continue
                elif is_past(tokens) and (own or (about == "third_party" and not of_the_user)):
                    key, confidence = "past_events", 0.7
                elif not own:
                    continue
                elif statement == "preferences" or present & BELIEF:
                    key, about, confidence = "self_beliefs", "self", 0.65
                elif (importance >= KEY_FACT_IMPORTANCE or matters or personal) and not of_the_user:
                    key, confidence = "key_facts", 0.6
                else:
                    continue
            elif about == "user" and personal:
                key = "facts_about_user"
            # A plan arranged in the past tense is still ahead: "I booked a dentist appointment for my daughter for
            # Friday" is what the user's people have coming (below), not a past event.
            elif is_past(tokens) and statement not in ("goals", "plans") and (
                    first_person or we_did or about == "third_party"):
                key, confidence = "past_events", 0.7
            # What the user tells about the people in their life is worth keeping too: "My mom is a teacher",
            # "Мой папа работает врачом", "我妈妈是老师", "I have two sisters".
            elif importance >= KEY_FACT_IMPORTANCE or family or (
                    about == "third_party" and bool(present & PERSONAL or statement)):
                key, confidence = "key_facts", 0.6
                about = "third_party" if family else about
            else:
                continue
            # Checked last, on the few sentences a rule took: most lines are dropped above for less.
            if _asks(said) or _names_nothing(sentence) or _TO_EACH_OTHER.search(said) or _replies(
                    said, turn.is_character, about_the_user=personal or family or bool(matters and told)):
                continue
            seen.add(text)
            if turn.is_character:
                # Its own goal, plan or like chose its category; the text and tags stay as said.
                statement = None
            if statement in ("goals", "plans") and said_at is not None:
                # Read later, "next Friday" is another day: the days it meant when it was said go with it. Not
                # what happened ("Yesterday (…) was my birthday"): the context shows a memory under the day it
                # was said, and dated, the evaluation's memories moved LoCoMo down on both halves
                # (docs/retrieval.md, "Typed memories' offline rules").
                text = f"{turn.speaker}: {when.anchor_dates(sentence, said_on, told_in_past=is_past(tokens))}"
            tags = _tags(present) + [tag for tag, _ in matters] + ([statement] if statement else [])
            out[key].append({"text": text, "about": about, "importance": importance, "tags": tags, "from": [line],
                             "confidence": confidence, "emotion": dominant_emotion(sentence)})
    out["emotions"] = [{"name": name, "score": score, **({"target": target} if target else {})}
                       for (name, target), score in emotions.items()][:MAX_EMOTIONS]
    for key in ("facts_about_user", "past_events", "self_beliefs", "objectives", "key_facts"):
        if len(out[key]) > MAX_ITEMS:
            # A diary imported in one batch told 120 events in a 120-turn window; the schema takes 100, and the
            # run failed on every retry, holding up the session's later windows. The most important stay.
            kept = sorted(range(len(out[key])), key=lambda i: -out[key][i]["importance"])[:MAX_ITEMS]
            out[key] = [out[key][i] for i in sorted(kept)]
    out["summary"] = summary_of([i["text"] for key in HIGHLIGHTS for i in out[key]])
    return out


# The lists a window's summary is made of: what the user is and did, and the facts of others.
HIGHLIGHTS = ("facts_about_user", "past_events", "key_facts")


def summary_of(highlights: Sequence[str]) -> str:
    """The offline summary of a window: its first three highlights."""
    return " | ".join(list(dict.fromkeys(highlights))[:3])[:SUMMARY_MAX_CHARS]
