"""Chunks: the searchable unit of memory (seed 001's chunk format), and the raw documents."""

from __future__ import annotations

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import OpClass
from django.db import models
from django.db.models.functions import Cast
from django.utils import timezone
from pgvector.django import HalfVectorField, HnswIndex, VectorField

from memoryhub.models import Tenant
from memoryhub.vector_io import VectorColumnField


def user_namespace(user_id: str) -> str:
    return f"user:{user_id}"


TENANT_NAMESPACE = "tenant"


class Document(models.Model):
    """A raw document as the client sent it; its chunks can always be rebuilt from it.

    A small document is indexed in the request that stores it (`ready` at once); a large one is
    stored `pending` and indexed by a background job (rag.tasks.document_index_task), whose
    progress the status fields show."""

    class Status(models.TextChoices):
        PENDING = "pending"
        INDEXING = "indexing"
        READY = "ready"
        FAILED = "failed"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    namespace = models.CharField(max_length=200)
    user_id = models.CharField(max_length=128, blank=True)
    title = models.CharField(max_length=300, blank=True)
    text = models.TextField()
    format = models.CharField(max_length=16, default="markdown")
    external_id = models.CharField(max_length=128, blank=True)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    # Kept so a re-index gives the chunks the importance the client asked for.
    importance = models.FloatField(default=0.5)
    created_at = models.DateTimeField(default=timezone.now)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.READY)
    chunks_total = models.PositiveIntegerField(default=0)
    chunks_done = models.PositiveIntegerField(default=0)
    error = models.TextField(blank=True)
    attempts = models.PositiveIntegerField(default=0)
    # The sweeper hands a job out again when it is due and was not enqueued since (see
    # rag.services.documents_sweep), as memoryhub's archival sweep does for archival jobs.
    enqueued_at = models.DateTimeField(null=True, blank=True)
    next_attempt_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            models.Index(fields=["tenant", "namespace", "external_id"], name="document_ns_ext_idx"),
            # The sweep: documents whose indexing is not finished.
            models.Index(fields=["next_attempt_at"], name="document_unfinished_idx",
                         condition=~models.Q(status="ready")),
        ]

    def __str__(self) -> str:
        return self.title or f"document {self.pk}"


class Chunk(models.Model):
    class Type(models.TextChoices):
        DIALOG = "dialog"
        INSIGHT = "insight"
        DOCUMENT = "document"
        MEMORY = "memory"

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    # Whose memory this is: "user:<id>" for an end user, "tenant" for tenant-wide documents,
    # a lore version's namespace for game knowledge. BM25 indexes are per namespace.
    namespace = models.CharField(max_length=200)
    user_id = models.CharField(max_length=128, blank=True)
    type = models.CharField(max_length=16, choices=Type.choices)
    kind = models.CharField(max_length=32, blank=True)  # typed memories: self / user / third_party …
    # The raw input it came from: "message:<id>", "document:<id>", …
    source_id = models.CharField(max_length=64)
    session_id = models.CharField(max_length=128, blank=True)
    role = models.CharField(max_length=16, blank=True)
    speaker = models.CharField(max_length=128, blank=True)
    text = models.TextField()
    tokens = models.PositiveIntegerField()
    # The analysed terms (memoryhub.text.analyze), so a BM25 index is rebuilt without re-tokenising.
    terms = ArrayField(models.CharField(max_length=128), default=list)
    # The migrations' width: the live column is EMBEDDING_DIMENSIONS wide (rag/vector_width.py), and Django
    # uses a vector field's width only to create the column.
    embedding = VectorColumnField(dimensions=settings.MIGRATED_EMBEDDING_DIMENSIONS)
    # The semantic reranker's vector of the chunk's own text (SEMANTIC_RERANK, memoryhub.embeddings.get_reranker):
    # Chinese and Russian dialog turns and typed memories only (English ones are the soft match's), NULL
    # otherwise and while the reranker is off. Its own width, not the fusion's: another model's space,
    # compared only with the reranker's query vector.
    rerank_embedding = VectorField(dimensions=384, null=True, blank=True)
    # The English dialogue reranker's vector of the same text (ENGLISH_RERANK, memoryhub.minilm): English
    # dialog turns and typed memories only, NULL otherwise. A column of its own: all-MiniLM-L6-v2 is
    # 384-wide too, and its vectors mean nothing beside E5's.
    english_rerank_embedding = VectorField(dimensions=384, null=True, blank=True)
    # The reranker vectors above are still to be computed (rag.services.chunks_rerank_fill): a
    # conversation turn is stored, and searchable, before its reranker runs, which costs 12-46 ms of CPU a
    # turn and would otherwise hold up the client's messages. Until then its vectors are NULL, which the
    # semantic stage counts as neutral. db_default: see memory_uid below.
    rerank_pending = models.BooleanField(default=False, db_default=False)
    importance = models.FloatField(default=0.5)
    tags = ArrayField(models.CharField(max_length=64), default=list, blank=True)
    meta = models.JSONField(default=dict, blank=True)
    created_ts = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField(null=True, blank=True)
    # In the HNSW index. Set for every chunk of a namespace once it outgrows an exact scan
    # (rag.services.chunks_create keeps that true), so the many small namespaces never pay for
    # HNSW inserts, the dominant cost of a write at scale.
    in_hnsw = models.BooleanField(default=False)
    # Typed memories (seed 004's MemoryItemTyped; rag.memories). Real columns, not meta keys,
    # because search, the memories API and the forgetting beat filter on them. db_default keeps
    # bulk loads that name only the older columns (the bench's COPY) working.
    memory_uid = models.UUIDField(null=True, blank=True, unique=True)
    category = models.CharField(max_length=32, blank=True, db_default="", default="")
    conf_uid = models.CharField(max_length=128, blank=True, db_default="", default="")
    history_uid = models.CharField(max_length=128, blank=True, db_default="", default="")
    emotion = models.CharField(max_length=32, blank=True, db_default="", default="")
    context_window = models.CharField(max_length=200, blank=True, db_default="", default="")
    # When a near-identical memory was last seen again (consolidation raises it instead of
    # adding a copy); recency decay and forgetting count age from it when set.
    last_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # A character's typed memories (the memories API, forgetting): few rows of a large table.
            models.Index(fields=["tenant", "conf_uid", "category"], name="chunk_memory_idx",
                         condition=models.Q(type="memory")),
            # BM25 catch-up ("chunks of this namespace newer than the index") and exact vector
            # scans of one namespace.
            models.Index(fields=["tenant", "namespace", "id"], name="chunk_ns_id_idx"),
            # Idempotent re-indexing of a source and erasure by source.
            models.Index(fields=["tenant", "source_id"], name="chunk_source_idx"),
            # Erasure of a user's chunks.
            models.Index(fields=["tenant", "user_id"], name="chunk_user_idx"),
            # The turns whose reranker vectors are still to be computed, oldest first: few rows of a large table.
            models.Index(fields=["tenant", "id"], name="chunk_rerank_pending_idx",
                         condition=models.Q(rerank_pending=True)),
            # TTL cleanup.
            models.Index(fields=["expires_at"], name="chunk_expires_idx", condition=models.Q(expires_at__isnull=False)),
            # Approximate nearest neighbours in large namespaces (cosine); small ones are scanned
            # exactly through chunk_ns_id_idx. Half precision: half the memory and ~20% cheaper
            # inserts, for a similarity error far below what separates neighbours. At the migrations' width
            # here, at EMBEDDING_DIMENSIONS in the database (rag/vector_width.py builds it again).
            HnswIndex(
                OpClass(Cast("embedding", HalfVectorField(dimensions=settings.MIGRATED_EMBEDDING_DIMENSIONS)),
                        name="halfvec_cosine_ops"),
                name="chunk_embedding_hnsw",
                m=16,
                ef_construction=64,
                condition=models.Q(in_hnsw=True),
            ),
        ]

    def __str__(self) -> str:
        return f"{self.type}:{self.source_id}"

    def is_expired(self, now: object = None) -> bool:
        return self.expires_at is not None and self.expires_at <= (now or timezone.now())


class ChunkDeletion(models.Model):
    """A log of deleted chunk ids per namespace, so cached BM25 indexes drop them without a rebuild."""

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    namespace = models.CharField(max_length=200)
    chunk_id = models.BigIntegerField()
    deleted_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # BM25 catch-up: deletions in this namespace after the last one the index applied.
            models.Index(fields=["tenant", "namespace", "id"], name="chunkdeletion_ns_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.namespace}: chunk {self.chunk_id} deleted"


# A namespace whose chunks hold vectors of more than one embedder (written while processes ran
# different embedders): no query vector compares with all of them.
MIXED_VECTOR_SPACE = "mixed"


class Namespace(models.Model):
    """Bookkeeping of one namespace, written with its chunks under the namespace write lock.

    A cached BM25 index catches up by comparing its own ids with `last_chunk_id` and
    `last_deletion_id`: one unique-key read when nothing changed, and id ranges bounded on both
    sides when something did (an open-ended "id > N" is planned as a walk of the whole primary
    key when other namespaces hold the newer ids). `chunk_count` decides when the namespace's
    chunks go into the HNSW index.
    """

    tenant = models.ForeignKey(Tenant, on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)
    chunk_count = models.PositiveIntegerField(default=0)
    last_chunk_id = models.BigIntegerField(default=0)
    last_deletion_id = models.BigIntegerField(default=0)
    in_hnsw = models.BooleanField(default=False)
    # Moves when a typed memory's importance / last-seen time changes (memories_reinforce): the
    # only chunk fields written after the chunk, which in-process caches (rag.chunk_cache) re-read then.
    memory_revision = models.BigIntegerField(default=0, db_default=0)
    # The embedder (`Embedder.name`) whose vectors every chunk of the namespace holds: vectors of
    # different embedders are incomparable, so a search skips the vector side of a namespace in
    # another space (or MIXED_VECTOR_SPACE) until `manage.py reindex` re-embeds it. Blank: written
    # by a bulk load (`namespaces_recount`) that cannot tell, trusted as the current embedder's.
    vector_space = models.CharField(max_length=200, blank=True, default="", db_default="")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["tenant", "name"], name="namespace_tenant_name_uniq")]

    def __str__(self) -> str:
        return f"{self.name}: {self.chunk_count} chunks"


# Models of typed memories live in their own module; importing them here registers them with rag.
from rag.memory_models import (  # noqa: E402,F401
    Character,
    CharacterMood,
    MemoryConsolidation,
    MemoryReview,
    TypedMemory,
)
