"""Reads of people: lists, detail, people search (vector and hybrid), and the context blocks.

People search scores every candidate on three components, each in [0, 1]:
- `name`: the query names the person (a name, alias or @username, in any Russian case form, or in
  the other script: "Masha" for "Маша"); 1.0 for a whole name, 0.85 for a part of it (a surname
  alone), 0.75 for a typo of one;
- `lexical`: idf-weighted share of the query's words found in the bio, with relationship words
  mapped to language-neutral concepts ("начальник" and "Руководитель" are both `role:boss`); a word
  found only through its concept counts `CONCEPT_ONLY` of itself, so the bio that says it ranks first;
- `vector`: cosine similarity of the query and seed 000's embedding text (pgvector).
The score is the best component, so the seed's threshold (0.65) keeps its meaning for each.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import lru_cache
from typing import Literal, NamedTuple

import numpy as np
from django.db import connection, transaction
from django.db.models import Case, IntegerField, Q, QuerySet, Value, When

from memoryhub import vector_io
from memoryhub.embeddings import embed_query, embed_query_if_available
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import Message
from memoryhub.registry import Decision
from memoryhub.search.vectors import nearest
from memoryhub.text import HAN_CHAR, STOPWORDS, analyze, normalize, pronoun_terms
from people import conf, metrics, reranker, translit
from people.dedup import merged_display_name
from people.lexicon import CIRCLE_TOPIC_WORDS
from people.models import MergeProposal, PeopleAuditEntry, Person, PersonRelation
from people.names import (
    NAME_GRAMMEMES,
    full_names_of,
    morph,
    name_key,
    osa_distance,
    query_name_terms,
    ru_lemma,
    search_words,
    typo_budget,
)

Mode = Literal["hybrid", "vector"]

NAME_FULL, NAME_PART, NAME_TYPO = 1.0, 0.85, 0.75
FUZZY_WORD_SIMILARITY = 0.35  # pg_trgm candidate gate for typos; OSA distance decides
_CYRILLIC = re.compile("[\u0400-\u052f]")


def living(*, tenant_id: int, user_id: str) -> QuerySet[Person]:
    return Person.objects.filter(tenant_id=tenant_id, user_id=user_id, status=Person.Status.ACTIVE)


# The most people one relation word brings into a memory search ("my friend" may be many: the most
# mentioned first).
RELATION_PEOPLE_MAX = 3


def relation_name_terms(*, tenant_id: int, user_id: str, query: str) -> list[str]:
    """The BM25 terms of the names of the people a query names by how they relate to the user: "what did
    I say about my sister?" asks about Emma ("My sister Emma…"), and the turn to find ("Emma and I had a
    big fight") says her name, not "sister". A query word with a kin or role concept (`search_words`:
    sister, сестру, 妹妹, boss, начальник…) picks the people whose description says that word, or
    failing that, that relation in other words ("brother" and "sister" are both `kin:sibling`). One
    indexed query, and only for a query that says such a word."""
    words = [w for w in search_words(query) if w.concept.startswith(("kin:", "role:"))]
    if not words:
        return []
    concepts = sorted({w.concept for w in words})
    rows = list(living(tenant_id=tenant_id, user_id=user_id).filter(search_terms__overlap=concepts)
                .order_by("-mention_count", "pk").values_list("display_name", "aliases", "search_terms", "bio")[:50])
    literal = [r for r in rows if any(w.terms and set(w.terms) <= set(r[2]) for w in words)]
    # Who is called so, before those whose description says the word: "My husband Tom is a doctor and our
    # daughter Lily is five" describes Lily too, and she has more mentions ("Husband" is Tom's alias).
    named = [r for r in literal
             if any(w.terms and set(w.terms) <= set(analyze(alias)) for w in words for alias in r[1])]
    # Then whose bio says the word beside their name: "У меня сын Тимофей, ему 7, и муж Артём" is in both bios
    # (a son has no alias: two would share it), and "Что приготовить сыну?" put the husband, with more mentions,
    # first.
    beside = [r for r in literal if _said_beside(r[3], r[0], {t for w in words for t in w.terms})]
    terms: list[str] = []
    for display_name, aliases, _, _ in (named or beside or literal or rows)[:RELATION_PEOPLE_MAX]:
        for name in (display_name, *aliases):
            terms.extend(t for t in analyze(name) if t not in terms)
    return terms


_CAPITALISED = re.compile(r"\b[A-ZА-ЯЁ][a-zа-яё]+\b")


def full_name_terms(query: str) -> frozenset[str]:
    """The terms of the full first names a query's capitalised diminutives stand for: "Когда у Тимохи плавание?"
    asks about Тимофей, "Is Sasha coming?" about Alexander or Alexandra (`names.full_names_of`)."""
    return frozenset(t for word in _CAPITALISED.findall(query) for full in full_names_of(word) for t in analyze(full))


def _said_beside(bio: str, name: str, terms: set[str], reach: int = 2) -> bool:
    """Whether `bio` says one of `terms` within `reach` words of `name` ("сын Тимофей", "Tom, my husband")."""
    own, said = _words_in_order(name), _words_in_order(bio)
    if not own or not terms:
        return False
    return any(word == own[0] and terms.intersection(said[max(0, i - reach):i + len(own) + reach])
               for i, word in enumerate(said))


def _words_in_order(text: str) -> list[str]:
    # Without the single characters a Chinese word is also indexed by: 儿子 | 儿 | 子 | 小明 is two words.
    return [t for t in analyze(text) if not (len(t) == 1 and HAN_CHAR.match(t))]


@lru_cache(maxsize=8)
def circle_topic_terms(circle: str) -> frozenset[str]:
    """The query terms that speak of the part of life `circle` belongs to (`lexicon.CIRCLE_TOPIC_WORDS`: work for
    Work_Inner, family for Family); none for the other circles. Not the single characters a Chinese word is
    also indexed by (工作 → 工, 作): 作 and 家 ask for no circle."""
    return frozenset(term for word in CIRCLE_TOPIC_WORDS.get(circle, ()) for term in analyze(word)
                     if not (len(term) == 1 and HAN_CHAR.match(term) and term != word)) - pronoun_terms()


# --- lists and detail -------------------------------------------------------------------------------------


def person_list(
    *,
    tenant_id: int,
    user_id: str,
    circles: Sequence[str] = (),
    min_mentions: int | None = None,
    query: str = "",
) -> QuerySet[Person]:
    qs = living(tenant_id=tenant_id, user_id=user_id).defer("embedding")
    if circles:
        qs = qs.filter(circle__in=circles)
    if min_mentions is not None:
        qs = qs.filter(mention_count__gte=min_mentions)
    if query.strip():
        key = name_key(query)
        qs = qs.filter(Q(name_key__icontains=key) | Q(name_keys__contains=[key]) | Q(username=key.lstrip("@")))
    return qs.order_by("-mention_count", "display_name", "pk")


def person_get(*, tenant_id: int, user_id: str, person_id: int) -> Person:
    person = Person.objects.filter(tenant_id=tenant_id, user_id=user_id, pk=person_id).defer("embedding").first()
    if person is None:
        raise NotFound(f"User {user_id!r} has no person {person_id}.", field="person_id")
    if person.status == Person.Status.MERGED:
        raise ApplicationError(f"This person was merged into person {person.merged_into_id}.", code="merged",
                               status_code=404, extra={"merged_into": person.merged_into_id})
    return person


def person_merge_proposals_pending(*, person: Person) -> list[MergeProposal]:
    """The pending merge proposals involving a person, likeliest first: what a client's edit of the
    person left for a reviewer (a rename to another person's name opens one, never a merge)."""
    return list(MergeProposal.objects.filter(Q(source=person) | Q(target=person), status=MergeProposal.Status.PENDING)
                .select_related("source", "target").defer("source__embedding", "target__embedding")
                .order_by("-score", "pk"))


def person_relations(*, person: Person) -> list[dict[str, object]]:
    """The person's edges in both directions, phrased from the person's side."""
    out: list[dict[str, object]] = []
    rels = PersonRelation.objects.filter(Q(subject=person) | Q(object=person)).select_related("subject", "object")
    for rel in rels.order_by("pk"):
        if rel.subject.status != Person.Status.ACTIVE or rel.object.status != Person.Status.ACTIVE:
            continue
        outgoing = rel.subject_id == person.pk
        other = rel.object if outgoing else rel.subject
        out.append({"kind": rel.kind, "label": rel.label, "direction": "out" if outgoing else "in",
                    "person_id": other.pk, "display_name": other.display_name})
    return out


def people_for_archivist(*, tenant_id: int, user_id: str, messages: Sequence[Message], limit: int) -> list[Person]:
    """Known people for the archivist's prompt: those the messages name first, then the most mentioned."""
    base = living(tenant_id=tenant_id, user_id=user_id).defer("embedding")
    terms = sorted(set().union(*(query_name_terms(m.text) for m in messages))) if messages else []
    named = list(base.filter(name_terms__overlap=terms).order_by("-mention_count", "pk")[:limit]) if terms else []
    rest = list(base.exclude(pk__in=[p.pk for p in named]).order_by("-mention_count", "-last_seen", "pk")
                [: max(0, limit - len(named))])
    return named + rest


# --- search ----------------------------------------------------------------------------------------------


@dataclass
class PersonHit:
    person: Person
    score: float
    components: dict[str, float] = field(default_factory=dict)


@dataclass
class SearchResult:
    hits: list[PersonHit]
    took_ms: float
    candidates: dict[str, int]
    timings_ms: dict[str, float] = field(default_factory=dict)


def _name_scores(base: QuerySet[Person] | Sequence[_Scored], query: str) -> tuple[dict[int, float], set[str]]:
    """Scores of people the query names, and the query terms that named someone. `base`: a
    query set, or the whole (small) population already read."""
    terms = query_name_terms(query)
    qset = {t for t in terms if t not in STOPWORDS or len(t) > 3}
    scores: dict[int, float] = {}
    used: set[str] = set()
    if not qset:
        return scores, used
    # A query word in the other script ("Masha" for "Маша", "Маши" for "Masha") meets a name word that
    # folds to the same Latin spelling; its term is stored with the person, so the lookup stays one
    # indexed overlap. Term → the query words it came from, which then name someone.
    cross: dict[str, set[str]] = {}
    for t in qset:
        cross.setdefault(translit.other_script_word_term(t), set()).add(t)
    cross.pop("", None)
    # A diminutive ("Серёжа", "Sasha") names the full name it is a form of ("Сергей", "Alexander"), which the
    # person's name terms hold: a QA pass searched "Серёжа" for Сергей, never called that before, in vain.
    # A name found so counts as a part of it (0.85), never as the whole: "Саша" is Alexander or Alexandra.
    fuller: dict[str, set[str]] = {}
    for t in qset:
        for full in full_names_of(t):
            if full not in qset:
                fuller.setdefault(full, set()).add(t)
    lookup = qset | cross.keys() | fuller.keys()
    if isinstance(base, QuerySet):
        rows = list(base.filter(name_terms__overlap=sorted(lookup)).values_list("pk", "name_keys", "username")[:2000])
    else:
        rows = [(p.pk, p.name_keys, p.username) for p in base if not lookup.isdisjoint(p.name_terms)]

    def named(token: str) -> bool:
        lemma = ru_lemma(token)
        if token in qset or lemma in qset:
            used.add(token)
            return True
        words = cross.get(translit.word_term(token)) or cross.get(translit.word_term(lemma))
        used.update(words or ())
        return bool(words)

    def as_diminutive(token: str) -> bool:
        words = fuller.get(token) or fuller.get(ru_lemma(token))
        used.update(words or ())
        return bool(words)

    for pk, keys, username in rows:
        best = NAME_FULL if username and username in qset else 0.0
        for key in keys:
            if key in qset:
                best = NAME_FULL
                used.add(key)
                break
            tokens = key.split()
            hits = [t for t in tokens if named(t)]
            if tokens and len(hits) == len(tokens):
                best = NAME_FULL
                break
            if any(len(t) >= 3 for t in hits) or (fuller and any(as_diminutive(t) for t in tokens)):
                best = max(best, NAME_PART)
        if best:
            scores[pk] = best
    return scores, used


def _typo_candidates(query: str, used: set[str]) -> list[str]:
    """Query words that may be a misspelt name: not already a name, and not an ordinary word — a
    Cyrillic word the dictionary knows only as a common word, or a lower-case Latin word."""
    out = []
    for raw in dict.fromkeys(re.findall(r"[^\W\d_]+", query)):
        word = normalize(raw)
        if not typo_budget(word) or word in STOPWORDS or word in used or ru_lemma(word) in used:
            continue
        if _CYRILLIC.search(word):
            parses = morph().parse(word)
            known = morph().word_is_known(word)
            if known and not any(NAME_GRAMMEMES & p.tag.grammemes for p in parses):
                continue
        elif not raw[:1].isupper() or not raw.isalpha():
            continue
        out.append(word)
    return out


def _typo_scores(base: QuerySet[Person], query: str, exact: dict[int, float], used: set[str]) -> dict[int, float]:
    """Names the query misspells by one or two edits ("Petorv" → Petrov), found through pg_trgm."""
    candidates = _typo_candidates(query, used)
    if not candidates:
        return {}
    q = Q()
    for word in candidates:
        q |= Q(name_key__trigram_word_similar=word)
    scores: dict[int, float] = {}
    with transaction.atomic(), connection.cursor() as cursor:
        # SET LOCAL needs a transaction; a savepoint inside an outer one is cheap.
        cursor.execute("SET LOCAL pg_trgm.word_similarity_threshold = %s", [FUZZY_WORD_SIMILARITY])
        rows = list(base.exclude(pk__in=list(exact)).filter(q).values_list("pk", "name_keys")[:500])
    for pk, keys in rows:
        tokens = {t for key in keys for t in key.split()}
        for word in candidates:
            forms = {word, ru_lemma(word)}
            if any(osa_distance(f, t, typo_budget(t)) <= min(typo_budget(f), typo_budget(t))
                   for f in forms for t in tokens if typo_budget(t)):
                scores[pk] = NAME_TYPO
                break
    return scores


# A query word a bio matches only through its concept: a synonym ("начальник" for "Руководитель") or a
# translation ("boss" for "老板"), weaker evidence than the word itself; only through the concept's
# family, a related role ("nurse" for a doctor), weaker still. Both keep a one-word query's match above
# the default threshold (0.65), where it was found before, the bio that says the word first.
CONCEPT_ONLY = 0.9
FAMILY_ONLY = 0.8


def _lexical_scores(base: QuerySet[Person] | Sequence[_Scored], query: str, population: int) -> dict[int, float]:
    """Idf-weighted coverage of the query's words by each person's bio terms, a word found by its own
    terms counting 1, one found by its concept alone `CONCEPT_ONLY`, by its family alone `FAMILY_ONLY`.

    One scan through the GIN index (or of the population already read) returns, per person who has
    any of the terms, which ones; the document frequencies and the scores follow from that matrix.
    """
    # Personal pronouns are no search words of a query (as in rag.query): "кто мой врач?" asks for a
    # doctor, and a bio that does not say "мой" must not fall under the threshold for it.
    pronouns = pronoun_terms()
    query_words = list(dict.fromkeys(w for w in search_words(query)
                                     if w.concept or not pronouns.issuperset(w.terms)))[:32]
    terms = list(dict.fromkeys(t for w in query_words for t in (*w.terms, w.concept, w.family) if t))
    if not terms or population == 0:
        return {}
    if isinstance(base, QuerySet):
        # The same filters as `base` (tenant, user, status, circles), compiled into the statement.
        where, params = base.query.where.as_sql(base.query.get_compiler(connection=connection), connection)
        has = ", ".join("search_terms @> ARRAY[%s]::varchar[]" for _ in terms)
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT id, ARRAY[{has}] FROM {Person._meta.db_table} WHERE {where} AND search_terms && %s::varchar[]",
                [*terms, *params, terms],
            )
            rows = cursor.fetchall()
    else:
        rows = []
        for person in base:
            own = set(person.search_terms)
            matched = [t in own for t in terms]
            if any(matched):
                rows.append((person.pk, matched))
    if not rows:
        return {}
    ids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
    matched = np.array([r[1] for r in rows], dtype=bool)
    column = {t: j for j, t in enumerate(terms)}
    none = np.zeros(len(rows), dtype=bool)
    credit = np.zeros((len(rows), len(query_words)))
    for k, word in enumerate(query_words):
        literal = matched[:, [column[t] for t in word.terms]].all(axis=1) if word.terms else none
        same = matched[:, column[word.concept]] if word.concept else none
        related = matched[:, column[word.family]] if word.family else none
        credit[:, k] = np.where(literal, 1.0, np.where(same, CONCEPT_ONLY, np.where(related, FAMILY_ONLY, 0.0)))
    df = (credit > 0).sum(axis=0)
    weights = np.log((population + 1) / (df + 0.5))
    total = float(weights.sum())
    if total <= 0:
        return {}
    scores = credit @ weights / total
    best = np.argsort(-scores, kind="stable")[:200]
    return {int(ids[i]): float(scores[i]) for i in best if scores[i] > 0}


SMALL_POPULATION = 300


class _Scored(NamedTuple):
    """What people search scores of a person, read as a plain row."""

    pk: int
    name_keys: list[str]
    username: str | None
    name_terms: list[str]
    search_terms: list[str]


def _nearest_of(people: Sequence[_Scored], vector: np.ndarray, k: int) -> list[tuple[int, float]]:
    """`memoryhub.search.vectors.nearest` over people already read: their vectors in one binary
    read, cosine in numpy, the same order (closest first, a tie to the higher id)."""
    found = [(pk, v) for pk, v in vector_io.read_vectors(
        f"SELECT id, embedding FROM {Person._meta.db_table} WHERE id = ANY(%s) AND embedding IS NOT NULL",
        [[p.pk for p in people]]) if v is not None]
    if not found:
        return []
    ids = np.fromiter((pk for pk, _ in found), dtype=np.int64, count=len(found))
    matrix = np.stack([v for _, v in found])
    query = np.asarray(vector, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(query))
    cosines = np.divide(matrix @ query, norms, out=np.zeros(len(ids), dtype=np.float32), where=norms > 0)
    order = np.lexsort((-ids, -cosines))[:k]
    return [(int(ids[i]), float(cosines[i])) for i in order]


def people_search(
    *,
    tenant_id: int,
    user_id: str,
    query: str,
    threshold: float | None = None,
    max_results: int | None = None,
    exclude_circles: Sequence[str] = (),
    mode: Mode = "hybrid",
) -> SearchResult:
    """SearchPeople (seed 000): people scoring at least `threshold`, best first, at most `max_results`,
    outside `exclude_circles`. `vector` is the seed's cosine search alone; `hybrid` adds names (case
    forms, typos, Latin ↔ Cyrillic) and bio terms."""
    started = time.perf_counter()
    threshold = conf.get("PEOPLE_SEARCH_THRESHOLD") if threshold is None else threshold
    max_results = conf.get("PEOPLE_SEARCH_MAX_RESULTS") if max_results is None else max_results
    base = living(tenant_id=tenant_id, user_id=user_id)
    if exclude_circles:
        base = base.exclude(circle__in=list(exclude_circles))
    # Most users know a few dozen people: reading them whole is one statement, where scoring each
    # component in the database took one each (a context's people search was 6-8 round trips).
    # Plain rows of the columns scored, not model instances: building 100 Person objects took ~7 ms.
    everyone = [_Scored(*row) for row in base.order_by("pk").values_list(*_Scored._fields)[: SMALL_POPULATION + 1]]
    small = len(everyone) <= SMALL_POPULATION
    population = len(everyone) if small else base.count()
    source: QuerySet[Person] | list[_Scored] = everyone if small else base
    components: dict[int, dict[str, float]] = {}
    counts = {"population": population}

    def add(name: str, scores: dict[int, float]) -> None:
        counts[name] = len(scores)
        for pk, value in scores.items():
            components.setdefault(pk, {})[name] = round(max(value, components.get(pk, {}).get(name, 0.0)), 6)

    timings: dict[str, float] = {}
    mark = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal mark
        now = time.perf_counter()
        timings[name] = round((now - mark) * 1000, 3)
        mark = now

    # The context's search has just embedded the same query. A remote embedder away: a hybrid people
    # search answers by names and bios alone (a vector search cannot: 503).
    vector = (embed_query(query, tenant_id=tenant_id) if mode == "vector"
              else embed_query_if_available(query, tenant_id=tenant_id, where="people_search"))
    if population and vector is not None and np.any(vector):
        k = max(max_results * 3, 20)
        if small:
            nearby = _nearest_of(everyone, vector, k)
        else:
            nearby = nearest(base.filter(embedding__isnull=False), vector, k, namespace_size=population)
        add("vector", {pk: max(0.0, cos) for pk, cos in nearby})
    lap("vector")
    if mode == "hybrid" and population:
        names, used = _name_scores(source, query)
        lap("name")
        typos = _typo_scores(base, query, names, used)
        lap("typo")
        add("name", {**typos, **names})
        counts["typo"] = len(typos)
        add("lexical", _lexical_scores(source, query, population))
        lap("lexical")

    scored = {pk: max(c.values()) for pk, c in components.items() if c and max(c.values()) >= threshold}
    # Rank on the scores alone and load only the rows returned: a common surname can score hundreds.
    top = sorted(scored, key=lambda pk: (-scored[pk], -components[pk].get("name", 0.0),
                                         -components[pk].get("lexical", 0.0), -components[pk].get("vector", 0.0),
                                         -pk))[:max_results]
    people = {p.pk: p for p in Person.objects.filter(pk__in=top).defer("embedding")} if top else {}
    hits = [PersonHit(people[pk], round(scored[pk], 6), components[pk]) for pk in top if pk in people]
    took = time.perf_counter() - started
    metrics.SEARCH_DURATION.labels(str(tenant_id), mode).observe(took)
    metrics.SEARCH_RESULTS.labels(str(tenant_id)).observe(len(hits))
    return SearchResult(hits=hits, took_ms=round(took * 1000, 3), candidates=counts, timings_ms=timings)


# --- context blocks (rag/context.py calls these) -------------------------------------------------------------


def inner_circle_for_context(*, tenant_id: int, user_id: str) -> list[str]:
    """Family and Work_Inner, always in the prompt (`<inner_circle>`), with their full bio, in the
    people line format; family first, then by mentions."""
    return [line for _, line in inner_circle_context_items(tenant_id=tenant_id, user_id=user_id)]


def inner_circle_context_items(*, tenant_id: int, user_id: str) -> list[tuple[str, str]]:
    """`inner_circle_for_context` with each line's reference, `person:<id>`."""
    order = Case(When(circle=Person.Circle.FAMILY, then=Value(0)), default=Value(1), output_field=IntegerField())
    people = (living(tenant_id=tenant_id, user_id=user_id).filter(circle__in=Person.INNER_CIRCLES).defer("embedding")
              .annotate(_order=order).order_by("_order", "-mention_count", "display_name", "pk"))
    return [(f"person:{p.pk}", p.context_line()) for p in people[: conf.get("PEOPLE_INNER_CIRCLE_MAX")]]


@dataclass
class RelevantPerson:
    person: Person
    score: float
    reason: str = ""
    chosen_by: Literal["reranker", "score"] = "score"


def relevant_people(*, tenant_id: int, user_id: str, query: str, limit: int | None = None) -> list[RelevantPerson]:
    """Friends, Work_Outer and Other people relevant to `query`: the reranker's choice among the top
    candidates when an LLM is configured, else (or when it fails or times out) the best scores. At most
    `limit`, and never more than `PEOPLE_RERANK_MAX_PEOPLE` (seed 000: "0–10 relevant people"), which is
    the limit when none is given; the context's budget then decides how many lines fit."""
    most = conf.get("PEOPLE_RERANK_MAX_PEOPLE")
    limit = max(0, most if limit is None else min(limit, most))
    if limit == 0 or not query.strip():
        return []
    client = reranker.reranker_client()
    threshold = conf.get("PEOPLE_SEARCH_THRESHOLD")
    result = people_search(
        tenant_id=tenant_id, user_id=user_id, query=query, exclude_circles=Person.INNER_CIRCLES,
        threshold=min(threshold, conf.get("PEOPLE_RERANK_MIN_SCORE")) if client else threshold,
        max_results=conf.get("PEOPLE_RERANK_CANDIDATES") if client else limit,
    )
    if client is not None and result.hits:
        scores = {h.person.pk: h.score for h in result.hits}
        chosen = reranker.rerank(client=client, query=query, candidates=[h.person for h in result.hits],
                                 max_people=limit)
        if chosen is not None:
            metrics.RERANKER_SELECTED.labels(str(tenant_id)).observe(len(chosen))
            return [RelevantPerson(p, scores[p.pk], reason, "reranker") for p, reason in chosen]
    return [RelevantPerson(h.person, h.score) for h in result.hits if h.score >= threshold][:limit]


def relevant_people_for_context(*, tenant_id: int, user_id: str, query: str, limit: int | None = None) -> list[str]:
    """`<relevant_people>` lines for the prompt, in the people line format."""
    return [line for _, line in relevant_people_context_items(tenant_id=tenant_id, user_id=user_id, query=query,
                                                              limit=limit)]


def relevant_people_context_items(*, tenant_id: int, user_id: str, query: str,
                                  limit: int | None = None) -> list[tuple[str, str]]:
    """`relevant_people_for_context` with each line's reference, `person:<id>`."""
    return [(f"person:{r.person.pk}", r.person.context_line())
            for r in relevant_people(tenant_id=tenant_id, user_id=user_id, query=query, limit=limit)]


# --- The review queue (the admin's dashboard) ---------------------------------------------------
def review_pending() -> QuerySet[MergeProposal]:
    return MergeProposal.objects.filter(status=MergeProposal.Status.PENDING).select_related("source", "target")


def review_describe(proposal: MergeProposal) -> str:
    """"anna: merge Hannah Miller into Hannah, kept as Hannah Miller (prefix, 0.90)": the name the
    merge keeps is said where it is not the target's, so the reviewer is not surprised by it."""
    source, target = _names_before(proposal)
    kept = (proposal.merge.target_after.get("display_name", target) if proposal.merge_id
            else merged_display_name(proposal.source, proposal.target))
    as_kept = f", kept as {kept}" if kept != target else ""
    return f"{proposal.user_id}: merge {source} into {target}{as_kept} ({proposal.rule}, {proposal.score:.2f})"


def _names_before(proposal: MergeProposal) -> tuple[str, str]:
    """The two names as the reviewer saw them: once merged, the target carries the name the merge kept
    ("merge Anna Smith into Anna Smith" read as nonsense), so a decided merge's snapshots say them."""
    merge = proposal.merge if proposal.merge_id else None
    if merge is None:
        return proposal.source.display_name, proposal.target.display_name
    return (merge.source_before.get("display_name", proposal.source.display_name),
            merge.target_before.get("display_name", proposal.target.display_name))


def review_decided_since(moment: datetime) -> list[Decision]:
    """Each decision as its audit row says it: read from the proposals' current status, an approval
    undone later showed as "merge proposal undone" beside the undo itself, and the approval was gone."""
    Action = PeopleAuditEntry.Action
    entries = (PeopleAuditEntry.objects
               .filter(created_at__gte=moment, action__in=[Action.MERGE_APPROVED, Action.MERGE_REJECTED,
                                                           Action.MERGE_UNDONE])
               .select_related("proposal__source", "proposal__target", "proposal__merge", "merge__source",
                               "merge__target")
               .order_by("-created_at", "-id")[:50])
    decided = []
    for entry in entries:
        if entry.action == Action.MERGE_UNDONE and entry.merge is not None:
            merge = entry.merge
            what = f"merge undone: {merge.user_id} {merge.source.display_name} ↔ {merge.target.display_name}"
        elif entry.proposal is not None:
            verdict = "approved" if entry.action == Action.MERGE_APPROVED else "rejected"
            what = f"merge proposal {verdict}: {entry.user_id} {' → '.join(_names_before(entry.proposal))}"
        else:
            continue  # its proposal or merge erased with the user since
        decided.append(Decision(when=entry.created_at, who=entry.actor_label or "—", what=what))
    return decided
