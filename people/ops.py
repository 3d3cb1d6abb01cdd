"""What an archivist (LLM or rules) hands to the services: people operations and relations.

Plain data, so both archivists, the services and the evaluation share one shape.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal


@dataclass
class PersonDraft:
    """A person as an archivist saw them. `None` means "not stated", which never erases a value."""

    display_name: str = ""
    aliases: list[str] = field(default_factory=list)
    username: str | None = None
    telegram_id: int | None = None
    circle: str | None = None
    bio: str = ""
    # Where the person was mentioned: counted as mentions, and kept as references.
    message_ids: list[int] = field(default_factory=list)
    first_seen: datetime | None = None
    last_seen: datetime | None = None


@dataclass
class AddOp:
    person: PersonDraft
    op: Literal["Added"] = "Added"


@dataclass
class UpdateOp:
    person_id: int
    person: PersonDraft
    op: Literal["Updated"] = "Updated"


@dataclass
class MergeOp:
    source_id: int
    target_id: int
    reason: str = ""
    op: Literal["Merged"] = "Merged"


PersonOp = AddOp | UpdateOp | MergeOp


@dataclass
class RelationDraft:
    """`subject` is `kind` of `object` ("Maria" spouse "Petrov"). Endpoints are person ids or names."""

    subject: int | str
    object: int | str
    kind: str
    label: str = ""


@dataclass
class Extraction:
    ops: list[PersonOp] = field(default_factory=list)
    relations: list[RelationDraft] = field(default_factory=list)
    # Parts of the reply that could not be used (invented ids, nameless people, unknown ops).
    dropped: list[str] = field(default_factory=list)
    source: Literal["llm", "rules"] = "rules"
