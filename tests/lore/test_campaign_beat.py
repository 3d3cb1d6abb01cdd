"""The retention jobs are beat jobs: scheduled in CELERY_BEAT_SCHEDULE, run by the embedded beat
without a broker, and each reports its counts (return value and `memoryhub_gm_expired_total`)."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from lore.campaigns.models import EpisodicSummary, SceneAssembly
from memoryhub.beat import EmbeddedBeat
from memoryhub.celery import app
from tests.kernel.test_beat import wait_for
from tests.kernel.test_metrics import sample, scrape
from tests.lore.conftest import CAMPAIGN_BASE, summary_document

pytestmark = pytest.mark.django_db(transaction=True)

JOBS = {"campaigns-episodes-expire": "lore.campaigns.tasks.episodes_expire",
        "campaigns-assemblies-prune": "lore.campaigns.tasks.scene_assemblies_prune"}


def record_old_turn(engine, summary_id: str) -> None:
    assert engine.post(f"{CAMPAIGN_BASE}/summaries", summary_document(summary_id), format="json").status_code == 201
    assert engine.post(f"{CAMPAIGN_BASE}/scene-context", {"party": "pty_001"}, format="json").status_code == 200
    long_ago = timezone.now() - timedelta(days=125)
    EpisodicSummary.objects.filter(summary_id=summary_id).update(created_at=long_ago)
    SceneAssembly.objects.filter(feedback_at__isnull=True).update(created_at=long_ago)


def test_the_retention_jobs_are_scheduled_and_return_their_counts(engine) -> None:
    for name, task in JOBS.items():
        assert settings.CELERY_BEAT_SCHEDULE[name]["task"] == task
    record_old_turn(engine, "s1")
    before = scrape()
    # apply() runs the task here, as the embedded beat does; .result (not .get(), which Celery refuses
    # once a real worker has run in this process) is its return value.
    expired = app.tasks[JOBS["campaigns-episodes-expire"]].apply().result
    pruned = app.tasks[JOBS["campaigns-assemblies-prune"]].apply().result
    assert expired == {"summaries": 1, "chunks": 1} and pruned == {"assemblies": 1}
    after = scrape()
    # At least: /metrics merges every process's files, and another test process may count meanwhile.
    for what, n in (("summaries", 1), ("chunks", 1), ("assemblies", 1)):
        was = sample(before, "memoryhub_gm_expired_total", what=what) or 0
        assert (sample(after, "memoryhub_gm_expired_total", what=what) or 0) >= was + n, what


def test_the_embedded_beat_runs_the_retention_jobs(engine) -> None:
    record_old_turn(engine, "s1")
    schedule = {name: {**settings.CELERY_BEAT_SCHEDULE[name], "schedule": 0.2} for name in JOBS}
    beat = EmbeddedBeat(schedule, tick=0.05)
    beat.start()
    try:
        assert wait_for(lambda: EpisodicSummary.objects.get(summary_id="s1").expired_at is not None)
        assert wait_for(lambda: not SceneAssembly.objects.exists())
        assert wait_for(lambda: all(beat.runs.get(name, 0) >= 1 for name in JOBS))
    finally:
        beat.stop()
        beat.join(10)
    assert not beat.is_alive()
