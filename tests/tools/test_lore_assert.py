"""lore_assert with the LLM (through the loopback server) and its fallback, the offline checks of
opposite and substituted words in three languages, and the bench command."""

from __future__ import annotations

import json

import pytest
from django.core.management import CommandError, call_command
from rest_framework.test import APIClient

from lore import services as lore_services
from memoryhub.models import Tenant
from tests.llm_server import HTTPError, OpenAICompatServer

pytestmark = pytest.mark.django_db

# A world's lore in three languages; the English wraps a sentence over two lines, as Markdown prose does.
REALM = {
    "en": "# Realm\n\n## Maren Vell\nMaren Vell is the warden of Ironpeak. She lost her right hand to a frost wyrm "
          "and wears a silver gauntlet.\n\n## Ironpeak\nThe gates of Ironpeak open only at dawn.\n\n"
          "## Li Shen\nA masterless samurai. A scar runs down his left cheek; he never says\nwho gave it to him.\n",
    "ru": "# Мир\n\n## Марен Велл\nМарен Велл — хранительница Железного пика. Она потеряла правую руку в бою с "
          "ледяным змеем и носит серебряную перчатку.\n\n## Железный пик\nВорота Железного пика открываются "
          "только на рассвете.\n",
    "zh": "# 世界\n\n## 玛伦·维尔\n玛伦·维尔是铁峰的守护者。她在与冰霜巨龙的战斗中失去了右手，戴着银色的护手。\n\n"
          "## 铁峰\n铁峰的城门只在黎明时打开。\n",
}


@pytest.fixture
def realm(tools_client: tuple[APIClient, Tenant]) -> APIClient:
    client, tenant = tools_client
    world = lore_services.world_create(tenant=tenant, slug="realm", languages=["en", "ru", "zh"])
    files = [lore_services.UploadedFile(f"realm_{lang}.md", text.encode(), lang) for lang, text in REALM.items()]
    version = lore_services.knowledge_ingest(world=world, domain="lore", files=files, actor="test")
    lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    return client


def verdict(client: APIClient, fact: str, world: str = "realm") -> tuple[str, str]:
    body = client.post("/api/v1/tools/lore_assert", {"fact": fact, "world": world, "use_llm": False},
                       format="json").json()
    return body["verdict"], body["hint"]


def test_a_word_swapped_for_its_opposite_or_sibling_is_contradicted(realm: APIClient) -> None:
    """Word overlap called these supported, quoting the very sentence that says otherwise."""
    for fact, said, source in [
        ("Maren Vell lost her left hand.", "left", "right"),
        ("Maren Vell wears a gold gauntlet.", "gold", "silver"),
        ("The gates of Ironpeak open only at dusk.", "dusk", "dawn"),
        ("She lost her left hand.", "left", "right"),  # the entry's "She" is its subject
        ("Li Shen has a scar on his right cheek.", "right", "left"),  # the sentence goes on past a line break
    ]:
        result, hint = verdict(realm, fact)
        assert result == "contradicted", (fact, hint)
        assert f"says \u201c{source}\u201d where the statement says \u201c{said}\u201d" in hint, hint
    result, hint = verdict(realm, "Li Shen has a scar on his left cheek.")
    assert result == "supported" and "he never says who gave it to him" in hint
    assert verdict(realm, "Maren Vell lost her right hand.")[0] == "supported"
    assert verdict(realm, "Maren Vell wears a silver gauntlet.")[0] == "supported"
    assert verdict(realm, "The gates of Ironpeak open only at dawn.")[0] == "supported"


def test_russian_case_forms_of_opposites_are_contradicted(realm: APIClient) -> None:
    """"левую" and "правую" share no stem but are the two sides; "закате" and "рассвете" the two ends of day."""
    for fact, said in [("Марен Велл потеряла левую руку.", "левую"), ("Марен Велл носит золотую перчатку.", "золотую"),
                       ("Ворота Железного пика открываются только на закате.", "закате")]:
        result, hint = verdict(realm, fact)
        assert result == "contradicted" and f"\u201c{said}\u201d" in hint, (fact, hint)
    assert verdict(realm, "Марен Велл потеряла правую руку.")[0] == "supported"
    assert verdict(realm, "Ворота Железного пика открываются только на рассвете.")[0] == "supported"
    # A negated swap agrees with the lore ("not gold": it is silver), yet the lore never speaks of gold.
    assert verdict(realm, "Марен Велл не носит золотую перчатку.")[0] == "unknown"


def test_chinese_opposites_are_contradicted_inside_words(realm: APIClient) -> None:
    """jieba keeps 左手 and 金色 whole: the side and the metal are characters of the word."""
    for fact, said, source in [("玛伦·维尔失去了左手。", "左手", "右手"), ("玛伦·维尔戴着金色的护手。", "金色", "银色"),
                               ("铁峰的城门只在黄昏时打开。", "黄昏", "黎明")]:
        result, hint = verdict(realm, fact)
        assert result == "contradicted", (fact, hint)
        assert f"says \u201c{source}\u201d where the statement says \u201c{said}\u201d" in hint, hint
    assert verdict(realm, "玛伦·维尔失去了右手。")[0] == "supported"
    assert verdict(realm, "铁峰的城门只在黎明时打开。")[0] == "supported"
    assert verdict(realm, "铁峰的城门不在黄昏时打开。")[0] == "unknown"  # 不: denied, not asserted


def test_a_word_the_lore_lacks_in_a_filled_slot_is_not_support(realm: APIClient) -> None:
    """Three of four words found used to be support; the fourth, where the lore says something else, is
    a detail the lore does not give."""
    for fact, said in [("Maren Vell lost her right hand to a fire drake.", "fire drake"),
                       ("Maren Vell wears a silver crown.", "crown"),
                       ("Марен Велл потеряла правую ногу.", "ногу"),
                       ("玛伦·维尔失去了右脚。", "脚")]:
        result, hint = verdict(realm, fact)
        assert result == "unknown" and f"the statement says \u201c{said}\u201d" in hint, (fact, hint)
    assert verdict(realm, "Maren Vell lost her right hand to a frost wyrm.")[0] == "supported"
    # "Not gold" is no contradiction of "silver": the negation alone used to make it one.
    assert verdict(realm, "Maren Vell does not wear a gold gauntlet.")[0] == "unknown"


def test_the_rules_succeed_where_they_say_fail(tools_client: tuple[APIClient, Tenant]) -> None:
    client, _ = tools_client
    result, hint = verdict(client, "A blinded creature automatically succeeds on any ability check that requires "
                                   "sight.", world="dnd5e")
    assert result == "contradicted" and "says \u201cfails\u201d" in hint
    assert verdict(client, "Ослеплённое существо автоматически преуспевает в любой проверке характеристики, "
                           "требующей зрения.", world="dnd5e")[0] == "contradicted"
    assert verdict(client, "A blinded creature automatically fails any ability check that requires sight.",
                   world="dnd5e")[0] == "supported"


def test_llm_verdict_over_the_retrieved_sources(tools_client: tuple[APIClient, Tenant],
                                                llm: OpenAICompatServer) -> None:
    client, _ = tools_client
    llm.script_chat({"verdict": "contradicted", "hint": "Fireball deals 8d6, per Spells/fireball.",
                     "source_ids": ["Spells/fireball"]})
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball deals 10d6 fire damage."}, format="json").json()
    assert (body["verdict"], body["method"]) == ("contradicted", "llm")
    assert body["sources"][0] == "srd:Spells/fireball@1.0.0"
    prompt = llm.chat_requests[-1]["messages"][-1]["content"]
    assert "[Spells/fireball]" in prompt and "8d6" in prompt and "STATEMENT: Fireball deals 10d6" in prompt


def test_llm_failure_keeps_the_offline_verdict(tools_client: tuple[APIClient, Tenant],
                                               llm: OpenAICompatServer) -> None:
    client, _ = tools_client
    llm.script_chat(HTTPError(500), HTTPError(500))
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 60 feet."},
                       format="json").json()
    assert (body["verdict"], body["method"]) == ("contradicted", "offline")
    assert "the LLM failed" in body["hint"]
    # use_llm=false never asks.
    asked = len(llm.chat_requests)
    body = client.post("/api/v1/tools/lore_assert", {"fact": "Fireball has a range of 150 feet.", "use_llm": False},
                       format="json").json()
    assert (body["verdict"], body["method"]) == ("supported", "offline") and len(llm.chat_requests) == asked


def test_bench_prints_accuracy_and_gates(tools_client: tuple[APIClient, Tenant], tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    golden = {"world": "dnd5e", "facts": [
        {"id": "a", "language": "en", "expected": "supported", "fact": "Fireball has a range of 150 feet."},
        {"id": "b", "language": "en", "expected": "contradicted", "fact": "Fireball has a range of 60 feet."},
        {"id": "c", "language": "en", "expected": "supported", "fact": "Gandalf is a wizard of the Istari."},
    ]}
    path = tmp_path / "golden.json"
    path.write_text(json.dumps(golden))
    call_command("lore_assert_bench", file=str(path), offline=True)
    out = capsys.readouterr().out
    assert "all                      2/3   66.7%" in out and "MISS c" in out
    with pytest.raises(CommandError, match="below"):
        call_command("lore_assert_bench", file=str(path), offline=True, min_accuracy=0.9)


# A world whose SRD has one-word titles that lore sentences say in passing (Guard, Amulet, Shield), and
# whose lore states facts about them in three languages, as the demo's Moon Bridge does.
CROSSING_SRD = {
    "en": {"Monsters.json": [{"index": "guard", "name": "Guard", "desc": [
        "Guards include members of a city watch, sentries in a citadel or fortified town, and the bodyguards "
        "of merchants and nobles."]}],
           "Equipment.json": [{"index": "amulet", "name": "Amulet", "desc": [
               "An amulet is a holy symbol: a spellcaster can use it as a spellcasting focus."]},
                              {"index": "shield", "name": "Shield", "desc": [
                                  "A shield is made from wood or metal and is carried in one hand."]}]},
    "ru": {"Equipment.json": [{"index": "amulet", "name": "Амулет", "desc": [
        "Амулет — священный символ: заклинатель может использовать его как фокусировку."]},
                              {"index": "shield", "name": "Щит", "desc": [
                                  "Щит делают из дерева или металла и носят в одной руке."]}]},
}
CROSSING_LORE = {
    "en": "# Valley\n\n## The Moon Bridge\nA stone bridge over the gorge. The Moon Door at its far end opens only for "
          "the bearer of the moon amulet. Travellers say a ronin guards the crossing and asks a toll of promises, "
          "not coin.\n\n## Borin's Forge\nBorin Ironhand hangs a dented shield over the door of his smithy.\n",
    "ru": "# Долина\n\n## Лунный мост\nКаменный мост над ущельем. Лунная дверь на том конце открывается только "
          "для владельца лунного амулета. Путники говорят, что переправу стережёт ронин и берёт плату "
          "обещаниями, а не монетой.\n",
    "zh": "# 山谷\n\n## 月桥\n峡谷上的一座石桥。桥那头的月门只为月亮护符的持有者打开。\n",
}


@pytest.fixture
def crossing(tools_client: tuple[APIClient, Tenant]) -> APIClient:
    client, tenant = tools_client
    world = lore_services.world_create(tenant=tenant, slug="valley", languages=["en", "ru", "zh"])
    for domain, files in [
        ("srd", [lore_services.UploadedFile(name, json.dumps(entries).encode(), lang)
                 for lang, by_file in CROSSING_SRD.items() for name, entries in by_file.items()]),
        ("lore", [lore_services.UploadedFile(f"valley_{lang}.md", text.encode(), lang)
                  for lang, text in CROSSING_LORE.items()]),
    ]:
        version = lore_services.knowledge_ingest(world=world, domain=domain, files=files, actor="test")
        lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    return client


def test_a_title_said_in_passing_does_not_make_its_entry_the_subject(crossing: APIClient) -> None:
    """QA: "A ronin guards the crossing…" was checked against Monsters/guard and "…the moon amulet" against
    Equipment/amulet (the entries whose title the fact names), which speak of nothing else in it, so the
    lore's own sentences were "unknown" and a swapped word was never found contradicted."""
    for fact in [
        "A ronin guards the crossing and asks a toll of promises.",
        "The Moon Door opens only for the bearer of the moon amulet.",
        "a ronin guards the crossing and asks for a toll of promises, not coin",
        "Borin hangs a dented shield over the door of his smithy",
        "Переправу стережёт ронин и берёт плату обещаниями.",
        "Лунная дверь открывается только для владельца лунного амулета.",
        "月门只为月亮护符的持有者打开。",
    ]:
        body = crossing.post("/api/v1/tools/lore_assert", {"fact": fact, "world": "valley", "use_llm": False},
                             format="json").json()
        assert body["verdict"] == "supported", (fact, body["hint"])
        assert body["sources"][0].startswith("lore:"), body


def test_a_swapped_sibling_next_to_a_title_said_in_passing_is_contradicted(crossing: APIClient) -> None:
    """The sun for the moon is a sibling swap, though the statement names the moon elsewhere (the Moon Door)."""
    for fact, said, source in [
        ("The Moon Door opens only for the bearer of the sun amulet.", "sun", "moon"),
        ("the moon door only opens for whoever carries the sun amulet", "sun", "moon"),
        ("Лунная дверь открывается только для владельца солнечного амулета.", "солнечного", "лунного"),
        ("月门只为太阳护符的持有者打开。", "太阳", "月亮"),
    ]:
        result, hint = verdict(crossing, fact, world="valley")
        assert result == "contradicted", (fact, hint)
        assert f"says \u201c{source}\u201d where the statement says \u201c{said}\u201d" in hint, hint
    # A fact about the named entry itself still has it as its subject.
    assert verdict(crossing, "A shield is carried in one hand.", world="valley")[0] == "supported"
    assert verdict(crossing, "A shield is carried in two hands.", world="valley")[0] != "supported"
    assert verdict(crossing, "Щит носят в одной руке.", world="valley")[0] == "supported"


# Entries of closed kinds (schools, damage types) and open ones (monsters), and lore prose that names an SRD
# title in passing ("the moon priests": Monsters/priest), in three languages.
KINDS_SRD = {
    "en": {"Spells.json": [
        {"index": "misty-step", "name": "Misty Step", "desc": ["Briefly surrounded by silvery mist, you teleport up "
                                                               "to 30 feet."],
         "school": {"index": "conjuration", "name": "Conjuration"}},
        {"index": "fireball", "name": "Fireball", "desc": ["A bright streak blossoms into an explosion of flame."],
         "damage": {"damage_type": {"index": "fire", "name": "Fire"}},
         "school": {"index": "evocation", "name": "Evocation"}}],
           "Magic-Schools.json": [
               {"index": "evocation", "name": "Evocation", "desc": "Evocation spells call up blasts of fire."},
               {"index": "conjuration", "name": "Conjuration", "desc": "Conjuration spells transport creatures."}],
           "Damage-Types.json": [{"index": "fire", "name": "Fire", "desc": "Red dragons breathe fire."},
                                 {"index": "cold", "name": "Cold", "desc": "A white dragon's breath is cold."}],
           "Monsters.json": [{"index": "spider", "name": "Spider", "desc": ["A spider climbs walls and spins webs."]},
                             {"index": "priest", "name": "Priest", "desc": ["A priest tends a temple."]}]},
    "ru": {"Monsters.json": [{"index": "spider", "name": "Паук", "desc": ["Паук лазает по стенам и плетёт сети."]},
                             {"index": "priest", "name": "Жрец", "desc": ["Жрец служит в храме."]}]},
    "zh": {"Monsters.json": [{"index": "spider", "name": "蜘蛛", "desc": ["蜘蛛能爬墙并结网。"]},
                             {"index": "priest", "name": "祭司", "desc": ["祭司照看神殿。"]}]},
}
KINDS_LORE = {
    "en": "# Vale\n\n## Li Shen, the Ronin of the Bridge\nLi Shen once served the moon priests. He fights with a "
          "katana.\n\n## The Moon Bridge\nA stone bridge over the gorge, built by the old moon priests.\n",
    "ru": "# Долина\n\n## Ли Шен, ронин моста\nЛи Шен когда-то служил жрецам луны. Он сражается катаной.\n\n"
          "## Лунный мост\nКаменный мост над ущельем, построенный старыми лунными жрецами.\n",
    "zh": "# 山谷\n\n## 李申，桥上的浪人\n李申曾经侍奉月亮祭司。他用武士刀作战。\n\n"
          "## 月亮桥\n峡谷上的石桥，由古老的月亮祭司建造。\n",
}


@pytest.fixture
def kinds(tools_client: tuple[APIClient, Tenant]) -> APIClient:
    client, tenant = tools_client
    world = lore_services.world_create(tenant=tenant, slug="vale", languages=["en", "ru", "zh"])
    for domain, files in [
        ("srd", [lore_services.UploadedFile(name, json.dumps(entries).encode(), lang)
                 for lang, by_file in KINDS_SRD.items() for name, entries in by_file.items()]),
        ("lore", [lore_services.UploadedFile(f"vale_{lang}.md", text.encode(), lang)
                  for lang, text in KINDS_LORE.items()]),
    ]:
        version = lore_services.knowledge_ingest(world=world, domain=domain, files=files, actor="test")
        lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    return client


def test_a_title_the_lore_never_relates_to_the_subject_is_unknown_not_contradicted(kinds: APIClient) -> None:
    """QA: "Li Shen is afraid of spiders" was contradicted because Li Shen's entry does not mention the Spider's
    title: the lore says nothing of his fears, so it cannot deny one. A named entry whose field gives another of
    the title's kind still contradicts it (Misty Step's school is Conjuration; Fireball's damage type Fire)."""
    for fact in ["Li Shen is afraid of spiders.", "Li Shen, who once served the moon priests, is afraid of spiders.",
                 "Ли Шен, служивший жрецам луны, боится пауков.", "曾经侍奉月亮祭司的李申害怕蜘蛛。",
                 # Named whole, his entry names a monster in passing ("priests"): prose gives him no kind.
                 "Li Shen, the Ronin of the Bridge, is afraid of spiders.",
                 # A named entry that gives nothing of the title's kind: Misty Step deals no damage.
                 "Misty Step deals cold damage."]:
        assert verdict(kinds, fact, world="vale")[0] == "unknown", fact
    for fact, said, asked in [("Misty Step is an evocation spell.", "Conjuration", "Evocation"),
                              ("Fireball is a conjuration spell.", "Evocation", "Conjuration"),
                              ("Fireball deals cold damage.", "Fire", "Cold")]:
        result, hint = verdict(kinds, fact, world="vale")
        assert result == "contradicted" and f"says {said} where the statement says {asked}" in hint, (fact, hint)
    assert verdict(kinds, "Misty Step is a conjuration spell.", world="vale")[0] == "supported"


def test_a_word_of_the_subjects_name_is_no_second_member_of_its_class(kinds: APIClient) -> None:
    """QA: "The Moon Bridge was built by the sun priests" read as naming the moon and the sun in one place (the
    bridge's name), so the swap was never checked and the verdict was unknown, its hint quoting the very
    sentence that contradicts it ("built by the old moon priests")."""
    for fact, said, source in [
        ("The Moon Bridge was built by the sun priests.", "sun", "moon"),
        ("The Moon Bridge was built by the old sun priests.", "sun", "moon"),
        ("Лунный мост, построенный солнечными жрецами, стоит над ущельем.", "солнечными", "лунными"),
        ("月亮桥由古老的太阳祭司建造。", "太阳", "月亮"),
    ]:
        result, hint = verdict(kinds, fact, world="vale")
        assert result == "contradicted", (fact, hint)
        assert f"says \u201c{source}\u201d where the statement says \u201c{said}\u201d" in hint, hint
    assert verdict(kinds, "The Moon Bridge was built by the old moon priests.", world="vale")[0] == "supported"
