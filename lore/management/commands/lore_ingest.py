"""manage.py lore_ingest WORLD DOMAIN PATH...: files (or directories of them) → a new staged version."""

from __future__ import annotations

import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from lore import services
from lore.management.commands._common import add_tenant_argument, cli_actor, tenant_named
from lore.models import World
from lore.normalize import PRESETS, SourceOptions
from memoryhub.exceptions import ApplicationError

SUFFIXES = {".json", ".md", ".markdown"}


def _files(paths: list[str]) -> list[Path]:
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found.extend(sorted(p for p in path.rglob("*") if p.suffix.lower() in SUFFIXES))
        elif path.is_file():
            found.append(path)
        else:
            raise CommandError(f"{raw}: no such file or directory")
    if not found:
        raise CommandError("no .json or .md files found")
    return found


class Command(BaseCommand):
    help = ("Ingest JSON / Markdown sources into a new staged version of a world's domain (srd or lore). "
            "A file's language is --language, else a directory in its path named like one of the world's "
            "languages (data/srd/ru/...), else the world's first language.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("domain", choices=["srd", "lore"])
        parser.add_argument("paths", nargs="+")
        add_tenant_argument(parser)
        parser.add_argument("--language", default="")
        parser.add_argument("--create", action="store_true", help="Create the world if it does not exist.")
        parser.add_argument("--languages", default="en", help="Languages of a world created by --create.")
        parser.add_argument("--as-version", dest="as_version", default=None,
                            help="SemVer of the new version (default: next minor).")
        parser.add_argument("--replace-all", action="store_true",
                            help="Build only from these files, not also from the previous version's sources.")
        parser.add_argument("--preset", choices=PRESETS, default=PRESETS[0])
        parser.add_argument("--id-field", default="index")
        parser.add_argument("--title-field", default="name")
        parser.add_argument("--text-fields", default="", help="Comma-separated; default: every field.")
        parser.add_argument("--entry-level", type=int, default=2)

    def handle(self, *args: object, **options: object) -> None:
        tenant = tenant_named(str(options["tenant"]))
        slug = str(options["world"])
        world = World.objects.filter(tenant=tenant, slug=slug).first()
        try:
            if world is None:
                if not options["create"]:
                    raise CommandError(f"Tenant {tenant.name!r} has no world {slug!r} (add --create).")
                languages = [lang.strip() for lang in str(options["languages"]).split(",") if lang.strip()]
                world = services.world_create(tenant=tenant, slug=slug, languages=languages)
            uploads = []
            for path in _files(list(options["paths"])):  # type: ignore[call-overload]
                language = str(options["language"]) or next(
                    (part for part in reversed(path.parent.parts) if part in world.languages), "")
                uploads.append(services.UploadedFile(path.name, path.read_bytes(), language))
            source_options = SourceOptions(
                preset=str(options["preset"]), id_field=str(options["id_field"]),
                title_field=str(options["title_field"]),
                text_fields=tuple(f for f in str(options["text_fields"]).split(",") if f),
                entry_level=int(options["entry_level"]),  # type: ignore[call-overload]
            )
            started = time.perf_counter()
            with tqdm(desc="embed", unit="chunk", file=self.stderr._out, leave=False) as bar:
                def progress(done: int, total: int) -> None:
                    bar.total = total
                    bar.n = done
                    bar.refresh()

                version = services.knowledge_ingest(
                    world=world, domain=str(options["domain"]), files=uploads, options=source_options,
                    actor=cli_actor(), version=options["as_version"],  # type: ignore[arg-type]
                    replace_all=bool(options["replace_all"]), progress=progress)
            seconds = time.perf_counter() - started
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(
            f"{world.slug}/{version.domain} {version.version} staged: {version.entry_count} entries, "
            f"{version.chunk_count} chunks ({version.reused_chunks} vectors re-used) from {len(uploads)} file(s) "
            f"in {seconds:.1f} s ({version.entry_count / seconds:.0f} entries/s)")
