from django.apps import AppConfig


class MemoryHubConfig(AppConfig):
    name = "memoryhub"
    verbose_name = "MemoryHub kernel"
