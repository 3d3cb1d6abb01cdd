"""Canary routing: a share of a domain's `latest` searches served by its staged version, before it is
published; the same version for one caller key every time; ended by a publish or a rollback; audited."""

from __future__ import annotations

import pytest

from lore import selectors, services
from lore.models import Alias, KnowledgeChange, KnowledgeVersion, World
from tests.lore.conftest import CAMPAIGN_BASE, CONDITIONS_EN, SPELLS, as_bytes, scoped_client

pytestmark = pytest.mark.django_db

CANARY = "/api/v1/worlds/dnd5e/domains/srd/canary"
SEARCH = "/api/v1/worlds/dnd5e/search"
MORE_SPELLS = [*SPELLS, {"index": "light", "name": "Light", "level": 0,
                         "desc": ["You touch one object; it sheds bright light in a 20-foot radius."]}]


@pytest.fixture
def two_versions(world: World, small_files: list[services.UploadedFile]) -> tuple[KnowledgeVersion, KnowledgeVersion]:
    """1.0.0 live, 1.1.0 staged (one spell more)."""
    live = services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="test")
    services.lore_version_publish(version=live, actor="test", force=True, reason="fixture")
    staged = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Spells.json", as_bytes(MORE_SPELLS), "en"),
        services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_EN), "en")])
    assert (live.version, staged.version) == ("1.0.0", "1.1.0")
    return live, staged


def _canary(world: World, share: float) -> KnowledgeChange:
    return services.lore_canary_set(world=world, domain="srd", share=share, actor="editor", force=True,
                                    reason="try it")


def _served(world: World, key: str | None = None) -> selectors.Target:
    [target] = selectors.targets_resolve(tenant_id=world.tenant_id, world_slug=world.slug, domains=["srd"],
                                         canary_key=key)
    return target


def test_share_0_never_and_share_1_always(world, two_versions) -> None:
    _canary(world, 0.0)
    assert {(_served(world).version, _served(world).canary) for _ in range(50)} == {("1.0.0", False)}
    _canary(world, 1.0)
    assert {(_served(world, f"s{n}").version, _served(world).canary) for n in range(50)} == {("1.1.0", True)}


def test_a_caller_key_keeps_its_version_and_keys_split_by_the_share(world, two_versions) -> None:
    _canary(world, 0.3)
    for key in ("session-1", "session-2", "party/pty_001"):
        assert len({_served(world, key).version for _ in range(20)}) == 1
    chosen = [_served(world, f"player-{n}").canary for n in range(400)]
    assert 0.2 < sum(chosen) / len(chosen) < 0.4
    # Without a key each search is drawn: both versions serve (a chance of 0.7**300 + 0.3**300 to fail).
    assert {_served(world).version for _ in range(300)} == {"1.0.0", "1.1.0"}
    # Explicit stage or version searches are never routed.
    assert selectors.targets_resolve(tenant_id=world.tenant_id, world_slug="dnd5e", domains=["srd"],
                                     version="1.0.0")[0].canary is False


def test_the_world_search_says_which_version_served(world, two_versions, editor_client) -> None:
    client, _ = editor_client()
    assert client.put(CANARY, {"share": 1.0, "force": True, "reason": "try"}, format="json").status_code == 200
    body = client.post(SEARCH, {"query": "light", "session": "s1"}, format="json").json()
    assert body["canary"] is True and body["versions"] == {"srd": "1.1.0"}
    assert body["items"][0]["entry_id"] == "Spells/light" and {i["version"] for i in body["items"]} == {"1.1.0"}
    assert client.put(CANARY, {"share": 0.0}, format="json").status_code == 409  # smoke-gated like a publish
    assert client.put(CANARY, {"share": 0.0, "force": True, "reason": "pause"}, format="json").json()["share"] == 0
    body = client.post(SEARCH, {"query": "light", "session": "s1"}, format="json").json()
    assert body["canary"] is False and body["versions"] == {"srd": "1.0.0"}
    staged = client.post(SEARCH, {"query": "light", "alias": "stage"}, format="json").json()
    assert staged["canary"] is False and staged["versions"] == {"srd": "1.1.0"}


def test_a_publish_ends_the_canary_and_so_does_a_rollback(world, two_versions) -> None:
    _, staged = two_versions
    _canary(world, 0.5)
    services.lore_version_publish(version=staged, actor="editor", force=True, reason="it held")
    latest = Alias.objects.get(world=world, domain="srd", name="latest")
    assert latest.canary_version is None and latest.canary_share == 0
    end = KnowledgeChange.objects.filter(world=world, action="canary_end").get()
    assert end.reason == "ended by the publish of 1.1.0" and end.to_version == staged and end.share == 0.5
    assert {(_served(world).version, _served(world).canary) for _ in range(30)} == {("1.1.0", False)}
    # Back to 1.0.0 with a canary of a newer build: the rollback ends it too.
    newer = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])
    _canary(world, 1.0)
    assert _served(world).version == newer.version
    services.lore_version_rollback(world=world, domain="srd", actor="editor", reason="bad")
    assert _served(world).version == "1.0.0" and not _served(world).canary
    assert KnowledgeChange.objects.filter(world=world, action="canary_end").count() == 2


def test_a_moved_or_missing_stage_stops_serving_safely(world, two_versions, editor_client) -> None:
    client, _ = editor_client()
    _canary(world, 1.0)
    # A newer build moves `stage`: the canary tried 1.1.0, and does not silently try 1.2.0.
    newer = services.knowledge_ingest(world=world, domain="srd", actor="test", files=[
        services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")])
    assert newer.version == "1.2.0"
    assert {_served(world, "s1").version for _ in range(10)} == {"1.0.0"}
    state = client.get(CANARY).json()
    assert state == {"domain": "srd", "latest": "1.0.0", "version": "1.1.0", "share": 1.0, "serving": False}
    Alias.objects.filter(world=world, domain="srd", name="stage").delete()
    assert _served(world, "s1").version == "1.0.0"
    assert client.post(SEARCH, {"query": "light", "session": "s1"}, format="json").status_code == 200
    # Again from the API: the stage's version now, or 409 with none.
    assert client.put(CANARY, {"share": 0.5, "force": True, "reason": "r"}, format="json").json()["error"]["code"] \
        == "no_stage"


def test_the_canary_is_audited_and_stopped(world, two_versions, editor_client) -> None:
    client, _ = editor_client()
    put = client.put(CANARY, {"share": 0.25, "force": True, "reason": "one in four"}, format="json")
    assert put.status_code == 200
    assert put.json() == {"domain": "srd", "latest": "1.0.0", "version": "1.1.0", "share": 0.25, "serving": True}
    changes = client.get("/api/v1/worlds/dnd5e/versions").json()["changes"]
    assert changes[0]["action"] == "canary" and changes[0]["share"] == 0.25 and changes[0]["reason"] == "one in four"
    assert (changes[0]["from_version"], changes[0]["to_version"]) == ("1.0.0", "1.1.0") and changes[0]["actor"]
    stop = client.delete(CANARY, {"reason": "enough"}, format="json")
    assert stop.status_code == 200 and stop.json()["action"] == "canary_end" and stop.json()["reason"] == "enough"
    assert client.get(CANARY).json()["version"] is None
    again = client.delete(CANARY, format="json")
    assert again.status_code == 409 and again.json()["error"]["code"] == "no_canary"


def test_bad_input_is_400_naming_the_field(world, two_versions, editor_client) -> None:
    client, _ = editor_client()
    for body, field in (({"share": 1.5}, "share"), ({"share": -0.1}, "share"), ({"share": "0.1"}, "share"),
                        ({"share": True}, "share"), ({}, "share"), ({"share": 0.1, "colour": 1}, "colour"),
                        ({"share": 0.1, "force": True}, "reason")):
        response = client.put(CANARY, body, format="json")
        assert response.status_code == 400 and field in response.json()["error"]["fields"], (body, response.json())
    bad_session = client.post(SEARCH, {"query": "light", "session": 7}, format="json")
    assert bad_session.status_code == 400 and "session" in bad_session.json()["error"]["fields"]
    assert client.put("/api/v1/worlds/dnd5e/domains/lore/canary", {"share": 0.1}, format="json").json()["error"][
        "code"] == "no_live_version"
    assert client.put("/api/v1/worlds/nope/domains/srd/canary", {"share": 0.1}, format="json").status_code == 404


def test_editors_only_and_tenants_apart(world, two_versions, editor_client) -> None:
    for scope in ("engine", "tools", "memory"):
        other = scoped_client(world.tenant, scope)
        assert other.put(CANARY, {"share": 0.1}, format="json").status_code == 403
        assert other.get(CANARY).status_code == 403 and other.delete(CANARY).status_code == 403
    _canary(world, 1.0)
    # Tenant B: another world of the same slug, unknown to A's canary; A's world unknown to B's key.
    other, tenant_b = editor_client("tenant-b")
    assert other.get(CANARY).status_code == 404
    assert other.put(CANARY, {"share": 1.0, "force": True, "reason": "x"}, format="json").status_code == 404
    world_b = services.world_create(tenant=tenant_b, slug="dnd5e", languages=["en"])
    services.lore_version_publish(version=services.knowledge_ingest(
        world=world_b, domain="srd", actor="t", files=[services.UploadedFile("Spells.json", as_bytes(SPELLS), "en")]),
        actor="t", force=True, reason="x")
    body = other.post(SEARCH, {"query": "fireball", "session": "s1"}, format="json").json()
    assert body["canary"] is False and body["versions"] == {"srd": "1.0.0"}
    assert other.get(CANARY).json()["version"] is None


def test_scene_and_tools_follow_the_canary(world, two_versions, engine) -> None:
    _canary(world, 1.0)
    scene = engine.post(f"{CAMPAIGN_BASE}/scene-context", {"party": "pty_001", "user_input": "I cast light"},
                        format="json").json()
    rules = next(b for b in scene["blocks"] if b["name"] == "rules")
    assert rules["items"] and all(i["source"].endswith("@1.1.0") for i in rules["items"])
    tools = scoped_client(world.tenant, "tools")
    found = tools.post("/api/v1/tools/lore_search", {"query": "light", "world": "dnd5e", "session": "s1"},
                       format="json").json()
    assert found["canary"] is True and found["versions"] == {"srd": "1.1.0"}
    rule = tools.post("/api/v1/tools/rules_lookup", {"term": "Light", "world": "dnd5e"}, format="json").json()
    assert rule["version"] == "1.1.0" and rule["canary"] is True and rule["rules"][0]["rule_id"] == "Spells/light"


def test_openapi_documents_the_canary(schema) -> None:
    route = schema["paths"]["/api/v1/worlds/{world}/domains/{domain}/canary"]
    assert {"get", "put", "delete"} <= route.keys()
    assert "403" in route["put"]["responses"] and "409" in route["put"]["responses"]
    components = schema["components"]["schemas"]
    search = schema["paths"]["/api/v1/worlds/{world}/search"]["post"]
    ref = search["requestBody"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "session" in components[ref]["properties"]
    out = search["responses"]["200"]["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[-1]
    assert "canary" in components[out]["properties"]


def test_pruning_counts_no_canary_as_a_move_of_latest(world, two_versions, settings) -> None:
    """The retention policy keeps what the last publishes and rollbacks moved `latest` from or to; a canary's
    rows name a version `latest` never held."""
    from lore import pruning

    settings.LORE_KEEP_VERSIONS = 1
    _canary(world, 0.5)
    services.lore_canary_stop(world=world, domain="srd", actor="editor")
    verdicts = {v.version: v for v in pruning.versions_plan(world=world, domain="srd")}
    assert "live recently" not in verdicts["1.1.0"].kept_for and "live recently" in verdicts["1.0.0"].kept_for


def test_a_search_without_a_canary_costs_no_extra_query(world, two_versions, django_assert_num_queries) -> None:
    with django_assert_num_queries(1):
        _served(world, "s1")
    _canary(world, 1.0)
    with django_assert_num_queries(1):
        assert _served(world, "s1").canary


def test_a_backup_keeps_the_canary_rows_and_restores_none_running(world, two_versions) -> None:
    from lore.backup import knowledge_export, knowledge_import, world_delete

    _canary(world, 0.2)
    exported = knowledge_export(world=world)
    assert [(c["action"], c["share"]) for c in exported["changelog"]][-1] == ("canary", 0.2)
    tenant = world.tenant
    world_delete(world=world)
    restored = knowledge_import(tenant=tenant, data=exported)
    change = KnowledgeChange.objects.filter(world=restored).order_by("-id").first()
    assert (change.action, change.share, change.to_version.version) == ("canary", 0.2, "1.1.0")
    assert _served(restored, "s1").version == "1.0.0" and not _served(restored, "s1").canary


def test_the_admin_shows_a_canary_and_cannot_change_it(world, two_versions, admin_client) -> None:
    _canary(world, 0.5)
    latest = Alias.objects.get(world=world, domain="srd", name="latest")
    page = admin_client.get(f"/admin/lore/alias/{latest.pk}/change/")
    assert page.status_code == 200 and b"1.1.0" in page.content
    assert b'name="canary_share"' not in page.content and b'name="canary_version"' not in page.content
    assert admin_client.get("/admin/lore/knowledgechange/").status_code == 200
