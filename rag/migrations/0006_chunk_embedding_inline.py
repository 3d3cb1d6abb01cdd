"""Keep chunk vectors inside the row (STORAGE MAIN) instead of pgvector's default EXTERNAL.

A 384-d vector is 1.5 kB; with the text, terms and meta a chunk row passes the 2 kB TOAST
threshold, and EXTERNAL then moved the vector out of line: every distance of an exact scan
fetched it from the TOAST table (~3 buffers a row). Inline, the exact scan of a 900-chunk
namespace fell from ~2.5 ms to ~0.6 ms (bench/request_cost.py's data). Only the column's setting
changes here, instantly; rows written before move inline when the table is rewritten
(`VACUUM FULL rag_chunk`, see docs/operations.md) or the chunks are written again (reindex).
"""

from django.db import migrations


class Migration(migrations.Migration):
    dependencies = [("rag", "0005_typed_memories")]

    operations = [
        migrations.RunSQL(
            "ALTER TABLE rag_chunk ALTER COLUMN embedding SET STORAGE MAIN",
            reverse_sql="ALTER TABLE rag_chunk ALTER COLUMN embedding SET STORAGE EXTERNAL",
        ),
    ]
