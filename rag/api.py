"""Retrieval API: search, context assembly, document ingest."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.api import CLIENT_ID_REGEX
from memoryhub.auth import request_tenant
from rag import context as rag_context
from rag import output, selectors, services
from rag.models import Chunk


class FiltersSerializer(serializers.Serializer):
    types = serializers.ListField(child=serializers.ChoiceField(choices=Chunk.Type.choices), required=False,
                                  default=list)
    kinds = serializers.ListField(child=serializers.CharField(max_length=32), required=False, default=list)
    tags = serializers.ListField(child=serializers.CharField(max_length=64), required=False, default=list,
                                 help_text="Any of these tags.")
    session_id = serializers.RegexField(CLIENT_ID_REGEX, required=False)
    created_after = serializers.DateTimeField(required=False)
    created_before = serializers.DateTimeField(required=False)

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
            created_before=data.get("created_before"),
        )


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
    fused = serializers.FloatField(help_text="Score from fusion, before boosts.")
    components = serializers.DictField(child=serializers.FloatField(),
                                       help_text="Raw component scores: bm25, vector (cosine).")
    ranks = serializers.DictField(child=serializers.IntegerField(), help_text="1-based rank per component.")
    boosts = serializers.DictField(child=serializers.FloatField())


class SearchApi(APIView):
    class InputSerializer(serializers.Serializer):
        query = serializers.CharField(max_length=4000)
        user_id = serializers.RegexField(CLIENT_ID_REGEX)
        k = serializers.IntegerField(min_value=1, max_value=100, default=10)
        mode = serializers.ChoiceField(choices=["hybrid", "bm25", "vector"], default="hybrid")
        fusion = serializers.ChoiceField(choices=["rrf", "weighted"], required=False)
        rrf_k = serializers.IntegerField(min_value=1, max_value=1000, required=False)
        weights = serializers.DictField(child=serializers.FloatField(min_value=0), required=False,
                                        help_text='Component weights, e.g. {"bm25": 0.4, "vector": 0.6}.')
        domain = serializers.ChoiceField(choices=["dialog", "document", "lore", "default"], default="dialog",
                                         help_text="Retrieval settings from config/knowledge.yaml.")
        include_tenant_documents = serializers.BooleanField(default=True)
        expand = serializers.BooleanField(required=False, allow_null=True, default=None,
                                          help_text="LLM query expansion (default: the domain's setting).")
        rerank = serializers.BooleanField(required=False, allow_null=True, default=None,
                                          help_text="LLM rerank of the top 20 (default: the domain's setting).")
        filters = FiltersSerializer(required=False)

        def validate_weights(self, value: dict) -> dict:
            unknown = set(value) - {"bm25", "vector"}
            if unknown or set(value) != {"bm25", "vector"}:
                raise serializers.ValidationError("Give exactly the weights bm25 and vector.")
            return value

    class OutputSerializer(serializers.Serializer):
        query = serializers.CharField()
        mode = serializers.CharField()
        fusion = serializers.CharField()
        took_ms = serializers.FloatField()
        timings_ms = serializers.DictField(child=serializers.FloatField())
        candidates = serializers.DictField(child=serializers.IntegerField())
        llm_steps = serializers.ListField(child=serializers.CharField(), help_text="LLM steps that ran.")
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
        return Response(output.search_response(data["query"], result))


class ContextApi(APIView):
    class InputSerializer(serializers.Serializer):
        user_id = serializers.RegexField(CLIENT_ID_REGEX)
        query = serializers.CharField(max_length=4000)
        session_id = serializers.RegexField(CLIENT_ID_REGEX, required=False)
        budget_tokens = serializers.IntegerField(min_value=50, max_value=200_000, required=False)
        k = serializers.IntegerField(min_value=1, max_value=100, default=20)

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
            session_id=data.get("session_id"), budget_tokens=data.get("budget_tokens"), k=data["k"],
        )
        return Response(self.OutputSerializer(ctx).data)


class DocumentInputSerializer(serializers.Serializer):
    text = serializers.CharField(max_length=2_000_000)
    title = serializers.CharField(max_length=300, required=False, default="")
    format = serializers.ChoiceField(choices=["markdown", "text"], default="markdown")
    external_id = serializers.CharField(max_length=128, required=False, default="",
                                        help_text="Re-sending a document with the same id replaces it.")
    tags = serializers.ListField(child=serializers.CharField(max_length=64), required=False, default=list)
    meta = serializers.DictField(required=False, default=dict)
    importance = serializers.FloatField(min_value=0, max_value=1, default=0.5)


class DocumentOutputSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    namespace = serializers.CharField()
    chunks = serializers.IntegerField()


def _ingest(request: Request, user_id: str | None) -> Response:
    serializer = DocumentInputSerializer(data=request.data)
    serializer.is_valid(raise_exception=True)
    document, chunks = services.document_ingest(
        tenant=request_tenant(request), user_id=user_id, document=services.DocumentInput(**serializer.validated_data)
    )
    body = {"id": document.pk, "namespace": document.namespace, "chunks": chunks}
    return Response(DocumentOutputSerializer(body).data, status=status.HTTP_201_CREATED)


class UserDocumentCreateApi(APIView):
    @extend_schema(operation_id="user_document_create", request=DocumentInputSerializer,
                   responses={201: DocumentOutputSerializer})
    def post(self, request: Request, user_id: str) -> Response:
        return _ingest(request, user_id)


class TenantDocumentCreateApi(APIView):
    @extend_schema(operation_id="tenant_document_create", request=DocumentInputSerializer,
                   responses={201: DocumentOutputSerializer},
                   description="A document every user of the tenant can retrieve (FAQ, manuals, rules).")
    def post(self, request: Request) -> Response:
        return _ingest(request, None)
