"""Admin of typed memories: the review queue of unsure consolidated memories, editable memories
(kind, importance, tags), consolidation runs. Imported by rag/admin.py."""

from __future__ import annotations

import logging

from django import forms
from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest

from memoryhub.models import Tenant
from rag.memories import services
from rag.memories.vocab import CATEGORIES, KINDS
from rag.models import Chunk, MemoryConsolidation, MemoryReview, TypedMemory
from rag.services import chunks_delete

logger = logging.getLogger(__name__)


class _KindForm(forms.ModelForm):
    kind = forms.ChoiceField(choices=[(k, k) for k in KINDS])
    category = forms.ChoiceField(choices=[(c, c) for c in CATEGORIES])
    importance = forms.FloatField(min_value=0.0, max_value=1.0)


@admin.register(MemoryReview)
class MemoryReviewAdmin(admin.ModelAdmin):
    form = _KindForm
    list_display = ("text", "kind", "category", "importance", "confidence", "conf_uid", "user_id", "status",
                    "created_at")
    list_filter = ("status", "category", "kind")
    search_fields = ("text", "user_id", "conf_uid")
    fields = ("text", "kind", "category", "importance", "tags", "emotion", "context_window", "confidence",
              "conf_uid", "user_id", "history_uid", "status", "decided_by", "decided_at", "decision_reason",
              "chunk_id")
    readonly_fields = ("text", "confidence", "conf_uid", "user_id", "history_uid", "status", "decided_by",
                       "decided_at", "decision_reason", "chunk_id", "emotion", "context_window")
    actions = ("approve", "reject")

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False  # a review item is what a consolidation was unsure of; one added here had no source (a 500)

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a decision's record; rejecting is how an item goes

    @admin.action(description="Approve: write as typed memories", permissions=["change"])
    def approve(self, request: HttpRequest, queryset: QuerySet[MemoryReview]) -> None:
        done = sum(services.memory_review_approve(review=r, reviewer=request.user) is not None for r in queryset)
        self.message_user(request, f"{done} memory item(s) approved")

    @admin.action(description="Reject", permissions=["change"])
    def reject(self, request: HttpRequest, queryset: QuerySet[MemoryReview]) -> None:
        done = sum(services.memory_review_reject(review=r, reviewer=request.user) for r in queryset)
        self.message_user(request, f"{done} memory item(s) rejected")


@admin.register(TypedMemory)
class TypedMemoryAdmin(admin.ModelAdmin):
    """Editors may correct kind, category, importance and tags; the text is what was said (changing
    it would need a new vector), so it is read-only."""

    form = _KindForm
    list_display = ("text", "kind", "category", "importance", "emotion", "conf_uid", "user_id", "created_ts")
    list_filter = ("category", "kind", "emotion")
    search_fields = ("text", "conf_uid", "user_id", "memory_uid")
    fields = ("memory_uid", "text", "kind", "category", "importance", "tags", "emotion", "context_window",
              "conf_uid", "history_uid", "user_id", "created_ts", "last_seen_at", "supersedes")
    readonly_fields = ("memory_uid", "text", "emotion", "context_window", "conf_uid", "history_uid", "user_id",
                       "created_ts", "last_seen_at", "supersedes")

    @admin.display(description="supersedes")
    def supersedes(self, obj: Chunk) -> str:
        """The older memories this one replaced (rag.memories.contradiction): their only record once gone."""
        return "\n".join(f"“{e['text']}” (said {e.get('said_at') or '?'}; {e.get('memory_id') or 'never stored'}): "
                         f"{e.get('reason', '')}" for e in obj.meta.get("supersedes", [])) or "—"

    def get_queryset(self, request: HttpRequest) -> QuerySet[Chunk]:
        return (super().get_queryset(request).filter(type=Chunk.Type.MEMORY)
                .defer("embedding", "rerank_embedding", "english_rerank_embedding", "terms"))

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def delete_model(self, request: HttpRequest, obj: Chunk) -> None:
        self.delete_queryset(request, Chunk.objects.filter(pk=obj.pk))

    def delete_queryset(self, request: HttpRequest, queryset: QuerySet[Chunk]) -> None:
        # Through the deletion log (rag.services.chunks_delete), as erasure and forgetting delete:
        # a row deleted directly stayed in the search's cached indexes and was still found.
        for tenant_id in sorted(set(queryset.values_list("tenant_id", flat=True))):
            tenant = Tenant.objects.get(pk=tenant_id)
            deleted = chunks_delete(tenant=tenant, chunks=Chunk.objects.filter(
                pk__in=queryset.filter(tenant_id=tenant_id).values_list("pk", flat=True)))
            logger.info("%s typed memories of tenant %s deleted by %s", deleted, tenant_id, request.user)

    def save_model(self, request: HttpRequest, obj: Chunk, form: forms.ModelForm, change: bool) -> None:
        # Only typed columns change (no text, no vector), so the BM25 index needs no update; the
        # service tells the search's chunk caches to re-read them.
        services.memory_edit(tenant=obj.tenant, chunk_id=obj.pk, kind=obj.kind, category=obj.category,
                             importance=obj.importance, tags=obj.tags, editor=f"admin:{request.user}")
        logger.info("typed memory %s edited by %s: %s", obj.memory_uid, request.user, form.changed_data)


@admin.register(MemoryConsolidation)
class MemoryConsolidationAdmin(admin.ModelAdmin):
    list_display = ("id", "user_id", "conf_uid", "trigger", "status", "consolidator", "attempts",
                    "novelty_score", "created_at", "finished_at")
    list_filter = ("status", "consolidator", "trigger")
    raw_id_fields = ("conversation",)
    readonly_fields = [f.name for f in MemoryConsolidation._meta.fields]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False  # a run's record: what it found and what it cost
