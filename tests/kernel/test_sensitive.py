"""The sensitive-number detectors and masking: each kind found by its own checksum or format, near
misses and ordinary numbers (phones, dates, order numbers) left alone."""

from __future__ import annotations

import pytest

from memoryhub.sensitive import (
    CARD,
    CN_RESIDENT_ID,
    IBAN,
    RU_INN,
    RU_PASSPORT,
    RU_SNILS,
    UK_NINO,
    US_SSN,
    cn_resident_id_valid,
    find_masked,
    find_sensitive,
    iban_valid,
    luhn_valid,
    mask_json,
    mask_text,
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
    ("my SSN is 536-90-4399", US_SSN),
    ("ssn 536904399", US_SSN),
    ("NI number AB 12 34 56 C", UK_NINO),
    ("ab123456c", UK_NINO),
    ("ИНН 7707083893", RU_INN),
    ("500100732259", RU_INN),
    ("卡号6250941006528599", CARD),
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
    "000-12-3456", "666-12-3456", "912-12-3456", "123-00-4567", "123-45-0000",  # SSN area/group/serial
    "078-05-1120",  # the SSN printed on wallet inserts, never valid
    "536904399",  # nine bare digits: a zip+4 or an order number unless named
    "GB123456A", "DA123456A", "AB123456E",  # NINO prefixes never issued, a suffix past D
    "7707083893",  # an INN-valid ten-digit run, but nothing says INN: a phone number without +7
    "500100732258",  # INN check digits wrong
    "order 100234567890", "order #202401150001",
    "+1 (415) 555-0132", "+44 20 7946 0958", "8 800 555-35-35", "+86 138 0013 8000", "电话13800138000",
    "2024-01-15", "15.01.2024", "2024年1月15日",
    "1111 1111 1111 1111 7",  # Luhn-valid, but no card number starts with 1
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


def test_a_naming_word_counts_only_just_before_the_number() -> None:
    far = "My passport is in the drawer. " + "Lots of words in between, a long sentence. " * 2 + "Call 4506123456"
    assert find_sensitive(far) == []
    assert [f.kind for f in find_sensitive("passport 4506123456")] == [RU_PASSPORT]


@pytest.mark.parametrize(("text", "masked", "counts"), [
    ("my card 4242 4242 4242 4242, ssn 536-90-4399",
     "my card [card •••• 4242], ssn [us_ssn]", {CARD: 1, US_SSN: 1}),
    ("Мой паспорт 45 06 123456, телефон +7 916 123-45-67, заказ №100234567890 от 15.01.2024",
     "Мой паспорт [ru_passport], телефон +7 916 123-45-67, заказ №100234567890 от 15.01.2024", {RU_PASSPORT: 1}),
    ("我的身份证号是11010519491231002X，电话13800138000，订单号202401150001",
     "我的身份证号是[cn_resident_id]，电话13800138000，订单号202401150001", {CN_RESIDENT_ID: 1}),
    ("pay to DE89 3704 0044 0532 0130 00 by 2024-01-15", "pay to [iban •••• 3000] by 2024-01-15", {IBAN: 1}),
])
def test_masking_replaces_only_the_sensitive_numbers(text: str, masked: str, counts: dict[str, int]) -> None:
    assert mask_text(text) == (masked, counts)


def test_masking_twice_changes_nothing_and_placeholders_are_recognised() -> None:
    once, _ = mask_text("card 4111 1111 1111 1111 and NINO AB123456C")
    assert mask_text(once) == (once, {})
    assert [f.kind for f in find_masked(once)] == [CARD, UK_NINO]
    assert find_masked("[card] is a word in brackets, [ssn] too") == []


def test_json_meta_is_masked_in_strings_and_numbers_keys_untouched() -> None:
    meta = {"note": "IBAN GB82WEST12345698765432", "card": 4111111111111111, "order": 100234567890,
            "mentions": [{"telegram_id": 123456789, "name": "Bob"}], "ok": True}
    masked, counts = mask_json(meta)
    assert masked == {"note": "IBAN [iban •••• 5432]", "card": "[card •••• 1111]", "order": 100234567890,
                      "mentions": [{"telegram_id": 123456789, "name": "Bob"}], "ok": True}
    assert counts == {IBAN: 1, CARD: 1}
