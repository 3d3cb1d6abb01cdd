"""Raw sources → entries with stable ids (seed 003 §8.2.1 "normalize").

JSON: an array of entries; which fields hold the id, the title and the text is set per source, with
a preset for the 5e-database layout (`index`, `name`, `desc` and the rest of an entry's fields
rendered as labelled lines). Markdown: every heading at or above `entry_level` starts an entry
whose id is its heading path; deeper headings stay inside the entry and guide its chunking.
Errors name the file and the JSON path or the line.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections import Counter
from dataclasses import asdict, dataclass, field, replace
from pathlib import PurePath
from typing import Any

from markdown_it import MarkdownIt

from memoryhub.exceptions import ApplicationError
from memoryhub.text import NotUTF8, decode_utf8, detect_language

PRESET_5E = "5e-database"
PRESETS = (PRESET_5E, "generic")
# 5e-database bookkeeping fields: links and pictures, not rules text.
_5E_SKIPPED = {"index", "name", "url", "image", "desc"}


class SourceError(ApplicationError):
    """A source that cannot be read: the message names the file and the JSON path or line."""

    def __init__(self, message: str, *, filename: str, where: str = "") -> None:
        location = f"{filename}{' ' + where if where else ''}"
        super().__init__(f"{location}: {message}", code="invalid_source", field="files",
                         extra={"file": filename, "location": where})


@dataclass(frozen=True)
class SourceOptions:
    preset: str = PRESET_5E
    id_field: str = "index"
    title_field: str = "name"
    # Fields whose values make the text; empty means every field but the id, title and links.
    text_fields: tuple[str, ...] = ()
    # Ids are "<prefix>/<id>"; by default the file name without its extension ("Spells/fireball").
    id_prefix: str = ""
    # Markdown: headings of this level and above start an entry.
    entry_level: int = 2
    # A file uploaded without a language to a world of several: each entry is labelled with the one of
    # these its text is written in (a Markdown file of English, Russian and Chinese sections was all
    # labelled with the world's first, and a language filter then missed two thirds of it). Kept with
    # the source, so a rebuild labels its entries as the upload did.
    detect_languages: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["text_fields"] = list(self.text_fields)
        data["detect_languages"] = list(self.detect_languages)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> SourceOptions:
        known = {k: v for k, v in data.items() if k in cls.__dataclass_fields__}
        for key in ("text_fields", "detect_languages"):
            if key in known:
                known[key] = tuple(known[key])
        return cls(**known)


@dataclass(frozen=True)
class Entry:
    entry_id: str
    title: str
    text: str  # Markdown: may hold sub-headings, which chunking follows
    language: str
    heading_path: tuple[str, ...]
    source_file: str
    category: str
    meta: dict[str, Any] = field(default_factory=dict)


def slugify(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).casefold()
    text = re.sub(r"[^\w]+", "-", text).strip("-")
    return text or "untitled"


def detect_format(filename: str) -> str:
    suffix = PurePath(filename).suffix.lower()
    if suffix == ".json":
        return "json"
    if suffix in (".md", ".markdown"):
        return "markdown"
    raise SourceError("unsupported file type (use .json or .md)", filename=filename)


def decode(content: bytes, filename: str) -> str:
    try:
        return decode_utf8(content)
    except NotUTF8 as exc:
        raise SourceError("not valid UTF-8", filename=filename, where=f"line {exc.line}") from exc


def normalize(*, content: bytes, filename: str, language: str, options: SourceOptions,
              fmt: str | None = None) -> list[Entry]:
    fmt = fmt or detect_format(filename)
    text = decode(content, filename)
    entries = _json_entries(text, filename, language, options) if fmt == "json" else _markdown_entries(
        text, filename, language, options)
    if options.detect_languages:
        entries = [_labelled(entry, options.detect_languages) for entry in entries]
    duplicates = sorted(eid for eid, n in Counter(e.entry_id for e in entries).items() if n > 1)
    if duplicates:
        raise ApplicationError(
            f"{filename}: duplicate entry ids: {', '.join(duplicates[:50])}", code="duplicate_entries",
            field="files", extra={"file": filename, "duplicates": duplicates},
        )
    return entries


def _labelled(entry: Entry, languages: tuple[str, ...]) -> Entry:
    """The entry in the language its title and text are written in, when the world has it (the
    script decides: Han, Cyrillic, else Latin), else as labelled."""
    found = detect_language(f"{entry.title}\n{entry.text}")
    return replace(entry, language=found) if found in languages and found != entry.language else entry


# --- JSON ------------------------------------------------------------------------------------
def _label(key: str) -> str:
    return key.replace("_", " ").capitalize()


def _render(value: Any, depth: int = 0) -> str:
    """A 5e-database value as readable text: references by their name, lists joined, nested
    objects as `label: value` lines, named sub-entries (a monster's actions) as paragraphs."""
    if value is None or value == [] or value == {}:
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (int, float, str)):
        return str(value)
    if isinstance(value, list):
        if all(isinstance(v, dict) and "name" in v and "desc" in v for v in value):
            return "\n\n".join(f"**{v['name']}.** {_render(v['desc'], depth + 1)}" for v in value)
        parts = [_render(v, depth + 1) for v in value]
        return ("\n" if any("\n" in p or len(p) > 80 for p in parts) else ", ").join(p for p in parts if p)
    if isinstance(value, dict):
        if "name" in value and ("url" in value or "index" in value):
            return str(value["name"])  # a reference to another entry
        lines = [f"{_label(k)}: {_render(v, depth + 1)}" for k, v in value.items() if k not in ("url", "index")]
        return "; ".join(line for line in lines if not line.endswith(": "))
    return str(value)


def _json_type(value: object) -> str:
    """The JSON name of a parsed value's type ("an array", "a boolean"), for messages to a source's author."""
    names = {bool: "a boolean", float: "a number", list: "an array", dict: "an object"}
    return next((name for kind, name in names.items() if isinstance(value, kind)), type(value).__name__)


def _json_entries(text: str, filename: str, language: str, options: SourceOptions) -> list[Entry]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SourceError(exc.msg, filename=filename, where=f"line {exc.lineno} column {exc.colno}") from exc
    if not isinstance(data, list):
        raise SourceError("expected an array of entries", filename=filename, where="$")
    if not data:
        # Else a version of no chunks, or a source of nothing that every later version carries.
        raise SourceError("the array holds no entries", filename=filename, where="$")
    category = options.id_prefix or PurePath(filename).stem
    entries = []
    for i, item in enumerate(data):
        where = f"$[{i}]"
        if not isinstance(item, dict):
            raise SourceError("expected an object", filename=filename, where=where)
        raw_id = item.get(options.id_field)
        if raw_id is not None and (not isinstance(raw_id, (str, int)) or isinstance(raw_id, bool)):
            # Said as it is: "missing" sent an author whose ids were numbers in an array or objects looking
            # for a field that was there.
            raise SourceError(f"id field {options.id_field!r} must be a string or an integer, not "
                              f"{_json_type(raw_id)}", filename=filename, where=f"{where}.{options.id_field}")
        if not isinstance(raw_id, (str, int)) or str(raw_id).strip() == "":
            keys = ", ".join(sorted(map(str, item))[:8])
            raise SourceError(f"missing or empty id field {options.id_field!r} (the entries' keys: {keys}; name "
                              "yours with `id_field`, `title_field` and `text_fields`)", filename=filename,
                              where=f"{where}.{options.id_field}")
        title = item.get(options.title_field, raw_id)
        if not isinstance(title, (str, int)):
            raise SourceError(f"title field {options.title_field!r} must be a string", filename=filename,
                              where=f"{where}.{options.title_field}")
        text_parts = _entry_text(item, options, filename, where)
        body = "\n\n".join(p for p in text_parts if p.strip())
        if not body.strip():
            fields = f" in its text_fields ({', '.join(options.text_fields)})" if options.text_fields else ""
            raise SourceError(f"entry has no text{fields}", filename=filename, where=where)
        entries.append(Entry(
            entry_id=f"{category}/{raw_id}", title=str(title), text=body, language=language,
            heading_path=(category, str(title)), source_file=filename, category=category,
        ))
    return entries


def _entry_text(item: dict[str, Any], options: SourceOptions, filename: str, where: str) -> list[str]:
    if options.text_fields:
        parts = []
        for name in options.text_fields:
            value = item.get(name)
            if value is not None and not isinstance(value, (str, list)):
                raise SourceError(f"text field {name!r} must be a string or an array of strings",
                                  filename=filename, where=f"{where}.{name}")
            parts.append(_render(value))
        return parts
    # Preset / generic: the description first, then every other field as a labelled line, so
    # numbers a game master asks about (a spell's range, a monster's armour class) are searchable.
    skipped = _5E_SKIPPED | {options.id_field, options.title_field}
    parts = [_render(item.get("desc"))]
    details = []
    for key, value in item.items():
        if key in skipped:
            continue
        rendered = _render(value)
        if not rendered:
            continue
        if "\n" in rendered:
            details.append(f"### {_label(key)}\n\n{rendered}")
        else:
            parts.append(f"{_label(key)}: {rendered}")
    return parts + details


# --- Markdown --------------------------------------------------------------------------------
_md = MarkdownIt("commonmark")


def _markdown_entries(text: str, filename: str, language: str, options: SourceOptions) -> list[Entry]:
    """Sections by heading, found by markdown-it (so a `#` inside a code block is no heading);
    the entry's text is the source's own lines, so its Markdown is kept as written."""
    lines = text.splitlines()
    tokens = _md.parse(text)
    headings: list[tuple[int, int, str]] = []  # (level, first line index, title)
    for i, token in enumerate(tokens):
        if token.type == "heading_open" and token.map:
            title = tokens[i + 1].content.strip()
            if not title:
                raise SourceError("empty heading", filename=filename, where=f"line {token.map[0] + 1}")
            headings.append((int(token.tag[1]), token.map[0], title))
    category = options.id_prefix or PurePath(filename).stem
    starts = [(level, line, title) for level, line, title in headings if level <= options.entry_level]
    entries: list[Entry] = []
    if not starts or starts[0][1] > 0:
        first = starts[0][1] if starts else len(lines)
        preamble = "\n".join(lines[:first]).strip()
        if preamble:
            entries.append(Entry(entry_id=category, title=category, text=preamble, language=language,
                                 heading_path=(category,), source_file=filename, category=category,
                                 meta={"line": 1}))
    path: list[tuple[int, str]] = []
    for n, (level, line, title) in enumerate(starts):
        end = starts[n + 1][1] if n + 1 < len(starts) else len(lines)
        path[:] = [(lvl, t) for lvl, t in path if lvl < level]
        path.append((level, title))
        body = "\n".join(lines[line + 1:end]).strip()
        if not body:
            continue  # a heading that only groups the entries below it
        titles = tuple(t for _, t in path)
        entries.append(Entry(
            entry_id="/".join([category, *(slugify(t) for t in titles)]), title=title, text=body,
            language=language, heading_path=(category, *titles), source_file=filename, category=category,
            meta={"line": line + 1},
        ))
    if not entries:
        raise SourceError("no text found", filename=filename, where="line 1")
    return entries
