import pgvector.django.vector
from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ('rag', '0012_chunk_rerank_embedding'),
    ]

    operations = [
        migrations.AddField(
            model_name='chunk',
            name='english_rerank_embedding',
            field=pgvector.django.vector.VectorField(blank=True, dimensions=384, null=True),
        ),
    ]
