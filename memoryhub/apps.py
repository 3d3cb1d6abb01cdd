from django.apps import AppConfig


class MemoryHubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "MemoryHub kernel"

    def ready(self) -> None:
        from memoryhub import openapi  # noqa: F401  (registers the OpenAPI auth extension)
