"""The Celery app. With `REDIS_URL` unset, tasks run in-process (eager), so no broker is needed."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")

app = Celery("memoryhub")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
