from django.contrib import admin
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from memoryhub import api, review_api, views
from memoryhub.urls_common import CLIENT_ID

# Any queue name reaches the view, which answers an unknown one with a 404 naming the queues.
REVIEW_QUEUE = r"(?P<queue>[a-z0-9_]{1,64})"
REVIEW_ITEM = r"(?P<item_id>\d{1,18})"

kernel_api = [
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/sessions/(?P<session_id>{CLIENT_ID})/messages$",
            api.SessionMessagesApi.as_view(), name="session-messages"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/sessions/(?P<session_id>{CLIENT_ID})/extract$",
            api.SessionExtractApi.as_view(), name="session-extract"),
    path("jobs/<int:job_id>", api.JobDetailApi.as_view(), name="job-detail"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/sessions$", api.UserSessionsApi.as_view(), name="user-sessions"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})$", api.UserEraseApi.as_view(), name="user-erase"),
    path("review", review_api.ReviewQueuesApi.as_view(), name="review-queues"),
    re_path(rf"^review/{REVIEW_QUEUE}$", review_api.ReviewItemsApi.as_view(), name="review-items"),
    re_path(rf"^review/{REVIEW_QUEUE}/{REVIEW_ITEM}$", review_api.ReviewItemApi.as_view(), name="review-item"),
    re_path(rf"^review/{REVIEW_QUEUE}/{REVIEW_ITEM}/approve$", review_api.ReviewApproveApi.as_view(),
            name="review-approve"),
    re_path(rf"^review/{REVIEW_QUEUE}/{REVIEW_ITEM}/reject$", review_api.ReviewRejectApi.as_view(),
            name="review-reject"),
    re_path(rf"^review/{REVIEW_QUEUE}/{REVIEW_ITEM}/undo$", review_api.ReviewUndoApi.as_view(), name="review-undo"),
]

urlpatterns = [
    # Apps are included by name, so the kernel imports none of them.
    path("api/v1/", include(kernel_api)),
    path("api/v1/", include("rag.urls")),
    path("api/v1/", include("profiles.urls")),
    path("api/v1/", include("people.urls")),
    path("api/v1/", include("lore.urls")),
    path("api/v1/", include("lore.campaigns.urls")),
    path("api/v1/", include("tools.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("admin/", admin.site.urls),
    path("", views.landing, name="landing"),
    path("api/", views.landing, name="api-landing"),
    path("healthz", views.healthz, name="healthz"),
    path("metrics", views.metrics_view, name="metrics"),
]

handler400 = "memoryhub.exceptions.json_400"
handler404 = "memoryhub.exceptions.json_404"
handler500 = "memoryhub.exceptions.json_500"
