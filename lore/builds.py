"""Uploads built in the background: the files are stored with a `KnowledgeBuild` row in the
request, and a task makes the version (`services.knowledge_ingest`) while the client polls the
build's progress. Shaped as a document job is (rag.services.document_index): one runner per build
across processes, failures retried after a growing delay, a sweep that hands out again what a
dead worker or an absent broker left.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from lore import services
from lore.edit_models import KnowledgeEdit
from lore.models import KnowledgeBuild, KnowledgeBuildFile, KnowledgeVersion, World
from lore.normalize import SourceOptions
from memoryhub import deferred
from memoryhub.exceptions import ApplicationError
from memoryhub.locks import advisory_lock

logger = logging.getLogger(__name__)

# How often a running build writes its progress: each write is a round trip, a chunk takes ~1 ms.
PROGRESS_EVERY_SECONDS = 1.0
# Refusals that are not the input's fault: the domain's base moved under the build, or another build
# held the domain. The build goes back to the queue, due at once, its attempts untouched.
NOT_THE_INPUT = frozenset({"stage_moved", "world_busy"})


def large_build(*, world: World, domain: str, upload_bytes: int = 0, replace_all: bool = False) -> bool:
    """Whether a build is left to the background by default: its uploaded bytes are many, or the
    version it carries forward is (each of its chunks is copied into the new version, ~1 ms apiece:
    41,000 chunks took over 40 s for a 30-byte upload or one approved edit)."""
    if upload_bytes > settings.LORE_BACKGROUND_BYTES:
        return True
    base = None if replace_all else services._base_version(world, domain)
    return base is not None and base.chunk_count > settings.LORE_BACKGROUND_CHUNKS


def knowledge_build_create(*, world: World, domain: str, files: Sequence[services.UploadedFile],
                           options: SourceOptions, actor: str, version: str | None = None,
                           replace_all: bool = False, edit: KnowledgeEdit | None = None) -> KnowledgeBuild:
    """Store an upload (or an approved `edit`) to be built in the background and hand it to a worker.
    What can be checked without reading the files is checked now (a 4xx to the request); the rest
    is the build's."""
    services.knowledge_ingest_precheck(world=world, domain=domain, files=files, version=version, options=options)
    with transaction.atomic():
        build = KnowledgeBuild.objects.create(
            tenant=world.tenant, world=world, domain=domain, options=options.as_dict(),
            requested_version=version or "", replace_all=replace_all, created_by=actor, edit=edit)
        KnowledgeBuildFile.objects.bulk_create([
            KnowledgeBuildFile(build=build, filename=f.filename, language=f.language, content=f.content)
            for f in files])
        transaction.on_commit(lambda: knowledge_build_enqueue(build_id=build.pk))
    return build


def knowledge_build_enqueue(*, build_id: int) -> bool:
    """Hand a build to the broker (`memoryhub.deferred.dispatch`: the background thread without one;
    a broker away is logged, and the sweep sends the build again)."""
    from lore.tasks import knowledge_build_task

    KnowledgeBuild.objects.filter(pk=build_id).update(enqueued_at=timezone.now())
    sent = deferred.dispatch(knowledge_build_task, build_id, what=f"lore build {build_id}")
    if not sent:  # not sent: the next sweep's to send, not one 5 minutes on (memoryhub.services.archival_job_enqueue)
        KnowledgeBuild.objects.filter(pk=build_id).update(enqueued_at=None)
    return sent


def _update(build_id: int, **fields: Any) -> bool:
    return bool(KnowledgeBuild.objects.filter(pk=build_id).update(**fields))


def knowledge_build_run(*, build_id: int) -> KnowledgeBuild | None:
    """Make the build's version. Its `done` state is written in the transaction that writes the
    version (`on_written`), so a worker killed after that commit cannot build it twice, and one
    killed before leaves nothing but a build the sweep runs again. A refusal of the input (bad
    JSON, a version not above the newest) fails it for good, naming the field; any other failure
    is tried again after a growing delay (an embedding endpoint away loses no upload)."""
    from memoryhub.services import archival_retry_delay

    with advisory_lock(f"lore-build:{build_id}", 3) as acquired:
        build = KnowledgeBuild.objects.select_related("world", "world__tenant").filter(pk=build_id).first()
        if not acquired or build is None or build.status in (KnowledgeBuild.Status.DONE, KnowledgeBuild.Status.FAILED):
            return build
        _update(build_id, status=KnowledgeBuild.Status.BUILDING, started_at=timezone.now(), chunks_done=0, step="")
        files = [services.UploadedFile(f.filename, bytes(f.content), f.language)
                 for f in build.files.order_by("id")]
        last = 0.0

        def progress(done: int, total: int) -> None:
            nonlocal last
            if time.monotonic() - last >= PROGRESS_EVERY_SECONDS or done == total:
                last = time.monotonic()
                _update(build_id, chunks_done=done, chunks_total=total)

        def finished(version: KnowledgeVersion) -> None:
            # Inside the version's transaction: the build is done exactly when the version exists.
            _update(build_id, status=KnowledgeBuild.Status.DONE, version=version, finished_at=timezone.now(),
                    error="", error_code="", error_field="", chunks_done=F("chunks_total"), step="")
            KnowledgeBuildFile.objects.filter(build_id=build_id).delete()  # its sources hold them now

        def on_step(step: str) -> None:
            _update(build_id, step=step)

        try:
            if build.edit_id is not None:
                from lore.edits import knowledge_edit_build

                knowledge_edit_build(edit=build.edit, actor=build.created_by, progress=progress, on_written=finished,
                                     wait=None, on_step=on_step)
            else:
                services.knowledge_ingest(
                    world=build.world, domain=build.domain, files=files,
                    options=SourceOptions.from_dict(build.options), actor=build.created_by,
                    version=build.requested_version or None, replace_all=build.replace_all, progress=progress,
                    on_written=finished, wait=None, on_step=on_step)
        except ApplicationError as exc:
            if exc.code in NOT_THE_INPUT:
                # Due now: the beat's next sweep sends it again (not from here, where an in-process
                # task would run inside this one).
                _update(build_id, status=KnowledgeBuild.Status.PENDING, error=exc.message[:4000], step="",
                        next_attempt_at=timezone.now())
            else:
                _update(build_id, status=KnowledgeBuild.Status.FAILED, error=exc.message[:4000], error_code=exc.code,
                        error_field=exc.field or "", finished_at=timezone.now(), step="")
                _edit_back_to_queue(build)
        except Exception as exc:
            # Anything else is tried again after a growing delay (an embedding endpoint away); a build
            # that failed ARCHIVAL_MAX_ATTEMPTS times in a row is given up and says so, files kept.
            attempts = build.attempts + 1
            gave_up = attempts >= settings.ARCHIVAL_MAX_ATTEMPTS
            _update(build_id, attempts=attempts, error=f"{type(exc).__name__}: {exc}"[:4000], step="",
                    next_attempt_at=timezone.now() + archival_retry_delay(attempts),
                    **({"status": KnowledgeBuild.Status.FAILED, "error_code": "gave_up", "finished_at": timezone.now()}
                       if gave_up else {"status": KnowledgeBuild.Status.PENDING}))
            logger.warning("lore build %s failed (attempt %s%s): %s", build_id, attempts,
                           ", given up" if gave_up else ", tried again later", exc)
            if gave_up:
                _edit_back_to_queue(build)
        return KnowledgeBuild.objects.filter(pk=build_id).first()


def _edit_back_to_queue(build: KnowledgeBuild) -> None:
    # As when an approval's build fails within the request: the edit waits for a decision again.
    if build.edit_id is not None:
        from lore.edits import edit_unclaim

        edit_unclaim(build.edit_id)


def knowledge_build_retry(*, build: KnowledgeBuild) -> bool:
    """Queue a failed build again (the admin's action, once the cause is mended); False if its files
    are gone (it was done), it is not failed, or it is an edit's (the edit is pending again: approve it)."""
    if build.edit_id is not None or not KnowledgeBuildFile.objects.filter(build=build).exists():
        return False
    retried = KnowledgeBuild.objects.filter(pk=build.pk, status=KnowledgeBuild.Status.FAILED).update(
        status=KnowledgeBuild.Status.PENDING, attempts=0, error="", error_code="", error_field="", finished_at=None,
        next_attempt_at=timezone.now())
    if retried:
        transaction.on_commit(lambda: knowledge_build_enqueue(build_id=build.pk))
    return bool(retried)


def knowledge_builds_sweep(*, older_than: timedelta | None = None) -> int:
    """Beat: enqueue every unfinished build that is due and not enqueued since: one the broker
    never got, one whose worker died (still `pending` / `building` long after its enqueue; a
    second runner of a live one finds its lock taken and leaves), one whose retry delay passed."""
    older_than = older_than if older_than is not None else timedelta(seconds=settings.ARCHIVAL_SWEEP_AFTER_SECONDS)
    now = timezone.now()
    due = list(
        KnowledgeBuild.objects.filter(status__in=[KnowledgeBuild.Status.PENDING, KnowledgeBuild.Status.BUILDING],
                                      next_attempt_at__lte=now)
        .filter(Q(enqueued_at__isnull=True) | Q(enqueued_at__lt=F("next_attempt_at"))
                | Q(enqueued_at__lt=now - older_than))
        .order_by("id").values_list("id", flat=True))
    for build_id in due:
        knowledge_build_enqueue(build_id=build_id)
    return len(due)
