"""Knowledge backup and restore: export, delete the world, import, and search answers the same."""

from __future__ import annotations

import io
import json
import re
from datetime import timedelta

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from lore import edits, pruning, selectors, services
from lore.backup import world_delete
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent
from lore.models import Alias, KnowledgeChange, KnowledgeVersion, World
from memoryhub.exceptions import ApplicationError
from rag.models import Chunk
from tests.lore.conftest import SPELLS, as_bytes

QUERIES = ["how big is the explosion of flame", "teleport in mist", "regain hit points", "существо не видит",
           "crawl on the ground", "glowing ember bolt"]


def _answers(tenant_id: int) -> dict:
    answers = {}
    for version in KnowledgeVersion.objects.filter(world__tenant_id=tenant_id, world__slug="dnd5e").exclude(
            status=KnowledgeVersion.Status.PRUNED):
        targets = selectors.targets_resolve(tenant_id=tenant_id, world_slug="dnd5e", domains=["srd"],
                                            version=version.version)
        for query in QUERIES:
            hits = selectors.knowledge_search(tenant_id=tenant_id, targets=targets, query=query, k=5).hits
            answers[(version.version, query)] = [(h.entry_id, h.language, h.title, h.text, round(h.score, 9),
                                                  h.heading_path) for h in hits]
    for alias in ("latest", "stage"):
        targets = selectors.targets_resolve(tenant_id=tenant_id, world_slug="dnd5e", domains=["srd"], alias=alias)
        hits = selectors.knowledge_search(tenant_id=tenant_id, targets=targets, query=QUERIES[0], k=3).hits
        answers[(alias, QUERIES[0])] = [(h.entry_id, h.version, round(h.score, 9)) for h in hits]
    return answers


def _state(world: World) -> dict:
    return {
        "versions": list(world.versions.order_by("id").values_list(
            "domain", "version", "status", "entry_count", "chunk_count", "created_by", "smoke", "pruned_at",
            "pruned_by")),
        "aliases": sorted(world.aliases.values_list("domain", "name", "version__version")),
        "changes": list(world.changes.order_by("id").values_list("action", "from_version__version",
                                                                 "to_version__version", "actor", "reason")),
        "edits": list(KnowledgeEdit.objects.filter(world=world).order_by("id").values_list(
            "action", "entry_id", "status", "decision_reason", "produced_version__version", "base_version__version")),
        "events": list(KnowledgeEditEvent.objects.filter(edit__world=world).order_by("id").values_list(
            "action", "actor", "version")),
        "sources": list(world.sources.order_by("id").values_list("language", "filename", "sha256")),
    }


def test_export_delete_import_gives_identical_search(staged, tmp_path):
    world = staged.world
    tenant_id = world.tenant_id
    services.lore_version_publish(version=staged, actor="alice", force=True, reason="first")
    update = edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                          entry_id="Spells/fireball", text="A glowing ember bolt, 2d4 fire.",
                                          reason="house rule", actor="alice")
    edits.knowledge_edit_approve(edit=update, actor="bob")
    rejected = edits.knowledge_edit_propose(world=world, domain="srd", action="delete", language="ru",
                                            entry_id="Conditions/blinded", reason="no", actor="alice")
    edits.knowledge_edit_reject(edit=rejected, actor="bob", reason="keep")
    services.knowledge_ingest(world=world, domain="srd", actor="carol", files=[services.UploadedFile(
        "Spells.json", as_bytes([*SPELLS, {"index": "shield", "name": "Shield", "desc": ["+5 to AC."]}]), "en")])
    services.lore_version_publish(version=KnowledgeVersion.objects.get(world=world, version="1.0.1"), actor="alice",
                                  force=True, reason="edit")
    deleted = edits.knowledge_edit_propose(world=world, domain="srd", action="delete", language="en",
                                           entry_id="Spells/misty-step", reason="gone", actor="alice")
    edits.knowledge_edit_approve(edit=deleted, actor="bob")  # 1.1.1, on top of the staged 1.1.0
    pending = edits.knowledge_edit_propose(world=world, domain="srd", action="delete", language="en",
                                           entry_id="Spells/shield", reason="later", actor="alice")
    assert pending.status == "pending"
    golden = [{"id": "g1", "language": "en", "split": "test", "query": "teleport in mist",
               "expected": ["Spells/misty-step"]}]
    services.golden_set_save(world=world, domain="srd", queries=golden, actor="alice")
    before, state = _answers(tenant_id), _state(world)
    assert [v[1] for v in state["versions"]] == ["1.0.0", "1.0.1", "1.1.0", "1.1.1"]
    assert state["aliases"] == [("srd", "latest", "1.0.1"), ("srd", "stage", "1.1.1")]

    path = tmp_path / "dnd5e.json"
    call_command("knowledge_export", "dnd5e", str(path), tenant="tenant-a")
    exported = json.loads(path.read_text())
    assert len(exported["sources"]) == 4 and len(exported["edits"]) == 4
    assert exported["versions"][3]["edits"] == [update.pk, deleted.pk]

    assert world_delete(world=world) > 0
    assert not World.objects.filter(pk=world.pk).exists()
    assert not Chunk.objects.filter(namespace__startswith="lore:dnd5e:").exists()

    shown = io.StringIO()
    call_command("knowledge_import", str(path), tenant="tenant-a", stderr=shown)
    # Progress within each version too, not only a line as it starts.
    assert shown.getvalue().count("rebuilding srd") == 4 and "embed:" in shown.getvalue()
    assert re.search(r"embed: +\d+%\|.*\| \d+/\d+ \[", shown.getvalue()), shown.getvalue()
    restored = World.objects.get(tenant_id=tenant_id, slug="dnd5e")
    assert _state(restored) == state
    after = _answers(tenant_id)
    assert after == before
    assert "ember" in after[("1.1.1", "glowing ember bolt")][0][3]
    assert "Spells/misty-step" not in {hit[0] for hit in after[("1.1.1", "teleport in mist")]}
    assert Alias.objects.filter(world=restored).count() == 2
    assert KnowledgeChange.objects.filter(world=restored).count() == 2
    # Golden queries sent over the API come back with the world.
    assert list(restored.golden_sets.values_list("domain", "queries", "updated_by")) == [("srd", golden, "alice")]


def test_a_pruned_version_is_exported_as_pruned_and_imported_as_such_without_a_rebuild(staged, tmp_path, settings):
    settings.LORE_KEEP_VERSIONS = 1
    world = staged.world
    tenant_id = world.tenant_id
    services.lore_version_publish(version=staged, actor="alice", force=True, reason="first")
    for name in ("Shield", "Light"):
        newer = services.knowledge_ingest(world=world, domain="srd", actor="carol", files=[services.UploadedFile(
            f"{name}.json", as_bytes([{"index": name.lower(), "name": name, "desc": [f"The {name} spell."]}]), "en")])
        services.lore_version_publish(version=newer, actor="alice", force=True, reason=name)
    services.knowledge_ingest(world=world, domain="srd", actor="carol", files=[services.UploadedFile(
        "Notes.json", as_bytes([{"index": "n", "name": "Notes", "desc": ["A note."]}]), "en")])  # 1.3.0, stage
    KnowledgeVersion.objects.filter(world=world).update(created_at=timezone.now() - timedelta(days=3))
    assert [str(v) for v in pruning.knowledge_versions_prune(world=world).pruned] == ["dnd5e/srd 1.0.0"]
    before, state = _answers(tenant_id), _state(world)
    assert [v[2] for v in state["versions"]] == ["pruned", "retired", "live", "staged"]

    path = tmp_path / "dnd5e.json"
    call_command("knowledge_export", "dnd5e", str(path), tenant="tenant-a")
    exported = json.loads(path.read_text())
    assert exported["versions"][0]["status"] == "pruned" and exported["versions"][0]["pruned_at"]
    assert exported["versions"][0]["pruned_by"] == "the daily retention job"
    world_delete(world=world)
    shown = io.StringIO()
    call_command("knowledge_import", str(path), tenant="tenant-a", stderr=shown)
    assert "keeping srd 1.0.0 as pruned (not rebuilt)" in shown.getvalue()
    assert shown.getvalue().count("rebuilding srd") == 3
    restored = World.objects.get(tenant_id=tenant_id, slug="dnd5e")
    assert _state(restored) == state  # statuses, figures, pruned_at, aliases, changelog
    gone = KnowledgeVersion.objects.get(world=restored, version="1.0.0")
    assert not Chunk.objects.filter(namespace=gone.namespace).exists()
    assert sorted(gone.sources.values_list("filename", flat=True)) == ["Conditions.json", "Conditions.json",
                                                                       "Spells.json"]
    assert _answers(tenant_id) == before
    with pytest.raises(ApplicationError) as refused:
        selectors.targets_resolve(tenant_id=tenant_id, world_slug="dnd5e", domains=["srd"], version="1.0.0")
    assert refused.value.code == "version_pruned"

    # An export whose alias names a pruned version is refused, not restored half-searchable.
    exported["world"]["slug"] = "copy"
    exported["aliases"][0]["version"] = "1.0.0"
    path.write_text(json.dumps(exported))
    with pytest.raises(CommandError, match=r"points at 1\.0\.0, which the export says was pruned"):
        call_command("knowledge_import", str(path), tenant="tenant-a")
    assert not World.objects.filter(slug="copy").exists()


def test_import_refuses_an_existing_world_and_a_tampered_source(staged, tmp_path):
    path = tmp_path / "dnd5e.json"
    call_command("knowledge_export", "dnd5e", str(path), tenant="tenant-a")
    with pytest.raises(CommandError, match="already exists"):
        call_command("knowledge_import", str(path), tenant="tenant-a")
    data = json.loads(path.read_text())
    data["world"]["slug"] = "copy"
    data["sources"][0]["sha256"] = "0" * 64
    path.write_text(json.dumps(data))
    with pytest.raises(CommandError, match="does not match its sha256"):
        call_command("knowledge_import", str(path), tenant="tenant-a")
    assert not World.objects.filter(slug="copy").exists()  # nothing half-restored is left
    path.write_text('{"format": "something else"}')
    with pytest.raises(CommandError, match="Not a knowledge export"):
        call_command("knowledge_import", str(path), tenant="tenant-a")


def test_reindex_rebuilds_a_version_from_its_sources_and_edits(staged, capsys):
    world = staged.world
    edit = edits.knowledge_edit_propose(world=world, domain="srd", action="delete", language="en",
                                        entry_id="Spells/fireball", reason="r", actor="a")
    produced = edits.knowledge_edit_approve(edit=edit, actor="b").produced_version
    call_command("lore_reindex", "dnd5e", "srd", "1.0.1", tenant="tenant-a", as_version="2.0.0")
    rebuilt = KnowledgeVersion.objects.get(world=world, version="2.0.0")
    assert (rebuilt.entry_count, rebuilt.chunk_count, rebuilt.edits) == (
        produced.entry_count, produced.chunk_count, [edit.pk])
    assert rebuilt.reused_chunks == rebuilt.chunk_count  # same embedder and dims: nothing embedded again
    assert "1.0.1 -> 2.0.0 (staged)" in capsys.readouterr().out
    assert Alias.objects.get(world=world, domain="srd", name="stage").version == rebuilt
