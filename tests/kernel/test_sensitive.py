"""The sensitive-number detectors and masking: each kind found by its own checksum or format, near
misses and ordinary numbers (phones, dates, order numbers) left alone."""

from __future__ import annotations

import json

import pytest

from memoryhub.models import Message
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
from rag.models import Chunk, Document
from tests.profiles.conftest import metric


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


# --- through the API: intake, messages, search, context, documents ----------------------------
URL = "/api/v1/users/u1/sessions/s1/messages"
CARD_TEXT = ("Pay with my card 4242 4242 4242 4242, ssn 536-90-4399, call me at +1 415 555 0132 "
             "about order 100234567890.")
RU_TEXT = "Мой паспорт 45 06 123456, СНИЛС 112-233-445 95, телефон +7 916 123-45-67, встреча 15.01.2024."
ZH_TEXT = "我的身份证号是11010519491231002X，银行卡6250941006528599，电话13800138000。"
RAW = ("4242 4242 4242 4242", "536-90-4399", "45 06 123456", "112-233-445 95", "11010519491231002X",
       "6250941006528599", "AB 12 34 56 C")
ORDINARY = ("+1 415 555 0132", "100234567890", "+7 916 123-45-67", "15.01.2024", "13800138000")


def _post(client, django_capture_on_commit_callbacks, texts, meta=None) -> dict:
    body = {"messages": [{"role": "user", "text": t, "meta": meta or {}} for t in texts]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, body, format="json")
    assert response.status_code == 202, response.content
    return response.json()


def _leaks(payload: object) -> list[str]:
    text = json.dumps(payload, ensure_ascii=False)
    return [raw for raw in RAW if raw in text]


def _search_and_context(client) -> tuple[dict, dict]:
    search = client.post("/api/v1/search", {"query": "card ssn паспорт 身份证", "user_id": "u1", "k": 20},
                         format="json")
    context = client.post("/api/v1/context", {"query": "card паспорт 身份证", "user_id": "u1", "session_id": "s1"},
                          format="json")
    assert search.status_code == 200 and context.status_code == 200
    return search.json(), context.json()


def test_under_mask_messages_are_stored_masked_and_counts_are_reported(
        client_a, django_capture_on_commit_callbacks) -> None:
    client, _ = client_a
    before = metric("memoryhub_sensitive_masked_total", kind="card_number", where="message")
    body = _post(client, django_capture_on_commit_callbacks, [CARD_TEXT, RU_TEXT, ZH_TEXT],
                 meta={"note": "NINO AB 12 34 56 C", "order": 100234567890})
    assert body["masked"] == {CARD: 2, US_SSN: 1, RU_PASSPORT: 1, RU_SNILS: 1, CN_RESIDENT_ID: 1, UK_NINO: 3}
    assert metric("memoryhub_sensitive_masked_total", kind="card_number", where="message") == before + 2

    stored = client.get(URL).json()["messages"]
    assert [m["text"] for m in stored] == [
        "Pay with my card [card •••• 4242], ssn [us_ssn], call me at +1 415 555 0132 about order 100234567890.",
        "Мой паспорт [ru_passport], СНИЛС [ru_snils], телефон +7 916 123-45-67, встреча 15.01.2024.",
        "我的身份证号是[cn_resident_id]，银行卡[card •••• 8599]，电话13800138000。",
    ]
    assert stored[0]["meta"] == {"note": "NINO [uk_nino]", "order": 100234567890}
    assert not _leaks(list(Message.objects.values_list("text", "meta")))
    search, context = _search_and_context(client)
    assert search["items"] and not _leaks(search) and "[card •••• 4242]" in json.dumps(search, ensure_ascii=False)
    assert not _leaks(context) and "[ru_passport]" in context["text"]
    for ordinary in ORDINARY:
        assert ordinary in json.dumps(stored, ensure_ascii=False)


def test_under_keep_the_message_stays_raw_but_chunks_and_context_are_masked(
        client_a, django_capture_on_commit_callbacks, settings) -> None:
    settings.SENSITIVE_POLICY = "keep"
    client, tenant = client_a
    body = _post(client, django_capture_on_commit_callbacks, [CARD_TEXT, RU_TEXT, ZH_TEXT])
    assert body["masked"] == {}
    stored = client.get(URL).json()["messages"]
    assert [m["text"] for m in stored] == [CARD_TEXT, RU_TEXT, ZH_TEXT]

    chunks = list(Chunk.objects.filter(tenant=tenant).order_by("id").values_list("text", flat=True))
    assert len(chunks) == 3 and not _leaks(chunks)
    assert "[card •••• 4242]" in chunks[0] and "100234567890" in chunks[0]
    search, context = _search_and_context(client)
    assert search["items"] and not _leaks(search)
    recent = next(b for b in context["blocks"] if b["name"] == "recent_turns")
    assert "[cn_resident_id]" in recent["text"] and not _leaks(context)


def test_documents_are_masked_at_intake(client_a) -> None:
    client, _ = client_a
    text = "# Billing\n\nRefunds go to IBAN DE89 3704 0044 0532 0130 00; questions to +49 30 1234567."
    response = client.post("/api/v1/users/u1/documents", {"text": text}, format="json")
    assert response.status_code == 201
    assert Document.objects.get().text == (
        "# Billing\n\nRefunds go to IBAN [iban •••• 3000]; questions to +49 30 1234567.")
    assert all("DE89" not in c for c in Chunk.objects.values_list("text", flat=True))


def test_a_retried_batch_counts_nothing_masked_twice(client_a, django_capture_on_commit_callbacks) -> None:
    client, _ = client_a
    body = {"messages": [{"role": "user", "text": CARD_TEXT, "external_id": "m1"}]}
    with django_capture_on_commit_callbacks(execute=True):
        first = client.post(URL, body, format="json").json()
        again = client.post(URL, body, format="json").json()
    assert (first["accepted"], first["masked"]) == (1, {CARD: 1, US_SSN: 1})
    assert (again["accepted"], again["duplicates"], again["masked"]) == (0, 1, {})
