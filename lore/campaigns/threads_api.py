"""The short-term layer's API (seed 003 §2, §8.9: LangGraph's threads and checkpoints, with TTL and
deletion over the API, encrypted at rest when THREAD_STATE_KEY is set), `engine` keys only; see
`lore.campaigns.threads`. A LangGraph checkpointer maps onto it: `put` is a checkpoint write with the
checkpoint's own id, its metadata, `checkpoint_ns` and `"fork": true` (LangGraph writes no compare-and-set),
`put_writes` is …/checkpoints/{id}/writes, `get_tuple` the thread (latest) or one checkpoint, `list` the
checkpoints, `delete_thread` the thread's DELETE."""

from __future__ import annotations

import uuid
from typing import Any

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema, extend_schema_field
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lore.campaigns import threads
from lore.campaigns.api import ARCHIVED_TEXT, ENGINE, _campaign
from lore.campaigns.models import Thread
from memoryhub.validation import (
    ClosedSerializerMixin,
    StrictBooleanField,
    StrictCharField,
    StrictIntegerField,
    json_value_problem,
    query_data,
)

PAGE_DEFAULT, PAGE_MAX = 20, 100

ERRORS = {
    400: OpenApiResponse(description="Invalid input; `error.fields` names the field at fault (`state`, `metadata`, "
                                     "`checkpoint_ns`, `parent_checkpoint_id`, `fork`, `checkpoint_id`, `ttl_hours`, "
                                     "`writes` and its items' fields, `limit`, `before_step`, `branch_of`)."),
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the `engine` scope (thread state is the engine's alone)."),
    404: OpenApiResponse(description="Unknown campaign, thread (or one past its TTL) or checkpoint (or one pruned); "
                                     "another tenant's is unknown too. `error.fields` names it."),
}
SEALED = {503: OpenApiResponse(description=(
    "The thread's state is encrypted at rest and THREAD_STATE_KEY is unset or holds no key that opens it "
    "(`error.code` thread_state_key): the deployment's configuration, not the request, is at fault."))}
WRITE_CONFLICT = {409: OpenApiResponse(description=(
    "`parent_checkpoint_id` is not its namespace's latest checkpoint any more and `fork` is not set (`error.code` "
    "stale_parent, the message names the latest: read the thread and write again, or fork), `checkpoint_id` is a "
    f"checkpoint of the thread written with another body (`error.code` checkpoint_exists), or {ARCHIVED_TEXT}."))}
STATE_EXAMPLE = {"scene_id": "scn_042", "turn": 7, "messages": [{"role": "player", "text": "I roll insight."}],
                 "pending": {"roll": "insight", "dc": 12}}
METADATA_EXAMPLE = {"source": "loop", "step": 3, "parents": {}}
NS_HELP = ("LangGraph's checkpoint namespace: \"\" (the default) is the root graph; a subgraph's checkpoints form "
           f"their own series under its namespace. At most {threads.NS_MAX_CHARS} characters, no control characters.")


# No control characters (`threads.text_problem` refuses them): as a validator, the schema says it (`pattern`),
# so a client, and the fuzzer, know the rule before a 400 tells it.
NO_CONTROL = RegexValidator(r"^[^\x00-\x1f\x7f]*$", "must not contain control characters")


def _problem_to_error(problem: str | None, what: str) -> None:
    if problem:
        raise serializers.ValidationError(f"Invalid {what}: {problem}.")


class StateField(serializers.DictField):
    """The engine's state: any JSON object PostgreSQL can store, within THREAD_STATE_MAX_BYTES."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        _problem_to_error(threads.object_problem(value, max_bytes=settings.THREAD_STATE_MAX_BYTES,
                                                 setting="THREAD_STATE_MAX_BYTES"), "state")
        return value


class MetadataField(serializers.DictField):
    """A checkpoint's metadata: any JSON object within THREAD_METADATA_MAX_BYTES."""

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        _problem_to_error(threads.object_problem(value, max_bytes=settings.THREAD_METADATA_MAX_BYTES,
                                                 setting="THREAD_METADATA_MAX_BYTES"), "metadata")
        return value


class NamespaceField(StrictCharField):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(allow_blank=True, trim_whitespace=False, max_length=threads.NS_MAX_CHARS, help_text=NS_HELP,
                         validators=[NO_CONTROL], **kwargs)

    def to_internal_value(self, data: Any) -> str:
        value = super().to_internal_value(data)
        _problem_to_error(threads.text_problem(value, max_chars=threads.NS_MAX_CHARS), "checkpoint_ns")
        return value


class TtlField(StrictIntegerField):
    """Hours, 1 to THREAD_TTL_MAX_HOURS as it is now (DRF builds a serializer's fields anew for each instance),
    which the schema states too: a client (and the fuzzer) reads the bound there before a 400 tells it."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(min_value=1, max_value=settings.THREAD_TTL_MAX_HOURS, **kwargs)

    def to_internal_value(self, data: Any) -> int:
        value = super().to_internal_value(data)
        _problem_to_error(threads.ttl_problem(value), "ttl_hours")
        return value


class PendingWriteSerializer(ClosedSerializerMixin, serializers.Serializer):
    task_id = StrictCharField(max_length=threads.TASK_ID_MAX_CHARS, validators=[NO_CONTROL],
                              help_text="The task that wrote it.")
    channel = StrictCharField(max_length=threads.CHANNEL_MAX_CHARS, validators=[NO_CONTROL],
                              help_text="The channel written.")
    idx = StrictIntegerField(min_value=threads.IDX_RANGE[0], max_value=threads.IDX_RANGE[1],
                             help_text="LangGraph's: the write's position in its task's writes, or a negative slot "
                                       "(error, interrupt, resume, …). (task_id, idx) is unique per checkpoint.")
    value = serializers.JSONField(allow_null=True, help_text="Any JSON value.")
    task_path = StrictCharField(max_length=threads.TASK_PATH_MAX_CHARS, allow_blank=True, trim_whitespace=False,
                                default="", validators=[NO_CONTROL],
                                help_text="LangGraph's task path (orders the writes); optional.")

    def validate_value(self, value: Any) -> Any:
        _problem_to_error(json_value_problem(value, max_depth=threads.STATE_MAX_DEPTH), "value")
        return value


class CheckpointSerializer(serializers.Serializer):
    checkpoint_id = serializers.UUIDField()
    thread_id = serializers.CharField()
    checkpoint_ns = serializers.CharField(help_text="\"\": the root graph's series.")
    step = serializers.IntegerField(help_text="1, 2, … within the thread, in write order; never reused.")
    parent_checkpoint_id = serializers.UUIDField(allow_null=True,
                                                 help_text="The checkpoint this one follows: its namespace's latest "
                                                           "when written, or the older one it forked from; null for "
                                                           "the first.")
    state = serializers.DictField()
    metadata = serializers.DictField()
    pending_writes = PendingWriteSerializer(many=True, help_text="Writes stored against this checkpoint, by "
                                                                 "task_path, task_id, idx.")
    created_at = serializers.DateTimeField()


class CheckpointSummarySerializer(CheckpointSerializer):
    """A checkpoint in a list: without its state and pending writes (read one with …/checkpoints/{checkpoint_id})."""

    state = None  # type: ignore[assignment]
    pending_writes = None  # type: ignore[assignment]


class ThreadSerializer(serializers.Serializer):
    thread_id = serializers.CharField()
    campaign_id = serializers.CharField(source="campaign.slug")
    steps = serializers.IntegerField(source="last_step", help_text="Checkpoints written so far (the latest's step).")
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField(help_text="Its last write: a checkpoint or pending writes.")
    ttl_hours = serializers.IntegerField(allow_null=True, help_text="The thread's own TTL; null: THREAD_TTL_HOURS.")
    expires_at = serializers.SerializerMethodField(help_text="updated_at + its TTL: then the thread and its "
                                                             "checkpoints are deleted, unless written again.")

    @extend_schema_field(OpenApiTypes.DATETIME)
    def get_expires_at(self, thread: Thread) -> str:
        return serializers.DateTimeField().to_representation(threads.expires_at(thread))


class ThreadOutputSerializer(ThreadSerializer):
    checkpoint = CheckpointSerializer(help_text="The namespace's latest checkpoint: its current state.")


def _thread_answer(thread: Thread, checkpoint_ns: str) -> dict[str, Any]:
    latest = threads.checkpoint_view(threads.checkpoint_latest(thread=thread, checkpoint_ns=checkpoint_ns))
    return {**ThreadSerializer(thread).data, "checkpoint": CheckpointSerializer(latest).data}


class CheckpointCreateApi(APIView):
    """Save a thread's state as a new checkpoint; the thread is created by its first one. The latest
    checkpoint of a namespace is its current state; writing one renews the thread's TTL, and each
    namespace keeps its THREAD_MAX_CHECKPOINTS newest plus the branch just written (older ones are
    deleted with their pending writes). List them newest first with GET."""

    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        state = StateField(help_text="The engine's state at this step: any JSON object, at most "
                                     "THREAD_STATE_MAX_BYTES as compact JSON.")
        metadata = MetadataField(required=False, default=dict,
                                 help_text="The checkpoint's metadata (LangGraph's source, step, parents, …): any JSON "
                                           "object, at most THREAD_METADATA_MAX_BYTES as compact JSON; default {}.")
        checkpoint_ns = NamespaceField(required=False, default="")
        checkpoint_id = serializers.UUIDField(
            required=False,
            help_text="The engine's own id for it (LangGraph's checkpoint[\"id\"]); made here when left out. The "
                      "same id again with the same body answers 200 with it; with another body, 409 "
                      "checkpoint_exists.")
        parent_checkpoint_id = serializers.UUIDField(
            required=False,
            help_text="The checkpoint this state follows. Without `fork`, a compare-and-set: the write lands only "
                      "while it is its namespace's latest, otherwise a 409 stale_parent (two engines wrote from the "
                      "same state: one wins); the same write again after it landed (same parent, state and metadata, "
                      "an engine's retry) answers 200 with it. Left out, the write lands as the next step after the "
                      "namespace's latest.")
        fork = StrictBooleanField(
            required=False, default=False,
            help_text="Branch: the new checkpoint is a child of `parent_checkpoint_id` (required), which may be any "
                      "kept checkpoint of the namespace, and becomes the namespace's latest (LangGraph's time travel "
                      "and update of an older state). The same fork again answers 200 with the child it made.")
        ttl_hours = TtlField(required=False, help_text="The thread's TTL from now on, 1 to THREAD_TTL_MAX_HOURS "
                                                       "(720 by default) hours after its last write; left out, it "
                                                       "keeps its own or THREAD_TTL_HOURS.")

        def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
            if attrs.get("fork") and attrs.get("parent_checkpoint_id") is None:
                raise serializers.ValidationError({"fork": ["A fork needs parent_checkpoint_id: the checkpoint to "
                                                            "branch from."]})
            return attrs

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        limit = serializers.IntegerField(min_value=1, max_value=PAGE_MAX, default=PAGE_DEFAULT,
                                         help_text=f"Checkpoints per page (default {PAGE_DEFAULT}, max {PAGE_MAX}).")
        before_step = serializers.IntegerField(min_value=1, max_value=2**31 - 1, required=False,
                                               help_text="The page older than this step (the previous page's "
                                                         "`next_before_step`); without it, the newest.")
        checkpoint_ns = NamespaceField(required=False)
        branch_of = serializers.UUIDField(required=False,
                                          help_text="One branch: this checkpoint and its ancestors (back to where "
                                                    "pruning cut it), newest first.")

    class PageSerializer(serializers.Serializer):
        thread = ThreadSerializer()
        checkpoints = CheckpointSummarySerializer(many=True)
        next_before_step = serializers.IntegerField(allow_null=True,
                                                    help_text="`before_step` of the next, older page; null on the "
                                                              "oldest.")

    @extend_schema(
        operation_id="campaign_thread_checkpoint_create", request=InputSerializer,
        description="Concurrent writes to one thread are serialised: two without `parent_checkpoint_id` both land "
                    "with consecutive steps; two naming the same parent give one 201 and one 409 stale_parent; two "
                    "forks of one checkpoint both land, as two branches.",
        responses={201: CheckpointSerializer, 200: OpenApiResponse(CheckpointSerializer, description=(
            "A retry of a write that landed (same checkpoint_id, or same parent, state and metadata): the "
            "checkpoint it made.")), **WRITE_CONFLICT, **ERRORS, **SEALED},
        examples=[OpenApiExample("A turn's state", request_only=True, value={"state": STATE_EXAMPLE}),
                  OpenApiExample("The next one, from the state just read", request_only=True, value={
                      "state": {**STATE_EXAMPLE, "turn": 8}, "parent_checkpoint_id":
                      "6f1c2a9e-3b1d-4c55-9d0a-0e8f4f1b2c3d"}),
                  OpenApiExample("LangGraph's put: its id, metadata and namespace, a fork of an older state",
                                 request_only=True, value={
                                     "state": {**STATE_EXAMPLE, "turn": 5}, "metadata": METADATA_EXAMPLE,
                                     "checkpoint_id": "1ef4f797-8335-6428-8001-8a1503f9b875",
                                     "parent_checkpoint_id": "6f1c2a9e-3b1d-4c55-9d0a-0e8f4f1b2c3d",
                                     "checkpoint_ns": "", "fork": True, "ttl_hours": 24})])
    def post(self, request: Request, campaign: str, thread_id: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = threads.checkpoint_write(
            campaign=found, thread_id=thread_id, state=data["state"], metadata=data["metadata"],
            checkpoint_ns=data["checkpoint_ns"], parent_checkpoint_id=data.get("parent_checkpoint_id"),
            fork=data["fork"], checkpoint_id=data.get("checkpoint_id"), ttl_hours=data.get("ttl_hours"))
        return Response(CheckpointSerializer(threads.checkpoint_view(result.checkpoint)).data,
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)

    @extend_schema(operation_id="campaign_thread_checkpoints", parameters=[QuerySerializer],
                   responses={200: PageSerializer, **ERRORS, **SEALED},
                   description="The thread's checkpoints, newest first, a page at a time, with their metadata and "
                               "without their state: of every namespace, or of `checkpoint_ns`; or one branch "
                               "(`branch_of`).")
    def get(self, request: Request, campaign: str, thread_id: str) -> Response:
        query = self.QuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        data = query.validated_data
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        page, more = threads.checkpoints_page(thread=thread, limit=data["limit"], before_step=data.get("before_step"),
                                              checkpoint_ns=data.get("checkpoint_ns"),
                                              branch_of=data.get("branch_of"))
        return Response(self.PageSerializer({
            "thread": thread, "checkpoints": [threads.checkpoint_view(c, full=False) for c in page],
            "next_before_step": page[-1].step if more and page else None}).data)


class ThreadApi(APIView):
    """A thread: its current state (a namespace's latest checkpoint), its TTL, or delete it with all its
    checkpoints."""

    required_scopes = ENGINE

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        checkpoint_ns = NamespaceField(required=False, default="")

    class PatchSerializer(ClosedSerializerMixin, serializers.Serializer):
        ttl_hours = TtlField(allow_null=True, required=False,
                             help_text="The thread's own TTL, 1 to THREAD_TTL_MAX_HOURS (720 by default) hours after "
                                       "its last write; null: back to THREAD_TTL_HOURS. A TTL shorter than the time "
                                       "since the last write expires the thread at once. Left out: unchanged (a "
                                       "PATCH of nothing answers the thread as it is).")

    @extend_schema(operation_id="campaign_thread_get", parameters=[QuerySerializer],
                   responses={200: ThreadOutputSerializer, **ERRORS, **SEALED})
    def get(self, request: Request, campaign: str, thread_id: str) -> Response:
        query = self.QuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        return Response(_thread_answer(thread, query.validated_data["checkpoint_ns"]))

    @extend_schema(operation_id="campaign_thread_update", request=PatchSerializer,
                   description="Set the thread's own TTL, or put it back on THREAD_TTL_HOURS.",
                   responses={200: ThreadSerializer, **ERRORS,
                              409: OpenApiResponse(description=ARCHIVED_TEXT[0].upper() + ARCHIVED_TEXT[1:] + ".")},
                   examples=[OpenApiExample("A day", request_only=True, value={"ttl_hours": 24})])
    def patch(self, request: Request, campaign: str, thread_id: str) -> Response:
        serializer = self.PatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        if "ttl_hours" not in serializer.validated_data:
            return Response(ThreadSerializer(threads.thread_get(campaign=_campaign(request, campaign),
                                                                thread_id=thread_id)).data)
        thread = threads.thread_ttl_set(campaign=_campaign(request, campaign), thread_id=thread_id,
                                        ttl_hours=serializer.validated_data["ttl_hours"])
        return Response(ThreadSerializer(thread).data)

    @extend_schema(operation_id="campaign_thread_delete", request=None,
                   description="Delete the thread and all its checkpoints and pending writes at once, an archived "
                               "campaign's too. Afterwards its reads are a 404; a new checkpoint under its id starts "
                               "it again at step 1.",
                   responses={204: OpenApiResponse(description="Deleted: nothing to return."),
                              **{c: r for c, r in ERRORS.items() if c != 400}})
    def delete(self, request: Request, campaign: str, thread_id: str) -> Response:
        threads.thread_delete(campaign=_campaign(request, campaign), thread_id=thread_id)
        return Response(status=status.HTTP_204_NO_CONTENT)


class CheckpointApi(APIView):
    """One checkpoint of a thread, with its state, metadata and pending writes (to roll back: write that
    state as a new checkpoint, or fork from it)."""

    required_scopes = ENGINE

    @extend_schema(operation_id="campaign_thread_checkpoint_get",
                   responses={200: CheckpointSerializer, **{c: r for c, r in ERRORS.items() if c != 400}, **SEALED})
    def get(self, request: Request, campaign: str, thread_id: str, checkpoint_id: str) -> Response:
        thread = threads.thread_get(campaign=_campaign(request, campaign), thread_id=thread_id)
        checkpoint = threads.checkpoint_get(thread=thread, checkpoint_id=uuid.UUID(checkpoint_id))
        return Response(CheckpointSerializer(threads.checkpoint_view(checkpoint)).data)


class CheckpointWritesApi(APIView):
    """LangGraph's put_writes: a task's writes stored against a checkpoint, returned with it."""

    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        writes = PendingWriteSerializer(many=True, min_length=1, max_length=threads.WRITES_PER_REQUEST_MAX,
                                        help_text=f"1 to {threads.WRITES_PER_REQUEST_MAX} writes, their values "
                                                  f"together at most THREAD_STATE_MAX_BYTES as JSON; (task_id, idx) "
                                                  f"once each.")

    class OutputSerializer(serializers.Serializer):
        checkpoint_id = serializers.UUIDField()
        written = serializers.IntegerField(help_text="Writes stored now: new ones, and negative idx replaced.")
        kept = serializers.IntegerField(help_text="Writes whose (task_id, idx) was stored already (idx >= 0): left "
                                                  "as they were, as LangGraph's put_writes does.")

    @extend_schema(
        operation_id="campaign_thread_checkpoint_writes", request=InputSerializer,
        description="Idempotent per (task_id, idx): a retry, or two at once, store each write once. Renews the "
                    "thread's TTL.",
        responses={201: OutputSerializer, 200: OpenApiResponse(OutputSerializer, description=(
            "Nothing new: every write was stored already.")), **ERRORS, **SEALED,
            409: OpenApiResponse(description=ARCHIVED_TEXT[0].upper() + ARCHIVED_TEXT[1:] + ".")},
        examples=[OpenApiExample("A node's writes", request_only=True, value={"writes": [
            {"task_id": "8a1b7c3e-0f4d-5e6a-9b2c-1d3e5f7a9b0c", "channel": "messages", "idx": 0,
             "value": [{"role": "gm", "text": "Ли Шэнь молча кивает."}]},
            {"task_id": "8a1b7c3e-0f4d-5e6a-9b2c-1d3e5f7a9b0c", "channel": "turn", "idx": 1, "value": 8}]})])
    def post(self, request: Request, campaign: str, thread_id: str, checkpoint_id: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = threads.writes_put(campaign=found, thread_id=thread_id, checkpoint_id=uuid.UUID(checkpoint_id),
                                    writes=serializer.validated_data["writes"])
        body = {"checkpoint_id": result.checkpoint.checkpoint_id, "written": result.written, "kept": result.kept}
        return Response(self.OutputSerializer(body).data,
                        status=status.HTTP_201_CREATED if result.written else status.HTTP_200_OK)
