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


def chunks_rerank_pending() -> Iterator[GaugeMetricFamily]:
    """Conversation turns still waiting for their reranker vectors (rag.services.chunks_rerank_fill): a few
    for a moment after each batch; many that stay mean no worker runs the fills. Counted over the partial
    index of pending chunks."""
    from rag.models import Chunk

    family = GaugeMetricFamily("memoryhub_chunks_rerank_pending",
                               "Conversation turns stored and waiting for their semantic reranker vectors")
    family.add_metric([], Chunk.objects.filter(rerank_pending=True).count())
    yield family
