"""`manage.py backup` / `restore`: after a restore, search gives the same results as before."""

from __future__ import annotations

import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from memoryhub import backup, services
from memoryhub.models import Message
from memoryhub.settings import secret_key_file
from profiles.models import UserProfile
from rag import index as bm25_index
from rag import selectors
from tests.factories import append_messages

START = datetime(2024, 3, 1, 9, 0, tzinfo=UTC)


def found(tenant, query: str) -> list[tuple[int, str]]:
    result = selectors.chunks_search(tenant_id=tenant.pk, user_id="u1", query=query)
    return [(item.chunk["id"], item.chunk["text"]) for item in result.items]


@pytest.mark.django_db(transaction=True)
def test_restore_brings_back_the_data_and_the_same_search_results(tenant, settings, tmp_path) -> None:
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    (settings.VAR_DIR / "secret_key").write_text("s3cret\n")
    append_messages(tenant, "u1", "s1", ["My name is Anna and I live in Lisbon.", "We adopted a cat named Miso."],
                    start=START, auto_extract=True)
    before = found(tenant, "where does Anna live")
    facts = sorted(UserProfile.objects.filter(tenant=tenant).values_list("key", "value"))
    assert before and facts

    out = io.StringIO()
    call_command("backup", "--output", str(tmp_path / "backups"), stdout=out)
    [backup_dir] = list((tmp_path / "backups").iterdir())
    assert "backup written to" in out.getvalue() and (backup_dir / "database.dump").stat().st_size > 0
    assert oct(backup_dir.stat().st_mode & 0o777) == "0o700"

    services.user_erase(tenant=tenant, user_id="u1")
    (settings.VAR_DIR / "secret_key").unlink()
    bm25_index.clear()
    assert found(tenant, "where does Anna live") == []

    call_command("restore", str(backup_dir), "--yes", stdout=io.StringIO())
    bm25_index.clear()  # a restarted service starts with no cached index
    assert found(tenant, "where does Anna live") == before
    assert sorted(UserProfile.objects.filter(tenant=tenant).values_list("key", "value")) == facts
    assert Message.objects.filter(tenant=tenant, user_id="u1").count() == 2
    assert (settings.VAR_DIR / "secret_key").read_text() == "s3cret\n"


def test_restore_refuses_a_directory_that_is_no_backup(tmp_path: Path) -> None:
    with pytest.raises(CommandError, match="is not a MemoryHub backup"):
        call_command("restore", str(tmp_path), "--yes")


@pytest.mark.django_db
def test_a_backup_is_owner_only_while_it_is_written_and_after(settings, tmp_path, monkeypatch) -> None:
    settings.VAR_DIR = tmp_path / "var"
    settings.VAR_DIR.mkdir()
    (settings.VAR_DIR / "secret_key").write_text("s3cret\n")
    (settings.VAR_DIR / "secret_key").chmod(0o644)  # as versions before 0600 wrote it
    modes_while_dumping = []
    real_run = backup._run

    def run(command: list[str], env: dict[str, str]) -> None:
        modes_while_dumping.append(Path(command[command.index("--file") + 1]).parent.stat().st_mode & 0o777)
        real_run(command, env)

    monkeypatch.setattr(backup, "_run", run)
    result = backup.backup(tmp_path / "backups")
    assert modes_while_dumping == [0o700]  # nobody else could list or read the dump being written
    assert result.path.stat().st_mode & 0o777 == 0o700
    modes = {p.name: p.stat().st_mode & 0o777 for p in result.path.iterdir()}
    assert modes == {"database.dump": 0o600, "manifest.json": 0o600, "secret_key": 0o600}


def test_the_generated_secret_key_is_for_its_owner_only(tmp_path) -> None:
    path = tmp_path / "var" / "secret_key"
    key = secret_key_file(path)
    assert len(key) >= 50 and path.stat().st_mode & 0o777 == 0o600
    assert secret_key_file(path) == key  # kept across restarts
    assert [p.name for p in path.parent.iterdir()] == ["secret_key"]  # no draft left behind
    path.chmod(0o644)  # written so by an earlier version
    assert secret_key_file(path) == key and path.stat().st_mode & 0o777 == 0o600


def _looks_like_a_backup(path: Path) -> None:
    (path / "manifest.json").write_text('{"created_at": "2026-01-02T03:04:05+00:00", "database": "memoryhub"}')
    (path / "database.dump").write_bytes(b"")


def test_restore_with_nobody_to_confirm_is_refused_with_a_message(tmp_path: Path, monkeypatch) -> None:
    _looks_like_a_backup(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))  # a script or cron job: stdin at its end
    with pytest.raises(CommandError, match="pass --yes"):
        call_command("restore", str(tmp_path))


def test_restore_says_a_directory_is_no_backup_before_asking(tmp_path: Path, monkeypatch) -> None:
    asked = []
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "yes")
    with pytest.raises(CommandError, match="is not a MemoryHub backup"):
        call_command("restore", str(tmp_path))
    assert asked == []
    _looks_like_a_backup(tmp_path)
    monkeypatch.setattr("builtins.input", lambda prompt: asked.append(prompt) or "no")
    with pytest.raises(CommandError, match="Restore cancelled"):
        call_command("restore", str(tmp_path))
    assert asked == [f"Replace everything in the database with {tmp_path} (database 'memoryhub' as of "
                     "2026-01-02T03:04:05+00:00)? Type 'yes': "]


@pytest.mark.django_db
def test_a_backup_that_cannot_be_written_is_a_message_and_leaves_nothing(settings, tmp_path, monkeypatch) -> None:
    settings.VAR_DIR = tmp_path / "var"
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    with pytest.raises(CommandError, match="cannot create"):
        call_command("backup", "--output", str(blocked / "backups"), stdout=io.StringIO())

    def dump_fails(command: list[str], env: dict[str, str]) -> None:
        Path(command[command.index("--file") + 1]).write_bytes(b"PGDMP half")
        raise backup.BackupError("pg_dump failed: No space left on device")

    monkeypatch.setattr(backup, "_run", dump_fails)
    with pytest.raises(CommandError, match="No space left"):
        call_command("backup", "--output", str(tmp_path / "backups"), stdout=io.StringIO())
    assert list((tmp_path / "backups").iterdir()) == []  # no half backup to restore by mistake
