"""Campaign memory in the admin, read-only: only the engine writes it (seed 003 §8.4.2, §8.14), so
an operator sees dispositions and their history here but cannot change them. What an operator may
decide is retention (seed §8.9): a campaign's episode period, and finishing (archiving) it; both go
through the services and leave a `CampaignEvent`. A campaign is deleted over the API or from its page
here (*Delete campaign…*), both through `campaign_delete`, which leaves a `CampaignDeletion` receipt,
listed here read-only. The engine's threads and their checkpoints (the short-term layer) are listed
read-only too."""

from __future__ import annotations

import json
from typing import Any

from django.contrib import admin, messages
from django.contrib.admin.utils import unquote
from django.core.exceptions import PermissionDenied
from django.db.models import Count, QuerySet
from django.forms import ModelForm
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from lore.campaigns import sealing, selectors, services, threads
from lore.campaigns.models import (
    NPC,
    ArtCard,
    Campaign,
    CampaignDeletion,
    CampaignEvent,
    Checkpoint,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    PartyFlagChange,
    PendingWrite,
    SceneAssembly,
    Thread,
)
from memoryhub.exceptions import ApplicationError


class ReadOnlyMixin:
    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    # A raw delete would skip what the services keep in step (a summary's episode chunk, a party's flags).
    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


class ReadOnlyInline(ReadOnlyMixin, admin.TabularInline):
    extra = 0
    can_delete = False


class CampaignEventInline(ReadOnlyInline):
    model = CampaignEvent
    fields = ["created_at", "action", "actor", "detail"]
    readonly_fields = fields
    ordering = ["-id"]


@admin.register(Campaign)
class CampaignAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "world", "tenant", "status", "episode_ttl_days", "created_at"]
    list_filter = ["status", "tenant"]
    list_select_related = ["world", "tenant"]
    search_fields = ["slug", "name"]
    change_form_template = "admin/lore/campaign/change_form.html"

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        # Off, and with it the list's "Delete selected": a raw delete left the campaign's episode chunks and
        # log entries behind. The page's *Delete campaign…* deletes through `services.campaign_delete`.
        return False

    def has_delete_campaign_permission(self, request: HttpRequest) -> bool:
        # Django's delete is off (above), but deleting through the service is the model's "delete".
        return request.user.has_perm(f"{Campaign._meta.app_label}.delete_campaign")

    # Only the episode period is editable (validated 90–180 by the field); the rest is the engine's.
    fields = ["slug", "name", "world", "tenant", "tone_rules", "status", "archived_at", "created_at",
              "episode_ttl_days"]
    readonly_fields = ["slug", "name", "world", "tenant", "tone_rules", "status", "archived_at", "created_at"]
    inlines = [CampaignEventInline]
    actions = ["archive"]

    def has_add_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: Campaign | None = None) -> bool:
        # An archived campaign is read-only, its settings included.
        return super().has_change_permission(request, obj) and not (obj is not None and obj.is_archived)

    def save_model(self, request: HttpRequest, obj: Campaign, form: ModelForm, change: bool) -> None:
        services.campaign_update(campaign=obj, episode_ttl_days=obj.episode_ttl_days, actor=f"admin:{request.user}")

    @admin.action(description="Finish and archive (read-only, out of search; cannot be undone)",
                  permissions=["change"])
    def archive(self, request: HttpRequest, queryset: QuerySet[Campaign]) -> None:
        done = 0
        for campaign in queryset.select_related("tenant"):
            done += services.campaign_archive(campaign=campaign, actor=f"admin:{request.user}").archived
        self.message_user(request, f"{done} campaign(s) archived", messages.SUCCESS)

    def get_urls(self) -> list[URLPattern]:
        # Before Django's own: its "<object_id>/" catch-all would take the path.
        own = [path("<path:object_id>/delete-campaign/", self.admin_site.admin_view(self.delete_campaign_view),
                    name="lore_campaign_delete_campaign")]
        return own + super().get_urls()

    def change_view(self, request: HttpRequest, object_id: str, form_url: str = "",
                    extra_context: dict[str, Any] | None = None) -> HttpResponse:
        extra = {"can_delete_campaign": self.has_delete_campaign_permission(request), **(extra_context or {})}
        return super().change_view(request, object_id, form_url, extra)

    def delete_campaign_view(self, request: HttpRequest, object_id: str) -> HttpResponse:
        """One campaign at a time, from its page: a page of what goes (counts read cheaply, not Django's
        collected list of every row, which for a long campaign is thousands of lines), then, posted with
        `confirm`, `services.campaign_delete`. A GET never deletes; the admin view checks the CSRF token.
        No admin log entry: the service removes those naming the campaign, and its receipt is the record."""
        if not self.has_delete_campaign_permission(request):
            raise PermissionDenied
        campaign = self.get_object(request, unquote(object_id))
        if campaign is None:
            return self._get_obj_does_not_exist_redirect(request, self.opts, object_id)
        if request.method == "POST" and request.POST.get("confirm") == "yes":
            try:
                deleted = services.campaign_delete(campaign=campaign, actor=f"admin:{request.user}")
            except ApplicationError as exc:  # deleted by another request since the page was shown
                self.message_user(request, exc.message, messages.ERROR)
                return HttpResponseRedirect(reverse("admin:lore_campaign_changelist"))
            receipt = CampaignDeletion.objects.filter(tenant_id=campaign.tenant_id,
                                                      campaign_pk=campaign.pk).latest("pk")
            counts = ", ".join(f"{count} {kind.replace('_', ' ')}" for kind, count in deleted.items() if count)
            self.message_user(request, format_html(
                'Campaign {} of {} deleted ({}); receipt <a href="{}">#{}</a>.', campaign.slug, campaign.tenant,
                counts or "nothing in it", reverse("admin:lore_campaigndeletion_change", args=[receipt.pk]),
                receipt.pk), messages.SUCCESS)
            return HttpResponseRedirect(reverse("admin:lore_campaign_changelist"))
        context = {**self.admin_site.each_context(request), "title": f"Delete campaign {campaign.slug}",
                   "opts": self.opts, "original": campaign, "contents": selectors.campaign_contents(campaign)}
        return TemplateResponse(request, "admin/lore/campaign/delete_campaign.html", context)


class PartyFlagChangeInline(ReadOnlyInline):
    """A flag's history; a change not applied came from a summary older (by `when`) than the one in
    `superseded_by`, whose value the party kept."""

    model = PartyFlagChange
    fields = ["key", "previous", "value", "applied", "summary", "scene_when", "superseded_by", "created_at"]
    readonly_fields = fields
    ordering = ["-id"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[PartyFlagChange]:
        return super().get_queryset(request).select_related("summary", "superseded_by")

    @admin.display(description="scene's when")
    def scene_when(self, obj: PartyFlagChange) -> Any:
        return obj.summary.when


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
    """Towards each party, and towards single heroes of it (`hero_id`; empty: the party)."""

    model = Disposition
    fields = ["party", "hero_id", "value", "updated_at"]
    readonly_fields = fields
    ordering = ["party", "hero_id"]


@admin.register(NPC)
class NPCAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["npc_id", "name", "archetype", "campaign", "version"]
    list_filter = ["campaign"]
    list_select_related = ["campaign"]
    search_fields = ["npc_id", "name"]
    inlines = [DispositionInline]


class TowardsFilter(admin.SimpleListFilter):
    title = "towards"
    parameter_name = "towards"

    def lookups(self, request: HttpRequest, model_admin: Any) -> list[tuple[str, str]]:
        return [("party", "the party"), ("hero", "one hero")]

    def queryset(self, request: HttpRequest, queryset: QuerySet[DispositionChange]) -> QuerySet[DispositionChange]:
        if self.value() == "party":
            return queryset.filter(disposition__hero_id="")
        if self.value() == "hero":
            return queryset.exclude(disposition__hero_id="")
        return queryset


@admin.register(DispositionChange)
class DispositionChangeAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["disposition", "towards", "delta", "applied", "value_after", "reason", "summary", "created_at"]
    list_filter = [TowardsFilter]
    list_select_related = ["disposition__npc", "disposition__party", "summary"]
    search_fields = ["disposition__npc__npc_id", "disposition__hero_id", "summary__summary_id"]

    @admin.display(description="towards")
    def towards(self, obj: DispositionChange) -> str:
        return obj.disposition.towards

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False


@admin.register(ArtCard)
class ArtCardAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["image_id", "scene_id", "campaign", "style_preset", "safe", "created_at"]
    list_filter = ["safe", "campaign"]
    list_select_related = ["campaign"]


@admin.register(SceneAssembly)
class SceneAssemblyAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The turn records behind the quality figures: what each scene-context answer returned and what
    the engine reported it used."""

    list_display = ["id", "campaign", "party", "context_tokens", "degraded", "used_count", "feedback_at",
                    "created_at"]
    list_filter = ["degraded", "campaign"]
    list_select_related = ["campaign"]
    date_hierarchy = "created_at"

    @admin.display(description="used / returned")
    def used_count(self, obj: SceneAssembly) -> str:
        return "-" if obj.used is None else f"{len(obj.used)} / {len(obj.sources)}"


@admin.register(CampaignDeletion)
class CampaignDeletionAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """Receipts of campaigns deleted over the API or from the admin: the id, who, when and the counts, no
    content."""

    list_display = ["slug", "world", "tenant", "actor", "created_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    search_fields = ["slug"]
    date_hierarchy = "created_at"


def _shown(stored: Any, sealed_by: str) -> str:
    """A stored value as JSON, unsealed: the operator reviews what the engine wrote, whatever the storage.
    A row THREAD_STATE_KEY cannot open says so instead of failing the page."""
    try:
        value = sealing.unseal(stored, sealed_by)
    except sealing.StateKeyError:
        return f"(encrypted by key {sealed_by}; THREAD_STATE_KEY cannot open it)"
    return json.dumps(value, ensure_ascii=False, indent=1)


class CheckpointInline(ReadOnlyInline):
    model = Checkpoint
    fields = ["step", "checkpoint_id", "checkpoint_ns", "parent_checkpoint_id", "created_at", "sealed_by",
              "state_shown"]
    readonly_fields = fields
    ordering = ["-step"]

    @admin.display(description="state")
    def state_shown(self, obj: Checkpoint) -> str:
        return _shown(obj.state, obj.sealed_by)


class PendingWriteInline(ReadOnlyInline):
    model = PendingWrite
    fields = ["task_id", "idx", "channel", "task_path", "created_at", "value_shown"]
    readonly_fields = fields
    ordering = ["task_path", "task_id", "idx"]

    @admin.display(description="value")
    def value_shown(self, obj: PendingWrite) -> str:
        return _shown(obj.value, obj.sealed_by)


@admin.register(Thread)
class ThreadAdmin(ReadOnlyMixin, admin.ModelAdmin):
    """The short-term layer (`lore.campaigns.threads`): the engine's thread state, its checkpoints newest
    first. Read-only: only the engine writes it, and it expires its TTL (its own, or THREAD_TTL_HOURS)
    after its last write."""

    list_display = ["thread_id", "campaign", "tenant", "last_step", "checkpoint_count", "ttl_hours", "expires",
                    "updated_at", "created_at"]
    list_filter = ["campaign", "tenant"]
    list_select_related = ["campaign", "tenant"]
    search_fields = ["thread_id"]
    date_hierarchy = "updated_at"
    inlines = [CheckpointInline]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Thread]:
        return super().get_queryset(request).annotate(checkpoint_total=Count("checkpoints"))

    @admin.display(description="checkpoints kept", ordering="checkpoint_total")
    def checkpoint_count(self, obj: Thread) -> int:
        return obj.checkpoint_total  # type: ignore[attr-defined]

    @admin.display(description="expires")
    def expires(self, obj: Thread) -> Any:
        return threads.expires_at(obj)


@admin.register(Checkpoint)
class CheckpointAdmin(ReadOnlyMixin, admin.ModelAdmin):
    list_display = ["checkpoint_id", "thread", "checkpoint_ns", "step", "created_at"]
    list_select_related = ["thread__campaign"]
    search_fields = ["checkpoint_id", "thread__thread_id"]
    raw_id_fields = ["thread"]
    date_hierarchy = "created_at"
    fields = ["thread", "checkpoint_id", "step", "checkpoint_ns", "parent_checkpoint_id", "created_at", "sealed_by",
              "state_shown", "metadata_shown"]
    readonly_fields = fields
    inlines = [PendingWriteInline]

    @admin.display(description="state")
    def state_shown(self, obj: Checkpoint) -> str:
        return _shown(obj.state, obj.sealed_by)

    @admin.display(description="metadata")
    def metadata_shown(self, obj: Checkpoint) -> str:
        return _shown(obj.metadata, obj.sealed_by)
