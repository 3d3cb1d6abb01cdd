"""OpenAPI schema tweaks: unique component names for nested serializers, Bearer key security."""

from __future__ import annotations

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema as BaseAutoSchema


class AutoSchema(BaseAutoSchema):
    def get_serializer_name(self, serializer: Any, direction: str) -> str:
        # Views nest `InputSerializer`/`OutputSerializer` (house style); their bare names collide
        # across views, so nested classes are named after their qualified path ("SearchApiInput").
        cls = serializer.__class__
        if "." in cls.__qualname__:
            return cls.__qualname__.replace(".", "").replace("Serializer", "")
        return super().get_serializer_name(serializer, direction)


class ApiKeyAuthenticationScheme(OpenApiAuthenticationExtension):
    target_class = "memoryhub.auth.ApiKeyAuthentication"
    name = "ApiKey"

    def get_security_definition(self, auto_schema: Any) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "Authorization: Bearer <API key>"}
