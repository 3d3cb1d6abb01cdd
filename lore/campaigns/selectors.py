"""Reads of campaign memory, plain functions shared by the scene assembly and the read tools.

For the tools (seed 003 §8.12), each returns JSON-ready dicts:

- `session_fetch(campaign, party, k)`: the party's last `k` summaries (newest first by `when`, the
  seed's documents) and its current flags, each with the summary that set it.
- `npc_profile(npc_id, party, campaign=None, hero_id=None)`: the seed's NPC profile (§8.5.2), its
  dynamic part for that party only: the disposition towards the party and towards each hero of it that
  has one (or only the hero asked: 404 for one the party does not have), the summaries that moved them,
  plus each one's latest changes.
- `episode_search(campaign, party, query, k=None)`: the party's summaries nearest to a query, by
  vector over their `episode` chunks (seed §8.13.1: vector mode, filtered by party), and those of the
  campaign's NPCs the query names by their name or what they are (`npcs_asked`: "the witch" is Василиса).
- `art_suggest(campaign, scene_id=None, location=None, npcs=(), query=None)`: visual tags and style of the
  matching art cards (ranked by `query` when given, lore.campaigns.art), and the canon markers a new image
  must keep or avoid (§8.14).
- `campaign_contents(campaign)`: how many rows of each main kind the campaign holds, for the admin's
  deletion page.

`campaign`, `party` are model instances already checked against the caller's tenant (use
`campaign_get` / `party_get`, which raise 404 for unknown or foreign ids). An archived campaign is
out of search, scene-context and the tools: callers check `require_active` (409 `archived`).
Expired summaries (past the campaign's `episode_ttl_days`) are tombstones no read returns.
"""

from __future__ import annotations

import difflib
import functools
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np
from django.db.models import Q, Sum

from lore import config as lore_config
from lore.campaigns import art
from lore.campaigns.models import (
    HERO_PREFIX,
    NPC,
    ArtCard,
    Campaign,
    Disposition,
    DispositionChange,
    EpisodicSummary,
    Party,
    Thread,
)
from lore.selectors import MIN_COSINE
from lore.services import fit_dims
from memoryhub.embeddings import cosine_floor, embed_query_if_available
from memoryhub.exceptions import ApplicationError
from memoryhub.morph import analyzer as morph
from memoryhub.search import vectors
from memoryhub.text import HAN_CHAR, analyze, normalize, pronoun_terms, words
from memoryhub.text import term as word_term
from memoryhub.validation import iso_instant
from rag import index as bm25_index
from rag import selectors as rag_selectors
from rag.models import Chunk, Namespace

LATEST_CHANGES = 3
KNOWN_IDS_SHOWN = 10


def _not_found(message: str, field: str) -> ApplicationError:
    return ApplicationError(message, code="not_found", field=field, status_code=404)


def _known(wanted: str, ids: list[str], what: str) -> str:
    """What the caller may have meant: a model over MCP asked for NPC 'Dunmore' (the name it read in
    the lore) where the id is 'npc_Dunmore', and a bare 404 left it guessing."""
    if not ids:
        return f" It has no {what} yet."
    close = difflib.get_close_matches(wanted, ids, n=3, cutoff=0.6) or \
        [i for i in ids if wanted.lower() in i.lower()][:3]
    if close:
        return " Did you mean " + " or ".join(repr(i) for i in close) + "?"
    shown = ", ".join(ids[:KNOWN_IDS_SHOWN]) + (f" (and {len(ids) - KNOWN_IDS_SHOWN} more)"
                                                if len(ids) > KNOWN_IDS_SHOWN else "")
    return f" Its {what}: {shown}."


def campaign_get(*, tenant_id: int, slug: str, field: str = "campaign") -> Campaign:
    """`field`: what an error names, as the caller called it (the tools' input is `campaign_id`)."""
    campaign = Campaign.objects.filter(tenant_id=tenant_id, slug=slug).select_related("world", "tenant").first()
    if campaign is None:
        raise _not_found(f"No campaign {slug!r}.", field)
    return campaign


def require_active(campaign: Campaign, doing: str, field: str = "campaign") -> None:
    """A 409 naming why: an archived (finished) campaign is kept read-only and out of search."""
    if campaign.is_archived:
        when = f" on {campaign.archived_at:%Y-%m-%d}" if campaign.archived_at else ""
        raise ApplicationError(f"Campaign {campaign.slug!r} was finished and archived{when}: it is kept read-only "
                               f"and out of search, so {doing} is refused.", code="archived", field=field,
                               status_code=409)


def party_get(*, campaign: Campaign, slug: str, field: str = "party") -> Party:
    party = Party.objects.filter(campaign=campaign, slug=slug).first()
    if party is None:
        known = list(Party.objects.filter(campaign=campaign).order_by("slug").values_list("slug", flat=True))
        raise _not_found(f"Campaign {campaign.slug!r} has no party {slug!r}." + _known(slug, known, "parties"),
                         field)
    return party


def npcs_get(*, campaign: Campaign, npc_ids: Sequence[str], field: str = "npcs") -> list[NPC]:
    found = {npc.npc_id: npc for npc in NPC.objects.filter(campaign=campaign, npc_id__in=list(npc_ids))}
    for i, npc_id in enumerate(npc_ids):
        if npc_id not in found:
            known = list(NPC.objects.filter(campaign=campaign).order_by("npc_id").values_list("npc_id", flat=True))
            raise _not_found(f"Campaign {campaign.slug!r} has no NPC {npc_id!r}." + _known(npc_id, known, "NPCs"),
                             f"{field}/{i}" if len(npc_ids) > 1 or field == "npcs" else field)
    return [found[npc_id] for npc_id in npc_ids]


def party_flags(party: Party) -> list[dict[str, Any]]:
    last_set = {}
    # Flags outlive the summaries that set them (engine state, not narrative): an expired summary
    # still names the flag's origin by its id. The value stands from the latest summary by `when`, not
    # the last to arrive: a late older summary's change is kept, not applied.
    for key, summary_id in (party.flag_changes.filter(applied=True).order_by("summary__when", "id")
                            .values_list("key", "summary__summary_id")):
        last_set[key] = summary_id
    return [{"key": key, "value": value, "set_by": last_set.get(key, "")}
            for key, value in sorted(party.flags.items())]


def session_fetch(campaign: Campaign, party: Party, k: int = 2) -> dict[str, Any]:
    summaries = (EpisodicSummary.objects.filter(campaign=campaign, party=party, expired_at__isnull=True)
                 .order_by("-when", "-id").values_list("document", flat=True)[:k])
    return {"campaign_id": campaign.slug, "party_id": party.slug, "summaries": list(summaries),
            "flags": party_flags(party)}


_CYRILLIC = re.compile("[\u0400-\u04ff]")


@functools.lru_cache(maxsize=4096)
def _npc_terms(text: str) -> frozenset[str]:
    """The terms by which a question may name what `text` says: each word's BM25 term and, for a Russian
    word, its lemma's too (pymorphy3): Snowball stems "купца" to "купц" but "купец" to "купец", "люди" to
    "люд". Whole words only: BM25 also indexes a Chinese word's characters, but 女 of 女人 (a woman) names
    no 女巫 (witch). Cached: the same NPCs are read on every search of their campaign."""
    terms: set[str] = set()
    for word in words(text):
        term = word_term(word)
        if not term:
            continue
        terms.add(term)
        if _CYRILLIC.search(word):
            lemma = word_term(normalize(morph().parse(word)[0].normal_form))
            if lemma:
                terms.add(lemma)
    return frozenset(terms - pronoun_terms())


def npcs_asked(campaign: Campaign, query: str) -> list[NPC]:
    """The campaign's NPCs that a question names by a word of their static name or archetype (seed §8.5.2):
    "что случилось у ведьмы?" asks about Василиса, whose archetype is "ведьма", while her summaries call
    her by her name. Not by her secrets (hidden from the players: a question about the moon key is not
    about whoever knows where it is) nor by her voice or lore ids.

    A word held by more than half of the campaign's NPCs (and by more than one) names none of them:
    "человек" in every archetype would otherwise bring every NPC's summaries, as the episode search's
    relevance floor keeps a question from bringing every summary. A Chinese word of the NPC's said
    inside a longer word of the question counts ("老女巫": jieba may keep 老 with it)."""
    held = {npc: _npc_terms(f"{npc.name}\n{npc.archetype}")
            for npc in NPC.objects.filter(campaign=campaign).only("npc_id", "name", "archetype")}
    if not held:
        return []
    said, text = _npc_terms(query), normalize(query)
    shared = Counter(term for terms in held.values() for term in terms)
    common = {term for term, n in shared.items() if n > 1 and 2 * n > len(held)}
    return [npc for npc, terms in held.items()
            if any(term in said or (len(term) > 1 and HAN_CHAR.match(term) and term in text)
                   for term in terms - common)]


def _name_terms(npcs: Sequence[NPC], query_terms: Sequence[str]) -> list[str]:
    """The BM25 terms of the asked NPCs' names that the query lacks: a summary that names the NPC finds
    the question. Whole words, a lone Han character left out (林 of 林掌柜 would find every 森林)."""
    terms = {term for npc in npcs for term in _npc_terms(npc.name)
             if not (len(term) == 1 and HAN_CHAR.match(term))}
    return sorted(terms - set(query_terms))


def _involving(party: Party, npcs: Sequence[NPC]) -> set[int]:
    """The chunks of the party's live summaries that record one of these NPCs in their scene (`who.npcs`,
    or a disposition change of a summary recorded before a change had to name an NPC of the scene)."""
    if not npcs:
        return set()
    recorded = Q()
    for npc in npcs:
        recorded |= Q(document__who__npcs__contains=[npc.npc_id])
        recorded |= Q(document__relations_delta__contains=[{"npc_id": npc.npc_id}])
    return set(EpisodicSummary.objects.filter(recorded, party=party, expired_at__isnull=True, chunk__isnull=False)
               .values_list("chunk_id", flat=True))


def episode_search(campaign: Campaign, party: Party, query: str, k: int | None = None) -> list[dict[str, Any]]:
    """Summaries by vector (a cosine under the floor needs a word of the query), or by BM25 while the
    vectors are out; then those of the NPCs the query names (`npcs_asked`), whatever their cosine or words,
    first into the `k`. Best score first; a hit found through an NPC says which (`npcs`)."""
    require_active(campaign, "searching its episodes")
    cfg = lore_config.domain_config("episode")
    k = k or cfg.k_vector
    # Expired and archived summaries have no chunk left: nothing else to filter.
    chunks = Chunk.objects.filter(tenant_id=campaign.tenant_id, namespace=campaign.episode_namespace,
                                  session_id=party.slug)
    size, space = (Namespace.objects.filter(tenant_id=campaign.tenant_id, name=campaign.episode_namespace)
                   .values_list("chunk_count", "vector_space").first() or (0, ""))
    asked = npcs_asked(campaign, query)
    terms = analyze(query)
    terms += _name_terms(asked, terms)
    involved = _involving(party, asked)
    foreign = rag_selectors.foreign_vector_spaces(campaign.tenant_id, {campaign.episode_namespace: space})
    embedded = None if foreign else embed_query_if_available(query, tenant_id=campaign.tenant_id,
                                                                   where="episode_search")
    if embedded is not None:
        vector = fit_dims(embedded, cfg.dims)[0]
        ranked = vectors.nearest(chunks, vector, k, namespace_size=size, hnsw_filter=Q(in_hnsw=True),
                                 hnsw_halfvec=True)
        # The world search's relevance floor: a summary needs a word of the question or a cosine of at least
        # MIN_COSINE (on the embedder's scale). A QA pass: "zzzz qqqq" and a Russian question about a duel
        # returned k summaries, the first about a forge repair at a negative cosine; "nothing" is the answer.
        # The names of the NPCs asked for are words of the question here.
        floor = cosine_floor(MIN_COSINE)
        far = np.asarray(sorted(pk for pk, score in ranked if score < floor), dtype=np.int64)
        worded = {pk for pk, _ in bm25_index.namespace_index(campaign.tenant_id, campaign.episode_namespace).search(
            terms, len(far), allowed=far)} if len(far) else set()
        ranked = [(pk, score) for pk, score in ranked if score >= floor or pk in worded or pk in involved]
        missing = involved - {pk for pk, _ in ranked}
        if missing:
            ranked += vectors.nearest(chunks.filter(id__in=sorted(missing)), vector, k, namespace_size=len(missing),
                                      hnsw_filter=Q(in_hnsw=True), hnsw_halfvec=True)
    else:
        # Summaries embedded by another embedder until `reindex`, or the embedder away: found by
        # their words meanwhile.
        allowed = np.fromiter(chunks.order_by("id").values_list("id", flat=True), dtype=np.int64)
        ranked = bm25_index.namespace_index(campaign.tenant_id, campaign.episode_namespace).search(
            terms, k, allowed=allowed)
        # An asked NPC's summary that says no word of the question: found by who was there, at no score.
        found = {pk for pk, _ in ranked}
        ranked += [(pk, 0.0) for pk in sorted(involved - found, reverse=True)]
    # The NPCs' summaries are what the question asks about: they take the places first, the rest fill in.
    chosen = [hit for hit in ranked if hit[0] in involved][:k]
    chosen += [hit for hit in ranked if hit[0] not in involved][:k - len(chosen)]
    chosen.sort(key=lambda hit: -hit[1])
    by_chunk = {s.chunk_id: s for s in EpisodicSummary.objects.filter(chunk_id__in=[pk for pk, _ in chosen])}
    hits = []
    for pk, score in chosen:
        if pk not in by_chunk:
            continue
        summary = by_chunk[pk]
        hit = {"summary_id": summary.summary_id, "score": round(score, 4), "document": summary.document}
        if pk in involved:
            present = {*summary.document["who"]["npcs"], *(c["npc_id"] for c in summary.document["relations_delta"])}
            hit["npcs"] = [npc.npc_id for npc in asked if npc.npc_id in present]
        hits.append(hit)
    return hits


def _changes(npc: NPC, party: Party, heroes: Sequence[str] | None) -> list[dict[str, Any]]:
    """The changes of the NPC's dispositions towards the party and its heroes (only these heroes, and the
    party, when given), newest first."""
    rows = (DispositionChange.objects.filter(disposition__npc=npc, disposition__party=party)
            .order_by("-id").select_related("summary", "disposition"))
    if heroes is not None:
        rows = rows.filter(disposition__hero_id__in=["", *heroes])
    # A change outlives its summary's TTL (the disposition is engine state): `summary_expired` says
    # the summary itself is no longer there to fetch; its `when` stays on the tombstone. `at` is the game's
    # time, the summary's `when` (the recording time told a model an engine's late retry happened last);
    # `recorded_at`, when MemoryHub got it, is the order `value_after` follows.
    return [{"towards": c.disposition.towards, "summary_id": c.summary.summary_id, "delta": c.delta,
             "applied": c.applied, "value_after": c.value_after, "reason": c.reason, "at": iso_instant(c.summary.when),
             "recorded_at": iso_instant(c.created_at), "summary_expired": c.summary.expired_at is not None}
            for c in rows]


def _impact(change: dict[str, Any]) -> str:
    hero = change["towards"].removeprefix(HERO_PREFIX) if change["towards"] != "party" else ""
    return f"disposition{change['applied']:+d}" + (f" towards {hero}" if hero else "") + f": {change['reason']}"


def _hero_check(party: Party, hero_id: str, field: str) -> None:
    """A 404 for a hero the party does not have. The party keeps no roster: its heroes are the players its
    live summaries name (`who.players`, as a disposition's `towards` must be) and those some NPC holds a
    disposition towards (which outlives an expired summary). A QA pass asked for `p_Q` and got a
    disposition of 0, a value the model took for a fact about a hero that never played."""
    live = EpisodicSummary.objects.filter(party=party, expired_at__isnull=True)
    if (live.filter(document__who__players__contains=[hero_id]).exists()
            or Disposition.objects.filter(party=party, hero_id=hero_id).exists()):
        return
    known = {hero for players in live.values_list("document__who__players", flat=True) for hero in players or ()}
    known.update(Disposition.objects.filter(party=party).exclude(hero_id="").values_list("hero_id", flat=True))
    raise _not_found(f"Party {party.slug!r} has no hero {hero_id!r}: a hero is a player its summaries name in "
                     "who.players." + _known(hero_id, sorted(known), "heroes"), field)


def npc_profile(npc_id: str, party: Party, campaign: Campaign | None = None,
                hero_id: str | None = None, hero_field: str = "hero") -> dict[str, Any]:
    """`dynamic.disposition`: towards the party (`party_id:<party>`, 0 before any change) and towards each
    hero of it that has one (`hero_id:<hero>`), or with `hero_id` only that hero (0 when it has none; a hero
    the party does not have is a 404 naming `hero_field`, the caller's name for it).
    `latest_changes`: the last LATEST_CHANGES changes of each, newest recorded first, each saying `towards`
    whom, `at` (its summary's `when`, the game's time) and `recorded_at`."""
    campaign = campaign or party.campaign
    [npc] = npcs_get(campaign=campaign, npc_ids=[npc_id], field="npc_id")
    if hero_id is not None:
        _hero_check(party, hero_id, hero_field)
    heroes = None if hero_id is None else [hero_id]
    dispositions = npc.dispositions.filter(party=party)
    if heroes is not None:
        dispositions = dispositions.filter(hero_id__in=["", *heroes])
    values = {d.hero_id: d.value for d in dispositions}
    disposition = {f"party_id:{party.slug}": values.pop("", 0)}
    for hero in sorted({*values, *(heroes or ())}):
        disposition[f"{HERO_PREFIX}{hero}"] = values.get(hero, 0)
    history = _changes(npc, party, heroes)
    shown: Counter[str] = Counter()
    latest = []
    for change in history:
        shown[change["towards"]] += 1
        if shown[change["towards"]] <= LATEST_CHANGES:
            latest.append(change)
    return {
        "npc_id": npc.npc_id,
        "static": npc.static,
        "dynamic": {
            "disposition": disposition,
            "memory": [{"summary_id": c["summary_id"], "impact": _impact(c)} for c in reversed(history)],
        },
        "version": npc.version,
        "latest_changes": latest,
    }


def art_suggest(campaign: Campaign, scene_id: str | None = None, location: str | None = None,
                npcs: Sequence[str] = (), limit: int = 8, query: str | None = None) -> dict[str, Any]:
    """Cards of the scene, else of the location or NPCs, newest first. Markers (seed §8.14): a tag
    recurring on the safe cards (more than half of them, or the only one: the scar, the palette, not
    one night's mist) must be kept; a tag seen only on cards moderation refused is to be avoided.

    `query` (free text, "misty bridge at night with the ronin"): the filters narrow, the query ranks. With
    filters, their cards come best match first (BM25 + vector over the cards' words, RRF with the `artcards`
    weights of config/knowledge.yaml), then those the query does not reach, newest first: a card of the
    asked scene is never dropped for its words. Without filters, the campaign's cards the query finds
    (above the relevance floor), at most the domain's `k`. Each card then carries its `score` and
    `components`, and the answer the steps `skipped`."""
    filtered = bool(scene_id or location or npcs)
    if scene_id:
        match = Q(scene_id=scene_id)
    else:
        match = Q(pk__in=[])
        if location:
            match |= Q(locations__contains=[location])
        for npc_id in npcs:
            match |= Q(npcs__contains=[npc_id])
    newest = ArtCard.objects.filter(match, campaign=campaign).order_by("-created_at", "-id")
    scores: dict[int, Any] = {}
    skipped: list[str] = []
    if query:
        k = limit if filtered else min(limit, lore_config.domain_config(art.DOMAIN).k)
        ranked, skipped = art.artcards_search(campaign, query, newest if filtered else None, k)
        scores = dict(ranked)
        found = ArtCard.objects.in_bulk(list(scores))
        chosen = [found[pk] for pk in scores if pk in found]
        if filtered and len(chosen) < limit:
            chosen += list(newest.exclude(pk__in=list(scores))[:limit - len(chosen)])
    else:
        chosen = list(newest[:limit])
    safe_tags: Counter[str] = Counter(tag for c in chosen if c.safe for tag in c.visual_tags)
    unsafe_tags = {tag for c in chosen if not c.safe for tag in c.visual_tags}
    safe_count = sum(1 for c in chosen if c.safe)
    styles = Counter(c.style_preset for c in chosen if c.safe)

    def card(c: ArtCard) -> dict[str, Any]:
        shown = {"image_id": c.image_id, "scene_id": c.scene_id, "visual_tags": c.visual_tags,
                 "style": c.document.get("style", {}), "safe": c.safe}
        if query:
            score = scores.get(c.pk)
            shown["score"] = round(score.score, 6) if score else 0.0
            shown["components"] = {k: round(v, 4) for k, v in score.components.items()} if score else {}
        return shown

    result = {
        "cards": [card(c) for c in chosen],
        "visual_tags": [tag for tag, _ in safe_tags.most_common()],
        "style": styles.most_common(1)[0][0] if styles else None,
        "keep": sorted(tag for tag, n in safe_tags.items() if safe_count == 1 or 2 * n > safe_count),
        "avoid": sorted(unsafe_tags - set(safe_tags)),
    }
    if query:
        result["skipped_steps"] = [{"step": "vector", "reason": reason} for reason in skipped]
    return result


def campaign_contents(campaign: Campaign) -> dict[str, int]:
    """What `campaign_delete` would remove, by the kinds an editor weighs (the receipt counts every kind).
    Each a count through the campaign's foreign-key index; the chunks from the namespaces' bookkeeping
    (`Namespace.chunk_count`, kept under the namespace lock), one row each however large the campaign."""
    namespaces = [campaign.episode_namespace, campaign.art_namespace]
    chunks = (Namespace.objects.filter(tenant_id=campaign.tenant_id, name__in=namespaces)
              .aggregate(total=Sum("chunk_count"))["total"])
    return {
        "parties": Party.objects.filter(campaign=campaign).count(),
        "summaries": EpisodicSummary.objects.filter(campaign=campaign).count(),
        "npcs": NPC.objects.filter(campaign=campaign).count(),
        "artcards": ArtCard.objects.filter(campaign=campaign).count(),
        "threads": Thread.objects.filter(campaign=campaign).count(),
        "chunks": chunks or 0,
    }
