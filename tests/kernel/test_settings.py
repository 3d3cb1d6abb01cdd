"""Settings read at start-up: a bad value stops it with a message naming the variable (README)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _load(**env: str) -> subprocess.CompletedProcess[str]:
    script = "import django; django.setup(); from django.conf import settings; print(settings.LOG_LEVEL)"
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, "DJANGO_SETTINGS_MODULE": "memoryhub.settings", **env})


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
