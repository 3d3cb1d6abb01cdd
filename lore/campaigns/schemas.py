"""The game-master documents of seed 003 §8.5 (`schemas/*.schema.json`, JSON Schema draft 2020-12).

Every engine write is checked here before anything else; a refusal names each JSON path at fault
(`/relations_delta/0/delta`), so the engine can fix the field without guessing.
"""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from typing import Any

import jsonschema
from django.conf import settings

from memoryhub.exceptions import ApplicationError
from memoryhub.validation import json_value_problem

SCHEMAS = {
    "episodic_summary": "episodic_summary.schema.json",
    "npc_profile": "npc_profile.schema.json",
    "artcard": "artcard.schema.json",
}

_FORMATS = jsonschema.FormatChecker(formats=())


@_FORMATS.checks("date-time", raises=ValueError)
def _date_time(value: object) -> bool:
    # RFC 3339 needs a date, a time and an offset; fromisoformat alone would take a bare date.
    if not isinstance(value, str):
        return True
    if "T" not in value.upper() or not (value.endswith(("Z", "z")) or value[-6] in "+-"):
        raise ValueError("not an RFC 3339 date-time with an offset")
    datetime.fromisoformat(value[:-1] + "+00:00" if value[-1] in "Zz" else value)
    return True


@cache
def validator(name: str) -> jsonschema.Draft202012Validator:
    schema = json.loads((settings.BASE_DIR / "schemas" / SCHEMAS[name]).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema, format_checker=_FORMATS)


def _to_openapi(node: Any, defs: dict[str, Any]) -> Any:
    """Draft 2020-12 → the OpenAPI 3.0 subset: `$defs` references inlined, `const` as a one-value
    enum; what 3.0 cannot say (`propertyNames`, a list of types) is left out of the published
    schema, still enforced by the validator, and named in the operation's description."""
    if isinstance(node, list):
        return [_to_openapi(item, defs) for item in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        return _to_openapi(defs[node["$ref"].rsplit("/", 1)[-1]], defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("$schema", "$id", "$defs", "title", "propertyNames") or (key == "type" and isinstance(value, list)):
            continue
        if key == "const":
            out["enum"] = [value]
        elif key in ("properties", "$defs"):
            out[key] = {name: _to_openapi(child, defs) for name, child in value.items()}
        else:
            out[key] = _to_openapi(value, defs)
    return out


@cache
def openapi_schema(name: str) -> dict[str, Any]:
    """The document's schema as an OpenAPI 3.0 request body, for the API's published schema."""
    schema = json.loads((settings.BASE_DIR / "schemas" / SCHEMAS[name]).read_text())
    return _to_openapi(schema, schema.get("$defs", {}))


def _path(error: jsonschema.ValidationError) -> str:
    path = "/" + "/".join(str(part) for part in error.absolute_path)
    # A missing or unexpected property belongs to the object it is missing from; name it precisely.
    if error.validator == "required":
        missing = error.message.split("'")[1] if "'" in error.message else ""
        return f"{path.rstrip('/')}/{missing}" if missing else path
    return path


def document_errors(name: str, document: Any) -> dict[str, list[str]]:
    """JSON path → messages; empty when the document is valid."""
    errors: dict[str, list[str]] = {}
    for error in sorted(validator(name).iter_errors(document), key=lambda e: list(map(str, e.absolute_path))):
        errors.setdefault(_path(error), []).append(error.message)
    return errors


def document_validate(name: str, document: Any) -> None:
    errors = document_errors(name, document)
    # What jsonb cannot store (NUL, lone surrogates) would otherwise surface as a database error.
    problem = None if errors else json_value_problem(document, max_depth=8)
    if problem:
        errors = {"/": [f"Invalid document: {problem}."]}
    if errors:
        first = next(iter(errors))
        raise ApplicationError(f"The {name.replace('_', ' ')} does not match schemas/{SCHEMAS[name]}: "
                               f"{first}: {errors[first][0]}", code="schema_invalid",
                               extra={"fields": errors})
