"""`lore_assert(fact)`: is a statement supported by the world's published knowledge, contradicted by
it, or unknown to it?

Offline it retrieves the entries the fact is about and checks them: how much of the fact the
entry covers, then names (another entry's title that the subject entry does not mention: contradicted
where a field of either gives another of that title's kind, "School: Conjuration" for "evocation";
else, after the checks below, unknown), numbers
(a value the entry does not give), whose rolls (`tools.roll_sides`: "A blinded creature has advantage on
attack rolls" against "Attack rolls against the creature have advantage, and the creature's attack rolls
have disadvantage" is contradicted; a rule the entry gives only for rolls against the creature leaves
the creature's own unknown, after the checks below), opposites (a word of a closed class,
`tools.contrast`, where the entry has another member of that class between the same neighbours: "left"
for "right", "succeeds" for "fails"), negation (a "not" on one side only, next to words both share),
and last the words themselves: past the first word the fact shares with the entry's closest sentence,
a word the entry lacks ("lost her right hand to a fire drake" where it says "frost wyrm") leaves the
fact unknown, never supported. With an LLM configured, the model judges the same sources and the offline
verdict is the fallback when it fails.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any, Literal

from django.conf import settings
from django.db.models.fields.json import KeyTextTransform
from django.db.models.functions import Lower
from pydantic import BaseModel

from lore import selectors as lore_selectors
from memoryhub import llm
from memoryhub.models import Tenant
from memoryhub.text import HAN_CHAR, analyze, pronoun_terms, term, words
from rag.models import Chunk
from tools import contrast, roll_sides
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
# jieba words: 不 and 没有 stand alone or lead a word (不能, 从不), but 非常 "very" and 未来 "future" do not negate.
ZH_NEGATIONS = {"不", "没", "没有", "未", "无", "非", "别", "不能", "不会", "不是", "不再", "不可", "无法", "从不",
                "从未", "并非", "绝不"}
CONJUNCTIONS = {"and", "or", "but", "then", "и", "или", "а", "но", "затем", "和", "或", "但", "但是", "然后", "并且"}
# Who an entry's sentences speak of when they do not name it: "She lost her right hand" in Maren Vell's entry.
SUBJECT_PRONOUNS = {"he", "she", "it", "they", "он", "она", "оно", "они", "他", "她", "它", "他们", "她们"}
# The term a subject pronoun or a word of the entry's title stands as: one neighbour however long the name,
# so that "Maren Vell was born in the south" and "She rules from the north tower" do not share a slot
# on the strength of her two names.
SUBJECT = "\x00subject"
WORD = re.compile(r"[\w']+", re.UNICODE)
# A line break ends a sentence unless the next line goes on in lower case, as wrapped prose does ("he
# never says\nwho gave it to him"); Chinese ends sentences with full-width marks and no space.
SENTENCE = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+(?![a-zа-яё])")
WINDOW = 3  # a negation applies to this many words after it
SLOT = 3  # a word's slot: this many content words on either side of it
# Shared neighbours (same side 1, across 1/2) before two words are in the same slot, or all of the
# statement's when it has fewer ("Borin is dead": only the name). One is not enough: "suffers the
# consequences of a failed saving throw" and "a successful save means" share only "save".
SLOT_MIN = 2.0
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


def _quote(text: str) -> str:
    return " ".join(text.split())[:200]


@dataclass(frozen=True)
class Token:
    """One word of a sentence, as the slot checks see it."""

    word: str  # normalised (memoryhub.text.words)
    terms: tuple[str, ...]  # its index term, a Chinese word's characters after it; () for a function word
    senses: frozenset[contrast.Sense]
    negated: bool


def _tokens(text: str, subject: frozenset[str]) -> list[Token]:
    """`text` word by word; a subject pronoun and a word of the entry's title (`subject`: its terms) stand
    as SUBJECT."""
    found = words(text)
    negated: set[int] = set()
    for i, word in enumerate(found):
        if word in NEGATIONS or word in ZH_NEGATIONS or word.endswith("n't"):
            for k in range(i + 1, min(i + 1 + WINDOW, len(found))):
                if found[k] in CONJUNCTIONS:
                    break
                negated.add(k)
    pronouns = pronoun_terms()
    out = []
    for i, word in enumerate(found):
        stem = term(word)
        if word in SUBJECT_PRONOUNS or stem in subject:
            terms: tuple[str, ...] = (SUBJECT,)
        elif not stem or stem in pronouns:
            terms = ()
        elif len(word) > 1 and HAN_CHAR.match(word):
            terms = (stem, *(ch for ch in word if term(ch)))
        else:
            terms = (stem,)
        out.append(Token(word, terms, contrast.senses(word), i in negated))
    return out


Slot = tuple[set[str], set[str], set[str]]


def _slot(tokens: list[Token], i: int, cls: str) -> Slot:
    """The terms before and after token `i` (SLOT content words each way, not counting words of class
    `cls`), and those inside it: 手 of 左手, where jieba kept the side and the hand in one word."""
    def side(indices: range) -> set[str]:
        out: set[str] = set()
        taken = 0
        for k in indices:
            if taken == SLOT:
                break
            if tokens[k].terms and all(c != cls for c, _ in tokens[k].senses):
                out.update(tokens[k].terms)
                taken += 1
        return out

    token = tokens[i]
    inside: set[str] = set()
    if len(token.word) > 1 and HAN_CHAR.match(token.word) and any(
            c == cls for ch in token.word for c, _ in contrast.senses(ch)):
        inside = {ch for ch in token.word if term(ch) and all(c != cls for c, _ in contrast.senses(ch))}
    return side(range(i - 1, -1, -1)), side(range(i + 1, len(tokens))), inside


def _slot_overlap(a: Slot, b: Slot) -> float:
    """How surely two words sit in the same slot: shared neighbours on the same side count 1, across
    ("gold gauntlet" / "gauntlet of silver") one half."""
    (before_a, after_a, in_a), (before_b, after_b, in_b) = a, b
    same = len(before_a & before_b) + len(after_a & after_b) + len(in_a & in_b)
    across = (len(before_a & after_b) + len(after_a & before_b)
              + len(in_a & (before_b | after_b)) + len(in_b & (before_a | after_a)))
    return same + across / 2


def _opposites(fact: list[Token], sentences: list[tuple[str, list[Token]]],
               decided: frozenset[str] = frozenset()) -> list[tuple[Token, Token, str]]:
    """The words of the statement whose slot the entry fills with another member of their class ("left"
    where the entry says "right"): the statement's word, the entry's and the entry's sentence.

    The sentence that decides is, of those with a word of that class, the one sharing most words with
    the statement. When it also has the statement's own word it does not contradict, whatever the slots
    say: "half as much damage on a successful one" has no word for "save" after "successful", and
    "attack rolls against it have advantage, its own attack rolls disadvantage" both members. The classes
    in `decided` are left out: the roll sides check (`tools.roll_sides`) has read whose rolls they are.
    """
    fact_terms = {t for token in fact for t in token.terms}
    found: list[tuple[Token, Token, str]] = []
    # A word of the subject's title is its name, not a value in a slot: "The Moon Bridge was built by the sun
    # priests" says nothing of the moon, and read as naming both members "in one place" the statement was
    # never checked against "built by the old moon priests" (unknown, with that very sentence quoted).
    named = [token.terms == (SUBJECT,) for token in fact]
    for i, claim in enumerate(fact):
        for cls, member in claim.senses if not named[i] else ():
            if cls in decided:
                continue
            slot = _slot(fact, i, cls)
            needed = min(SLOT_MIN, len(slot[0] | slot[1] | slot[2]))
            if any(c == cls and m != member and not named[j] and _slot_overlap(slot, _slot(fact, j, cls)) >= needed
                   for j, token in enumerate(fact) for c, m in token.senses):
                # The statement names both in one place ("her right hand, not her left"); the Moon Door
                # and the sun amulet of one sentence are two places.
                continue
            candidates = [(sentence, tokens) for sentence, tokens in sentences
                          if any(c == cls for token in tokens for c, _ in token.senses)]
            if not candidates:
                continue

            def shared(tokens: list[Token], cls: str = cls) -> int:
                return len(fact_terms & {t for token in tokens if all(c != cls for c, _ in token.senses)
                                         for t in token.terms})

            top = max(shared(tokens) for _, tokens in candidates)
            closest = [(sentence, tokens) for sentence, tokens in candidates if shared(tokens) == top]
            if any((cls, member) in token.senses for _, tokens in closest for token in tokens):
                continue
            best: tuple[float, Token, str] | None = None
            for sentence, tokens in closest:
                for j, token in enumerate(tokens):
                    if any(c == cls for c, _ in token.senses):
                        score = _slot_overlap(slot, _slot(tokens, j, cls))
                        if score >= needed and (best is None or score > best[0]):
                            best = (score, token, sentence)
            if best is not None:
                found.append((claim, best[1], best[2]))
    return found


def _sequence(tokens: list[Token], skip: frozenset[str]) -> list[tuple[str, str]]:
    """(term, word) of the content words, a Chinese word as its characters, without the `skip` terms."""
    out = []
    for token in tokens:
        if token.terms == (SUBJECT,):
            continue
        if len(token.terms) > 1 and HAN_CHAR.match(token.word):
            out.extend((ch, ch) for ch in token.terms[1:])
        elif token.terms:
            out.append((token.terms[0], token.word))
    return [(t, w) for t, w in out if t not in skip]


def _unsupported(fact: list[Token], best: list[Token], skip: frozenset[str],
                 entry_terms: set[str]) -> tuple[list[str], list[str]] | None:
    """Words of the statement the entry lacks, after a word the statement shares with the entry's closest
    sentence: (those words, the sentence's words in their place, if any). "Lost her right hand to a fire
    drake" against "to a frost wyrm", or "wears a silver gauntlet on her left hand" against a sentence
    that never says which hand. The words before the first shared one are free phrasing, the verbs that
    join a subject to the rest ("Fireball deals 8d6" / "A target takes 8d6")."""
    claim, evidence = _sequence(fact, skip), _sequence(best, skip)
    claim_terms = {t for t, _ in claim}
    matcher = SequenceMatcher(None, [t for t, _ in claim], [t for t, _ in evidence], autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("replace", "delete") or i1 == 0:
            continue
        # Values are the number check's: _terms leaves them out of the entry's terms.
        if lacking := [w for t, w in claim[i1:i2] if t not in entry_terms and not NUMBER.fullmatch(w)]:
            return lacking, [w for t, w in evidence[j1:j2] if t not in claim_terms][:len(lacking)]
    return None


Hit = lore_selectors.KnowledgeHit
# The titles of an entry's category in its version, but its own ("Magic-Schools/evocation": the other schools).
Siblings = Callable[[Hit], list[str]]


# A line of a structured entry's fields, as `lore.normalize` renders them ("School: Conjuration", "Damage:
# Damage type: Fire; …", the label a JSON key): what follows the label.
FIELD = re.compile(r"^[A-Z][a-z]*(?: [a-z]+){0,3}: (\S.*)$", re.MULTILINE)


def _sibling_said(entry: Hit, other: Hit, siblings: Siblings, fact_terms: set[str]) -> str | None:
    """A title of `other`'s category, not `other`'s and not one the statement says, that a field of `entry`
    gives: what `entry` has where the statement gives `other` ("Misty Step": "School: Conjuration", where the
    statement says Evocation). A field, not prose: prose names things in passing ("Li Shen once served the
    moon priests" names no kind of monster he is; "necromancy spells … create the undead" is no spell's
    school)."""
    values = [_terms(value) for value in FIELD.findall(entry.text)]
    own = _terms(entry.title)
    for title in siblings(other):
        terms = _terms(title)
        if terms and terms != own and not terms <= fact_terms and any(terms <= value for value in values):
            return title
    return None


def offline_check(fact: str, hits: list[Hit], siblings: Siblings = lambda hit: []) -> tuple[Check, list[Hit]]:
    """The verdict and the hits it rests on (the subject entry first). `siblings`: the other titles of a
    hit's category in its version (the names check; without it no name contradicts)."""
    fact_terms = _terms(fact)
    if not hits or not fact_terms:
        return Check("unknown", "Nothing in the published knowledge matches this statement."), []

    def coverage(hit: lore_selectors.KnowledgeHit) -> float:
        return len(fact_terms & _terms(f"{hit.title} {hit.text}")) / len(fact_terms)

    # The subject: the entry whose title the fact names (the longest such title), else the best covered.
    # A named entry below COVERAGE_UNKNOWN does not speak of the fact: a one-word SRD title said in
    # passing ("A ronin guards the crossing…" named Monsters/guard, "…the bearer of the moon amulet"
    # Equipment/amulet) is no subject, and the best-covered hit, the lore entry saying the sentence word
    # for word, decides. Above the floor the named entry stays the subject even where another covers
    # more: a wrong value or school lowers the coverage of the very entry it contradicts ("Cure Wounds
    # has a range of 60 feet": Mass Cure Wounds says "60 feet"; docs/retrieval.md "lore_assert: …").
    named = [h for h in hits if _terms(h.title) and _terms(h.title) <= fact_terms
             and coverage(h) >= COVERAGE_UNKNOWN]
    subject = max(named, key=lambda h: (round(coverage(h), 1), len(h.title))) if named else max(hits, key=coverage)
    cover = coverage(subject)
    if cover < COVERAGE_UNKNOWN:
        missing = sorted(fact_terms - _terms(f"{subject.title} {subject.text}"))
        hint = f"The closest entry ({subject.entry_id}) does not speak of: {', '.join(missing[:6])}."
        return Check("unknown", hint), [subject]
    subject_terms = _terms(f"{subject.title} {subject.text}")

    # Names: another entry's title in the fact that the subject entry never mentions. It contradicts where a
    # field of one of the two gives another of the other's kind ("Misty Step is an evocation spell": Misty
    # Step's "School: Conjuration"; "Shield is a necromancy spell": Shield's "School: Abjuration"), for a
    # subject the fact names. Else it is something the lore does not say, checked last, after the checks
    # that can contradict: "Li Shen is afraid of spiders" was contradicted because his entry never says
    # "spider", though it says nothing of his fears either.
    unmentioned: Hit | None = None
    for other in hits:
        title_terms = _terms(other.title)
        if (other is subject or other.entry_id == subject.entry_id or not title_terms
                or not title_terms <= fact_terms or title_terms <= subject_terms):
            continue
        for entry, asked in ((subject, other), (other, subject)) if subject in named else ():
            if said := _sibling_said(entry, asked, siblings, fact_terms):
                return Check("contradicted", f"{entry.entry_id} says {said} where the statement says "
                                             f"{asked.title}."), [entry, asked]
        unmentioned = unmentioned or other

    # The sentence (or "Range: 150 feet" line) closest to the fact.
    # Scored without the title's words, which the heading line repeats; on a tie, the line giving the
    # fact's own values wins, then any line giving values ("within 20 feet" vs "Range: 90 feet").
    title = frozenset(_terms(subject.title))
    asked = fact_terms - title or fact_terms
    sentences = [(s, _tokens(s, title)) for s in _sentences(subject.text) or [subject.text]]
    best, best_tokens = max(sentences, key=lambda pair: (
        len(asked & _terms(pair[0])), len(_numbers(fact) & _numbers(pair[0])),
        bool(_numbers(fact)) and bool(_numbers(pair[0]))))

    # Numbers: every value in the fact must appear in that sentence, or at least in the entry.
    fact_numbers = _numbers(fact)
    line_numbers = _numbers(best)
    entry_numbers = _numbers(f"{subject.title} {subject.text}")
    wrong = sorted(fact_numbers - (line_numbers or entry_numbers))
    if wrong and (line_numbers or entry_numbers):
        return Check("contradicted", f"{subject.entry_id} gives {', '.join(sorted(line_numbers or entry_numbers)[:8])}"
                                     f", not {', '.join(wrong)}: \u201c{_quote(best)}\u201d"), [subject]

    # Whose rolls: "A blinded creature has advantage on attack rolls" against "Attack rolls against the
    # creature have advantage, and the creature's attack rolls have disadvantage", where both members of the
    # pair stand in the one sentence and the opposites check finds the statement's own word.
    findings = roll_sides.compare(roll_sides.read(_sentences(fact), title), roll_sides.read(
        [s for s, _ in sentences], title))
    for finding in findings:
        if finding.verdict == "contradicted":
            return Check("contradicted", f"{subject.entry_id} says \u201c{finding.source.word}\u201d of "
                                         f"{roll_sides.describe(finding.source)} where the statement says "
                                         f"\u201c{finding.claim.word}\u201d: \u201c{_quote(finding.source.clause)}"
                                         f"\u201d"), [subject]

    if findings and all(f.verdict == "agreed" for f in findings) and any(
            (r.kind, r.cls) == (f.claim.kind, f.claim.cls) and (r.side, r.member) != (f.claim.side, f.claim.member)
            for r in roll_sides.read([best], title) for f in findings):
        # The closest sentence by words gives the other side's rule; the one on the statement's side is the
        # closer: "Otherwise, the attack roll has disadvantage" for rolls against a prone creature, not "The
        # creature has disadvantage on attack rolls".
        said = {f.source.clause for f in findings}
        best, best_tokens = next(((s, tokens) for s, tokens in sentences if s.strip() in said), (best, best_tokens))

    # Opposites anywhere in the entry: the sentence that fills the statement's slot decides.
    fact_tokens = _tokens(fact, title)
    swaps = _opposites(fact_tokens, sentences, frozenset(f.claim.cls for f in findings))
    for said, source, sentence in swaps:
        if said.negated == source.negated:
            return Check("contradicted", f"{subject.entry_id} says \u201c{source.word}\u201d where the statement "
                                         f"says \u201c{said.word}\u201d: \u201c{_quote(sentence)}\u201d"), [subject]
    if swaps:
        # "Not gold" against "silver" agrees, yet the entry never speaks of gold: neither verdict is
        # earned, and the negation check below would read the "not" as a contradiction.
        said, source, sentence = swaps[0]
        return Check("unknown", f"{subject.entry_id} says \u201c{source.word}\u201d; the statement denies "
                                f"\u201c{said.word}\u201d: \u201c{_quote(sentence)}\u201d"), [subject]

    # Negation in that sentence: negated on one side only, next to words both share.
    fact_neg = _negated_terms(fact) & _terms(f"{subject.title} {best}")
    entry_neg = _negated_terms(best) & fact_terms
    if bool(fact_neg) != bool(entry_neg):
        side = "the statement" if fact_neg else subject.entry_id
        return Check("contradicted", f"Negation differs: {side} negates {', '.join(sorted(fact_neg or entry_neg))}. "
                                     f"Source: \u201c{_quote(best)}\u201d"), [subject]
    for finding in findings:
        if finding.verdict == "unknown":
            return Check("unknown", f"{subject.entry_id} speaks of {roll_sides.describe(finding.source)}, the "
                                    f"statement of {roll_sides.describe(finding.claim)}: "
                                    f"\u201c{_quote(finding.source.clause)}\u201d"), [subject]
    if wrong:
        return Check("unknown", f"{subject.entry_id} gives no numbers to compare with {', '.join(wrong)}."), [subject]
    if unmentioned is not None:
        return Check("unknown", f"{subject.entry_id} does not mention {unmentioned.title}."), [subject, unmentioned]
    # Support needs the statement's words: one the entry lacks is a detail the lore does not give (or
    # gives otherwise), whatever the overlap.
    if unsupported := _unsupported(fact_tokens, best_tokens, title, subject_terms):
        lacking, instead = unsupported
        said = f"says \u201c{' '.join(instead)}\u201d where the statement says" if instead else "does not say"
        return Check("unknown", f"{subject.entry_id} {said} \u201c{' '.join(lacking)}\u201d: "
                                f"\u201c{_quote(best)}\u201d"), [subject]
    if cover < COVERAGE_SUPPORTED:
        return Check("unknown", f"{subject.entry_id} covers only part of the statement ({cover:.0%})."), [subject]
    return Check("supported", f"Stated by {subject.entry_id}: \u201c{_quote(best)}\u201d"), [subject]


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


def _category_titles(tenant: Tenant, targets: list[lore_selectors.Target]) -> Siblings:
    """`Siblings` read from the searched versions: a hit's category is its entry id's first part."""
    namespaces = {t.domain: t.namespace for t in targets}
    read: dict[tuple[str, str], list[str]] = {}

    def titles(hit: Hit) -> list[str]:
        category = hit.entry_id.partition("/")[0]
        if hit.domain not in namespaces or not category:
            return []
        if (hit.domain, hit.entry_id) not in read:
            rows = (Chunk.objects.filter(tenant_id=tenant.pk, namespace=namespaces[hit.domain],
                                         meta__entry_id__startswith=f"{category}/")
                    .exclude(meta__entry_id=hit.entry_id).values_list("meta__title", flat=True).distinct())
            read[(hit.domain, hit.entry_id)] = sorted({str(title) for title in rows if title})
        return read[(hit.domain, hit.entry_id)]

    return titles


def lore_assert(tenant: Tenant, args: dict[str, Any]) -> dict[str, Any]:
    targets = published_targets(tenant, args.get("world"), ["srd", "lore"])
    result = lore_selectors.knowledge_search(tenant_id=tenant.pk, targets=targets, query=args["fact"], k=6)
    seen = {(h.entry_id, h.language) for h in result.hits}
    hits = result.hits + [h for h in titled_hits(tenant, targets, args["fact"]) if (h.entry_id, h.language) not in seen]
    check, used = offline_check(args["fact"], hits, _category_titles(tenant, targets))
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
                "checks of names, numbers, opposite words such as left/right or dawn/dusk, whose rolls a rule "
                "speaks of (the creature's own or those against it), negation and words the lore lacks); uses the "
                "LLM when one is configured.",
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
