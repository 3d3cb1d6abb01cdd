"""`manage.py embedding_resize [--yes] [--no-reindex]`: make the vector columns EMBEDDING_DIMENSIONS wide."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.core.management import call_command
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.db.models import Q

from memoryhub.embeddings import get_embedder
from memoryhub.management.base import require_migrated
from rag import vector_width
from rag.models import TENANT_NAMESPACE, Namespace

# What `reindex` rebuilds: users' namespaces, the tenant-wide documents and campaigns' art cards.
REINDEXED = (Q(name__startswith="user:") | Q(name=TENANT_NAMESPACE)
             | Q(name__startswith="campaign:", name__endswith=":art"))


class Command(BaseCommand):
    help = ("Make the vector columns (chunks, people) as wide as EMBEDDING_DIMENSIONS: alter them, re-embed every "
            "user's chunks and people (`reindex`) and build the HNSW index at the new width. Stop the service "
            "first and start it again with the new setting. Knowledge versions are rebuilt by `lore_reindex` "
            "(printed). Run again, it finishes what an interrupted run left.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--yes", action="store_true", help="Do not ask before altering the columns.")
        parser.add_argument("--no-reindex", action="store_true",
                            help="Only alter the columns and build the index; run `reindex` yourself (until then "
                                 "the old vectors' namespaces are searched by their words alone).")

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        width = settings.EMBEDDING_DIMENSIONS
        started = time.monotonic()
        widths = vector_width.column_widths()
        self.stdout.write("vector columns: " + ", ".join(f"{table} {have}" for table, have in widths.items())
                          + f"; EMBEDDING_DIMENSIONS {width}")
        wrong = vector_width.mismatched(width)
        if wrong:
            # What reindex re-embeds: knowledge versions and episodic summaries are not (printed at the end).
            chunks = sum(Namespace.objects.filter(REINDEXED).values_list("chunk_count", flat=True))
            self.stdout.write(f"to alter: {', '.join(wrong)} to vector({width}); {chunks:,} chunk(s) will be "
                              f"re-embedded{' by reindex' if not options['no_reindex'] else ' when you run reindex'}, "
                              "people's vectors made again; searches use words alone meanwhile")
            if not options["yes"] and not self._confirmed():
                raise CommandError("nothing changed")
            report = vector_width.vectors_resize(width)
            self.stdout.write(f"altered {', '.join(report.altered)} in {report.seconds:.1f} s "
                              f"({report.chunks:,} chunk vectors kept apart until reindexed, {report.people:,} "
                              "people's vectors cleared)")
        current = get_embedder().name
        stale = (Namespace.objects.filter(REINDEXED)
                 .exclude(vector_space__in=["", current]).exclude(chunk_count=0))
        if stale.exists() and not options["no_reindex"]:
            if not wrong and not options["yes"]:
                # A run again after an interrupted one: the columns are right, what is left is re-embedding.
                self.stdout.write(f"{stale.count()} namespace(s) hold vectors of another width or embedder")
                if not self._confirmed("Re-embed them now (reindex)?"):
                    raise CommandError("nothing changed")
            # Before the index: the rewritten chunks are then indexed once, not once as they were and again.
            call_command("reindex", stdout=self.stdout, stderr=self.stderr)
        elif stale.exists():
            self.stdout.write(f"{stale.count()} namespace(s) hold vectors of another width or embedder: run "
                              "`manage.py reindex`")
        if vector_width.hnsw_index_create(width):
            self.stdout.write(f"built the HNSW index at halfvec({width})")
        self._knowledge_left(current)
        if wrong or stale.exists():
            self.stdout.write(f"done in {time.monotonic() - started:.1f} s; start the service with "
                              f"EMBEDDING_DIMENSIONS={width}")
        else:
            self.stdout.write("nothing to do: the columns, the index and the vectors have that width")

    def _confirmed(self, question: str = "Alter the columns now? The service must be stopped.") -> bool:
        try:
            answer = input(f"{question} [y/N] ")
        except EOFError:
            return False
        return answer.strip().lower() in {"y", "yes"}

    def _knowledge_left(self, current: str) -> None:
        """Knowledge versions are immutable: a new one is built with today's embedder and published. A
        campaign's episodic summaries get their vectors again when they are written again."""
        episodes = (Namespace.objects.filter(name__startswith="campaign:", name__endswith=":episode")
                    .exclude(vector_space__in=["", current])
                    .exclude(chunk_count=0).count())
        if episodes:
            self.stdout.write(f"{episodes} campaign(s)' episodic summaries are searched by their words until they "
                              "are written again")
        left = (Namespace.objects.filter(name__startswith="lore:").exclude(vector_space__in=["", current])
                .exclude(chunk_count=0).select_related("tenant").order_by("tenant__name", "name"))
        seen: set[tuple[str, str, str]] = set()
        for namespace in left:
            _, world, domain, _version = namespace.name.split(":", 3)
            if (namespace.tenant.name, world, domain) in seen:
                continue
            seen.add((namespace.tenant.name, world, domain))
            self.stdout.write(f"knowledge {world}/{domain} (tenant {namespace.tenant.name}) is searched by its "
                              f"words until a version at the new width is built and published: `manage.py "
                              f"lore_reindex {world} {domain} --tenant {namespace.tenant.name}`, then `lore_smoke` "
                              "and `lore_publish` with the version it prints")
