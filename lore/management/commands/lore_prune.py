"""manage.py lore_prune [WORLD] [--tenant NAME] [--dry-run]: old knowledge versions past the retention policy."""

from __future__ import annotations

import time

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser
from tqdm import tqdm

from lore import pruning
from lore.management.commands._common import tenant_named, world_named


class Command(BaseCommand):
    help = ("Prune old knowledge versions: per world and domain, keep the versions an alias points to, those a "
            "rollback can reach within LORE_KEEP_VERSIONS steps, those the last LORE_KEEP_VERSIONS publishes or "
            "rollbacks moved latest from or to, the newest LORE_KEEP_VERSIONS and those younger "
            "than LORE_PRUNE_MIN_AGE_HOURS; delete the chunks of the others (their rows, sources and edits stay: "
            "`lore_reindex WORLD DOMAIN VERSION` rebuilds one). Also finishes deletions an interrupted run left. "
            "Without WORLD and --tenant: every world of every tenant, as the daily beat job does.")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world", nargs="?", default=None, help="One world (of --tenant, default demo).")
        parser.add_argument("--tenant", default=None, help="Only this tenant's worlds (with WORLD: default demo).")
        parser.add_argument("--dry-run", action="store_true", help="Say what would be kept and pruned; change nothing.")

    def handle(self, *args: object, **options: object) -> None:
        tenant = world = None
        if options["tenant"] is not None or options["world"] is not None:
            tenant = tenant_named(str(options["tenant"] or "demo"))
        if tenant is not None and options["world"] is not None:
            world = world_named(tenant, str(options["world"]))
        dry_run = bool(options["dry_run"])
        started = time.perf_counter()
        keep = settings.LORE_KEEP_VERSIONS
        self.stdout.write(f"policy: keep aliased versions, {keep} rollback(s) back, those the "
                          f"last {keep} change(s) of latest named, the newest {keep}, and those "
                          f"younger than {settings.LORE_PRUNE_MIN_AGE_HOURS:g} h"
                          + (" (dry run: nothing changes)" if dry_run else ""))

        def shown(verdicts: list[pruning.Verdict]) -> None:
            if not verdicts:
                return
            first = verdicts[0]
            self.stdout.write(f"{first.world}/{first.domain} (tenant {first.tenant}):")
            for v in verdicts:
                if v.pruned:
                    what = f"{'would prune' if dry_run else 'prune'}  {v.chunk_count:,} chunks"
                else:
                    what = f"keep   {', '.join(v.kept_for)}"
                self.stdout.write(f"  {v.version:<12}{what}")

        bars: dict[str, tqdm] = {}

        def deleted(namespace: str, done: int, total: int) -> None:
            # A bar per namespace: a large version's chunks take a while (thousands a second).
            bar = bars.get(namespace)
            if bar is None:
                for old in bars.values():
                    old.close()
                bar = bars[namespace] = tqdm(desc=f"delete {namespace}", unit="chunk", total=total,
                                             file=self.stderr._out, leave=False)
            bar.total = total
            bar.n = done
            bar.refresh()

        try:
            report = pruning.knowledge_versions_prune(world=world, tenant=tenant, dry_run=dry_run, by=pruning.COMMAND,
                                                      on_verdicts=shown, on_deleted=deleted)
        finally:
            for bar in bars.values():
                bar.close()
        counts = report.counts()
        seconds = time.perf_counter() - started
        if dry_run:
            left = f"; {len(report.namespaces)} pruned version(s) still hold chunks (a run would delete them: " \
                   f"{', '.join(report.namespaces)})" if report.namespaces else ""
            self.stdout.write(f"dry run: would prune {counts['pruned']} version(s) "
                              f"({sum(v.chunk_count for v in report.pruned):,} chunks), keep {counts['kept']}{left}")
            return
        self.stdout.write(f"pruned {counts['pruned']} version(s), kept {counts['kept']}; deleted {counts['chunks']:,} "
                          f"chunks of {counts['namespaces']} namespace(s) in {seconds:.1f} s")
