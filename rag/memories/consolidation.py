"""Consolidation: a window of a session's messages → seed 004's consolidation JSON → typed
memories, a mood update and an insight (seed 001: summary + novelty_score).

When: every MEMORY_CONSOLIDATION_EVERY new messages of a session (checked by each index job), at
the session's end (the beat, for sessions idle MEMORY_CONSOLIDATION_IDLE_SECONDS), and on the
beat schedule, which also retries failed and lost runs. One `MemoryConsolidation` row per run is
the job record; at most one waits per session. A run is a Celery task; in the embedded mode it
runs on a background thread (`memoryhub.deferred`), never inside the request that stored the
messages.

How a run goes, with no network call under a lock:
1. claim (short transaction): fix the window, the messages after the last one any run of the
   session has taken (done, under way or waiting for its retry), at most
   MEMORY_CONSOLIDATION_WINDOW of them, and mark the run running until a lease runs out;
2. prepare (no transaction): the LLM ("consolidator" agent; its JSON validated against
   CONSOLIDATION_SCHEMA with jsonschema, a malformed reply re-asked once) or the rules; embed the
   candidate memories and look for near-duplicates among those already held;
3. apply (one transaction under the user's write lock): reinforce duplicates, write new
   memories (low-confidence ones as review items), the insight and the mood, mark the run done.
A failure in 2 is recorded on the run (attempts, error, next attempt with a growing delay) and the
beat retries it; messages are never touched.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import Any

import jsonschema
from django.conf import settings
from django.db import transaction
from django.db.models import BigIntegerField, Max, OuterRef, Q, Subquery, Value
from django.db.models.functions import Coalesce
from django.utils import timezone
from pydantic import RootModel, model_validator

from memoryhub import deferred
from memoryhub.llm import get_llm, llm_enabled
from memoryhub.locks import advisory_lock
from memoryhub.models import Conversation, Message
from memoryhub.sensitive import redact
from memoryhub.services import archival_retry_delay, user_write_lock
from rag.memories import contradiction, mood, rules, services
from rag.memories.classify import calculate_importance, determine_memory_kind, dominant_emotion
from rag.memories.vocab import Category, canonical_emotion
from rag.models import Chunk, MemoryConsolidation, MemoryReview, user_namespace
from rag.services import ChunkDraft, chunks_delete, chunks_insert, chunks_prepare

logger = logging.getLogger(__name__)

_ITEM = {
    "oneOf": [
        {"type": "string", "minLength": 1, "maxLength": 1000},
        {"type": "object", "required": ["text"], "properties": {
            "text": {"type": "string", "minLength": 1, "maxLength": 1000},
            "about": {"enum": ["self", "user", "third_party"]},
            "importance": {"type": "number", "minimum": 0, "maximum": 1},
            "confidence": {"type": "number", "minimum": 0, "maximum": 1},
            "tags": {"type": "array", "items": {"type": "string", "maxLength": 64}, "maxItems": 16},
            # Its colouring (seed 004's `emotion`): a vocabulary name; another is read from the text instead.
            "emotion": {"type": "string", "maxLength": 32},
            # The transcript's line numbers the item comes from: its evidence and its date.
            "from": {"type": "array", "items": {"type": "integer", "minimum": 0}, "maxItems": 50},
        }},
    ],
}
# Seed 004's consolidation format; objects in the lists (with who it is about, importance,
# confidence, tags) are accepted besides plain strings, and `summary` feeds the insight.
CONSOLIDATION_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": ["facts_about_user", "past_events", "self_beliefs", "objectives", "emotions", "key_facts"],
    "properties": {
        **{key: {"type": "array", "items": _ITEM, "maxItems": rules.MAX_ITEMS}
           for key in ("facts_about_user", "past_events", "self_beliefs", "objectives")},
        "emotions": {"type": "array", "maxItems": rules.MAX_EMOTIONS, "items": {
            "type": "object", "required": ["name", "score"],
            "properties": {"name": {"type": "string", "minLength": 1, "maxLength": 32},
                           "score": {"type": "number", "minimum": -1, "maximum": 1},
                           # Whom it is about (rag.memories.mood): what moves the character's affinity and trust.
                           "target": {"enum": ["character", "user", "third_party"]}}}},
        "key_facts": {"type": "array", "maxItems": rules.MAX_ITEMS, "items": {
            "type": "object", "required": ["text", "importance"],
            "properties": {**_ITEM["oneOf"][1]["properties"], "importance": {"type": "number", "minimum": 0,
                                                                             "maximum": 1}}}},
        "summary": {"type": "string", "maxLength": rules.SUMMARY_MAX_CHARS},
    },
}
_VALIDATOR = jsonschema.Draft202012Validator(CONSOLIDATION_SCHEMA)


def validate_consolidation(value: Any) -> list[str]:
    """Every schema violation, as short messages with their JSON path (empty when valid)."""
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {_schema_error_text(e)}"
            for e in sorted(_VALIDATOR.iter_errors(value), key=lambda e: list(e.absolute_path))][:10]


def _schema_error_text(error: jsonschema.ValidationError) -> str:
    """jsonschema's message spells out the instance first ("[{'text': …}, …] is too long"): for a long list
    the reason came at character 21,700 of an error stored cut to 2,000. The rule broken, then the size."""
    if len(error.message) <= 200:
        return error.message
    size = f" (it has {len(error.instance)})" if isinstance(error.instance, (list, str, dict)) else ""
    return f"breaks {error.validator} {error.validator_value!r}{size}"


class ConsolidationReply(RootModel[dict[str, Any]]):
    """Lets `LLMClient.chat_json` validate with jsonschema: its errors are shown back to the model."""

    @model_validator(mode="before")
    @classmethod
    def _schema(cls, value: Any) -> Any:
        errors = validate_consolidation(value)
        if errors:
            raise ValueError("; ".join(errors))
        return value


SYSTEM_PROMPT = """You consolidate the long-term memory of the character {character}.
The transcript labels every line with who said it: USER lines are the user's words, CHARACTER lines
are {character}'s. Never attribute the character's words to the user or the reverse.

Reply with JSON only, exactly these keys:
{{"facts_about_user": [...], "past_events": [...], "self_beliefs": [...], "objectives": [...],
  "emotions": [{{"name": "joy", "score": 0.8, "target": "user"}}],
  "key_facts": [{{"text": "...", "importance": 0.9, "tags": ["music"]}}],
  "summary": "two sentences on what this conversation added"}}
facts_about_user: what the user said about themselves; past_events: what happened;
self_beliefs: what {character} believes about itself; objectives: goals {character} set;
emotions: from {emotions}, score -1 (very negative) .. 1 (very positive), each with "target": whom it is
about: "character" ({character} itself: anger at it, thanks to it), "user" (the user's own life, shared with
{character}) or "third_party" (someone else: a boss, a landlord, a friend); leave it out when unclear;
key_facts: anything important for future conversations, importance 0..1.
List items may be strings or objects {{"text": ..., "about": "self"|"user"|"third_party",
"importance": 0..1, "confidence": 0..1, "tags": [...], "emotion": one of the emotions above when the item
carries one, "from": [line numbers it comes from]}}. Write each item as a full sentence that names who it is
about; a plan or an upcoming event goes under facts_about_user (the user's) or key_facts (someone else's),
with the date it means written out. Use empty lists when there is nothing."""


def _label(message: Message, character: str) -> str:
    speaker = _said_by(message)
    if message.role == Message.Role.ASSISTANT:
        return f"CHARACTER ({speaker or character})"
    return f"USER ({speaker})" if speaker else "USER"


# What the consolidators read is masked whatever SENSITIVE_POLICY is: under `keep` the messages
# hold their numbers raw, and what is made of them (memories, review items, the insight, the run's
# output) must not, nor may the prompt sent to the LLM.
def _said(message: Message) -> str:
    return redact(message.text, where="consolidation")


def _said_by(message: Message) -> str:
    return redact(message.speaker, where="consolidation") if message.speaker else ""


def consolidate_llm(messages: Sequence[Message], character: str) -> dict[str, Any]:
    from rag.memories.vocab import EMOTIONS

    client = get_llm()
    assert client is not None
    transcript = "\n".join(f"[{i}] {_label(m, character)}: {_said(m)}" for i, m in enumerate(_lines(messages)))
    reply, _ = client.chat_json(
        "consolidator",
        [{"role": "system", "content": SYSTEM_PROMPT.format(character=character, emotions=", ".join(EMOTIONS))},
         {"role": "user", "content": transcript}],
        ConsolidationReply, parse_retries=1,
    )
    return reply.root


def _lines(messages: Sequence[Message]) -> list[Message]:
    """The messages a consolidator sees, in the order it numbers them ("from")."""
    return [m for m in messages if m.role != Message.Role.SYSTEM]


def _turns(messages: Sequence[Message], character: str) -> list[rules.Turn]:
    return [rules.Turn(speaker=_said_by(m) or (character if m.role == Message.Role.ASSISTANT else "User"),
                       text=_said(m), is_character=m.role == Message.Role.ASSISTANT, said_at=m.created_at)
            for m in _lines(messages)]


# --- From the JSON to memories --------------------------------------------------------------
_LISTS = (
    ("facts_about_user", Category.FACTS_ABOUT_USER, "user"),
    ("past_events", Category.PAST_EVENTS, ""),
    ("self_beliefs", Category.SELF_BELIEFS, "self"),
    ("objectives", Category.OBJECTIVES, "self"),
    ("key_facts", Category.KEY_FACTS, ""),
)
LLM_DEFAULT_CONFIDENCE = 0.8
_HIGHLIGHT_CATEGORIES = frozenset(category.value for key, category, _ in _LISTS if key in rules.HIGHLIGHTS)


def _provenance(item: dict[str, Any], lines: Sequence[Message]) -> tuple[datetime | None, dict[str, Any]]:
    """When an item happened and which messages it comes from: the lines it names ("from"), else
    the whole window. A memory dates from what was said, never from when it was consolidated
    (its "yesterday" means the day before the conversation, and date search relies on it)."""
    named = [lines[i] for i in item.get("from", []) if 0 <= i < len(lines)]
    sources = named or list(lines)
    if not sources:
        return None, {}
    meta: dict[str, Any] = {"source_message_ids": [m.pk for m in named]} if named else {}
    external = [m.external_id for m in named if m.external_id]
    if external:
        meta["source_external_ids"] = external
    return max(m.created_at for m in sources), meta


def memory_candidates(output: dict[str, Any], *, character: str, history_uid: str, session_id: str,
                      default_confidence: float, lines: Sequence[Message] = ()
                      ) -> list[tuple[services.MemoryInput, float]]:
    """Typed memory inputs with their confidence, from a validated consolidation JSON. `lines`: the
    messages in the order the consolidator numbered them."""
    out: list[tuple[services.MemoryInput, float]] = []
    for key, category, default_kind in _LISTS:
        for raw in output.get(key, []):
            item = {"text": raw} if isinstance(raw, str) else raw
            text = item["text"].strip()
            kind = item.get("about") or default_kind or determine_memory_kind(text, "user", character).value
            occurred_at, meta = _provenance(item, lines)
            # The item's own colouring; where it names none (or one outside the vocabulary), the one its text
            # shows ("…, мне грустно" is sadness): the run's emotions are the user's over the whole window, not
            # this memory's. An empty one (the rules found none) is none.
            named = item.get("emotion")
            emotion = (canonical_emotion(named) if named else None) or ("" if named == "" else dominant_emotion(text))
            # Masked here, before the duplicate search and the review queue see it: the consolidator
            # read masked turns, but a model may still write a number out.
            out.append((services.MemoryInput(
                text=text, kind=kind, category=category.value, history_uid=history_uid, session_id=session_id,
                importance=item.get("importance", calculate_importance(text)), tags=list(item.get("tags", [])),
                emotion=emotion, occurred_at=occurred_at, meta=meta,
            ).masked()[0], float(item.get("confidence", default_confidence))))
    emotions = emotion_scores(output)
    if emotions:
        dominant = max(emotions, key=lambda name: abs(emotions[name]))
        listing = ", ".join(f"{name} {score:+.1f}" for name, score in emotions.items())
        out.append((services.MemoryInput(
            text=f"The user's emotions in this conversation: {listing}.", kind="user",
            category=Category.EMOTIONS.value, history_uid=history_uid, session_id=session_id,
            importance=0.4, emotion=dominant, tags=["emotions"], occurred_at=_provenance({}, lines)[0]), 1.0))
    return out


def emotion_scores(output: dict[str, Any]) -> dict[str, float]:
    """Emotions of the vocabulary with their scores (the strongest, when one is listed per target); names
    outside it are dropped (a model's invented emotion cannot be filtered or aggregated)."""
    scores: dict[str, float] = {}
    for name, score, _ in emotion_targets(output):
        if name not in scores or abs(score) > abs(scores[name]):
            scores[name] = score
    return scores


def emotion_targets(output: dict[str, Any]) -> list[tuple[str, float, str | None]]:
    """Emotions of the vocabulary as (name, score, whom it is about, or None)."""
    out = []
    for entry in output.get("emotions", []):
        name = canonical_emotion(entry["name"])
        if name is not None:
            out.append((name, float(entry["score"]), entry.get("target")))
    return out


# --- Requests -------------------------------------------------------------------------------
def _consolidated_until(conversation: Conversation) -> int:
    """The last message a run of the session has taken: done, or fixed in the window of a run under
    way or waiting for its retry. A new run starts after it, so no message is consolidated twice
    (two runs over one window wrote every memory, insight and mood change twice)."""
    last = (MemoryConsolidation.objects.filter(conversation=conversation, last_message_id__isnull=False)
            .aggregate(last=Max("last_message_id"))["last"])
    return last or 0


def _conf_uid(messages: Sequence[Message]) -> str:
    for message in reversed(messages):
        if message.meta.get("conf_uid"):
            return str(message.meta["conf_uid"])[:128]
    return settings.MEMORY_DEFAULT_CONF_UID


def consolidation_request(conversation: Conversation, *, trigger: str) -> dict[str, Any]:
    """The session's waiting run, created (and enqueued after commit) if there is none.
    Runs in the caller's transaction; the session row's lock makes "at most one" hold."""
    Conversation.objects.select_for_update(of=("self",)).filter(pk=conversation.pk).first()
    waiting = MemoryConsolidation.objects.filter(
        conversation=conversation, status__in=[MemoryConsolidation.Status.PENDING, MemoryConsolidation.Status.FAILED]
    ).order_by("id").first()
    if waiting is not None:
        return {"consolidation": waiting.pk, "created": False}
    recent = list(Message.objects.filter(conversation=conversation).order_by("-id")[:20])
    run = MemoryConsolidation.objects.create(
        tenant_id=conversation.tenant_id, conversation=conversation, user_id=conversation.user_id,
        conf_uid=_conf_uid(recent[::-1]), trigger=trigger)
    transaction.on_commit(lambda: _enqueue(run.pk))
    return {"consolidation": run.pk, "created": True}


def consolidation_request_if_due(conversation: Conversation) -> dict[str, Any]:
    """Index-job hook: a run once MEMORY_CONSOLIDATION_EVERY messages wait unconsolidated. A session
    with fewer messages in all has nothing due (no query); otherwise one count."""
    if conversation.message_count < settings.MEMORY_CONSOLIDATION_EVERY:
        return {"waiting": conversation.message_count}
    taken = (MemoryConsolidation.objects.filter(conversation=OuterRef("conversation"), last_message_id__isnull=False)
             .order_by().values("conversation").annotate(last=Max("last_message_id")).values("last"))
    waiting = Message.objects.filter(conversation=conversation).filter(
        pk__gt=Coalesce(Subquery(taken), Value(0), output_field=BigIntegerField())).count()
    if waiting < settings.MEMORY_CONSOLIDATION_EVERY:
        return {"waiting": waiting}
    return {"waiting": waiting, **consolidation_request(conversation, trigger="size")}


def _enqueue(run_id: int) -> None:
    from rag.memories.tasks import memories_consolidate

    # In-process (no broker) the task would run right here, inside the index job of the client's
    # request; a background thread takes it instead where a beat will find the run if it is lost.
    if memories_consolidate.app.conf.task_always_eager and deferred.defer(memories_consolidate.apply, (run_id,)):
        return
    try:
        memories_consolidate.delay(run_id)
    except Exception as exc:  # a broker outage: the beat sweep enqueues it later
        logger.warning("consolidation %s not enqueued, the sweep will retry: %s", run_id, exc)


def consolidations_due(*, now: Any = None) -> dict[str, int]:
    """Beat: sessions idle MEMORY_CONSOLIDATION_IDLE_SECONDS with messages no run has taken get a
    run (the session's end); runs that are due (new, failed and waited their delay, or running
    past their lease: the worker died) are enqueued. A run still under way holds its runner's
    lock, so enqueueing it again runs nothing twice. Only sessions active within
    MEMORY_SESSION_TTL_DAYS are looked at, by either clock: a history imported today is
    consolidated although its messages were written months ago."""
    now = now or timezone.now()
    cutoff = now - timezone.timedelta(seconds=settings.MEMORY_CONSOLIDATION_IDLE_SECONDS)
    since = cutoff - timezone.timedelta(days=settings.MEMORY_SESSION_TTL_DAYS)
    last_done = (MemoryConsolidation.objects.filter(conversation=OuterRef("pk"), last_message_id__isnull=False)
                 .order_by("-last_message_id").values("last_message_id")[:1])
    requested = 0
    idle = (Conversation.objects.filter(last_message_at__lt=cutoff)
            .filter(Q(last_message_at__gte=since) | Q(last_received_at__gte=since))
            .exclude(last_received_at__gte=cutoff)
            .annotate(done_until=Subquery(last_done)).values_list("pk", "done_until"))
    for pk, done_until in idle.iterator():
        if not Message.objects.filter(conversation_id=pk, pk__gt=done_until or 0).exists():
            continue
        with transaction.atomic():
            conversation = Conversation.objects.get(pk=pk)
            requested += consolidation_request(conversation, trigger="idle")["created"]
    due = list(MemoryConsolidation.objects.filter(
        status__in=[MemoryConsolidation.Status.PENDING, MemoryConsolidation.Status.FAILED,
                    MemoryConsolidation.Status.RUNNING],
        next_attempt_at__lte=now).values_list("pk", flat=True)[:500])
    for run_id in due:
        _enqueue(run_id)
    return {"requested": requested, "enqueued": len(due)}


# --- A run ----------------------------------------------------------------------------------
def _run_lock(run_id: int) -> AbstractContextManager[bool]:
    """One runner per consolidation run across processes (`memoryhub.locks`): it guards no row, so
    holding it across the LLM call blocks nobody but a second runner of the same run."""
    return advisory_lock(f"consolidation:{run_id}", 3)


def _claim(run_id: int) -> tuple[MemoryConsolidation, list[Message]] | None:
    with transaction.atomic():
        run = (MemoryConsolidation.objects.select_for_update(of=("self",)).select_related("conversation", "tenant")
               .filter(pk=run_id).first())
        if run is None or run.status == MemoryConsolidation.Status.DONE:
            return None
        if run.last_message_id is None:
            start = _consolidated_until(run.conversation)
            ids = list(Message.objects.filter(conversation=run.conversation, pk__gt=start)
                       .order_by("id").values_list("id", flat=True)[:settings.MEMORY_CONSOLIDATION_WINDOW])
            run.first_message_id, run.last_message_id = (ids[0], ids[-1]) if ids else (start, start)
        run.status = MemoryConsolidation.Status.RUNNING
        # A lease: still running after it, the run's worker died and the beat hands it out again.
        run.next_attempt_at = timezone.now() + timezone.timedelta(seconds=settings.ARCHIVAL_SWEEP_AFTER_SECONDS)
        run.save(update_fields=["first_message_id", "last_message_id", "status", "next_attempt_at"])
    messages = list(Message.objects.filter(conversation=run.conversation, pk__gte=run.first_message_id or 0,
                                           pk__lte=run.last_message_id or 0).order_by("created_at", "id"))
    return run, messages


def _character(messages: Sequence[Message], conf_uid: str) -> str:
    """The name the character's lines go under: its speaker name, else its conf_uid; a chat app
    that names no character gets "Assistant", not "default" (a memory "default: That was thoughtful
    of him!" read to a model as something a person called Default said)."""
    for message in messages:
        if message.role == Message.Role.ASSISTANT and message.speaker:
            return _said_by(message)
    return "Assistant" if conf_uid == settings.MEMORY_DEFAULT_CONF_UID else conf_uid


def consolidation_run(*, run_id: int) -> MemoryConsolidation | None:
    with _run_lock(run_id) as acquired:
        if not acquired:
            return None
        claimed = _claim(run_id)
        if claimed is None:
            return MemoryConsolidation.objects.filter(pk=run_id).first()
        run, messages = claimed
        try:
            prepared = _prepare(run, messages)
        except Exception as exc:
            # A malformed reply (after its re-ask), an outage or a bug: recorded on the run and
            # retried by the beat with a growing delay; the messages stay as they are.
            _record_failure(run_id, exc)
            return MemoryConsolidation.objects.filter(pk=run_id).first()
        return _apply(run, prepared)


def _prepare(run: MemoryConsolidation, messages: Sequence[Message]) -> dict[str, Any]:
    """Everything a run writes, computed outside any transaction: the consolidator's output (LLM or
    rules), the near-duplicates, and the new memories' and the insight's chunks with their vectors
    (the embedder may be a remote call, so never under the user's write lock)."""
    started = time.perf_counter()
    character = _character(messages, run.conf_uid)
    history = run.conversation.session_id
    if not messages:
        return {"output": {}, "consolidator": "", "candidates": [], "reinforce": [], "create": None,
                "review": [], "insight": None, "novelty": 0.0, "character": character, "seconds": 0.0,
                "messages": 0}
    if llm_enabled():
        output, consolidator, confidence = consolidate_llm(messages, character), "llm", LLM_DEFAULT_CONFIDENCE
    else:
        output, consolidator, confidence = rules.consolidate_rules(_turns(messages, character), character), "rules", 0.7
        errors = validate_consolidation(output)
        if errors:  # the rules must honour the same contract as the model
            raise ValueError(f"rule consolidator produced invalid JSON: {errors}")
    candidates = memory_candidates(output, character=character, history_uid=history, session_id=history,
                                   default_confidence=confidence, lines=_lines(messages))
    duplicates, vectors = services.find_duplicates(tenant_id=run.tenant_id, user_id=run.user_id,
                                                   conf_uid=run.conf_uid, texts=[c[0].text for c in candidates])
    # Held memories a candidate contradicts ("I don't like rock music anymore" after "I love rock music"):
    # read here, outside the transaction, and decided by rules (no model call).
    items = [item for item, _ in candidates]
    subjects = contradiction.subject_terms([run.user_id, run.conf_uid, character])
    held = contradiction.held_memories(tenant_id=run.tenant_id, user_id=run.user_id, conf_uid=run.conf_uid,
                                       items=items, subjects=subjects) if candidates else []
    near = dict(Chunk.objects.filter(pk__in=[d.chunk_id for d in duplicates if d is not None])
                .values_list("id", "text")) if any(duplicates) else {}
    reinforce, create, review = [], [], []
    repeated: set[int] = set()  # the candidates that repeat a held memory
    for i, ((item, item_confidence), duplicate) in enumerate(zip(candidates, duplicates, strict=True)):
        # A memory that says the opposite of its nearest neighbour is no repeat of it, however alike the words.
        if duplicate is not None and (
                duplicate.chunk_id in contradiction.contradicted(item, held, subjects)
                or not contradiction.repeats(item.text, near.get(duplicate.chunk_id, ""), subjects)):
            duplicate = None
        if duplicate is not None:
            duplicate.importance = item.importance
            reinforce.append(duplicate)
            repeated.add(i)
        elif item_confidence < settings.MEMORY_REVIEW_CONFIDENCE:
            review.append((item, item_confidence))
        else:
            create.append(i)
    superseding = contradiction.plan(items, create, held, subjects)
    create = [i for i in create if i not in superseding.dropped]
    # Novelty (seed 001's insight): the share of this window's memories not already held.
    novelty = round(sum(d is None for d in duplicates) / len(duplicates), 3) if duplicates else 0.0
    # A memory's chunk vector is its text's: the duplicate search's vectors serve again.
    prepared_memories = services.memories_prepare(
        user_id=run.user_id, conf_uid=run.conf_uid, items=[candidates[i][0] for i in create],
        embeddings=vectors[create]) if create else None
    insight = None
    fresh = [item for i, (item, _) in enumerate(candidates) if i not in repeated]
    summarised = [item for item, _ in candidates]
    summary = (output.get("summary") or "").strip()
    if consolidator == "rules":
        # The rules' summary is the window's first highlights, held ones too: a window that told again what was
        # held made an insight saying it again, beside the one it first made. The new ones alone; none, none.
        summarised = [item for item in fresh if item.category in _HIGHLIGHT_CATEGORIES]
        summary = rules.summary_of([item.text for item in summarised])
    elif fresh and not summary:
        summary = "; ".join(item.text for item in fresh[:3])
    summary = redact(summary, where="memory")
    if fresh and summary:
        # The turns it sums up, so that a context showing them all does not say it again (rag.context).
        sources = sorted({pk for item in summarised for pk in item.meta.get("source_message_ids", ())})
        # Dated when its window was said, not when it was consolidated: a context shows it under that day.
        said = max((m.created_at for m in messages if m.created_at), default=None)
        insight = chunks_prepare([ChunkDraft(
            type=Chunk.Type.INSIGHT, text=summary, source_id=f"consolidation:{run.pk}", user_id=run.user_id,
            session_id=history, conf_uid=run.conf_uid, history_uid=history, created_ts=said,
            meta={"summary": summary, "novelty_score": novelty, "consolidation_id": run.pk, "conf_uid": run.conf_uid,
                  **({"source_message_ids": sources} if sources else {})},
        )])
    return {"output": output, "consolidator": consolidator, "candidates": candidates, "reinforce": reinforce,
            "create": prepared_memories, "review": review, "insight": insight, "novelty": novelty,
            "supersede": _supersessions(candidates, create, superseding),
            "character": character, "seconds": time.perf_counter() - started, "messages": len(messages)}


def _supersessions(candidates: Sequence[tuple[services.MemoryInput, float]], create: Sequence[int],
                   superseding: contradiction.Plan) -> dict[str, Any]:
    """What `_apply` does about contradictions, by position in the prepared memories: the held memories each
    supersedes (read again under the lock, as they may be gone), the records of the run's own older
    candidates it supersedes, and the candidates not written because a newer held memory says otherwise."""
    position = {i: n for n, i in enumerate(create)}
    held = {position[i]: pairs for i, pairs in superseding.held.items() if i in position}
    absorbed = {position[i]: [(candidates[j][0], reason) for j, reason in pairs]
                for i, pairs in superseding.candidates.items() if i in position}
    outdated = [contradiction.record(
        memory_uid=None, text=candidates[i][0].text, kind=candidates[i][0].kind, category=candidates[i][0].category,
        importance=candidates[i][0].importance if candidates[i][0].importance is not None else 0.5,
        said_at=candidates[i][0].occurred_at, reason=reason, by_uid=h.memory_uid, by_text=h.text,
    ) for i, (h, reason) in superseding.outdated.items()]
    return {"held": held, "absorbed": absorbed, "outdated": outdated}


def _apply(run: MemoryConsolidation, prepared: dict[str, Any]) -> MemoryConsolidation | None:
    """One short transaction under the user's write lock: database work only."""
    now = timezone.now()
    with transaction.atomic():
        user_write_lock(tenant_id=run.tenant_id, user_id=run.user_id)
        locked = MemoryConsolidation.objects.select_for_update(of=("self",)).filter(pk=run.pk).first()
        if locked is None or locked.status == MemoryConsolidation.Status.DONE:
            return locked  # erased meanwhile, or another runner finished it
        reinforced = services.memories_reinforce(tenant=run.tenant, reinforcements=prepared["reinforce"], now=now)
        superseded = _supersede_records(run, prepared)
        created = services.memories_insert(tenant=run.tenant, user_id=run.user_id, conf_uid=run.conf_uid,
                                           prepared=prepared["create"]) if prepared["create"] else []
        # In the same transaction as the memories that replace them: a search sees the old or the new, not both.
        old = [entry["chunk_id"] for entry in superseded]
        if old:
            chunks_delete(tenant=run.tenant, chunks=Chunk.objects.filter(pk__in=old, type=Chunk.Type.MEMORY))
        review = prepared["review"]
        MemoryReview.objects.bulk_create([MemoryReview(
            tenant=run.tenant, user_id=run.user_id, conf_uid=run.conf_uid, history_uid=item.history_uid,
            consolidation=locked, text=item.text, kind=item.kind, category=item.category,
            importance=item.importance if item.importance is not None else 0.5, confidence=confidence,
            tags=item.tags, emotion=item.emotion, context_window=item.context_window,
            # When it was said: approved later, the memory dates from then, not from the approval.
            occurred_at=item.occurred_at,
        ) for item, confidence in review])
        emotions = emotion_scores(prepared["output"])
        if prepared["candidates"] or emotions:
            services.character_ensure(tenant=run.tenant, conf_uid=run.conf_uid)
            mood.mood_update(tenant=run.tenant, user_id=run.user_id, conf_uid=run.conf_uid, emotions=emotions,
                             toward=mood.relationship_emotions(emotion_targets(prepared["output"])), now=now)
        insight = None
        if prepared["insight"] is not None:
            [chunk] = chunks_insert(tenant=run.tenant, namespace=user_namespace(run.user_id),
                                    prepared=prepared["insight"])
            insight = chunk.pk
        locked.status, locked.finished_at, locked.error = MemoryConsolidation.Status.DONE, now, ""
        locked.consolidator, locked.novelty_score = prepared["consolidator"], prepared["novelty"]
        locked.output = prepared["output"]
        locked.result = {"created": len(created), "reinforced": reinforced, "review": len(review),
                         "insight_chunk": insight, "messages": prepared["messages"],
                         "prepare_seconds": round(prepared["seconds"], 4)}
        # The audit of what a newer statement replaced: held memories, and candidates outdated from the start.
        replaced = [{k: entry[k] for k in ("memory_id", "text", "superseded_by", "reason")} for entry in superseded]
        replaced += [{k: entry[k] for k in ("memory_id", "text", "superseded_by", "reason")}
                     for entry in prepared.get("supersede", {}).get("outdated", [])]
        if replaced:
            locked.result["superseded"] = replaced
        locked.save()
        # More messages than one window: the next run picks up where the last taken window stops.
        if Message.objects.filter(conversation_id=locked.conversation_id,
                                  pk__gt=_consolidated_until(locked.conversation)).count() \
                >= settings.MEMORY_CONSOLIDATION_EVERY:
            consolidation_request(locked.conversation, trigger="size")
    logger.info("consolidation %s done: %s", locked.pk, locked.result)
    return locked


def _supersede_records(run: MemoryConsolidation, prepared: dict[str, Any]) -> list[dict[str, Any]]:
    """Under the user's write lock: each memory about to be written takes the records of those it supersedes
    into its `meta.supersedes` (the held ones read again here, since a forget or the forgetting beat may
    have taken them since `_prepare`). Returns the held ones' records, with their chunk ids, to delete."""
    plan = prepared.get("supersede") or {}
    drafts = prepared["create"].drafts if prepared["create"] else []
    wanted = {h.chunk_id for pairs in plan.get("held", {}).values() for h, _ in pairs}
    rows = {row["id"]: row for row in Chunk.objects.filter(
        tenant_id=run.tenant_id, pk__in=wanted, type=Chunk.Type.MEMORY).values(
        "id", "memory_uid", "text", "kind", "category", "importance", "created_ts", "meta")} if wanted else {}
    superseded = []
    for n, draft in enumerate(drafts):
        by_uid, entries = str(draft.memory_uid), []
        for h, reason in plan.get("held", {}).get(n, []):
            row = rows.get(h.chunk_id)
            if row is None:
                continue
            entry = contradiction.record(
                memory_uid=str(row["memory_uid"]), text=row["text"], kind=row["kind"], category=row["category"],
                importance=row["importance"], said_at=row["created_ts"], reason=reason, by_uid=by_uid,
                by_text=draft.text, meta=row["meta"])
            entries.append(entry)
            superseded.append({**entry, "chunk_id": row["id"]})
        for item, reason in plan.get("absorbed", {}).get(n, []):
            entries.append(contradiction.record(
                memory_uid=None, text=item.text, kind=item.kind, category=item.category,
                importance=item.importance if item.importance is not None else 0.5, said_at=item.occurred_at,
                reason=reason, by_uid=by_uid, by_text=draft.text, meta=item.meta))
        if entries:
            draft.meta = {**draft.meta, "supersedes": entries}
    return superseded


def _record_failure(run_id: int, error: Exception) -> None:
    with transaction.atomic():
        run = MemoryConsolidation.objects.select_for_update().filter(pk=run_id).first()
        if run is None:
            return
        run.attempts += 1
        run.error = f"{type(error).__name__}: {error}"[:2000]
        run.status = (MemoryConsolidation.Status.FAILED if run.attempts >= settings.ARCHIVAL_MAX_ATTEMPTS
                      else MemoryConsolidation.Status.PENDING)
        run.next_attempt_at = timezone.now() + archival_retry_delay(run.attempts)
        run.save(update_fields=["attempts", "error", "status", "next_attempt_at"])
    logger.warning("consolidation %s failed (attempt %s): %s", run_id, run.attempts, run.error)
