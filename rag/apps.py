from django.apps import AppConfig


class RagConfig(AppConfig):
    name = "rag"
    verbose_name = "Retrieval (chunks, documents)"

    def ready(self) -> None:
        from memoryhub import registry
        from rag import services

        registry.register_archival_step("index", services.dialog_index_messages)
        registry.register_eraser("rag", services.user_erase)
