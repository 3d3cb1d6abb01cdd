"""Filler: a turn of greetings, thanks and assent that says nothing a prompt needs (the context leaves it
out, the search ranks it down, typed memories skip it)."""

from __future__ import annotations

import re
from functools import lru_cache

import rjieba

from memoryhub import text

# Words of greeting, thanks and assent in English, Russian and Chinese: a remembered turn made of
# nothing else ("Thanks, Melanie!", "Nice to meet you, Sam!", "好的，谢谢", "Got it.", "Понятно.", "明白了")
# says nothing a prompt needs; nor does an assistant's stock offer ("How can I help you today?", "Anything
# else I can help with?", "Чем могу помочь?", "有什么可以帮你的吗？"), nor thanks for the conversation itself
# ("Thanks for listening today.", "Спасибо, что выслушала", "谢谢你听我说").
_FILLER_WORDS = """
hi hello hey you thanks thank welcome bye goodbye see later ok okay sure yes yeah yep yup no nope cool great
nice awesome wow lol haha hahaha good morning night evening meet glad pleasure congrats congratulations
too really totally amazing so much lot soon take care talk chat catch up np sounds fun love bet
again back i me you're help today anything else happy problem day listening listen chatting
got gotcha noted understood makes sense lovely wonderful fantastic perfect exciting
привет здравствуй здравствуйте спасибо пожалуйста пока ок окей ладно да нет круто класс отлично супер ага
угу хорошо доброе утро ночи вечер рад рада приятно познакомиться увидимся давай выслушал выслушала выслушали
что сегодня меня мне понятно понял поняла поняли ясно чем могу помочь ещё чем-то понимаю бывает обращайся
звучит здорово замечательно прекрасно чудесно классно
你好 您好 谢谢 多谢 再见 好的 好 嗯 哈哈 早上好 晚安 拜拜 没问题 不客气 对 是的 太好了 听我说 陪我聊天 今天
明白 知道 懂了 收到 很高兴 高兴 认识 有什么 什么 可以 帮 帮你 帮忙 需要 吗
听起来 真 不错 真不错 真棒 棒 很棒 太美了 好美 美 羡慕 好羡慕
"""
_FILLER_TERMS = frozenset(text.analyze(_FILLER_WORDS))
_NAME = re.compile(r"\b[A-ZА-ЯЁ][a-zа-яё]+\b")


@lru_cache(maxsize=4096)
def is_filler(turn: str) -> bool:
    """A turn of greetings, thanks and names only."""
    terms = set(text.analyze(turn))
    names = set(text.analyze(" ".join(_names(turn))))
    return not (terms - _FILLER_TERMS - names)


_CALLED_OUT_ZH = frozenset("，,！!。.？?、：:")
_HAN = re.compile("[\u4e00-\u9fff]")


def _names(turn: str) -> list[str]:
    """The capitalised words of a turn that are names: a sentence's first word only when it is called out
    ("Melanie, congrats!", "Sam!"), since any word opens a sentence with a capital: "Running every morning?"
    was filler, its "Running" taken for a name. In Chinese, a word jieba tags as a person's name where it is
    called out, beside a comma or an exclamation mark ("很高兴认识你，李明！有什么可以帮你的吗？")."""
    found = []
    if _HAN.search(turn):
        tagged = [("", "x"), *rjieba.tag(turn), ("", "x")]
        found += [word for (before, _), (word, tag), (after, _) in zip(tagged, tagged[1:], tagged[2:], strict=False)
                  if tag == "nr" and 2 <= len(word) <= 4 and (before in _CALLED_OUT_ZH or after in _CALLED_OUT_ZH)]
    for match in _NAME.finditer(turn):
        before = turn[:match.start()].rstrip()
        opens_sentence = not before or before[-1] in ".!?…"
        if not opens_sentence or turn[match.end():match.end() + 1] in (",", "!"):
            found.append(match.group())
    return found
