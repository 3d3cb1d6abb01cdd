from django.urls import re_path

from memoryhub.urls_common import CLIENT_ID
from profiles import api

# Keys may be synonyms in any script ("имя", "姓名"): the service normalises them.
KEY = r"[^/]{1,64}"

urlpatterns = [
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/profile$", api.ProfileGetApi.as_view(), name="profile"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/profile/(?P<key>{KEY})/history$", api.FactHistoryApi.as_view(),
            name="profile-fact-history"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/profile/(?P<key>{KEY})$", api.FactApi.as_view(), name="profile-fact"),
]
