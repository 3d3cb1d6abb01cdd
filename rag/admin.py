"""Read-only views of what rag holds, for operators: namespaces (size, HNSW membership), documents
and chunks. Everything here is derived from raw inputs or written through rag.services, which
keeps the deletion log and namespace bookkeeping in step, so the admin neither adds, edits nor
deletes (erasure is `DELETE /api/v1/users/{id}`, one document `DELETE /api/v1/documents/{id}`;
rebuilding is `manage.py reindex`). A document whose indexing job failed can be run again at once."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils import timezone

from rag import services
from rag.models import Chunk, Document, Namespace


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_change_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False

    def has_delete_permission(self, request: HttpRequest, obj: object = None) -> bool:
        return False


@admin.register(Namespace)
class NamespaceAdmin(ReadOnlyAdmin):
    list_display = ["name", "tenant", "chunk_count", "in_hnsw", "vector_space", "last_chunk_id", "last_deletion_id"]
    list_filter = ["tenant", "in_hnsw", "vector_space"]
    list_select_related = ["tenant"]
    search_fields = ["name"]
    ordering = ["-chunk_count"]


@admin.register(Document)
class DocumentAdmin(ReadOnlyAdmin):
    list_display = ["__str__", "tenant", "namespace", "status", "progress", "attempts", "format", "importance",
                    "created_at"]
    list_filter = ["status", "tenant", "format"]
    list_select_related = ["tenant"]
    search_fields = ["title", "external_id", "namespace"]
    date_hierarchy = "created_at"
    actions = ["index_again"]

    def get_queryset(self, request: HttpRequest) -> QuerySet[Document]:
        # A list page read every row's text (up to 2 MB each); the change page loads it on access.
        return super().get_queryset(request).defer("text")

    @admin.display(description="chunks")
    def progress(self, document: Document) -> str:
        return f"{document.chunks_done} / {document.chunks_total}"

    def has_index_again_permission(self, request: HttpRequest) -> bool:
        # The document's page is read-only for everyone; indexing it again is the model's "change".
        return request.user.has_perm(f"{Document._meta.app_label}.change_document")

    @admin.action(description="Index again now (unfinished documents; recorded in the history)",
                  permissions=["index_again"])
    def index_again(self, request: HttpRequest, queryset: QuerySet[Document]) -> None:
        count = 0
        for document in queryset.exclude(status=Document.Status.READY):
            Document.objects.filter(pk=document.pk).update(next_attempt_at=timezone.now())
            services.document_index_enqueue(document_id=document.pk)
            self.log_change(request, document, f"Index again by {request.user} (was {document.status}, "
                                               f"{document.attempts} attempt(s))")
            count += 1
        self.message_user(request, f"{count} document(s) enqueued")


@admin.register(Chunk)
class ChunkAdmin(ReadOnlyAdmin):
    list_display = ["id", "type", "namespace", "speaker", "short_text", "tokens", "importance", "created_ts"]
    list_filter = ["tenant", "type", "in_hnsw"]
    list_select_related = ["tenant"]
    search_fields = ["=namespace", "=source_id", "=session_id"]
    # The vector and analysed terms are for search, not for reading.
    exclude = ["embedding", "rerank_embedding", "english_rerank_embedding", "terms"]
    show_full_result_count = False  # no COUNT(*) over a large table on every page

    @admin.display(description="text")
    def short_text(self, chunk: Chunk) -> str:
        return chunk.text if len(chunk.text) <= 100 else chunk.text[:99] + "…"

from rag.memories import admin as _memories_admin  # noqa: E402,F401  (typed memories' admin)
