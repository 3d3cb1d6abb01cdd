"""`manage.py first_names_build [--out PATH]`: write the gazetteer of Latin-script first names that
`people.lexicon` reads (`data/names/first_names_latin.txt`) from Faker's person providers.

Needed only to change the list; it ships with the code. Faker is not a dependency of the service:
`pip install faker` in a scratch environment of the project, run this, and commit the file.

Faker's lists are names people are given, not names only: "Hope", "Hunter", "Georgia" and "Said" are in
them. The archivist reads a capitalised word it does not know as a person when a gazetteer lists it, so a
word the language uses otherwise is left out here: any noun of WordNet (the shipped noun table, which holds
common nouns and places: "hope", "hunter", "georgia"), any form of an irregular verb ("said"), names of
three letters or fewer (abbreviations: "Dom", "Dev", "Isa"), the words `people.lexicon.EN_NON_NAMES` says
are no one, and the few adjectives and adverbs below. The hand-kept common names of `people.lexicon`
(`EN_COMMON_FIRST_NAMES`) are read besides this list, whatever it holds.
"""

from __future__ import annotations

import gzip
import importlib
import importlib.metadata
import unicodedata
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from memoryhub import lexicon as nouns
from memoryhub import verbforms
from people import lexicon

# The English-speaking world and the languages whose names its users mention most: friends, colleagues and
# neighbours from Europe, Africa, Turkey, Indonesia and Japan are named in English chats too ("Went climbing
# with Joaquin", "Got a postcard from Chinedu", "Went hiking with Hiroshi": each missed with the first 13 locales).
LOCALES = ("en_US", "en_GB", "en_IE", "en_NZ", "en_IN", "en_PK", "en_KE", "en_NG", "es_ES", "es_MX", "es_AR",
           "fr_FR", "fr_CA", "de_DE", "it_IT", "pt_BR", "pt_PT", "nl_NL", "sv_SE", "no_NO", "da_DK", "pl_PL",
           "tr_TR", "id_ID", "ha_NG", "yo_NG", "ig_NG", "tw_GH", "ja_JP")
# ja_JP keeps its names in kana and kanji, and in Latin letters under `first_romanized_names`.
_ATTRIBUTES = ("first_names", "first_names_male", "first_names_female", "first_names_nonbinary",
               "first_romanized_names")
# Words of the providers' lists that English uses otherwise and WordNet's nouns miss: adjectives, adverbs,
# plurals and parts of place names ("Los Angeles", "Novi Sad"), and "nana", which is kin (`people.lexicon`).
NOT_NAMES = frozenset({"else", "urban", "lucky", "harsh", "sandy", "misty", "edit", "meta", "pero", "nath",
                       "conn", "kata", "tama", "gaby", "sunny", "bright", "noble", "royal", "young", "rich",
                       "among", "lone", "mans", "mats", "ties", "angeles", "verde", "vida", "novi", "mora", "elgin",
                       "indy", "lowe", "mala", "nana"})


def wordnet_nouns(path: Path = nouns.TABLE) -> set[str]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return {line.split("\t", 1)[0] for line in fh}


def verb_forms(path: Path = verbforms.TABLE) -> set[str]:
    forms: set[str] = set()
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            forms.update(w for w in line.replace("\t", " ").split() if w.isalpha())
    return forms


def _folded(name: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", name) if not unicodedata.combining(c))


def latin_forms(name: str) -> set[str]:
    """A name in Latin letters, lower case, as written and without its accents ("joaquín", "joaquin": a chat
    often leaves them out); nothing for a name in another script or with other marks than letters."""
    folded = _folded(name)
    if not (folded.isascii() and folded.isalpha()):
        return set()
    return {unicodedata.normalize("NFC", name).lower(), folded.lower()}


def faker_first_names(locales: tuple[str, ...] = LOCALES) -> set[str]:
    try:
        importlib.import_module("faker")
    except ImportError as exc:
        raise CommandError("Faker is not installed: pip install faker (only to rebuild the list)") from exc
    names: set[str] = set()
    for locale in locales:
        provider = importlib.import_module(f"faker.providers.person.{locale}").Provider
        for attribute in _ATTRIBUTES:
            for name in getattr(provider, attribute, ()):
                names |= latin_forms(name)
    return names


def first_names(candidates: set[str]) -> list[str]:
    excluded = wordnet_nouns() | verb_forms() | NOT_NAMES | lexicon.EN_NON_NAMES
    return sorted(n for n in candidates if len(n) > 3 and n not in excluded and _folded(n) not in excluded)



class Command(BaseCommand):
    help = "Build the gazetteer of Latin-script first names people.lexicon reads, from Faker's person providers."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--out", type=Path, default=lexicon.FIRST_NAMES_TABLE, help="default: the shipped list")

    def handle(self, *args: Any, **options: Any) -> None:
        names = first_names(faker_first_names())
        out: Path = options["out"]
        out.parent.mkdir(parents=True, exist_ok=True)
        version = importlib.metadata.version("faker")
        out.write_text(f"# Latin-script first names: manage.py first_names_build, Faker {version}"
                       f" ({', '.join(LOCALES)}). See NOTICE.md.\n" + "\n".join(names) + "\n", encoding="utf-8")
        self.stdout.write(f"{len(names)} first names; wrote {out} ({out.stat().st_size} bytes)")
