"""The machinery the per-language rule sets share: sentences, sentence filters, rules, facts."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import takewhile

from memoryhub.text import split_sentences
from profiles.keys import FAVORITE_THINGS

# (key, value) or (key, value, confidence) when a builder knows better than its rule's default.
Emit = list[tuple[str, str] | tuple[str, str, float]]


@dataclass(frozen=True)
class RuleFact:
    key: str
    value: str
    confidence: float
    rule: str
    evidence: str
    # The sentence says the value changed ("I moved to Seattle"): it replaces the current value.
    change: bool = False
    # The sentence says the value no longer holds ("I quit Google"); an empty value: whatever the key
    # holds now ("I quit my job", "я уволился", "我辞职了").
    ended: bool = False


@dataclass(frozen=True)
class Rule:
    """One phrasing. `build` turns a match into (key, value) pairs, or nothing when the match turns
    out not to be a fact (a pronoun where a name should be, a word outside the lexicon…)."""

    name: str
    pattern: re.Pattern[str]
    build: Callable[[re.Match[str]], Emit]
    confidence: float
    # Polite requests ("Could you answer in German?") are questions in form only.
    allow_question: bool = False
    # Preference requests ("我希望你用中文") use the words wishes use.
    allow_wish: bool = False
    # The phrasing states a change ("moved to", "переехал", "搬到"): the new value supersedes the old.
    change: bool = False
    # A phrasing that states a change only with a word like "now" ("I now live in…", "теперь живу"), in the
    # match's own clause: "I'm a nurse, and now I'm off to bed" changes no job.
    change_when: re.Pattern[str] | None = None
    # The phrasing says a value ended ("I quit Google", "я уволился из Сбербанка", "我从腾讯离职了"): the
    # builder's value is the one that no longer holds, or "" for whatever the key holds now.
    ends: bool = False


@dataclass(frozen=True)
class SentenceFilters:
    """Sentence-level reasons a statement is not the user's current fact about themselves."""

    question: Callable[[str], bool]
    hypothetical: Callable[[str], bool]
    reported: Callable[[str], bool]
    negated: Callable[[str, int], bool]
    # Where a new clause with its own subject starts ("green| and I love jazz", "джаз| и я играю", "吉他|而且我…"):
    # a value never runs past it, though a value may hold the conjunction ("black and white", "чёрный и белый").
    new_clause: re.Pattern[str] | None = None


# Sentence ends: Latin/Cyrillic punctuation followed by a space (so "y.o." and "3.5" stay whole),
# CJK punctuation anywhere, and line breaks.


# Words said in passing after a value ("sushi by the way", "медсестра, кстати", "nurse btw"): not part of it.
_TRAILING_FILLER = re.compile(
    r"(?:[\s,]+(?:by\s+the\s+way|btw|though|actually|honestly|anyway|anyways|lol|haha|as\s+well|too"
    r"|кстати|вообще-то|вообще|правда|короче|тоже|ваще))+\s*$",
    re.IGNORECASE,
)


def without_trailing_filler(value: str) -> str:
    """`value` less the filler words said after it; the value itself when that would leave nothing."""
    return _TRAILING_FILLER.sub("", value).strip() or value


def sentences(text: str) -> list[str]:
    """The sentences the rules read one by one: the project's one splitter, which ends none at an abbreviation's
    dot ("I work at St. Mary's" was cut at "St.", and gave the employer "St")."""
    return split_sentences(text)


# Where a clause ends: punctuation, or a conjunction that starts another statement.
_CLAUSE_BREAK = re.compile(r"[,;:—–(]|\b(?:and|but|while|и|а|но)\b", re.IGNORECASE)
JOB_KEYS = frozenset({"occupation", "employer"})


def _clause(sentence: str, start: int, end: int) -> str:
    """The clause around `sentence[start:end]`: from the last break before it to the first after it."""
    before = [m.end() for m in _CLAUSE_BREAK.finditer(sentence, 0, start)]
    after = _CLAUSE_BREAK.search(sentence, end)
    return sentence[before[-1] if before else 0: after.start() if after else len(sentence)]


def _matches(pattern: re.Pattern[str], sentence: str, new_clause: re.Pattern[str] | None) -> Iterator[re.Match[str]]:
    """The matches of `pattern`, each read again up to a new clause that starts inside one of its values: the
    sentence ends there for it, so "my favorite color is green and I love jazz" gives "green", and the search
    goes on from that clause, which may hold a match of its own ("I like jazz and I love rock"). A clause
    between a match's values is the phrasing's own ("I'm from Cork but I'm in Dublin", "…because I'm allergic")."""
    pos = 0
    while pos <= len(sentence) and (match := pattern.search(sentence, pos)):
        values = [match.span(g) for g in range(1, (pattern.groups or 0) + 1) if match.start(g) >= 0]
        # Searched to the sentence's end: what tells a new clause may follow the match ("吉他而且|我…").
        breaks = takewhile(lambda c: c.start() < match.end(),
                           new_clause.finditer(sentence, match.start() + 1) if new_clause else ())
        cut = next((c for c in breaks if any(start < c.start() < end for start, end in values)), None)
        if cut is None:
            yield match
            pos = match.end() + (match.end() == match.start())
            continue
        if inner := pattern.search(sentence, match.start(), cut.start()):
            yield inner
        pos = cut.start()


def run_rules(sentence: str, rules: Iterable[Rule], filters: SentenceFilters) -> list[RuleFact]:
    if filters.reported(sentence):
        return []
    question = filters.question(sentence)
    hypothetical = filters.hypothetical(sentence)
    out: list[RuleFact] = []
    for rule in rules:
        if (question and not rule.allow_question) or (hypothetical and not rule.allow_wish):
            continue
        for match in _matches(rule.pattern, sentence, filters.new_clause):
            if filters.negated(sentence, match.start()):
                continue
            for emitted in rule.build(match):
                key, value = emitted[0], emitted[1]
                confidence = emitted[2] if len(emitted) > 2 else rule.confidence  # type: ignore[misc]
                if value or (rule.ends and value is not None):
                    change = rule.change or bool(
                        rule.change_when and rule.change_when.search(_clause(sentence, match.start(), match.end())))
                    out.append(RuleFact(key, value, confidence, rule.name, match.group(0).strip(),
                                        change and not rule.ends, rule.ends))
    return out


def job_pair_changes(facts: list[RuleFact]) -> list[RuleFact]:
    """The facts of one sentence, the job and the employer both stated as a change when the sentence names
    both ("Now I'm a UX designer at Amazon", "I work at Google as an engineer", "我在字节跳动当分析师"): that
    is the user's job as a whole, so the pair replaces the old one together, where one of them alone, below
    its current value's confidence, would leave the new job at the old employer."""
    held = [f for f in facts if f.key in JOB_KEYS and not f.ended]
    if {f.key for f in held} != JOB_KEYS:
        return facts
    return [replace(f, change=True) if f in held else f for f in facts]


def one(key: str, group: int = 1, transform: Callable[[str], str | None] = lambda s: s) -> Callable[
    [re.Match[str]], Emit
]:
    """A builder emitting `key` with the match's group `group`, transformed (None drops it)."""

    def build(match: re.Match[str]) -> Emit:
        raw = match.group(group)
        value = transform(raw.strip()) if raw else None
        return [(key, value)] if value else []

    return build


def said_case(value: str, said: str) -> str:
    """`value`, which a rule lowercased to compare it with a lexicon ("ux designer"), with the casing the
    user gave its words where case carries meaning: acronyms and inner capitals ("UX designer", "iOS
    developer", "ИТ-специалист") always; a capitalised word ("Java developer", "English teacher") unless
    the user capitalised the phrase's last word too, as in a title ("Software Engineer", "Nurse")."""
    said_words = {w.casefold(): w for w in re.findall(r"[^\W_]+", said)}
    parts = re.split(r"([\s\-]+)", value)
    titled = said_words.get(parts[-1].casefold(), "")[:1].isupper()
    out = []
    for part in parts:
        original = said_words.get(part.casefold(), part)
        meaningful = len(original) > 1 and any(c.isupper() for c in original[1:])
        out.append(original if meaningful or (original[:1].isupper() and not titled) else part)
    return "".join(out)


def lexicon(text: str) -> frozenset[str]:
    """A word list written as whitespace-separated text, which is easier to maintain than a literal."""
    return frozenset(text.split())


def words_before(text: str, pos: int, n: int) -> list[str]:
    return re.findall(r"[\w'’-]+", text[:pos].lower())[-n:]


@dataclass(frozen=True)
class SharedSubject:
    """A predicate that shares the user's subject of the clause before it: "I live in Boston and work at
    Fidelity", "Я переехала в Самару и устроилась в Сбер". The rules, anchored on the first person, read the
    sentence with the pronoun said again before such a predicate; the evidence stays what the user wrote.
    `predicate`: where such a predicate starts (the conjunction; the pronoun goes at the match's end);
    `user_clause`: the clause before it, up to the conjunction, is the user's; `other_subject`: a word by
    which that clause hands the predicate to someone else."""

    predicate: re.Pattern[str]
    user_clause: re.Pattern[str]
    other_subject: re.Pattern[str]
    pronoun: str

    def expand(self, sentence: str) -> str:
        out, pos = [], 0
        for m in self.predicate.finditer(sentence):
            clause = self.user_clause.search(sentence[:m.start()])
            if clause and not self.other_subject.search(clause.group(0)):
                out.append(f"{sentence[pos:m.end()]}{self.pronoun} ")
                pos = m.end()
        return "".join(out) + sentence[pos:]

    def run(self, sentence: str, extract: Callable[[str], list[RuleFact]]) -> list[RuleFact]:
        expanded = self.expand(sentence)
        facts = extract(expanded)
        if expanded == sentence:
            return facts
        return evidence_as_written(facts, sentence, f"{self.pronoun} ")


def evidence_as_written(facts: list[RuleFact], written: str, added: str) -> list[RuleFact]:
    """`facts` read from `written` with the subject `added` said again before it (a shared subject, a Chinese
    subjectless clause): each evidence as the user wrote it, without that subject."""
    return [replace(f, evidence=f.evidence[len(added):]) if f.evidence not in written and f.evidence.startswith(added)
            and f.evidence[len(added):] in written else f for f in facts]


def favorite(thing: str, value: str) -> Emit:
    """`favorite_<thing>` of a Russian or Chinese thing word `FAVORITE_THINGS` knows; nothing of another."""
    what = FAVORITE_THINGS.get(" ".join(thing.lower().split()))
    value = value.strip(" «»\"“”'《》")
    return [(f"favorite_{what}", value)] if what and value else []
