"""A thread's own TTL (seed 003 §8.9 "TTL/удаление через API"): the engine sets `ttl_hours` on a thread,
by PATCH or with a write, bounded by THREAD_TTL_MAX_HOURS; reads, `expires_at` and the beat follow it."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from lore.campaigns import threads
from lore.campaigns.models import Checkpoint, Thread
from memoryhub.exceptions import ApplicationError
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client

THREAD = f"{CAMPAIGN_BASE}/threads/scene_42"
OTHER = f"{CAMPAIGN_BASE}/threads/scene_43"


def put(client, path: str = THREAD, **fields) -> dict:
    response = client.post(f"{path}/checkpoints", {"state": {"turn": 1}, **fields}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def age(thread_id: str, hours: float) -> None:
    """As if the thread's last write was `hours` ago (its own end moves with it, as a write would set it)."""
    thread = Thread.objects.get(thread_id=thread_id)
    thread.updated_at = timezone.now() - timedelta(hours=hours)
    thread.expires_at = threads.expires_at(thread) if thread.ttl_hours else None
    thread.save()


def iso(moment) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def test_a_thread_set_to_a_shorter_ttl_expires_by_it_and_others_keep_the_default(engine, settings):
    settings.THREAD_TTL_HOURS = 72
    put(engine)
    put(engine, OTHER)
    response = engine.patch(THREAD, {"ttl_hours": 12}, format="json")
    assert response.status_code == 200, response.content
    thread = Thread.objects.get(thread_id="scene_42")
    assert response.json()["ttl_hours"] == 12
    assert response.json()["expires_at"] == iso(thread.updated_at + timedelta(hours=12))
    assert engine.get(OTHER).json()["ttl_hours"] is None
    age("scene_42", 11)
    age("scene_43", 13)
    assert engine.get(THREAD).status_code == 200
    assert threads.threads_expire() == {"checkpoints": 0, "threads": 0}
    age("scene_42", 13)
    # Past its own TTL: gone for reads at once, and the beat deletes it; the other lives on by the default.
    assert engine.get(THREAD).status_code == 404
    assert threads.threads_expire() == {"checkpoints": 1, "threads": 1}
    assert list(Thread.objects.values_list("thread_id", flat=True)) == ["scene_43"]
    assert engine.get(OTHER).status_code == 200


def test_a_write_may_set_a_longer_ttl_and_null_goes_back_to_the_default(engine, settings):
    settings.THREAD_TTL_HOURS = 72
    first = put(engine, ttl_hours=200)
    assert engine.get(THREAD).json()["ttl_hours"] == 200
    # A later write that names no TTL keeps the thread's own.
    put(engine, parent_checkpoint_id=first["checkpoint_id"])
    age("scene_42", 100)  # past the default, within its own
    assert engine.get(THREAD).status_code == 200
    assert threads.threads_expire() == {"checkpoints": 0, "threads": 0}
    body = engine.patch(THREAD, {"ttl_hours": None}, format="json").json()
    assert body["ttl_hours"] is None
    # Back on the default, the thread last written 100 hours ago is past it.
    assert engine.get(THREAD).status_code == 404
    assert threads.threads_expire() == {"checkpoints": 2, "threads": 1}


def test_a_ttl_outside_its_bounds_is_a_400_naming_ttl_hours(engine, settings):
    settings.THREAD_TTL_MAX_HOURS = 48  # read when validating, not when the API was loaded
    put(engine)
    for value in (0, -1, 49, "12", True, 1.5, None):
        for method, body in (("patch", {"ttl_hours": value}),
                             ("post", {"state": {}, "ttl_hours": value})):
            path = THREAD if method == "patch" else f"{THREAD}/checkpoints"
            if method == "patch" and value is None:
                continue  # null is the default again, not an error
            response = getattr(engine, method)(path, body, format="json")
            assert response.status_code == 400, (method, value, response.content)
            assert "ttl_hours" in response.json()["error"]["fields"], (method, value)
    # A PATCH of nothing changes nothing (the schema's PATCH body has no required field: the fuzzer sent it).
    unchanged = engine.patch(THREAD, {}, format="json")
    assert unchanged.status_code == 200 and unchanged.json()["ttl_hours"] is None
    # A namespace, task id or channel with a control character: a 400 the schema announces by its pattern.
    bad_ns = engine.get(f"{THREAD}/checkpoints", {"checkpoint_ns": "\x1bns"})
    assert bad_ns.status_code == 400 and "checkpoint_ns" in bad_ns.json()["error"]["fields"]
    schema = engine.get("/api/schema/", {"format": "json"}).json()
    params = schema["paths"]["/api/v1/campaigns/{campaign}/threads/{thread_id}/checkpoints"]["get"]["parameters"]
    patch = schema["paths"]["/api/v1/campaigns/{campaign}/threads/{thread_id}"]["patch"]["requestBody"]
    ttl = schema["components"]["schemas"][patch["content"]["application/json"]["schema"]["$ref"].split("/")[-1]]
    assert ttl["properties"]["ttl_hours"]["maximum"] == 48  # THREAD_TTL_MAX_HOURS as set: the schema says it
    [ns] = [p["schema"] for p in params if p["name"] == "checkpoint_ns"]
    assert {"type": "string", "pattern": "^[^\\u0000-\\u001f\\u007f]*$", "maxLength": 255} in ns["oneOf"]
    assert "48" in engine.patch(THREAD, {"ttl_hours": 49}, format="json").json()["error"]["message"]
    assert engine.patch(THREAD, {"ttl_hours": 48}, format="json").status_code == 200
    campaign = Thread.objects.get().campaign
    for bad in (0, 49):
        with pytest.raises(ApplicationError) as refused:
            threads.thread_ttl_set(campaign=campaign, thread_id="scene_42", ttl_hours=bad)
        assert refused.value.field == "ttl_hours" and refused.value.status_code == 400
    assert Thread.objects.get().ttl_hours == 48


def test_a_ttl_is_the_engines_and_kept_from_an_archived_campaign_or_another_tenant(engine, world):
    put(engine)
    assert scoped_client(world.tenant, "tools").patch(THREAD, {"ttl_hours": 5}, format="json").status_code == 403
    from memoryhub import services as kernel_services

    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    assert scoped_client(other_tenant, "engine").patch(THREAD, {"ttl_hours": 5}, format="json").status_code == 404
    unknown = engine.patch(OTHER, {"ttl_hours": 5}, format="json")
    assert unknown.status_code == 404 and "thread_id" in unknown.json()["error"]["fields"]
    assert engine.post(f"{CAMPAIGN_BASE}/archive", {}, format="json").status_code == 200
    archived = engine.patch(THREAD, {"ttl_hours": 5}, format="json")
    assert archived.status_code == 409 and archived.json()["error"]["code"] == "archived"
    assert Thread.objects.get().ttl_hours is None


def test_pending_writes_renew_the_thread_by_its_own_ttl(engine):
    checkpoint = put(engine, ttl_hours=10)["checkpoint_id"]
    age("scene_42", 9)
    response = engine.post(f"{THREAD}/checkpoints/{checkpoint}/writes",
                           {"writes": [{"task_id": "t", "channel": "c", "idx": 0, "value": 1}]}, format="json")
    assert response.status_code == 201
    thread = Thread.objects.get()
    assert timezone.now() - thread.updated_at < timedelta(minutes=1)
    assert thread.expires_at == thread.updated_at + timedelta(hours=10)
    assert threads.threads_expire(now=timezone.now() + timedelta(hours=9)) == {"checkpoints": 0, "threads": 0}


def test_a_thread_past_its_own_ttl_starts_over_on_the_default(engine, settings):
    settings.THREAD_TTL_HOURS = 72
    put(engine, ttl_hours=5)
    age("scene_42", 6)
    restarted = put(engine)
    assert restarted["step"] == 1 and Checkpoint.objects.count() == 1
    assert engine.get(THREAD).json()["ttl_hours"] is None
    assert Thread.objects.get().expires_at is None
