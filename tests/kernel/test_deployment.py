"""The deployment files: compose passes what the README documents, images carry no local data."""

from __future__ import annotations

import fnmatch
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]


def documented_settings() -> set[str]:
    """Every variable named in the first column of the README's configuration table."""
    names: set[str] = set()
    for line in (ROOT / "README.md").read_text().splitlines():
        if line.startswith("| `"):
            names.update(re.findall(r"`([A-Z][A-Z0-9_]+)`", line.split("|")[1]))
    return names


def test_compose_passes_every_documented_setting_to_every_service() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    documented = documented_settings()
    assert {"LLM_MODEL", "EMBEDDING_MODEL_PATH", "API_THROTTLE_RATE"} <= documented
    for name in ("web", "worker", "beat"):
        passed = set(compose["services"][name]["environment"])
        assert documented - passed == set(), name


def test_worker_and_beat_wait_for_migrations() -> None:
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    for name in ("worker", "beat"):
        assert "migrate --check" in compose["services"][name]["command"]


def ignored(path: str, patterns: list[str]) -> bool:
    """Docker's rule for these simple patterns: a pattern matches the path or one of its parents."""
    parts = path.split("/")
    prefixes = ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return any(fnmatch.fnmatch(prefix, pattern.removeprefix("**/")) or fnmatch.fnmatch(prefix, pattern)
               for pattern in patterns for prefix in prefixes)


def test_the_image_context_leaves_out_data_secrets_and_local_tools() -> None:
    patterns = [line.strip() for line in (ROOT / ".dockerignore").read_text().splitlines()
                if line.strip() and not line.startswith("#")]
    for path in ("var/pgdata/base/1", "var/secret_key", "var/demo_api_key", "var/prometheus/counter.db",
                 ".venv/bin/python", ".git/HEAD", ".env", "tests/conftest.py"):
        assert ignored(path, patterns), path
    for path in ("memoryhub/settings.py", "requirements.txt", "manage.py", "config/knowledge.yaml"):
        assert not ignored(path, patterns), path


def test_the_image_installs_runtime_requirements_only() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text()
    assert "requirements.txt" in dockerfile and "requirements-dev" not in dockerfile
