"""`manage.py reindex [--tenant NAME] [--user USER_ID]`: rebuild chunks and vectors from raw inputs.

Run it after changing the embedding provider or `EMBEDDING_DIMENSIONS` (see docs/operations.md),
or the analyser. Each user is rebuilt in its own transaction; searches keep working meanwhile.
Dialog and document chunks are rebuilt from the messages and documents, typed memories and insights
re-embedded from their text, and the user's people re-embedded. Then, without --user, what the apps
register (memoryhub.registry.Reindexer): every active campaign's art cards.
"""

from __future__ import annotations

import time
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from tqdm import tqdm

from memoryhub import events, registry
from memoryhub.management.base import require_migrated
from memoryhub.models import Message, Tenant
from people.models import Person
from people.services.vectors import people_embed_pending
from rag.models import Chunk, Document
from rag.services import reindex


class Command(BaseCommand):
    help = "Rebuild chunks (terms and vectors) from stored messages and documents, with a progress bar."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--tenant", help="tenant name (default: every tenant)")
        parser.add_argument("--user", help="one end user id (needs --tenant)")

    def handle(self, *args: Any, **options: Any) -> None:
        require_migrated()
        if options["user"] and not options["tenant"]:
            raise CommandError("--user needs --tenant")
        tenants = Tenant.objects.order_by("id")
        if options["tenant"]:
            tenants = tenants.filter(name=options["tenant"])
            if not tenants.exists():
                raise CommandError(f"no tenant named {options['tenant']!r}")
        started = time.monotonic()
        grand: dict[str, int] = {}
        for tenant in tenants:
            if options["user"]:
                users = [options["user"]]
                held = (Message.objects.filter(tenant=tenant, user_id=options["user"]).exists()
                        or Chunk.objects.filter(tenant=tenant, user_id=options["user"]).exists()
                        or Person.objects.filter(tenant=tenant, user_id=options["user"]).exists())
                if not held:
                    # It said "reindexed 1 user(s)" of a user it had nothing of (a typo in the id).
                    raise CommandError(f"tenant {tenant.name!r} holds nothing of user {options['user']!r}")
            else:
                users = sorted(
                    set(Message.objects.filter(tenant=tenant).values_list("user_id", flat=True).distinct())
                    | set(Document.objects.filter(tenant=tenant).exclude(user_id="").values_list("user_id", flat=True))
                    | set(Chunk.objects.filter(tenant=tenant, type__in=[Chunk.Type.MEMORY, Chunk.Type.INSIGHT])
                          .values_list("user_id", flat=True).distinct())
                    | set(Person.objects.filter(tenant=tenant).values_list("user_id", flat=True).distinct())
                )
            # One step per user and one for the tenant-wide documents (often the largest), so the
            # bar does not stand at 100% while those are rebuilt.
            with tqdm(total=len(users) + (not options["user"]), desc=f"reindex {tenant.name}", unit="namespace",
                      file=self.stderr._out) as bar:
                totals = reindex(tenant=tenant, user_ids=users, include_tenant_documents=not options["user"],
                                 progress=bar.update)
            with tqdm(total=len(users), desc=f"people vectors {tenant.name}", unit="user",
                      file=self.stderr._out) as bar:
                totals["people"] = 0
                for user_id in users:
                    totals["people"] += len(people_embed_pending(tenant_id=tenant.pk, user_id=user_id, everyone=True))
                    bar.update(1)
            if not options["user"]:
                for reindexer in registry.reindexers.values():
                    units = reindexer.units(tenant)
                    with tqdm(total=len(units), desc=f"{reindexer.label} {tenant.name}", unit="namespace",
                              file=self.stderr._out) as bar:
                        for unit in units:
                            totals[reindexer.name] = totals.get(reindexer.name, 0) + reindexer.run(unit)
                            bar.update(1)
                    totals[f"{reindexer.name}_namespaces"] = len(units)
            for key, value in totals.items():
                grand[key] = grand.get(key, 0) + value
        duration_ms = round((time.monotonic() - started) * 1000, 1)
        others = [] if options["user"] else list(registry.reindexers.values())
        count = grand.get("chunks", 0) + sum(grand.get(r.name, 0) for r in others)
        events.emit("RAG.IndexRebuilt", {"count": count, "duration_ms": duration_ms})
        self.stdout.write(
            f"reindexed {grand.get('users', 0)} user(s): {grand.get('chunks', 0)} chunks from "
            f"{grand.get('messages', 0)} messages and {grand.get('documents', 0)} documents, "
            f"{grand.get('people', 0)} people re-embedded"
            + "".join(f"; {r.label}: {grand.get(r.name, 0)} chunks in {grand.get(f'{r.name}_namespaces', 0)} "
                      "namespace(s)" for r in others)
            + f", in {duration_ms} ms"
        )
