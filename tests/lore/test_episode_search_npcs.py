"""episode_search links a question that names an NPC by what it is ("the witch", "ведьма", "女巫") to the
summaries of that NPC, which name it by its name: the NPC's static name and archetype, read by words (Russian
by lemma too), bring its name and the summaries that record it into the search, never by a word most of the
campaign's NPCs share, and never another campaign's NPCs."""

from __future__ import annotations

from typing import Any

import pytest

from lore.campaigns import selectors, services
from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY, demo_campaign_create
from lore.campaigns.models import Party
from lore.models import World
from rag.models import Namespace
from tests.lore.conftest import scoped_client

pytestmark = pytest.mark.django_db

WITCH_QUESTION = "что случилось у ведьмы?"


def _party(world: World, slug: str, npcs: list[tuple[str, str, str]]) -> Party:
    campaign = services.campaign_create(tenant=world.tenant, world=world, slug=slug, name=slug)
    for npc_id, name, archetype in npcs:
        services.npc_upsert(campaign=campaign, document={"npc_id": npc_id, "version": "1.0.0",
                                                         "static": {"name": name, "archetype": archetype}})
    return services.party_create(campaign=campaign, slug="pty_1")


def _record(party: Party, summary_id: str, npcs: list[str], notes: str, day: int = 1) -> None:
    document: dict[str, Any] = {
        "summary_id": summary_id, "campaign_id": party.campaign.slug, "party_id": party.slug,
        "scene_id": f"scn_{summary_id}", "when": f"2025-08-{day:02d}T10:00:00Z",
        "who": {"players": ["p_A"], "npcs": npcs}, "where": {"location_id": "loc_1", "tags": []},
        "what": {"event": "scene", "outcome": "done", "rolls": [], "loot": []},
        "flags": {}, "relations_delta": [], "notes": notes, "version": "1.0.0",
    }
    services.summary_record(campaign=party.campaign, document=document)


def _found(party: Party, query: str) -> list[str]:
    return [hit["summary_id"] for hit in selectors.episode_search(party.campaign, party, query, k=5)]


@pytest.fixture
def demo(world: World) -> Party:
    demo_campaign_create(world=world)
    return Party.objects.get(campaign__slug=DEMO_CAMPAIGN, slug=DEMO_PARTY)


def test_the_demo_witch_is_found_by_what_she_is_in_russian(demo: Party) -> None:
    """The demo's Василиса is a ведьма by her archetype; her summary names her only."""
    assert _found(demo, WITCH_QUESTION) == ["sum_demo_002"]
    assert _found(demo, "🙂 ?") == []
    # By lemma: Snowball stems "купца" to "купц", the archetype "купец" to "купец"; pymorphy3 reads both as купец.
    services.npc_upsert(campaign=demo.campaign, document={"npc_id": "npc_Frol", "version": "1.0.0",
                                                          "static": {"name": "Фрол", "archetype": "купец"}})
    _record(demo, "sum_demo_frol", ["npc_Frol"], "Фрол продал героям верёвку и фонарь.", day=30)
    assert _found(demo, "что мы взяли у купца?") == ["sum_demo_frol"]


def test_the_witch_is_found_by_words_when_the_vectors_are_out(demo: Party) -> None:
    """Summaries of another embedder are searched by their words: the NPC's name and summaries come in there too."""
    Namespace.objects.filter(name=demo.campaign.episode_namespace).update(vector_space="hashing-v0")
    assert _found(demo, WITCH_QUESTION) == ["sum_demo_002"]


def test_the_tool_finds_the_witchs_episode(demo: Party, world: World) -> None:
    client = scoped_client(world.tenant, "tools")
    body = client.post("/api/v1/tools/episode_search", {"campaign_id": DEMO_CAMPAIGN, "party_id": DEMO_PARTY,
                                                        "query": WITCH_QUESTION}, format="json").json()
    assert [h["summary_id"] for h in body["hits"]] == ["sum_demo_002"], body
    assert body["sources"] == ["summary:sum_demo_002"]


def test_english_roles_bring_the_npcs_name_and_summaries_of_this_campaign_only(world: World) -> None:
    party = _party(world, "camp_en", [("npc_Morgana", "Morgana", "swamp witch"),
                                      ("npc_Borin", "Borin Ironhand", "dwarf blacksmith"),
                                      ("npc_Aldo", "Aldo", "innkeeper")])
    # Another campaign's witch: her name must not come into this campaign's search.
    _party(world, "camp_other", [("npc_Hilda", "Hilda", "sea witch")])
    _record(party, "s_curse", ["npc_Morgana"], "Morgana cursed Kael's sword and sent the heroes away.", day=1)
    _record(party, "s_forge", ["npc_Borin"], "Borin reforged the broken axe for forty gold.", day=2)
    # Morgana was not there: the summary is found by her name.
    _record(party, "s_rumour", ["npc_Aldo"], "Aldo warned the heroes about Morgana.", day=3)
    _record(party, "s_ship", [], "Hilda sold the heroes passage on her ship.", day=4)
    assert set(_found(party, "What happened with the witch?")) == {"s_curse", "s_rumour"}
    assert _found(party, "How much did the blacksmith charge us?") == ["s_forge"]
    assert _found(party, "Tell me about the innkeeper") == ["s_rumour"]


def test_chinese_roles_are_read_as_whole_words(world: World) -> None:
    party = _party(world, "camp_zh", [("npc_Merlin", "梅林", "女巫"), ("npc_Wang", "王大锤", "铁匠"),
                                      ("npc_Lin", "林掌柜", "客栈老板")])
    _record(party, "s_curse", ["npc_Merlin"], "梅林诅咒了凯尔的剑。", day=1)
    _record(party, "s_forge", ["npc_Wang"], "王大锤修好了斧头。", day=2)
    _record(party, "s_inn", ["npc_Lin"], "林掌柜给英雄们开了两间房。", day=3)
    assert _found(party, "女巫那里发生了什么？") == ["s_curse"]
    assert _found(party, "老女巫怎么样了") == ["s_curse"]  # jieba keeps 老 apart, or not: the archetype is said
    assert _found(party, "铁匠那边怎么样了？") == ["s_forge"]
    # 女 of 女人 is a character of 女巫, not the witch.
    assert _found(party, "那个女人说了什么？") == []


def test_a_word_most_npcs_share_links_none_of_them(world: World) -> None:
    """"человек" is in every archetype here: it names no one, and must not bring every summary."""
    party = _party(world, "camp_ru", [("npc_Guard", "Гаврила", "человек, стражник"),
                                      ("npc_Trader", "Марфа", "человек, торговка"),
                                      ("npc_Smith", "Кузьма", "человек, кузнец")])
    _record(party, "s_gate", ["npc_Guard"], "Гаврила пропустил героев в город за пошлину.", day=1)
    _record(party, "s_salt", ["npc_Trader"], "Марфа продала героям соль.", day=2)
    _record(party, "s_horses", ["npc_Smith"], "Кузьма подковал лошадей.", day=3)
    assert _found(party, "что нам сказал стражник?") == ["s_gate"]
    assert _found(party, "о чём мы говорили с кузнецом?") == ["s_horses"]
    assert _found(party, "что сказал человек у ворот?") == []
    assert _found(party, "что сказали люди?") == []  # люди: the lemma is человек

