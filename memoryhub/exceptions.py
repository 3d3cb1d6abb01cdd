"""One error type for business rules and one error format for every API failure.

Every 4xx/5xx body is `{"error": {"code": ..., "message": ..., "fields": {...}}}`, whether it
comes from validation, authentication, throttling, a service's `ApplicationError`, a missing
route or an unexpected exception.
"""

from __future__ import annotations

import functools
import logging
import re
import sys
from typing import Any

from django.conf import settings
from django.core.exceptions import DisallowedHost, PermissionDenied, RequestDataTooBig
from django.db import OperationalError as DatabaseOperationalError
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.defaults import page_not_found
from rest_framework import exceptions as drf_exceptions
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler

from memoryhub.llm import LLMError, LLMUnavailable

logger = logging.getLogger(__name__)

# Retry-After of a 503 for a model endpoint that failed transiently: the first retry delay of
# archival jobs (ARCHIVAL_RETRY_BASE_SECONDS' default), after its own client already retried.
UPSTREAM_RETRY_AFTER_SECONDS = 30


class ApplicationError(Exception):
    """A business rule refused the request. `field` names the input at fault, when there is one."""

    status_code = 400

    def __init__(
        self,
        message: str,
        *,
        code: str = "invalid",
        field: str | None = None,
        status_code: int | None = None,
        extra: dict[str, Any] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.field = field
        self.extra = extra or {}
        self.headers = headers or {}
        if status_code is not None:
            self.status_code = status_code


class NotFound(ApplicationError):
    status_code = 404

    def __init__(self, message: str = "Not found.", *, field: str | None = None) -> None:
        super().__init__(message, code="not_found", field=field)


def error_body(code: str, message: str, fields: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "fields": fields or {}}}


def _flatten(detail: Any) -> Any:
    """DRF's ErrorDetail trees → plain lists of strings, keyed by field path."""
    if isinstance(detail, dict):
        return {str(k): _flatten(v) for k, v in detail.items()}
    if isinstance(detail, list):
        if all(isinstance(item, str) for item in detail):
            return [str(item) for item in detail]
        return [_flatten(item) for item in detail]
    return [str(detail)]


def _codes(detail: Any) -> Any:
    if isinstance(detail, dict):
        return {str(k): _codes(v) for k, v in detail.items()}
    if isinstance(detail, list):
        return [_codes(item) for item in detail]
    return getattr(detail, "code", None)


def _first_message(fields: dict[str, Any]) -> str:
    """The first error with the path to its field, `messages[1].text: This field is required.`:
    "messages: …" alone left a client to search a batch for the item at fault."""
    for name, value in fields.items():
        # The request as a whole ("Give at least one of circle, aliases, bio."): no field to name.
        path = "" if name == api_settings.NON_FIELD_ERRORS_KEY else name
        while isinstance(value, (list, dict)) and value:
            if isinstance(value, dict):
                key, value = next(iter(value.items()))
                if key.isdigit():
                    path += f"[{key}]"
                elif key != api_settings.NON_FIELD_ERRORS_KEY:  # the item itself, not a field of it
                    path += f".{key}"
            elif all(isinstance(item, str) for item in value):
                value = value[0]
            else:  # a list serializer's errors: one entry per item, empty for the valid ones
                index = next((i for i, item in enumerate(value) if item), 0)
                path += f"[{index}]"
                value = value[index]
        return f"{path.lstrip('.')}: {value}" if path else str(value)
    return "Invalid input."


def api_exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, ApplicationError):
        fields = {exc.field: [exc.message]} if exc.field else {}
        body = error_body(exc.code, exc.message, fields)
        body["error"].update(exc.extra)
        return Response(body, status=exc.status_code, headers=exc.headers or None)
    if isinstance(exc, RequestDataTooBig):
        # Django raises it while DRF reads the body; unhandled it was a 500.
        return Response(error_body("too_large", f"The request body is larger than "
                                                f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes."), status=413)
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()

    response = drf_exception_handler(exc, context)
    if response is None and isinstance(exc, LLMError):
        # The embedding or LLM endpoint a request needs (a document's or a query's vectors) is
        # away or refuses: nothing was stored, the client may retry. Unhandled it was a 500.
        logger.warning("model endpoint unavailable: %s: %s", type(exc).__name__, exc)
        headers = {"Retry-After": str(UPSTREAM_RETRY_AFTER_SECONDS)} if isinstance(exc, LLMUnavailable) else {}
        return Response(error_body("upstream_unavailable", "The embedding or language model endpoint is "
                                                           "unavailable; retry shortly."), status=503, headers=headers)
    if response is None and _is_backend_outage(exc):
        # A request that truly needed Redis (nothing does today: intake, reads and the rate limit
        # all work without it) is refused for a while, not failed.
        logger.warning("backend unavailable: %s: %s", type(exc).__name__, exc)
        return Response(error_body("unavailable", "Temporarily unavailable, retry shortly."), status=503,
                        headers={"Retry-After": str(max(1, round(settings.REDIS_RETRY_SECONDS)))})
    if response is None:
        problem = _vector_width_problem()
        if problem:
            # Not a bug to hunt in the log: the database's vector columns are of another width than the
            # embedder's (EMBEDDING_DIMENSIONS changed without `embedding_resize`), and every vector fails.
            logger.error("%s (%s: %s)", problem, type(exc).__name__, exc)
            return Response(error_body("misconfigured", problem), status=503)
        logger.exception("unhandled API error", exc_info=exc)
        return Response(error_body("server_error", "Internal server error."), status=500)

    if isinstance(exc, drf_exceptions.ValidationError):
        detail = exc.detail if isinstance(exc.detail, dict) else {api_settings.NON_FIELD_ERRORS_KEY: exc.detail}
        if _codes(detail) == {api_settings.NON_FIELD_ERRORS_KEY: ["null"]}:
            # A body of `null`: DRF said "No data provided".
            detail = {api_settings.NON_FIELD_ERRORS_KEY: ["The request body must be a JSON object, not null."]}
        fields = _flatten(detail)
        response.data = error_body("invalid", _first_message(fields), fields)
    else:
        code = exc.get_codes() if isinstance(exc, drf_exceptions.APIException) else "error"
        message = str(getattr(exc, "detail", exc))
        response.data = error_body(code if isinstance(code, str) else "error", message)
    return response


def _vector_width_problem() -> str | None:
    from django.apps import apps

    if not apps.is_installed("rag"):
        return None
    from rag import vector_width

    try:
        return vector_width.problem()
    except Exception:  # the database away: the answer stays the 500 it was
        return None


def _is_backend_outage(exc: Exception) -> bool:
    """The database, Redis or the broker unreachable (the last two's libraries are imported only if in
    use). The database's was a 500, though a client may retry it as it retries a broker outage."""
    psycopg = sys.modules.get("psycopg")
    if isinstance(exc, DatabaseOperationalError) or (psycopg is not None and isinstance(exc, psycopg.OperationalError)):
        return True
    redis = sys.modules.get("redis.exceptions")
    if redis is not None and isinstance(exc, (redis.ConnectionError, redis.TimeoutError)):
        return True
    kombu = sys.modules.get("kombu.exceptions")
    return kombu is not None and isinstance(exc, kombu.OperationalError)


def json_400(request: HttpRequest, exception: Exception | None = None) -> JsonResponse:
    """Django's own 400s (a suspicious request) in the one error format. A host outside
    ALLOWED_HOSTS was an empty HTML page, and an operator behind a new host name had no clue why."""
    if isinstance(exception, DisallowedHost):
        host = request.META.get("HTTP_HOST", "")[:255]  # request.get_host() is what raised
        return JsonResponse(error_body("disallowed_host", f"This service does not answer to the host {host!r}: "
                                                          f"add it to ALLOWED_HOSTS."), status=400)
    return JsonResponse(error_body("bad_request", "Bad request."), status=400)


def json_404(request: HttpRequest, exception: Exception | None = None) -> HttpResponse:
    """No route. Where an API route would match but for a path parameter outside its pattern ("/worlds/DnD5e/
    search", a user id with a Cyrillic letter or of 129 characters), the 404 names the parameter and its
    pattern: a bare "Not found." read as a wrong route. Still a 404: nothing is at that path, and the schema's
    path patterns (unanchored in OpenAPI) cannot promise a client more. The admin is read in a browser: its
    404 (a world's quality page for a world deleted meanwhile) is Django's page, not JSON."""
    if request.path.startswith("/admin/"):
        return page_not_found(request, exception or Http404())
    if request.path.startswith("/api/"):
        problem = _path_parameter_problem(request.path.lstrip("/"))
        if problem is not None:
            name, value, pattern = problem
            message = f"Not found: {name} {value[:80]!r} does not match the pattern {pattern}."
            return JsonResponse(error_body("not_found", message, {name: [f"Does not match the pattern {pattern}."]}),
                                status=404)
    return JsonResponse(error_body("not_found", "Not found."), status=404)


def _named_groups(regex: str) -> list[tuple[int, int, str, str]]:
    """(start, end, name, body) of each `(?P<name>body)` in `regex`, bodies with nested groups whole."""
    found = []
    for match in re.finditer(r"\(\?P<(\w+)>", regex):
        depth, i = 1, match.end()
        while i < len(regex) and depth:
            if regex[i] == "\\":
                i += 2
                continue
            if regex[i] == "[":  # a class may hold parentheses: skip it whole
                i = regex.index("]", i + 2 if regex[i + 1:i + 2] in ("]", "^") else i + 1) + 1
                continue
            depth += {"(": 1, ")": -1}.get(regex[i], 0)
            i += 1
        found.append((match.start(), i, match.group(1), regex[match.end():i - 1]))
    return found


@functools.cache
def _api_routes() -> tuple[tuple[re.Pattern[str], tuple[tuple[str, re.Pattern[str], str], ...]], ...]:
    """Every route as (its regex with each parameter relaxed to one path segment, its parameters' own
    patterns)."""
    from django.urls import URLPattern, URLResolver, get_resolver

    routes = []

    def walk(patterns: list, prefix: str) -> None:
        for entry in patterns:
            regex = prefix + entry.pattern.regex.pattern.lstrip("^")
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, regex.removesuffix("\\Z").removesuffix("$"))
            elif isinstance(entry, URLPattern):
                groups = _named_groups(regex)
                relaxed, last = [], 0
                for start, end, name, _ in groups:
                    relaxed.append(regex[last:start] + f"(?P<{name}>[^/]+)")
                    last = end
                relaxed.append(regex[last:])
                routes.append((re.compile("".join(relaxed)),
                               tuple((name, re.compile(body), body) for _, _, name, body in groups)))

    walk(get_resolver().url_patterns, "")
    return tuple(routes)


def _path_parameter_problem(path: str) -> tuple[str, str, str] | None:
    for relaxed, parameters in _api_routes():
        match = relaxed.fullmatch(path)
        if match is None:
            continue
        for name, own, body in parameters:
            value = match.group(name)
            if own.fullmatch(value) is None:
                return name, value, body
    return None


def json_500(request: HttpRequest) -> JsonResponse:
    return JsonResponse(error_body("server_error", "Internal server error."), status=500)
