"""Rule-based fact extraction for English, Russian and Chinese, used when the LLM is off.

Only statements the user makes about themselves count: each sentence is checked for questions,
hypotheticals and reported speech, each match for negation, and the patterns are anchored on the
first person ("I", "я"/first-person verbs, "我"), so facts about other people do not match. The
caller passes user messages only: what the bot says about itself or the user is never a fact.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memoryhub.exceptions import ApplicationError
from memoryhub.text import detect_language
from profiles.keys import key_normalize, value_clean, value_norm
from profiles.rules import en, ru, zh
from profiles.rules.common import RuleFact, job_pair_changes, sentences, without_trailing_filler

__all__ = ["RuleFact", "extract"]

_BY_LANGUAGE = {"en": en.extract_sentence, "ru": ru.extract_sentence, "zh": zh.extract_sentence}


_ASKED = re.compile(r"[?？]\s*$")
_CLAUSE_END = re.compile(r"[,，;；—]")


# "We adopted a cat yesterday! Her name is Mochi.", "Завели кошку! Зовут Муся.", "我们养了一只小狗。它叫豆豆。": a pet
# named by the sentence right after the one that says it, which opens with the name.
_PET_NAMED_NEXT = re.compile(
    r"^\W*(?:(?:his|her|its)\s+name(?:\s+is|'s|’s)\s+(?-i:([A-Z][a-z]+))"
    r"|(?:(?:его|её|ее)\s+)?(?:зовут|назвали(?:\s+(?:его|её|ее))?)\s+(?-i:([А-ЯЁ][а-яё]+))"
    r"|(?:它|牠)?(?:叫|名字叫)([\u4e00-\u9fff]{1,3}))(?!\w)", re.IGNORECASE)


def _statement_before_question(sentence: str) -> str:
    """A question's sentence up to its last comma: what the user states before asking ("I'm allergic to
    shellfish, can you suggest a dish?", "У меня аллергия на орехи, что приготовить?",
    "我对芒果过敏，有什么水果推荐吗？" gave no allergy, the whole sentence being a question). What it keeps
    is read as any sentence is, so a part that is itself a question ("Do you think I'm allergic to nuts, or
    not?") still gives nothing."""
    if not _ASKED.search(sentence):
        return sentence
    cuts = [m.start() for m in _CLAUSE_END.finditer(sentence)]
    return sentence[:cuts[-1]] if cuts and cuts[-1] > 0 else sentence


def extract(text: str, *, answers_of_another: bool = False) -> list[RuleFact]:
    """Facts stated in `text`, values in their stored form; the most confident reading of each
    (key, value) is kept, a change when any reading says so. Values a key cannot hold (an age of 500)
    are dropped here; sensitive numbers are not: they are refused, and counted, when saved. A fact with
    `ended` says the value no longer holds (its value "" when the user named none: "I quit my job").
    `answers_of_another`: the text answers a question about someone else (`zh.asks_of_another`)."""
    best: dict[tuple[str, str, bool], RuleFact] = {}
    unnamed_pet: tuple[str, str, bool] | None = None  # the previous sentence's pet, named by none of its words
    for i, said in enumerate(sentences(text)):
        if unnamed_pet is not None and unnamed_pet in best and (named := _PET_NAMED_NEXT.match(said)):
            pet = best.pop(unnamed_pet)
            value = f"{pet.value} ({next(group for group in named.groups() if group)})"
            best[(pet.key, value_norm(value), False)] = replace(pet, value=value, evidence=f"{pet.evidence} {said}")
        unnamed_pet = None
        sentence = _statement_before_question(said)
        language = detect_language(sentence)
        # Chinese leaves the subject out: only the opening sentence's is surely the writer's, and not when it
        # answers a question about someone else ("他几岁了？" — "六岁。").
        found = (zh.extract_sentence(sentence, opens_message=i == 0 and not answers_of_another) if language == "zh"
                 else _BY_LANGUAGE[language](sentence))
        for fact in job_pair_changes(found):
            try:
                key = key_normalize(fact.key)
                value = (value_clean(key, without_trailing_filler(fact.value))
                         if fact.value or not fact.ended else "")
            except ApplicationError:
                continue
            slot = (key, value_norm(value), fact.ended)
            change = fact.change or (slot in best and best[slot].change)
            cleaned = RuleFact(key, value, fact.confidence, fact.rule, fact.evidence, change, fact.ended)
            if slot not in best or best[slot].confidence < cleaned.confidence:
                best[slot] = cleaned
            elif change:
                best[slot] = replace(best[slot], change=True)
            if key == "pets" and "(" not in value and not fact.ended:
                unnamed_pet = slot
    return list(best.values())
