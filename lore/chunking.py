"""Entries → chunk pieces (seed 003 §8.2.1 "chunk": by heading / rule / entity).

An entry up to `LORE_CHUNK_MAX_TOKENS` stays one chunk, so a spell or a condition is found and
shown whole; a longer one (a rules chapter, a class's table of levels) is split at its headings
and then its paragraphs, each piece labelled with the entry's heading path plus its own.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings

from lore.normalize import Entry
from memoryhub.text import count_tokens
from rag.chunking import split_document


@dataclass(frozen=True)
class Piece:
    entry: Entry
    part: int
    heading_path: tuple[str, ...]
    text: str  # as stored and shown: heading line, then the body


def _headed(path: tuple[str, ...], body: str) -> str:
    return f"{' / '.join(path)}\n{body}"


def entry_pieces(entry: Entry) -> list[Piece]:
    max_tokens = settings.LORE_CHUNK_MAX_TOKENS
    if count_tokens(entry.text) <= max_tokens:
        return [Piece(entry, 0, entry.heading_path, _headed(entry.heading_path, entry.text))]
    parts = split_document(entry.text, target_tokens=settings.LORE_CHUNK_TARGET_TOKENS, max_tokens=max_tokens)
    pieces = []
    for n, part in enumerate(parts):
        path = (*entry.heading_path, *(h for h in part.heading_path if h not in entry.heading_path))
        pieces.append(Piece(entry, n, path, _headed(path, part.text)))
    return pieces
