"""The offline consolidator (`LLM_PROVIDER=off`): seed 004's consolidation JSON by rules, en/ru/zh.

It reads the window sentence by sentence, keeping who said each one:
- the user about themselves with a personal fact (name, home, work, likes, fears…) → facts_about_user;
- anyone telling something that happened (past markers: "yesterday", "вчера", "昨天", past-tense
  verbs) → past_events;
- the character's "I think / I believe" → self_beliefs, its "I will / let's" → objectives;
- any sentence whose importance (classify.calculate_importance) reaches KEY_FACT_IMPORTANCE, and
  the user's facts about other people ("my sister lives in Madrid") → key_facts, with topic tags;
- emotions detected in the user's words → emotions, scored intensity × valence (-1..1).
Memory texts keep the speaker ("Anna: I moved to Lisbon"), so the user's words and the
character's are never confused downstream. Each item carries a confidence: lower for the
guesses a rule makes most often wrong, which then wait for review.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rag.memories.classify import (
    FIRST_PERSON,
    PERSONAL,
    calculate_importance,
    detect_emotions,
    determine_memory_kind,
    memory_words,
)
from rag.memories.vocab import valence

KEY_FACT_IMPORTANCE = 0.7
_SENTENCE = re.compile(r"(?<=[.!?。！？])\s*|\n+")


@dataclass(frozen=True)
class Turn:
    speaker: str  # display label: the user's name or "User", the character's name
    text: str
    is_character: bool


def _set(text: str) -> frozenset[str]:
    return frozenset(text.split())


PAST_MARKERS = _set(
    "yesterday ago last went was were had did visited met moved saw got bought finished started "
    "вчера позавчера недавно прошлой прошлом прошлый прошлую назад "
    "昨天 前天 上周 上个月 去年 以前 了 过 曾经"
)
_RU_PAST_ENDINGS = ("ал", "ял", "ил", "ел", "ла", "ли")
_EN_PAST = re.compile(r"^[a-z]{3,}ed$")
BELIEF = _set("think believe feel guess am consider думаю считаю верю чувствую кажется 觉得 认为 相信 感觉")
OBJECTIVE = _set(
    "will let's gonna plan going promise try буду будем собираюсь планирую попробую давай обещаю "
    "要 会 打算 计划 准备 试试 让我们"
)
TOPIC_TAGS = {
    "games": _set("game games gaming play played игра игры играть играл 游戏 玩"),
    "music": _set("music song songs band concert guitar музыка песня песни концерт гитара 音乐 歌 演唱会 吉他"),
    "technology": _set("computer code coding programming tech software компьютер код программирую 电脑 编程 技术"),
    "sports": _set("sport sports football soccer run running gym yoga спорт футбол бег зал йога 运动 足球 跑步 健身"),
    "movies": _set("movie movies film films cinema фильм фильмы кино 电影"),
    "books": _set("book books novel read reading книга книги роман читать читаю 书 小说 读书"),
    "family": _set("family mom mother dad father brother sister son daughter семья мама папа брат сестра сын дочь "
                   "家人 妈妈 爸爸 哥哥 姐姐 儿子 女儿"),
    "friends": _set("friend friends друг друзья подруга 朋友"),
    "work": _set("work job office boss colleague работа работаю офис начальник коллега 工作 公司 老板 同事"),
}


def _is_past(tokens: Sequence[str]) -> bool:
    for token in tokens:
        if token in PAST_MARKERS or _EN_PAST.match(token):
            return True
        if len(token) >= 4 and token.endswith(_RU_PAST_ENDINGS) and "а" <= token[0] <= "я":
            return True
    return False


def _tags(tokens: set[str]) -> list[str]:
    return [tag for tag, cues in TOPIC_TAGS.items() if tokens & cues]


def _sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text) if s and len(s.strip()) > 1]


# The consolidation schema's list bounds (rag.memories.consolidation.CONSOLIDATION_SCHEMA uses these).
MAX_ITEMS = 100
MAX_EMOTIONS = 30
SUMMARY_MAX_CHARS = 2000


def consolidate_rules(turns: Sequence[Turn], character: str = "") -> dict[str, Any]:
    """Seed 004's consolidation JSON from a window of turns, by rules (see the module docstring)."""
    out: dict[str, Any] = {"facts_about_user": [], "past_events": [], "self_beliefs": [], "objectives": [],
                           "emotions": [], "key_facts": []}
    seen: set[str] = set()
    emotions: dict[str, float] = {}
    for line, turn in enumerate(turns):
        for sentence in _sentences(turn.text):
            tokens = memory_words(sentence)
            present = set(tokens)
            if len(tokens) < 3:
                continue
            text = f"{turn.speaker}: {sentence}"
            if text in seen:
                continue
            about = determine_memory_kind(sentence, "assistant" if turn.is_character else "user", character).value
            importance = calculate_importance(sentence)
            tags = _tags(present)
            first_person = bool(present & FIRST_PERSON)
            item = {"text": text, "about": about, "importance": importance, "tags": tags, "from": [line]}
            placed = False
            if not turn.is_character and about == "user" and first_person and (
                    present & PERSONAL or any(t.startswith(("люб", "работа", "живу", "переех")) for t in tokens)):
                out["facts_about_user"].append({**item, "confidence": 0.75})
                placed = True
            elif turn.is_character and first_person and present & OBJECTIVE:
                out["objectives"].append({**item, "about": "self", "confidence": 0.65})
                placed = True
            elif turn.is_character and first_person and present & BELIEF:
                out["self_beliefs"].append({**item, "about": "self", "confidence": 0.65})
                placed = True
            if not placed and _is_past(tokens) and (first_person or about == "third_party"):
                out["past_events"].append({**item, "confidence": 0.7})
                placed = True
            # What the user tells about the people in their life is worth keeping too.
            third_party_fact = about == "third_party" and not turn.is_character and bool(present & PERSONAL)
            if (importance >= KEY_FACT_IMPORTANCE or third_party_fact) and not placed:
                out["key_facts"].append({**item, "confidence": 0.6})
                placed = True
            if placed:
                seen.add(text)
            if not turn.is_character:
                for emotion, intensity in detect_emotions(sentence).items():
                    score = round(intensity * valence(emotion), 3)
                    if abs(score) > abs(emotions.get(emotion, 0.0)):
                        emotions[emotion] = score
    out["emotions"] = [{"name": name, "score": score} for name, score in emotions.items()][:MAX_EMOTIONS]
    for key in ("facts_about_user", "past_events", "self_beliefs", "objectives", "key_facts"):
        if len(out[key]) > MAX_ITEMS:
            # A diary imported in one batch told 120 events in a 120-turn window; the schema takes 100, and the
            # run failed on every retry, holding up the session's later windows. The most important stay.
            kept = sorted(range(len(out[key])), key=lambda i: -out[key][i]["importance"])[:MAX_ITEMS]
            out[key] = [out[key][i] for i in sorted(kept)]
    highlights = list(dict.fromkeys(i["text"] for key in ("facts_about_user", "past_events", "key_facts")
                                    for i in out[key]))[:3]
    out["summary"] = (" | ".join(highlights) if highlights else "")[:SUMMARY_MAX_CHARS]
    return out
