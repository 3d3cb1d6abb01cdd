"""Uploads built in the background (lore.builds): 202 and a build to poll, progress, refusals for
the input, retries when the embedder is away, the sweep, and nothing built twice."""

from __future__ import annotations

import time
from datetime import timedelta
from typing import Any

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone
from rest_framework.test import APIClient

from lore import builds, services
from lore.models import Alias, KnowledgeBuild, KnowledgeBuildFile, KnowledgeVersion
from lore.normalize import SourceOptions
from tests.celery_worker import UNREACHABLE_BROKER, celery_worker, use_broker
from tests.llm_server import Delay, HTTPError, OpenAICompatServer
from tests.lore.conftest import CONDITIONS_EN, SPELLS, as_bytes


def _upload(client: APIClient, *files: tuple[str, bytes], **fields: Any):  # type: ignore[no-untyped-def]
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files], "domain": "srd",
            "language": "en", **fields}
    return client.post("/api/v1/worlds/dnd5e/sources", data, format="multipart")


@pytest.fixture
def world_client(editor_client):  # type: ignore[no-untyped-def]
    client, tenant = editor_client()
    assert client.post("/api/v1/worlds", {"slug": "dnd5e", "languages": ["en", "ru"]}, format="json").status_code == 201
    return client, tenant


def test_a_background_upload_answers_202_and_its_build_makes_the_version(world_client, editor_client,
                                                                          django_capture_on_commit_callbacks):
    client, tenant = world_client
    with django_capture_on_commit_callbacks() as callbacks:
        response = _upload(client, ("Spells.json", as_bytes(SPELLS)), ("Conditions.json", as_bytes(CONDITIONS_EN)),
                           background="true")
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["status"], body["version"], body["chunks_done"]) == ("pending", None, 0)
    assert response["Location"] == body["status_url"] == f"/api/v1/worlds/dnd5e/builds/{body['id']}"
    assert not KnowledgeVersion.objects.exists()  # nothing was built in the request

    for callback in callbacks:  # the task, in-process as in the embedded mode
        callback()
    done = client.get(body["status_url"]).json()
    assert (done["status"], done["version"], done["error"]) == ("done", "1.0.0", "")
    assert done["chunks_done"] == done["chunks_total"] == 5 and done["finished_at"]
    version = KnowledgeVersion.objects.get(world__tenant=tenant)
    assert Alias.objects.get(world=version.world, name="stage").version == version
    assert not KnowledgeBuildFile.objects.exists()  # the version's sources hold the files now
    hit = client.post("/api/v1/worlds/dnd5e/search", {"query": "explosion of flame", "alias": "stage"},
                      format="json").json()["items"][0]
    assert hit["entry_id"] == "Spells/fireball"
    # Another tenant does not see the build; a key that cannot upload cannot poll.
    other, _ = editor_client("tenant-b")
    assert other.get(body["status_url"]).status_code == 404
    tools, _ = editor_client(scopes=("tools",))
    assert tools.get(body["status_url"]).status_code == 403
    assert client.get("/api/v1/worlds/dnd5e/builds/999999").status_code == 404


def test_files_over_the_threshold_go_to_the_background_unless_the_client_asks_otherwise(world_client, settings):
    client, _ = world_client
    big, small = ("Spells.json", as_bytes(SPELLS)), ("Conditions.json", as_bytes(CONDITIONS_EN))
    settings.LORE_BACKGROUND_BYTES = len(small[1])
    assert len(big[1]) > settings.LORE_BACKGROUND_BYTES
    assert _upload(client, big).status_code == 202
    assert _upload(client, small).status_code == 201
    assert _upload(client, big, background="false").status_code == 201


def test_what_can_be_refused_at_once_is_refused_in_the_request(world_client):
    client, _ = world_client
    assert _upload(client, ("Spells.json", as_bytes(SPELLS))).status_code == 201  # 1.0.0
    old = _upload(client, ("Spells.json", as_bytes(SPELLS)), background="true", version="0.9.0")
    assert old.status_code == 409 and old.json()["error"]["code"] == "version_not_newer"
    language = _upload(client, ("Spells.json", as_bytes(SPELLS)), background="true", language="de")
    assert language.status_code == 400 and "language" in language.json()["error"]["fields"]
    assert not KnowledgeBuild.objects.exists()


def test_a_build_whose_input_is_refused_fails_naming_the_file_and_is_not_retried(
        world_client, django_capture_on_commit_callbacks):
    client, _ = world_client
    with django_capture_on_commit_callbacks(execute=True):
        response = _upload(client, ("Spells.json", b'[{"index": "fireball", "name": '), background="true")
    failed = client.get(response.json()["status_url"]).json()
    assert failed["status"] == "failed" and failed["error_field"] == "files", failed
    assert "Spells.json" in failed["error"] and failed["attempts"] == 0
    assert builds.knowledge_builds_sweep() == 0
    assert not KnowledgeVersion.objects.exists()


@pytest.mark.django_db
def test_a_build_the_embedder_failed_is_tried_again_by_the_sweep_and_built_once(
        world, remote_embedder: OpenAICompatServer):
    # Stored, and its enqueue never happened (the broker was away, or the worker died before it ran).
    build = builds.knowledge_build_create(world=world, domain="srd", options=SourceOptions(), actor="alice",
                                          files=[services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])
    remote_embedder.script_embeddings(HTTPError(500))  # the endpoint is away for the first try
    assert builds.knowledge_builds_sweep() == 1
    build.refresh_from_db()
    assert (build.status, build.attempts, build.version) == ("pending", 1, None) and "500" in build.error
    assert build.next_attempt_at > timezone.now() and KnowledgeBuildFile.objects.filter(build=build).exists()
    assert builds.knowledge_builds_sweep() == 0  # not due yet

    KnowledgeBuild.objects.filter(pk=build.pk).update(next_attempt_at=timezone.now())
    assert builds.knowledge_builds_sweep() == 1
    build.refresh_from_db()
    assert (build.status, build.version.version, build.error) == ("done", "1.0.0", "")
    # Done: the sweep leaves it alone, and a second delivery of the task builds nothing again.
    assert builds.knowledge_builds_sweep() == 0
    builds.knowledge_build_run(build_id=build.pk)
    assert KnowledgeVersion.objects.filter(world=world).count() == 1


@pytest.mark.django_db
def test_a_build_whose_worker_died_midway_is_built_by_the_sweep(world):
    build = builds.knowledge_build_create(world=world, domain="srd", options=SourceOptions(), actor="alice",
                                          files=[services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])
    hour_ago = timezone.now() - timedelta(hours=1)
    KnowledgeBuild.objects.filter(pk=build.pk).update(status="building", enqueued_at=hour_ago, started_at=hour_ago,
                                                      chunks_done=1, chunks_total=3)
    assert builds.knowledge_builds_sweep() == 1
    build.refresh_from_db()
    assert (build.status, build.chunks_done, build.chunks_total) == ("done", 3, 3)
    assert KnowledgeVersion.objects.filter(world=world).count() == 1


@pytest.mark.django_db(transaction=True)
def test_in_the_embedded_mode_the_build_runs_after_the_202_and_its_progress_shows(
        world_client, remote_embedder: OpenAICompatServer, monkeypatch: pytest.MonkeyPatch, web_process_beat: Any):
    """The point of a background build: the request returns at once and a poll sees the chunks come."""
    client, _ = world_client
    monkeypatch.setattr(services, "EMBED_BATCH", 1)
    monkeypatch.setattr(builds, "PROGRESS_EVERY_SECONDS", 0.0)
    remote_embedder.script_embeddings(*[Delay(0.4)] * 5)
    started = time.monotonic()
    response = _upload(client, ("Spells.json", as_bytes(SPELLS)), ("Conditions.json", as_bytes(CONDITIONS_EN)),
                       background="true")
    took = time.monotonic() - started
    assert response.status_code == 202, response.content
    assert took < 1.0, f"the 202 waited {took:.2f} s for the build"
    seen = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        state = client.get(response.json()["status_url"]).json()
        seen.append((state["status"], state["chunks_done"], state["chunks_total"]))
        if state["status"] in ("done", "failed"):
            break
        time.sleep(0.1)
    assert seen[-1] == ("done", 5, 5), seen
    assert any(status == "building" and 0 < done < total for status, done, total in seen), seen


@pytest.mark.django_db(transaction=True)
def test_a_build_accepted_while_the_broker_is_away_is_kept_and_built_by_the_sweep(world_client):
    client, _ = world_client
    use_broker(UNREACHABLE_BROKER)
    started = time.monotonic()
    response = _upload(client, ("Spells.json", as_bytes(SPELLS)), background="true")
    assert response.status_code == 202 and time.monotonic() - started < 10
    build = KnowledgeBuild.objects.get(pk=response.json()["id"])
    # Not sent, so not stamped as sent: the next sweep sends it, not one 5 minutes on.
    assert build.status == "pending" and build.enqueued_at is None and build.files.count() == 1
    assert builds.knowledge_builds_sweep(older_than=timedelta(minutes=5)) == 1  # still away: nothing lost
    assert KnowledgeBuild.objects.get(pk=build.pk).status == "pending"

    use_broker(None)  # back (in-process: the task runs at once)
    assert builds.knowledge_builds_sweep(older_than=timedelta(0)) == 1
    assert client.get(response.json()["status_url"]).json()["status"] == "done"
    assert builds.knowledge_builds_sweep(older_than=timedelta(0)) == 0


@pytest.mark.worker
@pytest.mark.django_db(transaction=True)
def test_a_real_celery_worker_builds_an_upload(world_client):
    client, _ = world_client
    with celery_worker() as worker:
        response = _upload(client, ("Spells.json", as_bytes(SPELLS)), background="true")
        assert response.status_code == 202
        deadline = time.monotonic() + 60
        state: dict[str, Any] = {}
        while time.monotonic() < deadline and worker.poll() is None:
            state = client.get(response.json()["status_url"]).json()
            if state["status"] in ("done", "failed"):
                break
            time.sleep(0.2)
        assert (state.get("status"), state.get("version")) == ("done", "1.0.0"), (worker.poll(), state)


@pytest.mark.django_db
def test_a_build_failing_every_time_is_given_up_saying_so_and_the_admin_builds_it_again(
        world, settings, remote_embedder: OpenAICompatServer, admin_client):
    settings.ARCHIVAL_MAX_ATTEMPTS = 2
    build = builds.knowledge_build_create(world=world, domain="srd", options=SourceOptions(), actor="alice",
                                          files=[services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])
    remote_embedder.script_embeddings(HTTPError(500), HTTPError(500))
    builds.knowledge_build_run(build_id=build.pk)
    assert KnowledgeBuild.objects.get(pk=build.pk).status == "pending"
    builds.knowledge_build_run(build_id=build.pk)
    build.refresh_from_db()
    assert (build.status, build.error_code, build.attempts) == ("failed", "gave_up", 2) and "500" in build.error
    assert builds.knowledge_builds_sweep(older_than=timedelta(0)) == 0  # not retried for ever
    assert build.files.count() == 1  # nothing accepted is lost

    page = admin_client.post("/admin/lore/knowledgebuild/", {"action": "build_again", "_selected_action": [build.pk]},
                             follow=True)
    assert "1 build(s) queued again" in page.content.decode()
    build.refresh_from_db()
    assert (build.status, build.attempts, build.error) == ("pending", 0, "")
    assert builds.knowledge_builds_sweep() == 1
    build.refresh_from_db()
    assert build.status == "done" and build.version.version == "1.0.0"


def test_an_upload_onto_a_large_version_or_behind_a_long_build_goes_to_the_background(world_client, settings):
    from django.db import connections

    client, _ = world_client
    assert _upload(client, ("Spells.json", as_bytes(SPELLS))).status_code == 201  # 3 chunks
    settings.LORE_BACKGROUND_CHUNKS = 2  # every chunk of the base is copied into the new version
    small = ("Conditions.json", as_bytes(CONDITIONS_EN))
    assert _upload(client, small).status_code == 202
    assert _upload(client, small, background="false").status_code == 201
    assert _upload(client, small, replace_all="true").status_code == 201  # carries nothing forward

    settings.LORE_BACKGROUND_CHUNKS = 10_000
    settings.LORE_BUILD_WAIT_SECONDS = 0.2
    world = KnowledgeVersion.objects.first().world
    # Another session holds the domain (a long build elsewhere): queued behind it, not a 409.
    other = connections.create_connection("default")
    try:
        with other.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_lock(hashtextextended(%s, 4))", [f"lore-build:{world.pk}:srd"])
        queued = _upload(client, small)
        assert queued.status_code == 202 and queued.json()["status"] == "pending"
        busy = _upload(client, small, background="false")
        assert busy.status_code == 409 and busy.json()["error"]["code"] == "world_busy"
    finally:
        other.close()


def test_background_faults_that_need_no_reading_are_refused_at_once(world_client):
    client, _ = world_client
    twice = _upload(client, ("a.md", b"## A\nB.\n"), ("a.md", b"## C\nD.\n"), background="true")
    assert twice.status_code == 400 and "files" in twice.json()["error"]["fields"]
    long_name = _upload(client, (f"{'n' * 70}.md", b"## A\nB.\n"), background="true")
    assert long_name.status_code == 400 and "id_prefix" in long_name.json()["error"]["message"]
    assert not KnowledgeBuild.objects.exists()
    missing = client.get("/api/v1/worlds/dnd5e/builds/999999")
    assert missing.status_code == 404 and "build_id" in missing.json()["error"]["fields"]


@pytest.mark.django_db
def test_a_build_refused_for_no_fault_of_its_input_goes_back_to_the_queue(world, monkeypatch):
    """A background build refused because the domain was busy or its base kept moving: its input is
    fine, so it is not `failed` (which tells the client to fix and send again)."""
    build = builds.knowledge_build_create(world=world, domain="srd", options=SourceOptions(), actor="alice",
                                          files=[services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])

    def moved(**kwargs: Any) -> None:
        raise services.ApplicationError("moved", code="stage_moved", status_code=409)

    monkeypatch.setattr(services, "knowledge_ingest", moved)
    builds.knowledge_build_run(build_id=build.pk)
    build.refresh_from_db()
    assert (build.status, build.attempts, build.error) == ("pending", 0, "moved")
    assert build.next_attempt_at <= timezone.now()
    monkeypatch.undo()
    assert builds.knowledge_builds_sweep() == 1
    assert KnowledgeBuild.objects.get(pk=build.pk).status == "done"
