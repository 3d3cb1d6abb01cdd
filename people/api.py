"""People API: a user's people, one person, people search, and a client's edit or deletion of a person.

`GET`, `PATCH` and `DELETE` share the path `users/{user_id}/people/{id}`, and a path maps to one view,
so `PersonDetailApi` serves all three; each method has its own serializers.
"""

from __future__ import annotations

from django.db.models import Prefetch, QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiResponse,
    extend_schema,
    extend_schema_field,
    extend_schema_serializer,
)
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.auth import request_actor, request_tenant
from memoryhub.models import Tenant
from memoryhub.registry import ReviewApi
from memoryhub.validation import (
    ClosedSerializerMixin,
    StrictCharField,
    StrictChoiceField,
    StrictFloatField,
    StrictIntegerField,
    VisibleCharField,
)
from people import selectors, services
from people.models import MergeProposal, Person, PersonMention


class PersonOutputSerializer(serializers.ModelSerializer):
    class Meta:
        model = Person
        fields = ["id", "display_name", "aliases", "username", "telegram_id", "circle", "circle_locked", "bio",
                  "first_seen", "last_seen", "mention_count"]


class RelationOutputSerializer(serializers.Serializer):
    kind = serializers.CharField()
    label = serializers.CharField()
    direction = serializers.ChoiceField(choices=["out", "in"],
                                        help_text='"out": this person is <kind> of the other; "in": the reverse.')
    person_id = serializers.IntegerField()
    display_name = serializers.CharField()


class PersonListApi(APIView):
    class FilterSerializer(ClosedSerializerMixin, serializers.Serializer):
        circle = serializers.ListField(child=serializers.ChoiceField(choices=Person.Circle.choices), required=False,
                                       default=list, help_text="Repeat (or separate by commas) to OR.")
        min_mentions = serializers.IntegerField(min_value=0, max_value=1_000_000, required=False)
        q = serializers.CharField(max_length=200, required=False, default="", help_text="Part of a name or alias.")
        limit = serializers.IntegerField(min_value=1, max_value=500, default=50)
        # PostgreSQL's OFFSET is a bigint: a larger one is refused here rather than failing there.
        offset = serializers.IntegerField(min_value=0, max_value=1_000_000, default=0)

    class OutputSerializer(serializers.Serializer):
        count = serializers.IntegerField()
        results = PersonOutputSerializer(many=True)

    @extend_schema(
        operation_id="people_list",
        parameters=[FilterSerializer],
        responses={200: OutputSerializer},
    )
    def get(self, request: Request, user_id: str) -> Response:
        params = {k: request.query_params.get(k) for k in request.query_params if k != "circle"}
        circles = [c for value in request.query_params.getlist("circle") for c in value.split(",") if c]
        filters = self.FilterSerializer(data={**params, "circle": circles})
        filters.is_valid(raise_exception=True)
        data = filters.validated_data
        qs = selectors.person_list(tenant_id=request_tenant(request).pk, user_id=user_id, circles=data["circle"],
                                   min_mentions=data.get("min_mentions"), query=data["q"])
        page = qs[data["offset"]: data["offset"] + data["limit"]]
        return Response(self.OutputSerializer({"count": qs.count(), "results": page}).data)


class PendingMergeSerializer(serializers.Serializer):
    """A pending merge proposal as seen from one of its two people."""

    id = serializers.IntegerField(help_text="The proposal: `GET/POST /api/v1/review/people/{id}[/approve|/reject]` "
                                            "with an `editor` key, or the admin's merge proposals.")
    person_id = serializers.IntegerField(help_text="The other person.")
    display_name = serializers.CharField(help_text="The other person's name.")
    rule = serializers.CharField(help_text='Why they look alike: "name" (the same name), "alias", "translit", …')
    score = serializers.FloatField()


def _pending_merges(person: Person) -> list[dict[str, object]]:
    out = []
    for proposal in selectors.person_merge_proposals_pending(person=person):
        other = proposal.target if proposal.source_id == person.pk else proposal.source
        out.append({"id": proposal.pk, "person_id": other.pk, "display_name": other.display_name,
                    "rule": proposal.rule, "score": proposal.score})
    return out


class PersonDetailApi(APIView):
    class OutputSerializer(PersonOutputSerializer):
        relations = serializers.SerializerMethodField()

        class Meta(PersonOutputSerializer.Meta):
            fields = [*PersonOutputSerializer.Meta.fields, "relations"]

        @extend_schema_field(RelationOutputSerializer(many=True))
        def get_relations(self, obj: Person) -> list[dict[str, object]]:
            return RelationOutputSerializer(selectors.person_relations(person=obj), many=True).data

    class PatchOutputSerializer(OutputSerializer):
        merge_proposals = serializers.SerializerMethodField(help_text=(
            "The pending merge proposals involving the person after this edit, likeliest first. A rename to "
            "the name (or an alias) of another of the user's people is allowed and merges nothing: it opens a "
            "proposal (`rule` \"name\" or \"alias\") for a reviewer, listed here, as any duplicate the edit "
            "reveals. A pending proposal whose rule the new names no longer match is closed (`superseded`, the "
            "reason in its evidence) and drops out. Empty when there is none."))

        class Meta(PersonOutputSerializer.Meta):
            fields = [*PersonOutputSerializer.Meta.fields, "relations", "merge_proposals"]

        @extend_schema_field(PendingMergeSerializer(many=True))
        def get_merge_proposals(self, obj: Person) -> list[dict[str, object]]:
            return PendingMergeSerializer(_pending_merges(obj), many=True).data

    class PatchInputSerializer(ClosedSerializerMixin, serializers.Serializer):
        min_properties = 1  # the schema says so too (memoryhub.openapi.AutoSchema)

        # 200 as the model column and every alias; blank or punctuation only is refused by the service
        # (`clean_name`, as the archivist's names are cleaned), naming this field.
        display_name = StrictCharField(
            max_length=200, required=False,
            help_text="Renames the person. The old name becomes an alias, so later mentions of it still find "
                      "this person; to drop it, send `aliases` too: they replace the list, old name included "
                      "only if listed. A rename back to the name the person's last rename replaced undoes it: "
                      "the name left is not kept. Another person's name is accepted and opens a merge proposal "
                      "(see `merge_proposals` in the response).")
        circle = StrictChoiceField(choices=Person.Circle.choices, required=False,
                                         help_text="Locks the circle: the archivist will not change it.")
        aliases = serializers.ListField(child=StrictCharField(max_length=200), max_length=50, required=False,
                                        help_text="Replaces the aliases.")
        bio = StrictCharField(max_length=5000, allow_blank=True, required=False,
                                    help_text="Replaces the bio; empty rebuilds it from the name and aliases.")

        def validate(self, attrs: dict) -> dict:
            if not attrs:
                raise serializers.ValidationError("Give at least one of display_name, circle, aliases, bio.")
            return attrs

    @extend_schema(operation_id="person_get", responses={200: OutputSerializer})
    def get(self, request: Request, user_id: str, person_id: int) -> Response:
        person = selectors.person_get(tenant_id=request_tenant(request).pk, user_id=user_id, person_id=person_id)
        return Response(self.OutputSerializer(person).data)

    @extend_schema(
        operation_id="person_update",
        description="Correct a person. Possible duplicates the edit reveals are never merged here (an edit must "
                    "not make a person disappear): a rename to the name of another of the user's people is "
                    "accepted and opens a merge proposal for review, which the response lists in "
                    "`merge_proposals`; renamed again, a proposal the new names no longer support is superseded.",
        request=PatchInputSerializer,
        responses={200: PatchOutputSerializer},
        examples=[OpenApiExample("Move to the inner circle", request_only=True,
                                 value={"circle": "Work_Inner", "aliases": ["Петя"]}),
                  OpenApiExample("Rename keeping the old name as an alias", request_only=True,
                                 value={"display_name": "Пётр Петров"}),
                  OpenApiExample("Rename and drop the old name", request_only=True,
                                 value={"display_name": "Anna", "aliases": []}),
                  OpenApiExample("Renamed to another person's name: a merge proposal", response_only=True,
                                 status_codes=["200"], value={
                                     "id": 7, "display_name": "Петров", "aliases": ["Петя"], "username": None,
                                     "telegram_id": None, "circle": "Work_Inner", "circle_locked": False,
                                     "bio": "Руководитель проекта X.", "first_seen": "2024-05-01T08:00:00Z",
                                     "last_seen": "2024-05-03T08:00:00Z", "mention_count": 2, "relations": [],
                                     "merge_proposals": [{"id": 12, "person_id": 3, "display_name": "Петров",
                                                          "rule": "name", "score": 1.0}]})],
    )
    def patch(self, request: Request, user_id: str, person_id: int) -> Response:
        serializer = self.PatchInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        person = selectors.person_get(tenant_id=request_tenant(request).pk, user_id=user_id, person_id=person_id)
        person = services.person_update(person=person, actor=None, actor_label=request_actor(request),
                                        **serializer.validated_data)
        return Response(self.PatchOutputSerializer(person).data)

    @extend_schema(
        operation_id="person_delete",
        request=None,
        description="Delete a person that is wrong (a pet, a place, a misread word) with everything derived from "
                    "them: the people merged into them, their relations and mentions, their merges and every merge "
                    "proposal involving them. Search and context no longer find them. The people audit keeps who "
                    "deleted whom. An unknown id, another user's or tenant's person is a 404 naming `person_id`; a "
                    "merged person's id is a 404 `merged` naming whom they were merged into (delete that one). A "
                    "later message that mentions the name again may add the person again.",
        responses={204: OpenApiResponse(description="Deleted: nothing to return."),
                   404: OpenApiResponse(response=OpenApiTypes.OBJECT, description="No such person.", examples=[
                       OpenApiExample("Unknown id", response_only=True, status_codes=["404"], value={"error": {
                           "code": "not_found", "message": "User 'u1' has no person 999.",
                           "fields": {"person_id": ["User 'u1' has no person 999."]}}})])},
    )
    def delete(self, request: Request, user_id: str, person_id: int) -> Response:
        person = selectors.person_get(tenant_id=request_tenant(request).pk, user_id=user_id, person_id=person_id)
        services.person_delete(person=person, actor=None, actor_label=request_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class PeopleSearchApi(APIView):
    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        query = VisibleCharField(max_length=4000)
        threshold = StrictFloatField(min_value=0, max_value=1, required=False,
                                           help_text="Minimum score (default 0.65).")
        max_results = StrictIntegerField(min_value=1, max_value=100, required=False)
        exclude_circles = serializers.ListField(child=StrictChoiceField(choices=Person.Circle.choices),
                                                required=False, default=list)
        mode = StrictChoiceField(choices=["hybrid", "vector"], default="hybrid",
                                       help_text="vector: cosine similarity of the query's embedding to each person's "
                                                 "(name, aliases and bio); hybrid also matches names and bio words.")

    class ResultSerializer(PersonOutputSerializer):
        score = serializers.FloatField()
        components = serializers.DictField(child=serializers.FloatField(),
                                           help_text="name, lexical, vector: the score is the best of them.")

        class Meta(PersonOutputSerializer.Meta):
            fields = [*PersonOutputSerializer.Meta.fields, "score", "components"]

    class OutputSerializer(serializers.Serializer):
        query = serializers.CharField()
        mode = serializers.CharField()
        took_ms = serializers.FloatField()
        timings_ms = serializers.DictField(child=serializers.FloatField())
        candidates = serializers.DictField(child=serializers.IntegerField(),
                                           help_text="How many people each component scored.")
        results = serializers.ListField(child=serializers.DictField())

    @extend_schema(
        operation_id="people_search",
        request=InputSerializer,
        responses={200: OutputSerializer},
        examples=[OpenApiExample("Who is the boss on project X?", request_only=True,
                                 value={"query": "начальник из проекта X", "max_results": 5})],
    )
    def post(self, request: Request, user_id: str) -> Response:
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        result = selectors.people_search(
            tenant_id=request_tenant(request).pk, user_id=user_id, query=data["query"],
            threshold=data.get("threshold"), max_results=data.get("max_results"),
            exclude_circles=data["exclude_circles"], mode=data["mode"],
        )
        results = []
        for hit in result.hits:
            hit.person.score, hit.person.components = hit.score, hit.components  # type: ignore[attr-defined]
            results.append(self.ResultSerializer(hit.person).data)
        body = {"query": data["query"], "mode": data["mode"], "took_ms": result.took_ms,
                "timings_ms": result.timings_ms, "candidates": result.candidates, "results": results}
        return Response(self.OutputSerializer(body).data)


# --- The review API's merge proposal queue (memoryhub.review_api) ---------------------------------
MENTIONS_SHOWN = 3


@extend_schema_serializer(component_name="MergeProposalEvidence")
class MergeProposalEvidenceSerializer(serializers.ModelSerializer):
    """A merge proposal as the admin shows it: both people side by side, each with the latest
    messages that mention them, and why they look like one person."""

    class PersonSerializer(PersonOutputSerializer):
        class MentionSerializer(serializers.Serializer):
            message_id = serializers.IntegerField()
            session_id = serializers.CharField(source="message.conversation.session_id")
            role = serializers.CharField(source="message.role")
            text = serializers.CharField(source="message.text")
            created_at = serializers.DateTimeField(source="message.created_at")

        mentions = MentionSerializer(many=True, source="recent_mentions",
                                     help_text=f"The {MENTIONS_SHOWN} latest messages mentioning the person.")

        class Meta(PersonOutputSerializer.Meta):
            fields = [*PersonOutputSerializer.Meta.fields, "status", "mentions"]

    source = PersonSerializer(help_text="Merged away (kept as a tombstone, so the merge can be undone).")
    target = PersonSerializer(help_text="Kept: absorbs the source's aliases, mentions and relations.")
    evidence = serializers.ListField(child=serializers.DictField(), help_text=(
        'Why the two look alike: [{"rule": "diminutive", "detail": "маша ↔ мария", "score": 0.85}, ...].'))
    merge_id = serializers.IntegerField(allow_null=True, help_text="The merge approving it made (undo undoes it).")

    class Meta:
        model = MergeProposal
        fields = ["user_id", "rule", "score", "origin", "evidence", "source", "target", "merge_id", "decided_at"]


def _recent_mentions(side: str) -> Prefetch:
    # A sliced prefetch: one query per side for the whole page, the latest few per person.
    latest = (PersonMention.objects.select_related("message__conversation")
              .order_by("-message__created_at", "-id")[:MENTIONS_SHOWN])
    return Prefetch(f"{side}__mentions", queryset=latest, to_attr="recent_mentions")


def review_items(tenant: Tenant) -> QuerySet[MergeProposal]:
    return (MergeProposal.objects.filter(tenant=tenant).select_related("source", "target", "merge")
            .defer("source__embedding", "target__embedding", "source__name_terms", "target__name_terms",
                   "source__search_terms", "target__search_terms")
            .prefetch_related(_recent_mentions("source"), _recent_mentions("target")))


def review_approve(proposal: MergeProposal, *, actor: str, reason: str) -> None:
    services.merge_proposal_approve(proposal=proposal, reviewer=None, actor_label=actor, reason=reason)


def review_reject(proposal: MergeProposal, *, actor: str, reason: str) -> None:
    services.merge_proposal_reject(proposal=proposal, reviewer=None, actor_label=actor, reason=reason)


def review_undo(proposal: MergeProposal, *, actor: str, reason: str, force: bool) -> None:
    services.merge_proposal_undo(proposal=proposal, reviewer=None, actor_label=actor, reason=reason, force=force)


REVIEW_API = ReviewApi(items=review_items, evidence=MergeProposalEvidenceSerializer,
                       statuses=tuple(MergeProposal.Status.values), approve=review_approve, reject=review_reject,
                       undo=review_undo, undo_status=MergeProposal.Status.APPROVED)
