from django.urls import path, re_path

from lore import api, edits_api

WORLD = r"(?P<world>[a-z0-9][a-z0-9-]{0,63})"
DOMAIN = r"(?P<domain>srd|lore)"

urlpatterns = [
    path("worlds", api.WorldCreateApi.as_view(), name="world-create"),
    re_path(rf"^worlds/{WORLD}/versions$", api.WorldVersionsApi.as_view(), name="world-versions"),
    re_path(rf"^worlds/{WORLD}/sources$", api.SourceUploadApi.as_view(), name="world-sources"),
    re_path(rf"^worlds/{WORLD}/builds/(?P<build_id>\d{{1,18}})$", api.BuildDetailApi.as_view(), name="world-build"),
    re_path(rf"^worlds/{WORLD}/search$", api.KnowledgeSearchApi.as_view(), name="world-search"),
    re_path(rf"^worlds/{WORLD}/domains/{DOMAIN}/versions/(?P<version>\d+\.\d+\.\d+)/smoke$",
            api.VersionSmokeApi.as_view(), name="world-version-smoke"),
    re_path(rf"^worlds/{WORLD}/domains/{DOMAIN}/golden$", api.GoldenSetApi.as_view(), name="world-golden"),
    re_path(rf"^worlds/{WORLD}/domains/{DOMAIN}/publish$", api.VersionPublishApi.as_view(), name="world-publish"),
    re_path(rf"^worlds/{WORLD}/domains/{DOMAIN}/rollback$", api.VersionRollbackApi.as_view(), name="world-rollback"),
    re_path(rf"^worlds/{WORLD}/domains/{DOMAIN}/canary$", api.CanaryApi.as_view(), name="world-canary"),
    re_path(rf"^worlds/{WORLD}/edits$", edits_api.EditListProposeApi.as_view(), name="world-edits"),
    re_path(rf"^worlds/{WORLD}/edits/(?P<edit_id>\d{{1,18}})$", edits_api.EditDetailApi.as_view(), name="world-edit"),
    re_path(rf"^worlds/{WORLD}/edits/(?P<edit_id>\d{{1,18}})/approve$", edits_api.EditApproveApi.as_view(),
            name="world-edit-approve"),
    re_path(rf"^worlds/{WORLD}/edits/(?P<edit_id>\d{{1,18}})/reject$", edits_api.EditRejectApi.as_view(),
            name="world-edit-reject"),
]
