"""The short-term layer (seed 003 §2, §8.9): thread state with checkpoints, with TTL and deletion over
the API, written by the game engine only."""

from __future__ import annotations

import json
import uuid
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.contrib.auth import get_user_model
from django.test import Client
from django.utils import timezone
from rest_framework.test import APIClient

from lore.campaigns import services, tasks, threads
from lore.campaigns.models import Campaign, Checkpoint, Thread
from memoryhub.exceptions import ApplicationError
from tests.concurrency import at_once, errors_of
from tests.lore.conftest import CAMPAIGN_BASE, scoped_client
from tests.lore.test_campaign_retention import second_campaign

THREAD = f"{CAMPAIGN_BASE}/threads/scene_42"
CHECKPOINTS = f"{THREAD}/checkpoints"


def write(client: APIClient, state: dict, parent: str | None = None, path: str = CHECKPOINTS) -> dict:
    body: dict = {"state": state}
    if parent is not None:
        body["parent_checkpoint_id"] = parent
    response = client.post(path, body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def age(thread_id: str, hours: float) -> None:
    Thread.objects.filter(thread_id=thread_id).update(updated_at=timezone.now() - timedelta(hours=hours))


# --- The contract ---------------------------------------------------------------------------------
def test_a_thread_is_a_series_of_checkpoints_and_the_latest_is_its_state(engine):
    first = write(engine, {"turn": 1, "hp": {"p_A": 12}})
    second = write(engine, {"turn": 2, "hp": {"p_A": 9}}, parent=first["checkpoint_id"])
    third = write(engine, {"turn": 3, "hp": {"p_A": 9}, "text": "Ли Шэнь кивает"})
    assert [c["step"] for c in (first, second, third)] == [1, 2, 3]
    assert first["parent_checkpoint_id"] is None
    assert (second["parent_checkpoint_id"], third["parent_checkpoint_id"]) == (first["checkpoint_id"],
                                                                               second["checkpoint_id"])
    assert first["thread_id"] == "scene_42" and first["state"] == {"turn": 1, "hp": {"p_A": 12}}

    thread = engine.get(THREAD)
    assert thread.status_code == 200
    body = thread.json()
    assert body["checkpoint"] == third
    assert (body["thread_id"], body["campaign_id"], body["steps"]) == ("scene_42", "camp_123", 3)
    ttl = timedelta(hours=django_settings.THREAD_TTL_HOURS)
    assert body["expires_at"] == (Thread.objects.get().updated_at + ttl).isoformat().replace("+00:00", "Z")

    listed = engine.get(CHECKPOINTS).json()
    assert [c["step"] for c in listed["checkpoints"]] == [3, 2, 1] and listed["next_before_step"] is None
    assert "state" not in listed["checkpoints"][0] and listed["thread"]["steps"] == 3
    assert engine.get(f"{CHECKPOINTS}/{first['checkpoint_id']}").json() == first
    # Another thread of the campaign is its own series.
    other = write(engine, {"turn": 1}, path=f"{CAMPAIGN_BASE}/threads/scene_43/checkpoints")
    assert other["step"] == 1 and engine.get(THREAD).json()["checkpoint"]["step"] == 3


def test_the_list_is_paged_newest_first(engine):
    for turn in range(5):
        write(engine, {"turn": turn})
    page = engine.get(CHECKPOINTS, {"limit": 2}).json()
    assert [c["step"] for c in page["checkpoints"]] == [5, 4] and page["next_before_step"] == 4
    page = engine.get(CHECKPOINTS, {"limit": 2, "before_step": 4}).json()
    assert [c["step"] for c in page["checkpoints"]] == [3, 2] and page["next_before_step"] == 2
    page = engine.get(CHECKPOINTS, {"limit": 2, "before_step": 2}).json()
    assert [c["step"] for c in page["checkpoints"]] == [1] and page["next_before_step"] is None
    for query, field in (({"limit": 0}, "limit"), ({"limit": 101}, "limit"), ({"before_step": "x"}, "before_step"),
                         ({"page": 2}, "page")):
        response = engine.get(CHECKPOINTS, query)
        assert response.status_code == 400 and field in response.json()["error"]["fields"], query


def test_a_stale_parent_is_a_409_naming_the_latest_and_a_retry_of_a_landed_write_answers_it_again(engine):
    first = write(engine, {"turn": 1})
    second = write(engine, {"turn": 2}, parent=first["checkpoint_id"])
    # Another writer that also read the first checkpoint: its write would lose the second's.
    stale = engine.post(CHECKPOINTS, {"state": {"turn": "2b"}, "parent_checkpoint_id": first["checkpoint_id"]},
                        format="json")
    assert stale.status_code == 409
    error = stale.json()["error"]
    assert error["code"] == "stale_parent" and "parent_checkpoint_id" in error["fields"]
    assert second["checkpoint_id"] in error["message"] and "step 2" in error["message"]
    # The engine's retry of the second write (its answer was lost): the same checkpoint, 200, nothing new.
    retry = engine.post(CHECKPOINTS, {"state": {"turn": 2}, "parent_checkpoint_id": first["checkpoint_id"]},
                        format="json")
    assert retry.status_code == 200 and retry.json() == second
    unknown = engine.post(CHECKPOINTS, {"state": {}, "parent_checkpoint_id": str(uuid.uuid4())}, format="json")
    assert unknown.status_code == 409 and unknown.json()["error"]["code"] == "stale_parent"
    new_thread = engine.post(f"{CAMPAIGN_BASE}/threads/fresh/checkpoints",
                             {"state": {}, "parent_checkpoint_id": first["checkpoint_id"]}, format="json")
    assert new_thread.status_code == 409 and "has no checkpoint" in new_thread.json()["error"]["message"]
    assert Checkpoint.objects.count() == 2 and not Thread.objects.filter(thread_id="fresh").exists()


def test_bad_input_is_a_400_naming_the_field(engine, settings):
    settings.THREAD_STATE_MAX_BYTES = 1024
    cases = [
        ({}, "state"), ({"state": [1, 2]}, "state"), ({"state": "text"}, "state"), ({"state": None}, "state"),
        ({"state": {"blob": "x" * 1100}}, "state"), ({"state": {"k": "a\x00b"}}, "state"),
        ({"state": {}, "parent_checkpoint_id": "not-a-uuid"}, "parent_checkpoint_id"),
        ({"state": {}, "step": 3}, "step"),
    ]
    for body, field in cases:
        response = engine.post(CHECKPOINTS, body, format="json")
        assert response.status_code == 400, (body, response.content)
        assert field in response.json()["error"]["fields"], (body, response.json())
    assert "1024" in json.dumps(engine.post(CHECKPOINTS, {"state": {"blob": "x" * 1100}}, format="json").json())
    # Deeper than the state's nesting bound: a 400, not a RecursionError.
    deep: dict = {}
    for _ in range(100):
        deep = {"d": deep}
    assert engine.post(CHECKPOINTS, {"state": deep}, format="json").status_code == 400
    # The service refuses the same without the serializer (its other callers).
    campaign = Campaign.objects.get(slug="camp_123")
    with pytest.raises(ApplicationError) as refused:
        threads.checkpoint_write(campaign=campaign, thread_id="t", state={"blob": "x" * 1100})
    assert refused.value.field == "state" and refused.value.status_code == 400
    with pytest.raises(ApplicationError) as refused:
        threads.checkpoint_write(campaign=campaign, thread_id="t", state={"k": "a\x00b"})
    assert refused.value.field == "state" and refused.value.status_code == 400
    assert not Thread.objects.exists()
    # Unknown thread, checkpoint, or a path id outside the pattern.
    assert engine.get(f"{CAMPAIGN_BASE}/threads/nope").status_code == 404
    assert engine.get(f"{CAMPAIGN_BASE}/threads/nope/checkpoints").status_code == 404
    write(engine, {"turn": 1})
    missing = engine.get(f"{CHECKPOINTS}/{uuid.uuid4()}")
    assert missing.status_code == 404 and "checkpoint_id" in missing.json()["error"]["fields"]
    assert engine.get(f"{CHECKPOINTS}/12").status_code == 404


def test_a_thread_keeps_its_newest_checkpoints_and_steps_go_on(engine, settings):
    settings.THREAD_MAX_CHECKPOINTS = 3
    written = [write(engine, {"turn": turn}) for turn in range(5)]
    assert sorted(Checkpoint.objects.values_list("step", flat=True)) == [3, 4, 5]
    assert [c["step"] for c in engine.get(CHECKPOINTS).json()["checkpoints"]] == [5, 4, 3]
    pruned = engine.get(f"{CHECKPOINTS}/{written[0]['checkpoint_id']}")
    assert pruned.status_code == 404 and "pruned" in pruned.json()["error"]["message"]
    assert write(engine, {"turn": 5})["step"] == 6
    assert engine.get(THREAD).json()["steps"] == 6


def test_deleting_a_thread_removes_it_and_its_checkpoints_only(engine):
    for turn in range(3):
        write(engine, {"turn": turn})
    write(engine, {"turn": 0}, path=f"{CAMPAIGN_BASE}/threads/other/checkpoints")
    response = engine.delete(THREAD)
    assert response.status_code == 204 and response.content == b""
    assert not Thread.objects.filter(thread_id="scene_42").exists()
    assert list(Checkpoint.objects.values_list("thread__thread_id", flat=True)) == ["other"]
    for path in (THREAD, CHECKPOINTS):
        gone = engine.get(path)
        assert gone.status_code == 404 and "thread_id" in gone.json()["error"]["fields"]
    again = engine.delete(THREAD)
    assert again.status_code == 404 and again.json()["error"]["code"] == "not_found"
    # Its id starts over.
    assert write(engine, {"turn": 0})["step"] == 1


def test_an_archived_campaign_refuses_writes_and_keeps_reads_and_deletion(engine, world):
    first = write(engine, {"turn": 1})
    assert engine.post(f"{CAMPAIGN_BASE}/archive", {}, format="json").status_code == 200
    refused = engine.post(CHECKPOINTS, {"state": {"turn": 2}}, format="json")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "archived" and "campaign" in refused.json()["error"]["fields"]
    assert engine.get(THREAD).json()["checkpoint"] == first
    assert engine.get(f"{CHECKPOINTS}/{first['checkpoint_id']}").status_code == 200
    assert engine.delete(THREAD).status_code == 204
    assert not Thread.objects.exists()


def test_services_refuse_a_campaign_archived_or_deleted_after_it_was_read(engine):
    stale = Campaign.objects.get(slug="camp_123")
    services.campaign_archive(campaign=Campaign.objects.get(slug="camp_123"), actor="t")
    with pytest.raises(ApplicationError) as refused:
        threads.checkpoint_write(campaign=stale, thread_id="t", state={})
    assert (refused.value.status_code, refused.value.code) == (409, "archived")
    services.campaign_delete(campaign=Campaign.objects.get(slug="camp_123"), actor="t")
    stale = Campaign(pk=stale.pk, slug="camp_123", tenant_id=stale.tenant_id, status=Campaign.Status.ACTIVE)
    for call in (lambda: threads.checkpoint_write(campaign=stale, thread_id="t", state={}),
                 lambda: threads.thread_delete(campaign=stale, thread_id="t")):
        with pytest.raises(ApplicationError) as refused:
            call()
        assert refused.value.status_code == 404


# --- Tenants and scopes ---------------------------------------------------------------------------
def test_another_tenants_campaign_and_thread_are_unknown(engine, world):
    first = write(engine, {"secret": "the moon key"})
    from memoryhub import services as kernel_services

    other_tenant, _ = kernel_services.tenant_create(name="tenant-b")
    other = scoped_client(other_tenant, "engine")
    for method, path, data in (("get", THREAD, None), ("get", CHECKPOINTS, None),
                               ("get", f"{CHECKPOINTS}/{first['checkpoint_id']}", None),
                               ("post", CHECKPOINTS, {"state": {}}), ("delete", THREAD, None)):
        response = getattr(other, method)(path, data, format="json")
        assert response.status_code == 404, (method, path)
        assert "campaign" in response.json()["error"]["fields"]
    # Its own campaign of the same id has its own threads: the first tenant's checkpoint is not in it.
    from lore import services as lore_services

    lore_services.world_create(tenant=other_tenant, slug="dnd5e", name="D&D", languages=["en"])
    assert other.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "camp_123"}, format="json").status_code == 201
    assert other.get(THREAD).status_code == 404
    assert other.get(f"{CHECKPOINTS}/{first['checkpoint_id']}").status_code == 404
    assert write(other, {"turn": 1})["step"] == 1
    assert engine.get(THREAD).json()["checkpoint"]["state"] == {"secret": "the moon key"}
    assert other.delete(THREAD).status_code == 204
    assert engine.get(THREAD).status_code == 200


@pytest.mark.parametrize("scopes", [("memory",), ("tools",), ("editor",), ("memory", "tools", "editor")])
def test_only_an_engine_key_reads_or_writes_threads(engine, world, scopes):
    first = write(engine, {"turn": 1})
    client = scoped_client(world.tenant, *scopes)
    for method, path, data in (("get", THREAD, None), ("get", CHECKPOINTS, None),
                               ("get", f"{CHECKPOINTS}/{first['checkpoint_id']}", None),
                               ("post", CHECKPOINTS, {"state": {}}), ("delete", THREAD, None)):
        response = getattr(client, method)(path, data, format="json")
        assert response.status_code == 403, (method, path)
        assert response.json()["error"]["code"] == "missing_scope"
        assert getattr(APIClient(), method)(path, data, format="json").status_code == 401
    assert Checkpoint.objects.count() == 1


# --- TTL ------------------------------------------------------------------------------------------
def test_the_beat_deletes_threads_past_their_ttl_with_their_checkpoints(engine, settings):
    settings.THREAD_TTL_HOURS = 48
    for turn in range(3):
        write(engine, {"turn": turn})
    write(engine, {"turn": 0}, path=f"{CAMPAIGN_BASE}/threads/fresh/checkpoints")
    second_campaign(engine, "camp_other")
    write(engine, {"turn": 0}, path="/api/v1/campaigns/camp_other/threads/scene_42/checkpoints")
    age("scene_42", 47)
    assert threads.threads_expire() == {"checkpoints": 0, "threads": 0}
    Thread.objects.filter(thread_id="scene_42", campaign__slug="camp_123").update(
        updated_at=timezone.now() - timedelta(hours=49))
    # Past its TTL and not swept yet: already gone for reads.
    assert engine.get(THREAD).status_code == 404
    assert tasks.threads_expire.delay().get() == {"checkpoints": 3, "threads": 1}
    assert set(Thread.objects.values_list("campaign__slug", "thread_id")) == {("camp_123", "fresh"),
                                                                              ("camp_other", "scene_42")}
    assert Checkpoint.objects.count() == 2
    assert threads.threads_expire() == {"checkpoints": 0, "threads": 0}
    assert "campaigns-threads-expire" in django_settings.CELERY_BEAT_SCHEDULE


def test_a_write_renews_a_thread_and_one_past_its_ttl_starts_over(engine, settings):
    settings.THREAD_TTL_HOURS = 24
    first = write(engine, {"turn": 1})
    age("scene_42", 23)
    write(engine, {"turn": 2}, parent=first["checkpoint_id"])  # renews it
    assert threads.threads_expire(now=timezone.now() + timedelta(hours=2)) == {"checkpoints": 0, "threads": 0}
    age("scene_42", 25)
    # Expired, not swept yet: the next write starts a new series, as if the beat had run.
    restarted = write(engine, {"turn": 1})
    assert restarted["step"] == 1 and restarted["parent_checkpoint_id"] is None
    assert Checkpoint.objects.count() == 1


def test_an_archived_campaigns_threads_expire_too(engine, settings):
    write(engine, {"turn": 1})
    assert engine.post(f"{CAMPAIGN_BASE}/archive", {}, format="json").status_code == 200
    age("scene_42", settings.THREAD_TTL_HOURS + 1)
    assert threads.threads_expire() == {"checkpoints": 1, "threads": 1}


# --- Schema and admin -----------------------------------------------------------------------------
def test_the_schema_documents_the_thread_endpoints(engine):
    schema = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()
    base = "/api/v1/campaigns/{campaign}/threads/{thread_id}"
    create = schema["paths"][f"{base}/checkpoints"]["post"]
    assert create["operationId"] == "campaign_thread_checkpoint_create"
    assert {"200", "201", "400", "403", "404", "409"} <= set(create["responses"])
    assert "stale_parent" in json.dumps(create) and create["requestBody"]["required"]
    assert schema["paths"][f"{base}/checkpoints"]["get"]["operationId"] == "campaign_thread_checkpoints"
    assert schema["paths"][base]["get"]["operationId"] == "campaign_thread_get"
    assert "204" in schema["paths"][base]["delete"]["responses"]
    assert schema["paths"][f"{base}/checkpoints/{{checkpoint_id}}"]["get"]["operationId"] == \
        "campaign_thread_checkpoint_get"


def test_the_admin_lists_threads_and_checkpoints_read_only(engine):
    first = write(engine, {"turn": 1, "where": "moon bridge"})
    write(engine, {"turn": 2})
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client = Client()
    client.force_login(user)
    thread, checkpoint = Thread.objects.get(), Checkpoint.objects.get(step=1)
    for page in ("/admin/lore/thread/", f"/admin/lore/thread/{thread.pk}/change/", "/admin/lore/checkpoint/",
                 f"/admin/lore/checkpoint/{checkpoint.pk}/change/"):
        response = client.get(page)
        assert response.status_code == 200, page
    assert "moon bridge" in client.get(f"/admin/lore/thread/{thread.pk}/change/").content.decode()
    assert first["checkpoint_id"] in client.get("/admin/lore/checkpoint/").content.decode()
    assert client.post(f"/admin/lore/thread/{thread.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get("/admin/lore/thread/add/").status_code == 403
    assert Checkpoint.objects.count() == 2


# --- Races (real PostgreSQL, each call on its own connection) ------------------------------------
@pytest.mark.django_db(transaction=True)
def test_writes_at_once_without_a_parent_all_land_with_distinct_steps(engine, world):
    campaign = Campaign.objects.get(slug="camp_123")
    # A new thread (both insert it) and then an existing one.
    for thread_id in ("new_thread", "new_thread"):
        outcomes = at_once(*(lambda i=i, t=thread_id: threads.checkpoint_write(
            campaign=campaign, thread_id=t, state={"writer": i}) for i in range(3)))
        assert not errors_of(outcomes), errors_of(outcomes)
    steps = sorted(Checkpoint.objects.values_list("step", flat=True))
    assert steps == [1, 2, 3, 4, 5, 6] and Thread.objects.get().last_step == 6
    # Each one's parent is the one before it: a chain, no fork.
    chain = {c.step: c for c in Checkpoint.objects.all()}
    assert all(chain[s].parent_checkpoint_id == chain[s - 1].checkpoint_id for s in range(2, 7))


@pytest.mark.django_db(transaction=True)
def test_writes_at_once_from_the_same_parent_give_one_checkpoint_and_one_409(engine, world):
    clients = [scoped_client(world.tenant, "engine") for _ in range(2)]
    for round_ in range(3):
        path = f"{CAMPAIGN_BASE}/threads/race_{round_}/checkpoints"
        parent = write(engine, {"turn": 0}, path=path)["checkpoint_id"]
        body = {"parent_checkpoint_id": parent}
        codes = at_once(*(lambda c=c, i=i, p=path, b=body: c.post(p, {**b, "state": {"writer": i}},
                                                                  format="json").status_code
                          for i, c in enumerate(clients)))
        assert sorted(codes) == [201, 409], codes
        assert Checkpoint.objects.filter(thread__thread_id=f"race_{round_}").count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_write_racing_the_campaigns_deletion_lands_and_goes_with_it_or_is_a_404(engine, world):
    for round_ in range(3):
        slug = f"race_{round_}"
        second_campaign(engine, slug)
        campaign = Campaign.objects.get(slug=slug)
        threads.checkpoint_write(campaign=campaign, thread_id="t", state={"turn": 0})
        outcomes = at_once(lambda c=campaign: threads.checkpoint_write(campaign=c, thread_id="t", state={"turn": 1}),
                           lambda c=campaign: threads.thread_delete(campaign=c, thread_id="t"),
                           lambda c=campaign: services.campaign_delete(campaign=c, actor="test"))
        assert not isinstance(outcomes[2], BaseException), outcomes[2]
        for outcome in outcomes[:2]:
            if isinstance(outcome, BaseException):
                assert isinstance(outcome, ApplicationError) and outcome.status_code == 404, outcome
        assert not Thread.objects.filter(campaign_id=campaign.pk).exists()
        assert not Checkpoint.objects.filter(thread__campaign_id=campaign.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_the_beat_racing_writes_never_loses_a_renewed_thread(engine, world, settings):
    settings.THREAD_TTL_HOURS = 1
    campaign = Campaign.objects.get(slug="camp_123")
    for round_ in range(3):
        thread_id = f"old_{round_}"
        threads.checkpoint_write(campaign=campaign, thread_id=thread_id, state={"turn": 0})
        age(thread_id, 2)
        write_outcome, expired = at_once(
            lambda t=thread_id: threads.checkpoint_write(campaign=campaign, thread_id=t, state={"turn": 1}),
            lambda: threads.threads_expire())
        assert not isinstance(write_outcome, BaseException), write_outcome
        assert not isinstance(expired, BaseException), expired
        # Either order, the write's checkpoint is the thread's state afterwards and the thread is live.
        thread = Thread.objects.get(thread_id=thread_id)
        assert threads.checkpoint_latest(thread=thread).state == {"turn": 1}
        assert thread.updated_at > timezone.now() - timedelta(minutes=5)
