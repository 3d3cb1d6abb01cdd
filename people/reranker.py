"""The people reranker (seed 000's flash reranker): the model picks 0–N relevant people from up to 50
candidates shown in seed 000's line format, each with a reason. Ids it invents are dropped and the
limit is enforced here, whatever the model returns; any failure returns None so the caller falls
back to the search scores.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, model_validator

from memoryhub.llm import LLMClient, LLMError, get_llm
from people import conf
from people.archivist.llm import parse_id, unwrap_list
from people.models import Person

logger = logging.getLogger(__name__)

SYSTEM_PROMPT = """You choose which people from the user's life the assistant should keep in mind to answer \
the user's message. Candidates are listed as `[Person:ID] Name | Circle | N mentions | bio`. Choose between \
0 and {max_people} people that the message is about or that help answer it; choose none when none fit. \
Use only the listed ids.
Reply with JSON only: {{"people": [{{"id": 42, "reason": "why this person matters here"}}]}}"""

BIO_CHARS_IN_PROMPT = 300


_lock = threading.Lock()
_clients: dict[tuple[int, float, int], tuple[LLMClient, LLMClient]] = {}


def reranker_client() -> LLMClient | None:
    """The LLM client with the reranker's own, shorter timeout and retries: the reranker sits on the
    path of every prompt, so it gives up early and the scores answer instead. None when LLM is off."""
    base = get_llm()
    if base is None:
        return None
    timeout = min(base.config.timeout, float(conf.get("PEOPLE_RERANK_TIMEOUT")))
    retries = min(base.config.max_retries, int(conf.get("PEOPLE_RERANK_MAX_RETRIES")))
    # Keyed by the kernel's client, which is rebuilt when LLM settings change; holding it keeps its id unique.
    key = (id(base), timeout, retries)
    with _lock:
        if key not in _clients:
            _clients.clear()
            config = dataclasses.replace(base.config, timeout=timeout, max_retries=retries)
            _clients[key] = (base, LLMClient(config))
        return _clients[key][1]


class RerankReply(BaseModel):
    people: list[Any]

    @model_validator(mode="before")
    @classmethod
    def _unwrap(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"people": unwrap_list(data)}
        if isinstance(data, dict):
            for key in ("people", "selected", "results", "persons", "ids"):
                if key in data:
                    return {"people": unwrap_list(data[key])}
        return data


def candidate_line(person: Person) -> str:
    bio = person.bio if len(person.bio) <= BIO_CHARS_IN_PROMPT else person.bio[: BIO_CHARS_IN_PROMPT - 1] + "…"
    return f"[Person:{person.pk}] {person.context_name} | {person.circle} | {person.mentions_text} | {bio}"


def read_choices(reply: RerankReply, candidates: Sequence[Person], max_people: int) -> list[tuple[Person, str]]:
    by_id = {p.pk: p for p in candidates}
    chosen: list[tuple[Person, str]] = []
    for item in reply.people:
        raw_id, reason = (item.get("id", item.get("person_id")), str(item.get("reason") or "")) \
            if isinstance(item, dict) else (item, "")
        person_id = parse_id(raw_id)
        if person_id is None or person_id not in by_id or any(p.pk == person_id for p, _ in chosen):
            continue  # invented or repeated
        chosen.append((by_id[person_id], reason[:300]))
        if len(chosen) >= max_people:
            break
    return chosen


def rerank(*, client: LLMClient, query: str, candidates: Sequence[Person],
           max_people: int) -> list[tuple[Person, str]] | None:
    """The model's choice, best first, or None when it failed (timeout, outage, unusable reply)."""
    if not candidates or max_people <= 0:
        return []
    messages = [
        {"role": "system", "content": SYSTEM_PROMPT.format(max_people=max_people)},
        {"role": "user", "content": f"User message: {query}\n\nCandidates:\n"
                                    + "\n".join(candidate_line(p) for p in candidates)},
    ]
    try:
        reply, _ = client.chat_json("reranker", messages, RerankReply, parse_retries=1)
    except LLMError as exc:
        logger.warning("people reranker failed, falling back to scores: %s", exc)
        return None
    return read_choices(reply, candidates, max_people)
