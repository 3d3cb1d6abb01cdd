"""Tools over DRF: `GET /api/v1/tools` lists them, `POST /api/v1/tools/{name}` calls one with its
arguments as the JSON body. For keys with the `tools` scope."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.auth import request_tenant
from memoryhub.models import ApiKey
from tools import registry, services
from tools.models import ToolCall

TOOLS = (ApiKey.Scope.TOOLS,)
AUTH_ERRORS = {
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the 'tools' scope."),
}


class ToolListApi(APIView):
    required_scopes = TOOLS

    class ToolSerializer(serializers.Serializer):
        name = serializers.CharField()
        description = serializers.CharField()
        input_schema = serializers.DictField(help_text="JSON Schema of the arguments (the POST body).")
        read_only = serializers.BooleanField()

    class OutputSerializer(serializers.Serializer):
        tools = serializers.ListField(child=serializers.DictField())

    @extend_schema(operation_id="tools_list", responses={200: OutputSerializer, **AUTH_ERRORS})
    def get(self, request: Request) -> Response:
        tools = [self.ToolSerializer(t).data for t in registry.tools_all()]
        return Response({"tools": tools})


class ToolCallApi(APIView):
    required_scopes = TOOLS

    @extend_schema(
        operation_id="tool_call",
        # The names registered when the schema is built (apps register in ready(), before urls load).
        parameters=[OpenApiParameter("name", str, OpenApiParameter.PATH, enum=[t.name for t in registry.tools_all()],
                                     description="A tool name from GET /api/v1/tools.")],
        request=OpenApiTypes.OBJECT,
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The tool's JSON result, with `sources`."),
            400: OpenApiResponse(description="Arguments refused by the tool's input schema; `error.fields` names "
                                             "the argument (a dotted path for nested ones)."),
            404: OpenApiResponse(description="Unknown tool, or an unknown world / nothing published in it."),
            **AUTH_ERRORS,
        },
        examples=[OpenApiExample("lore_assert", request_only=True,
                                 value={"fact": "Fireball deals 8d6 fire damage."}),
                  OpenApiExample("rules_lookup", request_only=True, value={"rule_id": "Conditions/blinded"})],
    )
    def post(self, request: Request, name: str) -> Response:
        result = services.tool_call(tenant=request_tenant(request), name=name, arguments=request.data,
                                    transport=ToolCall.Transport.API)
        return Response(result)
