"""Extension points the apps plug into, so the kernel never imports an app.

Apps register in their `AppConfig.ready()`:
- archival steps: run, in registration order, for every archival job of a user;
- erasers: delete what the app holds for one user and return counts for the receipt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from memoryhub.models import ArchivalJob, Message, Tenant


@dataclass(frozen=True)
class ArchivalStep:
    name: str
    run: Callable[[ArchivalJob, Sequence[Message]], dict[str, Any]]


@dataclass(frozen=True)
class Eraser:
    name: str
    run: Callable[[Tenant, str], dict[str, int]]


archival_steps: list[ArchivalStep] = []
erasers: list[Eraser] = []


def register_archival_step(name: str, run: Callable[..., dict[str, Any]]) -> None:
    if any(step.name == name for step in archival_steps):
        return  # ready() can run twice under some test runners
    archival_steps.append(ArchivalStep(name, run))


def register_eraser(name: str, run: Callable[..., dict[str, int]]) -> None:
    if any(e.name == name for e in erasers):
        return
    erasers.append(Eraser(name, run))
