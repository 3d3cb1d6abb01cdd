"""Chinese names and cues for the rule-based archivist.

Names: a known name, a common transliteration, surname + title (王总, 李老师), 小/老 + surname (小王),
surname + given name after a cue or 叫 (我的同事张伟), and jieba's person tags trimmed where the
tag swallowed the next word (张伟明|天 → 张伟).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Sequence

import rjieba

from memoryhub.text import normalize
from people import lexicon
from people.archivist.tokens import HAN, KnownIndex, Mention, Tok
from people.names import clean_username, kin_of, zh_cues, zh_verb_cues

# --- Chinese --------------------------------------------------------------------------------------------

_ZH_OWN = re.compile("我们的|我的|咱们的|我们|咱们|我")
_ZH_TRANSLITERATED = ("玛丽亚", "玛丽", "彼得", "约翰", "汤姆", "杰克", "安娜", "迈克", "大卫", "丽莎", "艾米", "露西",
                      "詹姆斯", "伊万", "萨沙", "娜塔莎", "亚历山大", "米沙", "玛莎")
_ZH_STOP_WORDS = ("明天", "今天", "昨天", "后天", "前天", "一起", "一直", "已经", "刚才", "今年", "明年", "去年",
                  "下午", "上午", "晚上", "早上", "告诉", "最近", "总是", "以后", "之前",
                  # time and manner words that follow a subject ("小雨下个月过生日", "小刘上周辞职了")
                  "下个", "上个", "这个", "下周", "上周", "这周", "本周", "周末", "每天", "每周", "每年", "现在",
                  "马上", "刚刚", "正在", "经常", "常常", "平时", "终于", "突然", "其实", "可能", "应该", "好像",
                  "下次", "上次", "这次", "这两天", "这几天", "前几天", "今晚", "昨晚", "明晚", "今早",
                  "生了",  # "小丽生了一个儿子"
                  # what someone is like ("小李人特别好", "张伟人挺好的"): 人 opens the predicate, not the name
                  "人很", "人特别", "人挺", "人真", "人超", "人非常", "人不错", "人还", "人太", "人好")
_ZH_ALIAS = ("也叫", "又叫", "外号", "绰号", "小名")
_ZH_PUNCT = frozenset("，,。.！!？?、；;：:（）()“”\"' —")
_ZH_NAMED = frozenset({"叫", "名叫", "叫做", "取名", "起名", "取名叫", "起名叫"})  # "女儿取名叫朵朵": 取名 | 叫
# 小/老/阿 + one character is a name after a cue word or 叫 ("闺蜜小美", "儿子小宝", "男朋友阿杰"), where
# the character need not be a surname; these pairs are ordinary words all the same.
_ZH_PREFIX_WORDS = frozenset({"小时", "老实", "小心", "小孩", "小区", "小说", "小吃", "小学", "小姐", "小组", "小时候",
                              "老家", "老师", "老板", "老公", "老婆", "老人", "老大", "老是", "老年", "阿姨", "阿里",
                              "阿拉", "小姨", "小舅", "老爸", "老妈", "老铁", "小朋", "小伙", "老外", "老乡"})
# A name's second character may be one that ends other names (阿明, 小前 are names; 张伟明天 is not 张伟明).
_ZH_PREFIX_STOPS = lexicon.ZH_NAME_STOPS - frozenset("今明昨后前")
# Where a name's group is stated before it: "我们部门的小赵" works with the user; "隔壁的小李" lives next door.
_ZH_GROUP_BEFORE = (
    # "组里新来的小孙": 里 says it is the user's own group as 我们 does.
    (re.compile(r"(?:(?:我们|咱们|我)(?:公司|部门|组|团队|小组|项目组|科室|单位|办公室|实验室)(?:里)?"
                r"|(?:公司|部门|组|团队|小组|项目组|科室|单位|办公室|实验室)里)(?:新来)?的?$"), "Work_Inner"),
    (re.compile(r"(?:邻居|隔壁|楼上|楼下|对门)(?:家)?(?:的)?$"), "Other"),
)


def _zh_stop_at(text: str, i: int) -> bool:
    """Whether a name may end right before position i."""
    if i >= len(text):
        return True
    return text[i] in lexicon.ZH_NAME_STOPS or text.startswith(_ZH_STOP_WORDS, i) or not HAN.match(text[i])


def _zh_surname_at(text: str, i: int) -> int:
    """Length of the surname starting at i (0, 1 or 2)."""
    if text.startswith(lexicon.ZH_COMPOUND_SURNAMES, i):
        return 2
    return 1 if i < len(text) and text[i] in lexicon.ZH_SURNAMES else 0


def _zh_name_at(text: str, i: int) -> int:
    """Length of a surname + given name starting at i, ending at a plausible boundary, or 0."""
    sur = _zh_surname_at(text, i)
    if not sur or text.startswith(_ZH_STOP_WORDS, i + sur):
        return 0  # "张一直很忙", "王明天来": what follows the surname is a word of its own
    shorter = 0
    for given in (1, 2):
        end = i + sur + given
        if not (end <= len(text) and all(HAN.match(ch) for ch in text[i + sur:end]) and _zh_stop_at(text, end)):
            continue
        last = text[end - 1]
        if last in lexicon.ZH_NAME_STOPS and (last not in _ZH_GIVEN_STOPS or text.startswith(_ZH_STOP_WORDS, end - 1)):
            continue
        candidate = text[i:end]
        # A kin word is no given name: "我爸爸和妈妈" lists the mother after 和, also a surname.
        if candidate in lexicon.ZH_NOT_NAMES or (given == 1 and sur == 1 and _doubled(text, i)) or \
                kin_of(text[i + sur:end]) is not None:
            continue
        if given == 1 and text[end:end + 1] in _ZH_GIVEN_STOPS and not text.startswith(_ZH_STOP_WORDS, end):
            shorter = end - i  # "我同事王家明下个月…": 明, opening no 明天 here, may end the name
            continue
        return end - i
    return shorter


# Stop characters that also end given names often: 明 (of 明天) and 刚 (of 刚才). One ends a name where it opens no
# such word: "张明说", "王家明下个月".
_ZH_GIVEN_STOPS = frozenset("明刚")


# What joins names in a list: 小明和小红, 王磊、李娜, 张建国与李秀英.
_ZH_LIST_JOINS = ("以及", "和", "跟", "与", "同", "及", "、")
_ZH_SUBJECT_VERBS = frozenset("是说让跟和告问给叫要在也都")


_COUNTED = re.compile(r"(?:[两二三四五六七八九几]|\d+)(?:个|位)$")
# "我有两个孩子，大的叫明明，小的叫亮亮": which of the children said before comes before 叫.
_ORDINAL_CHILD = re.compile(r"(?:大的|小的|老大|老二|老三|老小|大的那个|小的那个|大儿子|小儿子|大女儿|小女儿)$")


def _ordinal_child(sentence: str, at: int, cues: Sequence[tuple[int, int, lexicon.Cue]]) -> tuple[str, str]:
    """The circle and word of the children's kin word said earlier in the sentence, when 叫 at `at` follows
    "大的", "老二"…; ("", "") otherwise."""
    if not _ORDINAL_CHILD.search(sentence, 0, at):
        return "", ""
    found = next(((start, end, cue) for start, end, cue in cues if start < at and cue.concept == "kin:child"), None)
    if found is None or re.search("[他她]", sentence[_sentence_start_zh(sentence, found[0]):found[0]]):
        return "", ""  # "他有两个孩子，大的叫明明": his
    return found[2].circle, sentence[found[0]:found[1]]


def _sentence_start_zh(sentence: str, at: int) -> int:
    """Where the clause holding `at` begins."""
    return max((i + 1 for i in range(at) if sentence[i] in "，,。；;！!？?"), default=0)


def _doubled(text: str, i: int) -> bool:
    """A doubled-character nickname (朵朵, 乐乐)."""
    return i + 1 < len(text) and text[i] == text[i + 1] and bool(HAN.match(text[i]))


def _zh_name_spans(sentence: str, known: KnownIndex, said: Sequence[str] = ()) -> list[tuple[int, int, str]]:
    spans: list[tuple[int, int, str]] = []
    taken = [False] * len(sentence)

    def take(start: int, end: int) -> None:
        if end > start and not any(taken[start:end]):
            spans.append((start, end, sentence[start:end]))
            for k in range(start, end):
                taken[k] = True

    # Known people's names, and the names the conversation said before (longest first): "我妹妹小雨要结婚了。小雨的
    # 未婚夫阿杰是厨师。" — 小雨 opening the second sentence is also "light rain", and would not be read as a name.
    for name in sorted({*(name for name, _ in known.han_names), *said}, key=lambda n: (-len(n), n)):
        pos = sentence.find(name)
        while pos >= 0:
            take(pos, pos + len(name))
            pos = sentence.find(name, pos + len(name))
    for name in _ZH_TRANSLITERATED:
        pos = sentence.find(name)
        while pos >= 0:
            take(pos, pos + len(name))
            pos = sentence.find(name, pos + len(name))
    # whom the user works for, before the finders below cut the name otherwise: 我给王强打工, 我在李总手下工作
    known_han = {name for name, _ in known.han_names}
    for m in re.finditer("[给替在]", sentence):
        for length in (2, 3, 4):
            end = m.end() + length
            if _zh_boss_frame(sentence, m.end(), end) and _zh_name_like(sentence[m.end():end], known_han):
                take(m.end(), end)
                break
    word_ends = set(itertools.accumulate(len(w) for w in rjieba.cut(sentence)))
    # surname + title: 王总, 李老师
    for i in range(len(sentence)):
        sur = _zh_surname_at(sentence, i)
        # After another word, a two-character title is a name where jieba starts a word at the surname
        # ("班主任周老师"; not "下周老师", where 周 ends 下周).
        glued = i > 0 and HAN.match(sentence[i - 1]) and sentence[i - 1] not in "和跟与及同给找问叫让对是的了" and \
            not _ZH_OWN.match(sentence, i - 1) and not zh_cues(sentence[max(0, i - 2):i])
        if not sur or (glued and (i not in word_ends or sentence[i - 1] in "这那上下每本一两几半整")):
            continue
        for title in sorted(lexicon.ZH_TITLES, key=len, reverse=True):
            if sentence.startswith(title, i + sur) and sentence[i:i + sur + len(title)] not in lexicon.ZH_NOT_NAMES:
                if kin_of(title) is not None and sentence[i] in "和跟与同及":
                    break  # "跟爷爷和奶奶吃饭": 和 joins two relatives, it is no surname of 奶奶
                end = i + sur + len(title)
                if glued and len(title) < 2:
                    break
                # Two-character titles are unambiguous; one-character ones (总, 姐) need a boundary after.
                if len(title) > 1 or title == "总" or _zh_stop_at(sentence, end):
                    take(i, end)
                break
    # 小王, 老李
    for m in re.finditer("[小老]", sentence):
        i = m.start()
        # "邻居老张家的狗": 老张's home (家 is no stop: 王家明 is a name).
        # Or where jieba's word ends: "小孙特别能干" (特 ends no name, but 小孙 is one word).
        ends = _zh_stop_at(sentence, i + 2) or sentence[i + 2:i + 4] == "家的" or {i, i + 2} <= word_ends | {0}
        if _zh_surname_at(sentence, i + 1) == 1 and ends and \
                sentence[i:i + 2] not in lexicon.ZH_NOT_NAMES and sentence[i:i + 2] not in _ZH_PREFIX_WORDS:
            take(i, i + 2)
    # after a cue or 叫: 我的同事张伟, 他叫李明; a doubled nickname after a family or friend cue: 女儿朵朵
    # A cue word found inside a longer word ("老公" in "老公司") anchors no name.
    # Unless jieba read the cue and the name after it as one person's name: "我闺蜜林晓" cut as 我|闺蜜林晓.
    tagged = list(rjieba.tag(sentence))
    persons = {start: start + len(word) for start, (word, tag) in
               zip(itertools.accumulate((len(w) for w, _ in tagged), initial=0), tagged, strict=False) if tag == "nr"}
    # Or glued a doubled nickname to it: "闺蜜晓晓" (and "闺蜜晓晓生") are one word to jieba.
    cues = [c for c in zh_cues(sentence)
            if c[1] in word_ends or (c[1] < persons.get(c[0], 0) and (
                _zh_surname_at(sentence, c[1]) or _zh_prefix_name(sentence, c[1])))  # "发小阿强" is one word too
            or (c[2].circle in ("Family", "Friends") and _doubled(sentence, c[1]))]
    # A doubled kin word is no nickname: "我老公的姐姐小芳".
    cue_starts = {start for start, _, _ in cues}
    # After 叫 the cue word right before it lends its circle: "儿子叫豆豆" names the son, and so does
    # "生了个女儿，取名叫朵朵".
    anchors = [(end, cue.circle) for _, end, cue in cues] + [
        (m.end(), next((cue.circle for _, end, cue in cues
                        if end == m.start() or (end + 1 == m.start() and sentence[end] in "，,")), "")
         or _ordinal_child(sentence, m.start(), cues)[0])
        # "我姐姐的名字是小美"; "我们给女儿取名叫朵朵" names the daughter as 叫 alone does.
        for m in re.finditer("的?名字(?:是|叫)|[取起](?:了个?)?名字?(?:叫做|叫|为)?|名叫|叫做|叫", sentence)]
    for end, circle in anchors:
        start = end + 1 if sentence[end:end + 1] in ("的", "，") else end
        # The names listed after it too: 我的孩子小明和小红, 我的朋友王磊、李娜和陈静.
        # Or the word jieba tags a person's name right there: "我儿子小明六岁了", "我哥哥小刚下周来" (刚 and 明 may
        # end a name only where jieba says so: they also say "just" and "tomorrow"). A doubled nickname ends where
        # a name may, or where jieba's word does: "我给女儿朵朵预约了…" (预 ends no name, but 朵朵 is one word).
        while length := _zh_name_at(sentence, start) or (
                2 if (circle in ("Family", "Friends") and _doubled(sentence, start) and start not in cue_starts and
                      (_zh_stop_at(sentence, start + 2) or {start, start + 2} <= word_ends)) or
                _zh_prefix_name(sentence, start) or _zh_prefix_word(sentence, start, word_ends) else 0) or \
                _zh_tagged_name(sentence, start, persons):
            take(start, start + length)
            join = next((j for j in _ZH_LIST_JOINS if sentence.startswith(j, start + length)), "")
            if not join:
                break
            start += length + len(join)
    # a compound surname anywhere, or a name opening the sentence before a verb: 欧阳娜娜是…, 王芳说…
    for m in re.finditer("|".join(lexicon.ZH_COMPOUND_SURNAMES), sentence):
        length = _zh_name_at(sentence, m.start())
        if length:
            take(m.start(), m.start() + length)
    length = _zh_name_at(sentence, 0) or (2 if sentence[:1] == "阿" and _zh_prefix_name(sentence, 0) else 0)
    if length and sentence[length:length + 1] in _ZH_SUBJECT_VERBS:
        take(0, length)
    # 阿 + one character after a word that takes a person: 我和阿明, 给阿强
    for m in re.finditer("阿", sentence):
        if m.start() > 0 and sentence[m.start() - 1] in "和跟与及同给找问叫让对是的了" and \
                _zh_prefix_name(sentence, m.start()):
            take(m.start(), m.start() + 2)
    # jieba's person tags, trimmed where the tag swallowed the next word (张伟明|天 → 张伟)
    pos = 0
    for word, tag in tagged:
        start, pos = pos, pos + len(word)
        if tag != "nr" or not (2 <= len(word) <= 4) or word in lexicon.ZH_NOT_NAMES:
            continue
        if word[0] in _ZH_LIST_JOINS and len(word) >= 3 and (
                word[1] in "小老阿" or (start > 0 and taken[start - 1])):
            # jieba glued the "and" to the next name ("小明|和小红"): the name is what follows it
            start, word = start + 1, word[1:]
            if word[0] in "小老阿" and len(word) == 2 and word not in _ZH_PREFIX_WORDS:
                take(start, pos)
                continue
        if not _zh_surname_at(word, 0) or _doubled(word, 0):
            continue
        end = pos
        while end - start > 2 and sentence.startswith(_ZH_STOP_WORDS, end - 1):
            end -= 1
        if end - start == 3 and sentence[end - 1] in lexicon.ZH_NAME_STOPS:
            end -= 1
        take(start, end)
    return sorted(span for span in spans if not _workplace(sentence, span[0], span[1])
                  and (span[2] in known_han or not _food(sentence, span[0], span[1])))


def _zh_name_like(word: str, known_han: set[str]) -> bool:
    """A whole word that can be a name, its end given by what follows it (`_zh_boss_frame`): a known name,
    surname + title (李总), 小/老 + surname (老王), surname + one or two characters (王强, 欧阳娜娜)."""
    if word in known_han:
        return True
    if not all(HAN.match(ch) for ch in word) or word in lexicon.ZH_NOT_NAMES or word in _ZH_PREFIX_WORDS:
        return False
    sur = _zh_surname_at(word, 0)
    if sur and word[sur:] in lexicon.ZH_TITLES:
        return True
    if len(word) == 2 and word[0] in "小老" and _zh_surname_at(word, 1) == 1:
        return True
    return bool(sur) and 1 <= len(word) - sur <= 2 and not _doubled(word, 0) and \
        not any(ch in lexicon.ZH_NAME_STOPS for ch in word[sur:])


def _zh_boss_frame(sentence: str, start: int, end: int) -> str:
    """The frame that makes the name at start:end the user's boss, or "": "我给王强打工", "我替老王干活", "我在李总
    (的)手下工作". The user must say it of themself: "我弟弟在王强手下工作", "他给王强打工" are someone else's."""
    before, rest = sentence[:start], sentence[end:]
    if before.endswith(lexicon.ZH_WORK_FOR_BEFORE):
        after = next((w for w in lexicon.ZH_WORK_FOR_AFTER if rest.startswith(w)), "")
    elif before.endswith("在"):
        rest = rest[1:] if rest.startswith("的") else rest
        after = next((w for w in lexicon.ZH_UNDER_AFTER if rest.startswith(w)), "")
    else:
        return ""
    clause = re.split("[，,。.！!？?；;：:]", before[:-1])[-1]
    subject = re.search("我们|咱们|我", clause)
    if not after or subject is None:
        return ""
    between = clause[subject.start():]
    if re.search("[他她它的]", between) or zh_cues(between):
        return ""
    return f"{before[-1]}…{after}"


def _workplace(sentence: str, start: int, end: int) -> bool:
    """A name that names a company, not a person: before a word for one ("李宁公司", "周大福集团"), or
    between 在 and a work verb ("我在周大福上班", "在李宁实习"). "张伟的公司" and "在张伟家工作" name him."""
    rest = sentence[end:]
    if rest.startswith(lexicon.ZH_ORG_NOUNS):
        return True
    return sentence[:start].endswith("在") and rest.startswith(lexicon.ZH_WORK_VERBS)


def _food(sentence: str, start: int, end: int) -> bool:
    """A dish or a drink that looks like a name ("她喜欢喝龙井茶", "我喜欢吃宫保鸡丁", "一盒龙井茶"): it ends in a
    word for food, or follows a verb of eating or drinking or a measure word, with no "的" or verb of its own after
    it ("吃了王强做的饭" and "喝了李娜的酒" name people)."""
    if sentence[end:end + 1] in ("的", "做", "买", "送", "请", "家", "说"):
        return False
    if lexicon.ZH_FOOD_BEFORE.search(sentence[:start]):
        return True
    # A name the user calls someone by ("我女儿小鱼", "叫王小鱼") may end so: only a word after no cue word.
    before = sentence[max(0, start - 4):start]
    return end - start >= 3 and sentence[end - 1] in lexicon.ZH_FOOD_ENDINGS and not before.endswith("叫") \
        and not any(cue_end == len(before) for _, cue_end, _ in zh_cues(before))


def _zh_tagged_name(sentence: str, i: int, persons: dict[int, int]) -> int:
    """Length of the word jieba tags a person's name at i (`persons`: start → end), if it reads as one: 小/老/阿/大 and
    a character ("发小大伟"), or a surname and one or two; else 0."""
    word = sentence[i:persons.get(i, i)]
    if word in lexicon.ZH_NOT_NAMES or word in _ZH_PREFIX_WORDS:
        return 0
    if (len(word) == 2 and word[0] in "小老阿大") or (2 <= len(word) <= 3 and _zh_surname_at(word, 0) == 1):
        return len(word)
    return 0


def _zh_prefix_word(sentence: str, i: int, word_ends: set[int]) -> bool:
    """小/老/阿 + one character that jieba reads as one word, after a cue word: "我妹妹小美六月要结婚了" (六 ends no
    name by `_zh_stop_at`, but jieba's 小美 ends there)."""
    pair = sentence[i:i + 2]
    return len(pair) == 2 and pair[0] in "小老阿" and bool(HAN.match(pair[1])) and {i, i + 2} <= word_ends and \
        pair not in _ZH_PREFIX_WORDS and pair not in lexicon.ZH_NOT_NAMES


# Verbs of one character that may follow a nickname, besides the name stops (which also end full names, where
# these could be a given name's character): "室友小芳养了一只仓鼠" (jieba reads 小芳养 as one name).
_ZH_NICKNAME_VERBS = frozenset("养画写学玩拿寄发换搬哭笑跑睡考织修")


def _zh_prefix_name(sentence: str, i: int) -> bool:
    """小/老/阿 + one character, ending where a name may end: "小美去", "阿杰今天", "小芳养"."""
    pair = sentence[i:i + 2]
    return len(pair) == 2 and pair[0] in "小老阿" and bool(HAN.match(pair[1])) and \
        pair[1] not in _ZH_PREFIX_STOPS and pair not in _ZH_PREFIX_WORDS and \
        not sentence.startswith(tuple(_ZH_PREFIX_WORDS), i) and (
            _zh_stop_at(sentence, i + 2) or sentence[i + 2:i + 3] in _ZH_NICKNAME_VERBS)


_LATIN_PHRASE = re.compile(r"[A-Za-z][A-Za-z'’\-]*(?:\s+[A-Za-z][A-Za-z'’\-]*)+")


# A modal or adverb that jieba may glue to the word before it ("我妈会|过来", "我|爸会来", "我哥会|开车"): a cue
# ending right before one ends a word all the same. "我妈会过来帮忙" found no mother.
_ZH_WORD_AFTER = frozenset("会要也都就还又才说")


def tokens_zh(sentence: str, known: KnownIndex, latin: Callable[[str], list[Tok]] | None = None,
              said: Sequence[str] = ()) -> list[Tok]:
    """Tokens of a Chinese sentence. `latin` reads the English phrases inside it ("小张 (my good friend
    Xiao Zhang)"), which the Chinese readers would only see as loose words. `said`: the Chinese names the
    conversation's earlier sentences gave, found again as known names are."""
    spans = _zh_name_spans(sentence, known, said)
    marks: list[tuple[int, int, Tok | list[Tok]]] = []
    for start, end, name in spans:
        mention = Mention(name=name)
        before = sentence[:start]
        if before.endswith("叫") and (child := _ordinal_child(sentence, start - 1, zh_cues(sentence)))[0]:
            mention.circle, mention.cue = child  # "大的叫明明": one of the children said before
        for pattern, circle in _ZH_GROUP_BEFORE:
            group = pattern.search(sentence[:start])
            if group:
                mention.circle, mention.cue = circle, group.group(0)
        frame = _zh_boss_frame(sentence, start, end)
        if frame:
            mention.circle, mention.cue = "Work_Inner", frame
        marks.append((start, end, Tok("NAME", name, mention=mention, script="zh")))
    covered = [False] * len(sentence)
    for start, end, _ in marks:
        for k in range(start, end):
            covered[k] = True
    if latin is not None:
        for m in _LATIN_PHRASE.finditer(sentence):
            if not any(covered[m.start():m.end()]):
                marks.append((m.start(), m.end(), latin(m.group(0))))
                for k in range(m.start(), m.end()):
                    covered[k] = True
    word_ends = set(itertools.accumulate(len(w) for w in rjieba.cut(sentence)))
    cues = zh_cues(sentence)
    # jieba keeps two relatives said together as one word ("爸爸妈妈", "爷爷奶奶"): a kin word ending where
    # another begins ends a word all the same, so that both are people.
    kin_starts = {start for start, end, _ in cues if kin_of(sentence[start:end]) is not None}
    for start, end, cue in cues:
        if not any(covered[start:end]):
            marks.append((start, end, Tok("CUE", sentence[start:end], cue=cue, script="zh",
                                          whole_word=end in word_ends or sentence[end:end + 1] in _ZH_WORD_AFTER
                                          or (end in kin_starts and kin_of(sentence[start:end]) is not None),
                                          # "两个女儿", "三个孩子": several, so no one person
                                          plural=bool(_COUNTED.search(sentence, 0, start)))))
            for k in range(start, end):
                covered[k] = True
    for start, end in _zh_pets(sentence):
        if not any(covered[start:end]):
            marks.append((start, end, Tok("PET", sentence[start:end], script="zh")))
            for k in range(start, end):
                covered[k] = True
    for start, end, verb in zh_verb_cues(sentence):
        if not any(covered[start:end]):
            marks.append((start, end, Tok("VERB", sentence[start:end], verb=verb, script="zh")))
            for k in range(start, end):
                covered[k] = True
    for m in re.finditer(r"@([A-Za-z][A-Za-z0-9_]{2,31})|[A-Z][a-z]+", sentence):
        if any(covered[m.start():m.end()]):
            continue
        if m.group(1):
            username = clean_username(m.group(1))
            tok = Tok("NAME", m.group(0), mention=Mention(name=username or "", username=username))
        elif normalize(m.group(0)) in lexicon.EN_FIRST_NAMES:
            tok = Tok("NAME", m.group(0), mention=Mention(name=m.group(0)), script="en")
        else:
            continue
        marks.append((m.start(), m.end(), tok))
        for k in range(m.start(), m.end()):
            covered[k] = True
    for pattern, kind in ((_ZH_OWN, "OWN"), (re.compile("|".join(_ZH_ALIAS)), "ALIAS"),
                          (re.compile("是"), "COP"), (re.compile("[他她]"), "PRON")):
        for m in pattern.finditer(sentence):
            if not any(covered[m.start():m.end()]):
                marks.append((m.start(), m.end(), Tok(kind, m.group(0))))
                for k in range(m.start(), m.end()):
                    covered[k] = True
    marks.sort(key=lambda item: item[0])
    toks: list[Tok] = []
    pos = 0
    for start, end, tok in marks:
        if start > pos:
            toks.extend(_zh_plain(sentence[pos:start]))
        if isinstance(tok, list):
            toks.extend(tok)
            pos = end
            continue
        if tok.kind in ("NAME", "CUE", "PET") and sentence[end:end + 1] == "的":
            tok.possessive = True  # "张伟的", "我老婆的妹妹", "我的猫的名字"
        elif tok.kind == "PRON" and sentence[end:end + 1] == "的":
            tok = Tok("POSS", tok.text + "的")  # "他的老婆"
        toks.append(tok)
        pos = end
    toks.extend(_zh_plain(sentence[pos:]))
    # "的" right after a name, a cue word or a pronoun is the possessive, already recorded.
    out: list[Tok] = []
    for tok in toks:
        if tok.kind == "OTHER" and tok.text == "的" and out and (out[-1].possessive or out[-1].kind == "POSS"):
            continue
        if tok.kind in ("COP", "NAMED") and len(out) >= 2 and out[-1].text == "名字" and out[-2].kind == "CUE" and \
                out[-2].possessive:
            # "我姐姐的名字是小美", "…的名字叫小美": the name is who the cue word is, as in "我姐姐叫小美";
            # the cue owns no one there.
            out[-2].possessive = False
            out[-1] = Tok("NAMED", f"名字{tok.text}")
            continue
        out.append(tok)
    return out


_ZH_PET = re.compile("|".join(sorted(lexicon.ZH_PETS, key=len, reverse=True)))
_ZH_NOT_PET = re.compile("|".join(lexicon.ZH_NOT_PETS))


def _zh_pets(sentence: str) -> list[tuple[int, int]]:
    """Spans of pet words ("猫", "狗狗", "宠物狗"), but not inside a word that is no pet ("熊猫", "猫粮",
    "单身狗"). Not by jieba's words: it glues the pet to the next character ("猫叫", "狗小王")."""
    blocked = [False] * len(sentence)
    for m in _ZH_NOT_PET.finditer(sentence):
        for k in range(m.start(), m.end()):
            blocked[k] = True
    return [(m.start(), m.end()) for m in _ZH_PET.finditer(sentence) if not any(blocked[m.start():m.end()])]


def _zh_plain(text: str) -> list[Tok]:
    out: list[Tok] = []
    buf = ""
    for ch in text:
        if ch in _ZH_PUNCT:
            if buf:
                out.extend(_zh_words(buf))
                buf = ""
            if ch.strip():
                out.append(Tok("PUNCT", ch))
        else:
            buf += ch
    if buf:
        out.extend(_zh_words(buf))
    return out


def _zh_words(text: str) -> list[Tok]:
    return [Tok("NAMED" if word in _ZH_NAMED else "OTHER", word) for word in rjieba.cut(text)]


