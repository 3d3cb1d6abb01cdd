# Typed memories (seed 004): typed chunk columns, characters, consolidation runs, review, mood.

import django.contrib.postgres.fields
import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('memoryhub', '0002_job_kinds'),
        ('rag', '0004_document_index_status'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='Character',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('conf_uid', models.CharField(max_length=128)),
                ('name', models.CharField(blank=True, max_length=128)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.CreateModel(
            name='CharacterMood',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user_id', models.CharField(max_length=128)),
                ('conf_uid', models.CharField(max_length=128)),
                ('mood', models.FloatField(default=0.0)),
                ('affinity', models.FloatField(default=0.0)),
                ('trust', models.FloatField(default=50.0)),
                ('emotions', models.JSONField(blank=True, default=dict)),
                ('interactions', models.PositiveIntegerField(default=0)),
                ('last_interaction_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.CreateModel(
            name='MemoryConsolidation',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user_id', models.CharField(max_length=128)),
                ('conf_uid', models.CharField(max_length=128)),
                ('trigger', models.CharField(max_length=16)),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('running', 'Running'), ('done', 'Done'), ('failed', 'Failed')], default='pending', max_length=16)),
                ('first_message_id', models.BigIntegerField(blank=True, null=True)),
                ('last_message_id', models.BigIntegerField(blank=True, null=True)),
                ('consolidator', models.CharField(blank=True, max_length=16)),
                ('attempts', models.PositiveIntegerField(default=0)),
                ('error', models.TextField(blank=True)),
                ('next_attempt_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
                ('finished_at', models.DateTimeField(blank=True, null=True)),
                ('novelty_score', models.FloatField(blank=True, null=True)),
                ('output', models.JSONField(blank=True, default=dict)),
                ('result', models.JSONField(blank=True, default=dict)),
            ],
        ),
        migrations.CreateModel(
            name='MemoryReview',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('user_id', models.CharField(max_length=128)),
                ('conf_uid', models.CharField(max_length=128)),
                ('history_uid', models.CharField(blank=True, max_length=128)),
                ('text', models.TextField()),
                ('kind', models.CharField(max_length=32)),
                ('category', models.CharField(max_length=32)),
                ('importance', models.FloatField(default=0.5)),
                ('confidence', models.FloatField()),
                ('tags', django.contrib.postgres.fields.ArrayField(base_field=models.CharField(max_length=64), blank=True, default=list, size=None)),
                ('emotion', models.CharField(blank=True, max_length=32)),
                ('context_window', models.CharField(blank=True, max_length=200)),
                ('occurred_at', models.DateTimeField(blank=True, null=True)),
                ('status', models.CharField(choices=[('pending', 'Pending'), ('approved', 'Approved'), ('rejected', 'Rejected')], default='pending', max_length=16)),
                ('chunk_id', models.BigIntegerField(blank=True, null=True)),
                ('decided_at', models.DateTimeField(blank=True, null=True)),
                ('created_at', models.DateTimeField(default=django.utils.timezone.now)),
            ],
        ),
        migrations.CreateModel(
            name='TypedMemory',
            fields=[
            ],
            options={
                'verbose_name': 'typed memory',
                'proxy': True,
                'indexes': [],
                'constraints': [],
            },
            bases=('rag.chunk',),
        ),
        migrations.AddField(
            model_name='chunk',
            name='category',
            field=models.CharField(blank=True, db_default='', default='', max_length=32),
        ),
        migrations.AddField(
            model_name='chunk',
            name='conf_uid',
            field=models.CharField(blank=True, db_default='', default='', max_length=128),
        ),
        migrations.AddField(
            model_name='chunk',
            name='context_window',
            field=models.CharField(blank=True, db_default='', default='', max_length=200),
        ),
        migrations.AddField(
            model_name='chunk',
            name='emotion',
            field=models.CharField(blank=True, db_default='', default='', max_length=32),
        ),
        migrations.AddField(
            model_name='chunk',
            name='history_uid',
            field=models.CharField(blank=True, db_default='', default='', max_length=128),
        ),
        migrations.AddField(
            model_name='chunk',
            name='last_seen_at',
            field=models.DateTimeField(blank=True, null=True),
        ),
        migrations.AddField(
            model_name='chunk',
            name='memory_uid',
            field=models.UUIDField(blank=True, null=True, unique=True),
        ),
        migrations.AddIndex(
            model_name='chunk',
            index=models.Index(condition=models.Q(('type', 'memory')), fields=['tenant', 'conf_uid', 'category'], name='chunk_memory_idx'),
        ),
        migrations.AddField(
            model_name='character',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.tenant'),
        ),
        migrations.AddField(
            model_name='charactermood',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.tenant'),
        ),
        migrations.AddField(
            model_name='memoryconsolidation',
            name='conversation',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.conversation'),
        ),
        migrations.AddField(
            model_name='memoryconsolidation',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.tenant'),
        ),
        migrations.AddField(
            model_name='memoryreview',
            name='consolidation',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to='rag.memoryconsolidation'),
        ),
        migrations.AddField(
            model_name='memoryreview',
            name='reviewer',
            field=models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL),
        ),
        migrations.AddField(
            model_name='memoryreview',
            name='tenant',
            field=models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='+', to='memoryhub.tenant'),
        ),
        migrations.AddConstraint(
            model_name='character',
            constraint=models.UniqueConstraint(fields=('tenant', 'conf_uid'), name='character_tenant_uid_uniq'),
        ),
        migrations.AddConstraint(
            model_name='charactermood',
            constraint=models.UniqueConstraint(fields=('tenant', 'conf_uid', 'user_id'), name='charactermood_uniq'),
        ),
        migrations.AddIndex(
            model_name='memoryconsolidation',
            index=models.Index(fields=['conversation', 'status', '-last_message_id'], name='consolidation_conv_idx'),
        ),
        migrations.AddIndex(
            model_name='memoryconsolidation',
            index=models.Index(condition=models.Q(('status__in', ['pending', 'running', 'failed'])), fields=['next_attempt_at'], name='consolidation_due_idx'),
        ),
        migrations.AddIndex(
            model_name='memoryreview',
            index=models.Index(fields=['status', 'created_at'], name='memoryreview_queue_idx'),
        ),
        migrations.AddIndex(
            model_name='memoryreview',
            index=models.Index(fields=['tenant', 'user_id'], name='memoryreview_user_idx'),
        ),
    ]
