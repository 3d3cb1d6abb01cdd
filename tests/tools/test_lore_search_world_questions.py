"""lore_search over rules and lore: a question for someone or somewhere of the world gets the world's own lore
before an SRD stat block whose title is one of its words, in English, Russian and Chinese; a rules question
still gets the rule."""

from __future__ import annotations

import pytest
from rest_framework.test import APIClient

from lore import services as lore_services
from memoryhub import services as kernel_services
from tests.lore.conftest import as_bytes

pytestmark = pytest.mark.django_db

MONSTERS = {
    "en": [{"index": "guard", "name": "Guard", "type": "humanoid", "armor_class": 16, "hit_points": 11,
            "desc": "Guards include members of a city watch, sentries in a citadel or fortified town, and the "
                    "bodyguards of merchants and nobles."}],
    "ru": [{"index": "guard", "name": "Стражник", "type": "гуманоид", "armor_class": 16, "hit_points": 11,
            "desc": "Стражники: городская стража, часовые крепости и телохранители купцов и знати."}],
    "zh": [{"index": "guard", "name": "守卫", "type": "类人生物", "armor_class": 16, "hit_points": 11,
            "desc": "守卫包括城市巡逻队的成员、城堡的哨兵以及商人和贵族的保镖。"}],
}
CONDITIONS = [{"index": "grappled", "name": "Grappled",
               "desc": ["- A grappled creature's speed becomes 0, and it can't benefit from any bonus to its speed.",
                        "- The condition ends if the grappler is incapacitated."]}]
LORE = {
    "en": "# Moon Valley\n\n## The Moon Bridge\nA stone bridge over the Silver Gorge. The ronin Li Shen guards the "
          "bridge and asks a toll of promises, not coin.\n\n## Borin's Forge\nA dwarven smithy at the valley's "
          "mouth, always smoking.\n",
    "ru": "# Лунная долина\n\n## Лунный мост\nКаменный мост над Серебряным ущельем. Стражник моста, ронин Ли Шэнь, "
          "берёт плату обещаниями, а не золотом.\n\n## Кузница Борина\nГномья кузница у входа в долину.\n",
    "zh": "# 月亮谷\n\n## 月亮桥\n一座横跨银峡的石桥。浪人李申是桥上的守卫，向过客索要承诺而不是金币。\n\n"
          "## 博林的铁匠铺\n山谷入口处的矮人铁匠铺，终日冒烟。\n",
}
BRIDGE = {"en": "MoonValley/moon-valley/the-moon-bridge", "ru": "MoonValley/лунная-долина/лунный-мост",
          "zh": "MoonValley/月亮谷/月亮桥"}


@pytest.fixture
def client() -> APIClient:
    tenant, _ = kernel_services.tenant_create(name="tenant-a")
    world = lore_services.world_create(tenant=tenant, slug="dnd5e", name="D&D", languages=["en", "ru", "zh"])
    srd = [lore_services.UploadedFile("Monsters.json", as_bytes(MONSTERS[code]), code) for code in MONSTERS]
    srd.append(lore_services.UploadedFile("Conditions.json", as_bytes(CONDITIONS), "en"))
    lore = [lore_services.UploadedFile("MoonValley.md", LORE[code].encode(), code) for code in LORE]
    for domain, files in (("srd", srd), ("lore", lore)):
        version = lore_services.knowledge_ingest(world=world, domain=domain, files=files, actor="test")
        lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    _, raw = kernel_services.api_key_create(tenant=tenant, name="t", scopes=("tools",))
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return api


def search(client: APIClient, query: str, **filters: object) -> list[str]:
    response = client.post("/api/v1/tools/lore_search", {"query": query, "k": 5, "filters": filters}, format="json")
    assert response.status_code == 200, response.json()
    return [item["entry_id"] for item in response.json()["items"]]


@pytest.mark.parametrize(("query", "language"), [
    ("who guards the bridge?", "en"), ("Where is the guard of the bridge?", "en"),
    ("Кто стражник у моста?", "ru"), ("Где стражник моста?", "ru"),
    ("谁是桥上的守卫？", "zh"), ("桥上的守卫在哪里？", "zh"),
])
def test_a_question_for_someone_of_the_world_gets_its_lore_before_a_stat_block(client: APIClient, query: str,
                                                                             language: str) -> None:
    """The Guard's title and name votes, lists only the SRD fuses, put the stat block first."""
    found = search(client, query)
    assert found[0] == BRIDGE[language], found
    assert "Monsters/guard" in found  # still there, compared on the same lists


def test_rules_questions_and_one_domain_searches_keep_the_srd_votes(client: APIClient) -> None:
    assert search(client, "how does grappling work")[0] == "Conditions/grappled"
    # No who or where: the title the question says is what it asks for.
    assert search(client, "guard stat block")[0] == "Monsters/guard"
    # The rules alone: nothing of the world to compare with.
    assert search(client, "who guards the bridge?", domains=["srd"])[0] == "Monsters/guard"
    # Someone the lore does not know of: the SRD as before.
    assert search(client, "who is grappled?")[0] == "Conditions/grappled"
