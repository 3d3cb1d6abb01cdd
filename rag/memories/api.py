"""Typed memories API: `/api/v1/characters/{conf_uid}/memories` (write, list) and `/mood`."""

from __future__ import annotations

import time
from collections import Counter
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, extend_schema, extend_schema_serializer
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.api import CLIENT_ID_REGEX
from memoryhub.auth import request_actor, request_tenant
from memoryhub.exceptions import ApplicationError
from memoryhub.models import Tenant
from memoryhub.registry import ReviewApi
from memoryhub.validation import (
    ClosedSerializerMixin,
    InstantField,
    StrictCharField,
    StrictChoiceField,
    StrictFloatField,
    StrictRegexField,
    query_data,
)
from rag.memories import mood as mood_service
from rag.memories import selectors, services
from rag.memories.vocab import CATEGORIES, EMOTION_NAMES, EMOTIONS, KINDS, canonical_emotion
from rag.memory_models import MemoryReview
from rag.models import Chunk

EMOTION_IDS = list(EMOTIONS)


class NamedChoiceField(StrictChoiceField):
    """A choice field whose error names the allowed values, so a client can correct itself."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error_messages["invalid_choice"] = (
            '"{input}" is not a valid choice; allowed: ' + ", ".join(str(c) for c in self.choices) + "."
        )


class EmotionField(StrictChoiceField):
    """An emotion by id, by its Russian / Chinese name or by an everyday word for it ("sad", "开心";
    → the id). The names are the schema's enum, so a value the schema allows is one the API takes."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=EMOTION_NAMES, **kwargs)
        self.error_messages["invalid_choice"] = (
            f'"{{input}}" is not a valid emotion; allowed: {", ".join(EMOTION_IDS)}'
            ' (or their ru/zh names, or words such as "sad" or "happy").')

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        return (canonical_emotion(value) or "") if value else ""


class MemoryFiltersSerializer(ClosedSerializerMixin, serializers.Serializer):
    """Filters of typed memories, shared by search and context (`filters`)."""

    kinds = serializers.ListField(child=NamedChoiceField(choices=KINDS), required=False, default=list)
    categories = serializers.ListField(child=NamedChoiceField(choices=CATEGORIES), required=False, default=list)
    emotions = serializers.ListField(child=EmotionField(), required=False, default=list)
    conf_uids = serializers.ListField(child=StrictRegexField(CLIENT_ID_REGEX), required=False, default=list,
                                      help_text="Characters.")
    history_uids = serializers.ListField(child=StrictRegexField(CLIENT_ID_REGEX), required=False,
                                         default=list)


class MemoryOutputSerializer(serializers.Serializer):
    id = serializers.UUIDField(source="memory_uid", help_text="The memory's own unique id.")
    chunk_id = serializers.IntegerField(source="pk")
    user_id = serializers.CharField()
    conf_uid = serializers.CharField()
    history_uid = serializers.CharField()
    text = serializers.CharField()
    kind = serializers.CharField()
    category = serializers.CharField()
    importance = serializers.FloatField()
    timestamp = serializers.DateTimeField(source="created_ts")
    last_seen_at = serializers.DateTimeField(allow_null=True)
    tags = serializers.ListField(child=serializers.CharField())
    emotion = serializers.CharField()
    context_window = serializers.CharField()


class MemoryWrittenSerializer(MemoryOutputSerializer):
    masked = serializers.DictField(
        child=serializers.IntegerField(),
        help_text='Sensitive numbers masked in what this call wrote (text, tags, context window), by kind, e.g. '
                  '{"card_number": 1}. A typed memory is a chunk and is masked whatever SENSITIVE_POLICY is.')


def _written(memory: Any, masked: Counter[str]) -> dict[str, Any]:
    memory.masked = dict(masked)
    return MemoryWrittenSerializer(memory).data


class MemoryCreatedSerializer(MemoryWrittenSerializer):
    reinforced = serializers.BooleanField(
        help_text='True when `on_duplicate: "reinforce"` found this held memory nearly repeated (cosine at or above '
                  "MEMORY_DUPLICATE_SIMILARITY) and reinforced it instead of writing one (200): its importance "
                  "rose and `last_seen_at` is now; the fields shown are the held memory's. False for a new memory "
                  "(201).")
    similarity = serializers.FloatField(allow_null=True, help_text="The repeat's cosine to the held memory when "
                                                                   "`reinforced`, else null.")


class CharacterMemoriesApi(APIView):
    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        user_id = StrictRegexField(CLIENT_ID_REGEX, help_text="Whose memory (its namespace).")
        text = StrictCharField(max_length=4000)
        kind = NamedChoiceField(choices=KINDS)
        category = NamedChoiceField(choices=CATEGORIES, default="KeyFacts")
        history_uid = StrictRegexField(CLIENT_ID_REGEX, required=False, default="")
        importance = StrictFloatField(min_value=0.0, max_value=1.0, required=False, allow_null=True,
                                      default=None, help_text="0..1; computed from the text when absent.")
        timestamp = InstantField(zero_is_unknown=True, required=False, allow_null=True, default=None,
                                 help_text="When it happened: Unix seconds or an ISO 8601 string (as a "
                                           "message's `created_at`), from 1970 on and not in the future; absent, "
                                           "null or 0 (or 1970-01-01T00:00:00Z) = unknown (stored as now). "
                                           "Read back as ISO 8601.")
        tags = serializers.ListField(child=StrictCharField(max_length=64), required=False, default=list,
                                     max_length=32)
        emotion = EmotionField(required=False, default="", allow_blank=True)
        context_window = StrictCharField(max_length=200, required=False, default="", allow_blank=True)
        on_duplicate = NamedChoiceField(
            choices=["create", "reinforce"], default="create",
            help_text="`create` (default): always a new memory with its own id, the same text twice included. "
                      "`reinforce`: when the user's memories of this character hold a near-duplicate (cosine at or "
                      "above MEMORY_DUPLICATE_SIMILARITY, as consolidation judges repeats), that one is reinforced "
                      "(importance up by MEMORY_DUPLICATE_IMPORTANCE_STEP, or to this one's when higher; "
                      "`last_seen_at` now) and returned with 200 and `reinforced: true`; nothing new is written.")

        def validate_timestamp(self, value: datetime | None) -> datetime | None:
            # A memory dated in 2999 kept a recency of 1 for ever and showed "[2999-12-24]" in context.
            tolerance = settings.MESSAGE_FUTURE_TOLERANCE_SECONDS
            if value is not None and value.timestamp() > time.time() + tolerance:
                raise serializers.ValidationError(f"Must not be more than {tolerance} s in the future.")
            return value

    class ListParams(ClosedSerializerMixin, serializers.Serializer):
        user_id = StrictRegexField(CLIENT_ID_REGEX, required=False)
        kind = NamedChoiceField(choices=KINDS, required=False)
        category = NamedChoiceField(choices=CATEGORIES, required=False)
        emotion = EmotionField(required=False)
        history_uid = StrictRegexField(CLIENT_ID_REGEX, required=False)
        tag = StrictCharField(max_length=64, required=False)
        limit = serializers.IntegerField(min_value=1, max_value=500, default=100)
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)

    @extend_schema(
        operation_id="character_memory_create", request=InputSerializer,
        responses={201: MemoryCreatedSerializer, 200: MemoryCreatedSerializer},
        description="Write one typed memory (text, kind, category, importance, emotion, tags, context window): 201 "
                    "with the new memory. With `on_duplicate: \"reinforce\"` a near-duplicate of a memory the user's "
                    "character holds reinforces that one instead, as consolidation does: 200 with the held memory, "
                    "`reinforced: true` and the `similarity`. Unknown kind, category or emotion and importance "
                    "outside 0..1 are 400 with the field and the allowed values. Sensitive numbers (cards, IBANs, "
                    "identity numbers) are stored masked, and `masked` counts them.",
        examples=[OpenApiExample("A fact about a viewer", request_only=True, value={
            "user_id": "alex", "text": "Alex loves rock music", "kind": "user", "category": "FactsAboutUser",
            "history_uid": "stream_2024_01_15", "importance": 0.7, "tags": ["music"], "emotion": "interest",
            "context_window": "talking about music"}),
                  OpenApiExample("A repeat reinforces the held memory", request_only=True, value={
                      "user_id": "alex", "text": "Alex loves rock music a lot", "kind": "user",
                      "category": "FactsAboutUser", "on_duplicate": "reinforce"})],
    )
    def post(self, request: Request, conf_uid: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        memory, masked, reinforced = services.memory_create(
            tenant=request_tenant(request), user_id=data["user_id"], conf_uid=conf_uid,
            item=services.MemoryInput(
                text=data["text"], kind=data["kind"], category=data["category"], history_uid=data["history_uid"],
                importance=data["importance"], occurred_at=data["timestamp"], tags=data["tags"],
                emotion=data["emotion"], context_window=data["context_window"]),
            reinforce=data["on_duplicate"] == "reinforce",
        )
        memory.masked = dict(masked)
        memory.reinforced = reinforced is not None
        memory.similarity = round(reinforced.similarity, 4) if reinforced is not None else None
        return Response(MemoryCreatedSerializer(memory).data,
                        status=status.HTTP_200_OK if reinforced is not None else status.HTTP_201_CREATED)

    @extend_schema_serializer(component_name="CharacterMemoryPage")
    class ListOutputSerializer(serializers.Serializer):
        conf_uid = serializers.CharField()
        count = serializers.IntegerField(help_text="All the memories the filters match; page on with `offset`.")
        memories = MemoryOutputSerializer(many=True)

    @extend_schema(
        operation_id="character_memory_list", parameters=[ListParams],
        responses={200: ListOutputSerializer},
        description="A character's typed memories, most important first, a page at a time (`limit`, `offset`; "
                    "`count` is how many the filters match), as people and sessions are listed. 404 for a "
                    "character this tenant has never written.",
    )
    def get(self, request: Request, conf_uid: str) -> Response:
        params = self.ListParams(data=query_data(request.query_params))
        params.is_valid(raise_exception=True)
        tenant = request_tenant(request)
        services.character_get(tenant=tenant, conf_uid=conf_uid)
        rows, count = selectors.memories_list(tenant_id=tenant.pk, conf_uid=conf_uid, **params.validated_data)
        return Response(self.ListOutputSerializer({"conf_uid": conf_uid, "count": count, "memories": rows}).data)


class CharacterMemoryApi(APIView):
    """One typed memory: read it, correct its kind, category, importance or tags, or forget it."""

    class Params(ClosedSerializerMixin, serializers.Serializer):
        # As the list's: an unknown parameter is a 400 naming it, and `user_id` filters. Ignored, a client
        # asking for ivan's memory by id was given alex's.
        user_id = StrictRegexField(CLIENT_ID_REGEX, required=False,
                                   help_text="Only if the memory is this user's: another user's memory is a 404, "
                                             "as the list leaves it out.")

    def _memory(self, request: Request, conf_uid: str, memory_id: str) -> Chunk:
        params = self.Params(data=query_data(request.query_params))
        params.is_valid(raise_exception=True)
        memory = services.memory_get(tenant=request_tenant(request), conf_uid=conf_uid, memory_uid=memory_id)
        user_id = params.validated_data.get("user_id")
        if user_id is not None and memory.user_id != user_id:
            raise ApplicationError(f"Character {conf_uid!r} has no memory {memory_id} of user {user_id!r}.",
                                   code="not_found", field="memory_id", status_code=404)
        return memory

    class PatchSerializer(ClosedSerializerMixin, serializers.Serializer):
        kind = NamedChoiceField(choices=KINDS, required=False)
        category = NamedChoiceField(choices=CATEGORIES, required=False)
        importance = StrictFloatField(min_value=0.0, max_value=1.0, required=False)
        tags = serializers.ListField(child=StrictCharField(max_length=64), required=False, max_length=32)

    @extend_schema(operation_id="character_memory_get", parameters=[Params], responses={200: MemoryOutputSerializer})
    def get(self, request: Request, conf_uid: str, memory_id: str) -> Response:
        return Response(MemoryOutputSerializer(self._memory(request, conf_uid, memory_id)).data)

    @extend_schema(operation_id="character_memory_update", parameters=[Params], request=PatchSerializer,
                   responses={200: MemoryWrittenSerializer},
                   description="Correct a memory's kind, category, importance or tags; searches see it at once. "
                               "The text is what was said: to change it, forget the memory and write a new one "
                               "(`text` here is a 400). Sensitive numbers in the tags are stored masked, and "
                               "`masked` counts them.")
    def patch(self, request: Request, conf_uid: str, memory_id: str) -> Response:
        tenant = request_tenant(request)
        memory = self._memory(request, conf_uid, memory_id)
        serializer = self.PatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        if not data:  # nothing to change
            return Response(_written(memory, Counter()))
        _, masked = services.memory_edit(
            tenant=tenant, chunk_id=memory.pk, kind=data.get("kind", memory.kind),
            category=data.get("category", memory.category), importance=data.get("importance", memory.importance),
            tags=data.get("tags", memory.tags), editor=request_actor(request))
        return Response(_written(services.memory_get(tenant=tenant, conf_uid=conf_uid, memory_uid=memory_id), masked))

    @extend_schema(operation_id="character_memory_delete", parameters=[Params], request=None, responses={204: None},
                   description="Forget one memory: gone from search, context and lists at once.")
    def delete(self, request: Request, conf_uid: str, memory_id: str) -> Response:
        self._memory(request, conf_uid, memory_id)
        services.memory_forget(tenant=request_tenant(request), conf_uid=conf_uid, memory_uid=memory_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class RelationshipSerializer(serializers.Serializer):
    user_id = serializers.CharField()
    mood = serializers.FloatField(help_text="Moving average of detected emotions, -1..1.")
    affinity = serializers.FloatField(help_text="-100..100, decays to 0 over inactivity.")
    trust = serializers.FloatField(help_text="0..100, decays to 50 over inactivity.")
    emotions = serializers.DictField(child=serializers.FloatField(), help_text="Last detected emotion scores.")
    interactions = serializers.IntegerField()
    last_interaction_at = serializers.DateTimeField()


class CharacterMoodApi(APIView):
    class Params(ClosedSerializerMixin, serializers.Serializer):
        user_id = StrictRegexField(CLIENT_ID_REGEX, required=False, help_text="Only this user's figures.")

    class OutputSerializer(serializers.Serializer):
        conf_uid = serializers.CharField()
        mood = serializers.FloatField(help_text="The character's mood over all its users (a moving average, -1..1).")
        users = serializers.IntegerField()
        relationships = RelationshipSerializer(many=True)

    @extend_schema(
        operation_id="character_mood",
        parameters=[Params],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request, conf_uid: str) -> Response:
        params = self.Params(data=query_data(request.query_params))
        params.is_valid(raise_exception=True)
        user_id = params.validated_data.get("user_id")
        tenant = request_tenant(request)
        services.character_get(tenant=tenant, conf_uid=conf_uid)
        summary = mood_service.character_mood(tenant_id=tenant.pk, conf_uid=conf_uid, user_id=user_id)
        return Response(self.OutputSerializer(summary).data)


# --- The review API's typed memory queue (memoryhub.review_api) -----------------------------------
@extend_schema_serializer(component_name="MemoryReviewEvidence")
class MemoryReviewEvidenceSerializer(serializers.ModelSerializer):
    """An unsure consolidated memory: what approving it writes, and the session window it came from
    (its messages: `GET /api/v1/users/{user_id}/sessions/{session_id}/messages`)."""

    session_id = serializers.CharField(source="consolidation.conversation.session_id", allow_null=True, default=None)
    first_message_id = serializers.IntegerField(source="consolidation.first_message_id", allow_null=True,
                                                default=None)
    last_message_id = serializers.IntegerField(source="consolidation.last_message_id", allow_null=True,
                                               default=None)

    class Meta:
        model = MemoryReview
        fields = ["user_id", "conf_uid", "history_uid", "text", "kind", "category", "importance", "confidence",
                  "tags", "emotion", "context_window", "occurred_at", "session_id", "first_message_id",
                  "last_message_id", "chunk_id", "decided_by", "decided_at", "decision_reason"]


def review_items(tenant: Tenant) -> QuerySet[MemoryReview]:
    return MemoryReview.objects.filter(tenant=tenant).select_related("consolidation__conversation")


def _decided_first(review: MemoryReview) -> ApplicationError:
    return ApplicationError(f"Memory review item {review.pk} is already decided.", code="already_decided",
                            status_code=409)


def review_approve(review: MemoryReview, *, actor: str, reason: str) -> None:
    if services.memory_review_approve(review=review, reviewer=None, actor_label=actor, reason=reason) is None:
        raise _decided_first(review)


def review_reject(review: MemoryReview, *, actor: str, reason: str) -> None:
    if not services.memory_review_reject(review=review, reviewer=None, actor_label=actor, reason=reason):
        raise _decided_first(review)


REVIEW_API = ReviewApi(items=review_items, evidence=MemoryReviewEvidenceSerializer,
                       statuses=tuple(MemoryReview.Status.values), approve=review_approve, reject=review_reject)
