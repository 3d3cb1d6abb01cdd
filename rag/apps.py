from django.apps import AppConfig


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
        from rag.metrics import documents_unfinished

        registry.register_scrape_metrics("documents", documents_unfinished)

        from rag.memories import apps as memories

        memories.ready()
