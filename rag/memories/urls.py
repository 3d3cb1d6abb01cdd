from django.urls import re_path

from memoryhub.urls_common import CLIENT_ID
from rag.memories import api

UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"

urlpatterns = [
    re_path(rf"^characters/(?P<conf_uid>{CLIENT_ID})/memories$", api.CharacterMemoriesApi.as_view(),
            name="character-memories"),
    re_path(rf"^characters/(?P<conf_uid>{CLIENT_ID})/memories/(?P<memory_id>{UUID})$",
            api.CharacterMemoryApi.as_view(), name="character-memory"),
    re_path(rf"^characters/(?P<conf_uid>{CLIENT_ID})/mood$", api.CharacterMoodApi.as_view(), name="character-mood"),
]
