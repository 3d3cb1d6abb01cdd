"""Namespace bookkeeping (rag.models.Namespace), and an HNSW index over large namespaces only."""

import django.contrib.postgres.indexes
import django.db.models.deletion
import django.db.models.functions.comparison
import pgvector.django.halfvec
import pgvector.django.indexes
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memoryhub', '0001_initial'),
        ('rag', '0002_document_importance'),
    ]

    operations = [
        migrations.CreateModel(
            name='Namespace',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('name', models.CharField(max_length=200)),
                ('chunk_count', models.PositiveIntegerField(default=0)),
                ('last_chunk_id', models.BigIntegerField(default=0)),
                ('last_deletion_id', models.BigIntegerField(default=0)),
                ('in_hnsw', models.BooleanField(default=False)),
            ],
        ),
        migrations.RemoveIndex(
            model_name='chunk',
            name='chunk_embedding_hnsw',
        ),
        migrations.AddField(
            model_name='chunk',
            name='in_hnsw',
            field=models.BooleanField(default=False),
        ),
        migrations.AddField(
            model_name='namespace',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.tenant'),
        ),
        migrations.AddConstraint(
            model_name='namespace',
            constraint=models.UniqueConstraint(fields=('tenant', 'name'), name='namespace_tenant_name_uniq'),
        ),
        # Existing data: a namespace row per namespace that has chunks or logged deletions; the
        # namespaces past the exact-scan limit (memoryhub.search.vectors.EXACT_SCAN_MAX_ROWS,
        # 2,000 when this was written) go into the HNSW index, built after the update.
        migrations.RunSQL(
            """
            INSERT INTO rag_namespace (tenant_id, name, chunk_count, last_chunk_id, last_deletion_id, in_hnsw)
            SELECT tenant_id, namespace, sum(chunks), max(last_chunk), max(last_deletion), sum(chunks) > 2000
            FROM (
                SELECT tenant_id, namespace, count(*) AS chunks, max(id) AS last_chunk, 0 AS last_deletion
                FROM rag_chunk GROUP BY tenant_id, namespace
                UNION ALL
                SELECT tenant_id, namespace, 0, 0, max(id) FROM rag_chunkdeletion GROUP BY tenant_id, namespace
            ) AS parts
            GROUP BY tenant_id, namespace;
            UPDATE rag_chunk AS c SET in_hnsw = true
            FROM rag_namespace AS n
            WHERE n.in_hnsw AND c.tenant_id = n.tenant_id AND c.namespace = n.name;
            """,
            migrations.RunSQL.noop,
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=pgvector.django.indexes.HnswIndex(django.contrib.postgres.indexes.OpClass(django.db.models.functions.comparison.Cast('embedding', pgvector.django.halfvec.HalfVectorField(dimensions=384)), name='halfvec_cosine_ops'), condition=models.Q(('in_hnsw', True)), ef_construction=64, m=16, name='chunk_embedding_hnsw'),
        ),
    ]
