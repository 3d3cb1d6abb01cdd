"""The profile block of the prompt: what reaches it, how it reads, in which language."""

from __future__ import annotations

from profiles import services
from profiles.models import UserProfile
from profiles.selectors import profile_facts, profile_for_context
from tests.factories import make_tenant


def save(tenant, key: str, value: str, confidence: float = 1.0, user_id: str = "u1") -> UserProfile:
    return services.fact_upsert(tenant=tenant, user_id=user_id, key=key, value=value, confidence=confidence,
                                source=UserProfile.Source.API).fact


def test_nothing_known_gives_an_empty_block(tenant) -> None:
    assert profile_for_context(tenant_id=tenant.pk, user_id="u1") == ("", [])


def test_active_facts_render_one_compact_line_per_key_in_registry_order(tenant) -> None:
    save(tenant, "zodiac", "Leo")
    save(tenant, "likes", "tea", 0.8)
    save(tenant, "likes", "jazz")
    save(tenant, "location", "Berlin")
    save(tenant, "name", "Anna")
    header, lines = profile_for_context(tenant_id=tenant.pk, user_id="u1")
    assert header == "What we know about the user (long-term memory):"
    assert lines == ["name: Anna", "location: Berlin", "likes: jazz, tea", "zodiac: Leo"]


def test_pending_rejected_and_low_confidence_facts_never_reach_the_prompt(tenant, reviewer, settings) -> None:
    save(tenant, "name", "Anna", 0.9)
    save(tenant, "name", "Anya", 0.8)  # competing, lower: pending
    save(tenant, "age", "30", 0.5)  # below the threshold: pending
    wrong = save(tenant, "occupation", "astronaut")
    services.fact_reject(fact=wrong, reviewer=reviewer)
    # Active but decayed below the threshold.
    UserProfile.objects.filter(key="name").filter(status="active").update(confidence=0.65)
    assert profile_for_context(tenant_id=tenant.pk, user_id="u1") == ("", [])
    settings.PROFILE_CONFIDENCE_THRESHOLD = 0.6
    assert profile_for_context(tenant_id=tenant.pk, user_id="u1")[1] == ["name: Anna"]


def test_header_follows_the_users_language_preference(tenant) -> None:
    save(tenant, "name", "张三")
    save(tenant, "language_preference", "中文")
    header, lines = profile_for_context(tenant_id=tenant.pk, user_id="u1")
    assert header == "以下是用户的长期记忆信息："
    assert lines == ["name: 张三", "language_preference: zh"]
    save(tenant, "language_preference", "русский")
    assert profile_for_context(tenant_id=tenant.pk, user_id="u1")[0] == "Долговременная память о пользователе:"


def test_other_users_and_tenants_facts_stay_out(tenant) -> None:
    other_tenant, _ = make_tenant("tenant-other")
    save(tenant, "name", "Anna")
    save(tenant, "name", "Boris", user_id="u2")
    save(other_tenant, "name", "Chen")
    assert profile_for_context(tenant_id=tenant.pk, user_id="u1")[1] == ["name: Anna"]
    assert [f.value for f in profile_facts(tenant_id=other_tenant.pk, user_id="u1")] == ["Chen"]
