"""Lore in the admin: worlds (with their quality page), versions with smoke / publish / rollback
actions, the changelog (read-only)."""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils.html import format_html

from lore import builds, pruning, services, smoke
from lore.models import Alias, KnowledgeBuild, KnowledgeChange, KnowledgeVersion, Source, World
from memoryhub import deferred
from memoryhub.admin import action_confirmation, apply_each
from memoryhub.exceptions import ApplicationError

QUALITY_PERIODS = (7, 30, 90)


class ForcedPublishForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 3, "cols": 80}), max_length=2000,
                             help_text="Why it goes live without a passing smoke run; kept in the changelog.")


class PruneForm(forms.Form):
    reason = forms.CharField(widget=forms.Textarea(attrs={"rows": 2, "cols": 80}), max_length=2000, required=False,
                             help_text="Optional; kept with the world's history beside who pruned what.")


@admin.register(World)
class WorldAdmin(admin.ModelAdmin):
    list_display = ["slug", "name", "tenant", "languages", "created_at", "quality_link"]
    list_filter = ["tenant"]
    list_select_related = ["tenant"]
    search_fields = ["slug", "name"]
    readonly_fields = ["quality_link"]
    actions = ["prune_versions"]

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a raw delete left every version's chunks behind, owned by no world

    @admin.action(description="Prune old versions… (the retention policy; recorded in the history)",
                  permissions=["change"])
    def prune_versions(self, request: HttpRequest, queryset: QuerySet[World]) -> HttpResponse | None:
        """What the daily beat job does, for these worlds now: first a page of what would be kept (and
        why) and pruned, then, confirmed, the versions are marked pruned here and their chunks deleted
        by a task (a large version's take longer than a request should)."""
        from lore.tasks import knowledge_versions_prune

        worlds = list(queryset.select_related("tenant").order_by("tenant__name", "slug"))
        form = PruneForm(request.POST if "apply" in request.POST else None)
        if "apply" in request.POST and form.is_valid():
            reason = form.cleaned_data["reason"].strip()
            total = 0
            for world in worlds:
                report = pruning.knowledge_versions_prune(
                    world=world, delete=False,
                    by=f"{request.user} in the admin{f': {reason}' if reason else ''}")
                total += len(report.pruned)
                if report.pruned or report.namespaces:
                    gone = ", ".join(f"{v.domain} {v.version}" for v in report.pruned) or "none"
                    self.log_change(request, world, f"Pruned old versions by {request.user}: {gone}"
                                                    f"{f' ({reason})' if reason else ''}")
                    deferred.dispatch(knowledge_versions_prune, world.pk, what=f"prune of {world.slug}")
            self.message_user(request, f"{total} version(s) of {len(worlds)} world(s) pruned; their chunks are "
                                       "being deleted in the background.")
            return None
        plan = [(world, verdict) for world in worlds for verdict in
                pruning.knowledge_versions_prune(world=world, dry_run=True).verdicts]
        pruned = sum(1 for _, verdict in plan if verdict.pruned)
        return action_confirmation(
            self, request, template="admin/lore/world/prune_confirmation.html",
            title="Prune old knowledge versions", action="prune_versions", objects=worlds, form=form,
            submit_label=f"Prune {pruned} version(s)",
            extra={"plan": plan, "keep_versions": settings.LORE_KEEP_VERSIONS,
                   "min_age_hours": settings.LORE_PRUNE_MIN_AGE_HOURS})

    @admin.display(description="quality")
    def quality_link(self, obj: World) -> str:
        if obj.pk is None:
            return "-"
        return format_html('<a href="{}">game-master quality figures</a>',
                           reverse("admin:lore_world_quality", args=[obj.pk]))

    def get_urls(self) -> list[URLPattern]:
        own = [path("<int:world_id>/quality/", self.admin_site.admin_view(self.quality_view),
                    name="lore_world_quality")]
        return own + super().get_urls()

    def quality_view(self, request: HttpRequest, world_id: int) -> HttpResponse:
        """Seed 003 §8.10 per world: hit-rate, fusion gain, context tokens, cost per turn,
        contradiction rate, drift, with daily plots over the chosen period."""
        from lore.quality import world_quality

        world = get_object_or_404(World.objects.select_related("tenant"), pk=world_id)
        if not self.has_view_permission(request, world):
            raise PermissionDenied
        days = int(request.GET["days"]) if request.GET.get("days", "") in {str(d) for d in QUALITY_PERIODS} else 30
        started = time.perf_counter()
        sections = world_quality(world, days)
        context = {**self.admin_site.each_context(request), "title": f"Game-master quality: {world.slug}",
                   "world": world, "opts": self.model._meta, "sections": sections, "days": days,
                   "periods": QUALITY_PERIODS, "took_ms": (time.perf_counter() - started) * 1000}
        return TemplateResponse(request, "admin/lore/world/quality.html", context)


@admin.register(Source)
class SourceAdmin(admin.ModelAdmin):
    list_display = ["filename", "language", "domain", "world", "format", "sha256", "uploaded_by", "created_at"]
    list_filter = ["domain", "language", "format"]
    list_select_related = ["world"]
    # Sources are the raw record versions are rebuilt from: never edited in place.
    exclude = ["content"]
    readonly_fields = ["tenant", "world", "domain", "filename", "language", "format", "options", "sha256",
                       "uploaded_by", "created_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # the raw record versions are rebuilt from (knowledge_import, lore_reindex)


@admin.register(KnowledgeVersion)
class KnowledgeVersionAdmin(admin.ModelAdmin):
    # The tenant beside each row: two tenants' "dnd5e:srd:1.0.0" read the same without it.
    list_display = ["__str__", "tenant", "status", "entry_count", "chunk_count", "reused_chunks", "smoke_hit5",
                    "created_at", "pruned_at"]
    list_filter = ["status", "domain", "tenant", "world"]
    list_select_related = ["world", "tenant"]
    search_fields = ["world__slug", "version", "tenant__name"]
    readonly_fields = ["tenant", "world", "domain", "version", "status", "namespace", "sources", "edits",
                       "entry_count", "chunk_count", "reused_chunks", "smoke", "created_by", "created_at",
                       "pruned_at", "pruned_by"]
    actions = ["run_smoke", "publish", "force_publish", "rollback"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        # A raw delete kept the version's chunks and cleared its edits' produced_version: the world's
        # *Prune old versions…* is the way.
        return False

    @admin.action(description="Run the smoke queries (the golden file; publishing needs a pass)",
                  permissions=["change"])
    def run_smoke(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> None:
        # So an editor who approved an edit can publish the version it built without a shell
        # (`manage.py lore_smoke` does the same). Searches only: it changes nothing but the figures.
        for version in queryset.select_related("world"):
            try:
                result = smoke.version_smoke(version=version)
            except ApplicationError as exc:
                self.message_user(request, f"{version}: {exc.message}", messages.ERROR)
                continue
            failures = services.smoke_failures(version)
            figures = ", ".join(f"{lang} hit@5 {f['hit@5']:.2f}" for lang, f in result["by_language"].items())
            if failures:
                self.message_user(request, f"{version}: smoke failed ({'; '.join(failures)})", messages.WARNING)
            else:
                self.message_user(request, f"{version}: smoke passed ({figures})")

    @admin.display(description="smoke hit@5 by language")
    def smoke_hit5(self, obj: KnowledgeVersion) -> str:
        by_language = (obj.smoke or {}).get("by_language") or {}
        return ", ".join(f"{lang} {f['hit@5']:.2f}" for lang, f in by_language.items()) or "-"

    def _several_per_domain(self, request: HttpRequest, versions: Iterable[KnowledgeVersion]) -> bool:
        """`latest` names one version: of two ticked for one world and domain, publishing each in turn
        left it on whichever came last, the older one in the list's order, under "2 version(s) published".
        Says so and returns True when the selection holds such a pair."""
        chosen: dict[tuple[str, str], list[str]] = defaultdict(list)
        for version in versions:
            chosen[(version.world.slug, version.domain)].append(version.version)
        several = {index: numbers for index, numbers in chosen.items() if len(numbers) > 1}
        for (world, domain), numbers in sorted(several.items()):
            self.message_user(request, f"Nothing was published: {', '.join(sorted(numbers))} of {world}/{domain} are "
                                       "selected, but latest points to one version: select the one to publish.",
                              messages.ERROR)
        return bool(several)

    @admin.action(description="Publish (move latest here; needs a passing smoke run)", permissions=["change"])
    def publish(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> None:
        if self._several_per_domain(request, queryset.select_related("world")):
            return
        done = apply_each(self, request, queryset.select_related("world"), str,
                          lambda version: services.lore_version_publish(version=version, actor=f"admin:{request.user}"))
        self.message_user(request, f"{done} version(s) published")

    @admin.action(description="Publish despite the smoke run… (with a reason)", permissions=["change"])
    def force_publish(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> HttpResponse | None:
        # The API's `force`: a world with no golden file (every new one: the file lives on the server,
        # in LORE_GOLDEN_DIR) can run no smoke, so an editor who approved its edits could never publish
        # them from the admin. Recorded as a forced publish with the reason, as the API records it.
        form = ForcedPublishForm(request.POST if "apply" in request.POST else None)
        versions = queryset.select_related("world").order_by("world__slug", "domain", "id")
        if self._several_per_domain(request, versions):
            return None
        if "apply" in request.POST and form.is_valid():
            done = apply_each(self, request, versions, str, lambda version: services.lore_version_publish(
                version=version, actor=f"admin:{request.user}", force=True, reason=form.cleaned_data["reason"]))
            self.message_user(request, f"{done} version(s) published (forced)")
            return None
        return action_confirmation(
            self, request, template="admin/lore/knowledgeversion/force_publish_confirmation.html",
            title="Publish without a passing smoke run", action="force_publish", objects=versions, form=form,
            submit_label=f"Publish {len(versions)} version(s)")

    @admin.action(description="Roll latest back to the previous live version", permissions=["change"])
    def rollback(self, request: HttpRequest, queryset: QuerySet[KnowledgeVersion]) -> None:
        indexes = sorted({(v.world, v.domain) for v in queryset.select_related("world")},
                         key=lambda index: (index[0].slug, index[1]))
        done = apply_each(self, request, indexes, lambda index: f"{index[0]}/{index[1]}",
                          lambda index: services.lore_version_rollback(world=index[0], domain=index[1],
                                                                       actor=f"admin:{request.user}"))
        self.message_user(request, f"{done} rollback(s)")


@admin.register(KnowledgeBuild)
class KnowledgeBuildAdmin(admin.ModelAdmin):
    """Uploads built in the background: what is waiting, how far a build is, why one failed."""

    list_display = ["id", "tenant", "world", "domain", "status", "step", "progress", "version", "attempts",
                    "error", "created_by", "created_at"]
    list_filter = ["status", "domain", "tenant"]
    list_select_related = ["world", "tenant", "version"]
    search_fields = ["world__slug", "tenant__name", "created_by"]
    readonly_fields = ["tenant", "world", "domain", "status", "step", "chunks_done", "chunks_total", "version",
                       "requested_version", "replace_all", "options", "error", "error_code", "error_field",
                       "attempts", "created_by", "created_at", "enqueued_at", "next_attempt_at", "started_at",
                       "finished_at"]
    actions = ["build_again"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a build's record is how an editor learns what became of an upload

    @admin.action(description="Build again (a failed build, once its cause is mended; its files are kept)",
                  permissions=["change"])
    def build_again(self, request: HttpRequest, queryset: QuerySet[KnowledgeBuild]) -> None:
        queued = sum(builds.knowledge_build_retry(build=build) for build in queryset)
        self.message_user(request, f"{queued} build(s) queued again; {queryset.count() - queued} left as they were "
                                   "(not failed, or done).")

    @admin.display(description="chunks")
    def progress(self, obj: KnowledgeBuild) -> str:
        return f"{obj.chunks_done} / {obj.chunks_total}" if obj.chunks_total else "–"


@admin.register(Alias)
class AliasAdmin(admin.ModelAdmin):
    list_display = ["__str__", "version", "canary_version", "canary_share", "updated_at"]
    list_select_related = ["world", "version", "canary_version"]
    # A canary changes only through its API, which audits (and checks the smoke run).
    readonly_fields = ["world", "domain", "name", "version", "canary_version", "canary_share", "updated_at"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # aliases move only through publish and rollback, which audit

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # nor go: a world without `latest` answers nothing


@admin.register(KnowledgeChange)
class KnowledgeChangeAdmin(admin.ModelAdmin):
    list_display = ["created_at", "world", "domain", "action", "from_version", "to_version", "share", "actor",
                    "reason"]
    list_filter = ["action", "domain", "world"]
    list_select_related = ["world", "from_version", "to_version"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

# The lore edit queue lives in its own module; importing it registers it with the admin.
# Campaign memory registers its own (read-only) admin pages.
import lore.campaigns.admin  # noqa: E402,F401
from lore import edits_admin  # noqa: E402, F401
