from django.urls import re_path

from memoryhub.urls_common import CLIENT_ID
from people import api

urlpatterns = [
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/people$", api.PersonListApi.as_view(), name="people-list"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/people/search$", api.PeopleSearchApi.as_view(), name="people-search"),
    re_path(rf"^users/(?P<user_id>{CLIENT_ID})/people/(?P<person_id>[0-9]{{1,18}})$", api.PersonDetailApi.as_view(),
            name="person-detail"),
]
