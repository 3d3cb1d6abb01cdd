"""What MemoryHub's own management commands share."""

from __future__ import annotations

from django.core.management.base import CommandError
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.executor import MigrationExecutor


def require_migrated() -> None:
    """Stop with a clear message, rather than a missing-table error halfway through, when the
    database lacks migrations (a fresh clone before `make run`, or after a pull)."""
    executor = MigrationExecutor(connections[DEFAULT_DB_ALIAS])
    pending = executor.migration_plan(executor.loader.graph.leaf_nodes())
    if pending:
        names = ", ".join(f"{m.app_label}.{m.name}" for m, _ in pending[:3])
        raise CommandError(f"the database {connections[DEFAULT_DB_ALIAS].settings_dict['NAME']} lacks "
                           f"{len(pending)} migration(s) ({names}{', …' if len(pending) > 3 else ''}): "
                           "run `.venv/bin/python manage.py migrate` first (`make run` does it)")
