"""Bearer API keys: `Authorization: Bearer mh_…`. Each key belongs to one tenant."""

from __future__ import annotations

import hashlib
import secrets
import threading
import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.utils import timezone
from rest_framework import authentication, exceptions, permissions, throttling
from rest_framework.request import Request

from memoryhub.models import ApiKey, Tenant
from memoryhub.throttling import hit as rate_hit

KEY_PREFIX = "mh_"
# A key is touched at most this often, so authentication is not a write per request.
LAST_USED_RESOLUTION = timedelta(seconds=60)
INVALID_KEY_MESSAGE = "Invalid API key."


class _KeyCache:
    """Valid keys (with their tenant) by hash, for `API_KEY_CACHE_SECONDS` in this process.

    Authentication was one query per request, a tenth of a search's database round trips. A key
    revoked, or a tenant deactivated, elsewhere (the admin, another process) is therefore refused
    here at most that many seconds later; `api_key_revoke` also drops the key from the cache of
    the process it runs in at once. Only keys found valid are kept: an unknown or refused key is
    looked up every time, as before. Entries are shared between a process's threads; nothing
    writes to them but the `last_used_at` stamp.
    """

    PRUNE_ABOVE = 10_000

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: dict[str, tuple[float, ApiKey]] = {}  # key hash → (expires, key + tenant)

    def get(self, key_hash: str) -> ApiKey | None:
        entry = self._entries.get(key_hash)
        if entry is None or entry[0] <= _clock():
            return None
        return entry[1]

    def put(self, key_hash: str, key: ApiKey, ttl: float) -> None:
        if ttl <= 0:
            return
        now = _clock()
        with self._lock:
            if len(self._entries) > self.PRUNE_ABOVE:
                self._entries = {h: e for h, e in self._entries.items() if e[0] > now}
            self._entries[key_hash] = (now + ttl, key)

    def forget(self, key_hash: str) -> None:
        with self._lock:
            self._entries.pop(key_hash, None)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


_clock = time.monotonic  # tests move it forward
key_cache = _KeyCache()


def hash_key(raw_key: str) -> str:
    # Keys carry 256 bits of randomness, so a fast hash is enough: there is nothing to brute-force.
    return hashlib.sha256(raw_key.encode()).hexdigest()


def generate_key() -> tuple[str, str]:
    """Return (raw key, visible prefix)."""
    head = secrets.token_hex(4)
    raw = f"{KEY_PREFIX}{head}_{secrets.token_urlsafe(32)}"
    return raw, f"{KEY_PREFIX}{head}"


@dataclass(frozen=True)
class TenantPrincipal:
    """`request.user` for API calls: the tenant a key belongs to."""

    tenant: Tenant
    api_key: ApiKey
    is_authenticated: bool = True
    is_anonymous: bool = False

    @property
    def pk(self) -> int:
        return self.api_key.pk


def key_touch(key: ApiKey) -> None:
    """Stamp the key's `last_used_at` (at most once a `LAST_USED_RESOLUTION`): how an operator tells a
    key still in use from one safe to revoke, whichever door (REST or MCP) its client uses."""
    now = timezone.now()
    if key.last_used_at is None or now - key.last_used_at > LAST_USED_RESOLUTION:
        ApiKey.objects.filter(pk=key.pk).update(last_used_at=now)
        key.last_used_at = now


class ApiKeyAuthentication(authentication.BaseAuthentication):
    keyword = "Bearer"

    def authenticate(self, request: Request) -> tuple[TenantPrincipal, ApiKey] | None:
        header = authentication.get_authorization_header(request).decode("latin-1")
        if not header:
            return None
        scheme, _, raw = header.partition(" ")
        if scheme.lower() != self.keyword.lower() or not raw.strip():
            raise exceptions.AuthenticationFailed("Use 'Authorization: Bearer <api key>'.")
        key_hash = hash_key(raw.strip())
        key = key_cache.get(key_hash)
        if key is None:
            key = ApiKey.objects.select_related("tenant").filter(key_hash=key_hash).first()
            # One answer for unknown, revoked and deactivated-tenant keys: a caller holding a leaked
            # or guessed key learns nothing about its state.
            if key is None or not key.is_active or not key.tenant.is_active:
                raise exceptions.AuthenticationFailed(INVALID_KEY_MESSAGE)
            key_cache.put(key_hash, key, settings.API_KEY_CACHE_SECONDS)
        key_touch(key)
        return TenantPrincipal(tenant=key.tenant, api_key=key), key

    def authenticate_header(self, request: Request) -> str:
        # Makes DRF answer 401 (with WWW-Authenticate) rather than 403 when no key is given.
        return self.keyword


class HasTenant(permissions.BasePermission):
    """A tenant's key holding one of the view's `required_scopes` (default: `memory`)."""

    def has_permission(self, request: Request, view: object) -> bool:
        if not isinstance(request.user, TenantPrincipal):
            return False
        wanted = getattr(view, "required_scopes", (ApiKey.Scope.MEMORY,))
        if not set(wanted) & set(request.user.api_key.scopes):
            names = " or ".join(f"'{scope}'" for scope in wanted)
            raise exceptions.PermissionDenied(f"This API key lacks the {names} scope.", code="missing_scope")
        return True


class ApiKeyRateThrottle(throttling.SimpleRateThrottle):
    """`API_THROTTLE_RATE` per API key, counted atomically (`memoryhub.throttling`), in Redis when
    there is one, in-process otherwise. DRF's history in the cache lost counts under concurrency
    and failed every request while Redis was away."""

    scope = "api_key"

    def get_cache_key(self, request: Request, view: object) -> str | None:
        if isinstance(request.user, TenantPrincipal):
            return self.key_for(request.user.api_key.pk)
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}

    def key_for(self, api_key_id: int) -> str:
        return self.cache_format % {"scope": self.scope, "ident": api_key_id}

    def allow_request(self, request: Request, view: object) -> bool:
        key = self.get_cache_key(request, view)
        return key is None or self.allow_key(key)

    def allow_key(self, key: str) -> bool:
        if self.rate is None:
            return True
        hit = rate_hit(key, int(self.duration))
        self.reset_in = hit.reset_in
        return hit.count <= self.num_requests

    def wait(self) -> float | None:
        return getattr(self, "reset_in", None)


def api_key_throttle_wait(api_key_id: int) -> float | None:
    """Count one request of a key outside DRF (the MCP HTTP transport) in the same budget as its API
    requests: None when it may pass, else the seconds until its window closes."""
    throttle = ApiKeyRateThrottle()
    return None if throttle.allow_key(throttle.key_for(api_key_id)) else (throttle.wait() or 0.0)


def request_tenant(request: Request) -> Tenant:
    user = request.user
    assert isinstance(user, TenantPrincipal)
    return user.tenant


def request_actor(request: Request) -> str:
    """Who acts, for audit rows written on an API call: the key's visible prefix and its name
    (`api-key:mh_1234abcd (console)`), as an admin decision records `admin:<username>`."""
    user = request.user
    assert isinstance(user, TenantPrincipal)
    return f"api-key:{user.api_key.prefix} ({user.api_key.name})"
