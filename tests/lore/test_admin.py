from __future__ import annotations

from django.contrib.auth import get_user_model
from django.test import Client

from lore import services, smoke
from lore.models import KnowledgeChange, KnowledgeVersion


def test_admin_publish_action_moves_latest_and_audits_the_reviewer(staged, golden_dir):
    smoke.version_smoke(version=staged)
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    assert client.get("/admin/lore/knowledgeversion/").status_code == 200
    response = client.post("/admin/lore/knowledgeversion/",
                           {"action": "publish", "_selected_action": [staged.pk]}, follow=True)
    assert response.status_code == 200
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.LIVE
    change = KnowledgeChange.objects.get()
    assert change.actor == "admin:ed" and change.action == "publish"
    # Nothing to roll back to: reported, not raised.
    response = client.post("/admin/lore/knowledgeversion/",
                           {"action": "rollback", "_selected_action": [staged.pk]}, follow=True)
    assert "no earlier live version" in response.content.decode()
    assert client.get("/admin/lore/knowledgechange/").status_code == 200


def test_admin_refuses_to_publish_two_versions_of_one_world_and_domain(staged, small_files, golden_dir):
    """Published one after the other, the second ticked version (the older, in the list's order) ended
    live, under "2 version(s) published": an editor ticking "the new ones" moved latest backwards."""
    newer = services.knowledge_ingest(world=staged.world, domain="srd", files=small_files[:2], actor="test")
    for version in (staged, newer):
        smoke.version_smoke(version=version)
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    for action, extra in (("publish", {}), ("force_publish", {"apply": "1", "reason": "both, please"})):
        page = client.post("/admin/lore/knowledgeversion/",
                           {"action": action, "_selected_action": [newer.pk, staged.pk], **extra}, follow=True)
        assert page.status_code == 200
        text = page.content.decode()
        assert f"Nothing was published: {staged.version}, {newer.version} of dnd5e/srd are selected" in text
        assert not KnowledgeChange.objects.exists()
        assert not KnowledgeVersion.objects.filter(status=KnowledgeVersion.Status.LIVE).exists()
    client.post("/admin/lore/knowledgeversion/", {"action": "publish", "_selected_action": [newer.pk]})
    newer.refresh_from_db()
    assert newer.status == KnowledgeVersion.Status.LIVE


def test_admin_publishes_a_world_without_golden_queries_by_a_forced_publish_with_a_reason(staged, settings,
                                                                                           tmp_path):
    """A new world has no golden file, so it can run no smoke, and the admin's publish refused it for
    ever: an editor who approved its edits had to leave the admin for the API's `force`."""
    settings.LORE_GOLDEN_DIR = tmp_path
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    smoked = client.post("/admin/lore/knowledgeversion/", {"action": "run_smoke", "_selected_action": [staged.pk]},
                         follow=True).content.decode()
    assert "No golden queries" in smoked and "forced publish with a reason" in smoked
    form = client.post("/admin/lore/knowledgeversion/", {"action": "force_publish", "_selected_action": [staged.pk]})
    assert form.status_code == 200 and "Publish without a passing smoke run" in form.content.decode()
    blank = client.post("/admin/lore/knowledgeversion/", {"action": "force_publish", "_selected_action": [staged.pk],
                                                          "apply": "1", "reason": ""})
    assert "This field is required" in blank.content.decode()
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.STAGED
    done = client.post("/admin/lore/knowledgeversion/", {"action": "force_publish", "_selected_action": [staged.pk],
                                                         "apply": "1", "reason": "new world, no golden queries yet"},
                       follow=True).content.decode()
    assert "1 version(s) published (forced)" in done
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.LIVE
    change = KnowledgeChange.objects.get()
    assert (change.action, change.actor, change.reason) == ("forced_publish", "admin:ed",
                                                            "new world, no golden queries yet")


def test_admin_smoke_action_runs_the_golden_queries_so_the_version_can_be_published(staged, golden_dir, settings,
                                                                                     tmp_path):
    admin_user = get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456")
    client = Client()
    client.force_login(admin_user)
    refused = client.post("/admin/lore/knowledgeversion/", {"action": "publish", "_selected_action": [staged.pk]},
                          follow=True).content.decode()
    assert "no smoke run" in refused
    ran = client.post("/admin/lore/knowledgeversion/", {"action": "run_smoke", "_selected_action": [staged.pk]},
                      follow=True).content.decode()
    assert "smoke passed (en hit@5 1.00, ru hit@5 1.00)" in ran
    staged.refresh_from_db()
    assert staged.smoke["overall"]["n"] == 3 and staged.status == KnowledgeVersion.Status.STAGED
    client.post("/admin/lore/knowledgeversion/", {"action": "publish", "_selected_action": [staged.pk]})
    staged.refresh_from_db()
    assert staged.status == KnowledgeVersion.Status.LIVE

    settings.LORE_GOLDEN_DIR = tmp_path / "none"
    missing = client.post("/admin/lore/knowledgeversion/", {"action": "run_smoke", "_selected_action": [staged.pk]},
                          follow=True).content.decode()
    assert "No golden queries at LORE_GOLDEN_DIR/dnd5e/srd.json" in missing
    assert str(tmp_path) not in missing  # the server's directories are not shown


def test_version_rows_name_their_tenant_and_the_list_can_be_searched(staged, small_files):
    """Two tenants' `dnd5e:srd:1.0.0` rows read the same, and `?q=` was ignored (found by a QA trial)."""
    from lore import services
    from memoryhub import services as kernel_services

    other, _ = kernel_services.tenant_create(name="guild-b")
    world = services.world_create(tenant=other, slug="dnd5e", languages=["en", "ru"])
    services.knowledge_ingest(world=world, domain="srd", files=small_files, actor="test")
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("ed", "ed@example.com", "pw-123456"))
    page = client.get("/admin/lore/knowledgeversion/").content.decode()
    assert "guild-b" in page and staged.tenant.name in page
    found = client.get("/admin/lore/knowledgeversion/", {"q": "guild-b"}).content.decode()
    assert "1 result" in found and "guild-b" in found
