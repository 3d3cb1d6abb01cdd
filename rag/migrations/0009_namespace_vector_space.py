"""A namespace's vector space: which embedder's vectors its chunks hold, so that a search never
compares a query vector with vectors of another embedder (rag.models.Namespace.vector_space).

Existing namespaces are recorded as holding the embedder configured when this migration runs
(named as `memoryhub.embeddings` names it in this release): the one that wrote them, unless the
provider was changed without a `reindex`, which nothing could tell before. A database default, so
that processes still running the previous code can keep inserting rows."""

from pathlib import Path

from django.conf import settings
from django.db import migrations, models


def _configured_space() -> str:
    provider = getattr(settings, "EMBEDDING_PROVIDER", "hashing")
    if provider == "openai":
        return f"openai:{settings.EMBEDDING_MODEL}"
    if provider == "sentence-transformers":
        return f"sentence-transformers:{Path(settings.EMBEDDING_MODEL_PATH).name}"
    return "hashing-v1"


def record(apps, schema_editor):
    namespace = apps.get_model("rag", "Namespace")
    namespace.objects.filter(chunk_count__gt=0).update(vector_space=_configured_space())


class Migration(migrations.Migration):
    dependencies = [("rag", "0008_namespace_memory_revision")]

    operations = [
        migrations.AddField(
            model_name="namespace",
            name="vector_space",
            field=models.CharField(blank=True, db_default="", default="", max_length=200),
        ),
        migrations.RunPython(record, migrations.RunPython.noop),
    ]
