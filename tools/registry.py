"""The tool registry: each tool is a name, a description, a JSON Schema for its arguments and a
read-only function `(tenant, args) -> JSON`. DRF and the MCP server both serve what is registered
here, so a tool added once is reachable over every transport.

Tools register themselves with `register(Tool(...))` when their module is imported by the tools
app's `ready()`: `tools/builtin.py` (rules, lore, memory) and `tools/campaign.py` (session_fetch,
npc_profile, art_suggest over `lore.campaigns`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from jsonschema import Draft202012Validator, validators
from jsonschema.exceptions import ValidationError

from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Tenant
from memoryhub.validation import json_value_problem

ToolFunction = Callable[[Tenant, dict[str, Any]], dict[str, Any]]
NAME_PATTERN = r"^[a-z][a-z0-9_]{0,63}$"


# JSON Schema counts 5.0 as an integer; the tools slice and count with these values, so only real
# integers pass (booleans never did).
_TYPES = Draft202012Validator.TYPE_CHECKER.redefine(
    "integer", lambda checker, value: isinstance(value, int) and not isinstance(value, bool))
StrictValidator = validators.extend(Draft202012Validator, type_checker=_TYPES)


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    function: ToolFunction
    # Tools only read; the flag is what MCP clients are told (`readOnlyHint`).
    read_only: bool = True
    # Scopes a key needs besides `tools`: a user's chat memory is the `memory` scope's on the REST API, and
    # a game master's `tools`-only key read every chat user's profile and memories through the tools.
    scopes: tuple[str, ...] = ()

    def missing_scopes(self, scopes: Collection[str] | None) -> list[str]:
        """The scopes of `scopes` this tool needs and lacks; none when `scopes` is None (a server an
        operator started for a tenant, `mcp_serve --tenant`, holds no key)."""
        return [] if scopes is None else [s for s in self.scopes if s not in scopes]

    def validator(self) -> Draft202012Validator:
        return StrictValidator(self.input_schema)


_REGISTRY: dict[str, Tool] = {}


def register(tool: Tool) -> Tool:
    Draft202012Validator.check_schema(tool.input_schema)
    if tool.name in _REGISTRY and _REGISTRY[tool.name].function is not tool.function:
        raise ValueError(f"Tool {tool.name!r} is registered twice.")
    _REGISTRY[tool.name] = tool
    return tool


def tool_get(name: str) -> Tool:
    tool = _REGISTRY.get(name)
    if tool is None:
        raise NotFound(f"No tool {name!r}; GET /api/v1/tools lists them.")
    return tool


def tools_all(scopes: Collection[str] | None = None) -> list[Tool]:
    """The tools, by name; with `scopes`, those a key holding them may call."""
    return sorted((t for t in _REGISTRY.values() if not t.missing_scopes(scopes)), key=lambda t: t.name)


def _error_field(error: ValidationError) -> str:
    """The argument at fault as a dotted path ("filters.languages.0"); for a missing or an unknown
    property, that property's name rather than its parent's."""
    path = [str(p) for p in error.absolute_path]
    if error.validator == "required":
        missing = [name for name in error.validator_value if name not in (error.instance or {})]
        path.append(missing[0] if missing else "")
    elif error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = set(error.schema.get("properties", {}))
        extra = sorted(k for k in error.instance if k not in allowed)
        path.append(extra[0] if extra else "")
    elif error.validator in ("anyOf", "oneOf") and not path:
        # "term or rule_id": name the first alternative's required argument.
        for option in error.validator_value:
            if option.get("required"):
                path.append(option["required"][0])
                break
    return ".".join(p for p in path if p) or "arguments"


def _error_message(error: ValidationError) -> str:
    if error.validator in ("anyOf", "oneOf"):
        names = [" and ".join(o.get("required", [])) for o in error.validator_value]
        said = set(error.instance) if isinstance(error.instance, dict) else set()
        given = [o for o in error.validator_value if o.get("required") and set(o["required"]) <= said]
        # oneOf with two given: rules_lookup answered by rule_id and silently dropped the term.
        return f"Give {' or '.join(n for n in names if n)}{', not both' if len(given) > 1 else ''}."
    if error.validator == "pattern" and error.validator_value == r"\S":
        return "must not be blank."
    return error.message


def arguments_validate(tool: Tool, arguments: Any) -> dict[str, Any]:
    """Check the arguments against the tool's input schema; the first error (by path) becomes a
    400 naming the argument."""
    if not isinstance(arguments, dict):
        raise ApplicationError("Tool arguments must be a JSON object.", field="arguments")
    problem = json_value_problem(arguments)
    if problem:
        raise ApplicationError(f"Arguments: {problem}.", field="arguments")
    errors = sorted(tool.validator().iter_errors(arguments), key=lambda e: (list(map(str, e.absolute_path)),
                                                                            e.validator))
    if errors:
        error = errors[0]
        field = _error_field(error)
        message = _error_message(error)
        # "Give term or rule_id." names its arguments itself: "term: Give term or rule_id." said one twice.
        alternatives = error.validator in ("anyOf", "oneOf") and not error.absolute_path
        raise ApplicationError(message if alternatives else f"{field}: {message}", field=field)
    return arguments
