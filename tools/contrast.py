"""Closed classes of words that exclude each other, for `lore_assert`: a statement that says "left"
where the lore says "right" in the same place contradicts it, while word overlap alone would call it
supported.

Each class lists its members; a member is spelled in English (any form: matched by Snowball stem, or as
written for the function words `memoryhub.text` gives no term, such as "before"), Russian (dictionary
forms: a word is matched as written, then by its pymorphy3 lemmas, so "левую", "левой" and "левее" are
all "левый") and Chinese (jieba words matched whole; for side, metal, colour and direction a
one-character member also inside a longer word, 左手, 金色). Two members of one class in the same
slot of a statement and its source are a contradiction; synonyms share a member ("sunset" and "dusk").

Kept small on purpose: a word here must rarely mean anything else, since one ambiguous entry ("fall",
"spring", "lead") turns unrelated sentences into contradictions. Words that do have another sense
("right" as in "the right to", "close" as in "near") stay only where the slot check (shared words next
to both) makes the other sense unlikely to line up.
"""

from __future__ import annotations

import functools

from memoryhub.morph import analyzer as morph
from memoryhub.text import HAN_CHAR, normalize, term

Sense = tuple[str, str]  # (class, member)

# class -> member -> (English, Russian, Chinese), each a space-separated list.
LEXICON: dict[str, dict[str, tuple[str, str, str]]] = {
    "side": {
        "left": ("left", "левый слева налево", "左 左边 左侧"),
        "right": ("right", "правый справа направо", "右 右边 右侧"),
    },
    "outcome": {
        "success": ("succeed success successful successfully", "успех успешный успешно преуспевать преуспеть "
                    "удаваться удаться", "成功"),
        "failure": ("fail failure", "провал проваливать провалить проваливаться провалиться неудача неудачный "
                    "неуспешный", "失败"),
    },
    "contest": {
        "win": ("win wins won winning", "выиграть выигрывать победить побеждать", "赢 获胜 胜利 战胜"),
        "lose": ("lose loses lost losing", "проиграть проигрывать", "输 落败 战败"),
    },
    "roll": {  # d20 rolls: the rules' most quoted pair
        "advantage": ("advantage", "преимущество", "优势"),
        "disadvantage": ("disadvantage", "помеха", "劣势"),
    },
    "time of day": {
        "dawn": ("dawn sunrise daybreak", "рассвет заря восход", "黎明 拂晓 日出 破晓"),
        "dusk": ("dusk sunset nightfall", "закат сумерки", "黄昏 傍晚 日落"),
        "noon": ("noon midday", "полдень", "正午 中午"),
        "midnight": ("midnight", "полночь", "午夜 半夜"),
    },
    "season": {
        "spring": ("", "весна", "春天 春季"),  # English "spring" and "fall" have other senses
        "summer": ("summer", "лето", "夏天 夏季"),
        "autumn": ("autumn", "осень", "秋天 秋季"),
        "winter": ("winter", "зима", "冬天 冬季"),
    },
    "celestial": {  # "the bearer of the moon amulet" / "of the sun amulet"; not 日 or 月, also day and month
        "sun": ("sun", "солнце солнечный", "太阳"),
        "moon": ("moon", "луна лунный", "月亮"),
    },
    "metal": {
        "gold": ("gold golden", "золото золотой", "金 黄金 金色"),
        "silver": ("silver silvery", "серебро серебряный", "银 白银 银色"),
        "copper": ("copper", "медь медный", "铜"),
        "bronze": ("bronze", "бронза бронзовый", "青铜"),
        "iron": ("iron", "железо железный", "铁"),
        "steel": ("steel", "сталь стальной", "钢"),
        "platinum": ("platinum", "платина платиновый", "铂 白金"),
        "mithral": ("mithral mithril", "мифрил мифриловый", "秘银"),
        "adamantine": ("adamantine", "адамантин адамантиновый", "精金"),
    },
    "colour": {
        "red": ("red", "красный", "红 红色"),
        "blue": ("blue", "синий голубой", "蓝 蓝色"),
        "green": ("green", "зелёный", "绿 绿色"),
        "yellow": ("yellow", "жёлтый", "黄 黄色"),
        "black": ("black", "чёрный", "黑 黑色"),
        "white": ("white", "белый", "白 白色"),
        "grey": ("grey gray", "серый", "灰 灰色"),
        "brown": ("brown", "коричневый", "棕 棕色 褐色"),
        "purple": ("purple violet", "фиолетовый пурпурный", "紫 紫色"),
        "orange": ("orange", "оранжевый", "橙 橙色"),
    },
    "compass": {
        "north": ("north northern northward", "север северный", "北 北方 北边"),
        "south": ("south southern southward", "юг южный", "南 南方 南边"),
        "east": ("east eastern eastward", "восток восточный", "东 东方 东边"),
        "west": ("west western westward", "запад западный", "西 西方 西边"),
    },
    "vertical": {
        "up": ("up upward upwards", "вверх наверх", "向上 往上 上方"),
        "down": ("down downward downwards", "вниз", "向下 往下 下方"),
    },
    "access": {
        "open": ("open opens opened", "открытый открыть открывать открываться открыться", "打开 开着 开启 敞开"),
        "closed": ("closed closes shut", "закрытый закрыть закрывать закрываться закрыться запертый запереть",
                   "关闭 关着 关上 锁着"),
    },
    "life": {
        "alive": ("alive", "живой", "活着 活"),
        "dead": ("dead die dies died", "мёртвый умереть умирать погибнуть погибать", "死 死了 死亡 去世 阵亡"),
    },
    "order": {
        "before": ("before", "до перед", "之前 以前"),
        "after": ("after afterwards", "после", "之后 以后"),
    },
    "amount": {
        "more": ("more", "больше", "更多 多于"),
        "less": ("less fewer", "меньше", "更少 少于"),
    },
    "change": {
        "increase": ("increase increases", "увеличиваться увеличиться увеличивать увеличить", "增加 增大 提高"),
        "decrease": ("decrease decreases reduce reduces", "уменьшаться уменьшиться уменьшать уменьшить",
                     "减少 减小 降低"),
    },
}

# Classes whose one-character Chinese members also count inside a longer word: jieba keeps "左手",
# "金色" and "北塔" whole, and the character is what the word says about side, metal, colour or
# direction. Only these: 开 would otherwise turn 开始 ("begin") into "open".
HAN_INSIDE_WORDS = frozenset({"side", "metal", "colour", "compass"})
# Words whose member character means something else: 金属 "metal" (any), 白天 "daytime", 黑暗
# "darkness", 北京 the city.
HAN_OTHER_SENSE = frozenset({"金属", "白天", "黑暗", "黑夜", "北京", "南京", "东京", "西瓜"})

# Russian readings below this pymorphy3 score are ignored unless adjectival: "стали" is almost always
# "became" (стать), rarely "of steel"; "синей" splits its score between синь, синеть and синий.
RU_MIN_SCORE = 0.1
RU_ADJECTIVAL = frozenset({"ADJF", "ADJS", "COMP"})


@functools.cache
def _index() -> tuple[dict[str, frozenset[Sense]], dict[str, frozenset[Sense]], dict[str, frozenset[Sense]]]:
    """Lookup tables: English and Russian words (as written and, for English, by stem), Chinese words,
    Chinese characters that count inside words."""
    words: dict[str, set[Sense]] = {}
    han: dict[str, set[Sense]] = {}
    inside: dict[str, set[Sense]] = {}
    for cls, members in LEXICON.items():
        for member, (en, ru, zh) in members.items():
            sense = (cls, member)
            for word in en.split():
                words.setdefault(word, set()).add(sense)
                if stem := term(word):
                    words.setdefault(stem, set()).add(sense)
            for word in ru.split():
                words.setdefault(normalize(word), set()).add(sense)
            for word in zh.split():
                han.setdefault(word, set()).add(sense)
                if len(word) == 1 and cls in HAN_INSIDE_WORDS:
                    inside.setdefault(word, set()).add(sense)

    def frozen(table: dict[str, set[Sense]]) -> dict[str, frozenset[Sense]]:
        return {key: frozenset(value) for key, value in table.items()}

    return frozen(words), frozen(han), frozen(inside)


@functools.lru_cache(maxsize=65_536)
def senses(word: str) -> frozenset[Sense]:
    """The (class, member) pairs a normalised word (`memoryhub.text.words`) stands for; empty for most."""
    table, han, inside = _index()
    if HAN_CHAR.search(word):
        if word in han:
            return han[word]
        if word in HAN_OTHER_SENSE:
            return frozenset()
        found = [s for ch in word for s in inside.get(ch, ())]
        # Two members of one class in a word is a compound of its own: 东西 "thing", 左右 "about".
        classes = [cls for cls, _ in found]
        return frozenset(s for s in found if classes.count(s[0]) == 1)
    if word in table:
        return table[word]
    if any("\u0400" <= ch <= "\u04ff" for ch in word):
        for parse in morph().parse(word):
            likely = parse.score >= RU_MIN_SCORE or parse.tag.POS in RU_ADJECTIVAL
            if likely and (found_ru := table.get(normalize(parse.normal_form))):
                return found_ru
        return frozenset()
    return table.get(term(word), frozenset())
