"""The sensitive-number detectors: each kind found by its own checksum, near misses left alone."""

from __future__ import annotations

import pytest

from profiles.sensitive import (
    CARD,
    CN_RESIDENT_ID,
    IBAN,
    RU_PASSPORT,
    RU_SNILS,
    cn_resident_id_valid,
    find_sensitive,
    iban_valid,
    luhn_valid,
    snils_valid,
)


@pytest.mark.parametrize(("text", "kind"), [
    ("4111 1111 1111 1111", CARD),
    ("card: 5500-0000-0000-0004, exp 12/30", CARD),
    ("my amex 378282246310005", CARD),
    ("身份证 11010519491231002X", CN_RESIDENT_ID),
    ("11010519491231002x", CN_RESIDENT_ID),
    ("45 06 123456", RU_PASSPORT),
    ("4506 123456", RU_PASSPORT),
    ("серия и номер 4506123456", RU_PASSPORT),
    ("112-233-445 95", RU_SNILS),
    ("СНИЛС 11223344595", RU_SNILS),
    ("DE89 3704 0044 0532 0130 00", IBAN),
    ("iban gb82west12345698765432", IBAN),
])
def test_each_kind_is_found(text: str, kind: str) -> None:
    assert [f.kind for f in find_sensitive(text)] == [kind]


@pytest.mark.parametrize("text", [
    "4111 1111 1111 1112",  # Luhn fails
    "order 1234567812345678",  # Luhn fails
    "110105194912310021",  # ID check character wrong
    "110105194913310028",  # no 13th month
    "0006 123456",  # region 00 does not exist
    "4506123456",  # bare ten digits: a phone number as likely as a passport
    "112-233-445 96",  # SNILS check number wrong
    "11223344595",  # SNILS-valid digits, but nothing says SNILS: an 11-digit phone number
    "+7 916 123-45-67",
    "DE88 3704 0044 0532 0130 00",  # mod-97 fails
    "DE89 3704 0044 0532 0130",  # German IBANs have 22 characters
    "I was born in 1987 and live at 221B Baker Street",
])
def test_near_misses_are_not_sensitive(text: str) -> None:
    assert find_sensitive(text) == []


def test_the_fact_key_counts_as_context() -> None:
    assert [f.kind for f in find_sensitive("11223344595", context="snils")] == [RU_SNILS]
    assert [f.kind for f in find_sensitive("4506123456", context="passport_number")] == [RU_PASSPORT]


def test_checksums() -> None:
    assert luhn_valid("79927398713") and not luhn_valid("79927398710")
    assert cn_resident_id_valid("11010519491231002X") and not cn_resident_id_valid("11010519491231002Y")
    assert snils_valid("11223344595") and not snils_valid("00100199800")  # too low to carry a check number
    assert iban_valid("NL91ABNA0417164300") and not iban_valid("NL91ABNA0417164301")
