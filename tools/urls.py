from django.urls import path, re_path

from tools import api

urlpatterns = [
    path("tools", api.ToolListApi.as_view(), name="tools-list"),
    re_path(r"^tools/(?P<name>[a-z][a-z0-9_]{0,63})$", api.ToolCallApi.as_view(), name="tool-call"),
]
