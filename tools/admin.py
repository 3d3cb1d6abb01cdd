"""The tool call log in the admin: read-only, for tracing what a game master or chat client read."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from tools.models import ToolCall


@admin.register(ToolCall)
class ToolCallAdmin(admin.ModelAdmin):
    list_display = ["tool", "tenant", "world", "transport", "outcome", "verdict", "latency_ms", "source_count",
                    "llm_tokens", "created_at"]
    list_filter = ["tool", "transport", "outcome", "verdict", "tenant"]
    list_select_related = ["tenant"]
    date_hierarchy = "created_at"
    readonly_fields = ["tenant", "tool", "transport", "world", "arguments", "sources", "outcome", "verdict", "error",
                       "latency_ms", "llm_tokens", "llm_cost_usd", "created_at"]

    @admin.display(description="sources")
    def source_count(self, obj: ToolCall) -> int:
        return len(obj.sources)

    # A log: written by tool calls only, never edited.
    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: ToolCall | None = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: ToolCall | None = None) -> bool:
        return False
