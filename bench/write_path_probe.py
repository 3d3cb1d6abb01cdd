#!/usr/bin/env python
"""The write path's probes, re-run: counts of messages accepted / stored / indexed / extracted /
left after erasure while the LLM misbehaves, and how long others wait for a job's LLM call.

    .venv/bin/python bench/write_path_probe.py

Runs in-process against its own database (`memoryhub_probe` on the embedded server, or the
server of DATABASE_URL), with tasks in-process and the LLM replaced by the OpenAI-compatible
loopback server of the test suite (the real `openai` client talks to it). Prints figures.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_probe")
os.environ.setdefault("LOG_LEVEL", "ERROR")
os.environ["EMBEDDED_BEAT"] = "0"

import django  # noqa: E402

django.setup()

from django.conf import settings  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection, connections  # noqa: E402
from django.utils import timezone  # noqa: E402
from rest_framework.test import APIClient  # noqa: E402

from memoryhub import services  # noqa: E402
from memoryhub.llm import reset_providers  # noqa: E402
from memoryhub.models import ArchivalJob, Conversation, Message  # noqa: E402
from people.models import Person  # noqa: E402
from profiles.extraction import SYSTEM_PROMPT  # noqa: E402
from profiles.models import UserProfile  # noqa: E402
from rag.models import Chunk  # noqa: E402
from tests.llm_server import Delay, HTTPError, Malformed, OpenAICompatServer  # noqa: E402


def healthy(request: dict[str, Any]) -> Any:
    if request["messages"][0]["content"].startswith(SYSTEM_PROMPT[:40]):
        return {"facts": [{"key": "city", "value": "Riga", "confidence": 0.95, "message": 0}]}
    return {"people_operations": [], "relations": []}


def client_for(name: str) -> tuple[APIClient, Any]:
    tenant, raw = services.tenant_create(name=f"{name}-{time.time_ns()}")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {raw}")
    return client, tenant


def post(client: APIClient, user: str, session: str, texts: list[str], extract: bool) -> dict[str, Any]:
    body = {"messages": [{"role": "user", "text": t} for t in texts], "enable_auto_extract": extract}
    response = client.post(f"/api/v1/users/{user}/sessions/{session}/messages", body, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def extracted(tenant: Any) -> int:
    total = 0
    for conversation in Conversation.objects.filter(tenant=tenant):
        total += Message.objects.filter(conversation=conversation,
                                        pk__lte=conversation.extracted_until_message_id).count()
    return total


def counts(tenant: Any) -> str:
    return (f"stored {Message.objects.filter(tenant=tenant).count():3d}  "
            f"indexed {Chunk.objects.filter(tenant=tenant).values('source_id').distinct().count():3d}  "
            f"extracted {extracted(tenant):3d}  "
            f"jobs unfinished {ArchivalJob.objects.filter(tenant=tenant).exclude(status='done').count()}")


def probe_llm_fault(server: OpenAICompatServer, name: str, fault: Any) -> None:
    client, tenant = client_for(f"fault-{name}")
    server.chat_handler = lambda request: fault
    accepted = sum(post(client, "u1", f"s{i % 4}", [f"note {i}a: I live in Riga.", f"note {i}b"], True)["accepted"]
                   for i in range(10))
    during = counts(tenant)
    server.chat_handler = healthy
    ArchivalJob.objects.filter(tenant=tenant).exclude(status="done").update(next_attempt_at=timezone.now())
    services.archival_sweep()
    print(f"  LLM {name:<9} accepted {accepted}  | while failing: {during}\n"
          f"  {'':13} after recovery + one sweep:          {counts(tenant)}")


def in_thread(fn: Any) -> threading.Thread:
    def target() -> None:
        try:
            fn()
        finally:
            connections.close_all()

    thread = threading.Thread(target=target)
    thread.start()
    return thread


def probe_erasure_race(server: OpenAICompatServer) -> None:
    client, tenant = client_for("erase")
    server.chat_handler = lambda request: Delay(2.5, healthy(request))
    enqueue = services.archival_job_enqueue
    services.archival_job_enqueue = lambda *, job_id, **kwargs: True  # the jobs wait for the probe's threads
    try:
        body = post(client, "u1", "s1", ["I live in Riga; my sister Maria lives in Oslo."], True)
    finally:
        services.archival_job_enqueue = enqueue
    threads = [in_thread(lambda pk=pk: services.archival_job_run(job_id=pk))
               for pk in (body["job_id"], body["extract_job_id"])]
    time.sleep(1.0)
    started = time.monotonic()
    receipt = client.delete("/api/v1/users/u1").json()
    took = time.monotonic() - started
    for thread in threads:
        thread.join()
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM rag_chunkdeletion WHERE tenant_id = %s", [tenant.pk])
        deletions = cursor.fetchone()[0]
    left = {"messages": Message.objects.filter(tenant=tenant).count(),
            "chunks": Chunk.objects.filter(tenant=tenant).count(),
            "facts": UserProfile.objects.filter(tenant=tenant).count(),
            "people": Person.objects.filter(tenant=tenant).count(),
            "jobs": ArchivalJob.objects.filter(tenant=tenant).count(), "chunk_deletions": deletions}
    hits = client.post("/api/v1/search", {"user_id": "u1", "query": "Riga sister Maria"}, format="json").json()
    print(f"  DELETE 1 s into a 2.5 s LLM call: answered in {took:.2f} s, receipt {receipt['deleted']}")
    print(f"  left after the job finished: {left}; search hits {len(hits['items'])}")


def probe_other_user_waits(server: OpenAICompatServer) -> None:
    client, tenant = client_for("neighbour")
    server.chat_handler = lambda request: Delay(2.5, healthy(request))
    result = services.messages_append(tenant=tenant, user_id="slow", session_id="s1", auto_extract=True,
                                      messages=[services.IncomingMessage(role="user", text="I live in Riga.")])
    thread = in_thread(lambda: services.archival_job_run(job_id=result.extract_job.pk))
    time.sleep(0.5)
    started = time.monotonic()
    post(client, "other", "s1", ["Hello there."], False)
    waited = time.monotonic() - started
    thread.join()
    print(f"  another user's POST while a job waits 2.5 s on the LLM: {waited * 1000:.0f} ms")


def probe_extraction_jobs(server: OpenAICompatServer) -> None:
    client, tenant = client_for("size")
    server.chat_handler = healthy
    settings.ARCHIVAL_SESSION_SIZE = 3
    for i in range(6):
        post(client, "u1", "s1", [f"turn {i}"], False)
    jobs = list(ArchivalJob.objects.filter(tenant=tenant, kind="extract").values_list("status", "message_ids"))
    print(f"  session size 3, six single-message batches: {len(jobs)} extraction job(s), "
          f"(status, messages) {[(status, len(ids)) for status, ids in jobs]}")
    settings.ARCHIVAL_SESSION_SIZE = 400


def main() -> None:
    call_command("migrate", verbosity=0)
    server = OpenAICompatServer().start()
    settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_API_KEY = "openai", server.base_url, "probe"
    settings.LLM_TIMEOUT, settings.LLM_MAX_RETRIES, settings.LLM_BACKOFF_BASE = 5.0, 1, 0.01
    settings.API_THROTTLE_RATE = None
    reset_providers()
    try:
        print("LLM faults (10 batches of 2 messages, enable_auto_extract, 4 sessions; LLM timeout 1 s):")
        settings.LLM_TIMEOUT = 1.0
        for name, fault in [("500", HTTPError(500)), ("503", HTTPError(503)), ("429", HTTPError(429)),
                            ("timeout", Delay(1.5, {})), ("not-json", Malformed()), ("prose", "Sure! Anna.")]:
            probe_llm_fault(server, name, fault)
        settings.LLM_TIMEOUT = 5.0
        print("Erasure racing an extraction:")
        probe_erasure_race(server)
        print("Locks:")
        probe_other_user_waits(server)
        print("Extraction jobs:")
        probe_extraction_jobs(server)
    finally:
        server.stop()


if __name__ == "__main__":
    main()
