"""Tools over DRF: `GET /api/v1/tools` lists them, `POST /api/v1/tools/{name}` calls one with its
arguments as the JSON body. For keys with the `tools` scope."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryhub.auth import request_tenant
from memoryhub.models import ApiKey
from memoryhub.openapi import AutoSchema
from tools import registry, services
from tools.models import ToolCall

TOOLS = (ApiKey.Scope.TOOLS,)
AUTH_ERRORS = {
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the 'tools' scope, or one the tool needs besides it (the "
                                     "memory tools, memory_search, memory_context and profile_get: 'memory'; "
                                     "`error.code` missing_scope)."),
}


def _scopes(request: Request) -> list[str]:
    return list(request.user.api_key.scopes)


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
        # Only those the key may call: a game master's `tools`-only key is not shown the chat memory tools.
        tools = [self.ToolSerializer(t).data for t in registry.tools_all(_scopes(request))]
        return Response({"tools": tools})


TOOL_ERRORS = {
    400: OpenApiResponse(description="Arguments refused by the tool's input schema, or a `language` that is no ISO 639 "
                                     "code (rules_lookup, lore_search); `error.fields` names the argument (a dotted "
                                     "path for nested ones)."),
    404: OpenApiResponse(description="Unknown world, or nothing published in it (world tools); unknown campaign, party "
                                     "or NPC, or a hero the party does not have (campaign tools; npc_profile's "
                                     "hero_id)."),
    409: OpenApiResponse(description="The campaign is finished and archived (campaign tools; `error.code` archived): "
                                     "it is out of the tools."),
    **AUTH_ERRORS,
}


class ToolCallApi(APIView):
    """Calls the tool named in the URL. Every registered tool gets its own route and operation
    (`tool_view`), so the schema documents each tool's arguments; this catch-all answers 404 for
    any other name and stays out of the schema."""

    required_scopes = TOOLS

    @extend_schema(exclude=True)
    def post(self, request: Request, name: str) -> Response:
        result = services.tool_call(tenant=request_tenant(request), name=name, arguments=request.data,
                                    transport=ToolCall.Transport.API, scopes=_scopes(request))
        return Response(result)


class ToolSchema(AutoSchema):
    """A tool's body is a JSON Schema given as is, which drf-spectacular leaves optional; the body
    (the arguments object) is required."""

    def _get_request_body(self, direction: str = "request") -> dict[str, Any] | None:
        body = super()._get_request_body(direction)
        if body:
            body["required"] = True
        return body


def tool_view(tool: registry.Tool) -> Callable[..., Any]:
    """The route of one tool, documented with the tool's own JSON Schema as its request body."""

    class OneToolApi(ToolCallApi):
        schema = ToolSchema()

        @extend_schema(
            operation_id=f"tool_{tool.name}", summary=tool.name, description=tool.description,
            request={"application/json": tool.input_schema},
            responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description="The tool's JSON result, with "
                                                                             "`sources` (what it read)."),
                       **TOOL_ERRORS},
        )
        def post(self, request: Request, name: str = tool.name) -> Response:
            return super().post(request, name=tool.name)

    OneToolApi.__name__ = OneToolApi.__qualname__ = "Tool" + tool.name.title().replace("_", "") + "Api"
    return OneToolApi.as_view()
