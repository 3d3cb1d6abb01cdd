"""The campaign tools of the game master (seed 003 §8.12): what happened to a party (its last episodes, or
those about something, §8.7's episode domain filtered by campaign and party), how an NPC stands towards
it and its heroes, what a scene's art must keep. They read what the game engine wrote through
`lore.campaigns`; like every tool they never write (dispositions change only by the engine's
summaries). An archived (finished) campaign is out of the tools: its calls answer 409 `archived`."""

from __future__ import annotations

from typing import Any

from lore.campaigns import selectors as campaigns
from lore.campaigns.models import Campaign
from memoryhub.models import Tenant
from tools.builtin import NOT_BLANK
from tools.registry import Tool, register

ID = {"type": "string", "pattern": r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"}
CAMPAIGN = {**ID, "description": "The campaign's id (campaign_id)."}
PARTY = {**ID, "description": "The party's id (party_id)."}


def _campaign(tenant: Tenant, args: dict[str, Any]) -> Campaign:
    campaign = campaigns.campaign_get(tenant_id=tenant.pk, slug=args["campaign_id"], field="campaign_id")
    campaigns.require_active(campaign, "reading it through the tools", field="campaign_id")
    return campaign


def session_fetch(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    campaign = _campaign(tenant, args)
    party = campaigns.party_get(campaign=campaign, slug=args["party_id"], field="party_id")
    result = campaigns.session_fetch(campaign, party, k=args.get("k", 2))
    return {**result, "sources": [f"summary:{s['summary_id']}" for s in result["summaries"]]}


register(Tool(
    name="session_fetch",
    description="The party's last episode summaries (newest first) and its current flags.",
    input_schema={"type": "object", "properties": {
        "campaign_id": CAMPAIGN, "party_id": PARTY,
        "k": {"type": "integer", "minimum": 1, "maximum": 20, "default": 2}},
        "required": ["campaign_id", "party_id"], "additionalProperties": False},
    function=session_fetch,
))


def episode_search(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    campaign = _campaign(tenant, args)
    party = campaigns.party_get(campaign=campaign, slug=args["party_id"], field="party_id")
    hits = campaigns.episode_search(campaign, party, args["query"], k=args.get("k"))
    return {"campaign_id": campaign.slug, "party_id": party.slug, "hits": hits,
            "sources": [f"summary:{h['summary_id']}" for h in hits]}


register(Tool(
    name="episode_search",
    description="The party's episode summaries nearest to a question (\"what did Li Shen promise us?\"), "
                "nearest first, whenever they happened; session_fetch gives the last ones instead.",
    input_schema={"type": "object", "properties": {
        "campaign_id": CAMPAIGN, "party_id": PARTY,
        "query": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": NOT_BLANK,
                  "description": "What to look for in the party's past."},
        "k": {"type": "integer", "minimum": 1, "maximum": 20,
              "description": "How many summaries at most (the episode domain's k_vector when absent)."}},
        "required": ["campaign_id", "party_id", "query"], "additionalProperties": False},
    function=episode_search,
))


def npc_profile(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    campaign = _campaign(tenant, args)
    party = campaigns.party_get(campaign=campaign, slug=args["party_id"], field="party_id")
    profile = campaigns.npc_profile(args["npc_id"], party, campaign, hero_id=args.get("hero_id"),
                                    hero_field="hero_id")
    # Once each: one summary may move the dispositions towards the party and a hero.
    return {**profile, "sources": [f"npc:{profile['npc_id']}",
                                   *dict.fromkeys(f"summary:{m['summary_id']}" for m in profile["dynamic"]["memory"])]}


register(Tool(
    name="npc_profile",
    description="An NPC's static profile and its disposition towards one party (party_id:<party>) and towards "
                "each hero of it that has one (hero_id:<hero>), with the summaries that moved them; each of the "
                "latest_changes says when it happened in the game (`at`, its summary's `when`). An unknown "
                "campaign, party, NPC or hero is a `not_found` error naming the argument and the ids it may "
                "have meant.",
    input_schema={"type": "object", "properties": {
        "campaign_id": CAMPAIGN, "party_id": PARTY, "npc_id": {**ID, "description": "The NPC's id."},
        "hero_id": {**ID, "description": "Only this hero (a player id, as the summaries' who.players name it) "
                                         "besides the party; 0 when the NPC has no disposition towards it. A "
                                         "hero the party does not have (none of its summaries names the "
                                         "player) is a `not_found` error naming hero_id."}},
        "required": ["campaign_id", "npc_id", "party_id"], "additionalProperties": False},
    function=npc_profile,
))


def art_suggest(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    campaign = _campaign(tenant, args)
    result = campaigns.art_suggest(campaign, scene_id=args.get("scene_id"), location=args.get("location"),
                                   npcs=args.get("npcs", ()), query=args.get("query"))
    return {**result, "sources": [f"artcard:{c['image_id']}" for c in result["cards"]]}


register(Tool(
    name="art_suggest",
    description="Art cards of a scene (or of a location and NPCs), or found by a description (query), with the "
                "canon markers a new image must keep and the tags to avoid. With both, the scene / location / "
                "NPCs choose the cards and the query orders them, best match first.",
    input_schema={"type": "object", "properties": {
        "campaign_id": CAMPAIGN, "scene_id": ID, "location": ID,
        "npcs": {"type": "array", "items": ID, "maxItems": 10, "uniqueItems": True},
        "query": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": NOT_BLANK,
                  "description": "What the image should show (\"misty bridge at night with the ronin\"): cards "
                                 "ranked by their tags, style, NPCs, places and prompt, by words and meaning."}},
        "required": ["campaign_id"], "additionalProperties": False,
        "anyOf": [{"required": ["scene_id"]}, {"required": ["location"]}, {"required": ["npcs"]},
                  {"required": ["query"]}]},
    function=art_suggest,
))
