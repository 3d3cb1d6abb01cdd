"""`lore_assert(fact)`: is a statement supported by the world's published knowledge, contradicted by
it, or unknown to it?

Offline it retrieves the entries the fact is about and checks them: how much of the fact the
entry covers, then names (another entry's title that the subject entry does not mention), numbers
(a value the entry does not give) and negation (a "not" on one side only, next to words both
share). With an LLM configured, the model judges the same sources and the offline verdict is the
fallback when it fails.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any, Literal

from django.conf import settings
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Lower
from pydantic import BaseModel

from lore import selectors as lore_selectors
from memoryhub import llm
from memoryhub.models import Tenant
from memoryhub.text import analyze
from rag.models import Chunk
from tools.builtin import WORLD, published_targets, source_ref
from tools.registry import Tool, register

logger = logging.getLogger(__name__)

NEGATIONS = {
    "not", "no", "never", "cannot", "can't", "cant", "doesn't", "don't", "isn't", "aren't", "won't", "without",
    "none", "nothing", "neither", "nor", "immune",
    "не", "нет", "никогда", "ни", "без", "нельзя", "невозможно",
}
# A number, a die expression (8d6) or an ordinal (3rd, 5-го): the value, without the suffix.
NUMBER = re.compile(r"\b(\d+d\d+|\d+)(?:st|nd|rd|th|-?(?:го|й|м|х|ого|ий|ая|ое|ей))?\b", re.IGNORECASE)
CONJUNCTIONS = {"and", "or", "but", "then", "и", "или", "а", "но", "затем"}
WORD = re.compile(r"[\w']+", re.UNICODE)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
WINDOW = 3  # a negation applies to this many words after it
COVERAGE_UNKNOWN = 0.5  # below this share of the fact's terms in the entry, the lore does not speak of it
COVERAGE_SUPPORTED = 0.7


@dataclass
class Check:
    verdict: str
    hint: str


def _terms(text: str) -> set[str]:
    return {t for t in analyze(NUMBER.sub(" ", text)) if not t.isdigit()}


def _numbers(text: str) -> set[str]:
    return {m.group(1).lower() for m in NUMBER.finditer(text)}


def _negated_terms(text: str) -> set[str]:
    """The terms that follow a negation within WINDOW words."""
    words = [w.lower() for w in WORD.findall(text)]
    out: set[str] = set()
    for i, word in enumerate(words):
        if word in NEGATIONS or word.endswith("n't"):
            scope = []
            for following in words[i + 1:i + 1 + WINDOW]:
                if following in CONJUNCTIONS:  # "can't see and automatically fails": "fails" is not negated
                    break
                scope.append(following)
            out |= _terms(" ".join(scope))
    return out


def _sentences(text: str) -> list[str]:
    return [s for s in SENTENCE.split(text) if s.strip()]


Hit = lore_selectors.KnowledgeHit


def offline_check(fact: str, hits: list[Hit]) -> tuple[Check, list[Hit]]:
    """The verdict and the hits it rests on (the subject entry first)."""
    fact_terms = _terms(fact)
    if not hits or not fact_terms:
        return Check("unknown", "Nothing in the published knowledge matches this statement."), []

    def coverage(hit: lore_selectors.KnowledgeHit) -> float:
        return len(fact_terms & _terms(f"{hit.title} {hit.text}")) / len(fact_terms)

    # The subject: the entry whose title the fact names (the longest such title), else the best covered.
    named = [h for h in hits if _terms(h.title) and _terms(h.title) <= fact_terms]
    subject = max(named, key=lambda h: (round(coverage(h), 1), len(h.title))) if named else max(hits, key=coverage)
    cover = coverage(subject)
    if cover < COVERAGE_UNKNOWN:
        missing = sorted(fact_terms - _terms(f"{subject.title} {subject.text}"))
        hint = f"The closest entry ({subject.entry_id}) does not speak of: {', '.join(missing[:6])}."
        return Check("unknown", hint), [subject]
    subject_terms = _terms(f"{subject.title} {subject.text}")

    # Names: another entry's title in the fact that the subject entry never mentions
    # ("Misty Step is an evocation spell": Evocation is an entry, Misty Step's text lacks it).
    for other in hits:
        title_terms = _terms(other.title)
        if (other is not subject and other.entry_id != subject.entry_id and title_terms
                and title_terms <= fact_terms and not title_terms <= subject_terms):
            return Check("contradicted", f"{subject.entry_id} does not mention {other.title}."), [subject, other]

    # The sentence (or "Range: 150 feet" line) closest to the fact.
    # Scored without the title's words, which the heading line repeats; on a tie, the line giving the
    # fact's own values wins, then any line giving values ("within 20 feet" vs "Range: 90 feet").
    asked = fact_terms - _terms(subject.title) or fact_terms
    best = max(_sentences(subject.text) or [subject.text],
               key=lambda s: (len(asked & _terms(s)), len(_numbers(fact) & _numbers(s)),
                              bool(_numbers(fact)) and bool(_numbers(s))))

    # Numbers: every value in the fact must appear in that sentence, or at least in the entry.
    fact_numbers = _numbers(fact)
    line_numbers = _numbers(best)
    entry_numbers = _numbers(f"{subject.title} {subject.text}")
    wrong = sorted(fact_numbers - (line_numbers or entry_numbers))
    if wrong and (line_numbers or entry_numbers):
        return Check("contradicted", f"{subject.entry_id} gives {', '.join(sorted(line_numbers or entry_numbers)[:8])}"
                                     f", not {', '.join(wrong)}: \u201c{best.strip()[:200]}\u201d"), [subject]

    # Negation in that sentence: negated on one side only, next to words both share.
    fact_neg = _negated_terms(fact) & _terms(f"{subject.title} {best}")
    entry_neg = _negated_terms(best) & fact_terms
    if bool(fact_neg) != bool(entry_neg):
        side = "the statement" if fact_neg else subject.entry_id
        return Check("contradicted", f"Negation differs: {side} negates {', '.join(sorted(fact_neg or entry_neg))}. "
                                     f"Source: \u201c{best.strip()[:200]}\u201d"), [subject]
    if wrong:
        return Check("unknown", f"{subject.entry_id} gives no numbers to compare with {', '.join(wrong)}."), [subject]
    if cover < COVERAGE_SUPPORTED:
        return Check("unknown", f"{subject.entry_id} covers only part of the statement ({cover:.0%})."), [subject]
    return Check("supported", f"Stated by {subject.entry_id}: \u201c{best.strip()[:200]}\u201d"), [subject]


class LLMVerdict(BaseModel):
    verdict: Literal["supported", "contradicted", "unknown"]
    hint: str
    source_ids: list[str] = []


LLM_PROMPT = (
    "You check statements against a tabletop RPG's rules and lore. Answer only from the SOURCES. "
    "verdict: supported (the sources state it), contradicted (the sources state otherwise), unknown "
    "(the sources do not say). hint: one short sentence quoting or citing the deciding source. "
    "source_ids: the entry ids you used. Reply as JSON {\"verdict\", \"hint\", \"source_ids\"}."
)


def llm_check(client: llm.LLMClient, fact: str, hits: list[lore_selectors.KnowledgeHit]) -> Check:
    sources = "\n\n".join(f"[{h.entry_id}] {h.title}\n{h.text[:1500]}" for h in hits[:4])
    reply, _ = client.chat_json("lore_assert", [
        {"role": "system", "content": LLM_PROMPT},
        {"role": "user", "content": f"SOURCES:\n{sources}\n\nSTATEMENT: {fact}"},
    ], LLMVerdict)
    return Check(reply.verdict, reply.hint)


def titled_hits(tenant: Tenant, targets: list[lore_selectors.Target], fact: str) -> list[lore_selectors.KnowledgeHit]:
    """Entries whose title the fact names word for word ("Fireball has a range of 60 feet"): the search
    can rank them low when the rest of the fact is about something else, yet they are its subject."""
    words = [w.lower() for w in WORD.findall(fact)]
    grams = {" ".join(words[i:i + n]) for n in range(1, 5) for i in range(len(words) - n + 1)}
    by_ns = {t.namespace: t for t in targets}
    rows = (Chunk.objects.filter(tenant_id=tenant.pk, namespace__in=list(by_ns))
            .annotate(title_lower=Lower(KeyTextTransform("title", "meta"))).filter(title_lower__in=grams)
            .order_by("id").values("id", "namespace", "text", "meta", "kind")[:20])
    hits: dict[tuple[str, str], lore_selectors.KnowledgeHit] = {}
    for row in rows:
        target, meta = by_ns[row["namespace"]], row["meta"]
        key = (meta.get("entry_id", ""), row["kind"])
        if key in hits:
            hits[key].text += "\n" + row["text"]
            continue
        hits[key] = lore_selectors.KnowledgeHit(
            entry_id=key[0], title=meta.get("title", ""), heading_path=meta.get("heading_path", []),
            language=row["kind"], domain=target.domain, version=target.version, text=row["text"], score=0.0,
            components={}, ranks={}, chunk_id=row["id"], meta=meta)
    return list(hits.values())


def lore_assert(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    targets = published_targets(tenant, args.get("world"), ["srd", "lore"])
    result = lore_selectors.knowledge_search(tenant_id=tenant.pk, targets=targets, query=args["fact"], k=6)
    seen = {(h.entry_id, h.language) for h in result.hits}
    hits = result.hits + [h for h in titled_hits(tenant, targets, args["fact"]) if (h.entry_id, h.language) not in seen]
    check, used = offline_check(args["fact"], hits)
    method = "offline"
    client = llm.get_llm() if args.get("use_llm", True) else None
    if client is not None and hits:
        try:
            ordered = used + [h for h in hits if h not in used]
            check = llm_check(client, args["fact"], ordered)
            used, method = ordered[:4], "llm"
        except llm.LLMError as exc:
            # The offline verdict stands; the hint says the model was not consulted.
            logger.warning("lore_assert: LLM unavailable, offline verdict kept: %s", exc)
            check = Check(check.verdict, f"{check.hint} (offline; the LLM failed)")
    return {"fact": args["fact"], "verdict": check.verdict, "hint": check.hint, "method": method,
            "world": args.get("world") or settings.TOOLS_DEFAULT_WORLD,
            "sources": [source_ref(h.domain, h.entry_id, h.version) for h in used]}


register(Tool(
    name="lore_assert",
    description="Check a statement against the world's published rules and lore: verdict supported, "
                "contradicted or unknown, the sources it rests on and a hint. Works offline (retrieval plus "
                "checks of negation, numbers and names); uses the LLM when one is configured.",
    input_schema={
        "type": "object",
        "properties": {
            "fact": {"type": "string", "minLength": 3, "maxLength": 1000},
            "world": WORLD,
            "use_llm": {"type": "boolean", "default": True,
                        "description": "Ask the configured LLM; false forces the offline checks."},
        },
        "required": ["fact"],
        "additionalProperties": False,
    },
    function=lore_assert,
))
