"""OpenAPI schema tweaks: unique component names for nested serializers, Bearer key security."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as BaseAutoSchema
from rest_framework import serializers

from memoryhub.validation import NOT_BLANK_REGEX


class AutoSchema(BaseAutoSchema):
    def get_serializer_name(self, serializer: Any, direction: str) -> str:
        # Views nest `InputSerializer`/`OutputSerializer` (house style); their bare names collide
        # across views, so nested classes are named after their qualified path ("SearchApiInput").
        cls = serializer.__class__
        if "." in cls.__qualname__:
            return cls.__qualname__.replace(".", "").replace("Serializer", "")
        return super().get_serializer_name(serializer, direction)

    def _map_serializer_field(self, field: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        # A CharField trims whitespace and then refuses a blank value: " " and "\u00a0" are refused
        # although `minLength: 1` allows them. The pattern says what the field does.
        schema = super()._map_serializer_field(field, direction, bypass_extensions)
        if (direction == "request" and isinstance(field, serializers.CharField) and field.trim_whitespace
                and not field.allow_blank and schema.get("type") == "string" and "pattern" not in schema
                and not any(isinstance(v, RegexValidator) for v in field.validators)):
            schema["pattern"] = NOT_BLANK_REGEX
        return schema

    def _map_serializer(self, serializer: Any, direction: str, bypass_extensions: bool = False) -> dict[str, Any]:
        # A serializer that refuses an empty object ("give at least one of ...") says so.
        schema = super()._map_serializer(serializer, direction, bypass_extensions)
        min_properties = getattr(serializer, "min_properties", None)
        if min_properties and direction == "request":
            schema["minProperties"] = min_properties
        if getattr(serializer, "additional_properties", True) is False and direction == "request":
            schema["additionalProperties"] = False
        # Properties of which a request may give one but not all ("an alias or a version").
        exclusive = getattr(serializer, "mutually_exclusive", None)
        if exclusive and direction == "request":
            schema["not"] = {"required": list(exclusive)}
        return schema

    def _get_request_for_media_type(self, serializer: Any, direction: str = "request") -> tuple[Any, bool]:
        # drf-spectacular marks a body required only when a property is; one that needs "at least
        # one of" its optional properties cannot be left out either.
        schema, required = super()._get_request_for_media_type(serializer, direction)
        return schema, required or bool(getattr(serializer, "min_properties", None))


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>"}


# Every failure has one body (memoryhub.exceptions.error_body); these are the statuses any
# operation can answer, and why. Documented for every operation by the hook below, so a client
# (and a schema-driven fuzzer) knows each of them.
ERROR_STATUSES: dict[str, str] = {
    "400": "Invalid input: `error.fields` names each field at fault (path, query or body).",
    "401": "No API key, or an unknown, revoked or deactivated one.",
    "403": "The API key lacks the scope this operation needs (`error.message` names it).",
    "404": "No such object for this tenant, or a path parameter outside its pattern.",
    "406": "The Accept header asks for something other than JSON.",
    "429": "Over `API_THROTTLE_RATE` for this key: retry after `Retry-After` seconds.",
    "503": "A backend is briefly unavailable: retry after `Retry-After` seconds.",
}
BODY_ERROR_STATUSES: dict[str, str] = {
    "413": "The request body is larger than `API_MAX_BODY_BYTES`.",
    "415": "The body is not `application/json`.",
}
ERROR_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["error"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["code", "message", "fields"],
            "properties": {
                "code": {"type": "string", "description": "Machine-readable: invalid, not_found, too_large, ..."},
                "message": {"type": "string"},
                "fields": {"type": "object", "additionalProperties": True,
                           "description": 'The fields at fault and their messages, nested like the input '
                                          '(`{"messages": {"1": {"role": ["..."]}}}`); `non_field_errors` for the '
                                          'request or an item as a whole (a body that is no JSON object).'},
            },
            "additionalProperties": True,
        },
    },
}
_RETRY_AFTER = {"Retry-After": {"schema": {"type": "integer"}, "description": "Seconds to wait."}}


def _top_level_alternation(pattern: str) -> bool:
    """Whether `pattern` has a "|" outside every group and character class (where the anchors bind)."""
    depth, in_class, i = 0, False, 0
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "|" and depth == 0:
            return True
        i += 1
    return False


def _exact_path_parameters(operation: dict[str, Any]) -> None:
    """A path parameter's pattern as the route means it: drf-spectacular anchors a route's group as
    "^srd|lore$", which reads "^srd" or "lore$" and admits "srdTRUE"; and a route's digits are never
    negative. A schema that admits what the routes refuse sends clients (and schemathesis) astray."""
    for parameter in operation.get("parameters", []):
        if parameter.get("in") != "path":
            continue
        schema = parameter.get("schema", {})
        pattern = schema.get("pattern")
        if pattern and pattern.startswith("^") and pattern.endswith("$") and _top_level_alternation(pattern):
            schema["pattern"] = f"^(?:{pattern[1:-1]})$"
        if schema.get("type") == "integer":
            schema.setdefault("minimum", 0)


def document_errors(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict[str, Any]:
    """drf-spectacular postprocessing hook: the error responses of every operation, and path parameters
    as exact as the routes."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    ref = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path_item in result.get("paths", {}).values():
        for operation in path_item.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            _exact_path_parameters(operation)
            statuses = dict(ERROR_STATUSES)
            if "requestBody" in operation:
                statuses.update(BODY_ERROR_STATUSES)
            for status, description in statuses.items():
                response: dict[str, Any] = {"description": description, "content": ref}
                if status in ("429", "503"):
                    response["headers"] = _RETRY_AFTER
                operation["responses"].setdefault(status, response)
            # A view may declare an error status of its own (a 409 with its reason): it answers
            # with the same body, so it gets the same schema. One declared as a bare object only to
            # carry an example (drf-spectacular drops examples of a response without a schema) gets
            # it too, keeping the example.
            for status, declared in operation["responses"].items():
                if status[0] not in "45":
                    continue
                if "content" not in declared:
                    declared["content"] = ref
                    continue
                for media in declared["content"].values():
                    if media.get("schema", {}).get("type") == "object" and "properties" not in media["schema"]:
                        media["schema"] = {"$ref": "#/components/schemas/Error"}
    return result
