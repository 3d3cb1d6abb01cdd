"""Art cards found by meaning (seed 003 §8.7's Art domain) and tagged by a model (§8.8): art_suggest's
`query`, the cards' chunks through their life (an NPC's rename, `reindex`), and the tagging job with the
LLM's faults."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO
from typing import Any

import pytest
import yaml
from django.core.exceptions import ImproperlyConfigured
from django.core.management import call_command
from django.utils import timezone

from lore import config as lore_config
from lore.campaigns import art, retention, selectors, services
from lore.campaigns.api import ARTCARD_EXAMPLE, NPC_EXAMPLE
from lore.campaigns.models import NPC, ArtCard, Campaign
from lore.models import World
from memoryhub.embeddings import get_embedder
from memoryhub.llm import LLMUnavailable
from memoryhub.models import Tenant
from rag.models import Chunk, Namespace
from tests.llm_server import Delay, HTTPError
from tests.lore.conftest import CAMPAIGN_BASE as BASE
from tests.lore.conftest import scoped_client

pytestmark = pytest.mark.django_db

BRIDGE = ARTCARD_EXAMPLE  # moonlit bridge, mist, ronin (npc_LiShen) with scar on left cheek
MARKET = {**ARTCARD_EXAMPLE, "image_id": "img_market", "scene_id": "scn_050",
          "prompt_text": "crowded noon market, red lanterns, spice stalls, a merchant shouting",
          "entities": {"npc": [], "location": ["loc_market"]},
          "visual_tags": ["noon_sun", "red_lanterns", "spices", "crowd"], "style": {"preset": "watercolor"}}
TEMPLE_RU = {**ARTCARD_EXAMPLE, "image_id": "img_temple", "scene_id": "scn_051",
             "prompt_text": "заснеженный горный храм, колокол, монахи в оранжевых одеждах",
             "entities": {"npc": [], "location": ["loc_temple"]},
             "visual_tags": ["снег", "колокол", "храм", "монахи"], "style": {"preset": "ink"}}
GARDEN_ZH = {**ARTCARD_EXAMPLE, "image_id": "img_garden", "scene_id": "scn_052",
             "prompt_text": "月光下的竹林，石灯笼，一只白色的狐狸",
             "entities": {"npc": [], "location": ["loc_garden"]},
             "visual_tags": ["竹林", "石灯笼", "白狐"], "style": {"preset": "ink"}}


def _campaign() -> Campaign:
    return Campaign.objects.select_related("tenant", "world").filter(slug="camp_123").order_by("id").first()


def _record(engine: Any, *cards: dict[str, Any]) -> None:
    for card in cards:
        response = engine.post(f"{BASE}/artcards", card, format="json")
        assert response.status_code == 201, response.content


def _ids(result: dict[str, Any]) -> list[str]:
    return [c["image_id"] for c in result["cards"]]


def test_a_query_finds_cards_by_their_words_in_english_russian_and_chinese(engine):
    _record(engine, BRIDGE, MARKET, TEMPLE_RU, GARDEN_ZH)
    campaign = _campaign()
    # "misty" / "night" are not the card's words: the vector's character n-grams and the NPC's archetype
    # (ronin) carry it; the market, the temple and the garden share nothing with it.
    found = selectors.art_suggest(campaign, query="misty bridge at night with the ronin")
    assert _ids(found)[0] == "img_8f3c" and "img_market" not in _ids(found)
    assert found["cards"][0]["components"]["bm25"] > 0 and found["cards"][0]["score"] > 0
    assert found["keep"] == sorted(BRIDGE["visual_tags"]) and found["skipped_steps"] == []
    # The NPC's name on the card's chunk: "Li Shen" was never in the prompt.
    assert _ids(selectors.art_suggest(campaign, query="Li Shen portrait"))[0] == "img_8f3c"
    # Russian forms meet through the stemmer (храма / храм, колокола / колокол).
    assert _ids(selectors.art_suggest(campaign, query="колокола горного храма"))[0] == "img_temple"
    # Chinese is segmented (竹林, 狐狸).
    assert _ids(selectors.art_suggest(campaign, query="竹林里的狐狸"))[0] == "img_garden"
    # Nothing like it: no card, rather than the campaign's newest.
    assert selectors.art_suggest(campaign, query="spaceship engine room")["cards"] == []


def test_filters_narrow_and_the_query_ranks_without_dropping_a_match(engine):
    second = {**BRIDGE, "image_id": "img_duel", "prompt_text": "duel at dawn in a bamboo grove, katana drawn",
              "visual_tags": ["dawn", "bamboo", "katana"], "created_at": "2025-08-28T11:42:05Z"}
    _record(engine, BRIDGE, second, MARKET)
    campaign = _campaign()
    # Without a query: the scene's cards newest first, exactly as before (no scores in the answer).
    plain = selectors.art_suggest(campaign, scene_id="scn_042")
    assert _ids(plain) == ["img_duel", "img_8f3c"] and "skipped_steps" not in plain
    assert set(plain["cards"][0]) == {"image_id", "scene_id", "visual_tags", "style", "safe"}
    # With one: the same cards, the bridge first; the market (another scene) stays out though it matches.
    ranked = selectors.art_suggest(campaign, scene_id="scn_042", query="moonlit bridge in the mist")
    assert _ids(ranked) == ["img_8f3c", "img_duel"]
    # A filtered card the query does not reach still comes, after the matches, with score 0.
    unrelated = selectors.art_suggest(campaign, scene_id="scn_042", query="red lanterns")
    assert set(_ids(unrelated)) == {"img_8f3c", "img_duel"}
    assert selectors.art_suggest(campaign, location="loc_market", query="moonlit bridge")["cards"][0]["image_id"] \
        == "img_market"


def test_the_tool_takes_a_query_alone_and_stays_read_only(engine, world):
    _record(engine, BRIDGE, MARKET)
    tools = scoped_client(world.tenant, "tools")
    response = tools.post("/api/v1/tools/art_suggest", {"campaign_id": "camp_123", "query": "red lanterns at noon"},
                          format="json")
    assert response.status_code == 200, response.content
    assert response.json()["sources"] == ["artcard:img_market"]
    blank = tools.post("/api/v1/tools/art_suggest", {"campaign_id": "camp_123", "query": "  "}, format="json")
    assert blank.status_code == 400
    before = Chunk.objects.count()
    tools.post("/api/v1/tools/art_suggest", {"campaign_id": "camp_123", "query": "bridge"}, format="json")
    assert Chunk.objects.count() == before and ArtCard.objects.count() == 2


def test_another_tenants_cards_are_never_found(engine, world):
    other_tenant = Tenant.objects.create(name="tenant-b")
    other_world = World.objects.create(tenant=other_tenant, slug="dnd5e", name="D&D")
    other = services.campaign_create(tenant=other_tenant, world=other_world, slug="camp_123")
    services.artcard_record(campaign=other, document={**MARKET, "image_id": "img_theirs",
                                                      "prompt_text": "moonlit bridge, mist, a ronin"})
    _record(engine, MARKET)
    mine = selectors.art_suggest(_campaign(), query="moonlit bridge mist ronin")
    assert "img_theirs" not in _ids(mine)
    tools = scoped_client(world.tenant, "tools")
    body = tools.post("/api/v1/tools/art_suggest", {"campaign_id": "camp_123", "query": "moonlit bridge"},
                      format="json").json()
    assert "artcard:img_theirs" not in body["sources"]


def test_archive_and_delete_take_the_cards_out_of_search(engine):
    _record(engine, BRIDGE)
    campaign = _campaign()
    card = ArtCard.objects.get()
    assert card.chunk.namespace == campaign.art_namespace and "ronin" in card.chunk.text
    services.campaign_archive(campaign=campaign, actor="t")
    assert not Chunk.objects.filter(namespace=campaign.art_namespace).exists()
    assert ArtCard.objects.get().chunk is None  # the card stays, out of search
    deleted = services.campaign_delete(campaign=campaign, actor="t")
    assert deleted["artcards"] == 1
    assert not Namespace.objects.filter(name=campaign.art_namespace).exists()


def test_deleting_an_active_campaign_deletes_its_art_namespace(engine):
    _record(engine, BRIDGE, MARKET)
    campaign = _campaign()
    deleted = services.campaign_delete(campaign=campaign, actor="t")
    assert deleted["chunks"] == 2 and deleted["artcards"] == 2
    assert not Chunk.objects.filter(namespace=campaign.art_namespace).exists()
    assert not Namespace.objects.filter(name=campaign.art_namespace).exists()


def test_expire_with_episodes_deletes_the_card_with_its_chunk(engine, settings):
    settings.ART_MEDIA_POLICY = "expire-with-episodes"
    _record(engine, BRIDGE, MARKET)
    campaign = _campaign()
    ArtCard.objects.filter(image_id="img_8f3c").update(recorded_at=timezone.now() - timedelta(days=400))
    assert retention.episodes_expire()["artcards_deleted"] == 1
    assert list(Chunk.objects.filter(namespace=campaign.art_namespace).values_list("meta__image_id", flat=True)) \
        == ["img_market"]
    assert _ids(selectors.art_suggest(campaign, query="moonlit bridge mist")) == []


def test_a_card_without_tags_offline_gets_words_of_its_prompt(engine):
    untagged = {k: v for k, v in BRIDGE.items() if k != "visual_tags"}
    response = engine.post(f"{BASE}/artcards", untagged, format="json")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["visual_tags"] == DERIVED
    assert body["tags_source"] == "derived" and body["tags_pending"] is False
    # A replay is answered as the first time; the posted document is what it is compared with.
    assert engine.post(f"{BASE}/artcards", untagged, format="json").status_code == 200
    assert _ids(selectors.art_suggest(_campaign(), query="scar on the cheek")) == ["img_8f3c"]


# "moonlit bridge, mist, ronin with scar on left cheek": broken at "with" and "on", not glued across them.
DERIVED = ["moonlit_bridge", "mist", "ronin", "scar", "left_cheek"]


@pytest.mark.parametrize(("text", "tags"), [
    # A tag never spans a dropped preposition ("castle_hill_sea", "замок_холме_моря", "海边山丘上城堡" before).
    ("castle on a hill by the sea", ["castle", "hill", "sea"]),
    ("crowded noon market, red lanterns, a merchant with spices", ["crowded_noon_market", "red_lanterns",
                                                                   "merchant", "spices"]),
    # Russian: broken at prepositions and conjunctions (a preposition no stopword list names too: возле), a
    # verb ends a tag, and the case a preposition put a phrase in goes back to the nominative, adjectives agreeing.
    ("замок на холме у моря", ["замок", "холм", "море"]),
    ("замок возле синего моря", ["замок", "синее_море"]),
    ("рыцарь со шрамом на левой щеке, в тёмном лесу горят костры", ["рыцарь", "шрам", "левая_щека", "темный_лес",
                                                                      "костры"]),
    ("заснеженный горный храм, колокол и монахи в оранжевых одеждах", ["заснеженный_горный_храм", "колокол",
                                                                         "монахи", "оранжевые_одежды"]),
    # The head's genitive stays one ("у стен старого замка": the walls of the old castle).
    ("у стен старого замка", ["стены_старого_замка"]),
    # Chinese: broken at localisers (上, 下), prepositions (在) and verbs; 的 joins a modifier to its noun.
    ("海边山丘上的城堡", ["海边山丘", "城堡"]),
    ("月光下的竹林，石灯笼，白色的狐狸", ["月光", "竹林", "石灯笼", "白色狐狸"]),
    ("城堡在山丘上，屋里点着蜡烛", ["城堡", "山丘", "屋里", "蜡烛"]),
])
def test_derived_tags_break_at_function_words_in_english_russian_and_chinese(text, tags):
    assert art.derive_tags(text) == tags


@pytest.mark.parametrize("prompt", ["the of and", "на, в, у", "在的和", "🌙 ✨ …"])
def test_a_card_with_nothing_to_derive_tags_from_is_refused_naming_visual_tags(engine, prompt):
    """It was stored with `visual_tags: []`: no canon marker for art_suggest, nothing for a model to describe."""
    response = engine.post(f"{BASE}/artcards", {**UNTAGGED, "prompt_text": prompt}, format="json")
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "visual_tags_required" and list(error["fields"]) == ["/visual_tags"]
    assert not ArtCard.objects.exists() and not Chunk.objects.filter(kind="art").exists()
    # Given by the engine, the same prompt is a card, found by its tags.
    _record(engine, {**BRIDGE, "prompt_text": prompt, "visual_tags": ["лунный_мост", "туман"]})
    assert _ids(selectors.art_suggest(_campaign(), query="лунный мост в тумане")) == ["img_8f3c"]


def test_a_posted_tag_of_blanks_is_refused_naming_it(engine):
    response = engine.post(f"{BASE}/artcards", {**BRIDGE, "visual_tags": ["mist", "  "]}, format="json")
    assert response.status_code == 400 and list(response.json()["error"]["fields"]) == ["/visual_tags/1"]
    assert not ArtCard.objects.exists()


@pytest.mark.parametrize(("prompt", "query", "tag"), [
    ("castle on a hill by the sea", "a castle by the sea", "sea"),
    ("замок на холме у моря", "замок у моря", "море"),
    ("海边山丘上的城堡", "山丘上的城堡", "海边山丘"),
])
def test_a_derived_card_is_found_and_keeps_its_tags_as_markers(engine, prompt, query, tag):
    _record(engine, {**UNTAGGED, "prompt_text": prompt}, MARKET)
    found = selectors.art_suggest(_campaign(), query=query)
    assert _ids(found)[0] == "img_8f3c" and tag in found["cards"][0]["visual_tags"] and tag in found["keep"]


def test_a_card_stored_without_tags_before_is_still_found(engine):
    """Cards recorded with `visual_tags: []` before the refusal keep their chunk: their NPCs, scene and prompt."""
    _record(engine, {**UNTAGGED, "prompt_text": "moonlit bridge"}, MARKET)
    ArtCard.objects.filter(image_id="img_8f3c").update(visual_tags=[])
    campaign = _campaign()
    assert art.artcards_reindex(campaign=campaign) == 2
    assert _ids(selectors.art_suggest(campaign, query="Li Shen on the bridge"))[0] == "img_8f3c"
    assert _ids(selectors.art_suggest(campaign, scene_id="scn_042")) == ["img_8f3c"]


UNTAGGED = {k: v for k, v in BRIDGE.items() if k != "visual_tags"}
MODEL_TAGS = ["moonlight", "mist", "stone_bridge", "katana", "scar_left_cheek", "blue-gold"]


def test_a_model_writes_five_to_eight_tags_and_the_card_is_indexed_by_them(engine, llm,
                                                                          django_capture_on_commit_callbacks):
    llm.script_chat({"visual_tags": MODEL_TAGS})
    with django_capture_on_commit_callbacks(execute=True):
        response = engine.post(f"{BASE}/artcards", UNTAGGED, format="json")
    assert response.status_code == 201 and response.json()["tags_source"] == "derived"
    card = ArtCard.objects.get()
    assert (card.visual_tags, card.tags_source, card.tags_pending) == (MODEL_TAGS, "model", False)
    assert "blue-gold" in card.chunk.text and Chunk.objects.filter(namespace=_campaign().art_namespace).count() == 1
    [request] = llm.chat_requests
    assert "moonlit bridge" in request["messages"][-1]["content"]
    assert _ids(selectors.art_suggest(_campaign(), query="blue-gold palette")) == ["img_8f3c"]
    # Tags the engine gave are its own: no model call.
    _record(engine, {**BRIDGE, "image_id": "img_2"})
    assert len(llm.chat_requests) == 1


@pytest.mark.parametrize("faults", [
    # The LLM away: in-process one try of the client's 2 attempts (a worker retries with backoff), then given up.
    [HTTPError(500)] * 2,
    [HTTPError(429)] * 2,
    [Delay(1.0)] * 2,  # over LLM_TIMEOUT
    ["not json", '{"visual_tags": ["only one"]}'],  # garbage, then too few tags: no further retry
])
def test_llm_faults_never_lose_the_card(engine, llm, faults, django_capture_on_commit_callbacks):
    llm.script_chat(*faults)
    with django_capture_on_commit_callbacks(execute=True):
        response = engine.post(f"{BASE}/artcards", UNTAGGED, format="json")
    assert response.status_code == 201, response.content
    card = ArtCard.objects.get()
    assert card.tags_source == "derived" and card.visual_tags == DERIVED
    assert card.tags_pending is False and card.tag_error and card.chunk is not None
    assert _ids(selectors.art_suggest(_campaign(), query="moonlit bridge")) == ["img_8f3c"]


def test_a_transient_fault_is_retried_and_then_tagged(engine, llm, django_capture_on_commit_callbacks):
    llm.script_chat(HTTPError(503), {"visual_tags": MODEL_TAGS})
    with django_capture_on_commit_callbacks(execute=True):
        engine.post(f"{BASE}/artcards", UNTAGGED, format="json")
    card = ArtCard.objects.get()
    assert card.tags_source == "model" and card.tag_attempts == 1 and card.tag_error == ""


def test_the_sweep_tags_a_card_left_pending_and_indexes_one_without_a_chunk(engine, llm):
    engine.post(f"{BASE}/artcards", UNTAGGED, format="json")  # its job's message lost (never committed here)
    # As if the job's message was lost: pending, last tried long ago.
    long_ago = timezone.now() - timedelta(hours=2)
    ArtCard.objects.update(tags_pending=True, tag_attempted_at=long_ago, recorded_at=long_ago)
    _record(engine, MARKET)
    ArtCard.objects.filter(image_id="img_market").update(chunk=None)  # a card recorded before indexing
    Chunk.objects.filter(meta__image_id="img_market").delete()
    llm.script_chat({"visual_tags": MODEL_TAGS})
    assert art.artcards_sweep() == {"tagging_enqueued": 1, "indexed": 1, "refreshed": 0}
    assert ArtCard.objects.get(image_id="img_8f3c").tags_source == "model"
    assert _ids(selectors.art_suggest(_campaign(), query="red lanterns")) == ["img_market"]
    assert art.artcards_sweep() == {"tagging_enqueued": 0, "indexed": 0, "refreshed": 0}


def test_an_empty_tag_list_is_still_refused_naming_the_field(engine):
    response = engine.post(f"{BASE}/artcards", {**BRIDGE, "visual_tags": []}, format="json")
    assert response.status_code == 400 and "/visual_tags" in response.json()["error"]["fields"]


def test_artcards_weights_take_bm25_and_vector_only():
    data = yaml.safe_load(lore_config.config_path().read_text())["knowledge"]
    data["artcards"]["retrieval"]["weights"]["title"] = 1.0  # no titles to match: accepted and never used
    with pytest.raises(ImproperlyConfigured, match=r"artcards\.retrieval\.weights: title"):
        lore_config.validate(data)
    cfg = lore_config.domain_config("artcards")
    assert (cfg.mode, cfg.k, dict(cfg.weights)) == ("hybrid", 8, {"bm25": 1.0, "vector": 1.0})


def test_a_worker_retry_keeps_the_card_pending_until_its_last_try(engine, llm):
    engine.post(f"{BASE}/artcards", UNTAGGED, format="json")  # the job not run: its commit never comes here
    card_id = ArtCard.objects.get().pk
    llm.script_chat(HTTPError(500), HTTPError(500))
    with pytest.raises(LLMUnavailable):
        art.artcard_tag(card_id=card_id, final=False)
    card = ArtCard.objects.get()
    assert card.tags_pending and card.tag_error and card.tags_source == "derived"
    llm.script_chat({"visual_tags": MODEL_TAGS})
    assert art.artcard_tag(card_id=card_id, final=False) == "tagged"
    assert art.artcard_tag(card_id=card_id) == "skipped"  # idempotent


# --- An NPC renamed: the cards showing it are indexed by the new name -----------------------------------
RENAMED = {**NPC_EXAMPLE, "version": "1.2.0", "static": {**NPC_EXAMPLE["static"], "name": "Kaito Mori"}}


def _rename(engine: Any, document: dict[str, Any] = RENAMED) -> None:
    response = engine.post(f"{BASE}/npcs", document, format="json")
    assert response.status_code == 200, response.content


def _art_chunks(campaign: Campaign) -> dict[str, str]:
    return dict(Chunk.objects.filter(namespace=campaign.art_namespace).values_list("meta__image_id", "text"))


def test_renaming_an_npc_reindexes_the_cards_that_show_it(engine, django_capture_on_commit_callbacks):
    _record(engine, BRIDGE, MARKET)
    campaign = _campaign()
    market_chunk = ArtCard.objects.get(image_id="img_market").chunk_id
    with django_capture_on_commit_callbacks(execute=True):
        _rename(engine)
    card = ArtCard.objects.get(image_id="img_8f3c")
    assert "Kaito Mori" in card.chunk.text and "Li Shen" not in card.chunk.text and not card.reindex_pending
    assert _ids(selectors.art_suggest(campaign, query="Kaito Mori"))[0] == "img_8f3c"
    assert _ids(selectors.art_suggest(campaign, query="Li Shen")) == []
    # Only the cards showing it: the market's chunk is the one it had, and no chunk is left behind.
    assert ArtCard.objects.get(image_id="img_market").chunk_id == market_chunk
    assert set(_art_chunks(campaign)) == {"img_8f3c", "img_market"}
    # A newer version under the same name and archetype leaves the cards as they are.
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        _rename(engine, {**RENAMED, "version": "1.3.0", "static": {**RENAMED["static"], "voice_tts": "other"}})
    assert callbacks == [] and ArtCard.objects.get(image_id="img_8f3c").chunk_id == card.chunk_id


def test_a_card_deleted_while_its_refresh_is_pending_gets_no_chunk_again(engine, settings,
                                                                         django_capture_on_commit_callbacks):
    settings.ART_MEDIA_POLICY = "expire-with-episodes"
    _record(engine, BRIDGE, {**BRIDGE, "image_id": "img_duel"})
    campaign = _campaign()
    with django_capture_on_commit_callbacks(execute=False) as callbacks:
        _rename(engine)
    assert ArtCard.objects.filter(reindex_pending=True).count() == 2 and len(callbacks) == 1
    # The bridge expires before the job runs; the duel is deleted between the job's embedding and its write.
    ArtCard.objects.filter(image_id="img_8f3c").update(recorded_at=timezone.now() - timedelta(days=400))
    assert retention.episodes_expire()["artcards_deleted"] == 1
    duel = ArtCard.objects.get(image_id="img_duel")
    prepared = art._prepare(campaign, [duel])
    ArtCard.objects.filter(image_id="img_duel").update(recorded_at=timezone.now() - timedelta(days=400))
    assert retention.episodes_expire()["artcards_deleted"] == 1
    assert art._rewrite(campaign, prepared, get_embedder().name, everything=False) == (0, [])
    callbacks[0]()
    assert not ArtCard.objects.exists() and _art_chunks(campaign) == {}
    assert selectors.art_suggest(campaign, query="Kaito Mori moonlit bridge")["cards"] == []


def test_a_card_tagged_while_its_npc_is_renamed_ends_with_the_new_name(engine, llm,
                                                                      django_capture_on_commit_callbacks):
    engine.post(f"{BASE}/artcards", UNTAGGED, format="json")  # its tagging job not run: its commit never comes
    campaign = _campaign()
    card = ArtCard.objects.get()
    # The model answered and the card's text was embedded with the old name; then the rename and its refresh.
    text, vector = art.index_prepare(campaign, card.document, MODEL_TAGS)
    with django_capture_on_commit_callbacks(execute=True):
        _rename(engine)
    assert "Kaito Mori" in ArtCard.objects.get().chunk.text
    with django_capture_on_commit_callbacks(execute=True):
        assert art._tags_write(campaign, card.pk, MODEL_TAGS, text, vector) == "tagged"
    card = ArtCard.objects.get()
    assert card.visual_tags == MODEL_TAGS and not card.reindex_pending
    assert "Kaito Mori" in card.chunk.text and "blue-gold" in card.chunk.text and "Li Shen" not in card.chunk.text
    assert list(_art_chunks(campaign)) == ["img_8f3c"]


def test_the_sweep_refreshes_cards_whose_job_was_lost(engine):
    _record(engine, BRIDGE)
    _rename(engine)  # the job's message lost: its commit never comes here
    assert ArtCard.objects.get().reindex_pending
    assert art.artcards_sweep()["refreshed"] == 1
    assert "Kaito Mori" in ArtCard.objects.get().chunk.text and not ArtCard.objects.get().reindex_pending
    assert art.artcards_sweep()["refreshed"] == 0  # idempotent


def test_a_refresh_while_the_embedder_is_away_keeps_the_cards_pending_and_their_chunks(engine, remote_embedder):
    _record(engine, BRIDGE)
    campaign = _campaign()
    before = _art_chunks(campaign)
    _rename(engine)  # the job runs below, by hand
    remote_embedder.script_embeddings(HTTPError(500))
    with pytest.raises(LLMUnavailable):  # the task's autoretry takes this; the sweep after its last try
        art.artcards_refresh(campaign_id=campaign.pk)
    card = ArtCard.objects.get()
    assert card.reindex_pending and _art_chunks(campaign) == before  # nothing half-written, the old chunk stands
    assert art.artcards_sweep()["refreshed"] == 1  # the embedder back
    assert "Kaito Mori" in ArtCard.objects.get().chunk.text and not ArtCard.objects.get().reindex_pending


def test_reindex_rebuilds_the_art_namespaces(engine, world):
    _record(engine, BRIDGE, MARKET)
    campaign = _campaign()
    old = set(ArtCard.objects.values_list("chunk_id", flat=True))
    # As after an embedder change, and with a name changed behind the cards' back and a chunk of no card.
    Namespace.objects.filter(name=campaign.art_namespace).update(vector_space="hashing-v0")
    assert selectors.art_suggest(campaign, query="moonlit bridge")["skipped_steps"] == [
        {"step": "vector", "reason": "reindex_needed"}]
    NPC.objects.filter(npc_id="npc_LiShen").update(name="Kaito Mori")
    ArtCard.objects.filter(image_id="img_market").update(chunk=None)
    out, err = StringIO(), StringIO()
    call_command("reindex", "--tenant", world.tenant.name, stdout=out, stderr=err)
    assert "art cards: 2 chunks in 1 namespace(s)" in out.getvalue()
    assert f"art cards {world.tenant.name}" in err.getvalue() and "1/1" in err.getvalue()
    assert not old & set(ArtCard.objects.values_list("chunk_id", flat=True))
    assert Chunk.objects.filter(namespace=campaign.art_namespace).count() == 2
    namespace = Namespace.objects.get(name=campaign.art_namespace)
    assert namespace.vector_space == get_embedder().name and namespace.chunk_count == 2
    found = selectors.art_suggest(campaign, query="Kaito Mori on the bridge")
    assert _ids(found)[0] == "img_8f3c" and found["skipped_steps"] == []
