"""Profile API: a user's long-term facts (seed 002's user_profile), manual saves, deletions, history."""

from __future__ import annotations

import re
from urllib.parse import quote

from django.db.models import Prefetch, Q, QuerySet
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.auth import request_actor, request_tenant
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Message, Tenant
from memoryhub.registry import ReviewApi
from memoryhub.validation import (
    ClosedSerializerMixin,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    query_data,
)
from profiles import selectors, services
from profiles.keys import KEY_MAX_CHARS, KEYS, VALUE_MAX_CHARS, key_normalize
from profiles.models import FactEvent, UserProfile

# What a key in a URL may be: words of Latin or Cyrillic letters and digits (starting with a letter,
# joined by single spaces, "_" or "-"), or a registry synonym in another script ("姓名"). Anything
# else is refused rather than rewritten: "ci\x00ty" used to become "ci_ty" and "a'--" "a".
_CYRILLIC = "А-ЩЫЭ-Яа-щыэ-яЁёІіЇїЄєҐґЎў"  # no Ъ/Ь first: they transliterate to nothing
_WORD = f"[A-Za-z0-9{_CYRILLIC}ЪЬъь]+"
_OTHER_SCRIPT_SYNONYMS = sorted(
    {alias for spec in KEYS for alias in spec.synonyms if not re.fullmatch(rf"[A-Za-z0-9 {_CYRILLIC}ЪЬъь-]+", alias)},
    key=len, reverse=True,
)
KEY_PATTERN = (rf"^(?:[A-Za-z{_CYRILLIC}]{_WORD[:-1]}*(?:[ _-]{_WORD})*"
               rf"|{'|'.join(re.escape(a) for a in _OTHER_SCRIPT_SYNONYMS)})$")
KEY_PARAMETER = OpenApiParameter(
    "key", str, OpenApiParameter.PATH, pattern=KEY_PATTERN,
    description="A fact key: snake_case or words (\"favourite colour\", stored in American spelling as "
                "`favorite_color`), Latin or Cyrillic (transliterated), "
                "or a synonym of a registry key in any script (\"city\", \"город\", \"城市\" are all `location`). "
                f"At most {KEY_MAX_CHARS} characters, also once normalised.",
)


def _canonical_key(raw: str) -> str:
    if len(raw) > KEY_MAX_CHARS or not re.match(KEY_PATTERN, raw):
        raise ApplicationError(
            "Use a key of Latin or Cyrillic words (letters and digits, starting with a letter, joined by "
            "single spaces, '_' or '-') or a known synonym of a registry key.", code="invalid_key", field="key")
    return key_normalize(raw)


# Nested serializers are all called Input/OutputSerializer; explicit component names keep them apart
# in the OpenAPI schema.
@extend_schema_serializer(component_name="ProfileFact")
class FactOutputSerializer(serializers.ModelSerializer):
    competes_with = serializers.SerializerMethodField(
        help_text="For a fact that is not its key's current value: that current value (null otherwise)."
    )

    class Meta:
        model = UserProfile
        fields = ["id", "key", "value", "confidence", "status", "source", "multi", "competes_with",
                  "source_message_id", "meta", "created_at", "updated_at", "confirmed_at"]

    def get_competes_with(self, fact: UserProfile) -> str | None:
        if not hasattr(fact, "current_value"):
            fact = selectors.with_current_value(UserProfile.objects.filter(pk=fact.pk)).get()
        return fact.current_value  # type: ignore[attr-defined]


class ProfileGetApi(APIView):
    """A user's facts: active ones by default, or those pending review or rejected."""

    @extend_schema_serializer(component_name="ProfileFilter")
    class FilterSerializer(ClosedSerializerMixin, serializers.Serializer):
        status = serializers.ChoiceField(choices=UserProfile.Status.values, default=UserProfile.Status.ACTIVE)

    @extend_schema_serializer(component_name="Profile")
    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        status = serializers.CharField()
        facts = FactOutputSerializer(many=True)

    @extend_schema(
        operation_id="profile_get",
        parameters=[OpenApiParameter(
            "status", str, enum=UserProfile.Status.values,
            description="Which facts: active (default), pending (awaiting review), rejected.",
        )],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request, user_id: str) -> Response:
        filters = self.FilterSerializer(data=query_data(request.query_params))
        filters.is_valid(raise_exception=True)
        wanted = filters.validated_data["status"]
        facts = selectors.profile_facts(tenant_id=request_tenant(request).pk, user_id=user_id, status=wanted)
        return Response(self.OutputSerializer({"user_id": user_id, "status": wanted, "facts": facts}).data)


class FactSaveApi(APIView):
    """Save one fact about the user by hand.

    A single-valued key (name, location…) takes the new value when its confidence is at least the
    current one's, otherwise the value waits for review; a multi-valued key (likes, pets…) adds it.
    Values holding a card, ID, passport, SNILS number or an IBAN are refused (`sensitive_value`).
    """

    @extend_schema_serializer(component_name="ProfileFactSave")
    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        value = StrictCharField(max_length=VALUE_MAX_CHARS * 4, trim_whitespace=True)
        confidence = StrictFloatField(min_value=0.0, max_value=1.0, default=1.0)
        source_message_id = StrictIntegerField(required=False, min_value=1,
                                                     help_text="The message this fact comes from, if any.")
        reason = StrictCharField(max_length=500, required=False, default="",
                                       help_text="Why, for the fact's history.")

    @extend_schema_serializer(component_name="ProfileFactSaved")
    class OutputSerializer(serializers.Serializer):
        key = serializers.CharField(help_text="The canonical key the value was saved under.")
        outcome = serializers.ChoiceField(choices=[o.value for o in services.Outcome])
        replaced = serializers.CharField(allow_null=True, help_text="The value this save displaced, if any.")
        fact = FactOutputSerializer()

    @extend_schema(
        operation_id="profile_fact_save",
        parameters=[KEY_PARAMETER],
        request=InputSerializer,
        responses={200: OutputSerializer, 201: OutputSerializer},
        examples=[
            OpenApiExample("Location", request_only=True, value={"value": "Berlin"}),
            OpenApiExample("Uncertain, goes to review", request_only=True, value={"value": "30", "confidence": 0.5}),
        ],
    )
    def put(self, request: Request, user_id: str, key: str) -> Response:
        key = _canonical_key(key)
        serializer = FactSaveApi.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        tenant = request_tenant(request)
        message = None
        if "source_message_id" in data:
            message = Message.objects.filter(pk=data["source_message_id"], tenant=tenant, user_id=user_id).first()
            if message is None:
                raise ApplicationError("No such message of this user.", code="not_found", field="source_message_id")
        write = services.fact_upsert(
            tenant=tenant, user_id=user_id, key=key, value=data["value"], confidence=data["confidence"],
            source=UserProfile.Source.API, source_message=message, reason=data["reason"],
            actor_label=request_actor(request),
        )
        body = {"key": write.fact.key, "outcome": write.outcome.value, "replaced": write.replaced, "fact": write.fact}
        code = status.HTTP_201_CREATED if write.outcome == services.Outcome.CREATED else status.HTTP_200_OK
        return Response(FactSaveApi.OutputSerializer(body).data, status=code)


class FactDeleteApi(APIView):
    """Forget a key: all its values, or the one given in `?value=` (for multi-valued keys)."""

    @extend_schema_serializer(component_name="ProfileFactDeleted")
    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        key = serializers.CharField()
        deleted = serializers.IntegerField()

    @extend_schema_serializer(component_name="ProfileFactDeleteFilter")
    class FilterSerializer(ClosedSerializerMixin, serializers.Serializer):
        value = serializers.CharField(max_length=VALUE_MAX_CHARS, required=False,
                                      help_text="Delete only this value of the key (not blank).")

    @extend_schema(
        operation_id="profile_fact_delete",
        parameters=[KEY_PARAMETER, FilterSerializer],
        responses={200: OutputSerializer, 404: OpenApiResponse(description=(
            "The user has no fact under the key (`error.fields.key`), or, with `?value=`, the key holds other "
            "values than that one (`error.fields.value`; the message lists the values it holds)."))},
    )
    def delete(self, request: Request, user_id: str, key: str) -> Response:
        canonical = _canonical_key(key)
        # A plain dict, not the QueryDict: DRF reads a blank form value as "not given", and `?value=`
        # would then delete every value of the key instead of being refused.
        filters = FactDeleteApi.FilterSerializer(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        deleted = services.fact_delete(
            tenant=request_tenant(request), user_id=user_id, key=canonical, value=filters.validated_data.get("value"),
            actor_label=request_actor(request),
        )
        body = {"user_id": user_id, "key": canonical, "deleted": deleted}
        return Response(FactDeleteApi.OutputSerializer(body).data)


class FactGetApi(APIView):
    """One key of a user: its values (several for a multi-valued key), active ones by default."""

    @extend_schema_serializer(component_name="ProfileFactValues")
    class OutputSerializer(serializers.Serializer):
        user_id = serializers.CharField()
        key = serializers.CharField(help_text="The canonical key.")
        status = serializers.CharField()
        facts = FactOutputSerializer(many=True)

    @extend_schema(
        operation_id="profile_fact_get",
        parameters=[KEY_PARAMETER, ProfileGetApi.FilterSerializer],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request, user_id: str, key: str) -> Response:
        canonical = _canonical_key(key)
        filters = ProfileGetApi.FilterSerializer(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        wanted = filters.validated_data["status"]
        facts = [f for f in selectors.profile_facts(tenant_id=request_tenant(request).pk, user_id=user_id,
                                                    status=wanted) if f.key == canonical]
        if not facts:
            raise NotFound(f"User {user_id!r} has no fact under {canonical!r}.", field="key")
        body = {"user_id": user_id, "key": canonical, "status": wanted, "facts": facts}
        return Response(FactGetApi.OutputSerializer(body).data)


class FactApi(FactGetApi, FactSaveApi, FactDeleteApi):
    """GET, PUT and DELETE share one path and Django routes a path to one view, so this class only
    joins the operations; each keeps its own serializers above."""


class FactHistoryApi(APIView):
    """Every change to one key of a user, newest first: what, old → new, who or what, when, why."""

    @extend_schema_serializer(component_name="ProfileFactHistory")
    class OutputSerializer(serializers.Serializer):
        @extend_schema_serializer(component_name="ProfileFactEvent")
        class EventSerializer(serializers.ModelSerializer):
            who = serializers.CharField()

            class Meta:
                model = FactEvent
                fields = ["id", "action", "who", "actor", "old_value", "new_value", "old_confidence",
                          "new_confidence", "old_status", "new_status", "reason", "source_message_id", "meta",
                          "created_at"]

        user_id = serializers.CharField()
        key = serializers.CharField()
        events = EventSerializer(many=True)

    @extend_schema(operation_id="profile_fact_history", parameters=[KEY_PARAMETER], responses={200: OutputSerializer})
    def get(self, request: Request, user_id: str, key: str) -> Response:
        canonical = _canonical_key(key)
        events = list(selectors.fact_history(tenant_id=request_tenant(request).pk, user_id=user_id, key=canonical))
        if not events:
            raise NotFound(f"User {user_id!r} has no history under {canonical!r}.", field="key")
        return Response(self.OutputSerializer({"user_id": user_id, "key": canonical, "events": events}).data)


# --- The review API's facts queue (memoryhub.review_api) ------------------------------------------
@extend_schema_serializer(component_name="FactReviewEvidence")
class FactReviewEvidenceSerializer(serializers.ModelSerializer):
    """A pending fact beside what an editor weighs: the key's current value, the message it came
    from, and this value's history (proposed, restated, decided)."""

    class SourceMessageSerializer(serializers.ModelSerializer):
        session_id = serializers.CharField(source="conversation.session_id")

        class Meta:
            model = Message
            fields = ["id", "session_id", "role", "text", "created_at"]

    current_value = serializers.CharField(allow_null=True, help_text=(
        "The key's active value when it is another row (the value approving this one replaces); null for a "
        "multi-valued key or none."))
    current_confidence = serializers.FloatField(allow_null=True)
    source_message = SourceMessageSerializer(allow_null=True)
    history = FactHistoryApi.OutputSerializer.EventSerializer(
        many=True, source="recent_events",
        help_text="This value's changes, newest first: proposed, restated, decided.")

    class Meta:
        model = UserProfile
        fields = ["user_id", "key", "value", "confidence", "source", "multi", "current_value", "current_confidence",
                  "source_message", "history", "meta", "created_at", "updated_at"]


def review_items(tenant: Tenant) -> QuerySet[UserProfile]:
    events = FactEvent.objects.order_by("-created_at", "-id")
    return (selectors.with_current_value(UserProfile.objects.filter(tenant=tenant))
            .select_related("source_message__conversation")
            .prefetch_related(Prefetch("events", queryset=events, to_attr="recent_events")))


def review_approve(fact: UserProfile, *, actor: str, reason: str) -> None:
    services.fact_approve(fact=fact, reviewer=None, reason=reason, actor_label=actor, pending_only=True,
                          refuse_stale=True)


def review_reject(fact: UserProfile, *, actor: str, reason: str) -> None:
    services.fact_reject(fact=fact, reviewer=None, reason=reason, actor_label=actor, pending_only=True)


def review_gone(tenant: Tenant, item_id: int) -> ApplicationError | None:
    """What became of a fact whose row is gone, from its key's history: an editor who approved
    "Boston" and asks for it after "Seattle" was approved learns that, not "no such item"."""
    own = FactEvent.objects.filter(tenant=tenant, fact_ref=item_id).order_by("-id").first()
    if own is None:
        return None  # never a fact of this tenant, or erased with its user
    history = f"/api/v1/users/{quote(own.user_id, safe='')}/profile/{own.key}/history"
    extra: dict[str, object] = {"history": history}
    if own.action == FactEvent.Action.DELETED:
        message = (f"Fact {item_id} ({own.key} = {own.old_value!r}) was deleted on {own.created_at:%Y-%m-%d %H:%M} "
                   f"UTC by {own.who}.")
    else:
        successor = (FactEvent.objects.filter(tenant=tenant, user_id=own.user_id, key=own.key, id__gt=own.id)
                     .filter(Q(meta__displaced_fact=item_id) | Q(meta__merged_fact=item_id)).order_by("id").first())
        if successor is None:
            message = f"Fact {item_id} ({own.key}) is no longer stored; its key's history says what happened."
        else:
            how = "merged into" if successor.meta.get("merged_fact") == item_id else "replaced by"
            message = (f"Fact {item_id} ({own.key} = {own.new_value or own.old_value!r}) was {how} fact "
                       f"{successor.fact_ref} ({own.key} = {successor.new_value!r}) on "
                       f"{successor.created_at:%Y-%m-%d %H:%M} UTC by {successor.who}.")
            extra["replaced_by"] = successor.fact_ref
    return ApplicationError(message, code="item_gone", field="item_id", status_code=410, extra=extra)


REVIEW_API = ReviewApi(items=review_items, evidence=FactReviewEvidenceSerializer,
                       statuses=tuple(UserProfile.Status.values), approve=review_approve, reject=review_reject,
                       gone=review_gone)
