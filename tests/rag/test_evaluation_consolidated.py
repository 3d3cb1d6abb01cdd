"""`eval_retrieval --consolidate`: the evaluation searches what a deployed service holds once its sessions fell
quiet, the turns and the typed memories and insights consolidated from them."""

from __future__ import annotations

import json
from io import StringIO

import pytest
from django.core.management import call_command

from memoryhub.celery import app as celery_app
from memoryhub.models import Tenant
from rag.evaluation import consolidate, ingest
from rag.memory_models import MemoryConsolidation
from rag.models import Chunk

pytestmark = pytest.mark.django_db(transaction=True)  # the evaluation indexes on commit, as the API does

DATA = {"name": "tiny", "conversations": [{"user_id": "u1", "sessions": [
    {"session_id": "s1", "started_at": "2024-03-01T09:00:00", "turns": [
        {"id": "D1:1", "speaker": "Anna", "text": "I moved to Lisbon last month and I love my new flat."},
        {"id": "D1:2", "speaker": "Ben", "text": "Lisbon is lovely. How is the new job going?"},
        {"id": "D1:3", "speaker": "Anna", "text": "My sister Maria is visiting me next week."}]},
    {"session_id": "s2", "started_at": "2024-03-09T09:00:00", "turns": [
        {"id": "D2:1", "speaker": "Anna", "text": "I am allergic to peanuts, so I skipped the cake at work."},
        {"id": "D2:2", "speaker": "Ben", "text": "Good call, stay safe!"}]}]}],
    "queries": [{"user_id": "u1", "question": "Where did Anna move?", "evidence": ["D1:1"], "category": "single-hop"}]}


class _Progress:
    def __init__(self) -> None:
        self.done = 0

    def __call__(self, n: int) -> None:
        self.done += n


def test_every_session_is_consolidated_as_the_idle_sweep_would() -> None:
    eager = celery_app.conf.task_always_eager
    celery_app.conf.task_always_eager = True
    try:
        tenant = Tenant.objects.create(name="eval-consolidated")
        ingest(tenant, DATA["conversations"], lambda n: None)
        # Sessions shorter than MEMORY_CONSOLIDATION_EVERY: the ingest consolidates none of them.
        assert not MemoryConsolidation.objects.filter(tenant=tenant).exists()
        assert not Chunk.objects.filter(tenant=tenant, type=Chunk.Type.MEMORY).exists()
        progress = _Progress()
        assert consolidate(tenant, progress) == 2 and progress.done == 2
        runs = MemoryConsolidation.objects.filter(tenant=tenant)
        assert runs.count() == 2 and {r.status for r in runs} == {MemoryConsolidation.Status.DONE}
        memories = list(Chunk.objects.filter(tenant=tenant, type=Chunk.Type.MEMORY).values_list("text", flat=True))
        assert any("Lisbon" in text for text in memories) and any("peanuts" in text for text in memories), memories
    finally:
        celery_app.conf.task_always_eager = eager


def test_the_command_says_its_figures_are_of_consolidated_sessions(tmp_path) -> None:
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(DATA))
    out = StringIO()
    call_command("eval_retrieval", str(path), "--consolidate", "--json", str(tmp_path / "out.json"), stdout=out,
                 stderr=StringIO())
    assert "consolidated" in out.getvalue().splitlines()[0]
    assert json.loads((tmp_path / "out.json").read_text())["consolidated"] is True
    plain = StringIO()
    call_command("eval_retrieval", str(path), stdout=plain, stderr=StringIO())
    assert "consolidated" not in plain.getvalue().splitlines()[0]
