"""Approved lore edits applied on top of the entries read from a version's sources.

Kept apart from lore.edits (services that themselves call the ingest) so the ingest can import it
without a cycle. Applying is lenient on purpose: a rebuild replays edits over sources that may have
been re-uploaded since, and the reviewed edit is the latest word on its entry (an update of an entry
the sources no longer hold re-creates it; a delete of one they no longer hold does nothing).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from lore.edit_models import KnowledgeEdit
from lore.normalize import Entry


def edit_entry(edit: KnowledgeEdit, old: Entry | None, others: Sequence[Entry] = ()) -> Entry:
    """The entry an edit of action create or update stands for (`old`: the entry it replaces). A new
    entry's heading path continues its parent's ("rules/combat/flanking" under the entry
    "rules/combat", or beside a sibling "rules/combat/initiative"), as the sources' own entries do:
    the path heads every chunk's text, and a new rule headed "rules > Flanking" among "rules > Combat >
    …" lost the words "Combat" that its siblings are found by."""
    if old is not None:
        title = edit.title or old.title
        return dataclasses.replace(old, title=title, text=edit.text, heading_path=(*old.heading_path[:-1], title))
    category = edit.entry_id.split("/", 1)[0]
    title = edit.title or edit.entry_id.rsplit("/", 1)[-1]
    return Entry(entry_id=edit.entry_id, title=title, text=edit.text, language=edit.language,
                 heading_path=_new_heading_path(edit, category, title, others),
                 source_file="(lore edit)", category=category)


def _new_heading_path(edit: KnowledgeEdit, category: str, title: str, others: Sequence[Entry]) -> tuple[str, ...]:
    parent = edit.entry_id.rsplit("/", 1)[0] if "/" in edit.entry_id else ""
    if parent and parent != category:
        # The same language's parent or sibling first: a Russian rule under Russian headings.
        for entry in sorted(others, key=lambda e: e.language != edit.language):
            if entry.entry_id == parent:
                return (*entry.heading_path, title)
            if entry.entry_id.rsplit("/", 1)[0] == parent and len(entry.heading_path) > 1:
                return (*entry.heading_path[:-1], title)
    return (category, title) if category != edit.entry_id else (title,)


def entries_apply_edits(entries: list[Entry], edit_ids: Sequence[int]) -> list[Entry]:
    """`entries` with the edits `edit_ids` applied in that order; an entry keeps its place, a new
    one goes last, so a rebuild yields the same chunks in the same order."""
    if not edit_ids:
        return entries
    edits = {edit.pk: edit for edit in KnowledgeEdit.objects.filter(pk__in=edit_ids)}
    by_key = {(entry.language, entry.entry_id): entry for entry in entries}
    for pk in edit_ids:
        edit = edits.get(pk)
        if edit is None:
            continue
        key = (edit.language, edit.entry_id)
        if edit.action == KnowledgeEdit.Action.DELETE:
            by_key.pop(key, None)
        else:
            old = by_key.get(key)
            by_key[key] = edit_entry(edit, old, () if old is not None else list(by_key.values()))
    return list(by_key.values())
