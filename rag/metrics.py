"""Prometheus metrics of rag read at scrape time (registered in RagConfig)."""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily


def documents_unfinished() -> Iterator[GaugeMetricFamily]:
    """Documents whose indexing job has not finished, by status: a `failed` one waits for its
    retry, and one `pending` or `indexing` for long means no worker runs the jobs. Counted over
    the partial index of unfinished documents, so a scrape never reads the ready ones."""
    from django.db.models import Count

    from rag.models import Document

    counts = dict(Document.objects.exclude(status=Document.Status.READY).values_list("status")
                  .annotate(n=Count("id")).order_by())
    family = GaugeMetricFamily("memoryhub_documents_unfinished", "Documents not yet indexed, by status",
                               labels=["status"])
    for status in (Document.Status.PENDING, Document.Status.INDEXING, Document.Status.FAILED):
        family.add_metric([status], counts.get(status, 0))
    yield family
