"""HTTP request metrics per route: count by status, latency.

Labelled by the route template (`api/v1/users/{user_id}/sessions/{session_id}/messages`), never
the raw path, so series stay bounded whatever clients send; a path no route matches is
`<unmatched>`, an unknown method `other`. 5xx rates come from the `status` label:
`sum by (route) (rate(memoryhub_http_requests_total{status=~"5.."}[5m]))`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from functools import lru_cache

from django.conf import settings
from django.http import HttpRequest, HttpResponse

from memoryhub import metrics

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_GROUP = re.compile(r"\(\?P<(\w+)>(?:[^()]|\([^()]*\))*\)")  # a named group, one level of nesting
_CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")  # path() converters: <int:job_id>


@lru_cache(maxsize=1024)
def route_template(route: str) -> str:
    """`^users/(?P<user_id>[…]{1,128})$` (re_path) or `jobs/<int:job_id>` (path) → `users/{user_id}`."""
    template = _GROUP.sub(lambda m: "{" + m.group(1) + "}", route)
    template = _CONVERTER.sub(lambda m: "{" + m.group(1) + "}", template)
    return "/" + template.replace("^", "").replace("$", "").replace("\\", "").lstrip("/")


class RequestMetricsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response
        self.static_prefix = "/" + settings.STATIC_URL.strip("/") + "/"

    def __call__(self, request: HttpRequest) -> HttpResponse:
        started = time.perf_counter()
        response = self.get_response(request)  # Django turns an exception into a 500 response here
        match = getattr(request, "resolver_match", None)
        if match is not None and match.route:
            route = route_template(match.route)
        elif request.path.startswith(self.static_prefix):
            route = self.static_prefix + "{path}"  # served by WhiteNoise before any URL is resolved
        else:
            route = "<unmatched>"
        method = request.method if request.method in METHODS else "other"
        metrics.HTTP_REQUESTS.labels(method, route, str(response.status_code)).inc()
        metrics.HTTP_LATENCY.labels(method, route).observe(time.perf_counter() - started)
        return response
