"""Thread state encrypted at rest (seed 003 §8.9 "можно зашифровать"): with THREAD_STATE_KEY set, a
checkpoint's state and metadata and its pending writes are stored as Fernet tokens; rotation keeps old
rows readable and the beat re-seals them; a missing or wrong key is a 503 naming the setting."""

from __future__ import annotations

import pytest
from cryptography.fernet import Fernet
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured
from django.db import connection
from django.test import Client

from lore.campaigns import sealing, threads
from lore.campaigns.models import Checkpoint, PendingWrite
from memoryhub import settings as memoryhub_settings
from tests.lore.conftest import CAMPAIGN_BASE

THREAD = f"{CAMPAIGN_BASE}/threads/scene_42"
CHECKPOINTS = f"{THREAD}/checkpoints"
KEY_A, KEY_B, KEY_C = (Fernet.generate_key().decode() for _ in range(3))
STATE = {"en": "Li Shen guards the moon bridge", "ru": "Ли Шэнь охраняет лунный мост", "zh": "李申守护着月亮桥"}
METADATA = {"source": "loop", "note": "тайна лунного моста"}
WRITE = {"task_id": "t1", "channel": "messages", "idx": 0, "value": "秘密：月亮桥下有宝藏"}


def stored_text() -> str:
    """Everything the database holds of the thread's state, as PostgreSQL would dump it."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT coalesce(string_agg(state::text || metadata::text, ''), '') FROM lore_checkpoint")
        checkpoints = cursor.fetchone()[0]
        cursor.execute("SELECT coalesce(string_agg(value::text, ''), '') FROM lore_pendingwrite")
        return checkpoints + cursor.fetchone()[0]


def write_all(engine) -> dict:
    response = engine.post(CHECKPOINTS, {"state": STATE, "metadata": METADATA}, format="json")
    assert response.status_code == 201, response.content
    checkpoint = response.json()
    assert engine.post(f"{CHECKPOINTS}/{checkpoint['checkpoint_id']}/writes", {"writes": [WRITE]},
                       format="json").status_code == 201
    return checkpoint


def test_with_a_key_state_metadata_and_writes_are_stored_encrypted_and_read_back_plain(engine, settings):
    settings.THREAD_STATE_KEY = [KEY_A]
    checkpoint = write_all(engine)
    assert checkpoint["state"] == STATE and checkpoint["metadata"] == METADATA
    dumped = stored_text()
    for secret in ("moon bridge", "лунный", "月亮桥", "тайна", "宝藏"):
        assert secret not in dumped and secret.encode("unicode_escape").decode() not in dumped, secret
    fingerprint = sealing.key_fingerprint(KEY_A)
    assert set(Checkpoint.objects.values_list("sealed_by", flat=True)) == {fingerprint}
    assert set(PendingWrite.objects.values_list("sealed_by", flat=True)) == {fingerprint}
    got = engine.get(f"{CHECKPOINTS}/{checkpoint['checkpoint_id']}").json()
    assert (got["state"], got["metadata"], got["pending_writes"][0]["value"]) == (STATE, METADATA, WRITE["value"])
    assert engine.get(CHECKPOINTS).json()["checkpoints"][0]["metadata"] == METADATA
    # A retry compares what the rows hold, not their tokens (each sealing differs).
    body = {"state": {"turn": 2, "ru": "дальше"}, "parent_checkpoint_id": checkpoint["checkpoint_id"]}
    second = engine.post(CHECKPOINTS, body, format="json")
    again = engine.post(CHECKPOINTS, body, format="json")
    assert (second.status_code, again.status_code) == (201, 200)
    assert again.json() == second.json() and Checkpoint.objects.count() == 2


def test_without_a_key_state_is_stored_as_json(engine, settings):
    settings.THREAD_STATE_KEY = []
    write_all(engine)
    assert Checkpoint.objects.get().state == STATE and Checkpoint.objects.get().sealed_by == ""
    assert PendingWrite.objects.get().value == WRITE["value"]


def test_a_rotated_key_keeps_old_rows_readable_and_the_beat_reseals_them(engine, settings):
    settings.THREAD_STATE_KEY = [KEY_A]
    checkpoint = write_all(engine)
    settings.THREAD_STATE_KEY = [KEY_B, KEY_A]  # the new key first, the old one kept
    path = f"{CHECKPOINTS}/{checkpoint['checkpoint_id']}"
    assert engine.get(path).json()["state"] == STATE
    report = threads.threads_expire()
    assert report == {"checkpoints": 0, "threads": 0, "resealed_checkpoints": 1, "resealed_writes": 1,
                      "reseal_unreadable": 0}
    new = sealing.key_fingerprint(KEY_B)
    assert set(Checkpoint.objects.values_list("sealed_by", flat=True)) == {new}
    assert set(PendingWrite.objects.values_list("sealed_by", flat=True)) == {new}
    assert sealing.threads_reseal()["resealed_checkpoints"] == 0  # nothing left: the old key may go
    settings.THREAD_STATE_KEY = [KEY_B]
    got = engine.get(path).json()
    assert (got["state"], got["metadata"], got["pending_writes"][0]["value"]) == (STATE, METADATA, WRITE["value"])


def test_a_key_set_later_seals_the_rows_stored_as_json(engine, settings):
    settings.THREAD_STATE_KEY = []
    write_all(engine)
    settings.THREAD_STATE_KEY = [KEY_A]
    assert threads.threads_expire()["resealed_checkpoints"] == 1
    assert "лунный" not in stored_text() and engine.get(THREAD).json()["checkpoint"]["state"] == STATE


def test_a_missing_or_wrong_key_is_a_503_naming_the_setting_and_the_admin_still_opens(engine, settings):
    settings.THREAD_STATE_KEY = [KEY_A]
    checkpoint = write_all(engine)
    body = {"state": {"turn": 2}, "parent_checkpoint_id": checkpoint["checkpoint_id"]}
    assert engine.post(CHECKPOINTS, body, format="json").status_code == 201
    for keys in ([], [KEY_C]):
        settings.THREAD_STATE_KEY = keys
        for path in (THREAD, CHECKPOINTS, f"{CHECKPOINTS}/{checkpoint['checkpoint_id']}"):
            response = engine.get(path)
            assert response.status_code == 503, (keys, path, response.content)
            error = response.json()["error"]
            assert error["code"] == "thread_state_key" and "THREAD_STATE_KEY" in error["message"]
        # A retry that must compare with the sealed latest is refused alike, not a 500, and writes nothing.
        retry = engine.post(CHECKPOINTS, body, format="json")
        assert retry.status_code == 503 and retry.json()["error"]["code"] == "thread_state_key"
    assert Checkpoint.objects.count() == 2
    settings.THREAD_STATE_KEY = [KEY_C]
    assert sealing.threads_reseal()["reseal_unreadable"] >= 1
    user = get_user_model().objects.create_superuser("root", "root@example.com", "pw-123456")
    client = Client()
    client.force_login(user)
    page = client.get(f"/admin/lore/checkpoint/{Checkpoint.objects.order_by('step').first().pk}/change/")
    assert page.status_code == 200 and "THREAD_STATE_KEY cannot open it" in page.content.decode()
    # The engine's deletion needs no key.
    assert engine.delete(THREAD).status_code == 204


def test_a_key_that_is_no_fernet_key_stops_start_up(monkeypatch):
    monkeypatch.setenv("THREAD_STATE_KEY", f"{KEY_A}, not-a-key")
    with pytest.raises(ImproperlyConfigured, match="THREAD_STATE_KEY: key 2"):
        memoryhub_settings.env_fernet_keys("THREAD_STATE_KEY")
    monkeypatch.setenv("THREAD_STATE_KEY", f" {KEY_B} ,{KEY_A}")
    assert memoryhub_settings.env_fernet_keys("THREAD_STATE_KEY") == [KEY_B, KEY_A]
    monkeypatch.setenv("THREAD_STATE_KEY", "")
    assert memoryhub_settings.env_fernet_keys("THREAD_STATE_KEY") == []
