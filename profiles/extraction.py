"""Candidate facts from messages: through the LLM ("fact_extractor" agent) or the rules.

Nothing here writes or opens a transaction: the extract job calls this in its prepare phase, and
the candidates go to `services.facts_save_candidates` (its apply phase), which validates each one,
refuses sensitive numbers and records what it did.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field, model_validator

from memoryhub.llm import LLMClient
from memoryhub.models import Message
from memoryhub.sensitive import redact
from memoryhub.text import count_tokens, normalize
from profiles import rules
from profiles.conf import extract_window_tokens, llm_default_confidence
from profiles.keys import KEYS
from profiles.rules import zh


@dataclass
class Candidate:
    key: str
    value: str
    confidence: float
    message: Message | None = None
    rule: str = ""
    evidence: str = ""
    # Set when the candidate is dropped before saving ("not_user": the bot said it).
    drop_reason: str = ""
    # The user said the value changed ("I moved to Seattle"): it replaces the current one.
    change: bool = False
    # The user said the value no longer holds ("I quit Google"); "" for whatever the key holds now.
    ended: bool = False


def rules_candidates(messages: Sequence[Message]) -> list[Candidate]:
    """Rule-based candidates from the user's own messages (never the bot's)."""
    out = []
    for i, message in enumerate(messages):
        if message.role != Message.Role.USER:
            continue
        before = messages[i - 1] if i else None
        of_another = before is not None and before.role != Message.Role.USER and zh.asks_of_another(before.text)
        for fact in rules.extract(message.text, answers_of_another=of_another):
            out.append(Candidate(fact.key, fact.value, fact.confidence, message, fact.rule, fact.evidence,
                                 change=fact.change, ended=fact.ended))
    return out


# --- LLM ------------------------------------------------------------------------------------------
class ExtractedFact(BaseModel):
    key: str = Field(min_length=1, max_length=64, description="Canonical key, or short English snake_case.")
    value: str = Field(max_length=500, description="The value; \"\" only for an ended fact that names none.")
    confidence: float = Field(default=0.8, ge=0.0, le=1.0)
    message: int | None = Field(default=None, ge=0, description="Number of the message the fact comes from.")
    change: bool = Field(default=False, description="The user says the value changed (moved, new job): the new "
                                                    "value replaces the old one.")
    ended: bool = Field(default=False, description="The user says the value no longer holds (quit a job): it "
                                                   "leaves the profile.")

    @model_validator(mode="after")
    def _a_value_unless_ended(self) -> ExtractedFact:
        if not self.value.strip() and not self.ended:
            raise ValueError("value must not be empty")
        return self


class ExtractionReply(BaseModel):
    facts: list[ExtractedFact] = Field(max_length=100)


def _key_list() -> str:
    single = ", ".join(spec.name for spec in KEYS if not spec.multi)
    multi = ", ".join(spec.name for spec in KEYS if spec.multi)
    return f"single-valued: {single}; multi-valued (one fact per value): {multi}"


SYSTEM_PROMPT = """You maintain the long-term profile of the USER of a chat assistant.
From the numbered conversation, extract facts the user states about themselves that are true now
and worth remembering across conversations (who they are, preferences, settings).

Do not extract: questions, hypotheticals, wishes or plans, what used to be true, facts about other
people, anything the assistant says, or anything the user only asks about. Never output bank card
numbers, identity/passport/SNILS numbers, IBANs, passwords or other secrets.

When the user says a value changed ("I moved to Seattle last week", "я переехал в Казань",
"我搬到杭州了", "I started a new job at Stripe"), give the new value with "change": true: it replaces
what was known before. Plain statements ("I live in Boston") have "change": false. When the user says
a value no longer holds ("I quit Google", "я уволился из Сбербанка", "我从腾讯离职了"), give that value
with "ended": true, or "value": "" when they name none ("I quit my job", "我辞职了"): it leaves the profile.

Keys: use these when they fit ({keys}). Otherwise a short English snake_case key.
Values: short, in the user's words and language, nominative form; ages as whole numbers;
language_preference and languages_spoken as ISO 639-1 codes; preferred_timezone as an IANA name
or UTC+HH:MM.
confidence: 0.9 for a plain direct statement, lower when the wording is indirect or uncertain.
message: the number of the message the fact comes from.

Reply with JSON only: {{"facts": [{{"key": "...", "value": "...", "confidence": 0.9, "message": 0, "change": false}}]}}
and {{"facts": []}} when there is nothing to remember."""


def _windows(messages: Sequence[Message], budget: int) -> list[list[Message]]:
    """Consecutive slices of the conversation whose transcript fits `budget` tokens each."""
    windows: list[list[Message]] = [[]]
    used = 0
    for message in messages:
        cost = count_tokens(message.text) + 8
        if windows[-1] and used + cost > budget:
            windows.append([])
            used = 0
        windows[-1].append(message)
        used += cost
    return [w for w in windows if w]


def llm_candidates(client: LLMClient, messages: Sequence[Message]) -> list[Candidate]:
    """Candidates from the LLM, one call per window of the conversation. Facts attributed to the
    assistant's messages are dropped: a model that says "the user is…" about its own turn is wrong."""
    if not any(m.role == Message.Role.USER for m in messages):
        return []
    budget, default_confidence = extract_window_tokens(), llm_default_confidence()
    out: list[Candidate] = []
    for window in _windows(messages, budget):
        # Masked even when the messages are kept raw: the numbers would only be refused as facts,
        # and the provider has no need to see them.
        transcript = redact("\n".join(f"[{i}] {m.role}: {m.text}" for i, m in enumerate(window)), where="llm_prompt")
        reply, _result = client.chat_json(
            "fact_extractor",
            [{"role": "system", "content": SYSTEM_PROMPT.format(keys=_key_list())},
             {"role": "user", "content": transcript}],
            ExtractionReply,
            parse_retries=1,
        )
        for fact in reply.facts:
            message = _source_message(window, fact)
            candidate = Candidate(
                fact.key, fact.value,
                fact.confidence if "confidence" in fact.model_fields_set else default_confidence,
                message, "llm", json.dumps(fact.model_dump(), ensure_ascii=False), change=fact.change,
                ended=fact.ended,
            )
            if message is not None and message.role != Message.Role.USER:
                candidate.drop_reason, candidate.message = "not_user", None
            out.append(candidate)
    return out


def _source_message(window: Sequence[Message], fact: ExtractedFact) -> Message | None:
    if fact.message is not None and fact.message < len(window):
        return window[fact.message]
    # No (or a wrong) message number: the user message that mentions the value, if one does.
    needle = normalize(fact.value)
    for message in reversed(window):
        if message.role == Message.Role.USER and needle and needle in normalize(message.text):
            return message
    return None


__all__ = ["Candidate", "ExtractedFact", "ExtractionReply", "llm_candidates", "rules_candidates"]
