"""Writes of people, every one through these services (keyword-only, typed, atomic).

Split by subject: `persons` (one person: create, update, edit, relations, deletion, erasure), `merges`
(dedup, proposals, merge and undo), `extraction` (the archivist's run and the extract job's step),
`vectors` (embeddings, computed outside transactions).
"""

from people.services.extraction import (
    people_after_apply,
    people_apply_extraction,
    people_archivist_run,
    people_extract_from_messages,
    people_job_after,
    people_job_apply,
    people_job_prepare,
    people_operations_apply,
)
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
    active_person,
    combine_bio,
    default_bio,
    find_identity,
    normalize_circle,
    people_user_erase,
    person_create_from_draft,
    person_delete,
    person_update,
    relation_upsert,
)
from people.services.vectors import people_dedup_with_vectors, people_embed_pending, vectors_after_commit

__all__ = [
    "active_person",
    "combine_bio",
    "default_bio",
    "find_identity",
    "merge_proposal_approve",
    "merge_proposal_create",
    "merge_proposal_reject",
    "merge_proposal_undo",
    "normalize_circle",
    "people_after_apply",
    "people_apply_extraction",
    "people_archivist_run",
    "people_dedup_with_vectors",
    "people_embed_pending",
    "people_extract_from_messages",
    "people_job_after",
    "people_job_apply",
    "people_job_prepare",
    "people_operations_apply",
    "people_user_erase",
    "person_create_from_draft",
    "person_dedup",
    "person_delete",
    "person_merge",
    "person_merge_undo",
    "person_update",
    "relation_upsert",
    "restore",
    "snapshot",
    "vectors_after_commit",
]
