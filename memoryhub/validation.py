"""Input the API must refuse before it reaches PostgreSQL or Python's limits.

DRF's `CharField` already refuses NUL and lone surrogates; free-form JSON (`meta`) and the JSON
parser did not, and the database or the interpreter turned them into 500s:
- PostgreSQL's `jsonb` stores neither `\\u0000` nor a lone surrogate, nor `Infinity` (which
  Python's `json` makes of `1e400`);
- Python's `json` raises `RecursionError`, not `ValueError`, on nesting about 1,000 deep.
"""

from __future__ import annotations

import json
import math
import unicodedata
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser as BaseJSONParser
from rest_framework.settings import api_settings

from memoryhub.urls_common import CLIENT_ID

# A string field trims whitespace and then refuses a blank value: this pattern (a character that
# `str.strip` does not remove) puts that in the schema (memoryhub.openapi.AutoSchema), so "\u00a0"
# is not a value the schema allows and the API refuses. Not `\S`: Python's whitespace includes
# \x1c-\x1f and \x85, ECMA's (what a schema-driven client may use) does not, and includes \ufeff.
NOT_BLANK_REGEX = r"[^\t-\r\x1c-\x20\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]"

# Deep enough for any real metadata, far from the interpreter's recursion limit.
META_MAX_DEPTH = 16
META_MAX_BYTES = 16_384


class JSONParser(BaseJSONParser):
    def parse(self, stream: Any, media_type: str | None = None, parser_context: dict | None = None) -> Any:
        try:
            return super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - nested too deeply.") from None


def _bad_string(text: str) -> str | None:
    if "\x00" in text:
        return "must not contain NUL (\\u0000) characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain unpaired surrogates (\\ud800-\\udfff)"
    return None


def json_value_problem(value: Any, *, max_depth: int = META_MAX_DEPTH) -> str | None:
    """Why `value` (parsed JSON) cannot be stored as `jsonb`, or None. Walks without recursion, so
    depth itself cannot exhaust the stack."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, (dict, list)):
            if depth > max_depth:
                return f"is nested more than {max_depth} levels deep"
            if isinstance(item, dict):
                for key, child in item.items():
                    problem = _bad_string(str(key))
                    if problem:
                        return f"keys {problem}"
                    stack.append((child, depth + 1))
            else:
                stack.extend((child, depth + 1) for child in item)
        elif isinstance(item, str):
            problem = _bad_string(item)
            if problem:
                return f"strings {problem}"
        elif isinstance(item, float) and not math.isfinite(item):
            return "numbers must be finite (1e400 is out of range)"
    return None


class JSONObjectField(serializers.DictField):
    """A JSON object stored as `jsonb`: refuses what PostgreSQL cannot store, and bounds its size."""

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("help_text", f"Any JSON object, at most {META_MAX_DEPTH} levels deep and "
                                       f"{META_MAX_BYTES} bytes; strings without NUL or unpaired surrogates.")
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> dict:
        value = super().to_internal_value(data)
        problem = json_value_problem(value)
        if problem is None and len(json.dumps(value, ensure_ascii=False).encode()) > META_MAX_BYTES:
            problem = f"must be at most {META_MAX_BYTES} bytes as JSON"
        if problem:
            raise serializers.ValidationError(f"Invalid object: {problem}.")
        return value


class _JSONType:
    """DRF coerces: `"text": 123` became "123", `"k": "5"` became 5, `"flag": 1` became true. A JSON
    API says what type each field has, and the schema promises it, so other types are refused."""

    json_types: tuple[type, ...] = ()

    def to_internal_value(self, data: Any) -> Any:
        if (isinstance(data, bool) and bool not in self.json_types) or not isinstance(data, self.json_types):
            expected = {str: "a string", bool: "a boolean", int: "an integer", float: "a number"}[self.json_types[-1]]
            raise serializers.ValidationError(f"Must be {expected}, not {type(data).__name__}.", code="invalid")
        return super().to_internal_value(data)  # type: ignore[misc]


class StrictCharField(_JSONType, serializers.CharField):
    json_types = (str,)


def has_visible(value: str) -> bool:
    """Whether the text shows anything: a zero-width space alone (Cf) is no text, though not blank to DRF."""
    return any(not ch.isspace() and unicodedata.category(ch) != "Cf" for ch in value)


class VisibleCharField(StrictCharField):
    """A query or a text that must say something: "\u200b" alone was a 200 with nothing found for a search,
    while a message of it was refused."""

    def __init__(self, **kwargs: Any) -> None:
        said = kwargs.get("help_text") or ""
        kwargs["help_text"] = f"{said} Must hold a visible character (not only spaces or zero-width ones).".strip()
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> Any:
        value = super().to_internal_value(data)
        if not has_visible(value):
            raise serializers.ValidationError("This field holds no visible character.", code="blank")
        return value


class StrictRegexField(_JSONType, serializers.RegexField):
    json_types = (str,)


class StrictChoiceField(_JSONType, serializers.ChoiceField):
    json_types = (str,)


class StrictBooleanField(_JSONType, serializers.BooleanField):
    json_types = (bool,)


class StrictIntegerField(_JSONType, serializers.IntegerField):
    json_types = (int,)


class StrictFloatField(_JSONType, serializers.FloatField):
    json_types = (int, float)


# DRF's own reading and writing of a date-time, unbound: it keeps no state of a serializer's.
_ISO = serializers.DateTimeField()


def iso_instant(value: datetime | None) -> str | None:
    """A moment as every response writes it (DRF's form: ISO 8601, UTC as `Z`): the context's and the
    tools' own dicts wrote "+00:00" where the serializers beside them wrote "Z"."""
    return _ISO.to_representation(value) if value is not None else None


# Far below datetime's limit, with room for the days that forgetting adds to a typed memory's time.
INSTANT_MAX_SECONDS = 32_503_680_000.0  # 3000-01-01T00:00:00Z
INSTANT_MIN = datetime.fromtimestamp(0, tz=UTC)
INSTANT_MAX = datetime.fromtimestamp(INSTANT_MAX_SECONDS, tz=UTC)


@extend_schema_field({"oneOf": [
    {"type": "number", "minimum": 0, "maximum": INSTANT_MAX_SECONDS, "description": "Unix seconds"},
    {"type": "string", "format": "date-time",
     "description": "ISO 8601; without an offset, UTC; from 1970-01-01T00:00:00Z to 3000-01-01T00:00:00Z"},
]})
class InstantField(serializers.Field):
    """A moment, as Unix seconds (seed 004 dates typed memories so) or as an ISO 8601 string (as
    messages' `created_at` are written): a client wrote one form to one endpoint and the other to
    the next, and got a 400 for the form it had just read back. Read back as ISO 8601, as every
    time the API returns. Both forms have one range, 1970 to 3000: "0001-01-01T00:00:00Z" was taken
    where -1 was refused, and a turn showed as "[0001-01-01 00:00]" in the context.
    `zero_is_unknown`: seed 004's 0.0 means "no time", never 1970, and so does the same moment
    written in ISO 8601."""

    default_error_messages = {
        "type": "Must be Unix seconds (a number) or an ISO 8601 date-time string, not {datatype}.",
        "range": f"Must be from {INSTANT_MIN:%Y-%m-%dT%H:%M:%SZ} to {INSTANT_MAX:%Y-%m-%dT%H:%M:%SZ}: Unix seconds "
                 f"between 0 and {INSTANT_MAX_SECONDS:.0f}, or an ISO 8601 string in that range.",
        "milliseconds": "This looks like milliseconds ({value} ms = {seconds} s); give Unix seconds.",
        "digits": "Unix seconds go as a JSON number ({value}), not a string; a string is an ISO 8601 date-time.",
    }

    def __init__(self, *, zero_is_unknown: bool = False, **kwargs: Any) -> None:
        self.zero_is_unknown = zero_is_unknown
        super().__init__(**kwargs)

    def to_internal_value(self, data: Any) -> datetime | None:
        if isinstance(data, (int, float)) and not isinstance(data, bool):
            if not math.isfinite(data) or not 0 <= data <= INSTANT_MAX_SECONDS:
                if math.isfinite(data) and 0 < data / 1000 <= INSTANT_MAX_SECONDS:  # JavaScript's Date.now()
                    self.fail("milliseconds", value=data, seconds=f"{data / 1000:.3f}".rstrip("0").rstrip("."))
                self.fail("range")
            if data == 0 and self.zero_is_unknown:
                return None
            return datetime.fromtimestamp(data, tz=UTC)
        if isinstance(data, str):
            if data.strip().isdigit():  # "1714557600": DRF's date-time error never said what went wrong
                self.fail("digits", value=data.strip())
            moment = _ISO.to_internal_value(data)
            if not INSTANT_MIN <= moment <= INSTANT_MAX:
                self.fail("range")
            if moment == INSTANT_MIN and self.zero_is_unknown:
                return None
            return moment
        self.fail("type", datatype=type(data).__name__)
        return None  # not reached: fail raises

    def to_representation(self, value: datetime) -> str:
        return _ISO.to_representation(value)


class ClosedSerializerMixin:
    """An object that refuses keys it does not define, and whose schema says so
    (`additionalProperties: false`, memoryhub.openapi.AutoSchema): a misspelt filter is an error,
    not a filter silently dropped."""

    additional_properties = False

    def to_internal_value(self, data: Any) -> Any:
        if not isinstance(data, Mapping):
            # DRF's "Invalid data. Expected a dictionary, but got list." spoke Python and named no place.
            where = "The request body must" if self.parent is None else "Must"  # type: ignore[attr-defined]
            raise serializers.ValidationError(
                {api_settings.NON_FIELD_ERRORS_KEY: [f"{where} be a JSON object, not {type(data).__name__}."]},
                code="invalid")
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))  # type: ignore[attr-defined]
            if unknown:
                raise serializers.ValidationError({key: ["Unknown field."] for key in unknown})
        try:
            return super().to_internal_value(data)  # type: ignore[misc]
        except serializers.ValidationError as exc:
            if isinstance(exc.detail, dict):
                fields = self.fields  # type: ignore[attr-defined]
                exc.detail = {name: _explained(fields.get(name), errors) for name, errors in exc.detail.items()}
            raise


# Beyond this many, a choice error points to the schema instead of listing them.
_MAX_LISTED_CHOICES = 30

# Patterns said in words beside the regex: a client id's lookahead ("not dots alone") is read by few.
_PATTERN_WORDS = {
    rf"^{CLIENT_ID}$": "1 to 128 letters, digits or _ . : @ -, not dots alone: \".\" and \"..\" are path "
                       "segments a URL cannot carry as an id",
}


def _explained(field: Any, errors: Any) -> Any:
    """DRF's "is not a valid choice." and "does not match the required pattern." leave a client guessing
    what would do: the allowed values, or the pattern, are added (a field that lists them itself, such
    as an emotion's, is left as it is). A list field's item errors are explained by its child."""
    if isinstance(errors, dict) and isinstance(field, serializers.ListField):
        return {key: _explained(field.child, value) for key, value in errors.items()}
    if not isinstance(errors, list):
        return errors
    explained = []
    for error in errors:
        code = getattr(error, "code", None)
        text = str(error)
        if code == "invalid_choice" and isinstance(field, serializers.ChoiceField) and "allowed" not in text:
            choices = [str(choice) for choice in field.choices]
            listed = ", ".join(choices) if len(choices) <= _MAX_LISTED_CHOICES else "see the API schema"
            error = serializers.ErrorDetail(f"{text.rstrip('.')}; allowed: {listed}.", code=code)
        elif code == "invalid" and isinstance(field, serializers.RegexField) and "pattern" in text:
            pattern = next((v.regex.pattern for v in field.validators if hasattr(v, "regex")), None)
            if pattern:
                words = f" ({_PATTERN_WORDS[pattern]})" if pattern in _PATTERN_WORDS else ""
                error = serializers.ErrorDetail(f"{text.rstrip('.')}: {pattern}{words}", code=code)
        explained.append(error)
    return explained


def query_data(query_params: Any) -> dict[str, str]:
    """Query parameters as plain data for a serializer. Given the `QueryDict` itself, DRF reads it
    like an HTML form and turns an empty optional value (`?status=`) into "absent", so the default
    was used for a value the schema forbids; as a dict, `""` is validated like any other value."""
    return {key: query_params.get(key) for key in query_params}
