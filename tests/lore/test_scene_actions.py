"""The scene's rules block puts the rule of what the player does first: an attack's roll, a skill's check, in
English, Russian and Chinese, on the bundled SRD (`lore_demo`); and the world's lore answers who guards its
bridge before the SRD's Guard."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command

from lore.campaigns.demo import DEMO_CAMPAIGN, DEMO_PARTY
from lore.campaigns.scene import RULE_TRIGGERS, action_rules
from memoryhub import services as kernel_services
from tests.lore.conftest import scoped_client

ATTACK = ("Rule-Sections/making-an-attack", "Attack Rolls")
GRAPPLE = ("Rule-Sections/making-an-attack", "Grappling")
SHOVE = ("Rule-Sections/making-an-attack", "Shoving a Creature")
ACTIONS = [
    ("I attack the goblin with my longsword", ATTACK), ("I strike the orc", ATTACK), ("I hit him with my axe", ATTACK),
    ("I shoot the goblin with my bow", ATTACK), ("Атакую гоблина мечом", ATTACK), ("Бью орка топором", ATTACK),
    ("Стреляю из лука в гоблина", ATTACK), ("我用长剑攻击哥布林", ATTACK), ("我砍那个兽人", ATTACK),
    ("I try to deceive the witch", ("Skills/deception", "")), ("Я пытаюсь обмануть ведьму", ("Skills/deception", "")),
    ("我试图欺骗女巫", ("Skills/deception", "")), ("I persuade the guard", ("Skills/persuasion", "")),
    ("Уговариваю стражника", ("Skills/persuasion", "")), ("我说服守卫", ("Skills/persuasion", "")),
    ("I intimidate the bandit", ("Skills/intimidation", "")), ("Запугиваю бандита", ("Skills/intimidation", "")),
    ("我威吓强盗", ("Skills/intimidation", "")), ("I sneak past the guards", ("Skills/stealth", "")),
    ("Крадусь мимо стражи", ("Skills/stealth", "")), ("我潜行通过守卫", ("Skills/stealth", "")),
    ("I climb the wall", ("Skills/athletics", "")), ("Лезу на стену", ("Skills/athletics", "")),
    ("我爬上墙", ("Skills/athletics", "")),
    ("I try to grapple the ogre", ("Rule-Sections/making-an-attack", "Grappling")),
    ("擒抱一个兽人", ("Rule-Sections/making-an-attack", "Grappling")),
    ("I shove the guard off the bridge", ("Rule-Sections/making-an-attack", "Shoving a Creature")),
    ("Я толкаю стражника в воду", ("Rule-Sections/making-an-attack", "Shoving a Creature")),
    # An attempt is said with the infinitive in Russian: "схватить" brought no rules block at all.
    ("Я пытаюсь схватить Ли Шэня", GRAPPLE), ("Хватаю разбойника за ворот", GRAPPLE),
    ("Пытаюсь захватить огра", GRAPPLE), ("I wrestle the bandit to the ground", GRAPPLE),
    ("我试图抓住李申", GRAPPLE), ("我和兽人扭打在一起", GRAPPLE),
    ("Хочу оттолкнуть стражника с моста", SHOVE), ("Пытаюсь столкнуть его в реку", SHOVE),
    ("我把守卫推下桥", SHOVE),
    ("Нападаю на гоблина", ATTACK), ("Рублю орка топором", ATTACK),
    ("Прячусь за бочками", ("Skills/stealth", "")), ("Пытаюсь спрятаться в тени", ("Skills/stealth", "")),
    ("我躲起来等守卫走过", ("Skills/stealth", "")),
    ("Пробую перелезть через забор", ("Skills/athletics", "")), ("Взбираюсь на башню", ("Skills/athletics", "")),
]


@pytest.mark.parametrize(("user_input", "rule"), ACTIONS, ids=[i for i, _ in ACTIONS])
def test_an_action_names_its_rule_and_asks_for_one(user_input: str, rule: tuple[str, str]) -> None:
    assert action_rules(user_input)[0] == rule
    assert RULE_TRIGGERS.search(user_input) is not None


@pytest.mark.parametrize("user_input", [
    "How many hit points do I have?", "I lie down by the fire", "Я краду кошелёк у купца", "Hello there, how are you?",
    "Привет, как дела?", "我们去酒馆喝一杯吧", "Какой захватывающий вид с башни!", "Я столкнулся с ним в таверне",
    "我推开门走进酒馆",
])
def test_words_that_only_look_like_an_action_name_none(user_input: str) -> None:
    """"hit points" is no hit, "lie down" no lie, "краду" (I steal) no sneaking, "захватывающий" (breathtaking) no
    grapple, "столкнулся" (ran into) and "推开门" (push a door open) no shove."""
    assert [entry for entry, _ in action_rules(user_input)
            if entry in ("Rule-Sections/making-an-attack", "Skills/deception", "Skills/stealth")] == []


def test_two_actions_in_the_order_said() -> None:
    assert action_rules("I sneak up and attack the guard") == [("Skills/stealth", ""), ATTACK]


def test_a_grapple_and_a_shove_bring_the_condition_they_leave_after_every_action_said() -> None:
    assert action_rules("Я пытаюсь схватить Ли Шэня") == [GRAPPLE, ("Conditions/grappled", "")]
    assert action_rules("I sneak up and shove the guard") == [("Skills/stealth", ""), SHOVE, ("Conditions/prone", "")]
    assert action_rules("I grapple the ogre and then I grapple the goblin") == [GRAPPLE, ("Conditions/grappled", "")]


def test_the_rule_of_the_players_action_comes_first_in_three_languages(db) -> None:
    tenant, _ = kernel_services.tenant_create(name="demo")
    call_command("lore_demo", stdout=io.StringIO(), stderr=io.StringIO())
    client = scoped_client(tenant, "tools")

    def rules(user_input: str) -> list[tuple[str, str]]:
        scene = client.post(f"/api/v1/campaigns/{DEMO_CAMPAIGN}/scene-context",
                            {"party": DEMO_PARTY, "location": "loc_swamp_hut", "npcs": ["npc_Vasilisa"],
                             "user_input": user_input}, format="json").json()
        assert scene["rules_needed"], user_input
        return [(i["source"].split("@")[0].removeprefix("srd:"), i["text"])
                for i in next(b for b in scene["blocks"] if b["name"] == "rules")["items"]]

    # The weapon's entry and the Sun Blade came, not the attack roll; the weapon still comes second.
    found = rules("I attack the goblin with my longsword")
    assert [entry for entry, _ in found] == ["Rule-Sections/making-an-attack", "Equipment/longsword"]
    assert "your attack roll determines whether the attack hits" in found[0][1]
    # The Russian SRD has no rule sections: the English one, rather than none or an alignment.
    for user_input in ["Атакую гоблина мечом", "Стреляю из лука в гоблина", "我用长剑攻击哥布林"]:
        assert rules(user_input)[0][0] == "Rule-Sections/making-an-attack", user_input
    # A skill check asked for no rule; a Russian input gets the Russian entry, a Chinese one the English.
    deceive = {code: rules(text)[0] for code, text in [("en", "I try to deceive the witch"),
                                                       ("ru", "Я пытаюсь обмануть ведьму"), ("zh", "我试图欺骗女巫")]}
    assert {entry for entry, _ in deceive.values()} == {"Skills/deception"}
    assert deceive["en"][1].startswith("Deception:") and deceive["ru"][1].startswith("Обман:")
    assert deceive["zh"][1].startswith("Deception:")
    # "I persuade the guard" brought Deception before Persuasion; "Убеждаю стражника" Deception alone.
    assert rules("I persuade the guard")[0][0] == "Skills/persuasion"
    entry, text = rules("Убеждаю стражника")[0]
    assert entry == "Skills/persuasion" and text.startswith("Убеждение:")
    assert rules("我威吓强盗")[0][0] == "Skills/intimidation"
    # A cast is the action: the spell keeps the first place, the attack it answers comes after.
    assert rules("I cast shield against the orc's attack")[0][0] == "Spells/shield"
    assert [entry for entry, _ in rules("I cast fireball at the bandits")] == [
        "Spells/fireball", "Rule-Sections/damage-and-healing"]
    # A spell no entry names in the input's words (the Russian subset has no spells, the English none in
    # Chinese) found nothing at all:
    # how casting works, rather than an empty block.
    cast = rules("Кастую огненный шар в разбойников")
    assert [entry for entry, _ in cast] == ["Rule-Sections/casting-a-spell"], cast
    assert "When a character casts any spell" in cast[0][1]
    assert [entry for entry, _ in rules("我施放火球术")] == ["Rule-Sections/casting-a-spell"]
    # A question about a rule is answered by its search (SRD golden en-07, ru-06): the attack it names waits.
    assert [entry for entry, _ in rules("can I attack while riding a horse, and what happens if my mount is "
                                        "knocked down")][:2] == ["Equipment/horse-riding",
                                                                 "Rule-Sections/mounted-combat"]
    assert rules("персонаж парализован — атаки по нему критические?")[0][0] == "Conditions/paralyzed"
    # A shove is an attack with its own part of the section.
    assert rules("I try to shove the guard off the bridge")[0][1].startswith(
        "Making an Attack: Rule-Sections / Making an Attack / Melee Attacks / Shoving a Creature")
    # "Я пытаюсь схватить Ли Шэня" asked for no rule: the infinitive was no grapple. Its second place went to
    # Charisma, for "пытаетесь": the condition a grapple leaves, in Russian, is what the narrator needs next.
    grapple = rules("Я пытаюсь схватить Ли Шэня")
    assert grapple[0][1].startswith("Making an Attack: Rule-Sections / Making an Attack / Melee Attacks / Grappling")
    assert grapple[1][0] == "Conditions/grappled" and grapple[1][1].startswith("Захват:"), grapple[1]
    assert [entry for entry, _ in rules("I shove the guard off the bridge")] == [
        "Rule-Sections/making-an-attack", "Conditions/prone"]


def test_who_guards_the_bridge_is_the_worlds_lore_not_the_srds_guard(db) -> None:
    tenant, _ = kernel_services.tenant_create(name="demo")
    call_command("lore_demo", stdout=io.StringIO(), stderr=io.StringIO())
    client = scoped_client(tenant, "tools")

    def search(query: str) -> list[str]:
        response = client.post("/api/v1/tools/lore_search", {"query": query, "k": 5}, format="json")
        assert response.status_code == 200
        return [item["entry_id"] for item in response.json()["items"]]

    # The Guard stat block was first: its title and name votes, which the lore has no lists for.
    assert search("who guards the bridge?")[0] == "MoonValley/moon-valley/the-moon-bridge"
    assert search("how does grappling work")[0] == "Conditions/grappled"
    assert search("who can cast wish?")[0] == "Spells/wish"
