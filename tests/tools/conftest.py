"""Tools fixtures: a tenant with a small published SRD world `dnd5e`, and API clients by scope."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from rest_framework.test import APIClient

from lore import services as lore_services
from memoryhub import services as kernel_services
from memoryhub.models import Tenant
from tests.lore.conftest import CONDITIONS_EN, CONDITIONS_RU, SPELLS, as_bytes

MAGIC_SCHOOLS = [
    {"index": "evocation", "name": "Evocation", "desc": "Evocation spells manipulate magical energy to produce a "
                                                        "desired effect, such as blasts of fire or lightning."},
    {"index": "conjuration", "name": "Conjuration", "desc": "Conjuration spells involve the transportation of "
                                                            "objects and creatures from one location to another."},
]


def publish_small_world(tenant: Tenant) -> None:
    world = lore_services.world_create(tenant=tenant, slug="dnd5e", name="D&D", languages=["en", "ru"])
    files = [
        lore_services.UploadedFile("Spells.json", as_bytes(SPELLS), "en"),
        lore_services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_EN), "en"),
        lore_services.UploadedFile("Magic-Schools.json", as_bytes(MAGIC_SCHOOLS), "en"),
        lore_services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_RU), "ru"),
    ]
    version = lore_services.knowledge_ingest(world=world, domain="srd", files=files, actor="test")
    lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")


@pytest.fixture
def key_for(db: None) -> Callable[..., tuple[str, Tenant]]:
    # `memory` too: the memory tools need it (tests/tools/test_scopes.py tries a `tools`-only key).
    def factory(name: str = "tenant-a", scopes: tuple[str, ...] = ("tools", "memory")) -> tuple[str, Tenant]:
        tenant = Tenant.objects.filter(name=name).first()
        if tenant is None:
            tenant, _ = kernel_services.tenant_create(name=name)
        _, raw = kernel_services.api_key_create(tenant=tenant, name="t", scopes=scopes)
        return raw, tenant

    return factory


@pytest.fixture
def tools_client(key_for: Callable[..., tuple[str, Tenant]]) -> tuple[APIClient, Tenant]:
    raw, tenant = key_for()
    publish_small_world(tenant)
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, tenant
