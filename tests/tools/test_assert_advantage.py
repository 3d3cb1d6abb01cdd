"""lore_assert on whose rolls a statement speaks of: the creature's own, or those made against it.

The SRD gives both members of the advantage pair in one sentence ("Attack rolls against the creature have
advantage, and the creature's attack rolls have disadvantage"), so the word checks alone called a statement
with the sides swapped supported. The world here is the bundled SRD's conditions, en + ru, as `make run`
loads them; the kobold is a lore entry shaped as the SRD's monsters are.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from lore import services as lore_services
from memoryhub.models import Tenant
from tools import roll_sides
from tools.assertion import _terms

pytestmark = pytest.mark.django_db

SRD = settings.BASE_DIR / "data" / "srd"
KOBOLD = ("# Bestiary\n\n## Kobold\n**Pack Tactics.** The kobold has advantage on an attack roll against a creature "
          "if at least one of the kobold's allies is within 5 ft. of the creature and the ally isn't incapacitated.\n"
          "**Sunlight Sensitivity.** While in sunlight, the kobold has disadvantage on attack rolls.\n")


@pytest.fixture
def srd_client(key_for: Callable[..., tuple[str, Tenant]]) -> APIClient:
    raw, tenant = key_for()
    world = lore_services.world_create(tenant=tenant, slug="srd-conditions", languages=["en", "ru"])
    files = [lore_services.UploadedFile("Conditions.json", (SRD / lang / "Conditions.json").read_bytes(), lang)
             for lang in ("en", "ru")]
    version = lore_services.knowledge_ingest(world=world, domain="srd", files=files, actor="test")
    lore_services.lore_version_publish(version=version, actor="test", force=True, reason="test fixture")
    lore = lore_services.knowledge_ingest(world=world, domain="lore", actor="test", files=[
        lore_services.UploadedFile("bestiary.md", KOBOLD.encode(), "en")])
    lore_services.lore_version_publish(version=lore, actor="test", force=True, reason="test fixture")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client


def verdict(client: APIClient, fact: str) -> tuple[str, str]:
    body = client.post("/api/v1/tools/lore_assert", {"fact": fact, "world": "srd-conditions", "use_llm": False},
                       format="json").json()
    return body["verdict"], body["hint"]


def test_the_creatures_own_rolls_with_the_other_sides_polarity_are_contradicted(srd_client: APIClient) -> None:
    """The QA cases: both were supported, quoting the rolls against the creature."""
    wrong = []
    for fact, entry, said, source in [
        ("A blinded creature has advantage on attack rolls.", "Conditions/blinded", "advantage", "disadvantage"),
        ("A prone creature has advantage on attack rolls.", "Conditions/prone", "advantage", "disadvantage"),
        ("A blinded creature's attack rolls have advantage.", "Conditions/blinded", "advantage", "disadvantage"),
        ("An invisible creature has disadvantage on attack rolls.", "Conditions/invisible", "disadvantage",
         "advantage"),
        ("Ослеплённое существо совершает броски атаки с преимуществом.", "Conditions/blinded", "преимуществом",
         "помехой"),
        ("Броски атаки ослеплённого существа совершаются с преимуществом.", "Conditions/blinded", "преимуществом",
         "помехой"),
        ("Невидимое существо совершает броски атаки с помехой.", "Conditions/invisible", "помехой", "преимуществом"),
    ]:
        result, hint = verdict(srd_client, fact)
        if result != "contradicted" or not hint.startswith(
                f"{entry} says \u201c{source}\u201d of the creature's own attack rolls where the statement says "
                f"\u201c{said}\u201d"):
            wrong.append((fact, result, hint))
    assert not wrong


def test_rolls_against_the_creature_with_the_other_sides_polarity_are_contradicted(srd_client: APIClient) -> None:
    wrong = []
    for fact, source in [("Attack rolls against a blinded creature have disadvantage.", "advantage"),
                         ("A blinded creature is attacked with disadvantage.", "advantage"),
                         ("You have disadvantage on attack rolls against a blinded creature.", "advantage"),
                         ("Attack rolls against an invisible creature have advantage.", "disadvantage"),
                         ("Броски атаки по ослеплённому существу совершаются с помехой.", "преимуществом")]:
        result, hint = verdict(srd_client, fact)
        if result != "contradicted" or f"says \u201c{source}\u201d of attack rolls against the creature" not in hint:
            wrong.append((fact, result, hint))
    assert not wrong


def test_each_side_with_its_own_polarity_stays_supported(srd_client: APIClient) -> None:
    wrong = []
    for fact, quoted in [
        ("Attack rolls against a blinded creature have advantage.", "Attack rolls against the creature have advantage"),
        ("A blinded creature's attack rolls have disadvantage.", "the creature's attack rolls have disadvantage"),
        ("A blinded creature has disadvantage on attack rolls.", "the creature's attack rolls have disadvantage"),
        ("A prone creature has disadvantage on attack rolls.", "The creature has disadvantage on attack rolls"),
        ("An invisible creature has advantage on attack rolls.", "the creature's attack rolls have advantage"),
        ("Броски атаки по ослеплённому существу совершаются с преимуществом.", "Броски атаки по существу"),
        ("Ослеплённое существо совершает броски атаки с помехой.", "броски атаки самого существа — с помехой"),
        ("Сбитое с ног существо совершает броски атаки с помехой.", "Существо совершает броски атаки с помехой"),
    ]:
        result, hint = verdict(srd_client, fact)
        if result != "supported" or quoted not in hint:
            wrong.append((fact, result, hint))
    assert not wrong


def test_a_rule_the_entry_gives_only_for_the_other_side_is_unknown(srd_client: APIClient) -> None:
    """Paralyzed speaks only of attack rolls against the creature, Frightened only of its own: "supported" and
    "contradicted" both quoted the other side's sentence."""
    wrong = []
    for fact, entry, spoken in [
        ("A paralyzed creature has advantage on attack rolls.", "Conditions/paralyzed", "attack rolls against"),
        ("Парализованное существо совершает броски атаки с преимуществом.", "Conditions/paralyzed",
         "attack rolls against"),
        ("Attack rolls against a frightened creature have advantage.", "Conditions/frightened",
         "the creature's own attack rolls"),
        ("The charmer can't attack the charmed creature.", "Conditions/charmed", "the creature's own attacks"),
        # The automatic failures of Paralyzed are its saving throws, not the attacks made against it.
        ("Attack rolls against a paralyzed creature automatically fail.", "Conditions/paralyzed",
         "the creature's own saving throws"),
    ]:
        result, hint = verdict(srd_client, fact)
        if result != "unknown" or not hint.startswith(f"{entry} speaks of {spoken}"):
            wrong.append((fact, result, hint))
    assert not wrong


def test_a_statement_whose_side_is_not_read_keeps_the_word_checks_verdict(srd_client: APIClient) -> None:
    """The charmer is neither the creature nor its attacker; the kobold has advantage and disadvantage on its
    own attack rolls, each under its condition: the word checks decide, as before."""
    assert verdict(srd_client, "The charmer has advantage on ability checks to interact socially with the "
                               "creature.")[0] == "supported"
    assert verdict(srd_client, "The charmer has disadvantage on ability checks to interact socially with the "
                               "creature.")[0] == "contradicted"
    assert verdict(srd_client, "While in sunlight, the kobold has disadvantage on attack rolls.")[0] == "supported"
    result, hint = verdict(srd_client, "While in sunlight, the kobold has advantage on attack rolls.")
    assert result == "contradicted" and "sunlight" in hint, hint


@pytest.mark.parametrize(("lang", "title"), [("en", "Blinded"), ("ru", "Ослепление")])
def test_the_srd_sentence_reads_as_two_sides(lang: str, title: str) -> None:
    conditions = {"en": "- Attack rolls against the creature have advantage, and the creature's attack rolls have "
                        "disadvantage.",
                  "ru": "- Броски атаки по существу совершаются с преимуществом, а броски атаки самого существа — "
                        "с помехой."}
    read = {(r.kind, r.member, r.side) for r in roll_sides.read([conditions[lang]], frozenset(_terms(title)))}
    assert read == {("attack", "advantage", roll_sides.AGAINST), ("attack", "disadvantage", roll_sides.OWN)}
