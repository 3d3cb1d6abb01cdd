"""Sensitive numbers: finding them in free text and masking them.

Bank cards, IBANs, Chinese resident IDs, Russian passports, SNILS and INN, US Social Security
numbers and UK National Insurance numbers. Each detector checks the number's own structure (Luhn,
ISO 7064, mod-97, the SNILS and INN check digits, the SSN area/group/serial rules, the NINO prefix
rules) rather than its length alone, so an order number, a phone number or a date is left alone.
Where a format carries no check (a Russian passport, a bare nine-digit SSN, a ten-digit INN) the
number counts only when a word naming it stands just before it, or in `context` (a fact's key).

Masking replaces a number with a typed placeholder: `[card •••• 4242]` and `[iban •••• 3000]`
keep the last four characters (what a bank shows, enough to tell two cards apart);
identity numbers keep nothing (`[us_ssn]`, `[ru_passport]`, ...), since their tail is itself used
to verify a person. Placeholders are never found again, so masking twice changes nothing.

The checksums come from python-stdnum where it has the number (Luhn, IBAN with each country's
length and layout, Chinese RIC, INN, SSN); SNILS, the passport series and NINO are checked here.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.utils import timezone
from stdnum import iban as _iban
from stdnum import luhn as _luhn
from stdnum.cn import ric as _ric
from stdnum.ru import inn as _inn
from stdnum.us import ssn as _ssn

from memoryhub import metrics

CARD = "card_number"
CN_RESIDENT_ID = "cn_resident_id"
RU_PASSPORT = "ru_passport"
RU_SNILS = "ru_snils"
RU_INN = "ru_inn"
IBAN = "iban"
US_SSN = "us_ssn"
UK_NINO = "uk_nino"
KINDS = (CARD, CN_RESIDENT_ID, RU_PASSPORT, RU_SNILS, RU_INN, IBAN, US_SSN, UK_NINO)

_LABELS = {
    CARD: "a bank card number",
    CN_RESIDENT_ID: "a Chinese resident ID number",
    RU_PASSPORT: "a Russian passport number",
    RU_SNILS: "a Russian SNILS number",
    RU_INN: "a Russian INN",
    IBAN: "an IBAN",
    US_SSN: "a US Social Security number",
    UK_NINO: "a UK National Insurance number",
}
# What a placeholder calls the kind; cards and IBANs keep their last four characters.
_TAGS = {kind: kind for kind in KINDS} | {CARD: "card"}
_KEEP_TAIL = {CARD, IBAN}

@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int
    text: str = ""

    @property
    def label(self) -> str:
        return _LABELS[self.kind]

    @property
    def placeholder(self) -> str:
        tag = _TAGS[self.kind]
        if self.kind in _KEEP_TAIL:
            tail = re.sub(r"[^0-9A-Za-z]", "", self.text)[-4:].upper()
            return f"[{tag} •••• {tail}]"
        return f"[{tag}]"


# --- checks stdnum does not have -------------------------------------------------------------------
def luhn_valid(digits: str) -> bool:
    return _luhn.is_valid(digits)


def iban_valid(text: str) -> bool:
    return _iban.is_valid(text)


def cn_resident_id_valid(number: str) -> bool:
    """GB 11643 (region, birth date, sequence, ISO 7064 MOD 11-2); stdnum also rejects future births."""
    return _ric.is_valid(number.upper())


def snils_valid(digits: str) -> bool:
    """SNILS control number: Σ digit × (9 − position) over the first nine digits, reduced mod 101
    (100 and 101 give 00). Numbers up to 001-001-998 were issued without a control number."""
    if len(digits) != 11 or not digits.isdigit() or int(digits[:9]) <= 1001998:
        return False
    total = sum(int(d) * (9 - i) for i, d in enumerate(digits[:9]))
    if total > 101:
        total %= 101
    check = 0 if total in (100, 101) else total
    return check == int(digits[9:])


# OKATO region codes used as the first two digits of a Russian passport series.
_OKATO_REGIONS = frozenset({
    1, 3, 4, 5, 7, 8, 10, 11, 12, 14, 15, 17, 18, 19, 20, 22, 24, 25, 26, 27, 28, 29, 30, 32, 33, 34, 35, 36, 37,
    38, 40, 41, 42, 44, 45, 46, 47, 49, 50, 52, 53, 54, 56, 57, 58, 60, 61, 63, 64, 65, 66, 67, 68, 69, 70, 71, 73,
    75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99,
})


def ru_passport_series_plausible(series: str) -> bool:
    """Series "RRYY": an OKATO region code and the last two digits of the year of issue (from 1997)."""
    region, year = int(series[:2]), int(series[2:])
    this_year = timezone.now().year % 100
    return region in _OKATO_REGIONS and (year >= 97 or year <= this_year + 1)


# HMRC: first letter not D F I Q U V, second not D F I O Q U V, and these pairs never issued.
_NINO = re.compile(
    r"(?<![A-Za-z0-9])([A-CEGHJ-PR-TW-Z][A-CEGHJ-NPR-TW-Z]) ?(\d{2}) ?(\d{2}) ?(\d{2}) ?([A-D])(?![A-Za-z0-9])",
    re.IGNORECASE,
)
_NINO_BAD_PREFIXES = frozenset({"BG", "GB", "KN", "NK", "NT", "TN", "ZZ"})


def ssn_valid(digits: str) -> bool:
    """Area not 000, 666 or 900-999, group not 00, serial not 0000, and not one of the numbers
    published in advertising (stdnum's list)."""
    return _ssn.is_valid(digits)


def inn_valid(digits: str) -> bool:
    return _inn.is_valid(digits)


# --- scanning ------------------------------------------------------------------------------------
# Digit runs with the separators people type inside card numbers ("4111 1111-1111 1111").
_ANY_DIGIT = re.compile(r"\d")
_DIGIT_RUN = re.compile(r"(?<![\dA-Za-z])\d(?:[ \-]?\d){9,22}(?![\dA-Za-z])")
_CN_ID = re.compile(r"(?<![\dA-Za-z])[1-9]\d{5}(?:19|20)\d{9}[\dXx](?![\dA-Za-z])")
_PASSPORT = re.compile(r"(?<![\d-])(\d{2})( ?)(\d{2})([ №]{0,3})(\d{6})(?![\d-])")
_SNILS_FORMATTED = re.compile(r"(?<![\d-])\d{3}-\d{3}-\d{3}[ -]\d{2}(?![\d-])")
_SSN_DASHED = re.compile(r"(?<![\d-])\d{3}-\d{2}-\d{4}(?![\d-])")
_SSN_BARE = re.compile(r"(?<![\d-])\d{3}( ?)\d{2}\1\d{4}(?![\d-])")
_INN = re.compile(r"(?<!\d)(?:\d{12}|\d{10})(?!\d)")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")
_PASSPORT_WORDS = re.compile(r"passport|паспорт|серия|series|护照", re.IGNORECASE)
_SNILS_WORDS = re.compile(r"snils|снилс|страхов", re.IGNORECASE)
_SSN_WORDS = re.compile(r"(?<![a-z])ssn(?![a-z])|social[ _]security|soc\.? ?sec", re.IGNORECASE)
_INN_WORDS = re.compile(r"(?<![a-z])inn(?![a-z])|инн|taxpayer|налогоплательщик", re.IGNORECASE)
# How far before a number a naming word may stand ("passport: series 4506, number 123456").
_WORD_WINDOW = 40


def find_sensitive(text: str, *, context: str = "") -> list[Finding]:
    """Sensitive numbers in `text`, in text order. `context` (a fact's key, say) counts as a word
    standing before every number."""
    # Every pattern below needs a digit, and most chat turns have none: this check makes a scan of
    # them ~100x cheaper (~1 µs instead of ~100 µs a turn), which matters since intake, chunking
    # and the context each scan what they take.
    if not _ANY_DIGIT.search(text):
        return []
    found: list[Finding] = []

    def add(kind: str, start: int, end: int) -> None:
        if not any(f.start < end and start < f.end for f in found):
            found.append(Finding(kind, start, end, text[start:end]))

    def named(words: re.Pattern[str], start: int) -> bool:
        return bool(words.search(context) or words.search(text, max(0, start - _WORD_WINDOW), start))

    for match in _IBAN.finditer(text):
        # The pattern also swallows words that follow a spaced IBAN ("DE89 3704 ... 00 by"): try
        # the match without its last space-separated groups until it validates.
        candidate = match.group()
        while len(candidate) >= 15:
            if iban_valid(candidate):
                add(IBAN, match.start(), match.start() + len(candidate))
                break
            if " " not in candidate:
                break
            candidate = candidate.rsplit(" ", 1)[0]
    for match in _CN_ID.finditer(text):
        if cn_resident_id_valid(match.group()):
            add(CN_RESIDENT_ID, match.start(), match.end())
    for match in _NINO.finditer(text):
        if match.group(1).upper() not in _NINO_BAD_PREFIXES:
            add(UK_NINO, match.start(), match.end())
    for match in _SNILS_FORMATTED.finditer(text):
        if snils_valid(re.sub(r"\D", "", match.group())):
            add(RU_SNILS, match.start(), match.end())
    for match in _SSN_DASHED.finditer(text):
        if ssn_valid(match.group()):
            add(US_SSN, match.start(), match.end())
    for match in _SSN_BARE.finditer(text):
        # Nine digits without dashes are as likely a zip+4 or an order number: only when named.
        if named(_SSN_WORDS, match.start()) and ssn_valid(re.sub(r"\D", "", match.group())):
            add(US_SSN, match.start(), match.end())
    for match in _INN.finditer(text):
        digits = match.group()
        # Twelve digits (a person's INN) carry two check digits, a 1-in-121 chance for a random
        # run; ten digits (also a Russian phone number without +7) carry one, so need the word.
        if inn_valid(digits) and (len(digits) == 12 or named(_INN_WORDS, match.start())):
            add(RU_INN, match.start(), match.end())
    for match in _PASSPORT.finditer(text):
        series = match.group(1) + match.group(3)
        # "45 06 123456" and "4506 123456" are how passports are written; a bare run of ten digits
        # is as likely a phone number, so it needs the word "passport" nearby.
        spaced = bool(match.group(4))
        if (spaced or named(_PASSPORT_WORDS, match.start())) and ru_passport_series_plausible(series):
            add(RU_PASSPORT, match.start(), match.end())
    for match in _DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        # Card numbers start with 2-6 (Mir, Amex/JCB, Visa, Mastercard, Discover/UnionPay): that
        # halves the order numbers a bare Luhn check would take for cards.
        if 13 <= len(digits) <= 19 and digits[0] in "23456" and luhn_valid(digits):
            add(CARD, match.start(), match.end())
        elif len(digits) == 11 and snils_valid(digits) and named(_SNILS_WORDS, match.start()):
            add(RU_SNILS, match.start(), match.end())
    return sorted(found, key=lambda f: f.start)


_PLACEHOLDER = re.compile(
    r"\[(?:(" + "|".join(_TAGS[k] for k in sorted(_KEEP_TAIL)) + r") •••• [0-9A-Z]{4}"
    r"|(" + "|".join(_TAGS[k] for k in KINDS if k not in _KEEP_TAIL) + r"))\]"
)
_KIND_BY_TAG = {tag: kind for kind, tag in _TAGS.items()}


def find_masked(text: str) -> list[Finding]:
    """Placeholders a masking left in `text`: where a sensitive number stood."""
    return [Finding(_KIND_BY_TAG[m.group(1) or m.group(2)], m.start(), m.end(), m.group())
            for m in _PLACEHOLDER.finditer(text)]


def mask_text(text: str, *, where: str = "") -> tuple[str, Counter[str]]:
    """`text` with every sensitive number replaced by its placeholder, and the count per kind.
    With `where`, the counts go to the `memoryhub_sensitive_masked_total` metric too."""
    findings = find_sensitive(text) if text else []
    counts: Counter[str] = Counter(f.kind for f in findings)
    for finding in reversed(findings):
        text = text[:finding.start] + finding.placeholder + text[finding.end:]
    if where:
        for kind, n in counts.items():
            metrics.SENSITIVE_MASKED.labels(kind, where).inc(n)
    return text, counts


def mask_bounded(text: str, *, max_length: int, where: str = "") -> tuple[str, Counter[str]]:
    """`mask_text` for a field with a length limit (a tag, a title, a speaker). A placeholder can
    be longer than the number it replaces (`[card •••• 1111]` for 13 digits), so the result is
    clipped to `max_length`. If the cut falls inside a placeholder, the text stops before that
    placeholder, because a half placeholder would no longer be recognised as one."""
    masked, counts = mask_text(text, where=where)
    if len(masked) <= max_length:
        return masked, counts
    cut = max_length
    for placeholder in find_masked(masked):
        if placeholder.start < cut < placeholder.end:
            cut = placeholder.start
            break
    return masked[:cut].rstrip(), counts


def mask_tags(tags: Sequence[str], *, max_length: int = 64, where: str = "") -> tuple[list[str], Counter[str]]:
    """Each tag masked within `max_length` (`mask_bounded`), in order. Two tags that mask alike
    (two cards ending in the same four digits) become one."""
    counts: Counter[str] = Counter()
    out: list[str] = []
    for tag in tags:
        masked, found = mask_bounded(tag, max_length=max_length, where=where)
        counts.update(found)
        if masked not in out:
            out.append(masked)
    return out, counts


def redact(text: str, *, where: str) -> str:
    """`text` masked, for what is derived from raw text (chunks, context, bios, prompts): applied
    whatever `SENSITIVE_POLICY` is, since a message kept raw must still not leak from there."""
    return mask_text(text, where=where)[0]


def mask_json(value: Any, *, where: str = "") -> tuple[Any, Counter[str]]:
    """A JSON value (a message's meta) with every string masked, keys left alone. An integer whose
    digits make a sensitive number becomes its placeholder (a card sent as a number)."""
    counts: Counter[str] = Counter()

    def walk(node: Any) -> Any:
        if isinstance(node, str):
            masked, found = mask_text(node)
            counts.update(found)
            return masked
        if isinstance(node, int) and not isinstance(node, bool) and abs(node) >= 10**8:
            masked, found = mask_text(str(node))
            if found:
                counts.update(found)
                return masked
            return node
        if isinstance(node, dict):
            return {k: walk(v) for k, v in node.items()}
        if isinstance(node, list):
            return [walk(v) for v in node]
        return node

    result = walk(value)
    if where:
        for kind, n in counts.items():
            metrics.SENSITIVE_MASKED.labels(kind, where).inc(n)
    return result, counts


def masking_at_intake() -> bool:
    """`SENSITIVE_POLICY=mask` (the default): raw inputs are stored masked. `keep`: stored as sent,
    and masked wherever text is derived from them."""
    return settings.SENSITIVE_POLICY == "mask"
