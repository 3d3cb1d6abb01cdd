"""A namespace's memory revision: moves when a typed memory is reinforced (its importance and
last-seen time change), so that in-process chunk stores (rag.chunk_cache) know to re-read them.
A database default, so that processes still running the previous code can keep inserting rows."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rag", "0007_memoryreview_decided_by")]

    operations = [
        migrations.AddField(
            model_name="namespace",
            name="memory_revision",
            field=models.BigIntegerField(db_default=0, default=0),
        ),
    ]
