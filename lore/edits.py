"""Lore edits: proposal, review (approve builds the next staged version, reject), and the queue.

Seed 003 §8.2.2: lore changes only through review, and a change reaches players only when the
version it produced is published (smoke-gated, `lore_version_publish`).
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone

from lore import services
from lore.edit_apply import entries_apply_edits
from lore.edit_models import KnowledgeEdit, KnowledgeEditEvent
from lore.models import Domain, KnowledgeVersion, World
from lore.normalize import Entry, SourceOptions, normalize
from memoryhub.exceptions import ApplicationError
from memoryhub.registry import Decision

MAX_TEXT = 100_000


# --- Reads -------------------------------------------------------------------------------------
def version_entries(version: KnowledgeVersion) -> list[Entry]:
    """The entries a version was built from: its sources read again, then its edits applied."""
    entries = []
    for source in version.sources.all().order_by("id"):
        entries += normalize(content=bytes(source.content), filename=source.filename, language=source.language,
                             options=SourceOptions.from_dict(source.options), fmt=source.format)
    return entries_apply_edits(entries, version.edits)


def edits_list(*, world: World, status: str | None = None, domain: str | None = None) -> QuerySet[KnowledgeEdit]:
    edits = (KnowledgeEdit.objects.filter(world=world).select_related("produced_version", "base_version")
             .prefetch_related("builds"))
    if status:
        edits = edits.filter(status=status)
    if domain:
        edits = edits.filter(domain=domain)
    return edits.order_by("id")


def edit_diff_html(edit: KnowledgeEdit) -> str:
    """Side-by-side HTML diff of the entry before and after the edit (difflib escapes the text)."""
    old = f"# {edit.old_title}\n{edit.old_text}" if edit.old_title or edit.old_text else ""
    new = "" if edit.action == KnowledgeEdit.Action.DELETE else f"# {edit.title or edit.old_title}\n{edit.text}"
    return difflib.HtmlDiff(wrapcolumn=80).make_table(old.splitlines(), new.splitlines(), "before", "after")


def review_pending() -> QuerySet[KnowledgeEdit]:
    return KnowledgeEdit.objects.filter(status=KnowledgeEdit.Status.PENDING)


def review_describe(edit: KnowledgeEdit) -> str:
    return f"{edit.world.slug}/{edit.domain}: {edit.action} {edit.language} {edit.entry_id} ({edit.proposed_by})"


def review_decided_since(moment: datetime) -> list[Decision]:
    events = (KnowledgeEditEvent.objects.filter(created_at__gte=moment, action__in=[
        KnowledgeEditEvent.Action.APPROVED, KnowledgeEditEvent.Action.REJECTED])
        .select_related("edit").order_by("-created_at", "-id")[:50])
    return [Decision(when=e.created_at, who=e.actor,
                     what=f"lore edit {e.action}: {e.edit.action} {e.edit.entry_id}"
                          f"{' -> ' + e.version if e.version else ''}{' (' + e.reason + ')' if e.reason else ''}")
            for e in events]


# --- Writes ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class CheckedEdit:
    language: str
    entry_id: str
    base: KnowledgeVersion | None
    old: Entry | None


def knowledge_edit_check(*, world: World, domain: str, action: str, language: str, entry_id: str, reason: str,
                         text: str = "", title: str = "") -> CheckedEdit:
    """Why an edit cannot be proposed (ApplicationError naming the field), else what it builds on:
    the version under `stage`, else `latest`, and the entry's current form there."""
    if domain not in Domain.values:
        raise ApplicationError(f"Unknown domain {domain!r}; use one of {', '.join(Domain.values)}.", field="domain")
    if action not in KnowledgeEdit.Action.values:
        raise ApplicationError(f"Unknown action {action!r}; use create, update or delete.", field="action")
    language = language or world.languages[0]
    if language not in world.languages:
        raise ApplicationError(f"Language {language!r} is not one of the world's {world.languages}.",
                               field="language")
    entry_id = entry_id.strip().strip("/")
    if not entry_id:
        raise ApplicationError("Name the entry, e.g. 'Spells/fireball'.", field="entry_id")
    if not reason.strip():
        raise ApplicationError("Say why the entry should change.", field="reason")
    if action != KnowledgeEdit.Action.DELETE and not text.strip():
        raise ApplicationError(f"An edit that {action}s an entry needs its new text.", field="text")
    if action == KnowledgeEdit.Action.DELETE and (text.strip() or title.strip()):
        # Taken and ignored, a text read to its reviewer as what the entry would say.
        raise ApplicationError("An edit that deletes an entry takes no text or title.",
                               field="text" if text.strip() else "title")
    if len(text) > MAX_TEXT:
        raise ApplicationError(f"At most {MAX_TEXT} characters.", field="text")
    base = services._base_version(world, domain)
    old = None
    if base is not None:
        old = next((e for e in version_entries(base) if (e.language, e.entry_id) == (language, entry_id)), None)
    where = f"{world.slug}/{domain} {base.version}" if base is not None else f"{world.slug}/{domain} (no version yet)"
    if action == KnowledgeEdit.Action.CREATE and old is not None:
        raise ApplicationError(f"{where} already has {language} entry {entry_id!r}; propose an update.",
                               field="entry_id")
    if action != KnowledgeEdit.Action.CREATE and old is None:
        raise ApplicationError(f"{where} has no {language} entry {entry_id!r}.", field="entry_id")
    if (action == KnowledgeEdit.Action.UPDATE and text.strip() == old.text.strip()
            and title.strip() in ("", old.title)):
        # Approved, it built a version identical to its base.
        raise ApplicationError(f"{where}'s {language} entry {entry_id!r} already says this.", code="unchanged",
                               field="text")
    return CheckedEdit(language, entry_id, base, old)


def knowledge_edit_propose(*, world: World, domain: str, action: str, language: str, entry_id: str, reason: str,
                           actor: str, title: str = "", text: str = "") -> KnowledgeEdit:
    """Queue an edit for review, keeping the entry's current text for the reviewer's diff."""
    checked = knowledge_edit_check(world=world, domain=domain, action=action, language=language, entry_id=entry_id,
                                   reason=reason, text=text, title=title)
    old = checked.old
    with transaction.atomic():
        edit = KnowledgeEdit.objects.create(
            tenant=world.tenant, world=world, domain=domain, language=checked.language, entry_id=checked.entry_id,
            action=action, title=title.strip(), text=text, reason=reason.strip(), proposed_by=actor,
            base_version=checked.base,
            old_title=old.title if old else "", old_text=old.text if old else "",
        )
        KnowledgeEditEvent.objects.create(tenant=world.tenant, edit=edit, action=KnowledgeEditEvent.Action.PROPOSED,
                                          actor=actor, reason=edit.reason)
    return edit


def _claim(edit: KnowledgeEdit, status: str, actor: str, reason: str) -> None:
    # A conditional update, not a row lock held across the build: two reviewers deciding the same
    # edit at once get one success and one 409, and no lock waits on the embedding calls.
    claimed = KnowledgeEdit.objects.filter(pk=edit.pk, status=KnowledgeEdit.Status.PENDING).update(
        status=status, decided_by=actor, decided_at=timezone.now(), decision_reason=reason)
    if not claimed:
        current = KnowledgeEdit.objects.filter(pk=edit.pk).values_list("status", flat=True).first()
        raise ApplicationError(f"Edit {edit.pk} is already {current}.", code="already_decided", status_code=409)


def _stale_reason(edit: KnowledgeEdit, base: KnowledgeVersion, current: Entry | None) -> str | None:
    """Why the edit no longer fits the entry it would replace, else None. An update carries the
    entry's whole new text, written against the text the proposer saw: if another approved edit
    changed that entry since, approving this one would silently undo it (two editors fixing one
    entry, both approved: the first fix was lost). Such an edit is refused; the editor proposes
    again against the current text. `base`: the version the edit would now be built on; `current`:
    the entry in it."""
    seen = edit.base_version.version if edit.base_version else "an earlier version"
    where = f"{edit.world.slug}/{edit.domain} {base.version}"
    if edit.action == KnowledgeEdit.Action.CREATE:
        if current is not None:
            return f"{where} already has {edit.language} entry {edit.entry_id!r} (created since {seen})."
        return None
    if current is None:
        return f"{where} no longer has {edit.language} entry {edit.entry_id!r} (deleted since {seen})."
    if (current.title, current.text) != (edit.old_title, edit.old_text):
        return (f"{edit.language} entry {edit.entry_id!r} changed in {where} since this edit was proposed on {seen}; "
                f"approving it would undo that change.")
    return None


def knowledge_edit_approve(*, edit: KnowledgeEdit, actor: str, reason: str = "") -> KnowledgeEdit:
    """Approve a pending edit: build the next staged version (a patch release) from the version
    under `stage` (else `latest`) plus this edit, re-using the vectors of unchanged chunks. `latest`
    does not move; publishing that version is a separate, smoke-gated step. An edit proposed against
    an entry that has changed since is refused (409 `stale`): reject it and propose it again.

    In a world whose version is large (`builds.large_build`) the version is built in the background:
    the edit is approved at once, its `produced_version` comes when its build (`edit.builds`) is done,
    and it goes back to pending if the build fails."""
    from lore import builds

    if edit.status == KnowledgeEdit.Status.PENDING:
        _refuse_if_stale(edit, services._base_version(edit.world, edit.domain))
    _claim(edit, KnowledgeEdit.Status.APPROVED, actor, reason)
    try:
        if builds.large_build(world=edit.world, domain=edit.domain):
            builds.knowledge_build_create(world=edit.world, domain=edit.domain, files=[],
                                          options=SourceOptions(), actor=actor, edit=edit)
        else:
            knowledge_edit_build(edit=edit, actor=actor, wait=settings.LORE_BUILD_WAIT_SECONDS)
    except BaseException:
        # The build writes nothing on failure; hand the edit back to the queue.
        edit_unclaim(edit.pk)
        raise
    edit.refresh_from_db()
    return edit


def _refuse_if_stale(edit: KnowledgeEdit, base: KnowledgeVersion | None) -> None:
    if base is None or base.pk == edit.base_version_id:
        return
    now = next((e for e in version_entries(base) if (e.language, e.entry_id) == (edit.language, edit.entry_id)),
               None)
    stale = _stale_reason(edit, base, now)
    if stale:
        # What the entry is now, as a stale fact's 409 says the key's current value: the editor proposes
        # again against it without another read.
        current = {"version": base.version, "title": now.title if now else None, "text": now.text if now else None}
        raise ApplicationError(f"Edit {edit.pk} is stale: {stale} Reject it and propose it again against the "
                               f"current text.", code="stale", field="entry_id", status_code=409,
                               extra={"current": current})


def knowledge_edit_build(*, edit: KnowledgeEdit, actor: str,
                         on_written: Callable[[KnowledgeVersion], None] = lambda version: None,
                         **ingest: Any) -> KnowledgeVersion:
    """Build the version of an approved edit (within the request, or as its background build): the
    edit is checked again against the base the build uses (another edit approved meanwhile may have
    changed its entry), and the version it produced and the approval's audit row are written in the
    version's own transaction. `ingest`: `knowledge_ingest`'s wait, progress and on_step."""

    def record(version: KnowledgeVersion) -> None:
        KnowledgeEdit.objects.filter(pk=edit.pk).update(produced_version=version)
        decided = KnowledgeEdit.objects.filter(pk=edit.pk).values_list("decision_reason", flat=True).first()
        KnowledgeEditEvent.objects.create(tenant_id=edit.tenant_id, edit_id=edit.pk,
                                          action=KnowledgeEditEvent.Action.APPROVED, actor=actor,
                                          reason=decided or "", version=version.version)
        on_written(version)

    return services.knowledge_ingest(world=edit.world, domain=edit.domain, files=[], add_edits=[edit.pk],
                                     actor=actor, bump="patch",
                                     check_base=lambda base: _refuse_if_stale(edit, base),
                                     on_written=record, **ingest)


def edit_unclaim(edit_id: int) -> None:
    """An approved edit whose build failed waits for a decision again."""
    KnowledgeEdit.objects.filter(pk=edit_id, produced_version__isnull=True).update(
        status=KnowledgeEdit.Status.PENDING, decided_by="", decided_at=None, decision_reason="")


@transaction.atomic
def knowledge_edit_reject(*, edit: KnowledgeEdit, actor: str, reason: str) -> KnowledgeEdit:
    if not reason.strip():
        raise ApplicationError("Say why the edit is rejected.", field="reason")
    _claim(edit, KnowledgeEdit.Status.REJECTED, actor, reason.strip())
    KnowledgeEditEvent.objects.create(tenant=edit.tenant, edit=edit, action=KnowledgeEditEvent.Action.REJECTED,
                                      actor=actor, reason=reason.strip())
    edit.refresh_from_db()
    return edit
