"""Seed 004's vocabularies: memory kinds, consolidation categories, emotions (with valence).

Emotions are stored by an English id; the seed's Russian names and Chinese names are accepted as
aliases, so a client (or a model) writing "радость" or "快乐" gets `joy`, and so are the everyday words
for the feeling ("sad", "happy", "开心", "печаль"): a client that writes `"emotion": "sad"` means
`sadness`, and a model's "grateful" should not drop out of the mood.
"""

from __future__ import annotations

from enum import StrEnum


class MemoryKind(StrEnum):
    SELF = "self"  # about the character: its opinions, actions, states
    USER = "user"  # about the user: preferences, facts, behaviour
    THIRD_PARTY = "third_party"  # about other people: friends, family, colleagues


class Category(StrEnum):
    FACTS_ABOUT_USER = "FactsAboutUser"
    PAST_EVENTS = "PastEvents"
    SELF_BELIEFS = "SelfBeliefs"
    OBJECTIVES = "Objectives"
    KEY_FACTS = "KeyFacts"
    EMOTIONS = "Emotions"
    MOOD = "Mood"
    CHAT = "chat"
    SESSION_EVENT = "SessionEvent"


KINDS = [k.value for k in MemoryKind]
CATEGORIES = [c.value for c in Category]
# Short-lived: expire after MEMORY_SESSION_TTL_DAYS unless their history is still active.
SESSION_CATEGORIES = frozenset({Category.CHAT.value, Category.SESSION_EVENT.value})

# id -> (valence in -1..1 of feeling it, aliases in en/ru/zh). Valence turns a detected emotion of
# intensity s into a signed score s * valence for mood (seed 004: -1 very negative .. +1 very positive).
BASIC_EMOTIONS: dict[str, tuple[float, tuple[str, ...]]] = {
    "joy": (1.0, ("радость", "快乐", "喜悦", "happiness", "happy", "joyful", "счастье", "开心", "高兴")),
    "sadness": (-1.0, ("грусть", "悲伤", "难过", "sad", "печаль", "伤心")),
    "anger": (-1.0, ("гнев", "злость", "愤怒", "生气", "angry")),
    "fear": (-1.0, ("страх", "恐惧", "害怕", "afraid", "scared", "fearful")),
    "surprise": (0.2, ("удивление", "惊讶", "surprised")),
    "disgust": (-1.0, ("отвращение", "厌恶", "disgusted")),
    "calm": (0.5, ("спокойствие", "平静", "calmness")),
    "excitement": (0.7, ("волнение", "兴奋", "激动", "excited")),
    "love": (1.0, ("любовь", "爱")),
    "shame": (-0.7, ("стыд", "羞耻", "ashamed")),
}
COMPLEX_EMOTIONS: dict[str, tuple[float, tuple[str, ...]]] = {
    "nostalgia": (0.3, ("ностальгия", "怀旧", "nostalgic")),
    "pride": (0.8, ("гордость", "自豪", "骄傲", "proud")),
    "envy": (-0.6, ("зависть", "嫉妒", "羡慕", "envious", "jealous", "jealousy")),
    "gratitude": (0.9, ("благодарность", "感激", "感谢", "grateful", "thankful")),
    "disappointment": (-0.8, ("разочарование", "失望", "disappointed")),
    "hope": (0.7, ("надежда", "希望", "hopeful")),
    "boredom": (-0.4, ("скука", "无聊", "bored")),
    "interest": (0.5, ("интерес", "兴趣", "interested", "curious", "curiosity")),
}
EMOTIONS = {**BASIC_EMOTIONS, **COMPLEX_EMOTIONS}
_ALIASES = {alias: name for name, (_, aliases) in EMOTIONS.items() for alias in (name, *aliases)}
# Every name the API takes for an emotion: the ids, then their aliases.
EMOTION_NAMES = [*EMOTIONS, *(alias for alias in _ALIASES if alias not in EMOTIONS)]


def canonical_emotion(name: str) -> str | None:
    """The emotion id for a name or alias (any case), or None when it is not in the vocabulary."""
    return _ALIASES.get(name.strip().casefold())


def valence(emotion: str) -> float:
    return EMOTIONS[emotion][0]
