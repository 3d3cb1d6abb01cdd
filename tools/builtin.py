"""The built-in read-only tools: rules and lore over a world's published knowledge, the lore fact
check, and the chat-memory tools. Each returns JSON with a `sources` list (what it read)."""

from __future__ import annotations

import difflib
from typing import Any

from django.conf import settings

from lore import selectors as lore_selectors
from lore.models import World
from lore.services import LANGUAGES
from memoryhub.exceptions import ApplicationError, NotFound
from memoryhub.models import ApiKey, Message, Tenant
from memoryhub.urls_common import CLIENT_ID
from memoryhub.validation import iso_instant
from profiles.selectors import profile_facts
from rag import context as rag_context
from rag.models import Chunk
from rag.selectors import chunks_search, with_current_values
from tools.registry import Tool, register

WORLD = {"type": "string", "pattern": r"^[a-z0-9][a-z0-9-]{0,63}$",
         "description": "World slug; the TOOLS_DEFAULT_WORLD setting when omitted."}
# A query of spaces found nothing and said nothing of why (the HTTP search refuses it as blank).
NOT_BLANK = r"\S"
USER_ID = {"type": "string", "pattern": rf"^{CLIENT_ID}$", "description": "The chat user's id."}
LANGUAGE = {"type": "string", "pattern": r"^[a-z]{2,3}$", "description": "Only this language (en, ru, ...)."}
SESSION = {"type": "string", "minLength": 1, "maxLength": 200,
           "description": "The caller's session (a player's, a party's): while the world tries a staged version on "
                          "a share of searches (a canary), one session is always served by the same version."}


def source_ref(hit_domain: str, entry_id: str, version: str) -> str:
    return f"{hit_domain}:{entry_id}@{version}"


def published_targets(tenant: Tenant, world: str | None, domains: list[str],
                      session: str | None = None) -> list[lore_selectors.Target]:
    """The `latest` version of each asked domain that has one (or its canary's, for the share of searches it
    serves: the same for one `session` every time); a domain never published is skipped rather than failing
    the call (a rules-only world has no lore)."""
    slug = world or settings.TOOLS_DEFAULT_WORLD
    found = {d: target for d, (target, _) in lore_selectors.latest_targets(
        tenant_id=tenant.pk, world_slug=slug, domains=domains, canary_key=session).items()}
    if not found:
        lore_selectors.world_get(tenant_id=tenant.pk, slug=slug)  # 404 naming an unknown world
        raise NotFound(f"World {slug!r} has nothing published in {', '.join(domains)}.", field="world")
    return [found[d] for d in domains if d in found]


def world_languages(tenant: Tenant, world: str | None) -> list[str]:
    """The languages the world is written in (`World.languages`); none for a world it does not have."""
    slug = world or settings.TOOLS_DEFAULT_WORLD
    return next(iter(World.objects.filter(tenant_id=tenant.pk, slug=slug).values_list("languages", flat=True)), [])


def languages_check(asked: list[tuple[str, str]], languages: list[str]) -> None:
    """A 400 naming the argument for a code that is no language: "xx" passed the schema's pattern and
    answered 200, rules_lookup with another language's text and a note, lore_search with nothing, and a
    model took its typo for a language the world lacks. Codes are those a world may be written in
    (`lore.services.LANGUAGES`, ISO 639 as Django knows them), as the REST search refuses. A real language
    the world lacks is no error: the world's text answers, said so (`note`)."""
    for field, code in asked:
        if code not in LANGUAGES:
            written = f"; the world is written in {', '.join(languages)}" if languages else ""
            raise ApplicationError(f"{field}: {code!r} is not a language code (ISO 639, as Django knows them: "
                                   f"en, ru, zh, ...){written}.", field=field)


# --- rules_lookup ---------------------------------------------------------------------------------
def _rule_rows(chunks: Any) -> list[dict[str, Any]]:
    return list(chunks.order_by("id").values("text", "meta", "kind"))


def rules_lookup(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    [target] = published_targets(tenant, args.get("world"), ["srd"], args.get("session"))
    chunks = Chunk.objects.filter(tenant_id=tenant.pk, namespace=target.namespace)
    language = args.get("language")
    languages = world_languages(tenant, args.get("world")) if language else []
    languages_check([("language", language)] if language else [], languages)
    # A language the world is not written in has no text to prefer: the search goes to the world's own.
    searched = language if language in languages else None
    how = "rule_id"
    if "rule_id" in args:
        rows = _rule_rows(chunks.filter(meta__entry_id=args["rule_id"]))
        if not rows:
            raise _unknown_rule(chunks, args["rule_id"], target.version)
    else:
        # A title in any of the world's languages names the rule: {"term": "blinded", "language": "ru"}
        # found no Russian title "blinded" and searched the Russian text for an English word, which
        # brought Stealth and Survival although the condition has its Russian entry, "Ослепление".
        how = "title"
        rows = _rule_rows(chunks.filter(meta__title__iexact=args["term"].strip()))
        if not rows:
            how = "search"
            rows = _rule_search(tenant, target, args["term"], searched)
    if language:
        rows = _in_language(chunks, rows, language)
    entries: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        key = (row["meta"].get("entry_id", ""), row["kind"])
        entry = entries.setdefault(key, {"rule_id": key[0], "title": row["meta"].get("title", ""),
                                         "language": key[1], "text": ""})
        entry["text"] = f"{entry['text']}\n\n{row['text']}".strip()
    rules = list(entries.values())
    # The world searched, named: without `world` it is TOOLS_DEFAULT_WORLD, and a model asking about
    # its own campaign's world could not tell the answer came from another.
    answer = {"world": args.get("world") or settings.TOOLS_DEFAULT_WORLD,
              "matched_by": how if rules else "none", "version": target.version, "canary": target.canary,
              "rules": rules,
              "sources": [source_ref("srd", r["rule_id"], target.version) for r in rules]}
    elsewhere = [r for r in rules if language and r["language"] != language]
    if elsewhere and language not in languages:
        answer["note"] = (f"World {answer['world']!r} is not written in {language!r} (its languages: "
                          f"{', '.join(languages)}); given in {', '.join(sorted({r['language'] for r in elsewhere}))}.")
    elif elsewhere:
        # Said, so a model does not take an English text for the Russian rules it asked for.
        answer["note"] = (f"The world has no {language!r} text of {', '.join(r['rule_id'] for r in elsewhere)}; "
                          f"given in {', '.join(sorted({r['language'] for r in elsewhere}))}.")
    return answer


def _unknown_rule(chunks: Any, rule_id: str, version: str) -> ApplicationError:
    """An id the world does not hold is a 404 with the ids it may have meant, as an unknown NPC or party
    is: an empty 200 told a model nothing of its mistake."""
    category, _, slug = rule_id.partition("/")
    ids = sorted({i for i in chunks.values_list("meta__entry_id", flat=True).order_by().distinct() if i})
    # The same slug in another category first ("Conditions/misty-step"), then a near spelling of the
    # slug within its category ("Spells/misty-stp"), compared by slug: the shared category alone made
    # every condition "close" to a misspelt one.
    close = [i for i in ids if i.partition("/")[2].lower() == slug.lower()]
    if not close:
        slugs = {i.partition("/")[2]: i for i in ids if i.partition("/")[0] == category}
        close = [slugs[m] for m in difflib.get_close_matches(slug, list(slugs), n=3, cutoff=0.75)]
    hint = (" Did you mean " + " or ".join(repr(i) for i in close[:3]) + "?" if close
            else " Look it up by `term` (a title or words) to find its id.")
    return ApplicationError(f"The world's rules (srd {version}) have no {rule_id!r}.{hint}", code="not_found",
                            field="rule_id", status_code=404)


def _rule_search(tenant: Tenant, target: lore_selectors.Target, term: str,
                 language: str | None) -> list[dict[str, Any]]:
    """The best three entries for the term, in `language` when it has any above the search's relevance
    floor, else in the world's other languages: the Russian SRD is a subset (no spells, monsters or
    rule sections), and its nearest text to "fireball" was no rule of fireballs."""
    for languages in ((language,), ()) if language else ((),):
        hits = lore_selectors.knowledge_search(tenant_id=tenant.pk, targets=[target], query=term, k=3,
                                               filters=lore_selectors.KnowledgeFilters(languages=languages))
        if hits.hits:
            return [{"text": h.text, "meta": h.meta, "kind": h.language} for h in hits.hits]
    return []


def _in_language(chunks: Any, rows: list[dict[str, Any]], language: str) -> list[dict[str, Any]]:
    """Each entry found, in `language` where the world has it (an entry keeps its id across languages),
    else as found."""
    ids = list(dict.fromkeys(row["meta"].get("entry_id", "") for row in rows))
    translated: dict[str, list[dict[str, Any]]] = {}
    for row in _rule_rows(chunks.filter(kind=language, meta__entry_id__in=ids)):
        translated.setdefault(row["meta"].get("entry_id", ""), []).append(row)
    out: list[dict[str, Any]] = []
    for entry_id in ids:
        out.extend(translated.get(entry_id) or [row for row in rows if row["meta"].get("entry_id", "") == entry_id])
    return out


register(Tool(
    name="rules_lookup",
    description="Look up an SRD rule by its id (\"Conditions/blinded\", \"Spells/fireball\") or by a term "
                "(an exact title first, else the best matches of a search). Reads the published version.",
    input_schema={
        "type": "object",
        "properties": {
            "term": {"type": "string", "minLength": 1, "maxLength": 200, "description": "A rule or term name."},
            # The whitespace spelt out: `\s` is not the same set in ECMA-262 (the schema's dialect, what clients
            # and schemathesis read) and in Python's `re` (\x1c-\x1f are spaces there), so "X\x1f/V" passed one
            # and failed the other.
            "rule_id": {"type": "string", "pattern": r"^[^/ \t\n\r\f\v]+/[^ \t\n\r\f\v]", "maxLength": 300,
                        "description": "Category/slug, as the search returns in entry_id."},
            "world": WORLD,
            "language": {**LANGUAGE, "description": "This language's text where the world has the rule in it, "
                                                    "else another's (the answer's note says so, also for a "
                                                    "language the world is not written in). A code that is no "
                                                    "ISO 639 language (\"xx\") is an error naming language."},
            "session": SESSION,
        },
        "oneOf": [{"required": ["term"]}, {"required": ["rule_id"]}],
        "additionalProperties": False,
    },
    function=rules_lookup,
))


# --- lore_search ----------------------------------------------------------------------------------
def lore_search(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    filters = args.get("filters", {})
    targets = published_targets(tenant, args.get("world"), filters.get("domains", ["srd", "lore"]), args.get("session"))
    asked = filters.get("languages", [])
    languages = world_languages(tenant, args.get("world")) if asked else []
    languages_check([(f"filters.languages.{i}", code) for i, code in enumerate(asked)], languages)
    result = lore_selectors.knowledge_search(
        tenant_id=tenant.pk, targets=targets, query=args["query"], k=args.get("k", 8),
        filters=lore_selectors.KnowledgeFilters(languages=tuple(filters.get("languages", ())),
                                                categories=tuple(filters.get("categories", ()))),
        rerank=args.get("rerank"))
    items = [{"entry_id": h.entry_id, "title": h.title, "domain": h.domain, "language": h.language,
              "version": h.version, "score": round(h.score, 6), "text": h.text} for h in result.hits]
    answer = {"world": args.get("world") or settings.TOOLS_DEFAULT_WORLD, "query": args["query"],
              "versions": result.versions, "canary": any(t.canary for t in targets), "items": items,
              "sources": [source_ref(h.domain, h.entry_id, h.version) for h in result.hits]}
    # Said only when a rerank was asked for (by `rerank` or the domains' setting), so the answer of a plain
    # search is what it was.
    if result.llm_steps:
        answer["llm_steps"] = result.llm_steps
    if reranks := [s for s in result.skipped_steps if s["step"] == "rerank"]:
        answer["skipped_steps"] = reranks
    if lacking := [code for code in asked if code not in languages]:
        # An empty answer for a language the world has no text in said nothing of why.
        answer["note"] = (f"World {answer['world']!r} is not written in {', '.join(map(repr, lacking))} (its "
                          f"languages: {', '.join(languages)}).")
    return answer


register(Tool(
    name="lore_search",
    description="Hybrid (BM25 + vector) search of a world's published SRD rules and lore.",
    input_schema={
        "type": "object",
        "properties": {
            "query": {"type": "string", "minLength": 1, "maxLength": 2000, "pattern": NOT_BLANK},
            "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 8},
            "filters": {
                "type": "object",
                "properties": {
                    "domains": {"type": "array", "items": {"enum": ["srd", "lore"]}, "minItems": 1,
                                "uniqueItems": True},
                    "languages": {"type": "array", "items": LANGUAGE, "maxItems": 10,
                                  "description": "Only these languages; a code that is no ISO 639 language is an "
                                                 "error naming it, one the world is not written in finds nothing "
                                                 "(the answer's note says so)."},
                    "categories": {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": 100},
                                   "maxItems": 20, "description": "Entry id prefixes such as Spells."},
                },
                "additionalProperties": False,
            },
            "world": WORLD,
            "rerank": {"type": "boolean", "description": "LLM rerank of the top candidates (default: the "
                                                         "domains' setting in config/knowledge.yaml, off)."},
            "session": SESSION,
        },
        "required": ["query"],
        "additionalProperties": False,
    },
    function=lore_search,
))


# --- memory tools ---------------------------------------------------------------------------------
# A user's chat memory: the key needs the `memory` scope too, as the REST API's memory endpoints do.
MEMORY = (ApiKey.Scope.MEMORY,)


def _memory_item(chunk: dict[str, Any], score: float) -> dict[str, Any]:
    """A search hit as the model reads it: who said a turn ("Nice to meet you, Kate!" is the
    assistant's, not the user's), and what kind of memory a typed one is."""
    item = {"id": chunk["id"], "type": chunk["type"], "text": chunk["text"], "session_id": chunk["session_id"],
            "score": round(score, 6), "created_at": iso_instant(chunk["created_ts"])}
    if chunk["type"] == "dialog":
        item["said_by"] = chunk["speaker"] or chunk["role"]
    elif chunk["type"] == "memory":
        item.update({key: chunk[key] for key in ("kind", "category", "emotion") if chunk[key]})
    return item


def memory_search(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    k = args.get("k", 10)
    result = chunks_search(tenant_id=tenant.pk, user_id=args["user_id"], query=args["query"], k=k)
    # A turn of greetings or thanks ("Thanks!", "lol ok") matched by the turns before it, which the
    # model does not see: as the context leaves them out, so does the tool (they were a third of a
    # chat user's top 5).
    result.items = [i for i in result.items
                    if not (i.chunk["type"] == "dialog" and rag_context.is_filler(i.chunk["text"]))]
    # A turn that stated a fact the user has changed since ("I live in Boston", found first for "where
    # do I live?") says so, and the turn that changed it follows: the model does not answer from the old one.
    hits = with_current_values(result, tenant_id=tenant.pk, user_id=args["user_id"], k=k).items
    items = []
    for hit in hits:
        item = _memory_item(hit.chunk, hit.score)
        if hit.changed_since is not None:
            item["changed_since"] = {**hit.changed_since, "said_at": iso_instant(hit.changed_since["said_at"])}
        if hit.corrects is not None:
            item["corrects"] = hit.corrects
        items.append(item)
    return {"query": args["query"], "items": items, "sources": [f"chunk:{i['id']}" for i in items]}


register(Tool(
    name="memory_search",
    description="Search a user's long-term chat memory: their past turns (with who said them, `said_by`, and "
                "when, `created_at`) and remembered facts, best match first; greetings and thanks are left out. "
                "Query with the words the user would have said and the names involved (\"moved to\", \"my boss "
                "Greg\"), not a question about them in the third person: \"she\" and \"her\" also match what "
                "the user said of other women. Where they live or work now: profile_get is surer than old turns; "
                "a turn that stated a fact the user has changed since carries `changed_since` (the key, its "
                "value `now`, and when the user said it), and the turn that changed it follows with "
                "`corrects` (the old turn's id).",
    input_schema={
        "type": "object",
        "properties": {"user_id": USER_ID,
                       "query": {"type": "string", "minLength": 1, "maxLength": 4000, "pattern": NOT_BLANK},
                       "k": {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}},
        "required": ["user_id", "query"],
        "additionalProperties": False,
    },
    function=memory_search,
    scopes=MEMORY,
))


def memory_context(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    ctx = rag_context.context_assemble(tenant_id=tenant.pk, user_id=args["user_id"], query=args["query"],
                                       session_id=args.get("session_id"), budget_tokens=args.get("budget_tokens"))
    blocks = [{"name": b.name, "tokens": b.tokens, "refs": [i.ref for i in b.items]} for b in ctx.blocks]
    return {"text": ctx.render(), "budget_tokens": ctx.budget, "used_tokens": ctx.used, "blocks": blocks,
            "sources": [ref for b in blocks for ref in b["refs"]]}


register(Tool(
    name="memory_context",
    description="The memory context block for a prompt: profile, inner circle, recent turns, memories "
                "and people, within a token budget.",
    input_schema={
        "type": "object",
        "properties": {"user_id": USER_ID,
                       "query": {"type": "string", "minLength": 1, "maxLength": 4000, "pattern": NOT_BLANK},
                       "session_id": {**USER_ID, "description": "The current session, for its recent turns."},
                       "budget_tokens": {"type": "integer", "minimum": 50, "maximum": 200000}},
        "required": ["user_id", "query"],
        "additionalProperties": False,
    },
    function=memory_context,
    scopes=MEMORY,
))


def profile_get(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    facts = profile_facts(tenant_id=tenant.pk, user_id=args["user_id"])
    # When the user said it, not when it was stored: a chat app that sends its history late would
    # otherwise date every fact today, and the model could not tell an old "location" from a move.
    said = dict(Message.objects.filter(tenant_id=tenant.pk, pk__in=[f.source_message_id for f in facts
                                                                    if f.source_message_id])
                .values_list("pk", "created_at"))
    return {"user_id": args["user_id"],
            "facts": [{"key": f.key, "value": f.value, "confidence": round(f.confidence, 4),
                       "as_of": (said.get(f.source_message_id) or f.updated_at).date().isoformat()} for f in facts],
            "sources": [f"fact:{f.pk}" for f in facts]}


register(Tool(
    name="profile_get",
    description="A user's active profile facts (name, age, location, employer, likes, ...), most confident "
                "first; `as_of` is the day the user said it (or it was recorded).",
    input_schema={"type": "object", "properties": {"user_id": USER_ID}, "required": ["user_id"],
                  "additionalProperties": False},
    function=profile_get,
    scopes=MEMORY,
))

# lore_assert lives in its own module (its checks are the larger part of it).
from tools import assertion  # noqa: E402,F401
