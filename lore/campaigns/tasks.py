"""Jobs of campaign memory: retention (seed 003 §8.9; each returns its counts, see retention), the art
cards' model tags (§8.8, lore.campaigns.art) and their chunks refreshed after an NPC's rename."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from lore.campaigns import art, retention, threads
from memoryhub.llm import LLMUnavailable

ARTCARD_TAG_MAX_RETRIES = 5


# Retried only while the LLM is away (429, 5xx, timeouts), with backoff; the last try gives up and the card
# keeps its derived tags. Any other failure is settled by the service (the card never goes). In-process (no
# broker) there is one try, with the LLM client's own retries: a worker's backoff would block the caller.
@shared_task(bind=True, autoretry_for=(LLMUnavailable,), retry_backoff=30, retry_backoff_max=1800, retry_jitter=True,
             max_retries=ARTCARD_TAG_MAX_RETRIES)
def artcard_tag(self: Any, card_id: int) -> str:
    final = bool(self.request.is_eager) or self.request.retries >= ARTCARD_TAG_MAX_RETRIES
    return art.artcard_tag(card_id=card_id, final=final)


# Retried while a remote embedder is away; the cards stay pending meanwhile, and the sweep runs what is left.
@shared_task(autoretry_for=(LLMUnavailable,), retry_backoff=30, retry_backoff_max=1800, retry_jitter=True,
             max_retries=ARTCARD_TAG_MAX_RETRIES)
def artcards_refresh(campaign_id: int) -> int:
    return art.artcards_refresh(campaign_id=campaign_id)


@shared_task
def artcards_sweep() -> dict[str, int]:
    return art.artcards_sweep()


@shared_task
def episodes_expire() -> dict[str, int]:
    return retention.episodes_expire()


@shared_task
def scene_assemblies_prune() -> dict[str, int]:
    return retention.scene_assemblies_prune()


@shared_task
def threads_expire() -> dict[str, int]:
    return threads.threads_expire()
