"""`manage.py lore_assert_bench`: lore_assert over the golden set (qa/lore_assert_golden.json), with
its accuracy overall, per language and per expected verdict, and the statements it got wrong."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from lore.models import World
from tools.registry import tool_get

VERDICTS = ("supported", "contradicted", "unknown")


class Command(BaseCommand):
    help = "Print lore_assert's accuracy on a golden set (the demo world: manage.py lore_demo)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--file", default=str(settings.BASE_DIR / "qa" / "lore_assert_golden.json"))
        parser.add_argument("--tenant", help="Tenant name (default: the owner of the golden set's world).")
        parser.add_argument("--offline", action="store_true", help="Never ask the LLM, even when one is set.")
        parser.add_argument("--min-accuracy", type=float, default=0.0, help="Fail below this share (0-1).")

    def handle(self, *args: Any, **options: Any) -> None:
        golden = json.loads(Path(options["file"]).read_text())
        worlds = World.objects.filter(slug=golden["world"]).select_related("tenant")
        if options["tenant"]:
            worlds = worlds.filter(tenant__name=options["tenant"])
        world = worlds.order_by("id").first()
        if world is None:
            raise CommandError(f"No world {golden['world']!r}; load it with manage.py lore_demo.")
        lore_assert = tool_get("lore_assert").function  # direct: a bench run is not a logged tool call
        right: Counter[str] = Counter()
        total: Counter[str] = Counter()
        confusion: Counter[tuple[str, str]] = Counter()
        for item in golden["facts"]:
            result = lore_assert(world.tenant, {"fact": item["fact"], "world": world.slug,
                                                "use_llm": not options["offline"]})
            ok = result["verdict"] == item["expected"]
            confusion[(item["expected"], result["verdict"])] += 1
            for key in ("all", f"lang:{item['language']}", f"expected:{item['expected']}",
                        f"split:{item.get('split', 'dev')}"):
                total[key] += 1
                right[key] += ok
            if not ok:
                self.stdout.write(f"  MISS {item['id']}: expected {item['expected']}, got {result['verdict']} "
                                  f"({result['method']}): {item['fact']}\n        {result['hint'][:160]}")
        for key in sorted(total, key=lambda k: (k != "all", k)):
            self.stdout.write(f"{key:22} {right[key]:3}/{total[key]:<3} {right[key] / total[key]:.1%}")
        self.stdout.write("confusion (expected -> got): " + ", ".join(
            f"{e}->{g}: {confusion[(e, g)]}" for e in VERDICTS for g in VERDICTS if confusion[(e, g)]))
        accuracy = right["all"] / total["all"]
        if accuracy < options["min_accuracy"]:
            raise CommandError(f"Accuracy {accuracy:.1%} is below {options['min_accuracy']:.1%}.")
