"""Game-master knowledge state read from the database at scrape time (registered in LoreConfig).

A prune run by `manage.py lore_prune` counts into `memoryhub_lore_pruned_total` in its own process,
whose metric files go when it exits; what the versions' rows say reaches every scrape, whoever pruned.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily


def knowledge_versions() -> Iterator[GaugeMetricFamily]:
    from django.db.models import Count, Max

    from lore.models import KnowledgeVersion

    counts = dict(KnowledgeVersion.objects.values_list("status").annotate(n=Count("id")).order_by())
    family = GaugeMetricFamily("memoryhub_lore_versions", "Knowledge versions by status (every tenant and world)",
                               labels=["status"])
    for status in KnowledgeVersion.Status.values:
        family.add_metric([status], counts.get(status, 0))
    yield family
    last = KnowledgeVersion.objects.aggregate(last=Max("pruned_at"))["last"]
    yield GaugeMetricFamily("memoryhub_lore_last_pruned_timestamp_seconds",
                            "When a knowledge version was last pruned (Unix time; 0: never)",
                            value=last.timestamp() if last is not None else 0)
