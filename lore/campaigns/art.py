"""Art cards as search material (seed 003 §8.5.3, §8.7's Art domain, §8.8.3).

A card is indexed when recorded: one `art` chunk in its campaign's art namespace (`Campaign.art_namespace`),
its text the card's words (visual tags, style, NPCs with their names and archetypes, locations, scene and
the prompt text) with a vector of the one embedder cut to the `artcards` domain's `dims`. The embedding is
computed before the transaction opens, as a summary's is. `art_suggest`'s `query` searches these chunks by
BM25 and vector, fused by RRF with the `artcards` domain's weights (config/knowledge.yaml).

Tags (seed §8.8: "5–8 visual_tags from the scene's text, a quick nano call"): a card posted without
`visual_tags` gets phrases of its prompt text at once (`derive_tags`, offline; a prompt text with no content
word is refused, so never a card without tags), and, when an LLM is configured, the `artcard_tag` job asks
a model (agent `art_tagger`) for 5–8 from the prompt text and the scene's summary, outside any transaction,
then replaces the derived tags and the chunk. A fault never loses the card: transient ones (429, 5xx,
timeouts) are retried by the task with backoff, then the card keeps its derived tags; a reply that is no
valid JSON after one re-ask ends the same way, at once. The beat's `artcards_sweep` re-enqueues tagging a
lost message left pending and indexes the cards of active campaigns that have no chunk (recorded before
cards were indexed).

Renamed NPCs: the chunk names the card's NPCs, so `npc_upsert` changing one's name or archetype marks the cards
showing it `reindex_pending`, in its transaction, and enqueues `artcards_refresh` after commit, which embeds the
cards' words as they are now outside any transaction and then replaces their chunks under the namespace lock;
the sweep runs what a lost message left. Every writer of a card's chunk reads the names under that lock and
checks its text against them, so a write prepared before a rename never leaves the old name behind, and a card
deleted meanwhile is not found there and gets no chunk. `manage.py reindex` rebuilds every active campaign's art
namespace the same way (`artcards_reindex`).

Lifecycle: an archived campaign's art chunks are deleted (out of search, cards kept); a deleted campaign's
art namespace goes whole; ART_MEDIA_POLICY=expire-with-episodes deletes a card with its chunk;
strip-media keeps both (the words stay).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import jsonschema
import numpy as np
import rjieba
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone
from pydantic import RootModel, model_validator

from lore import config as lore_config
from lore.campaigns.models import NPC, ArtCard, Campaign, EpisodicSummary, campaign_row_share
from lore.services import fit_dims
from memoryhub import deferred
from memoryhub.embeddings import cosine_floor, embed_query_if_available, get_embedder
from memoryhub.llm import LLMError, LLMUnavailable, get_llm
from memoryhub.morph import analyzer as _morph
from memoryhub.search import vectors
from memoryhub.search.fusion import FusedScore, fuse
from memoryhub.text import HAN_CHAR, analyze, analyze_query, normalize, words
from rag import index as bm25_index
from rag import selectors as rag_selectors
from rag.models import Chunk, Namespace
from rag.services import ChunkDraft, PreparedChunks, chunks_delete, chunks_insert, namespace_write_lock, storable_terms

logger = logging.getLogger(__name__)

DOMAIN = "artcards"
TAGS_MIN, TAGS_MAX = 5, 8  # seed §8.8
TAG_MAX_CHARS = 64  # schemas/artcard.schema.json
# The knowledge search's relevance floor (lore.selectors.MIN_COSINE), on the hashing vectors' scale: a card
# neither sharing a word with the query nor this near it is not what was asked for.
MIN_COSINE = 0.25
# The sweep leaves a pending card this long to the task's own retries before enqueueing it again.
SWEEP_AFTER = timedelta(minutes=30)
SWEEP_BATCH = 200


# --- The card's words -------------------------------------------------------------------------
def card_text(document: dict[str, Any], tags: Sequence[str], npcs: dict[str, tuple[str, str]]) -> str:
    """What the chunk holds. `npcs`: npc_id → (name, archetype), so "the ronin" finds Li Shen's cards."""
    parts = []
    if tags:
        parts.append("Tags: " + ", ".join(t.replace("_", " ") for t in tags) + ".")
    parts.append(f"Style: {document['style']['preset']}.")
    who = [f"{npcs[n][0]} ({n}, {npcs[n][1]})" if n in npcs else n for n in document["entities"]["npc"]]
    if who:
        parts.append("NPCs: " + ", ".join(who) + ".")
    if document["entities"]["location"]:
        parts.append("Locations: " + ", ".join(document["entities"]["location"]) + ".")
    parts.append(f"Scene {document['scene_id']}: {document['prompt_text']}")
    return " ".join(parts)


_PHRASES = re.compile(r"[,;:.!?\n\u3001\u3002\uff0c\uff1b\uff1a\uff01\uff1f]+")
_HAN_RUN = re.compile(f"({HAN_CHAR.pattern}+)")
_CYRILLIC = re.compile("[\u0400-\u052f]")
# A tag is a run of content words; these end one. Russian, by pymorphy3's reading: prepositions, conjunctions,
# particles, interjections, pronouns and verbs ("замок возле моря" has a preposition no stopword list names).
_RU_BREAKS = frozenset({"PREP", "CONJ", "PRCL", "INTJ", "NPRO", "VERB", "INFN", "GRND"})
# Chinese, by jieba's part of speech: prepositions, conjunctions, localisers (上 in 山丘上 is "on"), pronouns,
# particles, modal particles, interjections, adverbs and verbs (not verbal nouns, vn: 战斗 is a fight).
_ZH_BREAKS = frozenset("pcfruyed")
# What joins a Chinese modifier to its noun (白色的狐狸, a white fox): left out, the tag goes on.
_ZH_GLUE = frozenset({"的", "之"})
_RU_ADJECTIVES = frozenset({"ADJF", "PRTF", "NUMR"})
# A noun's second locative, genitive or accusative ("в лесу", "чашка чаю") takes the adjective's first one.
_RU_CASE = {"loc2": "loct", "gen2": "gent", "acc2": "accs"}


def _breaks_ru(word: str) -> bool:
    return _morph().parse(word)[0].tag.POS in _RU_BREAKS


def _tokens(phrase: str) -> list[tuple[str, str]]:
    """The phrase's words, each with what it does to a tag: `word` (goes in), `break` (ends it: a
    function word, a verb) or `glue` (left out, the tag goes on)."""
    out: list[tuple[str, str]] = []
    for i, piece in enumerate(_HAN_RUN.split(normalize(phrase))):
        if i % 2:  # a Han run, segmented and tagged by jieba
            for word, flag in rjieba.tag(piece):
                if word in _ZH_GLUE:
                    out.append((word, "glue"))
                elif not analyze(word) or flag[0] in _ZH_BREAKS or (flag[0] == "v" and flag != "vn"):
                    out.append((word, "break"))
                else:
                    out.append((word, "word"))
            continue
        for word in words(piece):
            stop = not analyze(word) or (_CYRILLIC.search(word) is not None and _breaks_ru(word))
            out.append((word, "break" if stop else "word"))
    return out


def _nominative(run: list[str]) -> list[str]:
    """A Russian noun phrase with its head noun and the adjectives before it in the nominative, so the
    tags of two cards meet whatever case the prompt put them in ("у моря" → море, "на левой щеке" →
    левая щека); the words after the head stay as they are (its genitive: "стен замка" → стены замка).
    Unchanged when the head is not Russian or no reading of it agrees with the adjectives before it."""
    morph = _morph()
    head = next((i for i, word in enumerate(run) if _CYRILLIC.search(word)
                 and morph.parse(word)[0].tag.POS == "NOUN"), None)
    if head is None:
        return run
    for noun in (p for p in morph.parse(run[head]) if p.tag.POS == "NOUN" and p.tag.case):
        case = _RU_CASE.get(noun.tag.case, noun.tag.case)
        agreeing = []
        for word in run[:head]:
            reading = next((p for p in morph.parse(word) if p.tag.POS in _RU_ADJECTIVES
                            and p.tag.case == case and p.tag.number == noun.tag.number
                            and (noun.tag.number == "plur" or p.tag.gender in (None, noun.tag.gender))), None)
            if reading is None:
                break
            agreeing.append(reading)
        else:
            grammemes = {"nomn", "plur"} if noun.tag.number == "plur" else {"nomn"}
            forms = [p.inflect(grammemes) for p in [*agreeing, noun]]
            if all(forms):
                return [normalize(f.word) for f in forms if f] + run[head + 1:]
    return run


def _runs(phrase: str) -> list[list[str]]:
    """The phrase's runs of content words, a function word or a verb ending each."""
    runs: list[list[str]] = [[]]
    for word, role in _tokens(phrase):
        if role == "word":
            runs[-1].append(word)
        elif role == "break" and runs[-1]:
            runs.append([])
    return [run for run in runs if run]


def derive_tags(text: str, limit: int = TAGS_MAX) -> list[str]:
    """Up to `limit` tags from a prompt text, offline: its phrases broken at function words and verbs, never
    glued across them ("moonlit bridge, mist, ronin with scar on left cheek" → moonlit_bridge, mist, ronin,
    scar, left_cheek; "замок на холме у моря" → замок, холм, море, Russian in the nominative; "海边山丘上的城堡"
    → 海边山丘, 城堡); a run of more than three words gives its words one by one. Empty when the text has no
    content word (only function words, punctuation or emoji)."""
    tags: list[str] = []
    for phrase in _PHRASES.split(text):
        for run in _runs(phrase):
            run = _nominative(run)
            han = all(HAN_CHAR.search(w) for w in run)
            candidates = [("" if han else "_").join(run)] if len(run) <= 3 else run
            for tag in candidates:
                tag = tag[:TAG_MAX_CHARS]
                if tag not in tags:
                    tags.append(tag)
                if len(tags) >= limit:
                    return tags
    return tags


def _npc_names(campaign: Campaign, npc_ids: Sequence[str]) -> dict[str, tuple[str, str]]:
    return {npc_id: (name, archetype) for npc_id, name, archetype in
            NPC.objects.filter(campaign=campaign, npc_id__in=list(npc_ids)).values_list("npc_id", "name", "archetype")}


def index_prepare(campaign: Campaign, document: dict[str, Any], tags: Sequence[str]) -> tuple[str, np.ndarray]:
    """The chunk's text and vector. Call it outside any transaction: the embedder may be a network call."""
    text = card_text(document, tags, _npc_names(campaign, document["entities"]["npc"]))
    return text, fit_dims(get_embedder().embed_one(text), lore_config.domain_config(DOMAIN).dims)


def _draft(campaign: Campaign, card: ArtCard, text: str) -> ChunkDraft:
    return ChunkDraft(type=Chunk.Type.DOCUMENT, kind="art", text=text, source_id=f"artcard:{card.pk}",
                      session_id=card.scene_id, created_ts=card.created_at,
                      meta={"image_id": card.image_id, "scene_id": card.scene_id, "campaign_id": campaign.slug})


def index_insert(campaign: Campaign, card: ArtCard, text: str, vector: np.ndarray) -> Chunk:
    """The card's chunk, in the caller's transaction (which holds the campaign row)."""
    [chunk] = chunks_insert(tenant=campaign.tenant, namespace=campaign.art_namespace,
                            prepared=PreparedChunks([_draft(campaign, card, text)], [storable_terms(analyze(text))],
                                                    vector))
    return chunk


def names_changed(campaign: Campaign, document: dict[str, Any], tags: Sequence[str], text: str) -> bool:
    """Whether `text`, a card's made outside the transaction, names its NPCs otherwise than they are named now.
    Call it under the art namespace lock: `npc_upsert` marks the cards of a renamed NPC under it, so a write
    that read the names before a rename committed either commits first (and is marked) or sees it here."""
    return card_text(document, tags, _npc_names(campaign, document["entities"]["npc"])) != text


# --- Tags by a model --------------------------------------------------------------------------
TAGS_SCHEMA = {
    "type": "object", "required": ["visual_tags"],
    "properties": {"visual_tags": {
        "type": "array", "minItems": TAGS_MIN, "maxItems": TAGS_MAX, "uniqueItems": True,
        "items": {"type": "string", "minLength": 1, "maxLength": TAG_MAX_CHARS, "pattern": r"\S"}}},
}
_VALIDATOR = jsonschema.Draft202012Validator(TAGS_SCHEMA)


class TagsReply(RootModel[dict[str, Any]]):
    """Lets `LLMClient.chat_json` validate with jsonschema: its errors are shown back to the model."""

    @model_validator(mode="before")
    @classmethod
    def _schema(cls, value: Any) -> Any:
        errors = [f"{'/'.join(map(str, e.absolute_path)) or '(root)'}: {e.message[:200]}"
                  for e in _VALIDATOR.iter_errors(value)][:8]
        if errors:
            raise ValueError("; ".join(errors))
        return value


TAGGER_PROMPT = (
    "You write the visual tags of an image made for a tabletop role-playing scene, so that later images keep "
    f"its canon. Give {TAGS_MIN} to {TAGS_MAX} short, concrete, visible markers: objects, light, palette, "
    "weather, distinctive marks (a scar, an emblem), not moods or story. Lowercase; a tag of several words "
    "joins them with underscores (scar_left_cheek); in the language of the description. "
    'Reply with JSON only: {"visual_tags": ["...", "..."]}.')


def _tagger_input(card: ArtCard) -> str:
    lines = [f"Image description: {card.document['prompt_text']}", f"Style: {card.style_preset}"]
    # The scene's text (seed §8.8): its latest live summary, when the engine recorded one.
    scene = (EpisodicSummary.objects.filter(campaign_id=card.campaign_id, scene_id=card.scene_id,
                                            expired_at__isnull=True).order_by("-when", "-id")
             .values_list("document", flat=True).first())
    if scene:
        lines.append(f"Scene: {scene['what']['event']} → {scene['what']['outcome']}")
    return "\n".join(lines)


def _clean(tags: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(t.strip()[:TAG_MAX_CHARS] for t in tags if t.strip()))


def _tag_failed(card_id: int, exc: Exception, *, give_up: bool) -> None:
    fields: dict[str, Any] = {"tag_error": f"{type(exc).__name__}: {exc}"[:500], "tag_attempted_at": timezone.now()}
    if give_up:
        fields["tags_pending"] = False
    ArtCard.objects.filter(pk=card_id, tags_pending=True).update(**fields)


def artcard_tag(*, card_id: int, final: bool = True) -> str:
    """Ask the model for the card's tags and index it by them. Idempotent: a card no longer pending (tagged,
    given up, deleted) is left as it is. `final`: the task's last try, after which a transient fault gives
    up too (the card keeps its derived tags); before it, LLMUnavailable is raised for the task to retry.
    Returns what happened: tagged | failed | skipped."""
    card = ArtCard.objects.filter(pk=card_id, tags_pending=True).first()
    if card is None:
        return "skipped"
    client = get_llm()
    if client is None:  # the LLM was switched off since: the derived tags stand
        ArtCard.objects.filter(pk=card_id).update(tags_pending=False)
        return "skipped"
    ArtCard.objects.filter(pk=card_id).update(tag_attempts=card.tag_attempts + 1, tag_attempted_at=timezone.now())
    try:
        reply, _ = client.chat_json("art_tagger", [{"role": "system", "content": TAGGER_PROMPT},
                                                  {"role": "user", "content": _tagger_input(card)}],
                                    TagsReply, parse_retries=1, max_tokens=200)
    except LLMUnavailable as exc:
        logger.warning("art card %s: the tagger is unavailable%s: %s", card_id, "" if final else ", retrying", exc)
        _tag_failed(card_id, exc, give_up=final)
        if not final:
            raise
        return "failed"
    except LLMError as exc:  # a refusal (4xx) or no valid JSON after a re-ask: retrying would say the same
        logger.warning("art card %s: the tagger failed, the card keeps its derived tags: %s", card_id, exc)
        _tag_failed(card_id, exc, give_up=True)
        return "failed"
    tags = _clean(reply.root["visual_tags"])
    campaign = Campaign.objects.select_related("tenant").get(pk=card.campaign_id)
    text, vector = index_prepare(campaign, card.document, tags)
    return _tags_write(campaign, card_id, tags, text, vector)


@transaction.atomic
def _tags_write(campaign: Campaign, card_id: int, tags: list[str], text: str, vector: np.ndarray) -> str:
    # The writers' order: campaign row, namespace lock, then the card (campaign_delete and the retention beat
    # take the namespace lock before they delete cards).
    if not campaign_row_share(campaign):
        return "skipped"
    active = campaign.status == Campaign.Status.ACTIVE
    if active:
        namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
    card = ArtCard.objects.select_for_update().filter(pk=card_id, tags_pending=True).first()
    if card is None:
        return "skipped"
    if card.chunk_id is not None:
        chunks_delete(tenant=campaign.tenant, chunks=Chunk.objects.filter(pk=card.chunk_id))
    # Archived: out of search, the tags are still the card's.
    card.chunk = index_insert(campaign, card, text, vector) if active else None
    if active and names_changed(campaign, card.document, tags, text):
        # An NPC of the card was renamed while the model answered: the tags stand, the refresh job gives the
        # chunk the name as it is now.
        card.reindex_pending = True
        transaction.on_commit(lambda: refresh_enqueue(campaign.pk))
    card.visual_tags, card.tags_source, card.tags_pending, card.tag_error = tags, ArtCard.TagsSource.MODEL, False, ""
    card.save(update_fields=["chunk", "visual_tags", "tags_source", "tags_pending", "tag_error", "reindex_pending"])
    return "tagged"


def tag_enqueue(card_id: int) -> None:
    """After commit: the tagging job. In-process (no broker) it goes to the background thread where a beat
    runs (the sweep finds the pending card if the process dies), else runs here; a broker outage leaves the
    card pending for the sweep."""
    from lore.campaigns.tasks import artcard_tag

    deferred.dispatch(artcard_tag, card_id, what=f"art card {card_id} tagging")


def artcards_sweep(*, now: Any = None) -> dict[str, int]:
    """Beat: re-enqueue tagging left pending (a lost message, a process that died) SWEEP_AFTER after its
    last attempt, index the cards of active campaigns that have no chunk (recorded before cards were
    indexed), and refresh the cards an NPC's rename left `reindex_pending` (the job's message lost).
    Returns {"tagging_enqueued": n, "indexed": n, "refreshed": n}."""
    now = now or timezone.now()
    counts = {"tagging_enqueued": 0, "indexed": 0, "refreshed": 0}
    due = (ArtCard.objects.filter(tags_pending=True, recorded_at__lt=now - SWEEP_AFTER)
           .filter(Q(tag_attempted_at__isnull=True) | Q(tag_attempted_at__lt=now - SWEEP_AFTER))
           .order_by("id").values_list("id", flat=True)[:SWEEP_BATCH])
    for card_id in due:
        tag_enqueue(card_id)
        counts["tagging_enqueued"] += 1
    missing = (ArtCard.objects.filter(chunk__isnull=True, campaign__status=Campaign.Status.ACTIVE)
               .select_related("campaign__tenant").order_by("id")[:SWEEP_BATCH])
    for card in missing:
        text, vector = index_prepare(card.campaign, card.document, card.visual_tags)
        counts["indexed"] += _index_missing(card.campaign, card.pk, text, vector)
    # Here rather than enqueued: no timestamp tells a lost job from one about to run, and a run that finds
    # the cards refreshed already does nothing.
    stale = (ArtCard.objects.filter(reindex_pending=True, campaign__status=Campaign.Status.ACTIVE)
             .order_by("campaign_id").values_list("campaign_id", flat=True).distinct())
    for campaign_id in list(stale[:SWEEP_BATCH]):
        counts["refreshed"] += artcards_refresh(campaign_id=campaign_id)
    return counts


@transaction.atomic
def _index_missing(campaign: Campaign, card_id: int, text: str, vector: np.ndarray) -> int:
    if not campaign_row_share(campaign) or campaign.status != Campaign.Status.ACTIVE:
        return 0
    namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
    card = ArtCard.objects.select_for_update().filter(pk=card_id, chunk__isnull=True).first()
    if card is None or names_changed(campaign, card.document, card.visual_tags, text):
        return 0  # indexed meanwhile; or an NPC of it renamed since the text was made: the next sweep's work
    card.chunk = index_insert(campaign, card, text, vector)
    card.save(update_fields=["chunk"])
    return 1


# --- Renamed NPCs and `manage.py reindex` --------------------------------------------------------
REFRESH_BATCH = 200
# A card changed again between its embedding and its write (tagged, an NPC renamed once more) goes round
# again, at most this many times in one run; one still changing is left pending for the next run.
REFRESH_ROUNDS = 3


def refresh_enqueue(campaign_id: int) -> None:
    """After commit: the job refreshing the campaign's cards marked `reindex_pending`, sent as `tag_enqueue`
    sends tagging; a broker outage leaves the cards pending for the sweep."""
    from lore.campaigns.tasks import artcards_refresh as task

    deferred.dispatch(task, campaign_id, what=f"campaign {campaign_id} art card refresh")


def artcards_refresh(*, campaign_id: int) -> int:
    """Rewrite the chunks of the campaign's cards marked `reindex_pending` (an NPC they show was renamed) from
    their words as they are now. Idempotent: a card no longer pending (refreshed, deleted) is left as it is;
    an archived campaign's cards are only unmarked (they have no chunk). Returns the chunks written."""
    campaign = Campaign.objects.select_related("tenant").filter(pk=campaign_id).first()
    if campaign is None:
        return 0
    return _rebuild(campaign, ArtCard.objects.filter(campaign=campaign, reindex_pending=True), everything=False)


def artcards_reindex(*, campaign: Campaign) -> int:
    """`manage.py reindex`: every card of an active campaign indexed again with today's analyser and embedder,
    the namespace then recorded as that embedder's, and chunks no card holds deleted. Returns the chunks
    written."""
    if campaign.status != Campaign.Status.ACTIVE:
        return 0  # archived: its cards have no chunks
    return _rebuild(campaign, ArtCard.objects.filter(campaign=campaign), everything=True)


def artcards_reindex_campaigns(tenant: Any) -> list[Campaign]:
    """The campaigns `artcards_reindex` rebuilds: the tenant's active ones (memoryhub.registry.Reindexer)."""
    return list(Campaign.objects.filter(tenant=tenant, status=Campaign.Status.ACTIVE).select_related("tenant")
                .order_by("id"))


def _rebuild(campaign: Campaign, cards: QuerySet[ArtCard], *, everything: bool) -> int:
    written, todo, space = 0, cards, get_embedder().name
    for _ in range(REFRESH_ROUNDS):
        changed: list[int] = []
        last = 0
        # Batches by id: each embedded outside any transaction, then written in its own short one.
        while batch := list(todo.filter(pk__gt=last).order_by("id")[:REFRESH_BATCH]):
            last = batch[-1].pk
            result = _rewrite(campaign, _prepare(campaign, batch), space, everything=everything)
            if result is None:  # archived or deleted meanwhile
                return written
            written += result[0]
            changed += result[1]
        if not changed:
            break
        todo = cards.filter(pk__in=changed)
    else:
        logger.warning("campaign %s: %s art card(s) kept changing while refreshed, left for the next run",
                       campaign.pk, len(changed))
    if everything and not changed:
        # Batch by batch, the namespace held both embedders' vectors (`mixed`, searched by words alone).
        with transaction.atomic():
            namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
            Namespace.objects.filter(tenant_id=campaign.tenant_id, name=campaign.art_namespace).update(
                vector_space=space)
    return written


def _prepare(campaign: Campaign, cards: Sequence[ArtCard]) -> dict[int, tuple[str, np.ndarray]]:
    """Each card's chunk text and vector, as `index_prepare`'s but embedded in one call. Outside any
    transaction: the embedder may be a network call."""
    names = _npc_names(campaign, sorted({npc for card in cards for npc in card.document["entities"]["npc"]}))
    texts = [card_text(card.document, card.visual_tags, names) for card in cards]
    vectors = fit_dims(get_embedder().embed(texts), lore_config.domain_config(DOMAIN).dims)
    return {card.pk: (text, vector) for card, text, vector in zip(cards, texts, vectors, strict=True)}


@transaction.atomic
def _rewrite(campaign: Campaign, prepared: dict[int, tuple[str, np.ndarray]], space: str, *,
             everything: bool) -> tuple[int, list[int]] | None:
    """Replace the prepared cards' chunks; (chunks written, ids of cards that changed since they were
    prepared), or None when the campaign is archived or deleted."""
    # The writers' order (as `_tags_write`): campaign row, namespace lock, then the cards.
    if not campaign_row_share(campaign):
        return None
    if campaign.status != Campaign.Status.ACTIVE:
        ArtCard.objects.filter(campaign=campaign, reindex_pending=True).update(reindex_pending=False)
        return None
    namespace_write_lock(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace)
    # Read under the locks: a card deleted meanwhile is not found, so it gets no chunk again, and one
    # refreshed by another run is no longer pending.
    cards = ArtCard.objects.select_for_update().filter(campaign=campaign, pk__in=list(prepared)).order_by("id")
    if not everything:
        cards = cards.filter(reindex_pending=True)
    cards = list(cards)
    # The names as they are now, one query for the batch (names_changed's check, card by card).
    names = _npc_names(campaign, sorted({npc for card in cards for npc in card.document["entities"]["npc"]}))
    fresh: list[ArtCard] = []
    changed: list[int] = []
    for card in cards:
        if card_text(card.document, card.visual_tags, names) != prepared[card.pk][0]:
            changed.append(card.pk)  # tagged or an NPC renamed again: its chunk stays until it goes round again
        else:
            fresh.append(card)
    stale = Chunk.objects.filter(pk__in=[card.chunk_id for card in fresh if card.chunk_id is not None])
    if everything:
        # Chunks no card holds any longer (none should exist; a reindex is where they would be noticed).
        held = ArtCard.objects.filter(campaign=campaign, chunk__isnull=False).values("chunk_id")
        stale |= Chunk.objects.filter(tenant_id=campaign.tenant_id, namespace=campaign.art_namespace).exclude(
            pk__in=held)
    chunks_delete(tenant=campaign.tenant, chunks=stale)
    if fresh:
        texts = [prepared[card.pk][0] for card in fresh]
        chunks = chunks_insert(tenant=campaign.tenant, namespace=campaign.art_namespace, prepared=PreparedChunks(
            [_draft(campaign, card, text) for card, text in zip(fresh, texts, strict=True)],
            [storable_terms(analyze(text)) for text in texts],
            np.stack([prepared[card.pk][1] for card in fresh]), space))
        for card, chunk in zip(fresh, chunks, strict=True):
            card.chunk, card.reindex_pending = chunk, False
        ArtCard.objects.bulk_update(fresh, ["chunk", "reindex_pending"])
    return len(fresh), changed


# --- Search -----------------------------------------------------------------------------------
def artcards_search(campaign: Campaign, query: str, candidates: QuerySet[ArtCard] | None,
                    k: int) -> tuple[list[tuple[int, FusedScore]], list[str]]:
    """The campaign's cards (or those of `candidates`) nearest to `query`: (card id, fused score) best first,
    at most `k`, above the relevance floor; and the steps skipped (the vector side when the embedder is away
    or the namespace holds another embedder's vectors: words alone then)."""
    cfg = lore_config.domain_config(DOMAIN)
    weights = dict(cfg.weights)
    namespace = campaign.art_namespace
    chunks = Chunk.objects.filter(tenant_id=campaign.tenant_id, namespace=namespace)
    scores: dict[str, dict[int, float]] = {}
    skipped: list[str] = []
    allowed = None
    if candidates is not None:
        # The filtered cards' chunk ids, read once from the cards: as a subquery joined to the chunks (and
        # again in the vector scan) they cost ~40 ms of a 47 ms answer at 300 cards (bench/art_suggest_query.py).
        allowed = np.sort(np.fromiter(candidates.filter(chunk__isnull=False).values_list("chunk_id", flat=True),
                                      dtype=np.int64))
        if not allowed.size:
            return [], skipped
        chunks = chunks.filter(pk__in=allowed.tolist())
    if cfg.mode in ("hybrid", "bm25"):
        index = bm25_index.namespace_index(campaign.tenant_id, namespace)
        scores["bm25"] = dict(index.search(analyze_query(query), cfg.k_keyword, allowed=allowed))
    if cfg.mode in ("hybrid", "vector"):
        size, space = (Namespace.objects.filter(tenant_id=campaign.tenant_id, name=namespace)
                       .values_list("chunk_count", "vector_space").first() or (0, ""))
        vector = None
        if rag_selectors.foreign_vector_spaces(campaign.tenant_id, {namespace: space}):
            skipped.append("reindex_needed")
        else:
            vector = embed_query_if_available(query, tenant_id=campaign.tenant_id, where="art_suggest")
            if vector is None:
                skipped.append("embedder_unavailable")
        if vector is not None:
            scores["vector"] = dict(vectors.nearest(chunks, fit_dims(vector, cfg.dims)[0], cfg.k_vector,
                                                    namespace_size=size, hnsw_filter=Q(in_hnsw=True),
                                                    hnsw_halfvec=True))
    fused = fuse(scores, method="rrf", weights={name: weights[name] for name in scores}, rrf_k=cfg.rrf_k)
    floor = cosine_floor(MIN_COSINE)
    kept = [(pk, s) for pk, s in fused.items() if "bm25" in s.ranks or s.components.get("vector", 0.0) >= floor]
    by_chunk = dict(ArtCard.objects.filter(campaign=campaign, chunk_id__in=[pk for pk, _ in kept])
                    .values_list("chunk_id", "id"))
    return [(by_chunk[pk], s) for pk, s in kept if pk in by_chunk][:k], skipped

