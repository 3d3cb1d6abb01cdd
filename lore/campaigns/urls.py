from django.urls import re_path

from lore.campaigns import api, threads_api

WORLD = r"(?P<world>[a-z0-9][a-z0-9-]{0,63})"
CAMPAIGN = r"(?P<campaign>[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})"
THREAD = r"(?P<thread_id>[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})"
CHECKPOINT = r"(?P<checkpoint_id>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})"

urlpatterns = [
    re_path(rf"^worlds/{WORLD}/campaigns$", api.CampaignCreateApi.as_view(), name="campaign-create"),
    re_path(rf"^campaigns/{CAMPAIGN}$", api.CampaignApi.as_view(), name="campaign"),
    re_path(rf"^campaigns/{CAMPAIGN}/archive$", api.CampaignArchiveApi.as_view(), name="campaign-archive"),
    re_path(rf"^campaigns/{CAMPAIGN}/parties$", api.PartyCreateApi.as_view(), name="campaign-parties"),
    re_path(rf"^campaigns/{CAMPAIGN}/summaries$", api.SummaryRecordApi.as_view(), name="campaign-summaries"),
    re_path(rf"^campaigns/{CAMPAIGN}/npcs$", api.NpcUpsertApi.as_view(), name="campaign-npcs"),
    re_path(rf"^campaigns/{CAMPAIGN}/npcs/(?P<npc_id>[A-Za-z0-9][A-Za-z0-9_.:-]{{0,63}})$", api.NpcDetailApi.as_view(),
            name="campaign-npc"),
    re_path(rf"^campaigns/{CAMPAIGN}/artcards$", api.ArtCardRecordApi.as_view(), name="campaign-artcards"),
    re_path(rf"^campaigns/{CAMPAIGN}/scene-context$", api.SceneContextApi.as_view(), name="campaign-scene-context"),
    re_path(rf"^campaigns/{CAMPAIGN}/scene-context/(?P<assembly_id>[0-9]{{1,18}})/feedback$",
            api.SceneFeedbackApi.as_view(), name="campaign-scene-feedback"),
    # The short-term layer: thread state with checkpoints (lore/campaigns/threads.py).
    re_path(rf"^campaigns/{CAMPAIGN}/threads/{THREAD}$", threads_api.ThreadApi.as_view(), name="campaign-thread"),
    re_path(rf"^campaigns/{CAMPAIGN}/threads/{THREAD}/checkpoints$", threads_api.CheckpointCreateApi.as_view(),
            name="campaign-thread-checkpoints"),
    re_path(rf"^campaigns/{CAMPAIGN}/threads/{THREAD}/checkpoints/{CHECKPOINT}$", threads_api.CheckpointApi.as_view(),
            name="campaign-thread-checkpoint"),
    re_path(rf"^campaigns/{CAMPAIGN}/threads/{THREAD}/checkpoints/{CHECKPOINT}/writes$",
            threads_api.CheckpointWritesApi.as_view(), name="campaign-thread-checkpoint-writes"),
]
