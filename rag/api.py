"""Retrieval API: search, context assembly, document ingest and its status."""

from __future__ import annotations

from pathlib import PurePath
from typing import Any

from django.conf import settings
from django.db.models.functions import Length
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub import services as kernel_services
from memoryhub.api import CLIENT_ID_REGEX, MessageInputSerializer, message_batch_validate
from memoryhub.auth import request_tenant
from memoryhub.exceptions import NotFound
from memoryhub.llm import get_llm
from memoryhub.text import NotUTF8, decode_utf8
from memoryhub.validation import (
    ClosedSerializerMixin,
    InstantField,
    JSONObjectField,
    JSONParser,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
    VisibleCharField,
)
from rag import chat, output, selectors, services
from rag import context as rag_context
from rag.memories.api import MemoryFiltersSerializer
from rag.models import Chunk, Document


class FiltersSerializer(MemoryFiltersSerializer):
    types = serializers.ListField(child=StrictChoiceField(choices=Chunk.Type.choices), required=False,
                                  default=list)
    tags = serializers.ListField(child=StrictCharField(max_length=64), required=False, default=list,
                                 help_text="Any of these tags.")
    session_id = StrictRegexField(CLIENT_ID_REGEX, required=False)
    created_after = InstantField(required=False, help_text="ISO 8601 or Unix seconds.")
    created_before = InstantField(required=False, help_text="ISO 8601 or Unix seconds.")

    def validate(self, attrs: dict) -> dict:
        after, before = attrs.get("created_after"), attrs.get("created_before")
        if after and before and after > before:
            raise serializers.ValidationError({"created_before": ["Must not be earlier than created_after."]})
        return attrs

    @staticmethod
    def to_filters(data: dict) -> selectors.SearchFilters:
        return selectors.SearchFilters(
            types=tuple(data["types"]), kinds=tuple(data["kinds"]), tags=tuple(data["tags"]),
            session_id=data.get("session_id"), created_after=data.get("created_after"),
            created_before=data.get("created_before"), categories=tuple(data["categories"]),
            emotions=tuple(data["emotions"]), conf_uids=tuple(data["conf_uids"]),
            history_uids=tuple(data["history_uids"]),
        )


class WeightsSerializer(ClosedSerializerMixin, serializers.Serializer):
    # Relative shares; the bound keeps weight * score finite (1e308 overflowed to an infinite score).
    bm25 = StrictFloatField(min_value=0, max_value=1000)
    vector = StrictFloatField(min_value=0, max_value=1000)


class SearchMemorySerializer(serializers.Serializer):
    id = serializers.UUIDField(source="memory_uid", help_text="The typed memory's id (`/characters/…/memories`).")
    category = serializers.CharField()
    conf_uid = serializers.CharField()
    history_uid = serializers.CharField()
    emotion = serializers.CharField()
    context_window = serializers.CharField()
    last_seen_at = serializers.DateTimeField(allow_null=True)


class ChangedSinceSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="The profile key the turn stated.")
    now = serializers.CharField(help_text="Its value now.")
    said_at = serializers.DateTimeField(allow_null=True, help_text="When the user said the value it has now.")


class SearchItemSerializer(serializers.Serializer):
    id = serializers.IntegerField(source="chunk.id")
    type = serializers.CharField(source="chunk.type")
    kind = serializers.CharField(source="chunk.kind")
    text = serializers.CharField(source="chunk.text")
    source_id = serializers.CharField(source="chunk.source_id")
    session_id = serializers.CharField(source="chunk.session_id")
    role = serializers.CharField(source="chunk.role")
    speaker = serializers.CharField(source="chunk.speaker")
    tokens = serializers.IntegerField(source="chunk.tokens")
    created_ts = serializers.DateTimeField(source="chunk.created_ts")
    importance = serializers.FloatField(source="chunk.importance")
    tags = serializers.ListField(source="chunk.tags", child=serializers.CharField())
    meta = serializers.DictField(source="chunk.meta")
    score = serializers.FloatField(help_text="Final score: fused score times the boosts.")
    fused = serializers.FloatField(help_text="Score from fusion (with the speaker factor, the soft match and the "
                                             "semantic reranker where the domain has them), before boosts.")
    components = serializers.DictField(child=serializers.FloatField(),
                                       help_text="Raw component scores: bm25, vector (cosine), and soft (0-1: how "
                                                 "much of the question's words the text answers in meaning, "
                                                 "scaled among the fused top) when it was computed; speaker: the "
                                                 "factor of a turn said by someone the question names (the user, "
                                                 "when it names them by their own name); assistant: the factor "
                                                 "of the assistant's own turns; semantic (0-1: the "
                                                 "reranker's cosine, scaled among the fused top) with "
                                                 "SEMANTIC_RERANK on and a query the English word vectors do not "
                                                 "serve.")
    ranks = serializers.DictField(child=serializers.IntegerField(), help_text="1-based rank per component.")
    boosts = serializers.DictField(child=serializers.FloatField())
    memory = serializers.SerializerMethodField(help_text="A typed memory's own fields; null for other chunks.")
    changed_since = ChangedSinceSerializer(
        allow_null=True, help_text="On a turn that stated a profile fact the user has changed since (\"I live in "
                                   "Boston\" after \"I moved to Seattle\"): the key, its value now and when it was "
                                   "said; the turn that says so follows it. Null otherwise.")
    corrects = serializers.IntegerField(
        allow_null=True, help_text="On the turn placed right after one with `changed_since`: that turn's id (it "
                                   "was not found by the query's words; its scores are the corrected turn's).")

    @extend_schema_field(SearchMemorySerializer(allow_null=True))
    def get_memory(self, item: selectors.SearchItem) -> dict | None:
        return SearchMemorySerializer(item.chunk).data if item.chunk["type"] == Chunk.Type.MEMORY else None


class SkippedStepSerializer(serializers.Serializer):
    step = serializers.ChoiceField(choices=["expand", "rerank", "vector"])
    reason = serializers.ChoiceField(choices=["llm_off", "llm_failed", "not_applicable", "embedder_unavailable",
                                              "reindex_needed"],
                                     help_text="llm_off: LLM_PROVIDER is off; llm_failed: the LLM did not answer "
                                               "usably; not_applicable: this mode has no step to apply it to; "
                                               "embedder_unavailable: the remote embedder was away, so a hybrid "
                                               "search answered by words alone; reindex_needed: a namespace "
                                               "searched holds vectors of another embedder (EMBEDDING_* changed), "
                                               "so it was searched by words alone (hybrid) or not at all "
                                               "(vector) until `manage.py reindex`.")


def _skipped_steps(data: dict, ran: list[str], found: int,
                   components: dict[str, str] | None = None) -> list[dict[str, str]]:
    """Steps the caller asked for explicitly that did not run: without this, `rerank: true` with no
    LLM looked exactly like a rerank that changed nothing. And a component that could not run (the
    vector side, with the embedder away)."""
    skipped = [{"step": step, "reason": reason} for step, reason in (components or {}).items()]
    for step in ("expand", "rerank"):
        if data[step] is not True or step in ran:
            continue
        if (step == "expand" and data["mode"] == "vector") or (step == "rerank" and not found):
            reason = "not_applicable"  # expansion adds BM25 terms; a rerank needs results
        elif get_llm() is None:
            reason = "llm_off"
        else:
            reason = "llm_failed"
        skipped.append({"step": step, "reason": reason})
    return skipped


class SearchApi(APIView):
    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        query = VisibleCharField(max_length=4000)
        user_id = StrictRegexField(CLIENT_ID_REGEX)
        k = StrictIntegerField(min_value=1, max_value=100, default=10)
        mode = StrictChoiceField(choices=["hybrid", "bm25", "vector"], default="hybrid")
        fusion = StrictChoiceField(choices=["rrf", "weighted"], required=False)
        rrf_k = StrictIntegerField(min_value=1, max_value=1000, required=False)
        weights = WeightsSerializer(required=False, help_text='Component weights, e.g. {"bm25": 0.4, "vector": 0.6}.')
        domain = StrictChoiceField(choices=["dialog", "document", "lore", "default"], default="dialog",
                                         help_text="Retrieval settings from config/knowledge.yaml.")
        include_tenant_documents = StrictBooleanField(default=True)
        expand = StrictBooleanField(required=False, allow_null=True, default=None,
                                          help_text="LLM query expansion (default: the domain's setting).")
        rerank = StrictBooleanField(required=False, allow_null=True, default=None,
                                          help_text="LLM rerank of the top 20 (default: the domain's setting).")
        filters = FiltersSerializer(required=False)

    class OutputSerializer(serializers.Serializer):
        query = serializers.CharField()
        mode = serializers.CharField()
        fusion = serializers.CharField()
        took_ms = serializers.FloatField()
        timings_ms = serializers.DictField(child=serializers.FloatField())
        candidates = serializers.DictField(child=serializers.IntegerField())
        llm_steps = serializers.ListField(child=serializers.CharField(), help_text="LLM steps that ran.")
        skipped_steps = SkippedStepSerializer(many=True, help_text="LLM steps asked for (expand or rerank: true) "
                                                                   "that did not run, and why; and the vector side "
                                                                   "when the embedder was away.")
        items = SearchItemSerializer(many=True)

    @extend_schema(
        operation_id="search",
        request=InputSerializer,
        responses={200: OutputSerializer},
        examples=[OpenApiExample("Hybrid search", request_only=True,
                                 value={"query": "when did Anna move to Berlin?", "user_id": "anna", "k": 5})],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        filters = FiltersSerializer.to_filters(data["filters"]) if "filters" in data else None
        result = selectors.chunks_search(
            tenant_id=request_tenant(request).pk, user_id=data["user_id"], query=data["query"], k=data["k"],
            mode=data["mode"], filters=filters, include_tenant_documents=data["include_tenant_documents"],
            domain=data["domain"], fusion=data.get("fusion"), rrf_k=data.get("rrf_k"), weights=data.get("weights"),
            expand=data["expand"], rerank=data["rerank"],
        )
        # Built as OutputSerializer would, without its per-item field copies (rag/output.py).
        result = selectors.with_current_values(result, tenant_id=request_tenant(request).pk,
                                               user_id=data["user_id"], k=data["k"])
        return Response(output.search_response(data["query"], result,
                                               _skipped_steps(data, result.llm_steps, len(result.items),
                                                              result.skipped)))


class ContextApi(APIView):
    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        user_id = StrictRegexField(CLIENT_ID_REGEX)
        query = VisibleCharField(max_length=4000)
        session_id = StrictRegexField(CLIENT_ID_REGEX, required=False)
        budget_tokens = StrictIntegerField(min_value=50, max_value=200_000, required=False)
        k = StrictIntegerField(min_value=1, max_value=100, required=False,
                               help_text="Results to search for the memories; by default one per 10 tokens of the "
                                         "budget, 20 to 100 (`results_per_tokens` in config/prompt_budgets.yaml).")
        memory_filters = MemoryFiltersSerializer(
            required=False, help_text="Which typed memories the context may show (the typed_memories block, "
                                      "and no other typed memory in the memories block).")

    class BlockSerializer(serializers.Serializer):
        name = serializers.CharField()
        tokens = serializers.IntegerField()
        text = serializers.CharField(source="render")
        items = serializers.ListField(child=serializers.DictField())
        cut = serializers.ListField(child=serializers.DictField())

    class OutputSerializer(serializers.Serializer):
        budget_tokens = serializers.IntegerField(source="budget")
        used_tokens = serializers.IntegerField(source="used")
        text = serializers.CharField(source="render", help_text="All blocks rendered, ready for a system prompt.")
        blocks = serializers.SerializerMethodField()

        def get_blocks(self, obj: rag_context.Context) -> list[dict]:
            return [
                {"name": b.name, "tokens": b.tokens, "text": b.render(),
                 "items": [{"ref": i.ref, "text": i.text, "tokens": i.tokens, **i.meta} for i in b.items],
                 "cut": b.cut}
                for b in obj.blocks
            ]

    @extend_schema(operation_id="context", request=InputSerializer, responses={200: OutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        ctx = rag_context.context_assemble(
            tenant_id=request_tenant(request).pk, user_id=data["user_id"], query=data["query"],
            session_id=data.get("session_id"), budget_tokens=data.get("budget_tokens"), k=data.get("k"),
            memory_filters=_memory_filters(data.get("memory_filters")),
        )
        return Response(self.OutputSerializer(ctx).data)


class ChatErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField()
    message = serializers.CharField()
    fields = serializers.DictField()
    message_ids = serializers.ListField(child=serializers.IntegerField(),
                                        help_text="This request's turns, stored: they are kept.")


class ChatErrorSerializer(serializers.Serializer):
    error = ChatErrorDetailSerializer()


class ChatContextBlockSerializer(serializers.Serializer):
    name = serializers.CharField()
    tokens = serializers.IntegerField()
    refs = serializers.ListField(child=serializers.CharField(),
                                 help_text="The rows shown: `fact:<id>`, `person:<id>`, `chunk:<id>`, `memory:<id>`, "
                                           "`message:<id>` (the recent turns, sent as chat messages).")
    cut = serializers.IntegerField(help_text="Items left out (POST /api/v1/context says which and why).")


class ChatContextSerializer(serializers.Serializer):
    budget_tokens = serializers.IntegerField()
    used_tokens = serializers.IntegerField()
    blocks = ChatContextBlockSerializer(many=True)


class ChatUsageSerializer(serializers.Serializer):
    prompt_tokens = serializers.IntegerField()
    completion_tokens = serializers.IntegerField()
    total_tokens = serializers.IntegerField()
    cost_usd = serializers.FloatField(help_text="By LLM_PRICES; 0 for a model not listed.")
    attempts = serializers.IntegerField(help_text="HTTP requests made, retries included.")


class ChatApi(APIView):
    """A chat turn: store the turns, answer the last one with the user's long-term memory."""

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        user_id = StrictRegexField(CLIENT_ID_REGEX)
        session_id = StrictRegexField(CLIENT_ID_REGEX)
        messages = MessageInputSerializer(
            many=True, allow_empty=False,
            help_text="This request's turns, as the messages intake takes them (`text` or OpenAI's `content`); the "
                      "last one is the user's, which is answered. Stored before the model is asked, but for those "
                      "the session holds: a resent history (the earlier turns and answers, as an OpenAI-style "
                      "client sends them every call) is recognised and stored once; a system turn is stored once "
                      "per session and instructs this answer only.")
        enable_auto_extract = StrictBooleanField(required=False, default=False,
                                                 help_text="Extract facts and people from the session now, as "
                                                           "the intake's flag.")
        budget_tokens = StrictIntegerField(min_value=50, max_value=200_000, required=False,
                                           help_text="The memory context's budget, as POST /api/v1/context's "
                                                     "(config/prompt_budgets.yaml's default).")
        model = StrictCharField(required=False, max_length=200,
                                help_text="One of the models LLM_MODELS configures; default: LLM_MODELS['chat'], "
                                          "else LLM_MODEL.")
        temperature = StrictFloatField(min_value=0, max_value=2, required=False,
                                       help_text="The answer's sampling temperature, 0-2 (OpenAI's range); default: "
                                                 "CHAT_TEMPERATURE.")
        max_tokens = StrictIntegerField(min_value=1, required=False,
                                        help_text="The answer's length cap in tokens, at most CHAT_MAX_ANSWER_TOKENS "
                                                  "(the operator's cap; its default, too).")

        def validate_max_tokens(self, value: int) -> int:
            if value > settings.CHAT_MAX_ANSWER_TOKENS:
                raise serializers.ValidationError(
                    f"At most {settings.CHAT_MAX_ANSWER_TOKENS} (CHAT_MAX_ANSWER_TOKENS, the operator's cap).")
            return value

        def validate_messages(self, value: list) -> list:
            message_batch_validate(value)
            if value[-1]["role"] != "user":
                raise serializers.ValidationError("The last turn must be the user's (role `user`): it is the one "
                                                  "answered.")
            key = value[-1].get("external_id") or ""
            if len(key) + len(chat.ANSWER_ID_SUFFIX) > 128:
                raise serializers.ValidationError(f"The last turn's external_id has at most "
                                                  f"{128 - len(chat.ANSWER_ID_SUFFIX)} characters: the answer's "
                                                  f"is it with {chat.ANSWER_ID_SUFFIX!r} added.")
            return value

        def validate_model(self, value: str) -> str:
            if value not in chat.chat_models():
                raise serializers.ValidationError(f"Not a configured model; allowed: {', '.join(chat.chat_models())}.")
            return value

    class OutputSerializer(serializers.Serializer):
        answer = serializers.CharField(help_text="The answer, as stored in the session.")
        message_ids = serializers.ListField(child=serializers.IntegerField(),
                                            help_text="This request's turns in the order sent (a turn the "
                                                      "session held: the stored one's id), then the answer.")
        answer_id = serializers.IntegerField()
        model = serializers.CharField()
        usage = ChatUsageSerializer()
        context = ChatContextSerializer(help_text="The memory the model was given.")
        replayed = serializers.BooleanField(help_text="A retry of a turn already answered (its last turn's "
                                                      "`external_id`): the stored answer, the model not asked.")
        masked = serializers.DictField(child=serializers.IntegerField())

    @extend_schema(
        operation_id="chat",
        request=InputSerializer,
        responses={200: OutputSerializer, 409: ChatErrorSerializer, 502: ChatErrorSerializer,
                   503: ChatErrorSerializer, 504: ChatErrorSerializer},
        description="Store the turns (as `POST …/sessions/{session_id}/messages`: idempotent on `external_id`, "
                    "kept whatever happens next), assemble the context for the last user turn with the session "
                    "(as `POST /api/v1/context`), ask the language model with that memory and the time now in its "
                    "system prompt and the recent turns as chat messages, store its answer as the session's "
                    "assistant turn.\n\n"
                    "A resent history is not stored again: the longest prefix of the request's user and assistant "
                    "turns that the session holds in order (same role, speaker and text, or `external_id`), ending "
                    "with the session's newest turn (the answer stored last time, resent) or with an answer that "
                    "a new turn follows (an edit), is recognised; from the first turn outside it on, every turn is "
                    "new (an edited turn is a new turn, and so is each turn after it). System turns instruct this "
                    "answer only and are stored once per session.\n\n"
                    "Errors keep the turns and store no answer; `error.message_ids` names the stored turns: 503 "
                    "`llm_unavailable` (no model configured, LLM_PROVIDER off, or the endpoint unreachable), 503 "
                    "`llm_rate_limited` (429 after retries; `Retry-After`), 504 `llm_timeout`, 502 `llm_error` (a "
                    "5xx after retries, a reply that is no completion, a refused request), 502 `llm_empty_answer`; "
                    "409 `erased` when the user was erased while the answer was written (nothing of it is kept).",
        examples=[
            OpenApiExample("A turn answered from long-term memory", request_only=True,
                           value={"user_id": "test_user", "session_id": "session2",
                                  "messages": [{"role": "user", "content": "我住在哪里？", "external_id": "t-1"}],
                                  "enable_auto_extract": True}),
            OpenApiExample("The answer", response_only=True, status_codes=["200"],
                           value={"answer": "你住在上海。", "message_ids": [41, 42], "answer_id": 42,
                                  "model": "gpt-4o-mini",
                                  "usage": {"prompt_tokens": 212, "completion_tokens": 9, "total_tokens": 221,
                                            "cost_usd": 0.0, "attempts": 1},
                                  "context": {"budget_tokens": 2000, "used_tokens": 35, "blocks": [
                                      {"name": "profile", "tokens": 24, "refs": ["fact:7", "fact:8"], "cut": 0},
                                      {"name": "recent_turns", "tokens": 11, "refs": ["message:41"], "cut": 0}]},
                                  "replayed": False, "masked": {}}),
        ],
    )
    def post(self, request: Request) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        reply = chat.chat_reply(
            tenant=request_tenant(request), user_id=data["user_id"], session_id=data["session_id"],
            messages=[kernel_services.IncomingMessage(**m) for m in data["messages"]],
            auto_extract=data["enable_auto_extract"], budget_tokens=data.get("budget_tokens"),
            model=data.get("model"), temperature=data.get("temperature"), max_tokens=data.get("max_tokens"),
        )
        return Response(self.OutputSerializer(reply).data)


def _memory_filters(data: dict | None) -> selectors.SearchFilters | None:
    if not data:
        return None
    return selectors.SearchFilters(kinds=tuple(data["kinds"]), categories=tuple(data["categories"]),
                                   emotions=tuple(data["emotions"]), conf_uids=tuple(data["conf_uids"]),
                                   history_uids=tuple(data["history_uids"]))


DOCUMENT_MAX_TAGS = 64


class DocumentInputSerializer(ClosedSerializerMixin, serializers.Serializer):
    text = StrictCharField(max_length=2_000_000)
    title = StrictCharField(max_length=300, required=False, default="")
    format = StrictChoiceField(choices=["markdown", "text"], default="markdown")
    external_id = StrictCharField(max_length=128, required=False, default="",
                              help_text="Re-sending a document with the same id replaces it.")
    # Bounded: every chunk of the document carries them, and every search item shows them (200,000
    # tags made a 3-item search answer 1.7 MB).
    tags = serializers.ListField(child=StrictCharField(max_length=64), required=False, default=list,
                                 max_length=DOCUMENT_MAX_TAGS, help_text=f"At most {DOCUMENT_MAX_TAGS}.")
    meta = JSONObjectField(required=False, default=dict)
    importance = StrictFloatField(min_value=0, max_value=1, default=0.5)


DOCUMENT_FILE_MAX_BYTES = 8_000_000  # 2,000,000 characters of UTF-8 fit in it whatever the script


class DocumentUploadSerializer(ClosedSerializerMixin, serializers.Serializer):
    """The same document as a file (`curl -F file=@faq.md`), as a client holding one would send it."""

    file = serializers.FileField(help_text="UTF-8 text: Markdown (.md, .markdown) or plain text (.txt); at most "
                                           f"{DOCUMENT_FILE_MAX_BYTES:,} bytes and 2,000,000 characters.")
    title = serializers.CharField(max_length=300, required=False, help_text="Default: the file's name without "
                                                                            "its extension.")
    format = serializers.ChoiceField(choices=["markdown", "text"], required=False,
                                     help_text="Default: `text` for a .txt file, `markdown` otherwise.")
    external_id = serializers.CharField(max_length=128, required=False,
                                        help_text="Re-sending a document with the same id replaces it.")
    tags = serializers.ListField(child=serializers.CharField(max_length=64), required=False, default=list,
                                 max_length=DOCUMENT_MAX_TAGS,
                                 help_text=f"Repeat the field; at most {DOCUMENT_MAX_TAGS}.")
    importance = serializers.FloatField(min_value=0, max_value=1, default=0.5)

    def document_data(self) -> dict[str, Any]:
        """The upload as the JSON body it stands for; the text is checked by the JSON serializer, its errors
        named `file`."""
        data = dict(self.validated_data)
        upload = data.pop("file")
        if upload.size > DOCUMENT_FILE_MAX_BYTES:
            raise serializers.ValidationError({"file": [f"At most {DOCUMENT_FILE_MAX_BYTES:,} bytes."]})
        try:
            text = decode_utf8(upload.read())
        except NotUTF8 as exc:
            raise serializers.ValidationError({"file": [f"Not UTF-8 text (line {exc.line})."]}) from exc
        name = PurePath(upload.name or "")
        data.setdefault("title", name.stem.strip()[:300])
        data.setdefault("format", "text" if name.suffix.lower() == ".txt" else "markdown")
        return {**data, "text": text}


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    namespace = serializers.CharField()
    status = serializers.ChoiceField(choices=Document.Status.choices)
    chunks = serializers.IntegerField(allow_null=True, help_text="Chunks indexed; null while a job indexes it.")
    status_url = serializers.CharField(help_text="Where to follow the indexing: GET it until `ready`.")
    masked = serializers.DictField(
        child=serializers.IntegerField(),
        help_text='Sensitive numbers masked in the stored document (text, title, tags, meta), by kind, e.g. '
                  '{"card_number": 1}; a document is masked under every SENSITIVE_POLICY.')


class DocumentStatusSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    namespace = serializers.CharField()
    user_id = serializers.CharField(help_text="Empty for a tenant-wide document.")
    title = serializers.CharField()
    external_id = serializers.CharField()
    chars = serializers.IntegerField(source="text_length")
    status = serializers.ChoiceField(
        choices=Document.Status.choices,
        help_text="`pending`: stored, its job not started; `indexing`: the job is chunking and embedding it "
                  "(`chunks_done` of `chunks_total`, searchable as far as done); `ready`: all chunks are "
                  "searchable; `failed`: the last attempt failed (`error`), it is retried with a growing delay.")
    chunks_total = serializers.IntegerField(help_text="0 until the job has chunked the document.")
    chunks_done = serializers.IntegerField()
    error = serializers.CharField()
    attempts = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class ErrorSerializer(serializers.Serializer):
    error = serializers.DictField(help_text='{"code": "invalid", "message": "...", "fields": {"text": ["..."]}}')


def _ingest(request: Request, user_id: str | None) -> Response:
    data = request.data
    if request.content_type.startswith("multipart/form-data"):
        if len(request.FILES.getlist("file")) > 1:  # the serializer would keep the last and drop the others
            raise serializers.ValidationError({"file": ["One file a request: a document is one file."]})
        upload = DocumentUploadSerializer(data=data)
        upload.is_valid(raise_exception=True)
        data = upload.document_data()
    serializer = DocumentInputSerializer(data=data)
    if not serializer.is_valid():
        errors = dict(serializer.errors)
        if data is not request.data and "text" in errors:
            errors["file"] = errors.pop("text")
        raise serializers.ValidationError(errors)
    document, chunks, masked = services.document_ingest(
        tenant=request_tenant(request), user_id=user_id, document=services.DocumentInput(**serializer.validated_data)
    )
    body = {"id": document.pk, "namespace": document.namespace, "status": document.status, "chunks": chunks,
            "status_url": reverse("document-detail", kwargs={"document_id": document.pk}), "masked": dict(masked)}
    code = status.HTTP_201_CREATED if chunks is not None else status.HTTP_202_ACCEPTED
    return Response(DocumentOutputSerializer(body).data, status=code)


_INGEST_DESCRIPTION = (
    "A document up to `DOCUMENT_SYNC_MAX_CHARS` characters (default 100,000) is indexed in the request: "
    "201, status `ready`, searchable at once. A longer one is stored and answered 202 with status `pending`; "
    "a background job chunks and embeds it, and `status_url` shows its progress. Re-sending a document "
    "with the same `external_id` replaces it (and stops the old one's job)."
)
_INGEST_RESPONSES = {201: DocumentOutputSerializer, 202: DocumentOutputSerializer, 400: ErrorSerializer}
_INGEST_REQUEST = {"application/json": DocumentInputSerializer, "multipart/form-data": DocumentUploadSerializer}
_INGEST_PARSERS = [JSONParser, MultiPartParser]
_INGEST_EXAMPLES = [OpenApiExample("Markdown", request_only=True, value={
    "title": "Returns policy", "text": "# Returns\nWithin 30 days with the receipt.", "external_id": "faq-returns"})]


class UserDocumentCreateApi(APIView):
    parser_classes = _INGEST_PARSERS

    @extend_schema(operation_id="user_document_create", request=_INGEST_REQUEST,
                   responses=_INGEST_RESPONSES, description=_INGEST_DESCRIPTION, examples=_INGEST_EXAMPLES)
    def post(self, request: Request, user_id: str) -> Response:
        return _ingest(request, user_id)


class TenantDocumentCreateApi(APIView):
    parser_classes = _INGEST_PARSERS

    @extend_schema(operation_id="tenant_document_create", request=_INGEST_REQUEST,
                   responses=_INGEST_RESPONSES, examples=_INGEST_EXAMPLES,
                   description="A document every user of the tenant can retrieve (FAQ, manuals, rules). "
                               + _INGEST_DESCRIPTION)
    def post(self, request: Request) -> Response:
        return _ingest(request, None)


class DocumentDeleteOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    deleted = serializers.DictField(child=serializers.IntegerField(),
                                    help_text='Counts per kind: {"documents": 1, "chunks": 12}.')


class DocumentDetailApi(APIView):
    """A document's indexing state: what a client polls after a 202; and its deletion."""

    @extend_schema(operation_id="document_get", responses={200: DocumentStatusSerializer, 404: ErrorSerializer})
    def get(self, request: Request, document_id: int) -> Response:
        document = (Document.objects.filter(tenant=request_tenant(request), pk=document_id)
                    .annotate(text_length=Length("text")).defer("text").first())
        if document is None:
            raise NotFound(f"No document {document_id}.", field="document_id")
        return Response(DocumentStatusSerializer(document).data)

    @extend_schema(
        operation_id="document_delete",
        responses={200: DocumentDeleteOutputSerializer, 404: ErrorSerializer},
        description="Delete the document and its chunks: its text is out of search and context at once. "
                    "A job still indexing it stops. Another tenant's document, or one already deleted or "
                    "replaced (same `external_id`), is a 404.",
    )
    def delete(self, request: Request, document_id: int) -> Response:
        deleted = services.document_delete(tenant=request_tenant(request), document_id=document_id)
        return Response(DocumentDeleteOutputSerializer({"id": document_id, "deleted": deleted}).data)
