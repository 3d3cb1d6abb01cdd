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


def split_document(text: str, *, target_tokens: int = 300, max_tokens: int = 500) -> list[DocumentPiece]:
    """Markdown → pieces of about `target_tokens`, never crossing a heading, each labelled with
    its heading path so a piece read alone still says what it is about.

    Paragraphs are packed together up to the target; a paragraph longer than `max_tokens` is
    split at sentence ends.
    """
    sections: list[tuple[tuple[str, ...], list[str]]] = []
    path: list[tuple[int, str]] = []
    paragraphs: list[str] = []
    buffer: list[str] = []

    def flush_paragraph() -> None:
        if buffer:
            paragraphs.append("\n".join(buffer).strip())
            buffer.clear()

    def flush_section() -> None:
        flush_paragraph()
        if any(paragraphs):
            sections.append((tuple(title for _, title in path), [p for p in paragraphs if p]))
        paragraphs.clear()

    for line in text.splitlines():
        match = HEADING.match(line.strip())
        if match:
            flush_section()
            level = len(match.group(1))
            path[:] = [(lvl, title) for lvl, title in path if lvl < level]
            path.append((level, match.group(2).strip()))
        elif not line.strip():
            flush_paragraph()
        else:
            buffer.append(line.rstrip())
    flush_section()

    pieces: list[DocumentPiece] = []
    for heading_path, paras in sections:
        current: list[str] = []
        current_tokens = 0
        for para in _split_long(paras, max_tokens):
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
