from django.apps import AppConfig


class ToolsConfig(AppConfig):
    name = "tools"
    verbose_name = "Read-only tools (DRF and MCP)"

    def ready(self) -> None:
        # The tools register themselves on import: the built-in ones and the campaign tools
        # (tools reads lore, never the other way round); `quality` adds the contradiction rate to a
        # world's quality page (lore.quality).
        from lore.campaigns.services import register_campaign_eraser
        from memoryhub import registry
        from tools import builtin, campaign, quality, services  # noqa: F401

        registry.register_eraser("tools", services.user_erase)
        register_campaign_eraser("tools", services.campaign_erase)
