"""Start-up in a fresh interpreter: settings are read once, at import, so a setting's effect on
start-up (a bad value stopping it, naming the variable) is seen only in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def start_up(script: str = "import memoryhub.settings", **env: str) -> subprocess.CompletedProcess[str]:
    """Run `script` in the repository with this environment plus `env`."""
    return subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=60,
                          env={**os.environ, **env})
