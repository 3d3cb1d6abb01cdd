"""The review console in a real browser: Playwright driving Debian's headless Chromium against a live
server, as a new editor works through the dashboard's queues.

Log in, read the dashboard's counts, approve a fact, approve a merge and undo it, approve a lore
edit and publish the version it built. Every step is checked on the page and in the database, and
leaves a screenshot in var/browser/ (named at the end of the test run). Without a Chromium binary
(.ci/browser-deps installs Debian's where apt-get can run) the test is skipped, saying so.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import User
from django.db import connections

from lore import edits
from lore import services as lore_services
from lore.models import Alias, KnowledgeVersion
from memoryhub import services as kernel_services
from memoryhub.models import Tenant
from people import services as people_services
from people.models import MergeProposal, Person, PersonMention
from people.ops import PersonDraft
from profiles import services as profile_services
from profiles.models import UserProfile
from rag.memory_models import MemoryReview
from tests.factories import append_messages
from tests.lore.conftest import CONDITIONS_EN, CONDITIONS_RU, SPELLS, as_bytes

CHROMIUM = Path(os.environ.get("MEMORYHUB_CHROMIUM", "/usr/bin/chromium"))
SHOTS = Path(settings.BASE_DIR) / "var" / "browser"
PASSWORD = "browser-test-pw-1"
NEW_FIREBALL = "A tiny ember drifts from your fingertip and sets one candle alight. No damage."
QUEUES = {
    "facts": "Facts waiting for review (low confidence or conflicting)",
    "merges": "Merge proposals",
    "lore": "Lore edits waiting for an editor",
    "memories": "Typed memories waiting for review (low confidence)",
}


@pytest.fixture
def review_data(transactional_db: None, tmp_path: Path, settings: Any) -> dict[str, Any]:
    """One item in each queue, an editor account, and a published world with golden queries."""
    User.objects.create_superuser("editor", "editor@example.org", PASSWORD)
    tenant: Tenant = kernel_services.tenant_create(name="demo")[0]
    said = append_messages(tenant, "alice", "s1", ["I live in Lisbon now, I think", "Маша sent me a postcard"],
                           run_job=False).created
    fact = profile_services.fact_upsert(tenant=tenant, user_id="alice", key="location", value="Lisbon",
                                        confidence=0.55, source=UserProfile.Source.RULES, source_message=said[0]).fact
    masha, maria = (people_services.person_create_from_draft(tenant_id=tenant.pk, user_id="alice",
                                                             draft=PersonDraft(display_name=name))
                    for name in ("Маша", "Мария"))
    PersonMention.objects.create(tenant=tenant, user_id="alice", person=masha, message=said[1])
    proposal = people_services.merge_proposal_create(source=masha, target=maria, rule="diminutive", score=0.85,
                                                     evidence=[{"rule": "diminutive", "detail": "маша ↔ мария"}])
    MemoryReview.objects.create(tenant=tenant, user_id="alice", conf_uid="neiri", text="Alice might move to Oslo",
                                kind="user", category="FactsAboutUser", confidence=0.4)

    settings.LORE_GOLDEN_DIR = tmp_path
    (tmp_path / "dnd5e").mkdir()
    (tmp_path / "dnd5e" / "srd.json").write_text(as_bytes({"queries": [
        {"id": "en-1", "language": "en", "query": "teleport 30 feet in mist", "expected": ["Spells/misty-step"]},
        {"id": "ru-1", "language": "ru", "query": "существо не видит", "expected": ["Conditions/blinded"]},
    ]}).decode())
    world = lore_services.world_create(tenant=tenant, slug="dnd5e", name="D&D", languages=["en", "ru"])
    files = [lore_services.UploadedFile("Spells.json", as_bytes(SPELLS), "en"),
             lore_services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_EN), "en"),
             lore_services.UploadedFile("Conditions.json", as_bytes(CONDITIONS_RU), "ru")]
    first = lore_services.knowledge_ingest(world=world, domain="srd", files=files, actor="test")
    lore_services.lore_version_publish(version=first, actor="test", force=True, reason="fixture")
    edit = edits.knowledge_edit_propose(world=world, domain="srd", action="update", language="en",
                                        entry_id="Spells/fireball", text=NEW_FIREBALL, reason="house rule",
                                        actor="api-key:mh_demo (gm)")
    return {"tenant": tenant, "fact": fact, "proposal": proposal, "edit": edit, "world": world}


@pytest.fixture
def page(live_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.skip(f"no browser: {CHROMIUM} is missing (.ci/browser-deps installs Debian's chromium where "
                    "apt-get can run; MEMORYHUB_CHROMIUM names another Chromium)")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API keeps an event loop in this thread, and Django then refuses ORM calls
    # from it as if they came from async code; the checks below are plain synchronous reads.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            tab = browser.new_page(viewport={"width": 1280, "height": 900}, base_url=live_server.url)
            tab.set_default_timeout(30_000)
            yield tab
        finally:
            # The checks' queries ran on a connection of their own (Django keeps one per asyncio
            # context, and Playwright's loop is one): closed here, where it is visible.
            connections.close_all()
            browser.close()


def dashboard_counts(tab: Any) -> dict[str, int]:
    rows = tab.locator("#review-dashboard tr.review-queue")
    counts = {}
    for i in range(rows.count()):
        row = rows.nth(i)
        counts[row.locator("th").inner_text().strip()] = int(row.locator("td.review-count").inner_text())
    return counts


def messages(tab: Any) -> str:
    return tab.locator("ul.messagelist").inner_text()


def follow(tab: Any, selector: str) -> None:
    """Click what leads to another page, and wait until that page has loaded."""
    with tab.expect_navigation():
        tab.click(selector)


def run_action(tab: Any, action: str, item_pk: int) -> None:
    """Tick one row of a change list, choose the action, press Go."""
    tab.check(f"input[name='_selected_action'][value='{item_pk}']")
    tab.select_option("select[name='action']", action)
    follow(tab, "button[name='index']")


def test_an_editor_works_through_the_queues_in_a_real_browser(page: Any, review_data: dict[str, Any],
                                                              record_property: Any) -> None:
    started = time.perf_counter()
    SHOTS.mkdir(parents=True, exist_ok=True)

    def shot(name: str) -> None:
        path = SHOTS / f"{name}.png"
        page.screenshot(path=str(path), full_page=True)
        record_property("screenshot", str(path.relative_to(settings.BASE_DIR)))

    # Log in: the admin's home is the review dashboard.
    page.goto("/admin/")
    page.fill("#id_username", "editor")
    page.fill("#id_password", PASSWORD)
    shot("01-login")
    follow(page, "input[type='submit']")
    assert dashboard_counts(page) == {QUEUES["facts"]: 1, QUEUES["merges"]: 1, QUEUES["lore"]: 1,
                                      QUEUES["memories"]: 1}
    assert "alice: location = Lisbon (0.55)" in page.inner_text("#review-dashboard")
    assert "Nothing decided yet today." in page.inner_text("#review-decisions")
    shot("02-dashboard")

    # A fact: the queue shows it beside the message it came from; approve it.
    follow(page, f"#review-dashboard a:text-is('{QUEUES['facts']}')")
    assert "I live in Lisbon now, I think" in page.inner_text("#result_list")
    run_action(page, "approve", review_data["fact"].pk)
    assert "1 fact(s) approved" in messages(page)
    shot("03-fact-approved")
    fact = UserProfile.objects.get(pk=review_data["fact"].pk)
    assert (fact.status, fact.confidence) == ("active", 1.0)

    # A merge: both people side by side, approve, then undo.
    proposal = review_data["proposal"]
    page.goto("/admin/")
    follow(page, f"#review-dashboard a:text-is('{QUEUES['merges']}')")
    follow(page, f"#result_list a[href*='/mergeproposal/{proposal.pk}/change/']")
    assert "Source (merged away)" in page.content() and "маша ↔ мария" in page.content()
    shot("04-merge-proposal")
    follow(page, "input[name='_approve']")
    assert f"Proposal #{proposal.pk} approved and merged." in messages(page)
    assert Person.objects.get(pk=proposal.source_id).status == Person.Status.MERGED
    shot("05-merge-approved")
    follow(page, "input[name='_undo']")
    assert f"Proposal #{proposal.pk} undone." in messages(page)
    assert Person.objects.get(pk=proposal.source_id).status == Person.Status.ACTIVE
    assert MergeProposal.objects.get(pk=proposal.pk).status == "undone"
    shot("06-merge-undone")

    # A lore edit: the diff, approve (builds 1.0.1, staged), run the smoke queries, publish.
    edit = review_data["edit"]
    page.goto("/admin/")
    follow(page, f"#review-dashboard a:text-is('{QUEUES['lore']}')")
    follow(page, f"#result_list a[href*='/knowledgeedit/{edit.pk}/change/']")
    assert "ember" in page.inner_text("table.diff") and "8d6" in page.inner_text("table.diff")
    page.go_back(wait_until="load")
    run_action(page, "approve", edit.pk)
    assert "1 edit(s) approved" in messages(page)
    shot("07-lore-edit-approved")
    built = KnowledgeVersion.objects.get(world=review_data["world"], version="1.0.1")
    assert built.status == KnowledgeVersion.Status.STAGED
    page.goto("/admin/lore/knowledgeversion/")
    run_action(page, "run_smoke", built.pk)
    assert "smoke passed" in messages(page)
    run_action(page, "publish", built.pk)
    assert "1 version(s) published" in messages(page)
    shot("08-lore-published")
    latest = Alias.objects.get(world=review_data["world"], domain="srd", name=Alias.Name.LATEST)
    assert latest.version_id == built.pk

    # Back home: nothing waits but the typed memory, and today's decisions say who did what.
    page.goto("/admin/")
    assert dashboard_counts(page) == {QUEUES["facts"]: 0, QUEUES["merges"]: 0, QUEUES["lore"]: 0,
                                      QUEUES["memories"]: 1}
    decided = page.inner_text("#review-decisions")
    for line in ("fact approved: alice location = Lisbon", "merge undone: alice Маша ↔ Мария",
                 "lore edit approved: update Spells/fireball -> 1.0.1", "admin:editor"):
        assert line in decided, decided
    shot("09-dashboard-after")
    record_property("browser_seconds", round(time.perf_counter() - started, 1))
