"""POST /api/v1/chat (seed 002's example): store a user's turns, answer them with the user's memory.

The flow, and why in this order:
1. The turns go through the intake (`messages_append`: idempotency, outbox, masking) in its own
   transaction, committed before anything else: an accepted turn is kept whatever happens to the answer.
2. The context is assembled for the last user turn with the session, as POST /api/v1/context does.
3. The LLM is called with no transaction open and no lock held (a slow model must not hold a session's
   row, nor an erasure).
4. The answer is stored as the session's assistant turn, through the intake again, on condition that
   the turns it answers still exist (an erasure meanwhile drops it: nothing of the erased user is left).

The prompt: one system message (the client's own system turns of this request, our instruction, then
every context block but `recent_turns`, rendered as POST /context renders them), then the turns of the
`recent_turns` block as chat messages with their roles, oldest first, ending with this request's turns.
The recent turns go as messages, not as a block of the system prompt, so the model sees who said what
as a chat; the block decides which turns go (the newest that fit its share of the budget, without a
gap), so they are counted in the budget once, and the memories block already leaves out the turns it
shows (`in_recent_turns`). This request's turns always go, whole, even when the block cut or clipped
them: they are what is being answered.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import openai
from django.conf import settings

from memoryhub import services as kernel_services
from memoryhub.exceptions import UPSTREAM_RETRY_AFTER_SECONDS, ApplicationError
from memoryhub.llm import LLMDisabled, LLMError, LLMUnavailable, MalformedBody, get_llm
from memoryhub.models import Message, Tenant
from memoryhub.sensitive import redact
from rag import context as rag_context

logger = logging.getLogger(__name__)

# The LLM agent whose model answers (LLM_MODELS {"chat": …}; else LLM_MODEL).
CHAT_AGENT = "chat"
# The context's query: the last user turn, at most what POST /api/v1/context accepts.
QUERY_MAX_CHARS = 4000
# The answer's external_id: the last user turn's, with this suffix (so a retry finds the answer).
ANSWER_ID_SUFFIX = ":answer"

SYSTEM_INSTRUCTION = (
    "You are a helpful assistant with a long-term memory of this user. What you remember of them follows: "
    "who they are (profile), the people in their life, and earlier conversations (memories, by day). Use "
    "it where it helps to answer; do not recite it, and say so when you do not know."
)


class ChatError(ApplicationError):
    """The answer failed; the user's turns are stored (their ids in the error body)."""

    def __init__(self, message: str, *, code: str, status_code: int, message_ids: Sequence[int],
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message, code=code, status_code=status_code, headers=headers,
                         extra={"message_ids": list(message_ids)})


@dataclass
class ChatReply:
    answer: str
    message_ids: list[int]  # this request's turns, in the order sent, then the answer
    answer_id: int
    model: str
    usage: dict[str, Any]
    context: dict[str, Any]
    replayed: bool = False
    masked: dict[str, int] = field(default_factory=dict)


def chat_models() -> list[str]:
    """The models a request may name: those LLM_MODELS configures, for any agent."""
    return sorted(set(settings.LLM_MODELS.values()))


def chat_reply(
    *,
    tenant: Tenant,
    user_id: str,
    session_id: str,
    messages: Sequence[kernel_services.IncomingMessage],
    auto_extract: bool = False,
    budget_tokens: int | None = None,
    model: str | None = None,
    temperature: float | None = None,
    max_tokens: int | None = None,
) -> ChatReply:
    """Store `messages` (the last one a user turn), answer it with the user's memory, store the answer.
    `temperature` and `max_tokens`: the answer's sampling, else CHAT_TEMPERATURE and CHAT_MAX_ANSWER_TOKENS.

    Raises ChatError (503 `llm_unavailable`, 503 `llm_rate_limited`, 504 `llm_timeout`, 502 `llm_error`,
    502 `llm_empty_answer`) with the stored turns' ids when no answer is stored, and ApplicationError
    `erased` (409) when the user was erased while the answer was written."""
    stored = kernel_services.messages_append(tenant=tenant, user_id=user_id, session_id=session_id,
                                             messages=messages, auto_extract=auto_extract)
    created = iter(stored.created)
    turn_ids = [stored.duplicate_ids[m.external_id] if m.external_id and m.external_id in stored.duplicate_ids
                else next(created).pk for m in messages]
    turns = {m.pk: m for m in Message.objects.filter(tenant=tenant, pk__in=turn_ids)}
    last = turns.get(turn_ids[-1])
    if last is None:  # erased between the store and this read
        raise ApplicationError(f"User {user_id!r} was erased meanwhile.", code="erased", status_code=409)

    answer_key = f"{last.external_id}{ANSWER_ID_SUFFIX}" if last.external_id else None
    if answer_key and turn_ids[-1] in stored.duplicate_ids.values():
        # A retry of a turn already answered: the stored answer, without asking the model again.
        answered = Message.objects.filter(conversation_id=last.conversation_id, external_id=answer_key).first()
        if answered is not None:
            chat = answered.meta.get("chat", {})
            return ChatReply(answer=answered.text, message_ids=[*turn_ids, answered.pk], answer_id=answered.pk,
                             model=chat.get("model", ""), usage=chat.get("usage", {}),
                             context=chat.get("context", {}), replayed=True, masked=dict(stored.masked))

    context = rag_context.context_assemble(tenant_id=tenant.pk, user_id=user_id, query=last.text[:QUERY_MAX_CHARS],
                                           session_id=session_id, budget_tokens=budget_tokens)
    summary = context_summary(context)
    prompt = chat_prompt(context, [turns[pk] for pk in turn_ids if pk in turns], last)

    client = get_llm()
    if client is None:
        raise ChatError("No language model is configured (LLM_PROVIDER is off): the turns are stored, no answer "
                        "was written. Set LLM_PROVIDER=openai, LLM_BASE_URL and LLM_API_KEY.",
                        code="llm_unavailable", status_code=503, message_ids=turn_ids)
    try:
        result = client.chat_text(
            CHAT_AGENT, prompt, temperature=settings.CHAT_TEMPERATURE if temperature is None else temperature,
            max_tokens=settings.CHAT_MAX_ANSWER_TOKENS if max_tokens is None else max_tokens, model=model)
    except LLMDisabled as exc:
        raise ChatError(str(exc), code="llm_unavailable", status_code=503, message_ids=turn_ids) from exc
    except LLMError as exc:
        raise _llm_fault(exc, turn_ids) from exc
    answer = result.text.strip()
    if not answer:
        raise ChatError("The language model answered with nothing: no answer was stored; retry.",
                        code="llm_empty_answer", status_code=502, message_ids=turn_ids)

    usage = {"prompt_tokens": result.prompt_tokens, "completion_tokens": result.completion_tokens,
             "total_tokens": result.prompt_tokens + result.completion_tokens, "cost_usd": result.cost_usd,
             "attempts": result.attempts}
    reply = kernel_services.IncomingMessage(
        role=Message.Role.ASSISTANT, text=answer, external_id=answer_key,
        meta={"chat": {"model": result.model, "reply_to": last.pk, "usage": usage, "context": summary}})
    saved = kernel_services.messages_append(tenant=tenant, user_id=user_id, session_id=session_id,
                                            messages=[reply], reply_to=[last.pk])
    # None created: a concurrent retry of this turn stored its answer first, and that one stands.
    answer_msg = saved.created[0] if saved.created else Message.objects.get(pk=saved.duplicate_ids[answer_key or ""])
    return ChatReply(answer=answer_msg.text, message_ids=[*turn_ids, answer_msg.pk], answer_id=answer_msg.pk,
                     model=result.model, usage=usage, context=summary, replayed=not saved.created,
                     masked=dict(stored.masked + saved.masked))


def context_summary(context: rag_context.Context) -> dict[str, Any]:
    """What memory the answer was given: each block's tokens and the rows it showed (`fact:12`,
    `person:3`, `chunk:40`, `message:7`), and what was cut."""
    return {"budget_tokens": context.budget, "used_tokens": context.used,
            "blocks": [{"name": b.name, "tokens": b.tokens, "refs": [i.ref for i in b.items],
                        "cut": len(b.cut)} for b in context.blocks]}


def chat_prompt(context: rag_context.Context, sent: Sequence[Message], last: Message) -> list[dict[str, Any]]:
    """The messages for the model: see the module's docstring."""
    recent = next((b for b in context.blocks if b.name == "recent_turns"), None)
    recent_ids = [int(i.ref.partition(":")[2]) for i in recent.items] if recent else []
    clipped = {int(i.ref.partition(":")[2]) for i in recent.items if i.meta.get("clipped")} if recent else set()
    sent_ids = {m.pk for m in sent}
    rows = {m.pk: m for m in Message.objects.filter(pk__in=set(recent_ids) - sent_ids)}
    history = sorted([*(rows[pk] for pk in recent_ids if pk in rows), *(m for m in sent if m.pk != last.pk)],
                     key=lambda m: (m.created_at, m.pk))
    system_turns = [m for m in history if m.role == Message.Role.SYSTEM]
    memory = "\n\n".join(r for r in (b.render() for b in context.blocks if b.name != "recent_turns") if r)
    system = "\n\n".join(p for p in [*(redact(m.text, where="context") for m in system_turns), SYSTEM_INSTRUCTION,
                                     memory] if p)
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}]
    for message in [*(m for m in history if m.role != Message.Role.SYSTEM), last]:
        text = redact(message.text, where="context")
        if message.pk in clipped and message.pk not in sent_ids:
            # As the block showed it: its beginning, within the block's share of the budget.
            line = next(i.text for i in recent.items if i.ref == f"message:{message.pk}")  # type: ignore[union-attr]
            text = line.split(": ", 1)[-1] if ": " in line else line
        if message.speaker:
            # OpenAI's `name` allows [a-zA-Z0-9_-] only: a speaker's name goes into the words.
            text = f"{redact(message.speaker, where='context')}: {text}"
        chat.append({"role": message.role, "content": text})
    return chat


def _llm_fault(exc: LLMError, turn_ids: Sequence[int]) -> ChatError:
    """The model call failed after its retries: which status says what a client may do."""
    logger.warning("chat answer failed: %s: %s", type(exc).__name__, exc)
    cause = exc.__cause__
    if isinstance(cause, openai.APITimeoutError):
        return ChatError("The language model did not answer in time (LLM_TIMEOUT): the turns are stored, no "
                         "answer was written; retry.", code="llm_timeout", status_code=504, message_ids=turn_ids)
    if isinstance(exc, LLMUnavailable) and exc.status_code == 429:
        return ChatError("The language model is rate-limited: the turns are stored, no answer was written; "
                         "retry later.", code="llm_rate_limited", status_code=503, message_ids=turn_ids,
                         headers={"Retry-After": str(UPSTREAM_RETRY_AFTER_SECONDS)})
    if isinstance(exc, LLMUnavailable) and not isinstance(cause, MalformedBody) and exc.status_code is None:
        return ChatError("The language model endpoint cannot be reached: the turns are stored, no answer was "
                         "written; retry later.", code="llm_unavailable", status_code=503, message_ids=turn_ids,
                         headers={"Retry-After": str(UPSTREAM_RETRY_AFTER_SECONDS)})
    return ChatError(f"The language model failed ({exc}): the turns are stored, no answer was written.",
                     code="llm_error", status_code=502, message_ids=turn_ids)
