"""POST /api/v1/chat (seed 002's example): store a user's turns, answer them with the user's memory.

The flow, and why in this order:
1. The turns go through the intake (`messages_append`: idempotency, outbox, masking) in its own
   transaction, committed before anything else: an accepted turn is kept whatever happens to the answer.
   Those the session already holds are recognised there (`Resent`) and not stored again.
2. The context is assembled for the last user turn with the session, as POST /api/v1/context does.
3. The LLM is called with no transaction open and no lock held (a slow model must not hold a session's
   row, nor an erasure).
4. The answer is stored as the session's assistant turn, through the intake again, on condition that
   the turns it answers still exist (an erasure meanwhile drops it: nothing of the erased user is left).

A resent history (an OpenAI-style client sends its whole conversation every call, the answers it got
included) is not stored again: a request is a held part, which the session already has, then new turns.
The held part is the longest prefix of the request's user and assistant turns that the session holds in
that order (same role, speaker and text; a turn with an `external_id` is the stored turn with that id,
as the intake has it; session turns between them are ones the client's history skips), and that ends
either with the session's newest turn (the client resends it: the usual case), or with an assistant
turn followed by more of the request (a branch: the client edited the turn after that answer, or asks it
again). From the first turn outside it on, every turn is new and stored in the request's order: an
edited turn is a new turn, and so is each turn the request puts after it (the session keeps what was
said, in order; the turn it replaced stays too). A request of new turns only (a client that sends just
its latest turn) holds nothing, unless it repeats the session's newest turn: a retry after a failed
answer, which is answered, not stored twice. The comparison reads the session's newest turns (the
request's length plus RESENT_LOOKBACK) inside the intake's transaction, under the session's lock, so two
identical requests at once store their new turns once: the second finds them held.

System turns are the client's instructions for this answer, not memories: the prompt takes this
request's own, each text once, and no earlier request's. They are stored as the intake stores them (the
session's record; never indexed, extracted or consolidated), but a text the session holds as a system
turn already is not stored again.

The prompt: one system message (this request's system turns, our instruction with the time now, then
every context block but `recent_turns`, rendered as POST /context renders them), then the turns of the
`recent_turns` block as chat messages with their roles, oldest first, ending with this request's new
turns. The recent turns go as messages, not as a block of the system prompt, so the model sees who said
what as a chat; the block decides which turns go (the newest that fit its share of the budget, without a
gap), so they are counted in the budget once, and the memories block already leaves out the turns it
shows (`in_recent_turns`). Held turns are session turns like any other: they go as the block chose them;
the turns the request's history skips (the branch an edit left) do not go. This request's new turns
always go, whole, even when the block cut or clipped them: they are what is being answered.

"Now" is the conversation's time: the wall clock, unless the client dated the turn answered
(`created_at`) before it arrived (a conversation replayed or imported with its own dates); then the clock
runs that much behind. The system message says it (weekday, date, minute, UTC, as the memories' day
headers are UTC days: "last weekend" needs the weekday); when the turns sent span other days, the user's
turn that opens each day starts with that day; and the answer is dated by it, so a dated conversation
keeps its order.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

import openai
from django.conf import settings
from django.utils import timezone

from memoryhub import services as kernel_services
from memoryhub.exceptions import UPSTREAM_RETRY_AFTER_SECONDS, ApplicationError
from memoryhub.llm import LLMDisabled, LLMError, LLMUnavailable, MalformedBody, get_llm
from memoryhub.models import Conversation, Message, Tenant
from memoryhub.sensitive import redact
from rag import context as rag_context

logger = logging.getLogger(__name__)

# The LLM agent whose model answers (LLM_MODELS {"chat": …}; else LLM_MODEL).
CHAT_AGENT = "chat"
# The context's query: the last user turn, at most what POST /api/v1/context accepts.
QUERY_MAX_CHARS = 4000
# The answer's external_id: the last user turn's, with this suffix (so a retry finds the answer).
ANSWER_ID_SUFFIX = ":answer"
# A resent turn is looked for among the session's newest turns: as many as the request has, and this
# many more, which the client's history may skip (a branch an edit left behind).
RESENT_LOOKBACK = 200

SYSTEM_INSTRUCTION = (
    "You are a helpful assistant with a long-term memory of this user. What you remember of them follows: "
    "who they are (profile), the people in their life, and earlier conversations (memories, by day). Use "
    "it where it helps to answer; do not recite it, and say so when you do not know."
)
# Locale-independent names, as the memories' day headers ("8 May 2023:") are written.
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class ChatError(ApplicationError):
    """The answer failed; the user's turns are stored (their ids in the error body)."""

    def __init__(self, message: str, *, code: str, status_code: int, message_ids: Sequence[int],
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message, code=code, status_code=status_code, headers=headers,
                         extra={"message_ids": list(message_ids)})


@dataclass
class ChatReply:
    answer: str
    message_ids: list[int]  # this request's turns in the order sent (a held one: the stored id), then the answer
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
    """Store `messages` (the last one a user turn) but those the session holds (see the module's docstring),
    answer it with the user's memory, store the answer.
    `temperature` and `max_tokens`: the answer's sampling, else CHAT_TEMPERATURE and CHAT_MAX_ANSWER_TOKENS.

    Raises ChatError (503 `llm_unavailable`, 503 `llm_rate_limited`, 504 `llm_timeout`, 502 `llm_error`,
    502 `llm_empty_answer`) with the stored turns' ids when no answer is stored, and ApplicationError
    `erased` (409) when the user was erased while the answer was written."""
    # One instruction given twice in a request is one system turn.
    batch: list[kernel_services.IncomingMessage] = []
    slots: list[int] = []
    first_of: dict[str, int] = {}
    for message in messages:
        if message.role == Message.Role.SYSTEM:
            first_of.setdefault(message.text, len(batch))
            if first_of[message.text] < len(batch):
                slots.append(first_of[message.text])
                continue
        slots.append(len(batch))
        batch.append(message)
    resent = Resent()
    stored = kernel_services.messages_append(tenant=tenant, user_id=user_id, session_id=session_id,
                                             messages=batch, auto_extract=auto_extract, held=resent.find)
    created = iter(stored.created)
    batch_ids = [stored.held_ids[i] if i in stored.held_ids
                 else stored.duplicate_ids[m.external_id] if m.external_id and m.external_id in stored.duplicate_ids
                 else next(created).pk for i, m in enumerate(batch)]
    turn_ids = [batch_ids[slot] for slot in slots]
    new_ids = {m.pk for m in stored.created}
    turns = {m.pk: m for m in Message.objects.filter(tenant=tenant, pk__in=turn_ids)}
    last = turns.get(turn_ids[-1])
    if last is None:  # erased between the store and this read
        raise ApplicationError(f"User {user_id!r} was erased meanwhile.", code="erased", status_code=409)

    answer_key = f"{last.external_id}{ANSWER_ID_SUFFIX}" if last.external_id else None
    if answer_key and last.pk not in new_ids:
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
    prompt = chat_prompt(context, [turns[pk] for pk in dict.fromkeys(turn_ids) if pk in turns], last,
                         new_ids=new_ids, skipped=resent.skipped, now=conversation_now(last))

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
        role=Message.Role.ASSISTANT, text=answer, external_id=answer_key, created_at=conversation_now(last),
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


def chat_prompt(context: rag_context.Context, sent: Sequence[Message], last: Message, *,
                new_ids: set[int] | None = None, skipped: Collection[int] = (),
                now: datetime | None = None) -> list[dict[str, Any]]:
    """The messages for the model: see the module's docstring. `sent`: this request's turns as stored,
    in its order; `new_ids`: those it stored (default: all); `skipped`: session turns its history leaves
    out; `now`: the conversation's time (`conversation_now`)."""
    new_ids = {m.pk for m in sent} if new_ids is None else new_ids
    recent = next((b for b in context.blocks if b.name == "recent_turns"), None)
    recent_ids = [int(i.ref.partition(":")[2]) for i in recent.items] if recent else []
    clipped = {int(i.ref.partition(":")[2]) for i in recent.items if i.meta.get("clipped")} if recent else set()
    new = [m for m in sent if m.pk in new_ids and m.pk != last.pk and m.role != Message.Role.SYSTEM]
    shown = set(recent_ids) - set(skipped) - {m.pk for m in new} - {last.pk}
    # A session turn the request says again as new (its history edited from the first turn on, so it
    # shares no held part with the session) goes once, as the request has it.
    said = {(m.role, m.speaker, m.text) for m in [*new, last]}
    rows = [m for m in Message.objects.filter(pk__in=shown).exclude(role=Message.Role.SYSTEM)
            if (m.role, m.speaker, m.text) not in said]
    history = sorted([*rows, *new], key=lambda m: (m.created_at, m.pk))
    # This request's instructions only: an earlier request's system turn is no standing order.
    system_turns = [m for m in sent if m.role == Message.Role.SYSTEM]
    memory = "\n\n".join(r for r in (b.render() for b in context.blocks if b.name != "recent_turns") if r)
    instruction = f"{SYSTEM_INSTRUCTION}\n{now_line(now)}" if now else SYSTEM_INSTRUCTION
    system = "\n\n".join(p for p in [*(redact(m.text, where="context") for m in system_turns), instruction,
                                     memory] if p)
    chat: list[dict[str, Any]] = [{"role": "system", "content": system}]
    turns = [*history, last]
    dated = now is not None and any(_day(m.created_at) != _day(now) for m in turns)
    day = None
    for message in turns:
        text = redact(message.text, where="context")
        if message.pk in clipped and message.pk not in new_ids and message.pk != last.pk:
            # As the block showed it: its beginning, within the block's share of the budget.
            line = next(i.text for i in recent.items if i.ref == f"message:{message.pk}")  # type: ignore[union-attr]
            text = line.split(": ", 1)[-1] if ": " in line else line
        if message.speaker:
            # OpenAI's `name` allows [a-zA-Z0-9_-] only: a speaker's name goes into the words.
            text = f"{redact(message.speaker, where='context')}: {text}"
        if dated and message.role == Message.Role.USER and _day(message.created_at) != day:
            # Turns of other days than now's carry no date as chat messages: the user's turn that opens a
            # day says it, so "yesterday" in a turn, or "last weekend" asked now, can be placed. Only the
            # user's, which the model does not imitate in its answers.
            day = _day(message.created_at)
            text = f"[{_day_name(message.created_at)}] {text}"
        chat.append({"role": message.role, "content": text})
    return chat


def conversation_now(last: Message) -> datetime:
    """Now in the conversation's time: the wall clock, behind by as much as the client dated the turn
    answered before it arrived (a conversation replayed with its own dates); the wall clock otherwise."""
    return timezone.now() - (last.received_at - last.created_at)


def now_line(now: datetime) -> str:
    """"Now: Wednesday 15 May 2024, 10:00 UTC." (about 15 tokens): the weekday too, which "last weekend"
    needs and a model does not reliably work out from a date."""
    return f"Now: {_day_name(now)}, {now.astimezone(UTC):%H:%M} UTC."


def _day(moment: datetime) -> date:
    return moment.astimezone(UTC).date()


def _day_name(moment: datetime) -> str:
    """"Wednesday 15 May 2024", in UTC as the memories' day headers are."""
    day = _day(moment)
    return f"{_WEEKDAYS[day.weekday()]} {day.day} {_MONTHS[day.month - 1]} {day.year}"


class Resent:
    """Finds the turns of a batch the session already holds (`messages_append`'s `held`), and keeps the
    session's turns the request's history skips (`skipped`, ids). See the module's docstring."""

    def __init__(self) -> None:
        self.skipped: set[int] = set()

    def find(self, conversation: Conversation, batch: Sequence[kernel_services.IncomingMessage]) -> dict[int, int]:
        if not conversation.message_count:
            return {}
        held: dict[int, int] = {}
        system = {i: m.text for i, m in enumerate(batch) if m.role == Message.Role.SYSTEM}
        if system:
            known = dict(Message.objects.filter(conversation=conversation, role=Message.Role.SYSTEM,
                                                text__in=set(system.values()))
                         .order_by("-created_at", "-id").values_list("text", "pk"))
            held |= {i: known[text] for i, text in system.items() if text in known}
        said = [i for i, m in enumerate(batch) if m.role != Message.Role.SYSTEM]
        stored = list(Message.objects.filter(conversation=conversation).exclude(role=Message.Role.SYSTEM)
                      .order_by("-created_at", "-id").only("pk", "role", "speaker", "text", "external_id")
                      [:len(said) + RESENT_LOOKBACK])[::-1]
        positions = resent_positions([batch[i] for i in said], stored)
        held |= {said[j]: stored[p].pk for j, p in enumerate(positions)}
        if positions:
            matched = set(positions)
            self.skipped = {stored[p].pk for p in range(positions[0], len(stored)) if p not in matched}
        return held


def _same(turn: kernel_services.IncomingMessage, row: Message) -> bool:
    if turn.external_id:
        return row.external_id == turn.external_id
    return (row.role, row.speaker, row.text) == (turn.role, turn.speaker, turn.text)


def resent_positions(turns: Sequence[kernel_services.IncomingMessage], stored: Sequence[Message]) -> list[int]:
    """Where in `stored` (a session's user and assistant turns, oldest first) the held prefix of `turns`
    (a request's, in order) is: one position per held turn, the latest that fit. See the module's docstring."""
    # earliest[i]: the earliest position at which turns[:i + 1] can end in `stored`, in order (greedy).
    earliest: list[int] = []
    at = -1
    for turn in turns:
        at = next((p for p in range(at + 1, len(stored)) if _same(turn, stored[p])), -1)
        if at < 0:
            break
        earliest.append(at)
    latest_by_id = {row.external_id: p for p, row in enumerate(stored) if row.external_id}
    latest_by_text = {(row.role, row.speaker, row.text): p for p, row in enumerate(stored)}
    newest = len(stored) - 1
    for k in range(len(earliest), 0, -1):
        turn = turns[k - 1]
        if _same(turn, stored[newest]):
            end: int | None = newest
        elif turn.role == Message.Role.ASSISTANT and k < len(turns):
            end = (latest_by_id.get(turn.external_id) if turn.external_id
                   else latest_by_text.get((turn.role, turn.speaker, turn.text)))
        else:
            continue
        if end is None or (k > 1 and earliest[k - 2] >= end):
            continue
        positions = [end]
        for before in reversed(turns[:k - 1]):
            positions.append(next(p for p in range(positions[-1] - 1, -1, -1) if _same(before, stored[p])))
        return positions[::-1]
    return []


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
