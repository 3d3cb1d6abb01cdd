"""Retention of knowledge versions (lore.pruning): what is kept and why, what pruning removes and what it
leaves, the refusals of a pruned version, the command, the beat, the admin, and pruning racing the writers."""

from __future__ import annotations

import io
from datetime import timedelta

import pytest
from django.conf import settings as django_settings
from django.contrib.admin.models import LogEntry
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.test import Client
from django.utils import timezone

from lore import pruning, selectors, services, smoke
from lore.models import Alias, KnowledgeVersion, World
from memoryhub.beat import EmbeddedBeat
from memoryhub.celery import app
from memoryhub.exceptions import ApplicationError
from rag import index as bm25_index
from rag.models import Chunk, ChunkDeletion, Namespace
from tests.concurrency import at_once, errors_of
from tests.kernel.test_beat import wait_for
from tests.lore.conftest import SPELLS, as_bytes

QUERY = "how big is the explosion of flame"


def _extra(name: str, text: str = "") -> services.UploadedFile:
    return services.UploadedFile(f"{name}.json", as_bytes([{"index": name.lower(), "name": name,
                                                           "desc": [text or f"About {name}."]}]), "en")


def _build(world: World, count: int, files: list[services.UploadedFile]) -> list[KnowledgeVersion]:
    """Versions 1.0.0 … 1.<count-1>.0 of srd, each adding a file to the one before; all two days old."""
    built = [services.knowledge_ingest(world=world, domain="srd", files=files, actor="t")]
    for i in range(1, count):
        built.append(services.knowledge_ingest(world=world, domain="srd", files=[_extra(f"Extra{i}")], actor="t"))
    _age(built, hours=48)
    return built


def _age(versions: list[KnowledgeVersion], *, hours: float) -> None:
    KnowledgeVersion.objects.filter(pk__in=[v.pk for v in versions]).update(
        created_at=timezone.now() - timedelta(hours=hours))


def _publish(version: KnowledgeVersion) -> None:
    services.lore_version_publish(version=KnowledgeVersion.objects.get(pk=version.pk), actor="t", force=True,
                                  reason="test")


def _chunks(version: KnowledgeVersion) -> int:
    return Chunk.objects.filter(tenant_id=version.tenant_id, namespace=version.namespace).count()


def _status(version: KnowledgeVersion) -> str:
    return KnowledgeVersion.objects.get(pk=version.pk).status


def _latest_hits(world: World) -> list[tuple]:
    targets = selectors.targets_resolve(tenant_id=world.tenant_id, world_slug=world.slug, domains=["srd"])
    hits = selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query=QUERY, k=5).hits
    return [(h.entry_id, h.version, h.text, round(h.score, 9)) for h in hits]


# --- The keep rules ----------------------------------------------------------------------------
def test_the_policy_keeps_aliases_the_rollback_chain_the_newest_and_the_young_and_prunes_the_rest(
        world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 2
    settings.LORE_PRUNE_MIN_AGE_HOURS = 24
    v = _build(world, 8, small_files)  # 1.0.0 … 1.7.0; stage is 1.7.0
    for number in (0, 2, 4, 5):  # latest 1.5.0, which a rollback takes to 1.4.0, then 1.2.0, then 1.0.0
        _publish(v[number])
    _age([v[3]], hours=2)  # 1.3.0: young enough to be under its smoke run
    before = _latest_hits(world)
    # A cached BM25 index of a version about to go: it must drop the pruned chunks.
    selectors.knowledge_search(tenant_id=world.tenant_id, targets=selectors.targets_resolve(
        tenant_id=world.tenant_id, world_slug="dnd5e", domains=["srd"], version="1.0.0"), query=QUERY)

    report = pruning.knowledge_versions_prune()

    reasons = {verdict.version: verdict.kept_for for verdict in report.verdicts}
    assert reasons == {
        "1.7.0": ("stage", "newest"), "1.6.0": ("newest",), "1.5.0": ("latest", "live recently"),
        "1.4.0": ("rollback 1", "live recently"), "1.3.0": ("recent",), "1.2.0": ("rollback 2", "live recently"),
        "1.1.0": (), "1.0.0": (),
    }
    assert [str(verdict) for verdict in report.pruned] == ["dnd5e/srd 1.1.0", "dnd5e/srd 1.0.0"]
    for gone in (v[0], v[1]):
        row = KnowledgeVersion.objects.get(pk=gone.pk)
        assert (row.status, _chunks(row)) == ("pruned", 0) and row.pruned_at is not None
        assert not Namespace.objects.filter(name=row.namespace).exists()
        # The row keeps what lore_reindex rebuilds it from, and what it held.
        assert row.sources.count() == gone.sources.count() and row.chunk_count == gone.chunk_count
        assert ChunkDeletion.objects.filter(namespace=row.namespace).count() == gone.chunk_count
    assert len(bm25_index.namespace_index(world.tenant_id, v[0].namespace)) == 0
    for kept in v[2:]:
        assert _chunks(kept) == kept.chunk_count and _status(kept) != "pruned"
    assert report.chunks_deleted == v[0].chunk_count + v[1].chunk_count
    assert _latest_hits(world) == before and before
    # Nothing more to do: a second run prunes and deletes nothing.
    again = pruning.knowledge_versions_prune()
    assert again.counts() == {"kept": 6, "pruned": 0, "namespaces": 0, "chunks": 0}


def test_the_version_rolled_back_from_is_kept_to_undo_the_rollback(world, small_files, settings):
    """A rollback walks back, so the chain from `latest` never reaches the version just rolled back from;
    it was live a moment ago, and publishing it again is how a rollback is undone."""
    settings.LORE_KEEP_VERSIONS = 2
    settings.LORE_PRUNE_MIN_AGE_HOURS = 24
    v = _build(world, 8, small_files)  # stage 1.7.0
    for number in (2, 4, 6):
        _publish(v[number])
    services.lore_version_rollback(world=world, domain="srd", actor="t")  # 1.6.0 -> 1.4.0
    services.lore_version_rollback(world=world, domain="srd", actor="t")  # 1.4.0 -> 1.2.0
    reasons = {verdict.version: verdict.kept_for for verdict in pruning.knowledge_versions_prune().verdicts}
    assert reasons["1.2.0"] == ("latest", "live recently")
    assert reasons["1.4.0"] == ("live recently",) and reasons["1.6.0"] == ("live recently", "newest")
    assert _status(v[4]) != "pruned" and _chunks(v[4]) == v[4].chunk_count
    assert {"1.0.0", "1.1.0", "1.3.0", "1.5.0"} == {verdict.version for verdict in
                                                     pruning.knowledge_versions_prune(dry_run=True).verdicts
                                                     if verdict.pruned} | {
        row.version for row in KnowledgeVersion.objects.filter(world=world, status="pruned")}


def test_the_newest_are_counted_among_the_versions_not_pruned_yet(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    settings.LORE_PRUNE_MIN_AGE_HOURS = 24
    v = _build(world, 6, small_files)  # 1.0.0 … 1.5.0, stage 1.5.0, nothing published
    _age([v[1]], hours=2)  # 1.1.0 is kept as young; the newer 1.2.0–1.4.0 go
    pruning.knowledge_versions_prune()
    assert [_status(x) == "pruned" for x in v] == [True, False, True, True, True, False]
    _age([v[1]], hours=48)
    settings.LORE_KEEP_VERSIONS = 2
    reasons = {verdict.version: verdict.kept_for for verdict in pruning.knowledge_versions_prune().verdicts}
    # The two newest of those left are 1.5.0 and 1.1.0: the pruned 1.4.0 takes no place of the two.
    assert reasons == {"1.5.0": ("stage", "newest"), "1.1.0": ("newest",)}
    assert _status(v[1]) != "pruned"


def test_each_domain_and_world_is_judged_on_its_own(world, small_files, settings, api_client_for):
    settings.LORE_KEEP_VERSIONS = 1
    settings.LORE_PRUNE_MIN_AGE_HOURS = 0
    srd = _build(world, 3, small_files)
    lore = services.knowledge_ingest(world=world, domain="lore", files=[_extra("Gods")], actor="t")
    _, other_tenant = api_client_for("tenant-b")
    elsewhere = services.world_create(tenant=other_tenant, slug="dnd5e", languages=["en"])
    theirs = [services.knowledge_ingest(world=elsewhere, domain="srd", files=[_extra(f"Own{i}")], actor="t")
              for i in range(3)]
    report = pruning.knowledge_versions_prune(world=world)
    assert [str(v) for v in report.pruned] == ["dnd5e/srd 1.1.0", "dnd5e/srd 1.0.0"]
    assert _status(lore) == "staged" and _status(srd[2]) == "staged"
    assert all(_status(v) == "staged" for v in theirs)  # another tenant's world of the same slug
    pruning.knowledge_versions_prune(tenant=other_tenant)
    assert [_status(v) for v in theirs] == ["pruned", "pruned", "staged"]


# --- Refusals of a pruned version ---------------------------------------------------------------
@pytest.fixture
def pruned_world(world, small_files, settings):  # type: ignore[no-untyped-def]
    """1.0.0, 1.1.0, 1.2.0 published in turn, LORE_KEEP_VERSIONS 1: 1.0.0 is pruned (two rollbacks back)."""
    settings.LORE_KEEP_VERSIONS = 1
    settings.LORE_PRUNE_MIN_AGE_HOURS = 24
    versions = _build(world, 3, small_files)
    for version in versions:
        _publish(version)
    pruning.knowledge_versions_prune()
    assert [_status(v) for v in versions] == ["pruned", "retired", "live"]
    return versions


def _refused(response, field: str | None = "version") -> dict:  # type: ignore[no-untyped-def]
    assert response.status_code == 409, response.content
    error = response.json()["error"]
    assert error["code"] == "version_pruned" and error["version"] == "1.0.0" and error["pruned_at"]
    assert error["reindex"] == "manage.py lore_reindex dnd5e srd 1.0.0 --tenant tenant-a"
    assert "manage.py lore_reindex dnd5e srd 1.0.0 --tenant tenant-a" in error["message"]
    assert (list(error["fields"]) == [field]) if field else error["fields"] == {}
    return error


def test_a_pruned_version_is_refused_wherever_it_is_named_with_a_409_saying_how_to_rebuild_it(
        pruned_world, editor_client, golden_dir):
    client, _ = editor_client()
    base = "/api/v1/worlds/dnd5e"
    _refused(client.post(f"{base}/search", {"query": QUERY, "version": "1.0.0"}, format="json"))
    _refused(client.post(f"{base}/domains/srd/versions/1.0.0/smoke", {}, format="json"))
    _refused(client.post(f"{base}/domains/srd/publish", {"version": "1.0.0", "force": True, "reason": "r"},
                         format="json"))
    # Without force too: the prune is the answer, not the smoke run it may lack.
    _refused(client.post(f"{base}/domains/srd/publish", {"version": "1.0.0"}, format="json"))
    # A rollback names no version: the one it would go back to is refused, no field at fault.
    assert client.post(f"{base}/domains/srd/rollback", {}, format="json").status_code == 200  # to 1.1.0
    error = _refused(client.post(f"{base}/domains/srd/rollback", {}, format="json"), field=None)
    assert "cannot roll back from 1.1.0" in error["message"]
    assert Alias.objects.get(world=pruned_world[0].world, domain="srd", name="latest").version == pruned_world[1]
    # The versions list says which are pruned and when.
    listed = {v["version"]: v for v in client.get(f"{base}/versions").json()["versions"]}
    assert listed["1.0.0"]["status"] == "pruned" and listed["1.0.0"]["pruned_at"]
    assert listed["1.1.0"]["status"] == "live" and listed["1.1.0"]["pruned_at"] is None
    # The others answer as before.
    assert client.post(f"{base}/search", {"query": QUERY, "version": "1.2.0"}, format="json").status_code == 200


def test_the_commands_and_the_admin_refuse_it_too_and_lore_reindex_brings_it_back(pruned_world, golden_dir,
                                                                                   capsys):
    with pytest.raises(CommandError, match=r"was pruned on .*lore_reindex dnd5e srd 1\.0\.0"):
        call_command("lore_smoke", "dnd5e", "srd", "1.0.0", tenant="tenant-a")
    with pytest.raises(CommandError, match="was pruned on"):
        call_command("lore_publish", "dnd5e", "srd", "1.0.0", tenant="tenant-a", force=True, reason="r")
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    page = client.post("/admin/lore/knowledgeversion/", {"action": "publish", "_selected_action": [pruned_world[0].pk]},
                       follow=True).content.decode()
    assert "was pruned" in page and "lore_reindex dnd5e srd 1.0.0" in page
    # Work staged and not yet published: the rebuild takes `stage` from it, and says so.
    services.knowledge_ingest(world=pruned_world[0].world, domain="srd", files=[_extra("Unpublished")], actor="t")
    capsys.readouterr()
    # The hint works: the version comes back as a new staged version with the same entries.
    call_command("lore_reindex", "dnd5e", "srd", "1.0.0", tenant="tenant-a")
    out = capsys.readouterr().out
    assert "1.0.0 -> 1.4.0 (staged)" in out
    assert "stage moved from 1.3.0 to 1.4.0: 1.3.0 stays as it was (`lore_publish dnd5e srd 1.3.0`" in out
    rebuilt = KnowledgeVersion.objects.get(world=pruned_world[0].world, version="1.4.0")
    assert (rebuilt.entry_count, rebuilt.chunk_count) == (pruned_world[0].entry_count, pruned_world[0].chunk_count)
    assert smoke.version_smoke(version=rebuilt)["by_language"]


def test_a_smoke_run_of_a_pruned_version_is_refused_before_its_queries_and_not_recorded_after_them(
        pruned_world, golden_dir, settings, tmp_path):
    settings.LORE_GOLDEN_DIR = tmp_path / "none"  # refused for the prune, not for the golden queries it lacks
    with pytest.raises(ApplicationError) as refused:
        smoke.version_smoke(version=KnowledgeVersion.objects.get(pk=pruned_world[0].pk))
    assert refused.value.code == "version_pruned"
    # One that read the version before it was pruned runs its queries, and their figures are not kept.
    settings.LORE_GOLDEN_DIR = tmp_path
    stale = pruned_world[0]
    assert stale.status == "staged"
    with pytest.raises(ApplicationError) as refused:
        smoke.version_smoke(version=stale)
    assert refused.value.code == "version_pruned"
    assert KnowledgeVersion.objects.get(pk=stale.pk).smoke == {}


def test_the_schema_documents_the_409_of_a_pruned_version(schema):
    paths = schema["paths"]
    for path, method in (("/api/v1/worlds/{world}/search", "post"),
                         ("/api/v1/worlds/{world}/domains/{domain}/versions/{version}/smoke", "post"),
                         ("/api/v1/worlds/{world}/domains/{domain}/publish", "post"),
                         ("/api/v1/worlds/{world}/domains/{domain}/rollback", "post")):
        declared = paths[path][method]["responses"]["409"]
        assert "version_pruned" in declared["description"] and "lore_reindex" in declared["description"], path
        assert declared["content"]["application/json"]["schema"]["$ref"] == "#/components/schemas/Error"
    version = schema["components"]["schemas"]["Version"]["properties"]
    assert "pruned" in version["status"]["description"] and "pruned_at" in version


# --- A run that stops between marking and deleting ------------------------------------------------
def test_a_run_stopped_while_deleting_leaves_the_version_refused_and_the_next_run_finishes_it(
        world, small_files, settings, monkeypatch, editor_client):
    settings.LORE_KEEP_VERSIONS = 1
    settings.LORE_PRUNE_MIN_AGE_HOURS = 0
    versions = _build(world, 2, small_files)
    _publish(versions[1])
    old = versions[0]
    monkeypatch.setattr(pruning, "DELETE_BATCH", 2)

    class Crash(Exception):
        pass

    def crash(namespace: str, done: int, total: int) -> None:
        if done:  # the process dies after the first batch
            raise Crash

    with pytest.raises(Crash):
        pruning.knowledge_versions_prune(on_deleted=crash)
    assert _status(old) == "pruned"
    assert 0 < _chunks(old) == old.chunk_count - 2
    assert Namespace.objects.filter(name=old.namespace).exists()
    client, _ = editor_client()
    _refused(client.post("/api/v1/worlds/dnd5e/search", {"query": QUERY, "version": "1.0.0"}, format="json"))
    assert _latest_hits(world)
    # A dry run says what is left, and leaves it.
    shown = io.StringIO()
    call_command("lore_prune", dry_run=True, stdout=shown)
    assert old.namespace in shown.getvalue() and _chunks(old) == old.chunk_count - 2

    report = pruning.knowledge_versions_prune()
    assert report.pruned == [] and report.namespaces == [old.namespace]
    assert report.chunks_deleted == old.chunk_count - 2
    assert _chunks(old) == 0 and not Namespace.objects.filter(name=old.namespace).exists()
    assert pruning.knowledge_versions_prune().counts()["namespaces"] == 0


# --- The command and the beat ----------------------------------------------------------------------
def test_the_command_says_what_it_keeps_and_prunes_and_a_dry_run_changes_nothing(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    versions = _build(world, 3, small_files)
    _publish(versions[2])
    shown = io.StringIO()
    call_command("lore_prune", "dnd5e", tenant="tenant-a", dry_run=True, stdout=shown)
    out = shown.getvalue()
    assert "dnd5e/srd (tenant tenant-a):" in out and "dry run" in out
    assert "1.2.0       keep   latest, live recently, newest" in out
    assert f"1.0.0       would prune  {versions[0].chunk_count:,} chunks" in out
    assert "would prune 2 version(s)" in out
    assert [_status(v) for v in versions] == ["staged", "staged", "live"]
    assert all(_chunks(v) == v.chunk_count for v in versions)

    shown, progress = io.StringIO(), io.StringIO()
    call_command("lore_prune", "dnd5e", tenant="tenant-a", stdout=shown, stderr=progress)
    assert f"1.1.0       prune  {versions[1].chunk_count:,} chunks" in shown.getvalue()
    assert "pruned 2 version(s), kept 1; deleted" in shown.getvalue()
    assert [_status(v) for v in versions] == ["pruned", "pruned", "live"]
    assert [KnowledgeVersion.objects.get(pk=v.pk).pruned_by for v in versions] == [pruning.COMMAND] * 2 + [""]
    with pytest.raises(CommandError, match="no world 'nowhere'"):
        call_command("lore_prune", "nowhere", tenant="tenant-a")


def test_the_prune_is_a_daily_beat_job_that_returns_its_counts(world, small_files, settings):
    entry = django_settings.CELERY_BEAT_SCHEDULE["lore-versions-prune"]
    assert entry == {"task": "lore.tasks.knowledge_versions_prune", "schedule": 86400.0}
    settings.LORE_KEEP_VERSIONS = 1
    versions = _build(world, 2, small_files)
    counts = app.tasks[entry["task"]].apply().result
    assert counts == {"kept": 1, "pruned": 1, "namespaces": 1, "chunks": versions[0].chunk_count}
    assert KnowledgeVersion.objects.get(pk=versions[0].pk).pruned_by == "the daily retention job"
    assert app.tasks[entry["task"]].apply().result == {"kept": 1, "pruned": 0, "namespaces": 0, "chunks": 0}


@pytest.mark.django_db(transaction=True)
def test_the_embedded_beat_runs_the_prune(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    versions = _build(world, 2, small_files)
    schedule = {"lore-versions-prune": {**django_settings.CELERY_BEAT_SCHEDULE["lore-versions-prune"],
                                        "schedule": 0.2}}
    beat = EmbeddedBeat(schedule, tick=0.05)
    beat.start()
    try:
        assert wait_for(lambda: _status(versions[0]) == "pruned" and not _chunks(versions[0]))
    finally:
        beat.stop()
        beat.join(10)
    assert _status(versions[1]) == "staged"


# --- The admin ------------------------------------------------------------------------------------
def test_the_admin_shows_what_would_go_then_prunes_and_records_who_did(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    versions = _build(world, 3, small_files)
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    page = client.post("/admin/lore/world/", {"action": "prune_versions", "_selected_action": [world.pk]})
    text = page.content.decode()
    assert page.status_code == 200 and "Prune 2 version(s)" in text and "keep: stage, newest" in text
    assert [_status(v) for v in versions] == ["staged", "staged", "staged"]  # only shown so far
    done = client.post("/admin/lore/world/", {"action": "prune_versions", "_selected_action": [world.pk],
                                              "apply": "1", "reason": "disk"}, follow=True)
    assert "2 version(s) of 1 world(s) pruned" in done.content.decode()
    assert [_status(v) for v in versions] == ["pruned", "pruned", "staged"]
    assert _chunks(versions[0]) == 0  # the task ran (in-process here; a worker or the background thread live)
    entry = LogEntry.objects.get(object_id=str(world.pk))
    assert "Pruned old versions by ed: srd 1.1.0, srd 1.0.0 (disk)" in entry.change_message
    assert {KnowledgeVersion.objects.get(pk=v.pk).pruned_by for v in versions[:2]} == {"ed in the admin: disk"}
    listing = client.get("/admin/lore/knowledgeversion/?status__exact=pruned").content.decode()
    assert "dnd5e:srd:1.0.0" in listing and "dnd5e:srd:1.2.0" not in listing


# --- Pruning racing the writers --------------------------------------------------------------------
def _race_world(world: World, small_files: list[services.UploadedFile]) -> list[KnowledgeVersion]:
    """latest 1.0.0, an old 1.1.0 no rule keeps (LORE_KEEP_VERSIONS 1), stage 1.2.0."""
    versions = _build(world, 3, small_files)
    _publish(versions[0])
    return versions


@pytest.mark.django_db(transaction=True)
def test_a_publish_and_a_prune_of_one_version_at_once_exactly_one_wins(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    outcomes = {"published": 0, "pruned": 0}
    for attempt in range(4):
        if attempt:
            world = services.world_create(tenant=world.tenant, slug=f"race-{attempt}", languages=["en", "ru"])
        versions = _race_world(world, small_files)
        target = versions[1]
        publish, prune = at_once(
            lambda t=target: services.lore_version_publish(version=KnowledgeVersion.objects.get(pk=t.pk), actor="t",
                                                           force=True, reason="race"),
            lambda w=world: pruning.knowledge_versions_prune(world=w))
        assert not isinstance(prune, BaseException), prune
        if isinstance(publish, BaseException):
            # The prune won: the publish is the clear 409, and latest never moved.
            assert isinstance(publish, ApplicationError) and publish.code == "version_pruned", publish
            assert (_status(target), _chunks(target)) == ("pruned", 0)
            assert Alias.objects.get(world=world, domain="srd", name="latest").version_id == versions[0].pk
            outcomes["pruned"] += 1
        else:
            # The publish won: the version is live and whole, and the prune kept it (and 1.0.0, a rollback back).
            assert (_status(target), _chunks(target)) == ("live", target.chunk_count)
            assert Alias.objects.get(world=world, domain="srd", name="latest").version_id == target.pk
            assert _chunks(versions[0]) == versions[0].chunk_count
            outcomes["published"] += 1
        assert _latest_hits(world)
    assert sum(outcomes.values()) == 4


def test_the_keep_rules_are_read_again_under_the_locks(world, small_files, settings, monkeypatch):
    """A publish that lands between the prune's first reading and its locks: the version it made live is
    kept. (Deciding on the first reading pruned the live version.)"""
    settings.LORE_KEEP_VERSIONS = 1
    versions = _race_world(world, small_files)
    plan = pruning.versions_plan
    readings: list[bool] = []

    def publish_meanwhile(**kwargs):  # type: ignore[no-untyped-def]
        verdicts = plan(**kwargs)
        if not readings:
            _publish(versions[1])  # another editor's publish, committed before the prune locks
        readings.append(kwargs.get("prunable") is not None)
        return verdicts

    monkeypatch.setattr(pruning, "versions_plan", publish_meanwhile)
    report = pruning.knowledge_versions_prune(world=world)
    assert readings == [False, True]
    assert report.pruned == [] and (_status(versions[1]), _chunks(versions[1])) == ("live", versions[1].chunk_count)


def test_a_publish_that_read_the_version_before_the_prune_marked_it_is_refused_under_its_lock(
        world, small_files, settings):
    """The publish's first look passed (the version was not pruned yet); it then waited for the `latest`
    lock the prune held, and reads the row again under it."""
    settings.LORE_KEEP_VERSIONS = 1
    versions = _race_world(world, small_files)
    read_before = KnowledgeVersion.objects.get(pk=versions[1].pk)
    pruning.knowledge_versions_prune(world=world)
    with pytest.raises(ApplicationError) as refused:
        services.lore_version_publish(version=read_before, actor="t", force=True, reason="late")
    assert (refused.value.code, refused.value.status_code) == ("version_pruned", 409)
    assert Alias.objects.get(world=world, domain="srd", name="latest").version_id == versions[0].pk


@pytest.mark.django_db(transaction=True)
def test_a_rollback_and_a_prune_at_once_leave_latest_whole(world, small_files, settings):
    settings.LORE_KEEP_VERSIONS = 1
    versions = _build(world, 7, small_files)
    for version in versions:
        _publish(version)  # latest 1.6.0; a rollback goes to 1.5.0
    rollback, prune = at_once(
        lambda: services.lore_version_rollback(world=world, domain="srd", actor="t"),
        lambda: pruning.knowledge_versions_prune(world=world))
    assert not errors_of([rollback, prune]), (rollback, prune)
    latest = Alias.objects.get(world=world, domain="srd", name="latest").version
    assert latest == versions[5] and _chunks(latest) == latest.chunk_count
    pruned = {v.version for v in versions if _status(v) == "pruned"}
    # Pruned before the rollback: all but 1.6.0 (newest, was latest) and 1.5.0 (a rollback back); after it,
    # 1.4.0 is a rollback back of the new latest and stays too.
    assert pruned in ({"1.0.0", "1.1.0", "1.2.0", "1.3.0", "1.4.0"}, {"1.0.0", "1.1.0", "1.2.0", "1.3.0"})
    assert _latest_hits(world)


@pytest.mark.django_db(transaction=True)
def test_a_build_reusing_the_vectors_of_a_version_being_pruned_is_complete(world, small_files, settings,
                                                                          monkeypatch):
    """`lore_reindex` of an old version whose text no kept version holds: its build copies that version's
    vectors by content key while the prune deletes them, batch by batch."""
    settings.LORE_KEEP_VERSIONS = 1
    many = [services.UploadedFile("Spells.json", as_bytes([*SPELLS, *(
        {"index": f"spell-{i}", "name": f"Spell {i}", "desc": [f"A spell of the {i}th circle of flame."]}
        for i in range(60))]), "en")]
    old = services.knowledge_ingest(world=world, domain="srd", files=many, actor="t")
    newer = services.knowledge_ingest(world=world, domain="srd", files=[_extra("Gods")], replace_all=True, actor="t")
    _age([old, newer], hours=48)
    _publish(newer)
    expected = selectors.knowledge_search(
        tenant_id=world.tenant_id, query="a spell of the 7th circle",
        targets=[selectors.Target("srd", old.version, old.namespace)], k=5).hits
    monkeypatch.setattr(pruning, "DELETE_BATCH", 5)
    build, prune = at_once(
        lambda: services.knowledge_ingest(world=world, domain="srd", files=[], actor="t",
                                          from_sources=list(old.sources.order_by("id")), add_edits=list(old.edits)),
        lambda: pruning.knowledge_versions_prune(world=world))
    assert not errors_of([build, prune]), (build, prune)
    assert _status(old) == "pruned" and _chunks(old) == 0
    assert build.chunk_count == old.chunk_count == _chunks(build)
    assert not Chunk.objects.filter(namespace=build.namespace, embedding__isnull=True).exists()
    rebuilt = selectors.knowledge_search(
        tenant_id=world.tenant_id, query="a spell of the 7th circle",
        targets=[selectors.Target("srd", build.version, build.namespace)], k=5).hits
    assert [(h.entry_id, h.text, round(h.score, 9)) for h in rebuilt] == \
        [(h.entry_id, h.text, round(h.score, 9)) for h in expected]


def test_every_scrape_counts_the_pruned_versions_whichever_process_pruned_them(world, small_files, settings,
                                                                              editor_client):
    """A prune by the command counted its metric in its own process, whose files went with it."""
    from tests.kernel.test_metrics import sample, scrape

    settings.LORE_KEEP_VERSIONS = 1
    before = scrape()
    versions = _build(world, 3, small_files)
    assert sample(scrape(), "memoryhub_lore_versions", status="staged") == (
        sample(before, "memoryhub_lore_versions", status="staged") + 3)
    call_command("lore_prune", "dnd5e", tenant="tenant-a", stdout=io.StringIO(), stderr=io.StringIO())
    after = scrape()
    assert sample(after, "memoryhub_lore_versions", status="pruned") == (
        sample(before, "memoryhub_lore_versions", status="pruned") + 2)
    pruned_at = KnowledgeVersion.objects.get(pk=versions[0].pk).pruned_at
    assert sample(after, "memoryhub_lore_last_pruned_timestamp_seconds") == pytest.approx(pruned_at.timestamp())
    assert sample(after, "memoryhub_metrics_collector_up", collector="lore_versions") == 1

    client, _ = editor_client()
    rows = {row["version"]: row for row in client.get(f"/api/v1/worlds/{world.slug}/versions").json()["versions"]}
    assert rows["1.0.0"]["pruned_by"] == "manage.py lore_prune" and rows["1.2.0"]["pruned_by"] == ""
