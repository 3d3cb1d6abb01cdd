"""Prometheus multiprocess mode: every process writes its metrics to files, `/metrics` merges them.

gunicorn's workers, a Celery worker's pool processes and the process answering a scrape are
different processes; with the default in-memory registry a scrape saw only its own process, so the
LLM, archival and fact counters (counted in the worker) were never exported.

Layout: `METRICS_DIR/<host>-<pid>/`, one directory per process tree, owned by the tree's first
process (the gunicorn master, the Celery worker's main process, `runserver`, a management
command, pytest). The owner sets `PROMETHEUS_MULTIPROC_DIR` before any metric exists, so every
child it forks or spawns writes into the same directory; it empties the directory at start,
removes it when it exits, and removes the directories of dead owners of this host. Each owner
wipes only its own directory, so a restarting web server never wipes a running worker's files
(and the other way round). `/metrics` merges the files of every directory under `METRICS_DIR`:
any web process answers for all of them. In docker-compose the web, worker and beat containers
share `METRICS_DIR` as a volume.

This module imports neither Django nor prometheus_client at import time: `gunicorn.conf.py` loads
it in the master before any worker exists.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import sys
from pathlib import Path

ENV = "PROMETHEUS_MULTIPROC_DIR"
BASE_DIR = Path(__file__).resolve().parent.parent


def metrics_root() -> Path:
    """`METRICS_DIR`, default `<var dir>/prometheus` (the var dir as settings.py finds it)."""
    explicit = os.environ.get("METRICS_DIR", "").strip()
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("MEMORYHUB_VAR_DIR", "").strip() or BASE_DIR / "var") / "prometheus"


def _host() -> str:
    return "".join(c if c.isalnum() or c in "-." else "_" for c in socket.gethostname()) or "host"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def claim(root: Path | None = None) -> Path:
    """Make this process the owner of a fresh metrics directory, unless a parent already is.

    Returns the directory this process writes to."""
    existing = os.environ.get(ENV)
    if existing:
        Path(existing).mkdir(parents=True, exist_ok=True)
        return Path(existing)
    root = root or metrics_root()
    root.mkdir(parents=True, exist_ok=True)
    host, pid = _host(), os.getpid()
    for stale in root.glob(f"{host}-*"):
        owner = stale.name.rpartition("-")[2]
        if owner.isdigit() and int(owner) != pid and not _alive(int(owner)):
            shutil.rmtree(stale, ignore_errors=True)
    own = root / f"{host}-{pid}"
    shutil.rmtree(own, ignore_errors=True)  # a dead process's files under a reused pid
    own.mkdir()
    os.environ[ENV] = str(own)
    _refresh_value_class()
    atexit.register(_release, own, pid)
    return own


def _release(own: Path, owner_pid: int) -> None:
    # Forked children inherit atexit handlers; only the owner removes the directory.
    if os.getpid() == owner_pid:
        shutil.rmtree(own, ignore_errors=True)


def _refresh_value_class() -> None:
    """prometheus_client picks file-backed values at import; if it was imported before the
    variable was set (and no metric exists yet), pick again."""
    values = sys.modules.get("prometheus_client.values")
    if values is not None and not getattr(values.ValueClass, "_multiprocess", False):
        values.ValueClass = values.get_value_class()


def mark_dead(pid: int) -> None:
    """A child process exited (gunicorn `child_exit`, Celery `worker_process_shutdown`): its
    counters stay (they are part of the totals); its live-gauge files go."""
    path = os.environ.get(ENV)
    if path:
        from prometheus_client import multiprocess

        with contextlib.suppress(OSError):
            multiprocess.mark_process_dead(pid, path)


def active() -> bool:
    """Whether this process's metrics go to files (else they live in the default registry)."""
    from prometheus_client import values

    return bool(getattr(values.ValueClass, "_multiprocess", False))
