"""Reads of lore: worlds and versions by alias, and hybrid knowledge search (seed 003 §8.3, §8.7)."""

from __future__ import annotations

import functools
import hashlib
import itertools
import random
import re
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db import connection
from django.db.models import Q

from lore import config as lore_config
from lore.models import Alias, KnowledgeVersion, World
from lore.services import fit_dims, version_pruned_error
from memoryhub import metrics
from memoryhub.embeddings import cosine_floor, embed_query_if_available
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.llm import get_llm
from memoryhub.morph import analyzer as morph
from memoryhub.search import vectors
from memoryhub.search.bm25 import idf as bm25_idf
from memoryhub.search.fusion import fuse
from memoryhub.text import analyze, analyze_query, normalize, pronoun_terms
from memoryhub.text import term as word_term
from rag import index as bm25_index
from rag import llm_steps
from rag import selectors as rag_selectors
from rag.models import Chunk


def world_get(*, tenant_id: int, slug: str) -> World:
    world = World.objects.filter(tenant_id=tenant_id, slug=slug).first()
    if world is None:
        # Named like an unknown campaign is: a tool call gives the world as an argument, and a model
        # reading the error should see which one to correct.
        raise NotFound(f"No world {slug!r}.", field="world")
    return world


@dataclass(frozen=True)
class Target:
    """One version a search reads: resolved from an alias or a version number."""

    domain: str
    version: str
    namespace: str
    canary: bool = False  # a `latest` search served by the domain's canary (the staged version it tries)


def canary_chosen(share: float, key: str | None, world_slug: str, domain: str, version: str) -> bool:
    """Whether a `latest` search goes to the canary: a caller with a key (a player's session, a party) gets
    the same answer on every search while the canary and its share stand, so a session does not flip between
    versions; one without, a fresh draw. The key hashed with the world, domain and version tried, so each
    canary takes its own share of the callers. Share 0: never; 1: always."""
    if share <= 0.0:
        return False
    if share >= 1.0:
        return True
    if key is None:
        return random.random() < share  # a traffic split, not a secret
    digest = hashlib.sha256(f"{world_slug}\x1f{domain}\x1f{version}\x1f{key}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64 < share


# Plain SQL: the ORM's building of this query costs more than running it. Timed interleaved in one process
# (p50 of 2,000): the ORM's `latest` query 1.24 ms; with the `stage` rows and canary columns 1.45 ms; this
# SQL with the routing 0.58 ms. Every `latest` search, tool call and scene block resolves through it.
_LATEST_SQL = (
    f"SELECT a.domain, a.name, a.version_id, v.version, v.namespace, v.status, a.canary_version_id, a.canary_share "
    f"FROM {Alias._meta.db_table} a JOIN {World._meta.db_table} w ON w.id = a.world_id "
    f"JOIN {KnowledgeVersion._meta.db_table} v ON v.id = a.version_id "
    f"WHERE w.tenant_id = %s AND w.slug = %s AND a.domain = ANY(%s) AND a.name IN (%s, %s)"
)


def latest_targets(*, tenant_id: int, world_slug: str, domains: list[str],
                   canary_key: str | None = None) -> dict[str, tuple[Target, str]]:
    """Each domain's `latest` version that has one, or its canary's for the share of searches it serves (see
    `canary_chosen`), with its status; domains without one are left out.

    One query reads the domains' `latest` and `stage` rows (a publish swaps `latest`, ends its canary and drops
    `stage` in one transaction: a search reads one state whole). A canary serves only while `stage` still
    points at the version it tries: a newer build or a publish moved it, and an aliased version is never
    pruned. Read from the `stage` row, the tried version costs no join: this is the query a search without a
    canary made before, plus the rows' canary columns."""
    latest: dict[str, tuple[str, str, str, int | None, float]] = {}
    staged: dict[str, tuple[int, str, str]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_LATEST_SQL, [tenant_id, world_slug, list(domains), Alias.Name.LATEST, Alias.Name.STAGE])
        rows = cursor.fetchall()
    for domain, name, version_id, number, namespace, status, tried_id, share in rows:
        if name == Alias.Name.LATEST:
            latest[domain] = (number, namespace, status, tried_id, share)
        else:
            staged[domain] = (version_id, number, namespace)
    found = {}
    for domain, (number, namespace, status, tried_id, share) in latest.items():
        stage = staged.get(domain)
        if tried_id is not None and stage is not None and stage[0] == tried_id \
                and canary_chosen(share, canary_key, world_slug, domain, stage[1]):
            found[domain] = (Target(domain, stage[1], stage[2], canary=True), KnowledgeVersion.Status.STAGED)
        else:
            found[domain] = (Target(domain, number, namespace), status)
    return found


def targets_resolve(*, tenant_id: int, world_slug: str, domains: list[str], alias: str | None = None,
                    version: str | None = None, canary_key: str | None = None) -> list[Target]:
    """The namespaces to search, in one query: an alias's row joined with its version, so a search
    running during a publish reads either the old version or the new one, never a mix. A `latest` search
    may be served by the domain's canary (`latest_targets`; `canary_key`: the caller's, see `canary_chosen`);
    an explicit `stage` or version never is."""
    pruned: list[str] = []
    if version is not None:
        rows = (KnowledgeVersion.objects.filter(world__tenant_id=tenant_id, world__slug=world_slug,
                                                domain__in=domains, version=version)
                .values_list("domain", "version", "namespace", "status"))
        resolved = {domain: (Target(domain, number, namespace), status) for domain, number, namespace, status in rows}
    elif alias in (None, Alias.Name.LATEST):
        resolved = latest_targets(tenant_id=tenant_id, world_slug=world_slug, domains=domains,
                                  canary_key=canary_key)
    else:
        # An alias never points at a pruned version (pruning keeps every aliased one).
        rows = (Alias.objects.filter(world__tenant_id=tenant_id, world__slug=world_slug, domain__in=domains,
                                     name=alias)
                .values_list("domain", "version__version", "version__namespace", "version__status"))
        resolved = {domain: (Target(domain, number, namespace), status) for domain, number, namespace, status in rows}
    found = {}
    for domain, (target, status) in resolved.items():
        found[domain] = target
        if status == KnowledgeVersion.Status.PRUNED:
            pruned.append(domain)
    missing = [d for d in domains if d not in found]
    if missing:
        world_get(tenant_id=tenant_id, slug=world_slug)  # 404 for an unknown or foreign world
        what = f"version {version!r}" if version is not None else f"alias {alias or 'latest'!r}"
        # Which domains do have it: a world of lore alone searched without `domains` (default srd)
        # answered only that srd had nothing, and the caller could not tell why.
        if version is not None:
            held = KnowledgeVersion.objects.filter(world__tenant_id=tenant_id, world__slug=world_slug,
                                                   version=version)
        else:
            held = Alias.objects.filter(world__tenant_id=tenant_id, world__slug=world_slug,
                                        name=alias or Alias.Name.LATEST)
        others = sorted(set(held.values_list("domain", flat=True)) - set(missing))
        hint = f"; it has one for {', '.join(others)}" if others else ""
        # The field at fault: a version no domain holds is the version's; one that other domains hold,
        # the domains'.
        raise NotFound(f"World {world_slug!r} has no {what} for domain(s) {', '.join(missing)}{hint}.",
                       field="version" if version is not None and not others else "domains")
    if pruned:
        gone = (KnowledgeVersion.objects.select_related("world__tenant")
                .get(world__tenant_id=tenant_id, world__slug=world_slug, domain=pruned[0],
                     version=found[pruned[0]].version))
        raise version_pruned_error(gone, field="version" if version is not None else "alias")
    return [found[d] for d in domains]


@dataclass(frozen=True)
class KnowledgeFilters:
    languages: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()  # entry id prefixes such as "Spells"
    exclude_categories: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.languages or self.categories or self.exclude_categories)

    def q(self) -> Q:
        q = Q()
        if self.languages:
            q &= Q(kind__in=self.languages)
        if self.categories:
            q &= Q(tags__overlap=list(self.categories))
        if self.exclude_categories:
            q &= ~Q(tags__overlap=list(self.exclude_categories))
        return q


@dataclass
class KnowledgeHit:
    entry_id: str
    title: str
    heading_path: list[str]
    language: str
    domain: str
    version: str
    text: str
    score: float
    components: dict[str, float]
    ranks: dict[str, int]
    chunk_id: int
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass
class KnowledgeResult:
    hits: list[KnowledgeHit]
    took_ms: float
    versions: dict[str, str]
    # {"step": "vector", "reason": …} when the vectors took no part: the embedder away
    # ("embedder_unavailable"), or a version built by another embedder ("reindex_needed": lore_reindex).
    skipped_steps: list[dict[str, str]] = field(default_factory=list)
    # ["rerank"] when the LLM re-ordered the top; a rerank asked for that did not run is in skipped_steps
    # ({"step": "rerank", "reason": "llm_off" | "llm_failed" | "not_applicable"}).
    llm_steps: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=64)
def _entry_titles(tenant_id: int, namespace: str,
                  watermarks: tuple[int, ...] | None) -> dict[str, tuple[tuple[int, frozenset[str]], ...]]:
    """A version's chunks with the terms of their entry's title ("Blinded" → {"blind"}), by each of those
    terms. A version's chunks do not change once built; the watermarks in the key make a rebuilt
    namespace read again."""
    by_term: dict[str, list[tuple[int, frozenset[str]]]] = {}
    for pk, title in Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace).values_list("id", "meta__title"):
        terms = frozenset(analyze(str(title))) if title else frozenset()
        for term in terms:
            by_term.setdefault(term, []).append((pk, terms))
    return {term: tuple(rows) for term, rows in by_term.items()}


def _title_matches(tenant_id: int, namespace: str, watermarks: tuple[int, ...] | None, query_terms: set[str],
                   allowed: np.ndarray | None, k: int) -> dict[int, frozenset[str]]:
    """Chunks of the entries whose whole title the query says, with their title's terms, the longer
    titles first: "what happens when my character is blinded?" names the condition Blinded, which
    long rule sections that say "character" and "blinded" outscored on BM25 (docs/retrieval.md
    "Game-master knowledge: titles")."""
    titles = _entry_titles(tenant_id, namespace, watermarks)
    found = {pk: terms for term in query_terms for pk, terms in titles.get(term, ()) if terms <= query_terms}
    if allowed is not None:
        permitted = set(allowed.tolist())
        found = {pk: terms for pk, terms in found.items() if pk in permitted}
    return dict(sorted(found.items(), key=lambda f: (-len(f[1]), f[0]))[:k])


# A title that holds this share of a question's weight is what the question asks for ("fireball",
# "shield spell", "how big is a fireball?"), not a word it says in passing ("…the astral and ethereal…"
# is not a question about Etherealness). Chosen on the SRD golden set: 0.4 and 0.5 leave both halves
# as they were, 0.3 costs a held-out question (docs/retrieval.md "Game-master knowledge: names").
NAME_SHARE = 0.4


def _named(index: Any, query_terms: set[str], titled: dict[int, frozenset[str]],
           cast: set[int] | frozenset[int] = frozenset()) -> dict[int, float]:
    """The titled chunks whose title holds at least NAME_SHARE of the query's BM25 weight (idf), by
    that share: a name asked for outranks the longer entries that merely say it more often ("Wand of
    Fireballs" and "Necklace of Fireballs" above the Fireball spell). The spell an input casts
    (`_cast_titles`) is asked for whatever its share: "light" is a common word."""
    n = len(index)
    weight = {term: float(bm25_idf(index.document_frequency(term), n)) for term in query_terms}
    total = sum(weight.values())
    if total <= 0:
        return {}
    shares = {pk: sum(weight[t] for t in terms) / total for pk, terms in titled.items()}
    return {pk: share for pk, share in shares.items() if share >= NAME_SHARE or pk in cast}


# Words that cast a spell, as players type them: "I cast fireball at the goblins", "кастую щит", "Я колдую
# огненный шар", "читаю заклинание", "我施放火球术". Not "castle", "колдун" (a sorcerer) or "кастрюля".
CASTING = re.compile(
    r"(?<![a-z])cast(?:s|ing)?(?![a-z])"
    r"|(?<![а-яё])(?:с?касту(?:ю|ешь|ет|ем|ете|ют)|с?кастова(?:ть|л|ла|ли)|наколду(?:ю|ет)"
    r"|колду(?:ю|ешь|ет|ем|ете|ют)|колдова(?:ть|л|ла|ли)|чита(?:ю|ет|ем|ют)\s+заклинани[еяй])(?![а-яё])"
    r"|施放|释放",
    re.IGNORECASE,
)
SPELLS = "Spells"


@functools.lru_cache(maxsize=64)
def _spell_chunks(tenant_id: int, namespace: str, watermarks: tuple[int, ...] | None) -> frozenset[int]:
    """A version's chunks of Spells entries (cached as `_entry_titles` is)."""
    return frozenset(Chunk.objects.filter(tenant_id=tenant_id, namespace=namespace,
                                          meta__entry_id__startswith=f"{SPELLS}/").values_list("id", flat=True))


def _cast_titles(query: str, titled: dict[int, frozenset[str]],
                 spells: frozenset[int]) -> tuple[dict[int, frozenset[str]], set[int]] | None:
    """For an input that casts a spell it names: the title matches that keep their votes, and the spell cast.

    "I cast fireball at the goblins" names the spell and its target, and the target's title (Goblin, the
    language; Orc; Shield, the armour) held more of the question's weight: it took the title and name
    votes and the rules block (docs/retrieval.md "Game-master knowledge: casting"). When the input casts,
    only Spells titles vote, and the first spell said after the casting word is the one cast ("I cast
    light on my shield": Light, not Shield): it alone keeps them and gets the name vote whatever its
    share. None when the input casts nothing or names no spell."""
    cast = CASTING.search(query)
    named = {pk: terms for pk, terms in titled.items() if pk in spells}
    if cast is None or not named:
        return None
    after = analyze(query[cast.end():])

    def position(terms: frozenset[str]) -> int:
        return min(after.index(t) for t in terms) if terms <= set(after) else len(after)

    first = min(position(terms) for terms in named.values())
    if first == len(after):  # "Fireball! I cast it at them": no spell after the word, every spell keeps its vote
        return named, set()
    longest = max(len(terms) for terms in named.values() if position(terms) == first)
    cast_spell = {pk: terms for pk, terms in named.items() if position(terms) == first and len(terms) == longest}
    return cast_spell, set(cast_spell)


# A spell's title said as what the player does: "how far can I jump?", "I jump over the chasm", "I light the
# torch", "can we fly there?". Jump, Light, Fly, Command, Knock are common verbs, and the whole title said
# gave the spell the title and name votes: the Jump spell came before the movement rules that say how far a
# character jumps. After a subject or a modal the word is the player's action, not the spell's name, unless
# the input casts or says "spell". English only: the Russian SRD subset has no spells.
_ACTOR_WORDS = frozenset({"i", "we", "you", "he", "she", "they", "can", "could", "will", "would", "should", "may",
                          "might", "must", "cannot", "to"})
_SPELL_WORD = re.compile(r"(?<![a-z])spells?(?![a-z])|заклинани|法术|咒语", re.IGNORECASE)
_ENGLISH_WORD = re.compile(r"[a-z]+(?:['’][a-z]+)?")


def _acted_titles(query: str, titled: dict[int, frozenset[str]], spells: frozenset[int]) -> dict[int, frozenset[str]]:
    """`titled` less the one-word spell titles the input says as its own verb ("can I jump")."""
    if _SPELL_WORD.search(query):
        return titled
    words = _ENGLISH_WORD.findall(query.lower())
    acted = {t for before, word in itertools.pairwise(words) if before in _ACTOR_WORDS for t in analyze(word)}
    if not acted:
        return titled
    return {pk: terms for pk, terms in titled.items() if not (pk in spells and len(terms) == 1 and terms <= acted)}


# Words that frame a question rather than say what it asks about. "What happens when my character is
# blinded?" asks about Blinded, but "happens" is rare in the SRD (19 of 1,749 chunks), so BM25 weighed it
# above "blinded": long sections that say both (The Environment, Madness) outscored the condition, and
# the title Blinded held 0.32 of the question's weight, short of NAME_SHARE (docs/retrieval.md
# "Game-master knowledge: the README's own questions, and a relevance floor"). Not "случится": its stem
# is that of "случай" (case), which rules say.
_QUESTION_FRAME = "happen happens happened happening происходит происходят произойдет"


@functools.cache
def _question_frame_terms() -> frozenset[str]:
    return frozenset(word_term(normalize(word)) for word in _QUESTION_FRAME.split()) - {""}


_WORD_CASED = re.compile(r"[^\W\d_][\w'’]*")


def _search_terms(index: Any, query: str) -> list[str]:
    """A question's BM25 terms, less those that say nothing of which entry it wants: personal pronouns (a
    player's "I try to persuade…" brought Madness, a table of first-person flaws), the question's frame
    ("what happens"), and the capitalised words no entry holds — a character's or a place's name, "I
    cast fireball at Vasilisa". Such a name matches nothing, yet, unknown to every entry, it had the
    highest weight of the question and left "fireball" 0.32 of it, so the spell got no name vote and
    the Wand of Fireballs came first."""
    names = {t for match in _WORD_CASED.finditer(query) if match.group()[0].isupper()
             for t in analyze(match.group()) if not index.document_frequency(t)}
    dropped = pronoun_terms() | _question_frame_terms() | names
    return [t for t in analyze_query(query) if t not in dropped]


_RUSSIAN_WORD = re.compile(r"[а-яё]+(?:[-'’][а-яё]+)*", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.!?…]")
# pymorphy3 parts of speech of a Russian name's first word ("огненный шар", "ярость варвара").
_MODIFIERS = frozenset({"ADJF", "PRTF"})


def _russian_name(first: str, second: str) -> bool:
    """Whether two adjacent Russian words read as one name: an adjective or participle and its noun
    ("огненный шар"), or a noun and a noun in the genitive ("ярость варвара"). A verb and its object
    ("успокоить лошадь") are none."""
    [head, *_] = morph().parse(first)
    parses = morph().parse(second)
    if parses[0].tag.POS != "NOUN":
        return False
    return head.tag.POS in _MODIFIERS or (
        head.tag.POS == "NOUN" and any(p.tag.POS == "NOUN" and p.tag.case == "gent" for p in parses))


def _unheld_name_terms(index: Any, query: str) -> frozenset[str]:
    """The query's Russian words that it says only as half of a name the world does not hold: "огненный" in
    "кастую огненный шар", where no entry says "шар". The one Russian entry that says "огненный" names
    another spell (Radiant: "огненный столб"), and with no other word of the input in any Russian entry,
    BM25 ranked it first and the scene put it in the rules block.

    Two adjacent words make a name when pymorphy3 reads them as a noun phrase (`_russian_name`). The world
    does not hold it when no entry says one of its words, and that word is no character's or place's name
    (a capitalised word inside a sentence: "гоблин Гримнак" is a goblin). Only a word no entry says: an
    entry may say the name's other word in its own way ("язык дьяволов" is Infernal, whose speakers are
    devils and which does not say "язык"). English is left alone: with no case endings to tell a name
    from a verb and its object, two content words side by side took "repaired" from "where can I get my
    sword repaired" (the demo lore says "blades"). So is Chinese (its words are jieba's), and so are
    casting words ("кастую свет": CASTING reads them)."""
    unsearched = pronoun_terms() | _question_frame_terms()
    casting = [m.span() for m in CASTING.finditer(query)]
    tokens: list[tuple[str, str, bool]] = []  # the word, its term ('' for none to read), a name
    previous_end = 0
    for match in _WORD_CASED.finditer(query):
        word, gap = match.group(), query[previous_end:match.start()]
        if tokens and gap.strip():
            tokens.append(("", "", False))  # punctuation between: "огненный, шар" is two things
        previous_end = match.end()
        # Capitalised inside a sentence: a name. The first word of a sentence is capitalised whatever it is.
        named = word[0].isupper() and bool(tokens) and not _SENTENCE_END.search(gap)
        term = word_term(normalize(word)) if _RUSSIAN_WORD.fullmatch(word) else ""
        if term in unsearched or any(start <= match.start() < end for start, end in casting):
            term = ""
        tokens.append((word, term, named))
    halves: set[str] = set()
    whole: set[str] = set()
    for i, (word, term, _) in enumerate(tokens):
        if not term or not index.document_frequency(term):
            continue
        partial = False
        for j in (i - 1, i + 1):
            if not 0 <= j < len(tokens):
                continue
            other_word, other, named = tokens[j]
            if not other or named or index.document_frequency(other):
                continue
            if _russian_name(*((other_word, word) if j < i else (word, other_word))):
                partial = True
        (halves if partial else whole).add(term)
    return frozenset(halves - whole)


def _held_matches(tenant_id: int, namespace: str, watermarks: tuple[int, ...] | None, index: Any,
                  matches: dict[int, float], others: list[str], halves: frozenset[str]) -> dict[int, float]:
    """The BM25 matches that share with the query more than half of a name the world does not hold
    (`_unheld_name_terms`): another of its words, or that half in their title ("подраса гномов" names
    gnomes, and Rock Gnome's title says "гном"). The rest leave the BM25 list, so they come back only by
    a near vector or a title vote (`_above_floor`), and rank no entry down."""
    candidates = np.fromiter(sorted(matches), dtype=np.int64, count=len(matches))
    held = {pk for pk, _ in index.search(others, len(matches), allowed=candidates)} if others else set()
    titles = _entry_titles(tenant_id, namespace, watermarks)
    held |= {pk for term in halves for pk, _ in titles.get(term, ())}
    return {pk: score for pk, score in matches.items() if pk in held}


# The relevance floor: what a hit needs to be returned at all. A question the world cannot answer
# ("失明" in a world of English and Russian, "бросаю инициативу" where the Russian subset has no rule
# sections) still got k hits, the vectors' nearest whatever their distance, and the scene put them into
# its rules block as rules. A hit now needs a word of the question (BM25), a title vote, or a cosine of
# at least MIN_COSINE. Chosen on the SRD golden tune half and a tune half of player inputs the world
# answers in English only or not at all (docs/retrieval.md "Game-master knowledge: the README's own
# questions, and a relevance floor"): the offline hashing vectors put unrelated text at up to 0.23, no
# golden answer is found by its vector alone, and 0.2–0.3 measure alike. A share of the question's BM25
# ceiling on top was not taken: 0.03 changes nothing, 0.05 moves one tune question a place but leaves
# the weakest tune answers (share 0.04) hanging on their cosine.
MIN_COSINE = 0.25


def _above_floor(score: Any, min_cosine: float = MIN_COSINE) -> bool:
    return bool({"bm25", "title"} & score.ranks.keys()) or score.components.get("vector", 0.0) >= min_cosine


# A question that asks for someone or somewhere of the world: "who guards the bridge?", "where is the forge?",
# "кто охраняет мост?", "где кузница?", "谁守着桥？", "铁匠铺在哪里？". Not "кто-то" (someone), "где-нибудь".
WORLD_QUESTION = re.compile(
    r"(?<![a-z])(?:who|whom|whose|where)(?![a-z])"
    r"|(?<![а-яё])(?:кто|кого|кому|кем|чей|чья|чь[её]|чьи|где|куда|откуда)(?![а-яё-])"
    r"|谁|哪里|哪儿|在哪|何处|何人",
    re.IGNORECASE,
)


def _search_one(tenant_id: int, target: Target, query: str, query_vector: np.ndarray | None,
                filters: KnowledgeFilters, skipped: set[str], lists: frozenset[str] | None = None) -> dict[int, Any]:
    """One version's hits, fused by RRF over its domain's lists, or over `lists` alone (see `_shared_lists`)."""
    cfg = lore_config.domain_config(target.domain)
    weights = {name: weight for name, weight in cfg.weights if lists is None or name in lists}
    # The index's catch-up reads the namespace row; its vector space comes with it.
    [index], marks, spaces = bm25_index.namespace_indexes_and_watermarks(tenant_id, [target.namespace])
    chunks = Chunk.objects.filter(tenant_id=tenant_id, namespace=target.namespace)
    if filters:
        chunks = chunks.filter(filters.q())
    scores: dict[str, dict[int, float]] = {}
    if cfg.mode in ("hybrid", "bm25"):
        allowed = np.fromiter(chunks.order_by("id").values_list("id", flat=True), dtype=np.int64) if filters else None
        terms = _search_terms(index, query)
        scores["bm25"] = dict(index.search(terms, cfg.k_keyword, allowed=allowed))
        if scores["bm25"] and (halves := _unheld_name_terms(index, query)):
            scores["bm25"] = _held_matches(tenant_id, target.namespace, marks.get(target.namespace), index,
                                           scores["bm25"], [t for t in terms if t not in halves], halves)
        if weights.get("title"):
            titled = _title_matches(tenant_id, target.namespace, marks.get(target.namespace), set(terms), allowed,
                                    cfg.k_keyword)
            cast: set[int] = set()
            spells = _spell_chunks(tenant_id, target.namespace, marks.get(target.namespace)) if titled else frozenset()
            if titled and (casting := _cast_titles(query, titled, spells)) is not None:
                titled, cast = casting
            elif titled:
                titled = _acted_titles(query, titled, spells)
            if titled:
                scores["title"] = {pk: float(len(title)) for pk, title in titled.items()}
                named = _named(index, set(terms), titled, cast) if weights.get("name") else {}
                if named:
                    scores["name"] = named
    foreign = bool(rag_selectors.foreign_vector_spaces(tenant_id, spaces))
    if foreign and cfg.mode in ("hybrid", "vector"):
        skipped.add("reindex_needed")
    if cfg.mode in ("hybrid", "vector") and query_vector is not None and not foreign:
        scores["vector"] = dict(vectors.nearest(
            chunks, fit_dims(query_vector, cfg.dims)[0], cfg.k_vector, namespace_size=len(index),
            hnsw_filter=Q(in_hnsw=True), hnsw_halfvec=True))
    fused = fuse(scores, method="rrf", weights={name: weights[name] for name in scores}, rrf_k=cfg.rrf_k)
    # MIN_COSINE is set on the hashing vectors' scale: E5's cosines, say, sit near 1 (cosine_floor).
    min_cosine = cosine_floor(MIN_COSINE)
    return {pk: score for pk, score in fused.items() if _above_floor(score, min_cosine)}


def _shared_lists(targets: list[Target]) -> frozenset[str]:
    """The lists every searched domain fuses: BM25 and the vectors as shipped, not the SRD's title and name votes."""
    return frozenset.intersection(*(frozenset(name for name, _ in lore_config.domain_config(t.domain).weights)
                                    for t in targets))


def _search_targets(tenant_id: int, targets: list[Target], query: str, query_vector: np.ndarray | None,
                    filters: KnowledgeFilters, skipped: set[str]) -> list[tuple[Target, dict[int, Any]]]:
    """Each target's fused hits, in the targets' order.

    A question for someone or somewhere of the world (WORLD_QUESTION) that the world's lore answers by its
    words is ranked on the same lists in every domain. "Who guards the bridge?" says "guard", the whole title
    of the SRD's Guard stat block, whose title and name votes (lists only the SRD fuses) put it above the
    Moon Bridge's entry that says who guards it: a lore entry's fused score can never reach a voted SRD one.
    The votes say the question names the entry it asks for; a question asking who or where names what it
    asks about, and the world's lore, not a generic monster, holds that. A world question the lore does not
    answer by a word ("who can cast wish?", a lore that never says it) keeps the votes, and so does every
    question searched in one domain. The SRD golden set searches one domain and does not move."""
    world_question = len({t.domain for t in targets}) > 1 and any(t.domain == "lore" for t in targets) \
        and WORLD_QUESTION.search(query) is not None
    found: dict[Target, dict[int, Any]] = {}
    for target in sorted(targets, key=lambda t: t.domain != "lore"):  # the lore first: whether it answers decides
        lists = None
        if world_question and target.domain != "lore" and any(
                "bm25" in score.ranks for t, fused in found.items() if t.domain == "lore" for score in fused.values()):
            lists = _shared_lists(targets)
        found[target] = _search_one(tenant_id, target, query, query_vector, filters, skipped, lists)
    return [(target, found[target]) for target in targets]


def knowledge_search(*, tenant_id: int, targets: list[Target], query: str, k: int | None = None,
                     filters: KnowledgeFilters | None = None, rerank: bool | None = None) -> KnowledgeResult:
    """Hybrid BM25 + vector search of each target version with its domain's k's, fused by RRF;
    the chunks of one entry count once (its best), and domains merge by fused score. Hits below the
    relevance floor (`_above_floor`) are left out, so a question the world cannot answer gets none.

    `rerank`: the LLM re-orders the fused top (`_llm_rerank`); None takes the searched domains' setting
    (config/knowledge.yaml `rerank.enabled`: on when any of them has it). Call it outside a transaction:
    the model is a network round trip."""
    started = time.perf_counter()
    filters = filters or KnowledgeFilters()
    k = k or lore_config.domain_config(targets[0].domain).k
    # A remote embedder away: the knowledge is searched by words (and titles) alone.
    query_vector = embed_query_if_available(query, tenant_id=tenant_id, where="knowledge_search")
    skipped: set[str] = set() if query_vector is not None else {"embedder_unavailable"}
    fused_by_target = _search_targets(tenant_id, targets, query, query_vector, filters, skipped)
    ids = [pk for _, fused in fused_by_target for pk in fused]
    rows = {row["id"]: row for row in Chunk.objects.filter(tenant_id=tenant_id, id__in=ids)
            .values("id", "text", "meta", "kind")}
    best: dict[tuple[str, str, str], KnowledgeHit] = {}
    for target, fused in fused_by_target:
        for pk, score in fused.items():
            row = rows.get(pk)
            if row is None:
                continue
            meta = row["meta"]
            key = (target.domain, row["kind"], meta.get("entry_id", ""))
            if key in best and best[key].score >= score.score:
                continue
            best[key] = KnowledgeHit(
                entry_id=meta.get("entry_id", ""), title=meta.get("title", ""),
                heading_path=meta.get("heading_path", []), language=row["kind"], domain=target.domain,
                version=target.version, text=row["text"], score=score.score, components=score.components,
                ranks=score.ranks, chunk_id=pk, meta=meta,
            )
    # In a question for the world's own people and places, its lore goes first among equals.
    lore_first = bool(WORLD_QUESTION.search(query))
    hits = sorted(best.values(), key=lambda h: (-h.score, lore_first and h.domain != "lore",
                                                min(h.ranks.values(), default=0), h.entry_id))
    configs = [lore_config.domain_config(t.domain) for t in targets]
    skipped_steps = [{"step": "vector", "reason": reason} for reason in sorted(skipped)]
    steps: list[str] = []
    if rerank if rerank is not None else any(cfg.rerank for cfg in configs):
        reason = _llm_rerank(query, hits, max(cfg.rerank_candidates for cfg in configs))
        if reason is None:
            steps.append("rerank")
        else:
            skipped_steps.append({"step": "rerank", "reason": reason})
    took = round((time.perf_counter() - started) * 1000, 3)
    metrics.RETRIEVAL_LATENCY.labels("lore").observe(took / 1000)
    return KnowledgeResult(hits=hits[:k], took_ms=took, versions={t.domain: t.version for t in targets},
                           skipped_steps=skipped_steps, llm_steps=steps)


def entry_parts(*, tenant_id: int, target: Target, wanted: list[tuple[str, str]],
                languages: list[str]) -> list[KnowledgeHit]:
    """The parts of entries a caller names by (entry id, heading), in the first of `languages` each is written
    in (else any): the part whose heading is the one named ("Attack Rolls" of Making an Attack), else the
    entry's opening. An entry the version does not hold is left out. For a rule named by what the player does
    (lore.campaigns.scene.ACTION_RULES), not searched for: its ranks say so (`action`)."""
    rows = list(Chunk.objects.filter(tenant_id=tenant_id, namespace=target.namespace,
                                     meta__entry_id__in=[entry_id for entry_id, _ in wanted])
                .values("id", "text", "meta", "kind"))
    hits: list[KnowledgeHit] = []
    for position, (entry_id, heading) in enumerate(wanted, start=1):
        parts = [row for row in rows if row["meta"].get("entry_id") == entry_id]
        if not parts:
            continue
        written = {row["kind"] for row in parts}
        language = next((code for code in languages if code in written), min(written))
        parts = [row for row in parts if row["kind"] == language]
        row = next((row for row in parts if heading and (row["meta"].get("heading_path") or [""])[-1] == heading),
                   min(parts, key=lambda row: (row["meta"].get("part", 0), row["id"])))
        meta = row["meta"]
        hits.append(KnowledgeHit(entry_id=entry_id, title=meta.get("title", ""),
                                 heading_path=meta.get("heading_path", []), language=language, domain=target.domain,
                                 version=target.version, text=row["text"], score=0.0, components={},
                                 ranks={"action": position}, chunk_id=row["id"], meta=meta))
    return hits


def _llm_rerank(query: str, hits: list[KnowledgeHit], candidates: int) -> str | None:
    """The fused top `candidates` entries re-ordered in place by the LLM's scores (rag.llm_steps.rerank_top,
    the chat search's rerank: `components["rerank"]` 0–10, the fused order breaking ties), or why not:
    llm_off, llm_failed (a 429, 5xx, timeout or an answer that is not the JSON asked for: the fused order
    stands), not_applicable (no hits)."""
    if not hits:
        return "not_applicable"
    if llm_steps.rerank_top(query, hits, top=candidates, ident=lambda h: h.chunk_id,
                            text=lambda h: f"{h.title}: {h.text}" if h.title else h.text,
                            components=lambda h: h.components, item="rules or lore entry", items="entries"):
        return None
    return "llm_off" if get_llm() is None else "llm_failed"


def validate_domains(domains: list[str]) -> None:
    unknown = [d for d in domains if d not in ("srd", "lore")]
    if unknown:
        raise ApplicationError(f"Unknown domain(s) {unknown}; use srd or lore.", field="domains")
