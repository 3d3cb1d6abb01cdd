from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from django import forms
from django.contrib import admin, messages
from django.contrib.admin import helpers
from django.db.models import QuerySet
from django.http import HttpRequest
from django.template.response import TemplateResponse
from django.utils import timezone

from memoryhub import services
from memoryhub.auth import key_cache
from memoryhub.exceptions import ApplicationError
from memoryhub.models import ApiKey, ArchivalJob, Conversation, Message, PeriodicRun, Tenant

# The home page opens with the review dashboard: every registered queue's pending count and oldest
# item, and today's decisions (memoryhub.registry.register_review_queue).
admin.site.index_template = "admin/dashboard.html"
admin.site.site_header = "MemoryHub review console"

T = TypeVar("T")


def action_confirmation(model_admin: admin.ModelAdmin, request: HttpRequest, *, template: str, title: str,
                        action: str, objects: Iterable[Any], form: forms.Form, submit_label: str,
                        extra: dict[str, Any] | None = None) -> TemplateResponse:
    """The page an action that needs a reason shows first; `template` extends admin/action_confirmation.html,
    which posts `action` back for `objects` with `apply` set. `extra`: more for the template to show."""
    context = {**model_admin.admin_site.each_context(request), "title": title, "opts": model_admin.model._meta,
               "objects": objects, "form": form, "action": action, "submit_label": submit_label,
               "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME, **(extra or {})}
    return TemplateResponse(request, template, context)


def apply_each(model_admin: admin.ModelAdmin, request: HttpRequest, items: Iterable[T],
               label: Callable[[T], str], apply: Callable[[T], object]) -> int:
    """Applies a service to each selected row; a row the service refuses is reported by name and the
    rest go on (one stale row must not undo an editor's whole selection). Returns how many succeeded."""
    done = 0
    for item in items:
        try:
            apply(item)
            done += 1
        except ApplicationError as exc:
            model_admin.message_user(request, f"{label(item)}: {exc.message}", messages.ERROR)
    return done


class ApiKeyInline(admin.TabularInline):
    model = ApiKey
    extra = 0
    fields = ["name", "prefix", "scopes", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = fields
    can_delete = False

    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # keys are created by the action, which shows the raw key once


@admin.register(Tenant)
class TenantAdmin(admin.ModelAdmin):
    list_display = ["name", "is_active", "created_at"]
    search_fields = ["name"]
    inlines = [ApiKeyInline]
    actions = ["create_api_key"]

    def save_model(self, request: HttpRequest, obj: Tenant, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        # A tenant deactivated here is refused at once by this process, as a revoked key is (the
        # others within API_KEY_CACHE_SECONDS).
        for key_hash in ApiKey.objects.filter(tenant=obj).values_list("key_hash", flat=True):
            key_cache.forget(key_hash)

    def has_create_key_permission(self, request: HttpRequest) -> bool:
        # The key page has no "add" (the raw key is shown once, here), but the permission is the model's.
        return request.user.has_perm(f"{ApiKey._meta.app_label}.add_apikey")

    @admin.action(description="Create an API key (shown once)", permissions=["create_key"])
    def create_api_key(self, request: HttpRequest, queryset: QuerySet[Tenant]) -> None:
        for tenant in queryset:
            # Every scope: the operator narrows it on the key's page if the client needs less.
            _, raw = services.api_key_create(tenant=tenant, name=f"admin:{request.user}",
                                             scopes=ApiKey.Scope.values)
            self.message_user(request, f"{tenant.name}: {raw}  (copy it now: it is not stored)", messages.WARNING)


@admin.register(ApiKey)
class ApiKeyAdmin(admin.ModelAdmin):
    list_display = ["prefix", "name", "tenant", "scopes", "created_at", "last_used_at", "revoked_at"]
    list_filter = ["tenant", ("revoked_at", admin.EmptyFieldListFilter)]
    list_select_related = ["tenant"]
    # Scopes stay editable: an operator widens or narrows what a key may do without a new key.
    fields = ["tenant", "name", "prefix", "scopes", "key_hash", "created_at", "last_used_at", "revoked_at"]
    readonly_fields = ["tenant", "prefix", "key_hash", "created_at", "last_used_at", "revoked_at"]
    actions = ["revoke"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def save_model(self, request: HttpRequest, obj: ApiKey, form: Any, change: bool) -> None:
        super().save_model(request, obj, form, change)
        # Narrowed scopes hold at once in this process: the cached key kept the old ones.
        key_cache.forget(obj.key_hash)

    @admin.action(description="Revoke selected keys", permissions=["change"])
    def revoke(self, request: HttpRequest, queryset: QuerySet[ApiKey]) -> None:
        for key in queryset:
            services.api_key_revoke(api_key=key)
        self.message_user(request, f"{len(queryset)} key(s) revoked")


class ReadOnlyAdmin(admin.ModelAdmin):
    """Records written by the service only: an edit here would silently disagree with what was
    indexed and extracted from them, so the admin shows them and changes nothing."""

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # erasure goes through DELETE /api/v1/users/{id}, which reaches every copy


@admin.register(Conversation)
class ConversationAdmin(ReadOnlyAdmin):
    """A session is opened by its first message and counted by the intake: one added here had no
    tenant (a 500), one edited here would point its messages' counts and extraction elsewhere."""

    list_display = ["user_id", "session_id", "tenant", "message_count", "last_message_at"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    search_fields = ["user_id", "session_id"]


@admin.register(Message)
class MessageAdmin(ReadOnlyAdmin):
    list_display = ["id", "user_id", "role", "speaker", "short_text", "created_at", "tenant"]
    list_filter = ["role", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["user_id", "text", "external_id"]
    date_hierarchy = "created_at"

    @admin.display(description="text")
    def short_text(self, obj: Message) -> str:
        return obj.text[:100]


@admin.register(ArchivalJob)
class ArchivalJobAdmin(ReadOnlyAdmin):
    list_display = ["id", "user_id", "kind", "trigger", "status", "attempts", "next_attempt_at", "created_at",
                    "finished_at", "tenant"]
    list_filter = ["status", "kind", "trigger", "tenant"]
    list_select_related = ["tenant"]
    search_fields = ["user_id"]
    actions = ["run_again"]

    def has_run_again_permission(self, request: HttpRequest) -> bool:
        # The job's page is read-only for everyone; running it again is the model's "change".
        return request.user.has_perm(f"{ArchivalJob._meta.app_label}.change_archivaljob")

    @admin.action(description="Run again (not done jobs; recorded in the history)", permissions=["run_again"])
    def run_again(self, request: HttpRequest, queryset: QuerySet[ArchivalJob]) -> None:
        count = 0
        for job in queryset.exclude(status=ArchivalJob.Status.DONE):
            ArchivalJob.objects.filter(pk=job.pk).update(status=ArchivalJob.Status.PENDING,
                                                         next_attempt_at=timezone.now())
            services.archival_job_enqueue(job_id=job.pk)
            self.log_change(request, job, f"Run again by {request.user} (was {job.status}, "
                                          f"{job.attempts} attempt(s))")
            count += 1
        self.message_user(request, f"{count} job(s) enqueued")


@admin.register(PeriodicRun)
class PeriodicRunAdmin(ReadOnlyAdmin):
    """When the embedded beat last ran each periodic job (a deployment with `celery beat` keeps its
    own schedule file instead): the first place to look when a daily prune seems not to happen."""

    list_display = ["name", "task", "started_at", "finished_at", "succeeded"]
    list_filter = ["succeeded"]
    ordering = ["name"]
