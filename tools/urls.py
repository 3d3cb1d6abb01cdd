from django.urls import path, re_path

from tools import api, registry

# Apps register their tools in ready(), before urls are imported: each registered tool has a route.
urlpatterns = [
    path("tools", api.ToolListApi.as_view(), name="tools-list"),
    *[path(f"tools/{tool.name}", api.tool_view(tool), name=f"tool-{tool.name}") for tool in registry.tools_all()],
    re_path(r"^tools/(?P<name>[a-z][a-z0-9_]{0,63})$", api.ToolCallApi.as_view(), name="tool-call"),
]
