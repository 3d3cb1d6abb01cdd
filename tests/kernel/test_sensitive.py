"""The sensitive-number detectors and masking: each kind found by its own checksum or format, near
misses and ordinary numbers (phones, dates, order numbers) left alone."""

from __future__ import annotations

import json

import pytest
from rest_framework.test import APIClient

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
    assert response.json()["masked"] == {"iban": 1}  # said, as a batch of messages says it
    assert client.post("/api/v1/users/u1/documents", {"text": "No numbers."}, format="json").json()["masked"] == {}
    assert Document.objects.get(text__startswith="# Billing").text == (
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


# --- typed memories, document titles and tags, speakers (QA pass 1, finding 1) ------------------
MEMORIES = "/api/v1/characters/neiri/memories"
MEMORY_RAW = ("4111 1111 1111 1111", "4111111111111111", "536-22-1234", "5555 5555 5555 4444", "4222222222222")
# 64 characters, the most a tag may have: its card's placeholder is longer than the 13 digits.
LONG_TAG = "x" * 50 + " 4222222222222"


def _memory_leaks(payload: object) -> list[str]:
    text = json.dumps(payload, ensure_ascii=False)
    return [raw for raw in MEMORY_RAW if raw in text]


def _memory_post(client) -> dict:
    response = client.post(MEMORIES, {
        "user_id": "mike", "text": "Mike told me his card is 4111 1111 1111 1111 and his SSN is 536-22-1234",
        "kind": "user", "category": "KeyFacts", "tags": ["4111111111111111", LONG_TAG, "billing"],
        "context_window": "card 4111111111111111"}, format="json")
    assert response.status_code == 201, response.content
    return response.json()


@pytest.mark.parametrize("policy", ["mask", "keep"])
def test_a_typed_memory_is_stored_masked_and_the_response_counts_it(client_a, settings, policy: str) -> None:
    # A typed memory is a chunk and exists nowhere else: masked whatever the policy, as documents are.
    settings.SENSITIVE_POLICY = policy
    client, tenant = client_a
    body = _memory_post(client)
    assert body["masked"] == {CARD: 4, US_SSN: 1}
    assert body["text"] == "Mike told me his card is [card •••• 1111] and his SSN is [us_ssn]"
    assert body["tags"] == ["[card •••• 1111]", "x" * 50, "billing"]
    assert body["context_window"] == "card [card •••• 1111]"
    chunk = Chunk.objects.get(tenant=tenant, type="memory")
    assert not _memory_leaks([chunk.text, chunk.tags, chunk.context_window, chunk.terms])
    assert all(len(tag) <= 64 for tag in chunk.tags)
    # Read back, listed: the same masked values, and no `masked` where nothing was written.
    listed = client.get(MEMORIES).json()["memories"]
    assert not _memory_leaks(listed) and "masked" not in listed[0]


def test_a_typed_memory_without_numbers_reports_nothing_masked(client_a) -> None:
    client, _ = client_a
    response = client.post(MEMORIES, {"user_id": "mike", "text": "Mike plays chess on Sundays at 10",
                                      "kind": "user", "tags": ["chess", "chess"]}, format="json")
    assert response.status_code == 201
    assert response.json()["masked"] == {} and response.json()["tags"] == ["chess", "chess"]


def test_a_typed_memory_patch_masks_its_tags(client_a) -> None:
    client, tenant = client_a
    memory = client.post(MEMORIES, {"user_id": "mike", "text": "Mike pays by card", "kind": "user"},
                         format="json").json()
    response = client.patch(f"{MEMORIES}/{memory['id']}", {"tags": ["card 5555 5555 5555 4444", LONG_TAG]},
                            format="json")
    assert response.status_code == 200, response.content
    assert response.json()["masked"] == {CARD: 2}
    assert response.json()["tags"] == ["card [card •••• 4444]", "x" * 50]
    assert not _memory_leaks(list(Chunk.objects.filter(tenant=tenant).values_list("tags", flat=True)))
    unchanged = client.patch(f"{MEMORIES}/{memory['id']}", {"importance": 0.9}, format="json").json()
    assert unchanged["masked"] == {} and unchanged["tags"] == ["card [card •••• 4444]", "x" * 50]


def test_the_typed_memory_responses_document_masked(schema) -> None:
    for path, method, code in ((MEMORIES.replace("neiri", "{conf_uid}"), "post", "201"),
                               (MEMORIES.replace("neiri", "{conf_uid}") + "/{memory_id}", "patch", "200")):
        ref = schema["paths"][path][method]["responses"][code]["content"]["application/json"]["schema"]["$ref"]
        component = schema["components"]["schemas"][ref.rsplit("/", 1)[1]]
        assert component["properties"]["masked"]["type"] == "object" and "masked" in component["required"]


@pytest.mark.parametrize("policy", ["mask", "keep"])
def test_a_document_title_and_tags_are_masked(client_a, settings, policy: str) -> None:
    settings.SENSITIVE_POLICY = policy
    client, tenant = client_a
    response = client.post("/api/v1/users/mike/documents", {
        "title": "Card 4111 1111 1111 1111", "text": "My IBAN is GB82 WEST 1234 5698 7654 32.",
        "tags": ["4111111111111111", LONG_TAG], "meta": {"card": "5555 5555 5555 4444"}}, format="json")
    assert response.status_code == 201, response.content
    assert response.json()["masked"] == {"card_number": 4, "iban": 1}  # title, two tags, meta; text
    document = Document.objects.get(tenant=tenant)
    assert document.title == "Card [card •••• 1111]"
    assert document.tags == ["[card •••• 1111]", "x" * 50]
    assert document.meta == {"card": "[card •••• 4444]"}
    assert client.get(f"/api/v1/documents/{document.pk}").json()["title"] == "Card [card •••• 1111]"
    chunks = list(Chunk.objects.filter(tenant=tenant).values_list("text", "tags", "terms"))
    assert chunks[0][0].startswith("Card [card •••• 1111]\n") and not _memory_leaks(chunks)


@pytest.mark.parametrize("policy", ["mask", "keep"])
def test_search_context_and_memory_search_show_no_raw_number_of_a_memory_or_document(
        client_a, settings, policy: str) -> None:
    from memoryhub.services import api_key_create

    settings.SENSITIVE_POLICY = policy
    client, tenant = client_a
    _memory_post(client)
    client.post("/api/v1/users/mike/documents", {"title": "Card 4111 1111 1111 1111", "text": "Card on file.",
                                                 "tags": ["5555 5555 5555 4444"]}, format="json")
    search = client.post("/api/v1/search", {"user_id": "mike", "query": "card SSN", "k": 20}, format="json").json()
    assert {i["type"] for i in search["items"]} == {"memory", "document"}
    assert not _memory_leaks(search) and "[card •••• 1111]" in json.dumps(search, ensure_ascii=False)
    context = client.post("/api/v1/context", {"user_id": "mike", "query": "card"},
                          format="json").json()
    assert "[us_ssn]" in context["text"] and "[card •••• 1111]" in context["text"]
    assert not _memory_leaks(context)
    _, key = api_key_create(tenant=tenant, name="tools", scopes=("tools", "memory"))
    tools = APIClient()
    tools.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    found = tools.post("/api/v1/tools/memory_search", {"user_id": "mike", "query": "card SSN", "k": 10},
                       format="json")
    assert found.status_code == 200 and found.json()["items"]
    assert not _memory_leaks(found.json())


def test_a_speaker_is_masked_like_the_text(client_a, django_capture_on_commit_callbacks) -> None:
    client, tenant = client_a
    body = {"messages": [{"role": "user", "name": "4111111111111111", "text": "hello there"}]}
    with django_capture_on_commit_callbacks(execute=True):
        response = client.post(URL, body, format="json")
    assert response.json()["masked"] == {CARD: 1}
    assert Message.objects.get(tenant=tenant).speaker == "[card •••• 1111]"
    # The external id is the client's key, kept as sent (see memoryhub.services._masked).
    with django_capture_on_commit_callbacks(execute=True):
        client.post(URL, {"messages": [{"role": "user", "text": "again", "external_id": "4242424242424242"}]},
                    format="json")
    assert Message.objects.filter(tenant=tenant, external_id="4242424242424242").exists()


def test_under_keep_a_raw_speaker_is_masked_in_chunks_search_and_context(
        client_a, django_capture_on_commit_callbacks, settings) -> None:
    settings.SENSITIVE_POLICY = "keep"
    client, tenant = client_a
    body = {"messages": [{"role": "user", "name": "4111111111111111", "text": "my cat is called Pixel"}]}
    with django_capture_on_commit_callbacks(execute=True):
        assert client.post(URL, body, format="json").json()["masked"] == {}
    assert Message.objects.get(tenant=tenant).speaker == "4111111111111111"
    assert Chunk.objects.get(tenant=tenant).speaker == "[card •••• 1111]"
    search = client.post("/api/v1/search", {"user_id": "u1", "query": "cat Pixel"}, format="json").json()
    assert search["items"] and not _memory_leaks(search)
    context = client.post("/api/v1/context", {"user_id": "u1", "query": "cat", "session_id": "s1"},
                          format="json").json()
    assert "[card •••• 1111]" in context["text"] and not _memory_leaks(context)


CONSOLIDATED = {"facts_about_user": ["Mike's card is 4111 1111 1111 1111."], "past_events": [], "self_beliefs": [],
                "objectives": [{"text": "Neiri should remember SSN 536-22-1234.", "about": "self",
                                "confidence": 0.3, "tags": ["536-22-1234"]}],
                "emotions": [],
                "key_facts": [{"text": "Mike pays by card", "importance": 0.6, "tags": ["4111111111111111"]}],
                "summary": "Mike gave his card 4111 1111 1111 1111."}


def test_under_keep_consolidation_sees_and_writes_only_masked_numbers(tenant, settings, llm) -> None:
    from rag.memories import consolidation
    from rag.memory_models import MemoryReview
    from tests.factories import append_messages

    settings.SENSITIVE_POLICY = "keep"
    llm.script_chat(CONSOLIDATED)
    result = append_messages(tenant, "mike", "s1", [
        "My card is 4111 1111 1111 1111 and my SSN is 536-22-1234.", ("assistant", "Noted!")])
    run_id = consolidation.consolidation_request(result.conversation, trigger="request")["consolidation"]
    consolidation.consolidation_run(run_id=run_id)
    [request] = llm.chat_requests
    transcript = request["messages"][-1]["content"]
    assert "[card •••• 1111]" in transcript and not _memory_leaks(request)
    written = list(Chunk.objects.filter(tenant=tenant, type__in=["memory", "insight"])
                   .values_list("text", "tags", "meta"))
    assert {t for t, _, _ in written} >= {"Mike's card is [card •••• 1111].", "Mike pays by card",
                                          "Mike gave his card [card •••• 1111]."}
    assert not _memory_leaks(written)
    review = MemoryReview.objects.get(tenant=tenant)
    assert (review.text, review.tags) == ("Neiri should remember SSN [us_ssn].", ["[us_ssn]"])


def test_under_keep_the_rules_consolidator_writes_only_masked_numbers(tenant, settings) -> None:
    from rag.memories import consolidation
    from tests.factories import append_messages

    settings.SENSITIVE_POLICY = "keep"
    result = append_messages(tenant, "mike", "s1", [
        "Remember this, it is important: my card is 4111 1111 1111 1111.", "I love my card 5555 5555 5555 4444."])
    run_id = consolidation.consolidation_request(result.conversation, trigger="request")["consolidation"]
    run = consolidation.MemoryConsolidation.objects.get(pk=run_id)
    consolidation.consolidation_run(run_id=run_id)
    run.refresh_from_db()
    assert run.status == "done" and run.result["created"], run.error
    written = list(Chunk.objects.filter(tenant=tenant, type__in=["memory", "insight"]).values_list("text", "tags"))
    assert "[card •••• 1111]" in json.dumps(written, ensure_ascii=False)
    assert not _memory_leaks([written, run.output])


def test_sensitive_rescan_masks_what_was_stored_before_and_rebuilds_its_chunks(
        client_a, django_capture_on_commit_callbacks) -> None:
    """Stored before the fix: typed memories, document titles and tags, speakers raw. The command masks the
    rows and rebuilds their chunks (a document's heading line, the terms and vectors of a memory)."""
    from io import StringIO

    from django.core.management import call_command

    from rag.services import reindex

    client, tenant = client_a
    _memory_post(client)
    client.post("/api/v1/users/mike/documents", {"title": "Card notes", "text": "Card on file.", "tags": ["x"]},
                format="json")
    with django_capture_on_commit_callbacks(execute=True):
        client.post("/api/v1/users/mike/sessions/s1/messages",
                    {"messages": [{"role": "user", "name": "Mike 4111111111111111", "text": "hello there"}]},
                    format="json")
    # As an older release stored them.
    memory = Chunk.objects.get(tenant=tenant, type=Chunk.Type.MEMORY)
    Chunk.objects.filter(pk=memory.pk).update(text="His card is 4111 1111 1111 1111", tags=["4111111111111111"],
                                              context_window="card 4111111111111111")
    Document.objects.filter(tenant=tenant).update(title="Card 4111 1111 1111 1111", tags=["5555 5555 5555 4444"])
    Message.objects.filter(tenant=tenant).update(speaker="Mike 4111111111111111")
    reindex(tenant=tenant, user_ids=["mike"], include_tenant_documents=False)
    search = client.post("/api/v1/search", {"user_id": "mike", "query": "card hello", "k": 20}, format="json").json()
    assert _memory_leaks(search)  # the leak the command is for

    dry = StringIO()
    call_command("sensitive_rescan", "--dry-run", stdout=dry, stderr=StringIO())
    assert "would mask: 1 memories, 1 documents, 1 speakers" in dry.getvalue(), dry.getvalue()
    assert Chunk.objects.get(pk=memory.pk).text == "His card is 4111 1111 1111 1111"

    out = StringIO()
    call_command("sensitive_rescan", stdout=out, stderr=StringIO())
    assert "masked: 1 memories, 1 documents, 1 speakers" in out.getvalue(), out.getvalue()
    memory = Chunk.objects.get(tenant=tenant, type=Chunk.Type.MEMORY)
    assert (memory.text, memory.tags, memory.context_window) == (
        "His card is [card •••• 1111]", ["[card •••• 1111]"], "card [card •••• 1111]")
    assert Document.objects.get(tenant=tenant).title == "Card [card •••• 1111]"
    assert Message.objects.get(tenant=tenant).speaker == "Mike [card •••• 1111]"
    search = client.post("/api/v1/search", {"user_id": "mike", "query": "card hello", "k": 20}, format="json").json()
    assert {i["type"] for i in search["items"]} >= {"memory", "document", "dialog"}
    assert not _memory_leaks(search), search
    context = client.post("/api/v1/context", {"user_id": "mike", "query": "card", "session_id": "s1"},
                          format="json").json()
    assert not _memory_leaks(context)
    again = StringIO()
    call_command("sensitive_rescan", stdout=again, stderr=StringIO())
    assert "masked: nothing" in again.getvalue()
