"""Phrase shapes of the rule-based archivist: which name a cue word belongs to, relations, aliases.

Works on the typed tokens both tokenisers produce (NAME, CUE, OWN, COP, PRON, PUNCT, OF, ALIAS,
OTHER): "my boss Tom" and "Tom, my boss" give Tom a circle; "Tom's wife Maria", "Мария — жена
Петрова" and "玛丽是彼得的妻子" give a relation; "Maria aka Masha" an alias.
"""

from __future__ import annotations

from memoryhub.text import normalize
from people import lexicon
from people.archivist.tokens import CYR, Mention, Tok
from people.names import morph


def own_before(toks: list[Tok], c: int) -> bool:
    """An OWN word ("my", "мой", "我的") before position c, with at most two plain words between."""
    for others, j in enumerate(range(c - 1, max(-1, c - 4), -1)):
        kind = toks[j].kind
        if kind == "OWN":
            return True
        if kind != "OTHER" or others >= 2:
            return False
    return False


def _name_after(toks: list[Tok], c: int, skip: int | None = None) -> int | None:
    j = c + 1
    if j < len(toks) and toks[j].kind == "PUNCT" and toks[j].text in {",", "，", ":", "："}:
        j += 1
    if j == skip:
        j += 1
    if j + 1 < len(toks) and toks[j].kind == "OTHER" and toks[j + 1].kind == "NAME" and _genitive_noun(toks[j].text):
        j += 1  # "начальник отдела Сидоров": the cue's own genitive complement sits between
    return j if j < len(toks) and toks[j].kind == "NAME" else None


def _genitive_noun(word: str) -> bool:
    if not CYR.search(word):
        return False
    best = morph().parse(word)[0]
    return best.tag.POS == "NOUN" and best.tag.case == "gent"


def _pronoun_antecedent(toks: list[Tok], c: int) -> int | None:
    """"…Sarah Connor…; she is my team lead": the name a pronoun right before the cue stands for."""
    for j in range(c - 1, max(-1, c - 6), -1):
        kind = toks[j].kind
        if kind == "PRON":
            return next((n for n in range(j - 1, -1, -1) if toks[n].kind == "NAME"), None)
        if kind not in ("OWN", "COP", "OTHER"):
            return None
    return None


_AFFILIATION_FROM = frozenset({"из", "from"})
_AFFILIATION_OTHER = frozenset({"другого", "соседнего", "другой", "соседней", "чужого", "another", "other",
                                "different", "the", "a"})
_AFFILIATION_UNIT = ("отдел", "департамент", "команд", "подразделени", "team", "department", "division")


def affiliations(toks: list[Tok]) -> None:
    """"Кузнецов из соседнего отдела", "Anna from another team": a colleague from elsewhere (Work_Outer)."""
    for k, tok in enumerate(toks):
        if tok.kind != "NAME" or tok.mention is None or tok.mention.circle:
            continue
        rest = [normalize(t.text) for t in toks[k + 1:k + 5]]
        if not rest or rest[0] not in _AFFILIATION_FROM:
            continue
        j = 1
        while j < len(rest) and rest[j] in _AFFILIATION_OTHER:
            j += 1
        if 1 < j < len(rest) and rest[j].startswith(_AFFILIATION_UNIT):
            tok.mention.circle = "Work_Outer"
            tok.mention.cue = " ".join(rest[: j + 1])


def _name_before(toks: list[Tok], c: int, *, need_own: bool) -> int | None:
    """A NAME before position c linked to it by a copula, comma, dash or pronoun: "Tom is my boss"."""
    others = 0
    seen_own = False
    for j in range(c - 1, max(-1, c - 9), -1):
        kind = toks[j].kind
        if kind == "NAME":
            return j if (seen_own or not need_own) else None
        if kind == "CUE":
            return None
        if kind == "OWN":
            seen_own = True
        elif kind == "OTHER":
            others += 1
            if others > 3:
                return None
        elif kind == "PUNCT" and toks[j].text in {".", "!", "?", "。", "！", "？", ";", "；"}:
            return None
    return None


def tie(toks: list[Tok]) -> list[tuple[Mention, Mention, lexicon.Cue, str]]:
    """Give names their circles from cues; return relations (subject, object, cue, label)."""
    relations: list[tuple[Mention, Mention, lexicon.Cue, str]] = []
    for c, tok in enumerate(toks):
        if tok.kind != "CUE" or tok.cue is None:
            continue
        cue = tok.cue
        own = own_before(toks, c)
        possessor: int | None = None
        if not own:
            j = c - 1
            while j >= 0 and toks[j].kind == "OTHER" and c - j <= 2:
                j -= 1
            if j >= 0 and toks[j].kind == "NAME" and toks[j].possessive:
                possessor = j
            elif c + 2 < len(toks) and toks[c + 1].kind == "OF" and toks[c + 2].kind == "NAME":
                possessor = c + 2
            elif c + 1 < len(toks) and toks[c + 1].kind == "NAME" and toks[c + 1].genitive:
                possessor = c + 1
        if possessor is not None:
            subject = _name_after(toks, c, skip=possessor)
            if subject is None or subject == possessor:
                subject = _name_before(toks, min(c, possessor), need_own=False)
            if subject is not None and subject != possessor:
                a, b = toks[subject].mention, toks[possessor].mention
                if a and b:
                    relations.append((a, b, cue, tok.text))
            continue
        subject = _name_after(toks, c)
        if subject is None:
            subject = _name_before(toks, c, need_own=True)
        if subject is None and own:
            subject = _pronoun_antecedent(toks, c)
        if subject is None and own:
            subject = _nearest_name(toks, c, 4)
        if subject is not None and toks[subject].mention is not None:
            mention = toks[subject].mention
            mention.circle = cue.circle
            mention.cue = tok.text
    return relations


def _nearest_name(toks: list[Tok], c: int, window: int) -> int | None:
    for d in range(1, window + 1):
        for j in (c + d, c - d):
            if 0 <= j < len(toks) and toks[j].kind == "NAME":
                return j
    return None


def aliases(toks: list[Tok]) -> None:
    """`Maria aka Masha`, `Петров, он же Петя`, `张伟也叫小张`: the second name becomes an alias."""
    for k, tok in enumerate(toks):
        if tok.kind != "ALIAS":
            continue
        before = next((j for j in range(k - 1, max(-1, k - 3), -1) if toks[j].kind == "NAME"), None)
        after = next((j for j in range(k + 1, min(len(toks), k + 3)) if toks[j].kind == "NAME"), None)
        if after is None and k + 1 < len(toks) and toks[k + 1].kind == "OTHER" and toks[k + 1].text[:1].isupper():
            toks[k + 1] = Tok("NAME", toks[k + 1].text, mention=Mention(name=toks[k + 1].text))
            after = k + 1
        if before is not None and after is not None:
            main, alias = toks[before].mention, toks[after].mention
            if main and alias:
                main.aliases.append(alias.name)
                alias.name = ""  # folded into the main mention
