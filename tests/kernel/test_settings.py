"""Settings read at start-up: a bad value stops it with a message naming the variable (README)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.start_up import ROOT, start_up


def _load(**env: str) -> subprocess.CompletedProcess[str]:
    script = "import django; django.setup(); from django.conf import settings; print(settings.LOG_LEVEL)"
    return start_up(script, DJANGO_SETTINGS_MODULE="memoryhub.settings", **env)


@pytest.mark.parametrize(("given", "level"), [("debug", "DEBUG"), ("Warning", "WARNING"), ("INFO", "INFO")])
def test_log_level_in_any_case_configures_logging(given: str, level: str) -> None:
    # 'debug' stopped start-up with "ValueError: Unable to configure root logger", naming nothing.
    done = _load(LOG_LEVEL=given)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == level


def test_an_unknown_log_level_stops_start_up_naming_the_variable() -> None:
    done = _load(LOG_LEVEL="LOUD")
    assert done.returncode != 0
    assert "ImproperlyConfigured: LOG_LEVEL must be one of ['CRITICAL', 'DEBUG', 'ERROR', 'INFO', 'WARNING']" in (
        done.stderr)


def _database(url: str) -> subprocess.CompletedProcess[str]:
    return start_up(DATABASE_URL=url)


@pytest.mark.parametrize("url", ["sqlite:///memoryhub.db", "mysql://u:p@db/memoryhub"])
def test_a_database_url_of_another_engine_stops_start_up(url: str) -> None:
    # The code has no SQLite (or MySQL) branch: such a URL failed only at the first pgvector migration.
    done = _database(url)
    assert done.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL must name a PostgreSQL database with pgvector" in done.stderr


@pytest.mark.parametrize("url", ["localhost/memoryhub", "postgres://u:p@db:port/memoryhub"])
def test_a_malformed_database_url_stops_start_up_naming_the_variable(url: str) -> None:
    done = _database(url)
    assert done.returncode != 0
    assert "ImproperlyConfigured: DATABASE_URL must be postgres://USER:PASSWORD@HOST:PORT/NAME" in done.stderr


@pytest.mark.parametrize("url", ["localhost:6379", "redis://localhost:port/0"])
def test_a_malformed_redis_url_stops_start_up_naming_the_variable(url: str) -> None:
    # It started, and every API call answered 500 when the rate limit first reached for Redis.
    done = start_up(REDIS_URL=url)
    assert done.returncode != 0
    assert "ImproperlyConfigured: REDIS_URL must be redis://HOST:PORT/DB" in done.stderr


def test_a_setting_set_to_empty_keeps_its_default() -> None:
    # An `.env` line `LLM_MODEL=` made the model "" (every LLM call failed) and TOOLS_DEFAULT_WORLD none.
    script = ("from memoryhub import settings as s; "
              "print(s.LLM_MODELS['default'], s.TOOLS_DEFAULT_WORLD, s.LORE_GOLDEN_DIR.name, s.ALLOWED_HOSTS[0])")
    empty = dict.fromkeys(("LLM_MODEL", "TOOLS_DEFAULT_WORLD", "LORE_GOLDEN_DIR", "ALLOWED_HOSTS"), "")
    done = start_up(script, **empty)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["gpt-4o-mini", "dnd5e", "memory_retrieval_golden", "127.0.0.1"]


def _local_model(tmp_path: Path, *, path: str, installed: bool) -> subprocess.CompletedProcess[str]:
    """Settings with EMBEDDING_PROVIDER=sentence-transformers; `installed`: a stand-in package is on
    the path (found, never imported: no torch needed), else the extra is missing."""
    stub = tmp_path / "site"
    (stub / "sentence_transformers").mkdir(parents=True, exist_ok=True)
    (stub / "sentence_transformers" / "__init__.py").write_text("raise RuntimeError('imported')\n")
    hide = "" if installed else "import sys; sys.modules['sentence_transformers'] = None; "
    script = hide + "from memoryhub import settings; print(settings.EMBEDDING_MODEL_PATH)"
    return start_up(script, EMBEDDING_PROVIDER="sentence-transformers", EMBEDDING_MODEL_PATH=path,
                    PYTHONPATH=os.pathsep.join([str(stub), str(ROOT)]))


def test_a_local_model_that_is_not_there_stops_start_up(tmp_path: Path) -> None:
    # It started and answered /healthz; every index job failed and retried, every search was a 500.
    for path in ("/nonexistent/model", ""):
        done = _local_model(tmp_path, path=path, installed=True)
        assert done.returncode != 0
        assert "ImproperlyConfigured: EMBEDDING_MODEL_PATH must be the directory of a local sentence-transformers" in (
            done.stderr)


def test_a_local_model_without_the_extra_stops_start_up(tmp_path: Path) -> None:
    done = _local_model(tmp_path, path=str(tmp_path), installed=False)
    assert done.returncode != 0
    assert "requirements-sentence-transformers.txt" in done.stderr
    done = _local_model(tmp_path, path=str(tmp_path), installed=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == str(tmp_path)


@pytest.mark.parametrize(("argv", "env", "age"), [(["manage.py", "runserver"], {}, "0"),
                                                  (["manage.py", "runserver"], {"DB_CONN_MAX_AGE": "30"}, "30"),
                                                  (["gunicorn"], {}, "60")])
def test_the_development_server_keeps_no_connection_unless_told(argv: list[str], env: dict[str, str], age: str) -> None:
    """runserver's per-request threads never close a kept connection: idle backends piled up to the
    server's max_connections under a few concurrent clients of `make run`."""
    script = (f"import sys; sys.argv = {argv!r}; import django; django.setup(); from django.conf import settings; "
              "print(settings.DATABASES['default']['CONN_MAX_AGE'])")
    done = start_up(script, DJANGO_SETTINGS_MODULE="memoryhub.settings", **env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == age
