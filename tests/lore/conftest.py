"""Lore fixtures: a world with a small SRD-shaped source, so most tests ingest in well under a second."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest
from rest_framework.test import APIClient

from lore import services
from lore.models import KnowledgeVersion, World
from memoryhub import services as kernel_services
from memoryhub.models import Tenant

SPELLS = [
    {"index": "fireball", "name": "Fireball", "level": 3, "range": "150 feet",
     "desc": ["A bright streak blossoms into an explosion of flame. Each creature in a 20-foot-radius sphere "
              "takes 8d6 fire damage on a failed dexterity save."],
     "school": {"index": "evocation", "name": "Evocation", "url": "/api/magic-schools/evocation"}},
    {"index": "cure-wounds", "name": "Cure Wounds", "level": 1, "range": "Touch",
     "desc": ["A creature you touch regains a number of hit points equal to 1d8 + your spellcasting modifier."]},
    {"index": "misty-step", "name": "Misty Step", "level": 2, "range": "Self",
     "desc": ["Briefly surrounded by silvery mist, you teleport up to 30 feet to an unoccupied space you can see."]},
]
CONDITIONS_EN = [
    {"index": "blinded", "name": "Blinded", "desc": ["- A blinded creature can't see and automatically fails any "
                                                     "ability check that requires sight."]},
    {"index": "prone", "name": "Prone", "desc": ["- A prone creature's only movement option is to crawl."]},
]
CONDITIONS_RU = [
    {"index": "blinded", "name": "Ослепление", "desc": ["- Ослеплённое существо не видит и автоматически проваливает "
                                                        "любую проверку характеристики, требующую зрения."]},
]


def as_bytes(data: object) -> bytes:
    return json.dumps(data, ensure_ascii=False).encode()


@pytest.fixture
def world(tenant: Tenant) -> World:
    return services.world_create(tenant=tenant, slug="dnd5e", name="D&D", languages=["en", "ru"])


@pytest.fixture
def small_files() -> list[services.UploadedFile]:
    return [
        services.UploadedFile("Spells.json", as_bytes(SPELLS), "en"),
        services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_EN), "en"),
        services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_RU), "ru"),
    ]


@pytest.fixture
def staged(world: World, small_files: list[services.UploadedFile]) -> KnowledgeVersion:
    return services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="test")


@pytest.fixture
def golden_dir(tmp_path, settings):  # type: ignore[no-untyped-def]
    """A golden file for the small source, so the smoke gate runs on what the fixtures hold."""
    settings.LORE_GOLDEN_DIR = tmp_path
    (tmp_path / "dnd5e").mkdir()

    def write(queries: list[dict]) -> None:
        (tmp_path / "dnd5e" / "srd.json").write_text(json.dumps({"queries": queries}, ensure_ascii=False))

    write([
        {"id": "en-1", "language": "en", "split": "test", "query": "how big is the explosion of flame",
         "expected": ["Spells/fireball"]},
        {"id": "en-2", "language": "en", "split": "test", "query": "teleport 30 feet in mist",
         "expected": ["Spells/misty-step"]},
        {"id": "ru-1", "language": "ru", "split": "test", "query": "существо не видит",
         "expected": ["Conditions/blinded"]},
    ])
    return write


@pytest.fixture
def editor_client(db: None) -> Callable[..., tuple[APIClient, Tenant]]:
    def factory(name: str = "tenant-a", scopes: tuple[str, ...] = ("memory", "editor", "tools")
                ) -> tuple[APIClient, Tenant]:
        tenant = Tenant.objects.filter(name=name).first()
        if tenant is None:
            tenant, _ = kernel_services.tenant_create(name=name)
        _, raw = kernel_services.api_key_create(tenant=tenant, name="t", scopes=scopes)
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
        return client, tenant

    return factory


# --- Campaign memory ---------------------------------------------------------------------------
CAMPAIGN_BASE = "/api/v1/campaigns/camp_123"


def scoped_client(tenant: Tenant, *scopes: str) -> APIClient:
    _, raw = kernel_services.api_key_create(tenant=tenant, name="t", scopes=scopes)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def summary_document(summary_id: str = "sum_1", **changes: Any) -> dict[str, Any]:
    from lore.campaigns.api import SUMMARY_EXAMPLE

    document = copy.deepcopy(SUMMARY_EXAMPLE)
    document["summary_id"] = summary_id
    document.update(changes)
    return document


@pytest.fixture
def engine(world: World) -> APIClient:
    """An engine key's client, with campaign camp_123, its party pty_001 and the NPC npc_LiShen."""
    from lore.campaigns.api import NPC_EXAMPLE

    client = scoped_client(world.tenant, "engine")
    assert client.post("/api/v1/worlds/dnd5e/campaigns", {"campaign_id": "camp_123", "name": "Moon"},
                       format="json").status_code == 201
    assert client.post(f"{CAMPAIGN_BASE}/parties", {"party_id": "pty_001"}, format="json").status_code == 201
    assert client.post(f"{CAMPAIGN_BASE}/npcs", NPC_EXAMPLE, format="json").status_code == 201
    return client
