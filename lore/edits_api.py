"""Lore edits API (`editor` scope): propose and list edits of a world, approve or reject one."""

from __future__ import annotations

from django.db.models import QuerySet
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lore import edits, selectors
from lore.api import EDITOR, ERRORS, _actor, build_status_url
from lore.edit_models import KnowledgeEdit
from lore.models import Alias, Domain
from memoryhub.auth import request_tenant
from memoryhub.exceptions import NotFound
from memoryhub.models import Tenant
from memoryhub.registry import ReviewApi
from memoryhub.validation import ClosedSerializerMixin, StrictCharField, StrictChoiceField, StrictRegexField


class EditSerializer(serializers.ModelSerializer):
    world = serializers.CharField(source="world.slug")
    base_version = serializers.CharField(source="base_version.version", allow_null=True, default=None)
    produced_version = serializers.CharField(source="produced_version.version", allow_null=True, default=None,
                                             help_text="The staged version approving it built.")
    live = serializers.SerializerMethodField(
        help_text="Whether the version live now (`latest`) holds the edit: false until a version built with it "
                  "is published, and again after a rollback to a version built before it.")
    build = serializers.SerializerMethodField(
        help_text="The status URL of the background build of its version, when its world's version is large "
                  "(approved, `produced_version` null until it is done; pending again if it fails); else null.")

    class Meta:
        model = KnowledgeEdit
        fields = ["id", "world", "domain", "action", "language", "entry_id", "title", "text", "reason",
                  "proposed_by", "base_version", "old_title", "old_text", "status", "decided_by", "decided_at",
                  "decision_reason", "produced_version", "live", "build", "created_at"]

    def get_build(self, edit: KnowledgeEdit) -> str | None:
        newest = max(edit.builds.all(), key=lambda b: b.pk, default=None)  # prefetched by the lists
        return build_status_url(newest) if newest is not None else None

    def get_live(self, edit: KnowledgeEdit) -> bool:
        # One alias read per (world, domain) for a whole list.
        live_edits = self.context.setdefault("live_edits", {})
        key = (edit.world_id, edit.domain)
        if key not in live_edits:
            latest = (Alias.objects.filter(world_id=edit.world_id, domain=edit.domain, name=Alias.Name.LATEST)
                      .select_related("version").first())
            live_edits[key] = set(latest.version.edits) if latest is not None else set()
        return edit.pk in live_edits[key]


def _edit(request: Request, world: str, edit_id: int) -> KnowledgeEdit:
    found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
    edit = KnowledgeEdit.objects.filter(world=found, pk=edit_id).select_related("world").first()
    if edit is None:
        raise NotFound(f"World {world!r} has no edit {edit_id}.", field="edit_id")
    return edit


class EditListProposeApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        domain = StrictChoiceField(choices=Domain.choices)
        action = StrictChoiceField(choices=KnowledgeEdit.Action.choices)
        language = StrictRegexField(r"^[a-z]{2,3}$", required=False, default="",
                                    help_text="Language of the entry (default: the world's first).")
        entry_id = StrictCharField(max_length=300, help_text="E.g. 'Spells/fireball' or a Markdown heading path.")
        title = StrictCharField(max_length=300, required=False, default="", allow_blank=True,
                                help_text="New title (create; optional for update).")
        text = StrictCharField(max_length=edits.MAX_TEXT, required=False, default="", allow_blank=True,
                               trim_whitespace=False, help_text="The entry's whole new text (create, update).")
        reason = StrictCharField(max_length=2000, help_text="Why; the reviewer sees it.")

    class FilterSerializer(ClosedSerializerMixin, serializers.Serializer):
        status = serializers.ChoiceField(choices=KnowledgeEdit.Status.choices, required=False)
        domain = serializers.ChoiceField(choices=Domain.choices, required=False)

    class ListSerializer(serializers.Serializer):
        items = EditSerializer(many=True)

    @extend_schema(operation_id="world_edits_list", parameters=[FilterSerializer],
                   responses={200: ListSerializer, **ERRORS})
    def get(self, request: Request, world: str) -> Response:
        # A plain dict: an empty `?status=` is then refused like any value outside the enum.
        filters = self.FilterSerializer(data=request.query_params.dict())
        filters.is_valid(raise_exception=True)
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        items = edits.edits_list(world=found, **filters.validated_data)[:500]
        return Response({"items": EditSerializer(items, many=True).data})

    @extend_schema(operation_id="world_edit_propose", request=InputSerializer,
                   responses={201: EditSerializer, **ERRORS},
                   examples=[OpenApiExample("Update a spell", request_only=True, value={
                       "domain": "srd", "action": "update", "language": "en", "entry_id": "Spells/fireball",
                       "text": "A bright streak ... 6d6 fire damage ...", "reason": "house rule: weaker fireball"})])
    def post(self, request: Request, world: str) -> Response:
        found = selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        edit = edits.knowledge_edit_propose(world=found, actor=_actor(request), **serializer.validated_data)
        return Response(EditSerializer(edit).data, status=status.HTTP_201_CREATED)


class EditDetailApi(APIView):
    """One edit: where a proposal stands (pending, approved with the version it built, rejected and why)."""

    required_scopes = EDITOR

    @extend_schema(operation_id="world_edit_get", responses={200: EditSerializer, **ERRORS})
    def get(self, request: Request, world: str, edit_id: int) -> Response:
        return Response(EditSerializer(_edit(request, world, edit_id)).data)


DECIDED = OpenApiResponse(description="The edit is already approved or rejected.")
STALE_OR_DECIDED = OpenApiResponse(description="The edit is already approved or rejected (`already_decided`), "
                                               "or stale (`stale`): its entry changed since it was proposed, "
                                               "so approving it would undo that change (`error.current`: the "
                                               "entry's version, title and text now, null when deleted); or "
                                               "another build of the "
                                               "domain ran past LORE_BUILD_WAIT_SECONDS (`world_busy`: the edit "
                                               "stays pending, approve it again).")


class EditApproveApi(APIView):
    """Approve a pending edit: builds the next staged version (aliased `stage`); `latest` stays."""

    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=2000, required=False, default="", allow_blank=True)

    @extend_schema(operation_id="world_edit_approve", request=InputSerializer,
                   responses={200: EditSerializer, 409: STALE_OR_DECIDED, **ERRORS})
    def post(self, request: Request, world: str, edit_id: int) -> Response:
        edit = _edit(request, world, edit_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        done = edits.knowledge_edit_approve(edit=edit, actor=_actor(request), **serializer.validated_data)
        return Response(EditSerializer(done).data)


class EditRejectApi(APIView):
    required_scopes = EDITOR

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=2000, help_text="Why; kept with the edit and in its audit trail.")

    @extend_schema(operation_id="world_edit_reject", request=InputSerializer,
                   responses={200: EditSerializer, 409: DECIDED, **ERRORS})
    def post(self, request: Request, world: str, edit_id: int) -> Response:
        edit = _edit(request, world, edit_id)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        done = edits.knowledge_edit_reject(edit=edit, actor=_actor(request), **serializer.validated_data)
        return Response(EditSerializer(done).data)


# --- The review API's lore edit queue (memoryhub.review_api) --------------------------------------
# The same services as the approve / reject operations above, so both write the same events.
def review_items(tenant: Tenant) -> QuerySet[KnowledgeEdit]:
    return (KnowledgeEdit.objects.filter(tenant=tenant).select_related("world", "base_version", "produced_version")
            .prefetch_related("builds"))


def review_approve(edit: KnowledgeEdit, *, actor: str, reason: str) -> None:
    edits.knowledge_edit_approve(edit=edit, actor=actor, reason=reason)


def review_reject(edit: KnowledgeEdit, *, actor: str, reason: str) -> None:
    edits.knowledge_edit_reject(edit=edit, actor=actor, reason=reason)


REVIEW_API = ReviewApi(items=review_items, evidence=EditSerializer, statuses=tuple(KnowledgeEdit.Status.values),
                       approve=review_approve, reject=review_reject)
