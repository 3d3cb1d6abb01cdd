"""`manage.py reindex` rebuilds chunks from the raw messages and documents."""

from __future__ import annotations

from datetime import UTC, datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from rag import services
from rag.models import Chunk
from rag.selectors import chunks_search
from tests.factories import append_messages

pytestmark = pytest.mark.django_db


def test_reindex_rebuilds_every_chunk_from_raw_inputs(tenant, settings) -> None:
    append_messages(tenant, "u1", "s1", ["I adopted a cat named Miso.", ("assistant", "Lovely!")],
                    start=datetime(2024, 1, 1, tzinfo=UTC))
    for user_id, text in (("u1", "# Plants\nWater ferns."), (None, "Shop opens at 9.")):
        services.document_ingest(tenant=tenant, user_id=user_id,
                                 document=services.DocumentInput(text=text, importance=0.9))
    before = {c.source_id: c.pk for c in Chunk.objects.filter(tenant=tenant)}
    reply = Chunk.objects.get(tenant=tenant, text="Lovely!")
    assert "cat" in reply.terms  # context of the preceding turn

    settings.DIALOG_CONTEXT_TURNS = 0
    out, err = StringIO(), StringIO()
    call_command("reindex", "--tenant", tenant.name, stdout=out, stderr=err)

    after = {c.source_id: c.pk for c in Chunk.objects.filter(tenant=tenant)}
    assert set(after) == set(before) and not set(after.values()) & set(before.values())  # all rebuilt
    assert "cat" not in Chunk.objects.get(tenant=tenant, text="Lovely!").terms
    assert "reindexed 1 user(s): 4 chunks from 2 messages and 2 documents" in out.getvalue()
    # The progress bar, with a step for the tenant-wide documents after the user's.
    assert "reindex tenant-a" in err.getvalue() and "2/2" in err.getvalue()
    assert set(Chunk.objects.filter(tenant=tenant, type="document").values_list("importance", flat=True)) == {0.9}
    found = chunks_search(tenant_id=tenant.pk, user_id="u1", query="cat named Miso", k=1)
    assert found.items[0].chunk["text"] == "I adopted a cat named Miso."


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("command", [["reindex"], ["eval_retrieval", "missing.json"]])
def test_commands_refuse_an_unmigrated_database_with_a_clear_message(command) -> None:
    call_command("migrate", "rag", "0003", verbosity=0)
    try:
        with pytest.raises(CommandError, match=r"lacks \d+ migration\(s\) \(rag\.0004_.*manage\.py migrate"):
            call_command(*command, stdout=StringIO())
    finally:
        call_command("migrate", verbosity=0)


def test_reindex_of_a_user_it_holds_nothing_of_says_so(tenant) -> None:
    append_messages(tenant, "u1", "s1", ["We hiked the Dolomites in July."])
    with pytest.raises(CommandError, match="holds nothing of user 'u2'"):
        call_command("reindex", "--tenant", tenant.name, "--user", "u2", stdout=StringIO(), stderr=StringIO())
    out = StringIO()
    call_command("reindex", "--tenant", tenant.name, "--user", "u1", stdout=out, stderr=StringIO())
    assert "reindexed 1 user(s)" in out.getvalue()


@pytest.mark.parametrize("options", [["--weights", "bm25=0.5,vector=0.5"], ["--fusion", "rrf"], ["--mode", "bm25"]])
def test_eval_context_figures_refuse_search_options_they_would_not_use(db, options) -> None:
    """The context searches as configured: with --weights its figures were silently the configured
    search's, printed under search figures that were not."""
    golden = Path(__file__).parent / "golden" / "en.json"
    with pytest.raises(CommandError, match="--context measures the context as configured"):
        call_command("eval_retrieval", str(golden), "--context", "200", *options, stdout=StringIO(),
                     stderr=StringIO())
