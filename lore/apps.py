from django.apps import AppConfig


class LoreConfig(AppConfig):
    name = "lore"
    verbose_name = "Game-master knowledge"

    def ready(self) -> None:
        # A bad `knowledge:` section in config/knowledge.yaml stops start-up, naming the key.
        from lore import config

        config.domain_config("srd")
