"""Prometheus metrics of seed 000's three tables, as `memoryhub_people_*`.

Seed 000 labels them by user_id and person_id; here the label is the tenant, since one series per
end user (or per person) would grow without bound in a multi-tenant service.
"""

from collections.abc import Iterator

from prometheus_client import Counter, Histogram
from prometheus_client.core import GaugeMetricFamily

# People extraction
EXTRACTED = Counter(
    "memoryhub_people_extracted_total", "People operations applied by the archivist", ["tenant", "op_type"]
)
EXTRACTION_DURATION = Histogram(
    "memoryhub_people_extraction_duration_seconds", "Archivist run time (prompt, model, apply)", ["tenant"],
    buckets=(0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
)
DUPLICATES_MERGED = Counter(
    "memoryhub_people_duplicates_merged_total", "Merges of duplicate people (automatic or reviewed)",
    ["tenant", "mode"],
)
# People search
SEARCH_DURATION = Histogram(
    "memoryhub_people_search_duration_seconds", "People search time", ["tenant", "mode"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1),
)
SEARCH_RESULTS = Histogram(
    "memoryhub_people_search_results", "People found per search", ["tenant"],
    buckets=(0, 1, 2, 3, 5, 10, 20, 50),
)
RERANKER_SELECTED = Histogram(
    "memoryhub_people_reranker_selected", "People chosen by the reranker per query", ["tenant"],
    buckets=(0, 1, 2, 3, 5, 10),
)
# People storage (memoryhub_people_total is read at scrape time: people_by_circle below)
MENTIONS = Counter("memoryhub_people_mentions_total", "Mentions recorded (the sum of mention_count)", ["tenant"])


def people_by_circle() -> Iterator[GaugeMetricFamily]:
    """Living people by tenant and circle, counted at scrape time (registered in PeopleConfig)."""
    from django.db.models import Count

    from people.models import Person

    rows = (Person.objects.filter(status=Person.Status.ACTIVE).values_list("tenant_id", "circle")
            .annotate(n=Count("id")).order_by())
    counts = {(tenant_id, circle): n for tenant_id, circle, n in rows}
    family = GaugeMetricFamily("memoryhub_people_total", "Living people by circle", labels=["tenant", "circle"])
    for tenant_id in sorted({tenant_id for tenant_id, _ in counts}):
        for circle in Person.Circle.values:
            family.add_metric([str(tenant_id), circle], counts.get((tenant_id, circle), 0))
    yield family
