"""Campaign memory API: engine-only writes (campaigns, parties, summaries, NPCs, art cards) and the
scene assembly, which the `tools` scope may also call (seed 003 §8.4.2, §8.6, §8.9); a campaign's
retention settings and its archiving (engine or editor); the engine's report of a turn (§8.10)."""

from __future__ import annotations

from typing import Any

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from lore import selectors as lore_selectors
from lore.api import _actor
from lore.campaigns import selectors, services, turns
from lore.campaigns.models import (
    EPISODE_TTL_DEFAULT_DAYS,
    EPISODE_TTL_MAX_DAYS,
    EPISODE_TTL_MIN_DAYS,
    NPC,
    ArtCard,
    Campaign,
    EpisodicSummary,
    Party,
)
from lore.campaigns.scene import SceneRequest
from lore.campaigns.schemas import openapi_schema
from memoryhub.auth import request_tenant
from memoryhub.models import ApiKey
from memoryhub.openapi import AutoSchema
from memoryhub.validation import (
    ClosedSerializerMixin,
    StrictCharField,
    StrictFloatField,
    StrictIntegerField,
    StrictRegexField,
    has_visible,
    iso_instant,
    query_data,
)

ENGINE = (ApiKey.Scope.ENGINE,)
SCENE_READERS = (ApiKey.Scope.ENGINE, ApiKey.Scope.TOOLS)
# A campaign's retention (its episode period, archiving) is the engine's or an editor's decision.
STEWARDS = (ApiKey.Scope.ENGINE, ApiKey.Scope.EDITOR)
ID = r"^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$"

ERRORS = {
    400: OpenApiResponse(description="Invalid input; `error.fields` maps each JSON path at fault "
                                     "(`/relations_delta/0/delta`) or field to its messages."),
    401: OpenApiResponse(description="No or invalid API key."),
    403: OpenApiResponse(description="The key lacks the scope this operation needs (named in the message)."),
    404: OpenApiResponse(description="Unknown world, campaign, party or NPC (another tenant's is unknown too); "
                                     "`error.fields` names the path."),
}
ARCHIVED_TEXT = ("the campaign is finished and archived (`error.code` archived, `error.fields` names `campaign`): "
                 "it is kept read-only and out of search, scene-context and the tools")
CONFLICT = {409: OpenApiResponse(description=f"The id was recorded with a different body (`error.code` conflict "
                                             f"or exists), or {ARCHIVED_TEXT}.")}
ARCHIVED = {409: OpenApiResponse(description=ARCHIVED_TEXT[0].upper() + ARCHIVED_TEXT[1:] + ".")}
NPC_CONFLICT = {409: OpenApiResponse(description=(
    "The version is older than the stored one (`error.code` stale_version, `error.fields` `/version`, the message "
    "names the stored version), or is the stored one with a different static part (`error.code` conflict: a "
    f"version never changes, post a newer one), or {ARCHIVED_TEXT}."))}
TTL_FIELD = {"min_value": EPISODE_TTL_MIN_DAYS, "max_value": EPISODE_TTL_MAX_DAYS,
             "help_text": f"Days an episode summary stays, counted from when it was recorded; "
                          f"{EPISODE_TTL_MIN_DAYS}–{EPISODE_TTL_MAX_DAYS}."}
FEEDBACK_CONFLICT = {409: OpenApiResponse(description=f"This answer was already reported with other figures "
                                                      f"(`error.code` conflict), or {ARCHIVED_TEXT}.")}

SUMMARY_EXAMPLE = {
    "summary_id": "sum_2025_08_27_0142", "campaign_id": "camp_123", "party_id": "pty_001", "scene_id": "scn_042",
    "when": "2025-08-27T11:42:00Z", "who": {"players": ["p_A", "p_B"], "npcs": ["npc_LiShen"]},
    "where": {"location_id": "loc_moon_bridge", "tags": ["night", "mist"]},
    "what": {"event": "bargain", "outcome": "partial_success",
             "rolls": [{"who": "p_A", "d20": 14, "dc": 12, "effect": "+2 insight"}],
             "loot": [{"item_id": "amulet_moon", "qty": 1}]},
    "flags": {"quest_moon_key": "obtained", "gate_moon_door": "open"},
    "relations_delta": [{"npc_id": "npc_LiShen", "towards": "party", "delta": 1, "reason": "kept promise"}],
    "notes": "Li Shen let them cross after the amulet changed hands.", "version": "1.0.0",
}
SUMMARY_ANSWER_TEXT = (
    "The summary as recorded: `flag_changes` (the party's flags it changed, `previous` null when unset), "
    "`flags_not_applied` (flags it named that a summary later by `when` had already set: the party keeps "
    "`kept`, the value of `set_by`, the latest of them; `reason` later_scene), `disposition_changes` (`towards` "
    "the party or `hero_id:<hero>` as asked, `applied`: the change made within ±GM_DISPOSITION_RANGE), "
    "`chunk_id`, `expired_at`.")
SUMMARY_LATE_ANSWER = {
    "summary_id": "sum_2025_08_20_0900", "campaign_id": "camp_123", "party_id": "pty_001", "chunk_id": 812,
    "expired_at": None, "flag_changes": [],
    "flags_not_applied": [{"key": "gate_moon_door", "value": "closed", "kept": "open", "reason": "later_scene",
                           "set_by": "sum_2025_08_27_0142", "set_by_when": "2025-08-27T11:42:00Z"}],
    "disposition_changes": [{"npc_id": "npc_LiShen", "towards": "party", "delta": -1, "applied": -1,
                             "value_after": 0, "reason": "doubted the promise"}],
}
# Towards the party and, as its own disposition, towards one hero of it (a player of `who.players`).
SUMMARY_HERO_EXAMPLE = {
    **SUMMARY_EXAMPLE, "summary_id": "sum_2025_08_27_0150", "when": "2025-08-27T11:50:00Z",
    "relations_delta": [{"npc_id": "npc_LiShen", "towards": "party", "delta": 1, "reason": "kept promise"},
                        {"npc_id": "npc_LiShen", "towards": "hero_id:p_A", "delta": -1,
                         "reason": "p_A read his lie aloud"}],
}
NPC_PROFILE_ANSWER = {
    "npc_id": "npc_LiShen", "static": {"name": "Li Shen", "archetype": "ronin"}, "version": "1.1.0",
    "dynamic": {"disposition": {"party_id:pty_001": 2, "hero_id:p_A": -1},
                "memory": [{"summary_id": "sum_2025_08_27_0142", "impact": "disposition+1: kept promise"},
                           {"summary_id": "sum_2025_08_27_0150", "impact": "disposition+1: kept promise"},
                           {"summary_id": "sum_2025_08_27_0150",
                            "impact": "disposition-1 towards p_A: p_A read his lie aloud"}]},
    "latest_changes": [
        {"towards": "hero_id:p_A", "summary_id": "sum_2025_08_27_0150", "delta": -1, "applied": -1,
         "value_after": -1, "reason": "p_A read his lie aloud", "at": "2025-08-27T11:50:00Z",
         "recorded_at": "2025-08-27T11:50:02Z", "summary_expired": False},
        {"towards": "party", "summary_id": "sum_2025_08_27_0150", "delta": 1, "applied": 1, "value_after": 2,
         "reason": "kept promise", "at": "2025-08-27T11:50:00Z", "recorded_at": "2025-08-27T11:50:02Z",
         "summary_expired": False},
        {"towards": "party", "summary_id": "sum_2025_08_27_0142", "delta": 1, "applied": 1, "value_after": 1,
         "reason": "kept promise", "at": "2025-08-27T11:42:00Z", "recorded_at": "2025-08-27T11:42:03Z",
         "summary_expired": False}],
}
NPC_EXAMPLE = {
    "npc_id": "npc_LiShen",
    "static": {"name": "Li Shen", "archetype": "ronin", "voice_tts": "asian_male_light_smoke",
               "secrets": ["scar_left_cheek_reason"], "lore_refs": ["lore_ronin_code"]},
    "version": "1.1.0",
}
ARTCARD_EXAMPLE = {
    "image_id": "img_8f3c", "scene_id": "scn_042", "cdn_url": "https://cdn.example.com/img_8f3c.webp",
    "prompt_text": "moonlit bridge, mist, ronin with scar on left cheek",
    "entities": {"npc": ["npc_LiShen"], "location": ["loc_moon_bridge"]},
    "visual_tags": ["moonlight", "mist", "blue-gold", "katana", "scar_left_cheek"],
    "style": {"preset": "ukiyo-e-modern", "seed": 12345}, "moderation": {"safe": True},
    "created_at": "2025-08-27T11:42:05Z",
}


# The NPC write takes the static part only: `dynamic` is derived from summaries and refused here.
NPC_REQUEST_SCHEMA = {**openapi_schema("npc_profile"),
                      "properties": {k: v for k, v in openapi_schema("npc_profile")["properties"].items()
                                     if k != "dynamic"}}


class DocumentSchema(AutoSchema):
    """A document body given as a raw JSON Schema is required (drf-spectacular marks raw schemas
    optional): an empty body is a 400, and the published schema should say so."""

    def _get_request_for_media_type(self, serializer: Any, direction: str = "request") -> tuple[Any, bool]:
        schema, required = super()._get_request_for_media_type(serializer, direction)
        return schema, required or isinstance(serializer, dict)


def _campaign(request: Request, campaign: str) -> Campaign:
    return selectors.campaign_get(tenant_id=request_tenant(request).pk, slug=campaign)


class CampaignSerializer(serializers.Serializer):
    campaign_id = serializers.CharField(source="slug")
    world = serializers.CharField(source="world.slug")
    name = serializers.CharField()
    tone_rules = serializers.CharField()
    episode_ttl_days = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Campaign.Status.choices,
                                     help_text="archived: finished, kept read-only and out of search.")
    archived_at = serializers.DateTimeField(allow_null=True)


class CampaignCreateApi(APIView):
    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        campaign_id = StrictRegexField(ID, help_text="The documents' campaign_id; unique per tenant.")
        name = StrictCharField(max_length=200, required=False, default="")
        tone_rules = StrictCharField(max_length=4000, required=False, default="", allow_blank=True,
                                     help_text="The scene's system block; empty: config's default tone.")
        episode_ttl_days = StrictIntegerField(required=False, default=EPISODE_TTL_DEFAULT_DAYS, **TTL_FIELD)

    @extend_schema(operation_id="campaign_create", request=InputSerializer,
                   responses={201: CampaignSerializer,
                              409: OpenApiResponse(description="A campaign with this id exists (`error.code` exists)."),
                              **ERRORS},
                   examples=[OpenApiExample("A campaign", request_only=True,
                                            value={"campaign_id": "camp_123", "name": "Moon Bridge"})])
    def post(self, request: Request, world: str) -> Response:
        found = lore_selectors.world_get(tenant_id=request_tenant(request).pk, slug=world)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        campaign = services.campaign_create(tenant=request_tenant(request), world=found, slug=data["campaign_id"],
                                            name=data["name"], tone_rules=data["tone_rules"],
                                            episode_ttl_days=data["episode_ttl_days"])
        return Response(CampaignSerializer(campaign).data, status=status.HTTP_201_CREATED)


class CampaignApi(APIView):
    """A campaign's settings: read them, or change how long its episode summaries live. A shorter
    period expires the summaries now past it at the retention beat's next run (hourly). Or delete the
    campaign with all its memory."""

    required_scopes = STEWARDS

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        """The settings to change."""

        # A PATCH body's fields are optional in the schema; this one is the only one, so it is needed.
        min_properties = 1
        episode_ttl_days = StrictIntegerField(**TTL_FIELD)

    @extend_schema(operation_id="campaign_get", responses={200: CampaignSerializer, **ERRORS})
    def get(self, request: Request, campaign: str) -> Response:
        return Response(CampaignSerializer(_campaign(request, campaign)).data)

    @extend_schema(operation_id="campaign_update", request=InputSerializer,
                   responses={200: CampaignSerializer, **ARCHIVED, **ERRORS},
                   examples=[OpenApiExample("Keep summaries 150 days", request_only=True,
                                            value={"episode_ttl_days": 150})])
    def patch(self, request: Request, campaign: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        updated = services.campaign_update(campaign=found, actor=_actor(request),
                                           episode_ttl_days=serializer.validated_data["episode_ttl_days"])
        return Response(CampaignSerializer(updated).data)

    @extend_schema(
        operation_id="campaign_delete", request=None,
        description="Delete the campaign and everything MemoryHub holds of it, at once and for good: its episodic "
                    "summaries and their `episode` chunks (search, episode search, scene-context and the tools never "
                    "return them again), parties, flags and their history, NPCs, dispositions and their history, "
                    "art cards, scene records (`assembly_id`s), its audit events, the admin's log entries of those "
                    "rows and the tools' call log about it. An archived campaign can be deleted too. What remains "
                    "is a receipt (admin: *Campaign deletions*): the campaign id, who deleted it, when, and the "
                    "count of each kind, none of its content. Afterwards every read and write of the campaign is a "
                    "404, and its id can be created again, empty. A write that raced the deletion either committed "
                    "first and was deleted with the rest, or is a 404.",
        responses={204: OpenApiResponse(description="Deleted: nothing to return."),
                   404: OpenApiResponse(response=OpenApiTypes.OBJECT, description=(
                       "No such campaign (another tenant's is unknown too), or it was deleted already."),
                       examples=[OpenApiExample("Unknown campaign", response_only=True, status_codes=["404"], value={
                           "error": {"code": "not_found", "message": "No campaign 'camp_123'.",
                                     "fields": {"campaign": ["No campaign 'camp_123'."]}}})]),
                   **{code: response for code, response in ERRORS.items() if code in (401, 403)}})
    def delete(self, request: Request, campaign: str) -> Response:
        services.campaign_delete(campaign=_campaign(request, campaign), actor=_actor(request))
        return Response(status=status.HTTP_204_NO_CONTENT)


class CampaignArchiveApi(APIView):
    """Finish a campaign: it is kept (summaries, parties, flags, NPCs, dispositions and their history,
    art cards) but read-only from now on, and out of search: its episode chunks are deleted, and
    scene-context, the tools and every write answer 409 `archived`. Archiving an archived campaign
    answers 200 and changes nothing. Episode summaries still expire after the campaign's period."""

    required_scopes = STEWARDS

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        """Why the campaign is finished (kept in its audit)."""

        reason = StrictCharField(max_length=500, required=False, default="", allow_blank=True)

    class OutputSerializer(CampaignSerializer):
        archived_now = serializers.BooleanField(help_text="false: it was archived already.")
        episode_chunks_deleted = serializers.IntegerField()

    @extend_schema(operation_id="campaign_archive", request=InputSerializer,
                   responses={200: OutputSerializer, **ERRORS},
                   examples=[OpenApiExample("Finished", request_only=True, value={"reason": "the party won"})])
    def post(self, request: Request, campaign: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        result = services.campaign_archive(campaign=found, actor=_actor(request),
                                           reason=serializer.validated_data["reason"])
        body = {**CampaignSerializer(result.campaign).data, "archived_now": result.archived,
                "episode_chunks_deleted": result.chunks_deleted}
        return Response(body)


class PartyCreateApi(APIView):
    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        party_id = StrictRegexField(ID)
        name = StrictCharField(max_length=200, required=False, default="")

    class OutputSerializer(serializers.Serializer):
        party_id = serializers.CharField(source="slug")
        name = serializers.CharField()
        flags = serializers.DictField(child=serializers.CharField())

    @extend_schema(operation_id="campaign_party_create", request=InputSerializer,
                   responses={201: OutputSerializer, **CONFLICT, **ERRORS})
    def post(self, request: Request, campaign: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        party: Party = services.party_create(campaign=found, slug=serializer.validated_data["party_id"],
                                             name=serializer.validated_data["name"])
        return Response(self.OutputSerializer(party).data, status=status.HTTP_201_CREATED)


def _document(request: Request) -> Any:
    # The document is checked against its JSON Schema by the service (every path at fault named).
    return request.data


def _summary_answer(summary: EpisodicSummary) -> dict[str, Any]:
    """Built from the summary's own rows, so a replay answers exactly as the first write did."""
    flag_changes = list(summary.flag_changes.order_by("id").select_related("superseded_by"))
    return {
        "summary_id": summary.summary_id,
        "campaign_id": summary.campaign.slug,
        "party_id": summary.party.slug,
        "chunk_id": summary.chunk_id,
        # Set once the summary passed its campaign's period: its chunk is gone (a replay says so).
        "expired_at": summary.expired_at,
        "flag_changes": [{"key": c.key, "value": c.value, "previous": c.previous or None}
                         for c in flag_changes if c.applied],
        # A summary older (by `when`) than one that already named a flag leaves the flag as that one set it.
        "flags_not_applied": [{"key": c.key, "value": c.value, "kept": c.previous or None, "reason": "later_scene",
                               "set_by": c.superseded_by.summary_id if c.superseded_by else None,
                               "set_by_when": iso_instant(c.superseded_by.when) if c.superseded_by else None}
                              for c in flag_changes if not c.applied],
        "disposition_changes": [{"npc_id": c.disposition.npc.npc_id, "towards": c.disposition.towards,
                                 "delta": c.delta, "applied": c.applied, "value_after": c.value_after,
                                 "reason": c.reason}
                                for c in summary.disposition_changes.order_by("id").select_related("disposition__npc")],
    }


class SummaryRecordApi(APIView):
    """Record an episodic summary after a turn or on an event. Idempotent by
    `summary_id`: the same body answers 200 with the first answer; another body is a 409. Flags,
    disposition changes (`relations_delta`, towards the party or one hero of it, bounded by
    GM_DISPOSITION_MAX_DELTA, of the NPCs in the scene's `who.npcs` only; a delta of 0 is not recorded) and
    the `episode` chunk commit together. A flag holds the value of the
    latest summary by `when` that named it: a summary older than one that already did (a late retry) is
    recorded, but leaves that flag as it is (`flags_not_applied`); its dispositions, which are deltas,
    still move."""

    required_scopes = ENGINE
    schema = DocumentSchema()

    @extend_schema(operation_id="campaign_summary_record",
                   request={"application/json": openapi_schema("episodic_summary")},
                   description="Body: a document of `schemas/episodic_summary.schema.json`. Besides the schema: "
                               "`campaign_id` is the path's campaign, `notes` at most GM_NOTES_MAX_TOKENS "
                               "tokens, each NPC's `delta`s towards the party, or towards one hero, together within "
                               "±GM_DISPOSITION_MAX_DELTA, a hero of `towards` (`hero_id:p_A`) one of `who.players` "
                               "(400 `unknown_hero`), flag names letters, digits and _ . : -; the party and the NPCs "
                               "must exist (404). A summary moves the dispositions of its scene's NPCs only: a "
                               "`relations_delta` item's `npc_id` not in `who.npcs` is a 400 `npc_not_in_scene` on "
                               "`/relations_delta/<i>/npc_id` naming the NPC, and nothing is recorded. A `delta` of "
                               "0 changes nothing and is not recorded: no `disposition_changes` entry, no history "
                               "row, no disposition started for it.",
                   responses={201: OpenApiResponse(OpenApiTypes.OBJECT, description=SUMMARY_ANSWER_TEXT),
                              200: OpenApiResponse(description="A replay: the first answer."),
                              **CONFLICT, **ERRORS},
                   examples=[OpenApiExample("A summary", request_only=True, value=SUMMARY_EXAMPLE),
                             OpenApiExample("A summary moving a disposition towards one hero", request_only=True,
                                            value=SUMMARY_HERO_EXAMPLE),
                             OpenApiExample("A late summary of an older scene", response_only=True,
                                            status_codes=["201"], value=SUMMARY_LATE_ANSWER)])
    def post(self, request: Request, campaign: str) -> Response:
        result = services.summary_record(campaign=_campaign(request, campaign), document=_document(request))
        return Response(_summary_answer(result.summary),
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)


class NpcUpsertApi(APIView):
    """Create or replace an NPC's static part, by its SemVer `version`: a newer version replaces it
    (200), the same version with the same static part is a replay (200, unchanged), an older version or
    the same one with another static part is a 409. `dynamic` is refused: dispositions change only
    through summaries."""

    required_scopes = ENGINE
    schema = DocumentSchema()

    @extend_schema(operation_id="campaign_npc_upsert", request={"application/json": NPC_REQUEST_SCHEMA},
                   description="Body: a document of `schemas/npc_profile.schema.json` without `dynamic` "
                               "(read-only: changed only by summaries).",
                   responses={201: OpenApiResponse(OpenApiTypes.OBJECT, description="Created."),
                              200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
                                  "Replaced by a newer version, or a replay of the stored version (unchanged).")),
                              **NPC_CONFLICT, **ERRORS},
                   examples=[OpenApiExample("An NPC", request_only=True, value=NPC_EXAMPLE)])
    def post(self, request: Request, campaign: str) -> Response:
        found = _campaign(request, campaign)
        npc: NPC
        npc, created = services.npc_upsert(campaign=found, document=_document(request))
        body = {"npc_id": npc.npc_id, "static": npc.static, "version": npc.version}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class NpcDetailApi(APIView):
    """An NPC as MemoryHub holds it: its static part and, towards one party and each hero of it that has
    one, the disposition the summaries made (clamped to the range) with the changes that moved it. An
    engine-only key could read it only through the `tools` scope's npc_profile."""

    required_scopes = (*STEWARDS, ApiKey.Scope.TOOLS)

    class QuerySerializer(ClosedSerializerMixin, serializers.Serializer):
        party = StrictRegexField(ID, help_text="The party whose disposition and memory to show.")
        hero = StrictRegexField(ID, required=False, help_text=(
            "Only this hero of the party (a player id, `p_A`) besides the party: its disposition (0 when none) "
            "and the changes that moved it; a hero the party does not have (no summary names it, no NPC holds a "
            "disposition towards it) is a 404 naming `hero`. Left out: every hero that has a disposition."))

    @extend_schema(operation_id="campaign_npc_get", parameters=[QuerySerializer],
                   responses={200: OpenApiResponse(OpenApiTypes.OBJECT, description=(
                       "The seed's profile: `dynamic.disposition` towards the party (`party_id:<party>`) and "
                       "towards heroes (`hero_id:<hero>`); `latest_changes`, the last 3 changes of each, newest "
                       "recorded first, each saying `towards` whom (`party` or `hero_id:<hero>`), `at` (the game's "
                       "time: its summary's `when`) and `recorded_at` (when MemoryHub recorded it, the order "
                       "`value_after` follows).")), **ERRORS},
                   examples=[OpenApiExample("Towards the party and one hero", response_only=True,
                                            status_codes=["200"], value=NPC_PROFILE_ANSWER)])
    def get(self, request: Request, campaign: str, npc_id: str) -> Response:
        query = self.QuerySerializer(data=query_data(request.query_params))
        query.is_valid(raise_exception=True)
        found = _campaign(request, campaign)
        party = selectors.party_get(campaign=found, slug=query.validated_data["party"])
        return Response(selectors.npc_profile(npc_id, party, found, hero_id=query.validated_data.get("hero")))


class ArtCardRecordApi(APIView):
    """Record an image's art card; idempotent by `image_id`."""

    required_scopes = ENGINE
    schema = DocumentSchema()

    @extend_schema(operation_id="campaign_artcard_record", request={"application/json": openapi_schema("artcard")},
                   description="Body: a document of `schemas/artcard.schema.json`. Without `visual_tags`, MemoryHub "
                               "writes them (seed §8.8): phrases of `prompt_text` at once, broken at function words "
                               "and verbs, Russian in the nominative (\"замок на холме у моря\" → замок, холм, море), "
                               "a model's 5–8 later when an LLM is configured (`tags_pending`). A `prompt_text` "
                               "with no word to derive a tag from (function words, punctuation, symbols only) and "
                               "no `visual_tags` is a 400 `visual_tags_required` on `/visual_tags`; a posted tag of "
                               "blanks one on `/visual_tags/<i>`: a card always has tags. The answer: the document "
                               "with `visual_tags` as they stand, `tags_source` (engine | derived | model) and "
                               "`tags_pending`.",
                   responses={201: OpenApiTypes.OBJECT, 200: OpenApiTypes.OBJECT, **CONFLICT, **ERRORS},
                   examples=[OpenApiExample("An art card", request_only=True, value=ARTCARD_EXAMPLE)])
    def post(self, request: Request, campaign: str) -> Response:
        card: ArtCard
        card, created = services.artcard_record(campaign=_campaign(request, campaign), document=_document(request))
        # The card's tags as they stand (a card posted without them has words of its prompt now, a model's later
        # when `tags_pending`), and where they came from: engine | derived | model.
        body = {**card.document, "visual_tags": card.visual_tags, "tags_source": card.tags_source,
                "tags_pending": card.tags_pending}
        return Response(body, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK)


class SceneBlockSerializer(serializers.Serializer):
    name = serializers.ChoiceField(choices=["system", "rules", "lore", "episode", "npc", "art", "user"])
    tokens = serializers.IntegerField()
    budget = serializers.IntegerField(allow_null=True, help_text="null: the player's input goes as is.")
    items = serializers.ListField(child=serializers.DictField(),
                                  help_text="source, tokens, text; retrieved items (rules, lore) also `ranks`: "
                                            "`fused` (their place in the search) and each component's (`bm25`, "
                                            "`vector`), 1-based.")


class SceneContextApi(APIView):
    """Assemble a scene's prompt context within `config/prompt_budgets.yaml`."""

    required_scopes = SCENE_READERS

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        party = StrictRegexField(ID)
        location = StrictRegexField(ID, required=False, default="")
        npcs = serializers.ListField(child=StrictRegexField(ID), required=False, default=list, max_length=10)
        scene_text = StrictCharField(max_length=4000, required=False, default="", allow_blank=True)
        # Not refused when blank: seed 003 §8.6 assembles every scene, and its user block is the player's input
        # or the party's choice, so a scene may have no player line (an opening, a cut to another place). An
        # engine that always sends the key sends "" then, and it means what leaving it out means.
        user_input = StrictCharField(max_length=2000, required=False, default="", allow_blank=True,
                                     help_text="The player's words this turn, as they are. Empty, only spaces or "
                                               "zero-width characters, or left out: a scene without a player line "
                                               "(an opening, a cut to another place): no user block, and no rule "
                                               "is looked up; not a 400.")

        def validate_user_input(self, value: str) -> str:
            # Spaces are trimmed to "" already; "\u200b" alone passed as a player line of nothing, a user block
            # the model could not read.
            return value if has_visible(value) else ""

    class OutputSerializer(serializers.Serializer):
        assembly_id = serializers.IntegerField(allow_null=True, help_text=(
            "This answer's record: report the turn's used sources to `…/scene-context/{assembly_id}/feedback`. "
            "Null for a key without the `engine` scope (the LLM's `tools` key only reads: nothing is recorded)."))
        campaign = serializers.CharField()
        party = serializers.CharField()
        blocks = SceneBlockSerializer(many=True,
                                      help_text="system, rules, lore, episode, npc, art, user; with token counts.")
        tokens = serializers.DictField(child=serializers.IntegerField())
        rules_needed = serializers.BooleanField()
        rules_trigger = serializers.CharField(allow_null=True)
        degraded = serializers.BooleanField(help_text="No lore retrieved: SRD and engine state only.")
        notes = serializers.ListField(child=serializers.CharField())
        cut = serializers.ListField(child=serializers.DictField(), help_text="What did not fit, and why.")
        art = serializers.DictField()
        prompt = serializers.CharField()
        took_ms = serializers.FloatField()

    @extend_schema(operation_id="campaign_scene_context", request=InputSerializer,
                   responses={200: OutputSerializer, **ARCHIVED, **ERRORS},
                   examples=[
                       OpenApiExample("A scene", request_only=True, value={
                           "party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
                           "scene_text": "Mist on the moon bridge.", "user_input": "I roll insight on Li Shen."}),
                       OpenApiExample("A scene's opening, before any player speaks", request_only=True, value={
                           "party": "pty_001", "location": "loc_moon_bridge", "npcs": ["npc_LiShen"],
                           "scene_text": "The party reaches the moon bridge at dusk.", "user_input": ""})])
    def post(self, request: Request, campaign: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        return Response(turns.scene_context_record(
            campaign=found, request=SceneRequest(**serializer.validated_data),
            record=ApiKey.Scope.ENGINE in request.user.api_key.scopes))


class EngineUsageSerializer(ClosedSerializerMixin, serializers.Serializer):
    """The game master's LLM call of the turn, as the engine counted it."""

    model = StrictCharField(max_length=100)
    prompt_tokens = StrictIntegerField(min_value=0, max_value=10_000_000)
    completion_tokens = StrictIntegerField(min_value=0, max_value=10_000_000)
    cost_usd = StrictFloatField(min_value=0, max_value=1000, required=False,
                                help_text="Omitted: priced by LLM_PRICES when the model is there.")


class SceneFeedbackApi(APIView):
    """Report a turn: which of the sources a scene-context answer returned the
    narration used (`used`, the items' `source` refs) and, optionally, the game master's LLM
    usage for the turn. Once per answer: the same report again answers 200 with the same figures,
    another one is a 409. Feeds the retrieval hit-rate, the fusion gain and the cost per turn."""

    required_scopes = ENGINE

    class InputSerializer(ClosedSerializerMixin, serializers.Serializer):
        """The turn's report."""

        used = serializers.ListField(child=StrictCharField(max_length=400), max_length=100,
                                     help_text="Source refs of the answer's items the narration used; [] for none.")
        llm_usage = EngineUsageSerializer(required=False, help_text="The game master's LLM call of this turn.")

    @extend_schema(operation_id="campaign_scene_feedback", request=InputSerializer,
                   responses={201: OpenApiTypes.OBJECT, 200: OpenApiResponse(description="A replay: the same figures."),
                              **FEEDBACK_CONFLICT, **ERRORS},
                   examples=[OpenApiExample("A turn", request_only=True, value={
                       "used": ["lore:MoonValley/moon-valley/li-shen-the-ronin-of-the-bridge@1.0.0", "npc:npc_LiShen"],
                       "llm_usage": {"model": "gpt-4o-mini", "prompt_tokens": 1450, "completion_tokens": 180}})])
    def post(self, request: Request, campaign: str, assembly_id: str) -> Response:
        found = _campaign(request, campaign)
        serializer = self.InputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        usage = turns.EngineUsage(**data["llm_usage"]) if data.get("llm_usage") else None
        result = turns.scene_feedback_record(campaign=found, assembly_id=int(assembly_id), used=data["used"],
                                             usage=usage)
        return Response(turns.feedback_summary(result.assembly),
                        status=status.HTTP_201_CREATED if result.created else status.HTTP_200_OK)
