"""Sensitive numbers that are never stored as facts: bank cards, Chinese resident IDs, Russian
passports and SNILS, IBANs.

Each detector checks the number's own structure (Luhn, ISO 7064 checksums, mod-97, the SNILS check
number) rather than its length alone, so a 16-digit order number or an 11-digit phone number is
not refused. The Russian internal passport is the exception: it carries no check digit, so its
series is checked instead (a real OKATO region code and a plausible year of issue), and a bare
10-digit run counts only when the text or key speaks of a passport.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date

from django.utils import timezone

CARD = "card_number"
CN_RESIDENT_ID = "cn_resident_id"
RU_PASSPORT = "ru_passport"
RU_SNILS = "ru_snils"
IBAN = "iban"
KINDS = (CARD, CN_RESIDENT_ID, RU_PASSPORT, RU_SNILS, IBAN)


@dataclass(frozen=True)
class Finding:
    kind: str
    start: int
    end: int

    @property
    def label(self) -> str:
        return _LABELS[self.kind]


_LABELS = {
    CARD: "a bank card number",
    CN_RESIDENT_ID: "a Chinese resident ID number",
    RU_PASSPORT: "a Russian passport number",
    RU_SNILS: "a Russian SNILS number",
    IBAN: "an IBAN",
}


# --- checksums -----------------------------------------------------------------------------------
def luhn_valid(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2:
            d = d * 2 - 9 if d > 4 else d * 2
        total += d
    return total % 10 == 0


_CN_WEIGHTS = (7, 9, 10, 5, 8, 4, 2, 1, 6, 3, 7, 9, 10, 5, 8, 4, 2)
_CN_CHECK = "10X98765432"


def cn_resident_id_valid(number: str) -> bool:
    """GB 11643: 6-digit region, YYYYMMDD birth date, 3-digit sequence, ISO 7064 MOD 11-2 check character."""
    number = number.upper()
    if not re.fullmatch(r"[1-9]\d{16}[\dX]", number):
        return False
    try:
        born = date(int(number[6:10]), int(number[10:12]), int(number[12:14]))
    except ValueError:
        return False
    if not date(1880, 1, 1) <= born <= timezone.now().date():
        return False
    total = sum(int(d) * w for d, w in zip(number[:17], _CN_WEIGHTS, strict=True))
    return _CN_CHECK[total % 11] == number[17]


def snils_valid(digits: str) -> bool:
    """SNILS control number: Σ digit × (9 − position) over the first nine digits, reduced mod 101
    (100 and 101 give 00). Numbers up to 001-001-998 were issued without a control number."""
    if len(digits) != 11 or int(digits[:9]) <= 1001998:
        return False
    total = sum(int(d) * (9 - i) for i, d in enumerate(digits[:9]))
    if total > 101:
        total %= 101
    check = 0 if total in (100, 101) else total
    return check == int(digits[9:])


def iban_valid(text: str) -> bool:
    compact = re.sub(r"\s", "", text).upper()
    if not re.fullmatch(r"[A-Z]{2}\d{2}[A-Z0-9]{11,30}", compact):
        return False
    expected = _IBAN_LENGTHS.get(compact[:2])
    if expected is not None and len(compact) != expected:
        return False
    rearranged = compact[4:] + compact[:4]
    return int("".join(str(int(ch, 36)) for ch in rearranged)) % 97 == 1


_IBAN_LENGTHS = {
    "AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22, "BH": 22, "BR": 29, "BY": 28,
    "CH": 21, "CR": 22, "CY": 28, "CZ": 24, "DE": 22, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
    "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27, "GT": 28, "HR": 21, "HU": 28, "IE": 22,
    "IL": 23, "IQ": 23, "IS": 26, "IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
    "LU": 20, "LV": 21, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MR": 27, "MT": 31, "MU": 30, "NL": 18, "NO": 15,
    "PK": 24, "PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24, "SC": 31, "SE": 24,
    "SI": 19, "SK": 24, "SM": 27, "ST": 25, "SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24,
    "XK": 20,
}

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


# --- scanning ------------------------------------------------------------------------------------
# Digit runs with the separators people type inside card numbers and SNILS ("4111 1111-1111 1111").
_DIGIT_RUN = re.compile(r"(?<![\dA-Za-z])\d(?:[ \-]?\d){9,22}(?![\dA-Za-z])")
_CN_ID = re.compile(r"(?<![\dA-Za-z])[1-9]\d{5}(?:19|20)\d{9}[\dXx](?![\dA-Za-z])")
_PASSPORT = re.compile(r"(?<![\d-])(\d{2})( ?)(\d{2})([ №]{0,3})(\d{6})(?![\d-])")
_SNILS_FORMATTED = re.compile(r"(?<!\d)\d{3}-\d{3}-\d{3}[ -]\d{2}(?!\d)")
_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Za-z]{2}\d{2}(?: ?[A-Za-z0-9]){11,30}(?![A-Za-z0-9])")
_PASSPORT_WORDS = re.compile(r"passport|паспорт|серия|series", re.IGNORECASE)
_SNILS_WORDS = re.compile(r"snils|снилс|страхов", re.IGNORECASE)


def find_sensitive(text: str, *, context: str = "") -> list[Finding]:
    """Sensitive numbers in `text`. `context` (a fact's key, say) counts as surrounding words."""
    found: list[Finding] = []
    covered: list[tuple[int, int]] = []

    def add(kind: str, start: int, end: int) -> None:
        if any(s < end and start < e for s, e in covered):
            return
        covered.append((start, end))
        found.append(Finding(kind, start, end))

    words = f"{context} {text}"
    for match in _IBAN.finditer(text):
        if iban_valid(match.group()):
            add(IBAN, match.start(), match.end())
    for match in _CN_ID.finditer(text):
        if cn_resident_id_valid(match.group()):
            add(CN_RESIDENT_ID, match.start(), match.end())
    for match in _SNILS_FORMATTED.finditer(text):
        if snils_valid(re.sub(r"\D", "", match.group())):
            add(RU_SNILS, match.start(), match.end())
    for match in _PASSPORT.finditer(text):
        series = match.group(1) + match.group(3)
        # "45 06 123456" and "4506 123456" are how passports are written; a bare run of ten digits
        # is as likely a phone number, so it needs the word "passport" nearby.
        spaced = bool(match.group(4))
        if (spaced or _PASSPORT_WORDS.search(words)) and ru_passport_series_plausible(series):
            add(RU_PASSPORT, match.start(), match.end())
    for match in _DIGIT_RUN.finditer(text):
        digits = re.sub(r"\D", "", match.group())
        if 13 <= len(digits) <= 19 and luhn_valid(digits):
            add(CARD, match.start(), match.end())
        elif len(digits) == 11 and snils_valid(digits) and _SNILS_WORDS.search(words):
            add(RU_SNILS, match.start(), match.end())
    return found
