"""manage.py lore_smoke WORLD DOMAIN VERSION: golden queries against a version, hit@1/5/10 and MRR."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from lore import services, smoke
from lore.management.commands._common import add_tenant_argument, tenant_named, version_named, world_named
from memoryhub.exceptions import ApplicationError


class Command(BaseCommand):
    help = ("Run the golden queries (qa/memory_retrieval_golden/<world>/<domain>.json) against a version "
            "(SemVer, or the alias latest / stage), print hit@1/5/10 and MRR per language and record them "
            "on the version (the publish gate reads them).")

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("world")
        parser.add_argument("domain", choices=["srd", "lore"])
        parser.add_argument("version", help="SemVer or an alias (latest, stage)")
        add_tenant_argument(parser)
        parser.add_argument("--split", choices=["test", "tune", "all"], default="test",
                            help="Golden queries to use: the held-out half (default), the tuning half, or all.")
        parser.add_argument("--golden", default=None, help="Another golden file.")

    def handle(self, *args: object, **options: object) -> None:
        world = world_named(tenant_named(str(options["tenant"])), str(options["world"]))
        version = version_named(world, str(options["domain"]), str(options["version"]))
        split = None if options["split"] == "all" else str(options["split"])
        golden = Path(str(options["golden"])) if options["golden"] else None
        try:
            with tqdm(desc="smoke", unit="query", file=self.stderr._out, leave=False) as bar:
                result = smoke.version_smoke(version=version, split=split, golden_file=golden, progress=bar.update)
        except ApplicationError as exc:
            raise CommandError(exc.message) from exc
        self.stdout.write(f"{version} ({result['split']} split of {result['golden']})")
        self.stdout.write(f"{'language':<10}{'n':>5}{'hit@1':>8}{'hit@5':>8}{'hit@10':>8}{'MRR':>8}")
        for language, f in [*result["by_language"].items(), ("all", result["overall"])]:
            self.stdout.write(f"{language:<10}{f['n']:>5}{f['hit@1']:>8.3f}{f['hit@5']:>8.3f}{f['hit@10']:>8.3f}"
                              f"{f['mrr']:>8.3f}")
        for miss in result["misses"]:
            lacking = f", expected but not in the version: {miss['missing']}" if miss.get("missing") else ""
            self.stdout.write(f"  miss {miss['id']}: rank {miss['rank']}, top {miss['top']}{lacking}")
        failures = services.smoke_failures(version)
        verdict = "passes the publish gate" if not failures else f"fails the publish gate: {'; '.join(failures)}"
        self.stdout.write(verdict)
