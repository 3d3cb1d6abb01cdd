#!/usr/bin/env python
"""What POST /api/v1/chat adds to a turn beyond the model's own time, in process.

    .venv/bin/python bench/chat_cost.py            # 100 turns of each kind
    .venv/bin/python bench/chat_cost.py -n 200

A user with profile facts and a session of 60 turns (database `memoryhub_chatbench`, re-seeded each
run), the LLM replaced by the tests' OpenAI-compatible loopback server answering at once. Per request:
  * chat total: POST /chat through the whole Django stack (auth, throttle, serializers);
  * chat LLM: the time inside the model call (HTTP to the loopback server and back, the openai client);
  * chat added: total minus LLM, what MemoryHub spends (store turn, assemble context, store answer);
  * without /chat: what a client did before, POST …/messages (the turn) + POST /context + POST
    …/messages (the answer), in process too, for comparison.
Embedded mode (tasks in-process, REDIS_URL ignored): each store also indexes its turn before it returns,
as `make run` does. Medians and p90 in ms; the session grows by two turns a request in both loops.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryhub.settings")
os.environ.setdefault("MEMORYHUB_DB_NAME", "memoryhub_chatbench")
os.environ.setdefault("LOG_LEVEL", "WARNING")
os.environ["EMBEDDED_BEAT"] = "0"
os.environ.pop("REDIS_URL", None)
os.environ.setdefault("API_THROTTLE_RATE", "100000000/min")

QUESTIONS = ["Where do I live?", "What is my job?", "What did I say about my sister?", "我住在哪里？",
             "Any idea for dinner tonight?", "What was the name of my cat?"]


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", type=int, default=100, help="requests of each kind")
    args = parser.parse_args()

    from tests.llm_server import OpenAICompatServer

    server = OpenAICompatServer().start()
    # The chat agent's model answers; any other agent (extraction, consolidation in the background) gets {}.
    server.chat_handler = lambda request: "You live in Shanghai." if request["model"] == "bench-chat" else "{}"
    os.environ.update(LLM_PROVIDER="openai", LLM_BASE_URL=server.base_url, LLM_API_KEY="bench",
                      LLM_MODELS='{"chat": "bench-chat"}')
    import django

    django.setup()
    from django.core.management import call_command
    from django.test import Client

    from memoryhub import llm, services
    from memoryhub.models import Tenant
    from profiles.services import fact_upsert

    call_command("migrate", verbosity=0)
    Tenant.objects.filter(name="chatbench").delete()
    tenant, key = services.tenant_create(name="chatbench")
    for k, v in {"name": "Li Si", "location": "Shanghai", "occupation": "product manager", "age": "28"}.items():
        fact_upsert(tenant=tenant, user_id="u1", key=k, value=v, confidence=0.9, source="api")
    for i in range(30):
        services.messages_append(tenant=tenant, user_id="u1", session_id="s1", messages=[
            services.IncomingMessage(role="user", text=f"Turn {i}: my sister Emma visited and we cooked dumplings."),
            services.IncomingMessage(role="assistant", text=f"Reply {i}: that sounds lovely, how was it?")])

    in_llm: list[float] = []
    original = llm.LLMClient.chat_text

    def timed(self, *a, **kw):  # type: ignore[no-untyped-def]
        started = time.perf_counter()
        try:
            return original(self, *a, **kw)
        finally:
            in_llm.append((time.perf_counter() - started) * 1000)

    llm.LLMClient.chat_text = timed  # type: ignore[method-assign]
    client = Client(HTTP_AUTHORIZATION=f"Bearer {key}")

    def post(path: str, body: dict) -> float:
        started = time.perf_counter()
        response = client.post(path, body, content_type="application/json")
        assert response.status_code in (200, 202), response.content
        return (time.perf_counter() - started) * 1000

    for i in range(5):  # warm-up: imports, caches, the BM25 index
        post("/api/v1/chat", {"user_id": "u1", "session_id": "s1",
                              "messages": [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]})
    in_llm.clear()
    total = [post("/api/v1/chat", {"user_id": "u1", "session_id": "s1",
                                   "messages": [{"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]}]})
             for i in range(args.n)]
    added = [t - m for t, m in zip(total, in_llm, strict=True)]

    messages = "/api/v1/users/u1/sessions/s2/messages"
    before = []
    for i in range(args.n + 5):
        q = QUESTIONS[i % len(QUESTIONS)]
        spent = post(messages, {"messages": [{"role": "user", "text": q}]})
        spent += post("/api/v1/context", {"user_id": "u1", "session_id": "s2", "query": q})
        spent += post(messages, {"messages": [{"role": "assistant", "text": "You live in Shanghai."}]})
        before.append(spent)
    before = before[5:]
    server.stop()

    print(f"{args.n} requests each; ms, median / p90")
    for name, values in [("chat total", total), ("chat LLM (loopback, instant)", in_llm),
                         ("chat added (total - LLM)", added), ("without /chat: messages+context+messages", before)]:
        print(f"  {name:<42} {statistics.median(values):7.1f} / {pct(values, 0.9):7.1f}")


if __name__ == "__main__":
    main()
