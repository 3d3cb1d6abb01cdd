"""manage.py knowledge_import FILE: rebuild a world exported by knowledge_export, every version in order."""

from __future__ import annotations

import json
import time
from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from lore.backup import knowledge_import
from lore.management.commands._common import add_tenant_argument, tenant_named
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = ("Restore a world from a knowledge_export file into a tenant that has no world of that slug: "
            "sources, edits, every version re-ingested in order, aliases and changelog.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("file")
        add_tenant_argument(parser)

    def handle(self, *args: object, **options: object) -> None:
        tenant = tenant_named(str(options["tenant"]))
        try:
            data = json.loads(Path(str(options["file"])).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise CommandError(f"{options['file']}: {exc}") from exc
        if not isinstance(data, dict):
            raise CommandError(f"{options['file']}: not a knowledge export (a JSON object expected).")
        started = time.perf_counter()
        # One bar per version, as lore_ingest shows: a large world's versions each embed for minutes.
        bars: list[tqdm] = []

        def version_started(message: str) -> None:
            if bars:
                bars.pop().close()
            self.stderr.write(message)
            bars.append(tqdm(desc="embed", unit="chunk", file=self.stderr._out, leave=False))

        def embedded(done: int, total: int) -> None:
            if bars:
                bars[-1].total = total
                bars[-1].n = done
                bars[-1].refresh()

        try:
            world = knowledge_import(tenant=tenant, data=data, progress=version_started, embedded=embedded)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        except (KeyError, TypeError, ValueError) as exc:
            raise CommandError(f"{options['file']}: malformed export ({exc!r}); nothing was kept.") from exc
        finally:
            for bar in bars:
                bar.close()
        live = ", ".join(f"{a.domain}@{a.name}={a.version.version}" for a in world.aliases.select_related("version"))
        self.stdout.write(f"{world.slug}: restored {world.versions.count()} version(s) in "
                          f"{time.perf_counter() - started:.1f} s ({live or 'no aliases'})")
