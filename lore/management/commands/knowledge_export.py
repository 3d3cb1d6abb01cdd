"""manage.py knowledge_export WORLD FILE: a world's knowledge as JSON (sources, edits, versions, aliases, changelog)."""

from __future__ import annotations

import json
from pathlib import Path

from django.core.management.base import BaseCommand, CommandParser

from lore.backup import knowledge_export
from lore.management.commands._common import add_tenant_argument, tenant_named, world_named


class Command(BaseCommand):
    help = ("Write a world's knowledge to FILE as JSON: sources as uploaded (base64), edits with their audit "
            "trail, versions (built from which sources and edits), aliases and changelog. "
            "`knowledge_import FILE` rebuilds it.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("file", help="Where to write the JSON ('-' for standard output).")
        add_tenant_argument(parser)

    def handle(self, *args: object, **options: object) -> None:
        world = world_named(tenant_named(str(options["tenant"])), str(options["world"]))
        data = knowledge_export(world=world)
        text = json.dumps(data, ensure_ascii=False, indent=1)
        if options["file"] == "-":
            self.stdout.write(text)
            return
        Path(str(options["file"])).write_text(text, encoding="utf-8")
        self.stderr.write(f"{world.slug}: {len(data['sources'])} source(s), {len(data['edits'])} edit(s), "
                          f"{len(data['versions'])} version(s), {len(data['changelog'])} change(s) -> "
                          f"{options['file']}")
