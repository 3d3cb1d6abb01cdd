"""/metrics: every process's metrics (multiprocess mode), state read at scrape time, HTTP series
per route, and served only to the allowed networks or with the token."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import pytest
from django.conf import settings
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from memoryhub import multiprocess
from memoryhub import services as kernel
from tests.factories import append_messages

ROOT = Path(__file__).resolve().parents[2]


def scrape(**headers: str) -> dict[tuple[str, frozenset], float]:
    response = Client(**headers).get("/metrics")
    assert response.status_code == 200, response.content
    return {(s.name, frozenset(s.labels.items())): s.value
            for family in text_string_to_metric_families(response.content.decode()) for s in family.samples}


def sample(samples: dict, name: str, **labels: str) -> float | None:
    return samples.get((name, frozenset(labels.items())))


def count_in_subprocess(agent: str, *, own_tree: bool, wait: bool = False) -> subprocess.Popen[str]:
    """A separate Python process that loads the project's settings and counts 3 LLM calls."""
    code = textwrap.dedent(f"""
        import django, sys
        django.setup()
        from memoryhub import metrics
        metrics.LLM_CALLS.labels({agent!r}, "ok").inc(3)
        print("counted", flush=True)
        if {wait!r}:
            sys.stdin.read()  # stay alive (and keep the directory) until the test closes stdin
    """)
    env = os.environ | {"DJANGO_SETTINGS_MODULE": "memoryhub.settings"}
    if own_tree:
        env.pop(multiprocess.ENV)  # like a Celery worker started on its own: it claims a directory
    return subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


@pytest.mark.django_db
def test_this_process_writes_its_metrics_to_files() -> None:
    assert multiprocess.active()
    assert Path(os.environ[multiprocess.ENV]).parent == Path(settings.METRICS_DIR)


@pytest.mark.django_db
def test_a_metric_counted_in_a_child_process_is_on_metrics() -> None:
    agent = f"test-{uuid.uuid4().hex[:8]}"
    child = count_in_subprocess(agent, own_tree=False)
    assert child.communicate(timeout=60)[0].strip() == "counted" and child.returncode == 0
    # The child has exited; its counts stay part of the totals.
    assert sample(scrape(), "memoryhub_llm_calls_total", agent=agent, outcome="ok") == 3


@pytest.mark.django_db
def test_a_metric_counted_in_another_process_tree_is_on_metrics() -> None:
    agent = f"test-{uuid.uuid4().hex[:8]}"
    other = count_in_subprocess(agent, own_tree=True, wait=True)
    try:
        assert other.stdout.readline().strip() == "counted"
        own_dirs = [d.name for d in Path(settings.METRICS_DIR).iterdir() if d.name.endswith(f"-{other.pid}")]
        assert len(own_dirs) == 1  # it claimed a directory of its own, beside this process's
        assert sample(scrape(), "memoryhub_llm_calls_total", agent=agent, outcome="ok") == 3
    finally:
        other.communicate(timeout=60)
    assert not any(d.name.endswith(f"-{other.pid}") for d in Path(settings.METRICS_DIR).iterdir())


@pytest.mark.django_db
def test_queue_depth_is_read_at_scrape_time_by_kind_and_status(tenant) -> None:
    def depth(status: str) -> float | None:
        return sample(scrape(), "memoryhub_archival_queue_depth", kind="index", status=status)

    assert depth("pending") == 0 and depth("failed") == 0
    append_messages(tenant, "u1", "s1", ["I adopted a cat."], run_job=False)
    append_messages(tenant, "u1", "s1", ["Her name is Miso."], run_job=False)
    assert depth("pending") == 2
    assert sample(scrape(), "memoryhub_metrics_collector_up", collector="archival_queue") == 1


@pytest.mark.django_db
def test_unfinished_documents_are_counted_at_scrape_time_by_status(tenant, settings, monkeypatch) -> None:
    from rag import services as rag_services
    from rag.models import Document

    def unfinished(status: str) -> float | None:
        return sample(scrape(), "memoryhub_documents_unfinished", status=status)

    assert unfinished("pending") == 0 and unfinished("failed") == 0
    settings.DOCUMENT_SYNC_MAX_CHARS = 10
    monkeypatch.setattr(rag_services, "document_index_enqueue", lambda *, document_id: True)  # no worker
    for n in range(3):
        rag_services.document_ingest(tenant=tenant, user_id="u1", document=rag_services.DocumentInput(
            text=f"A document long enough to be a job, number {n}."))
    small, _, _ = rag_services.document_ingest(tenant=tenant, user_id="u1", document=rag_services.DocumentInput(
        text="Short."))
    assert small.status == Document.Status.READY  # indexed in the call: never counted
    Document.objects.filter(pk=Document.objects.order_by("id").first().pk).update(status="failed")
    assert (unfinished("pending"), unfinished("indexing"), unfinished("failed")) == (2, 0, 1)
    assert sample(scrape(), "memoryhub_metrics_collector_up", collector="documents") == 1


@pytest.mark.django_db
def test_turns_waiting_for_their_reranker_vectors_are_counted_at_scrape_time(tenant) -> None:
    from rag import services as rag_services

    def pending() -> float | None:
        return sample(scrape(), "memoryhub_chunks_rerank_pending")

    assert pending() == 0
    result = kernel.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=[
        kernel.IncomingMessage(role="user", text=text) for text in ("I adopted a cat.", "猫叫米索。")])
    kernel.archival_job_run(job_id=result.job.pk)  # the index job, and no fill yet
    assert pending() == 2
    rag_services.chunks_rerank_fill(tenant_id=tenant.pk)
    assert pending() == 0
    assert sample(scrape(), "memoryhub_metrics_collector_up", collector="rerank_pending") == 1


def test_no_gauge_is_kept_in_step_by_a_write_path() -> None:
    """State gauges are read at scrape time; a gauge set by whichever process last wrote would be
    wrong with several processes (and cost a query on every write)."""
    from prometheus_client import REGISTRY, Gauge

    gauges = [c for c in list(REGISTRY._collector_to_names) if isinstance(c, Gauge)]
    assert gauges == []


@pytest.mark.django_db
def test_http_requests_are_counted_per_route_template_with_status(client_a, monkeypatch) -> None:
    from prometheus_client import REGISTRY

    def own(name: str, **labels: str) -> float:
        # This process's own count: other test processes write into the same directory.
        return REGISTRY.get_sample_value(name, labels) or 0.0

    client, _ = client_a
    route = "/api/v1/users/{user_id}/sessions/{session_id}/messages"
    series = [("memoryhub_http_requests_total", {"method": "GET", "route": route, "status": "404"}),
              ("memoryhub_http_requests_total", {"method": "GET", "route": route, "status": "500"}),
              ("memoryhub_http_requests_total", {"method": "GET", "route": "<unmatched>", "status": "404"}),
              ("memoryhub_http_requests_total", {"method": "GET", "route": "/static/{path}", "status": "404"}),
              ("memoryhub_http_request_duration_seconds_count", {"method": "GET", "route": route})]
    before = [own(name, **labels) for name, labels in series]
    assert client.get("/api/v1/users/alice/sessions/s-1/messages").status_code == 404
    assert client.get("/api/v1/users/bob/sessions/s-2/messages").status_code == 404
    assert Client().get("/no/such/path/for/metrics").status_code == 404
    assert Client().get("/static/no-such-file.css").status_code == 404

    from memoryhub import selectors

    def broken(**kwargs: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(selectors, "conversation_get", broken)
    assert client.get("/api/v1/users/carol/sessions/s-3/messages").status_code == 500

    grown = [own(name, **labels) - b for (name, labels), b in zip(series, before, strict=True)]
    assert grown == [2, 1, 1, 1, 3]
    scraped = scrape()
    assert all(sample(scraped, name, **labels) for name, labels in series)  # and all of it on /metrics
    assert not any("alice" in str(labels) for _, labels in scraped)  # never the raw path


@pytest.mark.django_db
def test_metrics_are_refused_outside_the_allowed_networks_unless_the_token_is_given(settings) -> None:
    settings.METRICS_TOKEN = "s3cret-token"
    assert Client().get("/metrics").status_code == 200  # loopback
    assert Client(REMOTE_ADDR="::1").get("/metrics").status_code == 200
    assert Client(REMOTE_ADDR="10.1.2.3").get("/metrics").status_code == 403
    # Relayed by a proxy on this host: loopback address, but not a local client.
    assert Client(HTTP_X_FORWARDED_FOR="203.0.113.9").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer wrong").get("/metrics").status_code == 403
    assert Client(REMOTE_ADDR="10.1.2.3", HTTP_AUTHORIZATION="Bearer s3cret-token").get("/metrics").status_code == 200
    settings.METRICS_ALLOWED_NETWORKS = []  # token only
    assert Client().get("/metrics").status_code == 403
    settings.METRICS_TOKEN = ""
    assert Client().get("/metrics").status_code == 403


def _get(port: int, path: str) -> tuple[int, bytes]:
    import http.client

    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", path, headers={"Connection": "close"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.django_db(transaction=True)
def test_gunicorn_workers_write_to_the_masters_directory_and_any_worker_answers_for_all() -> None:
    import glob
    import signal
    import socket
    import time

    from django.db import connection
    from prometheus_client.multiprocess import MultiProcessCollector

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = os.environ | {"MEMORYHUB_DB_NAME": connection.settings_dict["NAME"]}
    env.pop(multiprocess.ENV)  # gunicorn started on its own: its master claims a directory
    server = subprocess.Popen(
        [sys.executable, "-m", "gunicorn", "memoryhub.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "2", "--timeout", "60", "--log-level", "warning"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    own_dir = Path(settings.METRICS_DIR) / f"{multiprocess._host()}-{server.pid}"

    def served() -> float:
        merged = MultiProcessCollector.merge(glob.glob(str(own_dir / "*.db")))
        return sum(s.value for m in merged for s in m.samples
                   if s.name == "memoryhub_http_requests_total" and s.labels["route"] == "/healthz")

    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if _get(port, "/healthz")[0] == 200:
                    break
            except OSError:
                pass
            assert time.monotonic() < deadline and server.poll() is None, "gunicorn did not start"
            time.sleep(0.2)
        for _ in range(20):
            assert _get(port, "/healthz")[0] == 200
        total = served()
        assert total >= 21
        status, body = _get(port, "/metrics")
        assert status == 200
        # Every status's sample: a 503 while the server started (a slow first check under load) is a sample
        # of its own, and keeping one sample per name compared the 503s' count with every request's.
        exported = sum(s.value for f in text_string_to_metric_families(body.decode()) for s in f.samples
                       if s.labels.get("route") == "/healthz" and s.name == "memoryhub_http_requests_total")
        assert exported >= total  # this directory and the others

        # A worker killed: gunicorn replaces it (child_exit marks it dead), its counts stay.
        workers = {int(Path(f).stem.rpartition("_")[2]) for f in glob.glob(str(own_dir / "counter_*.db"))}
        os.kill(next(iter(workers)), signal.SIGKILL)
        time.sleep(1)
        assert served() == total
        assert _get(port, "/healthz")[0] == 200
        assert served() == total + 1
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0].decode(errors="replace")
    assert not own_dir.exists()  # the master removed its directory on exit
    assert "Traceback" not in output, output[-3000:]


@pytest.mark.django_db(transaction=True)
def test_a_real_celery_workers_job_counts_reach_metrics(client_a, redis_settings) -> None:
    """The archival counters are counted in the worker's pool process; a scrape of this process
    shows them (the worker's main process claimed its own directory under METRICS_DIR)."""
    import glob
    import time

    from django.db import connection
    from prometheus_client.multiprocess import MultiProcessCollector

    from memoryhub.models import ArchivalJob

    env = os.environ | {"MEMORYHUB_DB_NAME": connection.settings_dict["NAME"], "REDIS_URL": redis_settings.server.url,
                        "CELERY_QUEUE": redis_settings.queue}
    env.pop(multiprocess.ENV)
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memoryhub", "worker", "-Q", redis_settings.queue, "-c", "1",
         "--without-gossip", "--without-mingle", "-l", "WARNING"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )
    own_dir = Path(settings.METRICS_DIR) / f"{multiprocess._host()}-{worker.pid}"

    def done_in_worker() -> float:
        merged = MultiProcessCollector.merge(glob.glob(str(own_dir / "*.db")))
        return sum(s.value for m in merged for s in m.samples
                   if s.name == "memoryhub_archival_jobs_total" and s.labels.get("outcome") == "done")

    try:
        client, _ = client_a
        response = client.post("/api/v1/users/u1/sessions/s1/messages",
                               {"messages": [{"role": "user", "text": "I adopted a cat named Miso."}]}, format="json")
        assert response.status_code == 202
        deadline = time.monotonic() + 60
        while ArchivalJob.objects.get(pk=response.json()["job_id"]).status != ArchivalJob.Status.DONE:
            assert time.monotonic() < deadline and worker.poll() is None, "the worker did not run the job"
            time.sleep(0.2)
        # The worker counts a job once its finish is committed, a moment after the status this test reads: a
        # loaded machine showed the status first (the count came a little later, as a scrape would find it).
        while done_in_worker() < 1 and time.monotonic() < deadline:
            time.sleep(0.1)
        assert done_in_worker() == 1
        assert (sample(scrape(), "memoryhub_archival_jobs_total", outcome="done") or 0) >= 1
    finally:
        worker.terminate()
        output = worker.communicate(timeout=30)[0].decode(errors="replace")
    assert not own_dir.exists()
    assert "Traceback" not in output, output[-3000:]
