from django.urls import include, path, re_path

from memoryhub.urls_common import CLIENT_ID
from rag import api

urlpatterns = [
    path("search", api.SearchApi.as_view(), name="search"),
    path("context", api.ContextApi.as_view(), name="context"),
    path("chat", api.ChatApi.as_view(), name="chat"),
    path("documents", api.TenantDocumentCreateApi.as_view(), name="tenant-documents"),
    path("documents/<int:document_id>", api.DocumentDetailApi.as_view(), name="document-detail"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/documents$", api.UserDocumentCreateApi.as_view(), name="user-documents"),
    path("", include("rag.memories.urls")),
]
