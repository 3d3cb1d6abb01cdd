import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
application = get_wsgi_application()

# runserver and gunicorn both load this module in the process that serves requests.
from memoryhub.beat import start_if_embedded  # noqa: E402

start_if_embedded()
