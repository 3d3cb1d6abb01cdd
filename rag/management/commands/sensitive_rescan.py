"""`manage.py sensitive_rescan [--tenant NAME] [--dry-run]`: mask the sensitive numbers stored before masking
covered them, and rebuild what was made of them."""

from __future__ import annotations

import time
from collections import Counter
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db import transaction
from tqdm import tqdm

from memoryhub.management.base import require_migrated
from memoryhub.models import Message, Tenant
from memoryhub.sensitive import mask_bounded, mask_json, mask_tags, mask_text
from rag.memories.services import CONTEXT_WINDOW_MAX_LENGTH, TAG_MAX_LENGTH
from rag.models import TENANT_NAMESPACE, Chunk, Document, MemoryReview, user_namespace
from rag.services import SPEAKER_MAX_LENGTH, TITLE_MAX_LENGTH, namespace_write_lock, reindex


class Command(BaseCommand):
    help = ("Mask sensitive numbers (cards, IBANs, identity numbers) stored before masking covered them: typed "
            "memories and insights (text, tags, context window) and their review items, documents' titles, tags "
            "and meta, and, under SENSITIVE_POLICY=mask, messages' speakers; then rebuild the chunks of every "
            "user touched (terms and vectors of the masked text). Safe to run again: what is masked stays so.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="tenant name (default: every tenant)")
        parser.add_argument("--dry-run", action="store_true", help="Count what would be masked; change nothing.")

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        tenants = Tenant.objects.order_by("id")
        if options["tenant"]:
            tenants = tenants.filter(name=options["tenant"])
            if not tenants.exists():
                raise CommandError(f"no tenant named {options['tenant']!r}")
        dry_run = bool(options["dry_run"])
        started = time.monotonic()
        found: Counter[str] = Counter()
        rows: Counter[str] = Counter()
        rebuilt = 0
        for tenant in tenants:
            users: set[str | None] = set()
            for kind, scan in (("memories", _memories), ("reviews", _reviews), ("documents", _documents),
                               ("speakers", _speakers)):
                changed, counts = scan(tenant, dry_run, self.stderr._out)
                rows[kind] += len(changed)
                found.update(counts)
                users |= changed
            if users and not dry_run:
                # The masked text's terms and vectors, and the chunks made from documents and messages.
                with tqdm(total=len(users), desc=f"rebuild {tenant.name}", unit="namespace",
                          file=self.stderr._out) as bar:
                    reindex(tenant=tenant, user_ids=sorted(u for u in users if u is not None),
                            include_tenant_documents=None in users, progress=bar.update)
                rebuilt += len(users)
        what = ", ".join(f"{n} {kind}" for kind, n in rows.items() if n) or "nothing"
        numbers = ", ".join(f"{n} {kind}" for kind, n in sorted(found.items())) or "none"
        verb = "would mask" if dry_run else "masked"
        self.stdout.write(f"{verb}: {what} (numbers: {numbers})"
                          + ("" if dry_run else f"; {rebuilt} namespace(s) rebuilt")
                          + f" in {time.monotonic() - started:.1f} s")


def _bar(total: int, desc: str, out: Any) -> tqdm:
    return tqdm(total=total, desc=desc, unit="row", file=out, leave=False)


def _memories(tenant: Tenant, dry_run: bool, out: Any) -> tuple[set[str | None], Counter[str]]:
    """Typed memories and insights: a chunk is their only stored form."""
    counts: Counter[str] = Counter()
    changed: set[str | None] = set()
    chunks = Chunk.objects.filter(tenant=tenant, type__in=[Chunk.Type.MEMORY, Chunk.Type.INSIGHT])
    with _bar(chunks.count(), f"memories {tenant.name}", out) as bar:
        for pk, namespace, user_id, text, tags, window in chunks.values_list(
                "pk", "namespace", "user_id", "text", "tags", "context_window").iterator(chunk_size=2000):
            bar.update(1)
            new_text, found = mask_text(text, where="memory")
            new_tags, found_tags = mask_tags(tags, max_length=TAG_MAX_LENGTH, where="memory")
            new_window, found_window = mask_bounded(window, max_length=CONTEXT_WINDOW_MAX_LENGTH, where="memory")
            found.update(found_tags)
            found.update(found_window)
            if not found:
                continue
            counts.update(found)
            changed.add(user_id or None)
            if not dry_run:
                with transaction.atomic():
                    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
                    Chunk.objects.filter(pk=pk).update(text=new_text, tags=new_tags, context_window=new_window)
    return changed, counts


def _reviews(tenant: Tenant, dry_run: bool, out: Any) -> tuple[set[str | None], Counter[str]]:
    """Review items of typed memories (an approval writes their text as a memory)."""
    counts: Counter[str] = Counter()
    reviews = MemoryReview.objects.filter(tenant=tenant)
    with _bar(reviews.count(), f"memory reviews {tenant.name}", out) as bar:
        for review in reviews.iterator(chunk_size=2000):
            bar.update(1)
            text, found = mask_text(review.text, where="memory")
            tags, found_tags = mask_tags(review.tags, max_length=TAG_MAX_LENGTH, where="memory")
            window, found_window = mask_bounded(review.context_window, max_length=CONTEXT_WINDOW_MAX_LENGTH,
                                                where="memory")
            found.update(found_tags)
            found.update(found_window)
            if found:
                counts.update(found)
                if not dry_run:
                    MemoryReview.objects.filter(pk=review.pk).update(text=text, tags=tags, context_window=window)
    return set(), counts  # nothing of a review is indexed


def _documents(tenant: Tenant, dry_run: bool, out: Any) -> tuple[set[str | None], Counter[str]]:
    """A document's title is every chunk's heading line, its tags are on every chunk; its text was always
    stored masked."""
    counts: Counter[str] = Counter()
    changed: set[str | None] = set()
    documents = Document.objects.filter(tenant=tenant).defer("text")
    with _bar(documents.count(), f"documents {tenant.name}", out) as bar:
        for document in documents.iterator(chunk_size=500):
            bar.update(1)
            title, found = mask_bounded(document.title, max_length=TITLE_MAX_LENGTH, where="document")
            tags, found_tags = mask_tags(document.tags, where="document")
            meta, found_meta = mask_json(document.meta, where="document")
            found.update(found_tags)
            found.update(found_meta)
            if not found:
                continue
            counts.update(found)
            changed.add(document.user_id or None)
            if not dry_run:
                namespace = user_namespace(document.user_id) if document.user_id else TENANT_NAMESPACE
                with transaction.atomic():
                    namespace_write_lock(tenant_id=tenant.pk, namespace=namespace)
                    Document.objects.filter(pk=document.pk).update(title=title, tags=tags, meta=meta)
    return changed, counts


def _speakers(tenant: Tenant, dry_run: bool, out: Any) -> tuple[set[str | None], Counter[str]]:
    """A message's speaker, stored masked under SENSITIVE_POLICY=mask (kept as sent under `keep`, where
    the rebuilt chunks mask it)."""
    counts: Counter[str] = Counter()
    changed: set[str | None] = set()
    messages = Message.objects.filter(tenant=tenant).exclude(speaker="")
    with _bar(messages.count(), f"speakers {tenant.name}", out) as bar:
        for pk, user_id, speaker in messages.values_list("pk", "user_id", "speaker").iterator(chunk_size=5000):
            bar.update(1)
            masked, found = mask_bounded(speaker, max_length=SPEAKER_MAX_LENGTH, where="message")
            if not found:
                continue
            counts.update(found)
            changed.add(user_id)  # its chunks carry the speaker: rebuilt masked under either policy
            if settings.SENSITIVE_POLICY == "mask" and not dry_run:
                Message.objects.filter(pk=pk).update(speaker=masked)
    return changed, counts
