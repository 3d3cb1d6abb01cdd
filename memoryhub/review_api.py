"""Review API (`editor` scope): the admin dashboard's queues for a console of the tenant's own.

Every queue an app registers with an `api` (memoryhub.registry.ReviewApi) is served here: its
pending count and oldest item, its items a page at a time with the evidence an editor decides on,
and approve / reject (and undo, where the admin can undo) with a reason. A decision runs the
service the admin's action runs, so it writes the same audit row, naming the API key as who.
Shaped like the lore edits API (`lore.edits_api`): a reason is required to reject, a decided item
answers 409 `already_decided`, another tenant's item 404.

The queue names in the schema are read from the registry when this module is imported, which is
when the URLconf is first loaded: after every app's `ready()` has registered its queue.
"""

from __future__ import annotations

from typing import Any

from django.db.models import QuerySet
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    extend_schema_field,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub import registry
from memoryhub.auth import request_actor, request_tenant
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import ApiKey, Tenant
from memoryhub.validation import ClosedSerializerMixin, StrictBooleanField, StrictCharField, query_data

EDITOR = (ApiKey.Scope.EDITOR,)
APPROVE, REJECT, UNDO = "approve", "reject", "undo"
DECISIONS = [APPROVE, REJECT, UNDO]
PAGE_DEFAULT, PAGE_MAX = 20, 100
REASON_MAX = 2000


def _queues() -> dict[str, registry.ReviewQueue]:
    return {name: queue for name, queue in registry.review_queues.items() if queue.api is not None}


def _api(queue: registry.ReviewQueue) -> registry.ReviewApi:
    assert queue.api is not None
    return queue.api


def _queue(name: str, *, decision: str | None = None) -> registry.ReviewQueue:
    queue = _queues().get(name)
    if queue is None:
        raise NotFound(f"No review queue {name!r}; the queues are {', '.join(_queues())}.", field="queue")
    if decision == UNDO and _api(queue).undo is None:
        raise NotFound(f"Decisions in the {name!r} queue cannot be undone.", field="queue")
    return queue


def _item(queue: registry.ReviewQueue, tenant: Tenant, item_id: int) -> Any:
    api = _api(queue)
    item = api.items(tenant).filter(pk=item_id).first()
    if item is None:
        gone = api.gone(tenant, item_id) if api.gone is not None else None
        if gone is not None:
            raise gone
        raise NotFound(f"The {queue.name!r} queue has no item {item_id}.", field="item_id")
    return item


def _decisions(queue: registry.ReviewQueue, item: Any) -> list[str]:
    api = _api(queue)
    if item.status == registry.PENDING:
        return [APPROVE, REJECT]
    if api.undo is not None and item.status == api.undo_status:
        return [UNDO]
    return []


def item_data(queue: registry.ReviewQueue, item: Any) -> dict[str, Any]:
    return {"id": item.pk, "queue": queue.name, "status": item.status, "summary": queue.describe(item),
            "waiting_since": getattr(item, queue.age_field), "decisions": _decisions(queue, item),
            "evidence": _api(queue).evidence(item).data}


# --- Schema ----------------------------------------------------------------------------------------
# Read once, at import (see the module's docstring).
QUEUE_NAMES = list(_queues())
UNDO_QUEUES = [name for name, queue in _queues().items() if _api(queue).undo is not None]
STATUSES = sorted({status for queue in _queues().values() for status in _api(queue).statuses})
QUEUE_STATUSES = "; ".join(f"`{name}`: {', '.join(_api(queue).statuses)}" for name, queue in _queues().items())

QUEUE = OpenApiParameter("queue", str, OpenApiParameter.PATH, enum=QUEUE_NAMES,
                         description="The review queue: " + "; ".join(
                             f"`{name}`: {queue.label}" for name, queue in _queues().items()) + ".")
UNDO_QUEUE = OpenApiParameter("queue", str, OpenApiParameter.PATH, enum=UNDO_QUEUES,
                              description="A queue whose decisions can be undone (merge proposals: undo the merge).")
ITEM_ID = OpenApiParameter("item_id", int, OpenApiParameter.PATH, description="The item's `id` in its queue.")
DECIDED = OpenApiResponse(description="The item is no longer in the status this decision needs: another editor "
                                      "decided it first (`already_decided`), a fact proposed before the key's "
                                      "current value was said or approved (`stale`, `error.current`: approving "
                                      "would silently replace it), or a merge cannot be undone now "
                                      "(`error.code` says why: a later merge, changes since the merge, ...).")
BAD_QUERY = OpenApiResponse(description="A query parameter unknown or out of range (`error.fields` names it), or "
                                        "a `status` this queue's items never take: `error.fields.status` lists the "
                                        "queue's statuses (`approved` is a merge proposal's, an approved fact is "
                                        "`active`).")
NOT_FOUND = OpenApiResponse(description="Unknown queue, or no such item in it for this tenant (another tenant's "
                                        "item is unknown).")
GONE = OpenApiResponse(description="The item was there and is no longer stored (`error.code` `item_gone`): a fact "
                                   "replaced by a later value or approval (`error.replaced_by`, the fact now holding "
                                   "the key), merged into another by an editor's correction, or deleted; "
                                   "`error.history` is its key's history.")
EVIDENCE = PolymorphicProxySerializer(
    component_name="ReviewEvidence", resource_type_field_name=None,
    serializers=[_api(queue).evidence for queue in _queues().values()],
)


class ReviewItemSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    queue = serializers.ChoiceField(choices=QUEUE_NAMES)
    status = serializers.CharField(help_text="`pending` while it waits; then the decision (`approved`, "
                                             "`rejected`, `active` for an approved fact, `undone`, ...).")
    summary = serializers.CharField(help_text="One line about the item, as the admin dashboard shows it.")
    waiting_since = serializers.DateTimeField(help_text="When it entered the queue (the dashboard's age).")
    decisions = serializers.ListField(child=serializers.ChoiceField(choices=DECISIONS),
                                      help_text="What can be decided now: approve and reject while pending, undo "
                                                "for an approved merge.")
    evidence = serializers.SerializerMethodField(help_text="What an editor decides on; its shape is the queue's.")

    @extend_schema_field(EVIDENCE)
    def get_evidence(self, data: dict[str, Any]) -> dict[str, Any]:
        return data["evidence"]


# --- Views -----------------------------------------------------------------------------------------
class ReviewQueuesApi(APIView):
    """What waits for an editor: every queue with its pending count and oldest item."""

    required_scopes = EDITOR

    class OutputSerializer(serializers.Serializer):
        class QueueSerializer(serializers.Serializer):
            class OldestSerializer(serializers.Serializer):
                id = serializers.IntegerField()
                summary = serializers.CharField()
                waiting_since = serializers.DateTimeField()

            name = serializers.ChoiceField(choices=QUEUE_NAMES)
            label = serializers.CharField()
            pending = serializers.IntegerField(help_text="Items waiting in this queue.")
            oldest = OldestSerializer(allow_null=True, help_text="The item waiting longest; null when none waits.")
            decisions = serializers.ListField(child=serializers.ChoiceField(choices=DECISIONS))

        queues = QueueSerializer(many=True)

    @extend_schema(operation_id="review_queues", responses={200: OutputSerializer},
                   examples=[OpenApiExample("Two facts and a merge waiting", response_only=True, value={"queues": [
                       {"name": "profiles", "label": "Facts waiting for review (low confidence or conflicting)",
                        "pending": 2, "decisions": ["approve", "reject"],
                        "oldest": {"id": 41, "summary": "alice: location = Lisbon (0.55)",
                                   "waiting_since": "2026-11-20T09:14:03Z"}},
                       {"name": "people", "label": "Merge proposals", "pending": 1,
                        "decisions": ["approve", "reject", "undo"],
                        "oldest": {"id": 7, "summary": "alice: merge Маша into Мария (diminutive, 0.85)",
                                   "waiting_since": "2026-11-21T18:02:44Z"}}]})])
    def get(self, request: Request) -> Response:
        tenant = request_tenant(request)
        rows = []
        for queue in _queues().values():
            pending = _api(queue).items(tenant).filter(status=registry.PENDING)
            oldest = pending.order_by(queue.age_field, "pk").first()
            rows.append({
                "name": queue.name, "label": queue.label, "pending": pending.count(),
                "oldest": None if oldest is None else {"id": oldest.pk, "summary": queue.describe(oldest),
                                                       "waiting_since": getattr(oldest, queue.age_field)},
                "decisions": [APPROVE, REJECT] + ([UNDO] if _api(queue).undo is not None else []),
            })
        return Response(self.OutputSerializer({"queues": rows}).data)


class ReviewItemsApi(APIView):
    """A queue's items, oldest first, a page at a time, each with its evidence."""

    required_scopes = EDITOR

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        # The schema's enum is every queue's statuses together; a request is checked against its own
        # queue's (`queue` in the context): `?status=approved` of facts, which become `active`, answered
        # an empty page that read as "nothing was approved".
        status = serializers.ChoiceField(choices=STATUSES, default=registry.PENDING,
                                         help_text="Items in this status (default: pending, the queue itself). "
                                                   f"Each queue's statuses: {QUEUE_STATUSES}. A status the "
                                                   "queue's items never take is a 400 naming `status` and "
                                                   "listing the queue's statuses.")
        limit = serializers.IntegerField(min_value=1, max_value=PAGE_MAX, default=PAGE_DEFAULT)
        after_id = serializers.IntegerField(min_value=0, max_value=2**63 - 1, required=False,
                                            help_text="The page after this item id (the previous page's "
                                                      "`next_after_id`); without it, the first page.")

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            queue: registry.ReviewQueue | None = self.context.get("queue")
            if queue is None:  # the schema's instance
                return
            statuses = _api(queue).statuses
            field = self.fields["status"]
            field.choices = statuses
            field.error_messages["invalid_choice"] = (
                f'"{{input}}" is not a status of the {queue.name} queue; allowed: {", ".join(statuses)}.')

    class OutputSerializer(serializers.Serializer):
        queue = serializers.ChoiceField(choices=QUEUE_NAMES)
        status = serializers.CharField()
        count = serializers.IntegerField(help_text="Items of the queue in this status, on every page.")
        items = ReviewItemSerializer(many=True)
        next_after_id = serializers.IntegerField(allow_null=True,
                                                 help_text="`after_id` of the next page; null on the last.")

    @extend_schema(operation_id="review_items", parameters=[QUEUE, QuerySerializer],
                   responses={200: OutputSerializer, 400: BAD_QUERY, 404: NOT_FOUND},
                   description="Deciding an item does not move the others: page on with `next_after_id`.")
    def get(self, request: Request, queue: str) -> Response:
        found = _queue(queue)
        query = self.QuerySerializer(data=query_data(request.query_params), context={"queue": found})
        query.is_valid(raise_exception=True)
        data = query.validated_data
        items: QuerySet = _api(found).items(request_tenant(request)).filter(status=data["status"])
        count = items.count()
        if "after_id" in data:
            items = items.filter(pk__gt=data["after_id"])
        # One more than asked tells whether a next page exists, without a second count.
        page = list(items.order_by("pk")[:data["limit"] + 1])
        more = len(page) > data["limit"]
        page = page[:data["limit"]]
        return Response(self.OutputSerializer({
            "queue": found.name, "status": data["status"], "count": count,
            "items": [item_data(found, item) for item in page],
            "next_after_id": page[-1].pk if more else None,
        }).data)


class ReviewItemApi(APIView):
    required_scopes = EDITOR

    @extend_schema(operation_id="review_item", parameters=[QUEUE, ITEM_ID],
                   responses={200: ReviewItemSerializer, 404: NOT_FOUND, 410: GONE})
    def get(self, request: Request, queue: str, item_id: str) -> Response:
        found = _queue(queue)
        item = _item(found, request_tenant(request), int(item_id))
        return Response(ReviewItemSerializer(item_data(found, item)).data)


class _DecisionApi(APIView):
    required_scopes = EDITOR
    decision = ""

    def _decide(self, request: Request, queue: str, item_id: str, serializer_class: type[serializers.Serializer]
                ) -> Response:
        found = _queue(queue, decision=self.decision)
        tenant = request_tenant(request)
        item = _item(found, tenant, int(item_id))
        serializer = serializer_class(data=request.data)
        serializer.is_valid(raise_exception=True)
        options = dict(serializer.validated_data)
        api = _api(found)
        needed = api.undo_status if self.decision == UNDO else registry.PENDING
        if item.status != needed:
            code = "not_undoable" if self.decision == UNDO else "already_decided"
            raise ApplicationError(f"{found.name} item {item.pk} is {item.status}; {self.decision} needs it "
                                   f"{needed}.", code=code, status_code=409)
        run = {APPROVE: api.approve, REJECT: api.reject, UNDO: api.undo}[self.decision]
        assert run is not None
        # The service re-checks the status under its lock: of two editors deciding at once, one gets 409.
        run(item, actor=request_actor(request), **options)
        return Response(ReviewItemSerializer(item_data(found, _item(found, tenant, item.pk))).data)


class ReviewApproveApi(_DecisionApi):
    """Approve a pending item: the fact becomes the key's value, the two people are merged, the lore edit builds
    the next staged version (publish it as usual), the typed memory is written."""

    decision = APPROVE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=REASON_MAX, required=False, default="", allow_blank=True,
                                 help_text="Why; kept in the audit trail.")

    @extend_schema(operation_id="review_approve", parameters=[QUEUE, ITEM_ID], request=InputSerializer,
                   responses={200: ReviewItemSerializer, 404: NOT_FOUND, 409: DECIDED, 410: GONE},
                   examples=[OpenApiExample("Approve", request_only=True, value={"reason": "she said so twice"})])
    def post(self, request: Request, queue: str, item_id: str) -> Response:
        return self._decide(request, queue, item_id, self.InputSerializer)


class ReviewRejectApi(_DecisionApi):
    """Reject a pending item, saying why: the fact is not proposed again, the two people stay apart."""

    decision = REJECT

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=REASON_MAX, help_text="Why; required, kept in the audit trail.")

    @extend_schema(operation_id="review_reject", parameters=[QUEUE, ITEM_ID], request=InputSerializer,
                   responses={200: ReviewItemSerializer, 404: NOT_FOUND, 409: DECIDED, 410: GONE},
                   examples=[OpenApiExample("Reject", request_only=True, value={"reason": "two different people"})])
    def post(self, request: Request, queue: str, item_id: str) -> Response:
        return self._decide(request, queue, item_id, self.InputSerializer)


class ReviewUndoApi(_DecisionApi):
    """Undo an approved merge: both people exactly as they were before it. Refused (409) while a later merge
    involves them, and, unless `force`, when the merged person changed since (forcing discards that change;
    the audit row keeps it)."""

    decision = UNDO

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        reason = StrictCharField(max_length=REASON_MAX, required=False, default="", allow_blank=True,
                                 help_text="Why; kept in the audit trail.")
        force = StrictBooleanField(required=False, default=False,
                                   help_text="Undo even though the merged person changed since the merge.")

    @extend_schema(operation_id="review_undo", parameters=[UNDO_QUEUE, ITEM_ID], request=InputSerializer,
                   responses={200: ReviewItemSerializer, 404: NOT_FOUND, 409: DECIDED, 410: GONE})
    def post(self, request: Request, queue: str, item_id: str) -> Response:
        return self._decide(request, queue, item_id, self.InputSerializer)
