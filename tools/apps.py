from django.apps import AppConfig


class ToolsConfig(AppConfig):
    name = "tools"
    verbose_name = "Read-only tools (DRF and MCP)"

    def ready(self) -> None:
        # The built-in tools register themselves on import; apps that add tools (campaigns) do the
        # same from their own ready().
        from tools import builtin  # noqa: F401
