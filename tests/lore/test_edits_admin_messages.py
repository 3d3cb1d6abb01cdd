"""The lore edit queue's admin messages: approving or rejecting pending edits warns only about edits that
were decided before the action, never about the ones it has just decided."""

from __future__ import annotations

import pytest
from django.contrib.auth.models import User
from django.test import Client

from lore import edits, services
from lore.edit_models import KnowledgeEdit
from lore.models import KnowledgeVersion

QUEUE = "/admin/lore/knowledgeedit/"
SKIPPED = "Already decided, left as they are"


@pytest.fixture
def live(staged: KnowledgeVersion) -> KnowledgeVersion:
    services.lore_version_publish(version=staged, actor="test", force=True, reason="fixture")
    staged.refresh_from_db()
    return staged


@pytest.fixture
def editor(db: None) -> Client:
    client = Client()
    client.force_login(User.objects.create_superuser("editor", "e@example.org", "pw"))
    return client


def propose(live: KnowledgeVersion, entry_id: str) -> KnowledgeEdit:
    return edits.knowledge_edit_propose(world=live.world, domain="srd", action="delete", language="en",
                                        entry_id=entry_id, reason="r", actor="a")


def test_approving_a_pending_edit_gives_no_already_decided_warning(live: KnowledgeVersion, editor: Client) -> None:
    edit = propose(live, "Spells/misty-step")
    page = editor.post(QUEUE, {"action": "approve", "_selected_action": [edit.pk]}, follow=True).content.decode()
    assert "1 edit(s) approved" in page
    assert SKIPPED not in page
    assert KnowledgeEdit.objects.get(pk=edit.pk).status == KnowledgeEdit.Status.APPROVED


def test_rejecting_a_pending_edit_gives_no_already_decided_warning(live: KnowledgeVersion, editor: Client) -> None:
    edit = propose(live, "Spells/misty-step")
    page = editor.post(QUEUE, {"action": "reject", "_selected_action": [edit.pk], "apply": "1",
                               "reason": "keep it"}, follow=True).content.decode()
    assert "1 edit(s) rejected" in page
    assert SKIPPED not in page
    assert KnowledgeEdit.objects.get(pk=edit.pk).status == KnowledgeEdit.Status.REJECTED


def test_only_the_edits_decided_before_are_named_as_skipped(live: KnowledgeVersion, editor: Client) -> None:
    earlier = propose(live, "Spells/misty-step")
    edits.knowledge_edit_reject(edit=earlier, actor="admin:other", reason="no")
    fresh = propose(live, "Spells/fireball")
    page = editor.post(QUEUE, {"action": "approve", "_selected_action": [earlier.pk, fresh.pk]},
                       follow=True).content.decode()
    assert "1 edit(s) approved" in page
    assert f"{SKIPPED} (edit {earlier.pk} (Rejected))" in page
    assert f"edit {fresh.pk} (Approved)" not in page
