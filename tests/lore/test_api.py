from __future__ import annotations

import threading

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.test import APIClient

from lore import selectors, services, smoke
from lore.models import KnowledgeVersion
from memoryhub import services as kernel_services
from memoryhub.exceptions import ApplicationError
from tests.concurrency import at_once, errors_of
from tests.lore.conftest import CONDITIONS_EN, SPELLS, as_bytes
from tests.openapi import schema_body


def _upload(client: APIClient, *files: tuple[str, bytes], **fields: str):  # type: ignore[no-untyped-def]
    data = {"files": [SimpleUploadedFile(name, content) for name, content in files], "domain": "srd", **fields}
    return client.post("/api/v1/worlds/dnd5e/sources", data, format="multipart")


def test_editor_uploads_sources_searches_stage_and_publishes(editor_client, golden_dir):
    client, _ = editor_client()
    assert client.post("/api/v1/worlds", {"slug": "dnd5e", "languages": ["en", "ru"]}, format="json").status_code == 201
    response = _upload(client, ("Spells.json", as_bytes(SPELLS)), ("Conditions.json", as_bytes(CONDITIONS_EN)),
                       language="en")
    assert response.status_code == 201, response.json()
    assert response.json()["version"] == "1.0.0" and response.json()["aliases"] == ["stage"]
    search = client.post("/api/v1/worlds/dnd5e/search",
                         {"query": "explosion of flame", "alias": "stage", "k": 3}, format="json")
    assert search.status_code == 200
    top = search.json()["items"][0]
    assert (top["entry_id"], top["title"], top["version"]) == ("Spells/fireball", "Fireball", "1.0.0")
    assert top["heading_path"] == ["Spells", "Fireball"] and {"bm25", "vector"} <= set(top["components"])
    # Publishing before a smoke run: 409, the reason given.
    refused = client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert refused.status_code == 409 and refused.json()["error"]["code"] == "smoke_failed"
    assert "POST /api/v1/worlds/dnd5e/domains/srd/versions/1.0.0/smoke" in refused.json()["error"]["message"]
    golden_dir([{"id": "q", "language": "en", "query": "teleport in silvery mist", "expected": ["Spells/misty-step"]}])
    ran = client.post("/api/v1/worlds/dnd5e/domains/srd/versions/1.0.0/smoke", {}, format="json")
    assert ran.status_code == 200 and ran.json()["by_language"]["en"]["hit@1"] == 1.0
    published = client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert published.status_code == 200
    assert published.json()["to_version"] == "1.0.0" and published.json()["actor"].startswith("api-key:mh_")
    latest = client.post("/api/v1/worlds/dnd5e/search", {"query": "fire"}, format="json")
    assert latest.json()["versions"] == {"srd": "1.0.0"}
    rollback = client.post("/api/v1/worlds/dnd5e/domains/srd/rollback", {}, format="json")
    assert rollback.status_code == 409 and rollback.json()["error"]["code"] == "nothing_to_roll_back"
    listing = client.get("/api/v1/worlds/dnd5e/versions")
    assert listing.json()["changes"][0]["action"] == "publish"


def test_bad_sources_answer_400_naming_file_and_location(editor_client, world):
    client, _ = editor_client()
    broken = _upload(client, ("Spells.json", b'[{"index": "a",\n "name": }]'))
    assert broken.status_code == 400
    error = broken.json()["error"]
    assert error["code"] == "invalid_source" and error["file"] == "Spells.json" and "line 2" in error["location"]
    assert "files" in error["fields"]
    duplicate = _upload(client, ("Spells.json", as_bytes([SPELLS[0], SPELLS[0]])))
    assert duplicate.status_code == 400 and duplicate.json()["error"]["duplicates"] == ["Spells/fireball"]
    missing = client.post("/api/v1/worlds/dnd5e/sources", {"domain": "srd"}, format="multipart")
    assert missing.status_code == 400 and "files" in missing.json()["error"]["fields"]
    assert not KnowledgeVersion.objects.exists()


def test_search_validation_and_404s(editor_client, staged, api_client_for):
    client, _ = editor_client()
    bad = client.post("/api/v1/worlds/dnd5e/search", {"query": "x", "alias": "stage", "version": "1.0.0"},
                      format="json")
    assert bad.status_code == 400 and "version" in bad.json()["error"]["fields"]
    bad = client.post("/api/v1/worlds/dnd5e/search", {"query": "x", "filters": {"colour": ["red"]}}, format="json")
    assert bad.status_code == 400 and "filters" in bad.json()["error"]["fields"]
    assert client.post("/api/v1/worlds/dnd5e/search", {"query": "x"}, format="json").status_code == 404  # no latest
    assert client.post("/api/v1/worlds/nope/search", {"query": "x"}, format="json").status_code == 404
    other, _ = editor_client("tenant-b")
    assert other.post("/api/v1/worlds/dnd5e/search", {"query": "x", "alias": "stage"},
                      format="json").status_code == 404
    assert other.get("/api/v1/worlds/dnd5e/versions").status_code == 404


def test_searching_a_world_without_the_domain_names_the_domains_it_has(editor_client, world):
    client, _ = editor_client()
    lore = {"files": [SimpleUploadedFile("realm.md", b"# Realm\n\n## The Iron Keep\nA fortress of black iron.\n")],
            "domain": "lore"}
    assert client.post("/api/v1/worlds/dnd5e/sources", lore, format="multipart").status_code == 201
    missing = client.post("/api/v1/worlds/dnd5e/search", {"query": "iron keep", "alias": "stage"}, format="json")
    assert missing.status_code == 404  # `domains` defaults to srd, which this world has nothing of
    error = missing.json()["error"]
    assert error["message"] == "World 'dnd5e' has no alias 'stage' for domain(s) srd; it has one for lore."
    assert "domains" in error["fields"]
    found = client.post("/api/v1/worlds/dnd5e/search", {"query": "iron keep", "alias": "stage", "domains": ["lore"]},
                        format="json")
    assert found.status_code == 200 and found.json()["items"][0]["title"] == "The Iron Keep"
    # A version that no domain holds: the version is at fault; one that another domain holds: the domains.
    unknown = client.post("/api/v1/worlds/dnd5e/search", {"query": "iron keep", "version": "9.9.9",
                                                          "domains": ["lore"]}, format="json")
    assert unknown.status_code == 404 and list(unknown.json()["error"]["fields"]) == ["version"]
    elsewhere = client.post("/api/v1/worlds/dnd5e/search", {"query": "iron keep", "version": "1.0.0"}, format="json")
    assert elsewhere.status_code == 404 and list(elsewhere.json()["error"]["fields"]) == ["domains"]


def test_scopes_guard_routes_and_old_keys_keep_memory(editor_client, staged):
    memory_client, tenant = editor_client(scopes=("memory",))  # as every key made before scopes
    denied = memory_client.post("/api/v1/worlds/dnd5e/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert denied.status_code == 403 and "'editor'" in denied.json()["error"]["message"]
    denied = memory_client.post("/api/v1/worlds/dnd5e/search", {"query": "x"}, format="json")
    assert denied.status_code == 403 and "'tools'" in denied.json()["error"]["message"]
    # Past the scope check: the session is simply unknown.
    assert memory_client.get("/api/v1/users/u1/sessions/s1/messages").status_code == 404
    _, raw = kernel_services.api_key_create(tenant=tenant, name="tools", scopes=["tools"])
    tools = APIClient()
    tools.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    assert tools.post("/api/v1/worlds/dnd5e/search", {"query": "fire", "alias": "stage"},
                      format="json").status_code == 200
    refused = tools.get("/api/v1/users/u1/sessions/s1/messages")
    assert refused.status_code == 403 and "'memory'" in refused.json()["error"]["message"]
    assert tools.post("/api/v1/worlds/dnd5e/sources", {}, format="multipart").status_code == 403


def test_unknown_scope_is_refused(tenant):
    with pytest.raises(kernel_services.ApplicationError) as caught:
        kernel_services.api_key_create(tenant=tenant, scopes=["admin"])
    assert caught.value.field == "scopes"


def test_openapi_schema_lists_the_world_routes(client_a):
    paths = APIClient().get("/api/schema/", HTTP_ACCEPT="application/json").json()["paths"]
    for route in ("/api/v1/worlds/{world}/search", "/api/v1/worlds/{world}/sources",
                  "/api/v1/worlds/{world}/domains/{domain}/publish"):
        assert route in paths
    assert "403" in paths["/api/v1/worlds/{world}/search"]["post"]["responses"]


@pytest.mark.django_db(transaction=True)
def test_searches_during_alias_swaps_each_see_exactly_one_version(golden_dir):
    tenant, _ = kernel_services.tenant_create(name="swap")
    world = services.world_create(tenant=tenant, slug="dnd5e", languages=["en"])
    v1 = services.knowledge_ingest(world=world, domain="srd",
                                   files=[services.UploadedFile("Spells.json", as_bytes(SPELLS))])
    changed = [dict(s, desc=[f"{s['desc'][0]} Revised."]) for s in SPELLS]
    v2 = services.knowledge_ingest(world=world, domain="srd",
                                   files=[services.UploadedFile("Spells.json", as_bytes(changed))])
    golden_dir([{"id": "q", "language": "en", "query": "teleport in silvery mist", "expected": ["Spells/misty-step"]}])
    for version in (v1, v2):
        smoke.version_smoke(version=version)
    services.lore_version_publish(version=v1, actor="t")
    services.lore_version_publish(version=v2, actor="t")
    seen: list[set[str]] = []
    errors: list[BaseException] = []
    stop = threading.Event()

    def searcher() -> None:
        from django.db import connection
        try:
            while not stop.is_set():
                targets = selectors.targets_resolve(tenant_id=tenant.pk, world_slug="dnd5e", domains=["srd"])
                hits = selectors.knowledge_search(tenant_id=tenant.pk, targets=targets, query="creature feet",
                                                  k=10).hits
                # The version of every hit, checked against the text it came from.
                versions = {hit.version for hit in hits}
                texts = {"Revised." in hit.text for hit in hits}
                seen.append(versions | {f"revised={t}" for t in texts})
        except BaseException as exc:
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=searcher) for _ in range(2)]
    for thread in threads:
        thread.start()
    swaps = 0
    for _ in range(6):
        services.lore_version_rollback(world=world, domain="srd", actor="t")  # -> v1
        services.lore_version_publish(version=KnowledgeVersion.objects.get(pk=v2.pk), actor="t")  # -> v2
        swaps += 2
    stop.set()
    for thread in threads:
        thread.join()
    assert not errors, errors
    assert len(seen) >= 4
    allowed = [{"1.0.0", "revised=False"}, {"1.1.0", "revised=True"}]
    assert all(s in allowed for s in seen), [s for s in seen if s not in allowed][:3]
    assert swaps == 12


# --- the schema and the validation agree (found by `make fuzz`) -------------------------------------
@pytest.mark.parametrize(("body", "field"), [
    ({"slug": 0}, "slug"),
    ({"slug": "Dnd 5e"}, "slug"),
    ({"slug": "dnd", "languages": ["\u00a0"]}, "languages"),
    ({"slug": "dnd", "languages": ["english"]}, "languages"),
    ({"slug": "dnd", "languages": ["en", "xx"]}, "languages"),
    ({"slug": "dnd", "name": 5}, "name"),
])
def test_world_the_schema_forbids_is_400_naming_the_field(editor_client, schema, schema_allows, body: dict,
                                                          field: str) -> None:
    client, _ = editor_client()
    assert not schema_allows(schema_body(schema, "/api/v1/worlds", "post"), body)
    response = client.post("/api/v1/worlds", body, format="json")
    assert response.status_code == 400 and field in response.json()["error"]["fields"]


def test_world_the_schema_allows_is_created(editor_client, schema, schema_allows) -> None:
    client, _ = editor_client()
    body = {"slug": "dnd-5e", "name": " ", "languages": ["en", "ru"]}
    assert schema_allows(schema_body(schema, "/api/v1/worlds", "post"), body)
    assert client.post("/api/v1/worlds", body, format="json").status_code == 201


def test_a_language_django_does_not_know_is_refused_naming_the_field_and_the_codes_it_knows(editor_client) -> None:
    """A world in "xx" was created (it passed the pattern [a-z]{2,3}), and then took sources in "xx"
    (found by a QA session): the codes are now those django.conf.locale.LANG_INFO knows."""
    client, tenant = editor_client()
    refused = client.post("/api/v1/worlds", {"slug": "qa-world", "languages": ["en", "xx"]}, format="json")
    assert refused.status_code == 400, refused.content
    [said] = refused.json()["error"]["fields"]["languages"]["1"]
    assert said.startswith('"xx" is not an ISO 639 code Django knows') and "allowed: af, ar," in said, said
    assert ", zh." in said  # LANG_INFO has zh-hans and zh-hant, no bare zh: its base code is there
    with pytest.raises(ApplicationError) as exc:  # as `lore_ingest --create --languages` creates one
        services.world_create(tenant=tenant, slug="qa-world", languages=["xx"])
    assert exc.value.field == "languages" and "allowed: af," in exc.value.message
    created = client.post("/api/v1/worlds", {"slug": "dnd5e", "languages": ["en", "ru", "zh"]}, format="json")
    assert created.status_code == 201, created.content

    for language, says in (("xx", "not an ISO 639 code"), ("fr", "not one of the world's ['en', 'ru', 'zh']")):
        upload = _upload(client, ("Spells.json", as_bytes(SPELLS)), language=language)
        assert upload.status_code == 400 and says in upload.json()["error"]["fields"]["language"][0], upload.content
        query = {"id": "q", "language": language, "query": "fireball", "expected": ["Spells/fireball"]}
        golden = client.put("/api/v1/worlds/dnd5e/domains/lore/golden", {"queries": [query]}, format="json")
        error = golden.json()["error"]
        assert golden.status_code == 400 and says in error["message"], golden.content
        # The serializer names the path in the message, the world's check as the field.
        assert error["message"].startswith("queries[0].language: ") or "queries[0].language" in error["fields"]
    assert not KnowledgeVersion.objects.exists()


@pytest.mark.parametrize(("filters", "allowed"), [
    ({"x-schemathesis-additional": {}}, False), ({"languages": [1]}, False), ({"languages": ["en"]}, True),
    ({"categories": ["Spells"]}, True),
])
def test_search_filters_the_schema_forbids_are_refused(editor_client, staged, schema, schema_allows,
                                                       filters: dict, allowed: bool) -> None:
    client, _ = editor_client()
    body = {"query": "fireball", "alias": "stage", "filters": filters}
    assert schema_allows(schema_body(schema, "/api/v1/worlds/{world}/search", "post"), body) is allowed
    response = client.post("/api/v1/worlds/dnd5e/search", body, format="json")
    assert response.status_code == (200 if allowed else 400), response.content
    if not allowed:
        assert "filters" in response.json()["error"]["fields"]


def test_upload_version_pattern_is_the_semver_the_api_takes(editor_client, world, schema, schema_allows) -> None:
    client, _ = editor_client()
    body = schema_body(schema, "/api/v1/worlds/{world}/sources", "post", "multipart/form-data")
    version = body["properties"]["version"]
    assert not schema_allows(version, "0") and not schema_allows(version, "01.0.0")
    assert schema_allows(version, "2.10.0")
    response = _upload(client, ("Spells.json", as_bytes(SPELLS)), version="0")
    assert response.status_code == 400 and "version" in response.json()["error"]["fields"]
    assert _upload(client, ("Spells.json", as_bytes(SPELLS)), version="2.10.0").status_code == 201
    # Versions only go forward: an older number moved `stage` back to a build that read as the older one.
    for older in ("2.9.9", "2.10.0", "0.0.0"):
        refused = _upload(client, ("Spells.json", as_bytes(SPELLS)), version=older)
        assert refused.status_code == 409 and list(refused.json()["error"]["fields"]) == ["version"], refused.content
        assert "2.10.0" in refused.json()["error"]["message"]
    assert _upload(client, ("Spells.json", as_bytes(SPELLS)), version="2.10.1").status_code == 201
    assert _upload(client, ("Spells.json", as_bytes(SPELLS))).json()["version"] == "2.11.0"


def test_search_schema_forbids_an_alias_with_a_version_as_the_api_does(editor_client, staged, schema,
                                                                       schema_allows) -> None:
    client, _ = editor_client()
    body = {"query": "fireball", "alias": "stage", "version": "1.0.0"}
    search = schema_body(schema, "/api/v1/worlds/{world}/search", "post")
    assert not schema_allows(search, body)
    assert schema_allows(search, {"query": "fireball", "alias": "stage"})
    response = client.post("/api/v1/worlds/dnd5e/search", body, format="json")
    assert response.status_code == 400 and "version" in response.json()["error"]["fields"]


def test_a_value_outside_a_pattern_or_a_choice_is_refused_saying_what_would_do(editor_client, world) -> None:
    """`slug: This value does not match the required pattern.` and `"own" is not a valid choice.` left a
    client guessing (found by a QA trial): the error now gives the pattern, or the allowed values."""
    client, _ = editor_client()
    slug = client.post("/api/v1/worlds", {"slug": "qa_realm"}, format="json").json()["error"]["fields"]["slug"]
    assert slug == ["This value does not match the required pattern: ^[a-z0-9][a-z0-9-]{0,63}$"]
    preset = _upload(client, ("Spells.json", as_bytes(SPELLS)), preset="own").json()["error"]["fields"]["preset"]
    assert preset[0].startswith('"own" is not a valid choice; allowed: ') and "generic" in preset[0]
    domains = client.post("/api/v1/worlds/dnd5e/search", {"query": "x", "domains": ["srd", "rules"]},
                          format="json").json()["error"]["fields"]["domains"]
    assert domains == {"1": ['"rules" is not a valid choice; allowed: srd, lore.']}, domains


def test_an_editor_sends_golden_queries_over_the_api_and_publishes_without_force(editor_client, tmp_path,
                                                                                  settings) -> None:
    """Golden queries lived only on the server's disk: a new world's editor, told to run the smoke, was told
    there were no golden queries, and every publish had to be forced (found by a QA trial)."""
    settings.LORE_GOLDEN_DIR = tmp_path  # no file for this world
    client, _ = editor_client()
    assert client.post("/api/v1/worlds", {"slug": "frost", "languages": ["en", "ru"]}, format="json").status_code == 201
    assert client.post("/api/v1/worlds/frost/sources", {
        "files": [SimpleUploadedFile("Spells.json", as_bytes(SPELLS))], "domain": "srd"},
        format="multipart").status_code == 201
    none = client.get("/api/v1/worlds/frost/domains/srd/golden").json()
    assert (none["source"], none["queries"]) == ("", [])
    smoke = client.post("/api/v1/worlds/frost/domains/srd/versions/1.0.0/smoke", {}, format="json")
    assert smoke.status_code == 409 and "PUT" in smoke.json()["error"]["message"]

    queries = [{"id": "en-1", "language": "en", "query": "teleport in silvery mist", "expected": ["Spells/misty-step"]},
               {"id": "en-2", "language": "en", "split": "tune", "query": "explosion of flame",
                "expected": ["Spells/fireball"]}]
    sent = client.put("/api/v1/worlds/frost/domains/srd/golden", {"queries": queries}, format="json")
    assert sent.status_code == 200, sent.content
    assert sent.json()["source"] == "api" and [q["split"] for q in sent.json()["queries"]] == ["test", "tune"]
    assert client.get("/api/v1/worlds/frost/domains/srd/golden").json()["queries"] == sent.json()["queries"]
    ran = client.post("/api/v1/worlds/frost/domains/srd/versions/1.0.0/smoke", {}, format="json").json()
    assert ran["golden"] == "golden set of frost/srd" and ran["overall"]["n"] == 1 and ran["overall"]["hit@1"] == 1.0
    published = client.post("/api/v1/worlds/frost/domains/srd/publish", {"version": "1.0.0"}, format="json")
    assert published.status_code == 200 and published.json()["action"] == "publish"

    for bad, field in [
        ([{**queries[0], "language": "zh"}], "queries[0].language"),
        ([queries[0], {**queries[1], "id": "en-1"}], "queries[1].id"),
        ([queries[1]], "queries"),
        ([{**queries[0], "expected": []}], "queries"),
        ([{**queries[0], "colour": "red"}], "queries"),
    ]:
        refused = client.put("/api/v1/worlds/frost/domains/srd/golden", {"queries": bad}, format="json")
        assert refused.status_code == 400, (bad, refused.content)
        assert field in str(refused.json()["error"]["fields"]), (field, refused.content)
    assert client.get("/api/v1/worlds/frost/domains/srd/golden").json()["queries"] == sent.json()["queries"]
    # Another tenant's world is unknown; a key without the editor scope may not send golden queries.
    other, _ = editor_client("tenant-b")
    assert other.get("/api/v1/worlds/frost/domains/srd/golden").status_code == 404
    tools, _ = editor_client(scopes=("tools",))
    assert tools.put("/api/v1/worlds/frost/domains/srd/golden", {"queries": queries}, format="json").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_two_editors_sending_a_worlds_first_golden_set_at_once_leave_one_set() -> None:
    """The set is one row per world and domain: two first PUTs racing must not both insert (a 500 on the
    unique constraint) nor leave two."""
    from lore.models import GoldenSet

    tenant, _ = kernel_services.tenant_create(name="race")
    world = services.world_create(tenant=tenant, slug="frost", languages=["en"])

    def send(i: int) -> object:
        return services.golden_set_save(world=world, domain="srd", actor=f"editor-{i}", queries=[
            {"id": f"q{i}", "language": "en", "query": f"question {i}", "expected": ["Spells/fireball"]}])

    errors = errors_of(at_once(lambda: send(0), lambda: send(1)))
    assert not errors, errors
    [golden] = GoldenSet.objects.filter(world=world)
    assert (golden.updated_by, golden.queries[0]["id"]) in {("editor-0", "q0"), ("editor-1", "q1")}


@pytest.mark.django_db(transaction=True)
def test_two_creations_of_one_world_or_campaign_at_once_give_one_and_a_409_not_a_500() -> None:
    from lore.campaigns import services as campaign_services

    tenant, _ = kernel_services.tenant_create(name="race")
    world = services.world_create(tenant=tenant, slug="base", languages=["en"])
    makers = {
        "world": lambda: services.world_create(tenant=tenant, slug="frost", languages=["en"]),
        "campaign": lambda: campaign_services.campaign_create(tenant=tenant, world=world, slug="camp_1"),
        "tenant": lambda: kernel_services.tenant_create(name="twins"),
    }
    for what, make in makers.items():
        outcomes = at_once(make, make)
        refused = errors_of(outcomes)
        assert len(refused) == 1 and isinstance(refused[0], ApplicationError), (what, outcomes)
        assert refused[0].code == "exists", (what, refused[0])
