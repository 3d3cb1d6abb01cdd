"""Russian morphology for fact values: "живу в Москве" stores "Москва", "работаю учителем" stores
"учитель". pymorphy3 does the inflection (the process's one analyser, memoryhub.morph)."""

from __future__ import annotations

from typing import Any

from memoryhub.morph import analyzer as _analyzer


def _match_case(original: str, word: str) -> str:
    """`word` spelled with the capitalisation of `original`, hyphenated parts one by one."""
    parts, out = original.split("-"), []
    new_parts = word.split("-")
    if len(parts) != len(new_parts):
        return word.capitalize() if original[:1].isupper() else word
    for old, new in zip(parts, new_parts, strict=True):
        if old.isupper() and len(old) > 1:
            out.append(new.upper())
        elif old[:1].isupper():
            out.append(new[:1].upper() + new[1:])
        else:
            out.append(new)
    return "-".join(out)


def _to_nominative(word: str, cases: tuple[str, ...], prefer: str | None = None) -> tuple[str, bool]:
    """(nominative form, True) when `word` can be read in one of `cases`, else (word, False)."""
    if not any(ch.isalpha() for ch in word) or not _is_cyrillic(word):
        return word, False
    parses = [p for p in _analyzer().parse(word) if p.tag.case in cases]
    if not parses:
        return word, False
    if prefer:
        parses.sort(key=lambda p: prefer not in p.tag)
    parse = parses[0]
    grammemes = {"nomn"}
    if parse.tag.number == "plur" and "Pltm" not in parse.tag and "Sgtm" not in parse.tag:
        grammemes.add("plur")
    inflected = parse.inflect(grammemes)
    form = inflected.word if inflected else parse.normal_form
    return _match_case(word, form), True


def _is_cyrillic(word: str) -> bool:
    return any("а" <= ch.lower() <= "я" or ch.lower() == "ё" for ch in word)


def phrase_to_nominative(words: list[str], cases: tuple[str, ...], prefer: str | None = None) -> str:
    """Inflect the leading words of a noun phrase that are in `cases` to the nominative.

    Words after the first one that is not in those cases are dependents ("дизайнером интерьеров":
    "интерьеров" is a genitive attribute) and keep their form. Latin words ("в Google") are kept.
    """
    out: list[str] = []
    inflecting = True
    for word in words:
        if inflecting:
            form, ok = _to_nominative(word, cases, prefer)
            if ok:
                out.append(form)
                continue
            if _is_cyrillic(word) and out:
                inflecting = False
        out.append(word)
    return " ".join(out)


def singular_nominative(word: str) -> str:
    """"собаки"/"собак" → "собака", "кошек" → "кошка" (pets are stored singular)."""
    if not _is_cyrillic(word):
        return word
    parses = [p for p in _analyzer().parse(word) if "NOUN" in p.tag]
    if not parses:
        return word
    return _match_case(word, parses[0].normal_form)


def tags(word: str) -> list[Any]:
    """All readings of `word` (pymorphy3 parses)."""
    return list(_analyzer().parse(word))


def is_given_name(word: str) -> bool:
    """True when a reading of `word` in the nominative is a first name (Аня, Дмитрий)."""
    return any("Name" in p.tag and p.tag.case == "nomn" for p in _analyzer().parse(word))


def lemma(word: str) -> str:
    return str(_analyzer().parse(word)[0].normal_form)
