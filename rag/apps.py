import sys
from typing import Any

from django.apps import AppConfig
from django.db.models.signals import post_migrate


def _vector_width_after_migrate(*, using: str, verbosity: int = 1, **kwargs: Any) -> None:
    """A new database for a model of another width (EMBEDDING_DIMENSIONS) gets vector columns of that
    width at once; one holding vectors is left to `manage.py embedding_resize`, which says what it costs."""
    from django.conf import settings
    from django.db import DEFAULT_DB_ALIAS

    from rag import vector_width

    if using != DEFAULT_DB_ALIAS or len(vector_width.column_widths()) < 2:
        return
    out = kwargs.get("stdout") or sys.stdout
    if vector_width.resize_if_empty():
        if verbosity:
            out.write(f"  vector columns made {settings.EMBEDDING_DIMENSIONS} wide (EMBEDDING_DIMENSIONS)\n")
    elif vector_width.mismatched() and verbosity:
        out.write(f"  the vector columns are not {settings.EMBEDDING_DIMENSIONS} wide (EMBEDDING_DIMENSIONS) and "
                  "hold vectors: run `manage.py embedding_resize`\n")


class RagConfig(AppConfig):
    name = "rag"
    verbose_name = "Retrieval (chunks, documents)"

    def ready(self) -> None:
        from memoryhub import registry
        from rag import services

        registry.register_job_step(
            registry.INDEX, "index",
            prepare=services.dialog_index_prepare,
            apply=lambda job, messages, prepared: services.dialog_index_apply(job, prepared),
        )
        registry.register_eraser("rag", services.user_erase)
        from rag.metrics import chunks_rerank_pending, documents_unfinished

        registry.register_scrape_metrics("documents", documents_unfinished)
        registry.register_scrape_metrics("rerank_pending", chunks_rerank_pending)

        from rag.memories import apps as memories

        memories.ready()
        post_migrate.connect(_vector_width_after_migrate, sender=self, dispatch_uid="rag-vector-width")
