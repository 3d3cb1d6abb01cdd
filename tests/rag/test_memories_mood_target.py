"""A character's affinity and trust move by what the user feels about the character, not by fury at a
landlord or sadness confided to it (en/ru/zh), through the rules and the model."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from memoryhub.models import Conversation
from rag.memories import consolidation
from rag.models import CharacterMood
from tests.factories import append_messages

pytestmark = pytest.mark.django_db

START = datetime(2024, 5, 1, 8, 0, tzinfo=UTC)


def _mood(tenant, user_id: str, texts: list[str]) -> CharacterMood:
    append_messages(tenant, user_id, "s1", texts, start=START)
    conversation = Conversation.objects.get(tenant=tenant, user_id=user_id, session_id="s1")
    run_id = consolidation.consolidation_request(conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    return CharacterMood.objects.get(tenant=tenant, user_id=user_id)


@pytest.mark.parametrize("said", [
    ["I'm furious at my landlord."],
    ["My landlord raised the rent again. I am so furious about it."],
    ["Я в ярости на моего арендодателя."],
    ["Я так зла на своего начальника!"],
    ["我对我老板很生气。"],
    ["我房东又涨房租了。我真的很生气！"],
])
def test_anger_at_someone_else_leaves_affinity_and_trust(tenant, said) -> None:
    row = _mood(tenant, "anna", said)
    assert row.mood < 0  # the user is upset: their mood says so
    assert row.emotions["anger"] < 0
    assert row.affinity == pytest.approx(0.0, abs=1e-3) and row.trust == pytest.approx(50.0, abs=1e-3)
    # The same anger at no one named keeps seed 004's formula: affinity 10 × -0.9, trust -5.
    unknown = _mood(tenant, "bob", ["I'm so angry!"])
    assert unknown.affinity == pytest.approx(-9.0, abs=1e-3) and unknown.trust == pytest.approx(45.0, abs=1e-3)


@pytest.mark.parametrize("said", [
    ["I'm so sad today."],
    ["Мне так грустно сегодня."],
    ["我今天很难过。"],
    ["Between us, I'm really scared."],
    ["Мне грустно, только тебе скажу."],
    ["我好难过，我只告诉你。"],
])
def test_sadness_confided_to_the_character_does_not_cool_it(tenant, said) -> None:
    row = _mood(tenant, "anna", said)
    assert row.mood < 0
    assert row.affinity == pytest.approx(0.0, abs=1e-3) and row.trust == pytest.approx(50.0, abs=1e-3)


@pytest.mark.parametrize("said", [
    ["You're useless."],
    ["Ты бесполезен."],
    ["你真没用。"],
    ["You never listen to me."],
    ["Ты меня бесишь!"],
    ["我生你的气了。"],
])
def test_hostility_at_the_character_lowers_affinity_and_trust(tenant, said) -> None:
    row = _mood(tenant, "anna", said)
    assert row.emotions.get("anger", 0) < 0
    assert row.affinity <= -6.0 and row.trust == pytest.approx(45.0, abs=1e-3)


def test_the_models_targets_decide_what_moves_the_relationship(tenant, llm) -> None:
    empty = {"facts_about_user": [], "past_events": [], "self_beliefs": [], "objectives": [], "key_facts": []}
    llm.script_chat({**empty, "emotions": [{"name": "anger", "score": -0.8, "target": "third_party"},
                                           {"name": "sadness", "score": -0.6, "target": "user"}]},
                    {**empty, "emotions": [{"name": "anger", "score": -0.8, "target": "character"},
                                           {"name": "anger", "score": -0.4, "target": "third_party"}]})
    confided = _mood(tenant, "anna", ["My landlord is evicting me and I can't stop crying."])
    assert confided.mood == pytest.approx(-0.7) and confided.affinity == pytest.approx(0.0, abs=1e-3)
    assert confided.emotions == {"anger": -0.8, "sadness": -0.6}
    hostile = _mood(tenant, "bob", ["Stop talking, you are no help at all."])
    assert hostile.affinity == pytest.approx(-8.0, abs=1e-3) and hostile.trust == pytest.approx(45.0, abs=1e-3)
