"""Campaign memory in the admin, read-only: only the engine writes it (seed 003 §8.4.2, §8.14), so
an operator sees dispositions and their history here but cannot change them."""

from __future__ import annotations

from typing import Any

from django.contrib import admin
from django.http import HttpRequest

from lore.campaigns.models import (
    NPC,
    ArtCard,
    Campaign,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
)


class ReadOnlyMixin:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    extra = 0
    can_delete = False


@admin.register(Campaign)
class CampaignAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["slug", "name", "world", "tenant", "created_at"]
    list_filter = ["tenant"]
    list_select_related = ["world", "tenant"]
    search_fields = ["slug", "name"]


class PartyFlagChangeInline(ReadOnlyInline):
    model = PartyFlagChange
    fields = ["key", "previous", "value", "summary", "created_at"]
    readonly_fields = fields
    ordering = ["-id"]


@admin.register(Party)
class PartyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["slug", "name", "campaign", "flags"]
    list_select_related = ["campaign"]
    inlines = [PartyFlagChangeInline]


@admin.register(EpisodicSummary)
class EpisodicSummaryAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["summary_id", "campaign", "party", "scene_id", "location_id", "when"]
    list_filter = ["campaign"]
    list_select_related = ["campaign", "party"]
    search_fields = ["summary_id", "scene_id", "location_id"]
    exclude = ["chunk"]


class DispositionInline(ReadOnlyInline):
    model = Disposition
    fields = ["party", "value", "updated_at"]
    readonly_fields = fields


@admin.register(NPC)
class NPCAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["npc_id", "name", "archetype", "campaign", "version"]
    list_filter = ["campaign"]
    list_select_related = ["campaign"]
    search_fields = ["npc_id", "name"]
    inlines = [DispositionInline]


@admin.register(DispositionChange)
class DispositionChangeAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["disposition", "delta", "applied", "value_after", "reason", "summary", "created_at"]
    list_select_related = ["disposition__npc", "disposition__party", "summary"]

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ArtCard)
class ArtCardAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["image_id", "scene_id", "campaign", "style_preset", "safe", "created_at"]
    list_filter = ["safe", "campaign"]
    list_select_related = ["campaign"]
