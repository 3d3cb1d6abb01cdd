"""manage.py lore_reindex WORLD DOMAIN [VERSION]: rebuild a version from its kept sources and edits."""

from __future__ import annotations

import time

from django.core.management.base import BaseCommand, CommandError, CommandParser

from lore import services
from lore.management.commands._common import (
    add_tenant_argument,
    cli_actor,
    tenant_named,
    version_named,
    world_named,
)
from lore.models import Alias
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = ("Re-index: build a new staged version from exactly the sources and approved edits of VERSION "
            "(default latest), with today's normaliser, chunker, embedder and `dims`. Chunks whose text and "
            "embedding space are unchanged keep their vectors; publish the result as usual.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("domain", choices=["srd", "lore"])
        parser.add_argument("version", nargs="?", default="latest", help="SemVer or an alias (default: latest)")
        add_tenant_argument(parser)
        parser.add_argument("--as-version", dest="as_version", default=None, help="SemVer; default: next minor.")

    def handle(self, *args: object, **options: object) -> None:
        world = world_named(tenant_named(str(options["tenant"])), str(options["world"]))
        source = version_named(world, str(options["domain"]), str(options["version"]))
        started = time.perf_counter()
        # The build becomes `stage`: a staged version holding work not yet published is no longer the
        # one an editor's next approval builds on (it stays, and can still be published by number).
        stage = Alias.objects.filter(world=world, domain=source.domain, name=Alias.Name.STAGE).select_related(
            "version").first()
        try:
            built = services.knowledge_ingest(
                world=world, domain=source.domain, files=[], actor=cli_actor(),
                version=options["as_version"] and str(options["as_version"]),
                from_sources=list(source.sources.order_by("id")), add_edits=list(source.edits))
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{world.slug}/{built.domain} {source.version} -> {built.version} (staged): "
                          f"{built.entry_count} entries, {built.chunk_count} chunks, {built.reused_chunks} vectors "
                          f"re-used, {time.perf_counter() - started:.1f} s")
        if stage is not None and stage.version_id not in (source.pk, built.pk):
            self.stdout.write(f"stage moved from {stage.version.version} to {built.version}: {stage.version.version} "
                              f"stays as it was (`lore_publish {world.slug} {built.domain} {stage.version.version}` "
                              "publishes it; edits proposed on it are refused as stale against the new stage).")
