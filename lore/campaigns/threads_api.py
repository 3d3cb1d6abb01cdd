"""The short-term layer's API (seed 003 §2, §8.9: LangGraph's threads and checkpoints, with TTL and
deletion over the API), `engine` keys only; see `lore.campaigns.threads`."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lore.campaigns import threads
from lore.campaigns.api import ARCHIVED_TEXT, ENGINE, _campaign
from lore.campaigns.models import Thread
from memoryhub.validation import ClosedSerializerMixin, json_value_problem, query_data

PAGE_DEFAULT, PAGE_MAX = 20, 100

ERRORS = {
    400: OpenApiResponse(description="Invalid input; `error.fields` names the field at fault (`state`, "
                                     "`parent_checkpoint_id`, `limit`, `before_step`)."),
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the `engine` scope (thread state is the engine's alone)."),
    404: OpenApiResponse(description="Unknown campaign, thread (or one past THREAD_TTL_HOURS) or checkpoint (or one "
                                     "pruned); another tenant's is unknown too. `error.fields` names it."),
}
WRITE_CONFLICT = {409: OpenApiResponse(description=(
    "`parent_checkpoint_id` is not the thread's latest checkpoint any more (`error.code` stale_parent, the "
    f"message names the latest: read the thread and write again), or {ARCHIVED_TEXT}."))}
STATE_EXAMPLE = {"scene_id": "scn_042", "turn": 7, "messages": [{"role": "player", "text": "I roll insight."}],
                 "pending": {"roll": "insight", "dc": 12}}


class StateField(serializers.DictField):
    """The engine's state: any JSON object PostgreSQL can store, within THREAD_STATE_MAX_BYTES."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        problem = json_value_problem(value, max_depth=threads.STATE_MAX_DEPTH)
        if problem is None and threads.state_size(value) > settings.THREAD_STATE_MAX_BYTES:
            problem = f"must be at most {settings.THREAD_STATE_MAX_BYTES} bytes as JSON (THREAD_STATE_MAX_BYTES)"
        if problem:
            raise serializers.ValidationError(f"Invalid state: {problem}.")
        return value


class CheckpointSerializer(serializers.Serializer):
    checkpoint_id = serializers.UUIDField()
    thread_id = serializers.CharField(source="thread.thread_id")
    step = serializers.IntegerField(help_text="1, 2, … within the thread, in write order; never reused.")
    parent_checkpoint_id = serializers.UUIDField(allow_null=True,
                                                 help_text="The thread's latest checkpoint when this one was "
                                                           "written; null for the first.")
    state = serializers.DictField()
    created_at = serializers.DateTimeField()


class CheckpointSummarySerializer(CheckpointSerializer):
    """A checkpoint in a list: without its state (read one with …/checkpoints/{checkpoint_id})."""

    state = None  # type: ignore[assignment]


class ThreadSerializer(serializers.Serializer):
    thread_id = serializers.CharField()
    campaign_id = serializers.CharField(source="campaign.slug")
    steps = serializers.IntegerField(source="last_step", help_text="Checkpoints written so far (the latest's step).")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField(help_text="When its latest checkpoint was written.")
    expires_at = serializers.SerializerMethodField(help_text="updated_at + THREAD_TTL_HOURS: then the thread and its "
                                                             "checkpoints are deleted, unless written again.")

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_expires_at(self, thread: Thread) -> str:
        return serializers.DateTimeField().to_representation(threads.expires_at(thread))


class ThreadOutputSerializer(ThreadSerializer):
    checkpoint = CheckpointSerializer(help_text="The latest checkpoint: the thread's current state.")


class CheckpointCreateApi(APIView):
    """Save a thread's state as its new checkpoint; the thread is created by its first one. The latest
    checkpoint is the thread's current state; writing one renews the thread's THREAD_TTL_HOURS, and the
    thread keeps its THREAD_MAX_CHECKPOINTS newest (older ones are deleted). List them newest first with
    GET."""

    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        state = StateField(help_text="The engine's state at this step: any JSON object, at most "
                                     "THREAD_STATE_MAX_BYTES as compact JSON.")
        parent_checkpoint_id = serializers.UUIDField(
            required=False,
            help_text="Compare-and-set: the checkpoint this state follows. Given, the write lands only while it "
                      "is the thread's latest; otherwise a 409 stale_parent (two engines wrote from the same "
                      "state: one wins). The same write again after it landed (same parent and state, an engine's "
                      "retry) answers 200 with it. Left out, the write always lands as the next step.")

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=PAGE_MAX, default=PAGE_DEFAULT,
                                   help_text=f"Checkpoints per page (default {PAGE_DEFAULT}, max {PAGE_MAX}).")
        before_step = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False,
                                         help_text="The page older than this step (the previous page's "
                                                   "`next_before_step`); without it, the newest.")

    class PageSerializer(serializers.Serializer):
        thread = ThreadSerializer()
        checkpoints = CheckpointSummarySerializer(many=True)
        next_before_step = serializers.IntegerField(allow_null=True,
                                                    help_text="`before_step` of the next, older page; null on the "
                                                              "oldest.")

    @extend_schema(
        operation_id="campaign_thread_checkpoint_create", request=InputSerializer,
        description="Concurrent writes to one thread are serialised: two without `parent_checkpoint_id` both land "
                    "with consecutive steps; two naming the same parent give one 201 and one 409 stale_parent.",
        responses={201: CheckpointSerializer, 200: OpenApiResponse(CheckpointSerializer, description=(
            "A retry of a write that landed (same parent, same state): the checkpoint it made.")),
            **WRITE_CONFLICT, **ERRORS},
        examples=[OpenApiExample("A turn's state", request_only=True, value={"state": STATE_EXAMPLE}),
                  OpenApiExample("The next one, from the state just read", request_only=True, value={
                      "state": {**STATE_EXAMPLE, "turn": 8}, "parent_checkpoint_id":
                      "6f1c2a9e-3b1d-4c55-9d0a-0e8f4f1b2c3d"})])
    def post(self, request: Request, campaign: str, thread_id: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = threads.checkpoint_write(campaign=found, thread_id=thread_id, state=data["state"],
                                          parent_checkpoint_id=data.get("parent_checkpoint_id"))
        return Response(CheckpointSerializer(result.checkpoint).data,
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(operation_id="campaign_thread_checkpoints", parameters=[QuerySerializer],
                   responses={200: PageSerializer, **{c: r for c, r in ERRORS.items() if c != 400}},
                   description="The thread's checkpoints, newest first, a page at a time, without their state.")
    def get(self, request: Request, campaign: str, thread_id: str) -> Response:
        query = self.QuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        data = query.validated_data
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        page, more = threads.checkpoints_page(thread=thread, limit=data["limit"], before_step=data.get("before_step"))
        return Response(self.PageSerializer({"thread": thread, "checkpoints": page,
                                             "next_before_step": page[-1].step if more and page else None}).data)


class ThreadApi(APIView):
    """A thread: its current state (the latest checkpoint), or delete it with all its checkpoints."""

    required_scopes = ENGINE

    @extend_schema(operation_id="campaign_thread_get",
                   responses={200: ThreadOutputSerializer, **{c: r for c, r in ERRORS.items() if c != 400}})
    def get(self, request: Request, campaign: str, thread_id: str) -> Response:
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        return Response({**ThreadSerializer(thread).data,
                         "checkpoint": CheckpointSerializer(threads.checkpoint_latest(thread=thread)).data})

    @extend_schema(operation_id="campaign_thread_delete", request=None,
                   description="Delete the thread and all its checkpoints at once, an archived campaign's too. "
                               "Afterwards its reads are a 404; a new checkpoint under its id starts it again at "
                               "step 1.",
                   responses={204: OpenApiResponse(description="Deleted: nothing to return."),
                              **{c: r for c, r in ERRORS.items() if c != 400}})
    def delete(self, request: Request, campaign: str, thread_id: str) -> Response:
        threads.thread_delete(campaign=_campaign(request, campaign), thread_id=thread_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CheckpointApi(APIView):
    """One checkpoint of a thread, with its state (to roll back: write that state as a new checkpoint)."""

    required_scopes = ENGINE

    @extend_schema(operation_id="campaign_thread_checkpoint_get",
                   responses={200: CheckpointSerializer, **{c: r for c, r in ERRORS.items() if c != 400}})
    def get(self, request: Request, campaign: str, thread_id: str, checkpoint_id: str) -> Response:
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        checkpoint = threads.checkpoint_get(thread=thread, checkpoint_id=uuid.UUID(checkpoint_id))
        return Response(CheckpointSerializer(checkpoint).data)

