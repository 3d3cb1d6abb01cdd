"""Kernel API: a session's messages (intake with outbox, short-term memory)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.utils import timezone
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub import selectors, services
from memoryhub.auth import request_tenant
from memoryhub.exceptions import NotFound
from memoryhub.models import ArchivalJob, Message
from memoryhub.urls_common import CLIENT_ID
from memoryhub.validation import (
    ClosedSerializerMixin,
    InstantField,
    JSONObjectField,
    StrictBooleanField,
    StrictCharField,
    StrictChoiceField,
    has_visible,
    query_data,
)

CLIENT_ID_REGEX = rf"^{CLIENT_ID}$"


class MessageOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Message
        fields = ["id", "external_id", "role", "speaker", "text", "created_at", "emotion", "meta"]


# Why a tool turn, or an assistant's tool call, is refused: what a client that sends its OpenAI-format
# history as it is needs to read to fix the batch (README: "leave them out of what you send").
TOOL_TURN_TEXT = "a tool turn or call is not the conversation's words: leave it out of the batch"


# Content parts whose words a memory keeps (chat completions' "text", the Responses API's two).
TEXT_PART_TYPES = ("text", "input_text", "output_text")


@extend_schema_field({
    "oneOf": [
        {"type": "string", "minLength": 1},
        {"type": "array", "minItems": 1, "items": {
            "type": "object", "required": ["type"],
            "properties": {"type": {"type": "string"}, "text": {"type": "string"}},
        }},
    ],
    "description": "Another name of `text` (the OpenAI chat format); give one of the two. A string, or a list "
                   "of content parts: the text parts are kept, joined by new lines; the others (images, audio, "
                   "files) are counted in the message's `meta.skipped_content_parts`. At least one text part. Not "
                   "null: an assistant's tool call (`tool_calls`), like a `tool` turn, is refused; leave them out.",
})
class ChatContentField(serializers.Field):
    """A turn's `content` as an OpenAI-format chat app stores it: a string, or a list of parts
    ([{"type": "text", "text": …}, {"type": "image_url", …}]) as SDKs send even for text alone."""

    # null is what OpenAI's format gives an assistant turn that only calls tools.
    default_error_messages = {"null": f"May not be null (OpenAI's format gives null to an assistant turn that "
                                      f"only calls tools, and {TOOL_TURN_TEXT})."}

    _whole = StrictCharField(trim_whitespace=True, allow_blank=False)
    _text = StrictCharField(trim_whitespace=False, allow_blank=True)

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, str):
            return {"text": self._whole.run_validation(data), "skipped": {}}
        if not isinstance(data, list) or not data:
            raise serializers.ValidationError("Must be a string or a non-empty list of content parts.")
        texts: list[str] = []
        skipped: dict[str, int] = {}
        for i, part in enumerate(data):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise serializers.ValidationError(f"Part {i} must be an object with a string `type`.")
            self._text.run_validation(part["type"])  # no NUL or lone surrogate: it may be stored in meta
            if "text" in part and not isinstance(part["text"], str):
                raise serializers.ValidationError(f"Part {i}: `text` must be a string.")
            if part["type"] in TEXT_PART_TYPES:
                if not isinstance(part.get("text"), str):
                    raise serializers.ValidationError(f"Part {i} (type {part['type']}) needs a string `text`.")
                texts.append(self._text.run_validation(part["text"]))
            else:
                # A few kinds by name, the rest together: meta stays small whatever a client sends.
                kind = part["type"][:64] if part["type"][:64] in skipped or len(skipped) < 8 else "other"
                skipped[kind] = skipped.get(kind, 0) + 1
        text = "\n".join(t.strip() for t in texts if t.strip())
        if not text:
            raise serializers.ValidationError("No text part: a message is remembered by its words.")
        return {"text": text, "skipped": skipped}

    def to_representation(self, value: Any) -> Any:
        return value


class MessageRoleField(StrictChoiceField):
    """user, assistant or system; OpenAI's newer name of the system turn, `developer`, is taken as one
    (stored, never indexed as memory). Tool results and calls are not a conversation's words: a 400."""

    default_error_messages = {
        # The batch's serializer is open (not a ClosedSerializerMixin), which adds the allowed values elsewhere.
        "invalid_choice": '"{input}" is not a valid choice; allowed: user, assistant, system, developer '
                          f"({TOOL_TURN_TEXT}).",
    }

    def to_internal_value(self, data: Any) -> str:
        role = super().to_internal_value(data)
        return Message.Role.SYSTEM if role == "developer" else role


class MessageInputSerializer(serializers.Serializer):
    # Open (OpenAI's turn format carries keys of its own), so not a ClosedSerializerMixin: its wording here.
    default_error_messages = {"invalid": "Must be a JSON object, not {datatype}."}

    role = MessageRoleField(choices=[*Message.Role.choices, ("developer", "Developer")],
                            help_text="user, assistant or system (`developer` is taken as system).")
    text = StrictCharField(trim_whitespace=True, allow_blank=False, required=False,
                           help_text="The message. Required, unless given as `content`.")
    # A chat app keeps its turns in the OpenAI format ({"role", "content"}) and can send them as they are.
    content = ChatContentField(required=False, write_only=True)
    created_at = InstantField(required=False, allow_null=True, zero_is_unknown=True,
                              help_text="When it was said: ISO 8601 (without an offset, UTC) or Unix seconds (as a "
                                        "typed memory's `timestamp`), from 1970 to 3000 and not in the future. "
                                        "Absent, null or 0 (or 1970-01-01T00:00:00Z): when it is received.")
    external_id = StrictCharField(required=False, max_length=128, allow_blank=False)
    speaker = StrictCharField(required=False, max_length=128, allow_blank=True, default="",
                              help_text="Who said it, where more than the user and the assistant talk (a group "
                                        "chat, a game session): a search that names them favours their turns.")
    # OpenAI's participant name ({"role": "user", "name": "Borin", "content": …}): a chat app sends its turns as
    # they are, and the name is who said it.
    name = StrictCharField(required=False, write_only=True, max_length=128, allow_blank=True,
                           help_text="OpenAI's participant name, taken as `speaker` (give one of the two).")
    emotion = StrictCharField(required=False, max_length=32, allow_blank=True, default="")
    meta = JSONObjectField(required=False, default=dict,
                           help_text="Kept with the turn. `conf_uid`: the character these turns are with, whose typed "
                                     "memories consolidation files them under (`/characters/{conf_uid}/…`); it "
                                     f"matches {CLIENT_ID}.")

    def to_internal_value(self, data: Any) -> Any:
        # An assistant's tool call ({"role": "assistant", "content": null, "tool_calls": [...]}) said "This field
        # may not be null." (or, without content, that text is required) where a tool turn said why.
        if (isinstance(data, Mapping) and not data.get("content") and not data.get("text")
                and (data.get("tool_calls") or data.get("function_call"))):
            raise serializers.ValidationError({"content": [f"An assistant's tool call (`tool_calls` without "
                                                           f"content) is refused: {TOOL_TURN_TEXT}."]})
        return super().to_internal_value(data)

    def validate_meta(self, value: dict[str, Any]) -> dict[str, Any]:
        # Consolidation files memories under it: "bad uid!" or 123 made memories no route could list.
        conf_uid = value.get("conf_uid")
        if conf_uid is not None and not (isinstance(conf_uid, str) and re.fullmatch(CLIENT_ID, conf_uid)):
            raise serializers.ValidationError(
                f"conf_uid (the character, as in /characters/{{conf_uid}}/memories) must be a string matching "
                f"{CLIENT_ID}; got {str(conf_uid)[:80]!r}.")
        return value

    def validate_created_at(self, value: datetime | None) -> datetime | None:
        tolerance = timedelta(seconds=settings.MESSAGE_FUTURE_TOLERANCE_SECONDS)
        if value is not None and value > timezone.now() + tolerance:
            raise serializers.ValidationError(
                f"Must not be more than {settings.MESSAGE_FUTURE_TOLERANCE_SECONDS} s in the future.")
        return value

    def validate_text(self, value: str) -> str:
        limit = settings.MESSAGE_MAX_CHARS
        if len(value) > limit:
            raise serializers.ValidationError(f"Ensure this field has no more than {limit} characters.")
        # A zero-width space alone passed as text, was indexed, and ranked in unrelated searches.
        if not has_visible(value):
            raise serializers.ValidationError("This field holds no visible character.")
        return value

    def validate_content(self, value: dict[str, Any]) -> dict[str, Any]:
        self.validate_text(value["text"])
        return value

    def validate(self, attrs: dict) -> dict:
        name = attrs.pop("name", "")
        if name and attrs.get("speaker") and attrs["speaker"] != name:
            raise serializers.ValidationError({"name": ["Give speaker or name, not both."]})
        if name:
            attrs["speaker"] = name
        content = attrs.pop("content", None)
        if content is not None and "text" in attrs:
            raise serializers.ValidationError({"content": ["Give text or content, not both."]})
        if content is not None:
            attrs["text"] = content["text"]
            if content["skipped"]:
                attrs["meta"] = {**attrs.get("meta", {}), "skipped_content_parts": content["skipped"]}
        if "text" not in attrs:
            raise serializers.ValidationError({"text": ["This field is required (or `content`, as OpenAI's chat "
                                                        "format gives it)."]})
        return attrs


def message_batch_validate(value: list) -> list:
    """A batch's limits, wherever turns come in (the intake, POST /chat)."""
    limit = settings.MESSAGE_BATCH_MAX
    if len(value) > limit:
        raise serializers.ValidationError(f"A batch holds at most {limit} messages.")
    ids = [m["external_id"] for m in value if m.get("external_id")]
    if len(ids) != len(set(ids)):
        raise serializers.ValidationError("external_id values must be unique within a batch.")
    return value


class SessionMessagesApi(APIView):
    """`POST` appends a batch (202, archived in the background); `GET` returns the newest turns."""

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        messages = MessageInputSerializer(many=True, allow_empty=False)
        enable_auto_extract = StrictBooleanField(required=False, default=False)

        def validate_messages(self, value: list) -> list:
            return message_batch_validate(value)

    class AcceptedSerializer(serializers.Serializer):
        accepted = serializers.IntegerField(help_text="Messages stored by this call.")
        duplicates = serializers.IntegerField(help_text="Messages skipped: their external_id was already stored.")
        job_id = serializers.IntegerField(allow_null=True,
                                          help_text="The index job (searchable within a second), or null when "
                                                    "nothing was new.")
        extract_job_id = serializers.IntegerField(
            allow_null=True, help_text="The session's extraction job when this batch requested or triggered one.")
        message_ids = serializers.ListField(child=serializers.IntegerField())
        duplicate_ids = serializers.DictField(
            child=serializers.IntegerField(),
            help_text="The stored message of each skipped duplicate: its external_id → the message's id.")
        duplicates_changed = serializers.ListField(
            child=serializers.CharField(),
            help_text="external_ids re-sent with another text than the one stored: the stored text stays (a "
                      "retry never rewrites what was said); an edit is a new message.")
        masked = serializers.DictField(
            child=serializers.IntegerField(),
            help_text='Sensitive numbers masked in the stored messages, by kind, e.g. {"card_number": 1}; '
                      "empty under SENSITIVE_POLICY=keep.")

    class RecentSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        session_id = serializers.CharField()
        messages = MessageOutputSerializer(many=True)
        next_before_id = serializers.IntegerField(allow_null=True,
                                                  help_text="`before_id` of the next, older page; null on the oldest.")

    @extend_schema(
        operation_id="messages_append",
        request=InputSerializer,
        responses={202: AcceptedSerializer},
        examples=[
            OpenApiExample(
                "A turn pair",
                request_only=True,
                value={
                    "messages": [
                        {"role": "user", "text": "My name is Anna and I live in Berlin.", "external_id": "m-1"},
                        {"role": "assistant", "text": "Nice to meet you, Anna!", "external_id": "m-2"},
                    ],
                    "enable_auto_extract": True,
                },
            )
        ],
    )
    def post(self, request: Request, user_id: str, session_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = services.messages_append(
            tenant=request_tenant(request),
            user_id=user_id,
            session_id=session_id,
            messages=[services.IncomingMessage(**m) for m in data["messages"]],
            auto_extract=data["enable_auto_extract"],
        )
        body = {
            "accepted": len(result.created),
            "duplicates": result.duplicates,
            "job_id": result.job.pk if result.job else None,
            "extract_job_id": result.extract_job.pk if result.extract_job else None,
            "message_ids": [m.pk for m in result.created],
            "duplicate_ids": result.duplicate_ids,
            "duplicates_changed": result.duplicates_changed,
            "masked": dict(result.masked),
        }
        return Response(self.AcceptedSerializer(body).data, status=status.HTTP_202_ACCEPTED)

    class PageQuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=settings.SESSION_RECENT_MAX,
                                         default=settings.SESSION_RECENT_DEFAULT,
                                         help_text=f"Messages per page (default {settings.SESSION_RECENT_DEFAULT}, "
                                                   f"max {settings.SESSION_RECENT_MAX}).")
        before_id = serializers.IntegerField(min_value=1, max_value=2**63 - 1, required=False,
                                             help_text="The page older than this message (the previous page's "
                                                       "`next_before_id`); without it, the newest messages.")

    @extend_schema(
        operation_id="messages_recent",
        parameters=[PageQuerySerializer],
        responses={200: RecentSerializer},
        description="A session's messages a page at a time, oldest first within the page: the newest `limit`, "
                    "then, with `before_id`, the ones before them. `next_before_id` is null on the oldest page.",
    )
    def get(self, request: Request, user_id: str, session_id: str) -> Response:
        query = self.PageQuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        limit, before_id = query.validated_data["limit"], query.validated_data.get("before_id")
        conversation = selectors.conversation_get(
            tenant=request_tenant(request), user_id=user_id, session_id=session_id
        )
        if conversation is None:
            raise NotFound(f"User {user_id!r} has no session {session_id!r}.", field="session_id")
        if before_id is None:
            messages = selectors.session_recent_messages(conversation=conversation, limit=limit + 1)
        else:
            before = Message.objects.filter(conversation=conversation, pk=before_id).first()
            if before is None:
                # A well-formed id that names nothing here: not found, like a path id would be.
                raise NotFound(f"Session {session_id!r} has no message {before_id}.", field="before_id")
            messages = selectors.session_messages_before(conversation=conversation, before=before, limit=limit + 1)
        # One more than asked tells whether an older page exists, without a count.
        more = len(messages) > limit
        messages = messages[-limit:]
        body = {"user_id": user_id, "session_id": session_id, "messages": messages,
                "next_before_id": messages[0].pk if more and messages else None}
        return Response(self.RecentSerializer(body).data)


class UserSessionSerializer(serializers.Serializer):
    session_id = serializers.CharField()
    message_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    last_message_at = serializers.DateTimeField(allow_null=True)


class UserSessionsApi(APIView):
    """The sessions MemoryHub holds for one user, the most recently active first."""

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=500, default=50)
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)

    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        count = serializers.IntegerField(help_text="All the user's sessions.")
        sessions = UserSessionSerializer(many=True)

    @extend_schema(operation_id="sessions_list", parameters=[QuerySerializer], responses={200: OutputSerializer})
    def get(self, request: Request, user_id: str) -> Response:
        query = self.QuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        sessions, count = selectors.user_sessions(tenant=request_tenant(request), user_id=user_id,
                                                  limit=query.validated_data["limit"],
                                                  offset=query.validated_data["offset"])
        return Response(self.OutputSerializer({"user_id": user_id, "count": count, "sessions": sessions}).data)


class JobOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    kind = serializers.ChoiceField(choices=ArchivalJob.Kind.choices)
    trigger = serializers.ChoiceField(choices=ArchivalJob.Trigger.choices)
    status = serializers.ChoiceField(choices=ArchivalJob.Status.choices)
    attempts = serializers.IntegerField(help_text="Failed runs so far.")
    next_attempt_at = serializers.DateTimeField(help_text="When it runs (again).")
    message_count = serializers.SerializerMethodField(
        help_text="Messages it covers; an extraction's are fixed when it runs (every message of the session not "
                  "extracted yet).")
    waiting_for = serializers.SerializerMethodField(
        help_text="The user's earlier extraction that holds this one back (extractions run in the order the turns "
                  "were said: one running or waiting for its retry keeps the later ones pending); null when none.")
    overdue_s = serializers.SerializerMethodField(
        help_text="Seconds a pending job is past its time with nothing holding it back (`waiting_for` null): no "
                  "worker has taken it. With REDIS_URL a Celery worker must run; the sweeper sends it again "
                  "after ARCHIVAL_SWEEP_AFTER_SECONDS. Null when it is not late.")
    error = serializers.CharField(help_text="The last failure, empty when none.")
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)

    def get_message_count(self, job: ArchivalJob) -> int:
        return len(job.message_ids)

    def get_overdue_s(self, job: ArchivalJob) -> int | None:
        # A few seconds late is a worker busy with the job before it; later than that, nothing took it.
        late = (timezone.now() - job.next_attempt_at).total_seconds()
        if job.status != ArchivalJob.Status.PENDING or late < 10 or self.get_waiting_for(job) is not None:
            return None
        return int(late)

    def get_waiting_for(self, job: ArchivalJob) -> int | None:
        # Read once a job: overdue_s asks it too.
        cache = self.context.setdefault("waiting_for", {})
        if job.pk not in cache:
            cache[job.pk] = selectors.job_waiting_for(job)
        return cache[job.pk]


class SessionExtractApi(APIView):
    """Extract facts and people from a session now, instead of waiting for it to go idle."""

    @extend_schema(operation_id="session_extract", request=None, responses={202: JobOutputSerializer})
    def post(self, request: Request, user_id: str, session_id: str) -> Response:
        job = services.session_extract(tenant=request_tenant(request), user_id=user_id, session_id=session_id)
        job.refresh_from_db()
        return Response(JobOutputSerializer(job).data, status=status.HTTP_202_ACCEPTED)


class JobDetailApi(APIView):
    """An archival job's state: what a client polls after a 202."""

    @extend_schema(operation_id="job_get", responses={200: JobOutputSerializer})
    def get(self, request: Request, job_id: int) -> Response:
        job = ArchivalJob.objects.filter(tenant=request_tenant(request), pk=job_id).first()
        if job is None:
            raise NotFound(f"No job {job_id}.", field="job_id")
        return Response(JobOutputSerializer(job).data)


class UserEraseApi(APIView):
    """Erase everything MemoryHub holds for one end user of the calling tenant."""

    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        erased_at = serializers.DateTimeField()
        deleted = serializers.DictField(child=serializers.IntegerField(),
                                        help_text='Counts per kind, e.g. {"messages": 12, "chunks": 12, "facts": 3}.')

    @extend_schema(operation_id="user_erase", responses={200: OutputSerializer})
    def delete(self, request: Request, user_id: str) -> Response:
        receipt = services.user_erase(tenant=request_tenant(request), user_id=user_id)
        return Response(self.OutputSerializer(receipt).data)
