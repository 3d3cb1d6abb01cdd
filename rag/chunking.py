"""Cutting raw inputs into chunks: dialog turns with context, documents by headings/paragraphs."""

from __future__ import annotations

import re
from dataclasses import dataclass

from memoryhub.text import count_tokens

HEADING = re.compile(r"^(#{1,6})\s+(.*)$")


@dataclass(frozen=True)
class DocumentPiece:
    text: str
    heading_path: tuple[str, ...]


def split_document(
    text: str, *, target_tokens: int = 300, max_tokens: int = 500, max_chars: int = 4000,
    bare_headings: bool = False,
) -> list[DocumentPiece]:
    """Markdown → pieces of about `target_tokens`, never crossing a heading, each labelled with
    its heading path so a piece read alone still says what it is about.

    Paragraphs are packed together up to the target; a paragraph longer than `max_tokens` is
    split at sentence ends, and anything still longer than `max_chars` (a sentence without an
    end, a run with no whitespace) is cut by `split_bounded`. Heading titles are clipped to a
    quarter of `max_chars`, since every piece of their section repeats them.

    `bare_headings`: a heading with neither text nor subheadings of its own (a line of an outline,
    a document of headings only) becomes a piece with empty text and its heading path, so its
    words are not lost; without it such a heading yields nothing.
    """
    sections: list[tuple[tuple[str, ...], list[str]]] = []
    path: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    buffer: list[str] = []

    def flush_paragraph() -> None:
        if buffer:
            paragraphs.append("\n".join(buffer).strip())
            buffer.clear()

    def flush_section(next_level: int) -> None:
        """Close the section under the current heading; `next_level` is the next heading's (0 at
        the end), which says whether a section without text was a parent or a bare heading."""
        flush_paragraph()
        if any(paragraphs):
            sections.append((tuple(title for _, title in path), [p for p in paragraphs if p]))
        elif bare_headings and path and next_level <= path[-1][0]:
            sections.append((tuple(title for _, title in path), []))
        paragraphs.clear()

    for line in text.splitlines():
        match = HEADING.match(line.strip())
        if match:
            level = len(match.group(1))
            flush_section(level)
            path[:] = [(lvl, title) for lvl, title in path if lvl < level]
            path.append((level, match.group(2).strip()[:max_chars // 4]))
        elif not line.strip():
            flush_paragraph()
        else:
            buffer.append(line.rstrip())
    flush_section(0)

    pieces: list[DocumentPiece] = []
    for heading_path, paras in sections:
        if not paras:
            pieces.append(DocumentPiece("", heading_path))
            continue
        current: list[str] = []
        current_tokens = 0
        for para in (bounded for long in _split_long(paras, max_tokens)
                     for bounded in split_bounded(long, max_chars)):
            tokens = count_tokens(para)
            if current and current_tokens + tokens > target_tokens:
                pieces.append(DocumentPiece("\n\n".join(current), heading_path))
                current, current_tokens = [], 0
            current.append(para)
            current_tokens += tokens
        if current:
            pieces.append(DocumentPiece("\n\n".join(current), heading_path))
    return pieces


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


def _split_long(paragraphs: list[str], max_tokens: int) -> list[str]:
    out: list[str] = []
    for para in paragraphs:
        if count_tokens(para) <= max_tokens:
            out.append(para)
            continue
        current = ""
        for sentence in filter(None, _SENTENCE_END.split(para)):
            candidate = f"{current} {sentence}".strip() if current else sentence
            if current and count_tokens(candidate) > max_tokens:
                out.append(current)
                current = sentence
            else:
                current = candidate
        if current:
            out.append(current)
    return out


# Where a cut is least harmful, best first: a paragraph break, a line break, a sentence end, a
# space. Each pattern's match end is the cut point.
_CUT_POINTS = (re.compile(r"\n\s*\n"), re.compile(r"\n"), re.compile(r"[.!?。！？;；]\s*"), re.compile(r"\s+"))


def split_bounded(text: str, max_chars: int) -> list[str]:
    """`text` cut into pieces of at most `max_chars` characters, none empty.

    Every cut is at the best boundary of the later half of the window (so no piece is shorter
    than half the limit merely to reach a boundary), and a hard cut at the limit when the window
    has none: a megabyte of one "word" still becomes bounded pieces, never one huge chunk that
    an embedding endpoint would refuse and BM25 would treat as a single term."""
    if max_chars < 1:
        raise ValueError("max_chars must be positive")
    pieces: list[str] = []
    start, end = 0, len(text)
    while start < end:
        if text[start].isspace():
            start += 1
            continue
        window = text[start:start + max_chars]
        cut = len(window)
        if start + max_chars < end:
            for pattern in _CUT_POINTS:
                ends = [m.end() for m in pattern.finditer(window, max_chars // 2)]
                if ends:
                    cut = ends[-1]
                    break
        piece = window[:cut].strip()
        if piece:
            pieces.append(piece)
        start += cut
    return pieces
