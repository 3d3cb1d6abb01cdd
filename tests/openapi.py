"""Reading parts of the OpenAPI schema in tests."""

from __future__ import annotations


def schema_parameter(schema: dict, path: str, method: str, name: str) -> dict:
    [parameter] = [p for p in schema["paths"][path][method]["parameters"] if p["name"] == name]
    return parameter["schema"]


def schema_body(schema: dict, path: str, method: str, media_type: str = "application/json") -> dict:
    body = schema["paths"][path][method]["requestBody"]["content"][media_type]["schema"]
    return schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[1]]
