"""`make run`'s bootstrap keeps the demo key across restarts until it is rotated on purpose."""

from __future__ import annotations

import io
import re

import pytest
from django.core.management import call_command
from rest_framework.test import APIClient

from memoryhub.auth import hash_key
from memoryhub.models import ApiKey

pytestmark = pytest.mark.django_db


def bootstrap(command: str = "demo_bootstrap", *args: str) -> str:
    out = io.StringIO()
    call_command(command, *args, stdout=out)
    return out.getvalue()


def printed_key(output: str) -> str:
    return re.search(r"(mh_\S+)", output.split("API key", 1)[1]).group(1)


def opens_the_api(raw: str) -> int:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client.get("/api/v1/users/demo-user/sessions/welcome/messages").status_code


def test_the_demo_key_survives_restarts_until_rotated(settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path
    first = printed_key(bootstrap())
    assert opens_the_api(first) == 200
    assert printed_key(bootstrap()) == first  # a restart keeps the configured client working
    assert oct((tmp_path / "demo_api_key").stat().st_mode & 0o777) == "0o600"

    rotated = bootstrap("apikey_rotate", "demo")
    assert "1 key(s) named 'make-run' revoked" in rotated
    new = printed_key(rotated)
    assert new != first and opens_the_api(first) == 401 and opens_the_api(new) == 200
    assert printed_key(bootstrap()) == new
    # The replacement keeps what the old key could do: the demo key opens every part of the demo.
    assert sorted(ApiKey.objects.get(key_hash=hash_key(new)).scopes) == sorted(ApiKey.Scope.values)


def test_a_stored_key_without_every_scope_is_replaced(settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path
    first = printed_key(bootstrap())
    ApiKey.objects.filter(key_hash=hash_key(first)).update(scopes=["memory"])  # made before lore existed
    second = printed_key(bootstrap())
    assert second != first and sorted(ApiKey.objects.get(key_hash=hash_key(second)).scopes) == sorted(
        ApiKey.Scope.values)


def test_a_lost_key_file_gives_a_new_key_and_retires_the_old(settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path
    first = printed_key(bootstrap())
    (tmp_path / "demo_api_key").unlink()
    second = printed_key(bootstrap())
    assert second != first and opens_the_api(first) == 401 and opens_the_api(second) == 200


def test_rotating_an_unknown_tenant_is_an_error() -> None:
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No tenant named 'nobody'"):
        bootstrap("apikey_rotate", "nobody")


def test_a_tenant_gets_another_key_with_only_the_scopes_its_client_needs() -> None:
    """A QA session giving a game master's LLM a `tools` key had to rotate a key and edit its scopes in
    the admin: `apikey_create` makes one beside the others."""
    from django.core.management.base import CommandError

    first = printed_key(bootstrap("tenant_create", "acme", "--scopes", "memory,tools"))
    out = bootstrap("apikey_create", "acme", "--name", "gm-llm", "--scopes", "tools")
    assert "scopes tools" in out
    raw = re.search(r"(mh_\S+)", out.split("shown once", 1)[1]).group(1)
    key = ApiKey.objects.get(key_hash=hash_key(raw))
    assert (key.name, key.scopes, key.tenant.name) == ("gm-llm", ["tools"], "acme")
    llm = APIClient()
    llm.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert llm.get("/api/v1/tools").status_code == 200
    assert llm.get("/api/v1/users/u1/sessions").status_code == 403  # no `memory` scope
    app = APIClient()
    app.credentials(HTTP_AUTHORIZATION=f"Bearer {first}")
    assert app.get("/api/v1/users/u1/sessions").status_code == 200  # the first key is untouched
    for args, error in ((("acme", "--name", "x", "--scopes", "admin"), "Unknown or no scopes"),
                        (("acme", "--name", " "), "--name must be"), (("nobody", "--name", "x"), "No tenant")):
        with pytest.raises(CommandError, match=error):
            bootstrap("apikey_create", *args)
