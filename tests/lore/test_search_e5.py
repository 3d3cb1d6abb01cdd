"""Knowledge search with the multilingual local model (EMBEDDING_PROVIDER=e5): its relevance floor.

E5 puts unrelated text at a cosine of about 0.75, so the floor set on the hashing vectors' scale
(MIN_COSINE 0.25) would let every entry through: the floor is translated to E5's scale."""

from __future__ import annotations

import pytest

from lore import selectors, services
from lore.models import World
from memoryhub.embeddings import E5Embedder, cosine_floor, get_embedder


@pytest.fixture
def e5_world(world: World, small_files, settings) -> World:  # type: ignore[no-untyped-def]
    settings.EMBEDDING_PROVIDER = "e5"
    assert isinstance(get_embedder(), E5Embedder)
    services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="test")
    return world


def search(world: World, query: str) -> list[tuple[str, str]]:
    targets = selectors.targets_resolve(tenant_id=world.tenant_id, world_slug=world.slug, domains=["srd"],
                                        alias="stage")
    return [(hit.entry_id, hit.language)
            for hit in selectors.knowledge_search(tenant_id=world.tenant_id, targets=targets, query=query, k=3).hits]


def test_an_unrelated_question_finds_nothing_and_a_related_one_its_rule(e5_world: World) -> None:
    assert cosine_floor(selectors.MIN_COSINE) == pytest.approx(0.822)
    # Every entry is within E5's cosine of 0.7 of anything; none passes the translated floor.
    assert search(e5_world, "how do central banks set interest rates?") == []
    # By meaning alone, no word in common with any entry: healing is Cure Wounds, and "an explosion of
    # flames" in Chinese is the English Fireball.
    assert search(e5_world, "healing magic")[0] == ("Spells/cure-wounds", "en")
    assert search(e5_world, "火焰爆炸")[0] == ("Spells/fireball", "en")
    assert search(e5_world, "what happens when my character is blinded?")[0] == ("Conditions/blinded", "en")


def test_the_floor_stays_as_set_for_the_hashing_vectors(settings) -> None:
    settings.EMBEDDING_PROVIDER = "hashing"
    assert cosine_floor(0.25) == 0.25 and cosine_floor(0.3) == 0.3
    model = E5Embedder(384)
    assert model.cosine_floor(0.25) == pytest.approx(0.822) and model.cosine_floor(0.3) == pytest.approx(0.839)
    assert model.cosine_floor(0.0) == 0.0  # no floor stays no floor
    assert 0.822 < model.cosine_floor(0.27) < 0.839


def test_a_version_built_by_another_embedder_is_searched_by_words_and_the_answer_says_so(staged, settings) -> None:
    """After a switch of EMBEDDING_PROVIDER a version keeps the vectors it was built with: its search
    answered by words alone, silently, while the log pointed to `reindex` (which does not cover it)."""
    from tests.lore.conftest import scoped_client

    client = scoped_client(staged.tenant, "tools")

    def search() -> dict:
        response = client.post("/api/v1/worlds/dnd5e/search", {"query": "fireball", "alias": "stage"}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    assert "skipped_steps" not in search()
    settings.EMBEDDING_PROVIDER = "e5"
    body = search()
    assert body["skipped_steps"] == [{"step": "vector", "reason": "reindex_needed"}]
    assert body["items"][0]["entry_id"] == "Spells/fireball" and "vector" not in body["items"][0]["components"]
