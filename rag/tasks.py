"""Tasks of rag: large documents' indexing jobs and their sweep, the rerankers' vectors of stored turns
and their sweep; beat jobs: TTL cleanup of expired chunks and pruning of the deletion log."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.utils import timezone

from rag import services
from rag.models import ChunkDeletion

# Cached indexes apply deletions within seconds; a week of log is far more than any lag, and an
# index that missed one still never returns the row (results are re-read from the database).
DELETION_LOG_DAYS = 7


@shared_task
def chunks_expire() -> int:
    return services.chunks_expire()


@shared_task
def chunk_deletions_prune() -> int:
    cutoff = timezone.now() - timedelta(days=DELETION_LOG_DAYS)
    deleted, _ = ChunkDeletion.objects.filter(deleted_at__lt=cutoff).delete()
    return deleted


# No Celery retries: a failed document records its next attempt on its row and the sweep, the one
# owner of retries, enqueues it then (as for archival jobs).
@shared_task
def document_index_task(document_id: int) -> str:
    document = services.document_index(document_id=document_id)
    return document.status if document else "missing"


@shared_task
def documents_sweep() -> int:
    return services.documents_sweep()


@shared_task
def chunks_rerank_fill_task(tenant_id: int) -> int:
    """The semantic rerankers' vectors of the tenant's conversation turns stored without them."""
    return services.chunks_rerank_fill(tenant_id=tenant_id)


@shared_task
def chunks_rerank_sweep() -> int:
    return services.chunks_rerank_sweep()
