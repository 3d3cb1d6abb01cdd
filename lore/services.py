"""Writes of lore: worlds, ingest into a staged version, publish and rollback of `latest`."""

from __future__ import annotations

import hashlib
import re
import shlex
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import PurePath

import numpy as np
from django.conf.locale import LANG_INFO
from django.db import IntegrityError, transaction
from django.utils import timezone

from lore import config as lore_config
from lore.chunking import Piece, entry_pieces
from lore.edit_apply import entries_apply_edits
from lore.models import Alias, Domain, GoldenSet, KnowledgeChange, KnowledgeVersion, Source, World
from lore.normalize import Entry, SourceOptions, detect_format, normalize
from memoryhub.embeddings import get_embedder, l2_normalize
from memoryhub.exceptions import ApplicationError
from memoryhub.locks import advisory_lock
from memoryhub.models import Tenant
from memoryhub.text import analyze
from memoryhub.validation import iso_instant
from rag.models import Chunk
from rag.services import ChunkDraft, PreparedChunks, chunks_insert, storable_terms

SEMVER_PATTERN = r"^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)$"
SEMVER = re.compile(SEMVER_PATTERN)
# The languages a world may be written in: the base codes (ISO 639) of those Django knows, which Django
# keeps up to date with its translations, rather than a list of our own. "xx" passed the pattern a world's
# languages were checked against, and a typo then named a language no source or query could be in.
# `zh` comes from zh-hans and zh-hant; LANG_INFO has no bare `zh`.
LANGUAGES = tuple(sorted({code.split("-")[0] for code in LANG_INFO}))
SLUG_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
EMBED_BATCH = 256


def namespace_for(world: World, domain: str, version: str) -> str:
    return f"lore:{world.slug}:{domain}:{version}"


def namespace_prefix(world: World, domain: str) -> str:
    return f"lore:{world.slug}:{domain}:"


# --- Worlds ----------------------------------------------------------------------------------
@transaction.atomic
def world_create(*, tenant: Tenant, slug: str, name: str = "", languages: Sequence[str] = ("en",)) -> World:
    if not re.fullmatch(SLUG_PATTERN, slug):
        raise ApplicationError("Use lowercase letters, digits and hyphens.", field="slug")
    bad = [lang for lang in languages if lang not in LANGUAGES]
    if bad or not languages:
        raise ApplicationError(f"Languages are ISO 639 codes Django knows; got {bad or 'none'}; allowed: "
                               f"{', '.join(LANGUAGES)}.", field="languages")
    try:
        # The unique constraint decides, not a read before the insert: two creations of one slug at
        # once both passed such a read, and the second insert's IntegrityError was a 500.
        with transaction.atomic():
            return World.objects.create(tenant=tenant, slug=slug, name=name or slug,
                                        languages=list(dict.fromkeys(languages)))
    except IntegrityError as exc:
        raise ApplicationError(f"World {slug!r} already exists.", code="exists", field="slug",
                               status_code=409) from exc


# --- Vectors at the domain's dimension ---------------------------------------------------------
def fit_dims(vectors: np.ndarray, dims: int) -> np.ndarray:
    """Matryoshka truncation to the domain's `dims`, re-normalised, then zero-padded back to the
    column's width: cosine similarity between padded vectors equals that between the truncated
    ones, so every domain shares the one vector column and its HNSW index."""
    vectors = np.atleast_2d(np.asarray(vectors, dtype=np.float32))
    width = vectors.shape[1]
    if dims >= width:
        return vectors
    out = np.zeros_like(vectors)
    out[:, :dims] = l2_normalize(vectors[:, :dims])
    return out


# --- Ingest ------------------------------------------------------------------------------------
@dataclass(frozen=True)
class UploadedFile:
    filename: str
    content: bytes
    language: str = ""


@dataclass(frozen=True)
class _Normalized:
    filename: str
    language: str
    format: str
    options: SourceOptions
    content: bytes
    entries: list[Entry]
    stored: Source | None = None  # carried over from the previous version


def _check_domain(domain: str) -> None:
    if domain not in Domain.values:
        raise ApplicationError(f"Unknown domain {domain!r}; use one of {', '.join(Domain.values)}.", field="domain")


def _newest(world: World, domain: str) -> tuple[int, int, int] | None:
    return max((v.semver for v in KnowledgeVersion.objects.filter(world=world, domain=domain).only("version")),
               default=None)


def _next_version(world: World, domain: str, bump: str = "minor") -> str:
    newest = _newest(world, domain)
    if newest is None:
        return "1.0.0"
    major, minor, patch = newest
    return f"{major}.{minor}.{patch + 1}" if bump == "patch" else f"{major}.{minor + 1}.0"


def _check_forward(world: World, domain: str, version: str) -> None:
    # Versions only go forward: 0.0.0 after 0.0.1 moved `stage` back and read as the older build.
    highest = _newest(world, domain)
    if highest is not None and tuple(int(p) for p in version.split(".")) <= highest:
        newest = ".".join(map(str, highest))
        raise ApplicationError(f"Version {version} is not above {newest}, the newest of {world.slug}/{domain}: "
                               "versions only go forward (leave it out for the next minor).",
                               code="version_not_newer", field="version", status_code=409)


def _base_version(world: World, domain: str) -> KnowledgeVersion | None:
    """What a new ingest builds on: the staged version if there is one, else the live one."""
    for name in (Alias.Name.STAGE, Alias.Name.LATEST):
        alias = Alias.objects.filter(world=world, domain=domain, name=name).select_related("version").first()
        if alias is not None:
            return alias.version
    return None


def _content_key(embedder_name: str, dims: int, piece: Piece) -> str:
    # What decides a chunk's vector: its text, the embedding space and the dimension. Equal keys
    # mean the vector of an earlier version can be copied instead of embedding again.
    digest = hashlib.sha256(f"{embedder_name}\x00{dims}\x00{piece.text}".encode()).hexdigest()
    return f"lore:{digest[:40]}"


# A build on top of `stage` that finds, at its write, that another build moved `stage` meanwhile is
# done again on the new base (its vectors are mostly re-used by then): how many times before a 409.
INGEST_ATTEMPTS = 3


@dataclass
class _Build:
    """A version read, chunked and embedded, waiting for its write."""

    entries: list[Entry]
    parsed: list[_Normalized]
    drafts: list[ChunkDraft]
    keys: list[str]
    known: dict[str, tuple[np.ndarray, list[str]]]
    edit_ids: list[int]
    reused: int


def knowledge_ingest(
    *,
    world: World,
    domain: str,
    files: Sequence[UploadedFile],
    options: SourceOptions | None = None,
    actor: str = "",
    version: str | None = None,
    bump: str = "minor",
    replace_all: bool = False,
    add_edits: Sequence[int] = (),
    from_sources: Sequence[Source] | None = None,
    check_base: Callable[[KnowledgeVersion | None], None] | None = None,
    progress: Callable[[int, int], None] = lambda done, total: None,
    on_written: Callable[[KnowledgeVersion], None] = lambda version: None,
    wait: float | None = None,
    on_step: Callable[[str], None] = lambda step: None,
) -> KnowledgeVersion:
    """Build a new staged version of (world, domain) from `files` plus, unless `replace_all`, the
    sources of the version it builds on that these files do not replace (same language and file
    name). Everything is read, chunked and embedded before one short transaction writes the
    sources, the version, its chunks and the `stage` alias, so a failure leaves nothing behind and
    no embedding call happens while the namespace lock is held. `progress(done, total)` counts
    chunks as they get their vectors.

    Approved lore edits (`lore.edit_models.KnowledgeEdit`) apply on top of the entries read from
    the sources, in order: the base version's edits (unless `replace_all`), then `add_edits`.
    `from_sources` builds from exactly those stored sources (plus `files`) and only `add_edits`:
    how a rebuild from a backup replays a version.

    Builds of one world and domain run one at a time: each holds a session advisory lock on it from
    reading its base to writing (no row and no transaction waits on that lock, so the embedding
    calls under it block nobody but the next build of the domain, which queues: `wait` seconds, None
    for as long as it takes, then 409 `world_busy`). Two editors uploading different files at once
    thus both end up in the later version, and a stream of small uploads cannot starve a large one.
    As a second guard the write itself locks the world's row and checks that `stage` (or, without
    one, `latest`, which a publish or rollback moves) is still the base the build read; if not, the
    build is made again on the new base, after `check_base(base)` (which may refuse it) has seen it.
    Without `version` the number is the next `bump` ("minor" or "patch"), taken under the lock.
    `on_written(version)` runs inside the write transaction (a background build marks itself done
    there, so it is done exactly when its version exists); `on_step` hears "waiting" (for another
    build), "embedding" and "writing"."""
    if not files and not add_edits and not from_sources:
        raise ApplicationError("Give at least one file.", field="files")
    # A rebuild (from_sources) replays numbers that exist elsewhere, in their own order.
    forward_only = version is not None and from_sources is None
    options = options or SourceOptions()
    # Early, before the work; the version again under the lock.
    knowledge_ingest_precheck(world=world, domain=domain, files=files, version=version, options=options,
                              forward=forward_only)
    uploaded = _normalize_uploads(world, files, options)
    on_base = from_sources is None and not replace_all
    with _domain_build_lock(world, domain, wait, on_step):
        for _attempt in range(INGEST_ATTEMPTS):
            base = _base_version(world, domain) if on_base else None
            if check_base is not None:
                check_base(base)
            on_step("embedding")
            build = _build(world=world, domain=domain, uploaded=uploaded, base=base, add_edits=add_edits,
                           from_sources=from_sources, progress=progress)
            on_step("writing")
            number = version or "?"
            try:
                with transaction.atomic():
                    World.objects.select_for_update().filter(pk=world.pk).first()
                    if on_base and _pk(_base_version(world, domain)) != _pk(base):
                        continue  # a publish or rollback moved the base meanwhile: build again on the new one
                    if forward_only:
                        _check_forward(world, domain, version)
                    number = version or _next_version(world, domain, bump)
                    written = _write(world=world, domain=domain, number=number, build=build, actor=actor)
                    on_written(written)
                    return written
            except IntegrityError as exc:
                raise ApplicationError(f"Version {number} of {world.slug}/{domain} already exists.",
                                       code="conflict", field="version", status_code=409) from exc
    raise ApplicationError(f"Publishes or rollbacks of {world.slug}/{domain} kept moving its base while this "
                           "build was made; send it again.", code="stage_moved", status_code=409)


@contextmanager
def _domain_build_lock(world: World, domain: str, wait: float | None,
                       on_step: Callable[[str], None]) -> Iterator[None]:
    key = f"lore-build:{world.pk}:{domain}"
    with advisory_lock(key, 4) as acquired:
        if acquired:
            yield
            return
    on_step("waiting")
    with advisory_lock(key, 4, wait=wait) as acquired:
        if not acquired:
            raise ApplicationError(f"Another build of {world.slug}/{domain} has run for over {wait:.0f} s; "
                                   "this one did not start (send it again, or in the background).",
                                   code="world_busy", status_code=409)
        yield


# Stored per source (its file name) and per chunk (its category: `id_prefix` or the file's stem).
MAX_FILENAME_CHARS = 255
MAX_CATEGORY_CHARS = 64


def knowledge_ingest_precheck(*, world: World, domain: str, files: Sequence[UploadedFile], version: str | None,
                              options: SourceOptions | None = None, forward: bool = True) -> None:
    """What an upload can be refused for before its files are read: the domain, the files' names
    and languages, the version's form and (`forward`) that it is above the domain's newest."""
    _check_domain(domain)
    options = options or SourceOptions()
    for upload in files:
        if len(upload.filename) > MAX_FILENAME_CHARS:
            raise ApplicationError(f"{upload.filename[:40]}…: a file name of at most {MAX_FILENAME_CHARS} "
                                   "characters.", field="files")
        if len(options.id_prefix or PurePath(upload.filename).stem) > MAX_CATEGORY_CHARS:
            raise ApplicationError(f"{upload.filename[:40]}…: the file's name without its extension is its entries' "
                                   f"category and id prefix, at most {MAX_CATEGORY_CHARS} characters: shorten it "
                                   "or give `id_prefix`.", field="files")
        if upload.language and upload.language not in world.languages:
            raise ApplicationError(f"{upload.filename}: language {upload.language!r} is not one of the world's "
                                   f"{world.languages}.", field="language")
    names = [(upload.language or world.languages[0], upload.filename) for upload in files]
    if len(set(names)) != len(names):
        raise ApplicationError("The same file name is given twice for one language.", field="files")
    if version is not None and not SEMVER.fullmatch(version):
        raise ApplicationError(f"{version!r} is not a SemVer version (MAJOR.MINOR.PATCH).", field="version")
    if version is not None and forward:
        _check_forward(world, domain, version)


def _pk(version: KnowledgeVersion | None) -> int | None:
    return version.pk if version is not None else None


def _normalize_uploads(world: World, files: Sequence[UploadedFile], options: SourceOptions) -> list[_Normalized]:
    parsed: list[_Normalized] = []
    for upload in files:
        language = upload.language or world.languages[0]  # an explicit one was checked by the precheck
        # Unlabelled, in a world of several languages: each entry in the one it is written in.
        file_options = options if upload.language or len(world.languages) < 2 else replace(
            options, detect_languages=tuple(world.languages))
        fmt = detect_format(upload.filename)
        entries = normalize(content=upload.content, filename=upload.filename, language=language,
                            options=file_options, fmt=fmt)
        parsed.append(_Normalized(upload.filename, language, fmt, file_options, upload.content, entries))
    return parsed


def _build(*, world: World, domain: str, uploaded: list[_Normalized], base: KnowledgeVersion | None,
           add_edits: Sequence[int], from_sources: Sequence[Source] | None,
           progress: Callable[[int, int], None]) -> _Build:
    """Read the carried sources, apply the edits, chunk and embed (vectors of unchanged chunks copied)."""
    cfg = lore_config.domain_config(domain)
    parsed = list(uploaded)
    names = {(p.language, p.filename) for p in parsed}
    carried = list(from_sources) if from_sources is not None else (
        list(base.sources.all().order_by("id")) if base is not None else [])
    for stored in carried:
        if (stored.language, stored.filename) in names:
            continue
        stored_options = SourceOptions.from_dict(stored.options)
        parsed.append(_Normalized(stored.filename, stored.language, stored.format, stored_options,
                                  bytes(stored.content), normalize(
                                      content=bytes(stored.content), filename=stored.filename,
                                      language=stored.language, options=stored_options, fmt=stored.format),
                                  stored=stored))
    seen: dict[tuple[str, str], str] = {}
    clashes = []
    for p in parsed:
        for entry in p.entries:
            other = seen.setdefault((entry.language, entry.entry_id), p.filename)
            if other != p.filename:
                clashes.append(f"{entry.entry_id} ({entry.language}: {other}, {p.filename})")
    if clashes:
        raise ApplicationError(f"Duplicate entry ids across files: {', '.join(clashes[:50])}",
                               code="duplicate_entries", field="files", extra={"duplicates": clashes})

    edit_ids = [*(base.edits if base is not None else []), *add_edits]
    entries = entries_apply_edits([entry for p in parsed for entry in p.entries], edit_ids)
    pieces = [piece for entry in entries for piece in entry_pieces(entry)]
    if not pieces:  # every entry deleted by edits, say: a version of nothing serves no search
        raise ApplicationError(f"The new version of {world.slug}/{domain} would hold no entries.", field="files")
    embedder = get_embedder()
    keys = [_content_key(embedder.name, cfg.dims, piece) for piece in pieces]
    known: dict[str, tuple[np.ndarray, list[str]]] = {}
    for source_id, vector, terms in (
        Chunk.objects.filter(tenant=world.tenant, source_id__in=set(keys),
                             namespace__startswith=namespace_prefix(world, domain))
        .values_list("source_id", "embedding", "terms").iterator(chunk_size=2000)
    ):
        known.setdefault(source_id, (np.asarray(vector, dtype=np.float32), terms))
    missing = sorted({i for i, key in enumerate(keys) if key not in known}, key=keys.__getitem__)
    first_of_key = {}
    for i in missing:
        first_of_key.setdefault(keys[i], i)
    todo = list(first_of_key.values())
    total, done = len(pieces), len(pieces) - len(todo)
    progress(done, total)
    for start in range(0, len(todo), EMBED_BATCH):
        batch = todo[start:start + EMBED_BATCH]
        vectors = fit_dims(embedder.embed([pieces[i].text for i in batch]), cfg.dims)
        for i, vector in zip(batch, vectors, strict=True):
            # BM25 sees the title twice: a question naming a spell should find that spell first.
            terms = storable_terms(analyze(pieces[i].entry.title) + analyze(pieces[i].text))
            known[keys[i]] = (vector, terms)
        done += len(batch)
        progress(done, total)

    drafts = [
        ChunkDraft(
            type=Chunk.Type.DOCUMENT, text=piece.text, source_id=key, kind=piece.entry.language,
            tags=[piece.entry.category],
            meta={"entry_id": piece.entry.entry_id, "title": piece.entry.title,
                  "heading_path": list(piece.heading_path), "part": piece.part,
                  "language": piece.entry.language, "file": piece.entry.source_file, **piece.entry.meta},
        )
        for piece, key in zip(pieces, keys, strict=True)
    ]
    return _Build(entries, parsed, drafts, keys, known, edit_ids, reused=len(pieces) - len(todo))


def _write(*, world: World, domain: str, number: str, build: _Build, actor: str) -> KnowledgeVersion:
    """The build's rows and the `stage` alias; called inside the write transaction."""
    knowledge = KnowledgeVersion.objects.create(
        tenant=world.tenant, world=world, domain=domain, version=number,
        namespace=namespace_for(world, domain, number), entry_count=len(build.entries),
        chunk_count=len(build.drafts), reused_chunks=build.reused, created_by=actor,
        edits=build.edit_ids,
    )
    sources = [p.stored or Source.objects.create(
        tenant=world.tenant, world=world, domain=domain, filename=p.filename, language=p.language,
        format=p.format, options=p.options.as_dict(), content=p.content,
        sha256=hashlib.sha256(p.content).hexdigest(), uploaded_by=actor,
    ) for p in build.parsed]
    knowledge.sources.set(sources)
    # Vectors and terms were computed (or copied from an earlier version) before the
    # transaction opened: the namespace lock is held for the insert alone.
    keys, known = build.keys, build.known
    chunks_insert(tenant=world.tenant, namespace=knowledge.namespace, prepared=PreparedChunks(
        list(build.drafts), [known[key][1] for key in keys], np.stack([known[key][0] for key in keys])))
    Alias.objects.update_or_create(world=world, domain=domain, name=Alias.Name.STAGE,
                                   defaults={"version": knowledge, "updated_at": timezone.now()})
    return knowledge


# --- Publish and rollback ------------------------------------------------------------------------
def _lock_latest(world: World, domain: str) -> Alias | None:
    return Alias.objects.select_for_update().filter(world=world, domain=domain, name=Alias.Name.LATEST).first()


def reindex_command(version: KnowledgeVersion) -> str:
    """The command that rebuilds `version` from its kept sources and edits as a new staged version."""
    world = version.world
    return (f"manage.py lore_reindex {shlex.quote(world.slug)} {version.domain} {version.version} "
            f"--tenant {shlex.quote(world.tenant.name)}")


def version_pruned_error(version: KnowledgeVersion, *, field: str | None = "version",
                         doing: str = "") -> ApplicationError:
    """The refusal of anything that needs a pruned version's chunks (search, smoke, publish, rollback):
    a 409 naming the version, when it went, and the command that brings it back."""
    when = f" on {version.pruned_at:%Y-%m-%d}" if version.pruned_at else ""
    command = reindex_command(version)
    return ApplicationError(
        f"{doing}Version {version.version} of {version.world.slug}/{version.domain} was pruned{when} by the "
        f"retention policy: its chunks are deleted, its sources and edits kept. Rebuild it as a new staged "
        f"version with `{command}` (it becomes `stage`), then smoke and publish that one.",
        code="version_pruned", field=field, status_code=409,
        extra={"version": version.version, "pruned_at": iso_instant(version.pruned_at),
               "reindex": command})


def golden_set_save(*, world: World, domain: str, queries: list, actor: str) -> GoldenSet:
    """Replace the world's golden queries of `domain` (what the smoke run gating a publish searches
    with). Checked here as a file under LORE_GOLDEN_DIR is checked when read, and more: a query in a
    language the world has not, two queries of one id, or no `test` query (the gate's split: every
    publish would fail on nothing) is refused, naming the query."""
    from lore.smoke import golden_problem

    _check_domain(domain)
    problem = golden_problem({"queries": queries})
    if problem is not None:
        raise ApplicationError(f"{problem[0]}: {problem[1]}", field=problem[0].replace("$.", "", 1) or "queries")
    seen: set[str] = set()
    for i, query in enumerate(queries):
        if query["language"] not in world.languages:
            raise ApplicationError(f"Language {query['language']!r} is not one of the world's {world.languages}.",
                                   field=f"queries[{i}].language")
        if query["id"] in seen:
            raise ApplicationError(f"Two queries have the id {query['id']!r}.", field=f"queries[{i}].id")
        seen.add(query["id"])
    if not any(query.get("split", "test") == "test" for query in queries):
        raise ApplicationError("The publish gate runs the `test` split: give at least one query of it (the "
                               "default when `split` is left out).", field="queries")
    golden, _ = GoldenSet.objects.update_or_create(
        world=world, domain=domain,
        defaults={"tenant": world.tenant, "queries": queries, "updated_by": actor, "updated_at": timezone.now()})
    return golden


def smoke_failures(version: KnowledgeVersion) -> list[str]:
    """Why the version's last smoke run does not allow a publish (empty: it does)."""
    from lore.smoke import golden_exists

    cfg = lore_config.domain_config(version.domain)
    smoke = version.smoke or {}
    if not smoke:
        # Named the three ways a caller may be publishing from: the API, the command line, the admin.
        domain_path = f"/api/v1/worlds/{version.world.slug}/domains/{version.domain}"
        run = (f"POST {domain_path}/versions/{version.version}/smoke, manage.py lore_smoke or the admin's Run the "
               "smoke queries")
        if golden_exists(version.world, version.domain):
            return [f"no smoke run: {run}"]
        # The smoke run itself would answer 409 no_golden: say what comes first, not send the editor there.
        return [f"no smoke run, and no golden queries to run one with: first send them with PUT {domain_path}/golden, "
                f"then run the smoke ({run}); or publish with force and a reason (API force, lore_publish --force, "
                "the admin's Publish despite the smoke run)"]
    failures = []
    missing_by_language: dict[str, list[str]] = {}
    for miss in smoke.get("misses") or []:
        if miss.get("missing"):  # runs recorded before misses named their language and missing ids have none
            missing_by_language.setdefault(miss.get("language", ""), []).append(
                f"{miss['id']} ({', '.join(miss['missing'])})")
    for language, figures in (smoke.get("by_language") or {}).items():
        below = []
        if figures["hit@5"] < cfg.min_hit_at_5:
            below.append(f"hit@5 {figures['hit@5']:.3f} < {cfg.min_hit_at_5}")
        if figures["mrr"] < cfg.min_mrr:
            below.append(f"MRR {figures['mrr']:.3f} < {cfg.min_mrr}")
        if below and missing_by_language.get(language):
            # A golden query naming an entry the version lacks is a miss whatever the retrieval does: most
            # often a wrong id in the golden set, which the figures alone do not show.
            below[-1] += (f" (golden queries expecting entries version {version.version} does not hold: "
                          f"{', '.join(missing_by_language[language])}; check the golden set)")
        failures += [f"{language}: {line}" for line in below]
    if not smoke.get("by_language"):
        failures.append("the smoke run had no queries")
    return failures


def lore_version_publish(*, version: KnowledgeVersion, actor: str, force: bool = False,
                         reason: str = "") -> KnowledgeChange:
    """Point `latest` at `version` in one transaction. The version must have passed its smoke run,
    unless `force` (with a reason, recorded as a forced publish)."""
    started = time.perf_counter()
    if version.status == KnowledgeVersion.Status.PRUNED:
        raise version_pruned_error(version)
    if force and not reason.strip():
        raise ApplicationError("A forced publish needs a reason.", field="reason")
    failures = smoke_failures(version)
    if failures and not force:
        raise ApplicationError(
            f"Version {version.version} did not pass its smoke run: {'; '.join(failures)}.",
            code="smoke_failed", status_code=409, extra={"smoke": version.smoke, "failures": failures},
        )
    with transaction.atomic():
        # The alias row lock orders concurrent publishes and rollbacks of one (world, domain).
        latest = _lock_latest(version.world, version.domain)
        version = KnowledgeVersion.objects.select_for_update().get(pk=version.pk)
        # Pruning decides under these same locks (lore.pruning): a prune that got the version's row
        # first has marked it pruned by now, and one that comes after finds it live and keeps it.
        if version.status == KnowledgeVersion.Status.PRUNED:
            raise version_pruned_error(version)
        if latest is not None and latest.version_id == version.pk:
            raise ApplicationError(f"Version {version.version} is already live.", code="conflict",
                                   field="version", status_code=409)
        previous = latest.version if latest is not None else None
        _canary_end(latest, actor=actor, reason=f"ended by the publish of {version.version}")
        _swap(version.world, version.domain, latest, previous, version)
        Alias.objects.filter(world=version.world, domain=version.domain, name=Alias.Name.STAGE,
                             version=version).delete()
        return KnowledgeChange.objects.create(
            tenant=version.tenant, world=version.world, domain=version.domain,
            action=KnowledgeChange.Action.FORCED_PUBLISH if failures else KnowledgeChange.Action.PUBLISH,
            from_version=previous, to_version=version, actor=actor, reason=reason, smoke=version.smoke,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
        )


def _swap(world: World, domain: str, latest: Alias | None, previous: KnowledgeVersion | None,
          target: KnowledgeVersion) -> None:
    if previous is not None:
        KnowledgeVersion.objects.filter(pk=previous.pk).update(status=KnowledgeVersion.Status.RETIRED)
    KnowledgeVersion.objects.filter(pk=target.pk).update(status=KnowledgeVersion.Status.LIVE)
    if latest is None:
        Alias.objects.create(world=world, domain=domain, name=Alias.Name.LATEST, version=target)
    else:
        latest.version = target
        latest.updated_at = timezone.now()
        latest.save(update_fields=["version", "updated_at"])


@transaction.atomic
def lore_version_rollback(*, world: World, domain: str, actor: str, reason: str = "") -> KnowledgeChange:
    """Point `latest` back at the version it held before its current one was published."""
    started = time.perf_counter()
    _check_domain(domain)
    latest = _lock_latest(world, domain)
    if latest is None:
        raise ApplicationError(f"{world.slug}/{domain} has no live version.", code="nothing_to_roll_back",
                               status_code=409)
    # The publish that made the current version live names the one before it (a rollback's own
    # row is not followed, so two rollbacks in a row walk back, they do not undo each other).
    arrival = (KnowledgeChange.objects.filter(world=world, domain=domain, to_version=latest.version,
                                              action__in=[KnowledgeChange.Action.PUBLISH,
                                                          KnowledgeChange.Action.FORCED_PUBLISH])
               .order_by("-id").select_related("from_version").first())
    target = arrival.from_version if arrival is not None else None
    if target is None:
        raise ApplicationError(f"{world.slug}/{domain} {latest.version.version} has no earlier live version to "
                               "roll back to.", code="nothing_to_roll_back", status_code=409)
    current = latest.version
    if target.status == KnowledgeVersion.Status.PRUNED:
        # Beyond LORE_KEEP_VERSIONS rollbacks back (pruning keeps that many, decided under this lock).
        raise version_pruned_error(target, field=None,
                                   doing=f"{world.slug}/{domain} cannot roll back from {current.version}. ")
    _canary_end(latest, actor=actor, reason=f"ended by the rollback to {target.version}")
    _swap(world, domain, latest, current, target)
    return KnowledgeChange.objects.create(
        tenant=world.tenant, world=world, domain=domain, action=KnowledgeChange.Action.ROLLBACK,
        from_version=current, to_version=target, actor=actor, reason=reason, smoke=target.smoke,
        took_ms=round((time.perf_counter() - started) * 1000, 3),
    )


def lore_canary_set(*, world: World, domain: str, share: float, actor: str, force: bool = False,
                    reason: str = "") -> KnowledgeChange:
    """Serve `share` (0–1) of the domain's `latest` searches from the version `stage` points at now, to try it
    on real traffic before publishing it; a canary running already takes the new share (and the stage's
    version, if it moved). Held to the publish gate: the version must have passed its smoke run unless
    `force` (with a reason). Which searches it serves: `lore.selectors.canary_chosen`."""
    started = time.perf_counter()
    _check_domain(domain)
    if not 0.0 <= share <= 1.0:
        raise ApplicationError("A canary's share is between 0 and 1 (0.1: one search in ten).", field="share")
    if force and not reason.strip():
        raise ApplicationError("A forced canary needs a reason.", field="reason")
    with transaction.atomic():
        # The latest alias row lock orders it with publishes and rollbacks, which end a canary.
        latest = _lock_latest(world, domain)
        if latest is None:
            raise ApplicationError(f"{world.slug}/{domain} has no live version: a canary tries the staged version on "
                                   "a share of `latest` searches, so publish one first.", code="no_live_version",
                                   status_code=409)
        stage = (Alias.objects.filter(world=world, domain=domain, name=Alias.Name.STAGE)
                 .select_related("version", "version__world__tenant").first())
        if stage is None:
            raise ApplicationError(f"{world.slug}/{domain} has no staged version to try: upload sources or approve "
                                   "an edit to build one.", code="no_stage", status_code=409)
        version = stage.version
        if version.status == KnowledgeVersion.Status.PRUNED:
            raise version_pruned_error(version, field=None)
        failures = smoke_failures(version)
        if failures and not force:
            raise ApplicationError(
                f"Version {version.version} did not pass its smoke run: {'; '.join(failures)}.",
                code="smoke_failed", status_code=409, extra={"smoke": version.smoke, "failures": failures},
            )
        latest.canary_version, latest.canary_share = version, share
        latest.save(update_fields=["canary_version", "canary_share"])
        return KnowledgeChange.objects.create(
            tenant=world.tenant, world=world, domain=domain, action=KnowledgeChange.Action.CANARY,
            from_version=latest.version, to_version=version, share=share, actor=actor,
            reason=reason, smoke=version.smoke,
            took_ms=round((time.perf_counter() - started) * 1000, 3),
        )


@transaction.atomic
def lore_canary_stop(*, world: World, domain: str, actor: str, reason: str = "") -> KnowledgeChange:
    """End the domain's canary: every `latest` search is served by `latest` again."""
    _check_domain(domain)
    latest = _lock_latest(world, domain)
    change = _canary_end(latest, actor=actor, reason=reason)
    if change is None:
        raise ApplicationError(f"{world.slug}/{domain} runs no canary.", code="no_canary", status_code=409)
    return change


def _canary_end(latest: Alias | None, *, actor: str, reason: str) -> KnowledgeChange | None:
    """Clears the canary of a locked `latest` row and writes its end to the changelog, if it had one. A publish
    ends it (the version it tried is live, or another is, against which it was not tried), and so does a
    rollback."""
    if latest is None or latest.canary_version_id is None:
        return None
    tried = latest.canary_version
    change = KnowledgeChange.objects.create(
        tenant_id=latest.version.tenant_id, world_id=latest.world_id, domain=latest.domain,
        action=KnowledgeChange.Action.CANARY_END, from_version=latest.version, to_version=tried,
        share=latest.canary_share, actor=actor, reason=reason, smoke=tried.smoke,
    )
    latest.canary_version, latest.canary_share = None, 0.0
    latest.save(update_fields=["canary_version", "canary_share"])
    return change


def version_smoke_save(*, version: KnowledgeVersion, smoke: dict) -> None:
    # A version pruned while its smoke queries ran was searched with chunks going: no figures for it.
    saved = KnowledgeVersion.objects.filter(pk=version.pk).exclude(status=KnowledgeVersion.Status.PRUNED).update(
        smoke=smoke)
    pruned = None if saved else KnowledgeVersion.objects.filter(pk=version.pk).select_related("world__tenant").first()
    if pruned is not None:
        raise version_pruned_error(pruned)
    version.smoke = smoke

