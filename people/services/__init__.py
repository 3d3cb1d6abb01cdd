"""Writes of people, every one through these services (keyword-only, typed, atomic).

Split by subject: `persons` (one person: create, update, edit, relations, erasure), `merges`
(dedup, proposals, merge and undo), `extraction` (the archivist's run and the archival step).
"""

from people.services.extraction import people_apply_extraction, people_archival_step, people_extract_from_messages
from people.services.merges import (
    merge_proposal_approve,
    merge_proposal_create,
    merge_proposal_reject,
    merge_proposal_undo,
    person_dedup,
    person_merge,
    person_merge_undo,
    restore,
    snapshot,
)
from people.services.persons import (
    combine_bio,
    default_bio,
    find_identity,
    normalize_circle,
    people_gauges_refresh,
    people_user_erase,
    person_create_from_draft,
    person_update,
    relation_upsert,
)

__all__ = [
    "combine_bio",
    "default_bio",
    "find_identity",
    "merge_proposal_approve",
    "merge_proposal_create",
    "merge_proposal_reject",
    "merge_proposal_undo",
    "normalize_circle",
    "people_apply_extraction",
    "people_archival_step",
    "people_extract_from_messages",
    "people_gauges_refresh",
    "people_user_erase",
    "person_create_from_draft",
    "person_dedup",
    "person_merge",
    "person_merge_undo",
    "person_update",
    "relation_upsert",
    "restore",
    "snapshot",
]
