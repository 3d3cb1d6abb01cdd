"""Who decided a typed-memory review item, as a label ("admin:alice", "api-key:mh_1234abcd (console)"),
and why: decisions now come from the review API too, whose API keys are no user. Items decided
before keep their reviewer, copied into the label."""

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [("rag", "0006_chunk_embedding_inline")]

    operations = [
        migrations.AddField(
            model_name="memoryreview",
            name="decided_by",
            field=models.CharField(blank=True, max_length=200),
        ),
        migrations.AddField(
            model_name="memoryreview",
            name="decision_reason",
            field=models.TextField(blank=True),
        ),
        migrations.RunSQL(
            "UPDATE rag_memoryreview r SET decided_by = 'admin:' || u.username FROM auth_user u "
            "WHERE r.reviewer_id = u.id AND r.decided_by = ''",
            reverse_sql=migrations.RunSQL.noop,
        ),
    ]
