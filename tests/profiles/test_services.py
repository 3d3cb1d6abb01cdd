"""Fact writes: upsert with history, the confidence rule for competing values, review, decay."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from memoryhub.exceptions import ApplicationError, NotFound
from profiles import services
from profiles.models import FactEvent, UserProfile
from profiles.services import Outcome
from tests.factories import make_tenant

Status = UserProfile.Status
API, LLM, RULES = UserProfile.Source.API, UserProfile.Source.LLM, UserProfile.Source.RULES


def upsert(tenant, key: str, value: str, confidence: float = 1.0, source: str = API, user_id: str = "u1", **kw):
    return services.fact_upsert(tenant=tenant, user_id=user_id, key=key, value=value, confidence=confidence,
                                source=source, **kw)


def facts(tenant, key: str, user_id: str = "u1") -> dict[str, tuple[str, float]]:
    return {f.value: (f.status, f.confidence) for f in UserProfile.objects.filter(tenant=tenant, user_id=user_id,
                                                                                  key=key)}


def history(tenant, key: str, user_id: str = "u1") -> list[tuple[str, str, str, str]]:
    return [(e.action, e.actor, e.old_value, e.new_value)
            for e in FactEvent.objects.filter(tenant=tenant, user_id=user_id, key=key).order_by("id")]


# --- upsert and history ----------------------------------------------------------------------
def test_new_fact_is_saved_active_with_a_created_event(tenant) -> None:
    write = upsert(tenant, "name", "Anna")
    assert write.outcome == Outcome.CREATED
    assert facts(tenant, "name") == {"Anna": (Status.ACTIVE, 1.0)}
    assert history(tenant, "name") == [("created", "api", "", "Anna")]


def test_saving_the_same_value_again_confirms_it_without_a_second_row(tenant) -> None:
    upsert(tenant, "location", "Berlin", 0.8)
    write = upsert(tenant, "location", "berlin ", 0.9)
    assert write.outcome == Outcome.CONFIRMED
    assert facts(tenant, "location") == {"berlin": (Status.ACTIVE, 0.9)}  # the API's spelling wins
    assert [a for a, *_ in history(tenant, "location")] == ["created", "confirmed"]


def test_every_change_keeps_the_previous_value_in_the_history(tenant) -> None:
    upsert(tenant, "name", "Anna")
    upsert(tenant, "name", "Anya")
    upsert(tenant, "name", "Ann", reason="user corrected it")
    assert facts(tenant, "name") == {"Ann": (Status.ACTIVE, 1.0)}
    assert history(tenant, "name") == [
        ("created", "api", "", "Anna"), ("replaced", "api", "Anna", "Anya"), ("replaced", "api", "Anya", "Ann"),
    ]
    last = FactEvent.objects.filter(key="name").latest("id")
    assert last.reason == "user corrected it" and last.old_confidence == 1.0 and last.new_status == "active"


def test_keys_are_normalised_and_synonyms_in_three_languages_map_onto_canonical_keys(tenant) -> None:
    assert upsert(tenant, "Full Name", "Anna").fact.key == "name"
    assert upsert(tenant, "Возраст", "30").fact.key == "age"
    assert upsert(tenant, "职业", "软件工程师").fact.key == "occupation"
    assert upsert(tenant, "Favourite-Colour", "green").fact.key == "favorite_color"
    assert upsert(tenant, "любимый цвет", "зелёный").fact.key == "lyubimyj_cvet"
    with pytest.raises(ApplicationError) as exc:
        upsert(tenant, "狗的名字", "Rex")
    assert exc.value.field == "key"


def test_values_take_their_canonical_form(tenant) -> None:
    assert upsert(tenant, "age", "30 years old").fact.value == "30"
    assert upsert(tenant, "language_preference", "中文").fact.value == "zh"
    assert upsert(tenant, "preferred_timezone", "utc+3").fact.value == "UTC+03:00"
    with pytest.raises(ApplicationError) as exc:
        upsert(tenant, "age", "two hundred")
    assert exc.value.field == "value"


# --- the confidence rule ---------------------------------------------------------------------
def test_competing_value_with_lower_confidence_waits_for_review_beside_the_current_one(tenant) -> None:
    upsert(tenant, "location", "Berlin", 0.9, source=RULES)
    write = upsert(tenant, "location", "Paris", 0.8, source=LLM)
    assert write.outcome == Outcome.PENDING
    assert facts(tenant, "location") == {"Berlin": (Status.ACTIVE, 0.9), "Paris": (Status.PENDING, 0.8)}
    assert history(tenant, "location")[-1] == ("proposed", "llm", "", "Paris")


def test_competing_value_with_equal_or_higher_confidence_replaces_the_current_one(tenant) -> None:
    upsert(tenant, "location", "Berlin", 0.8, source=RULES)
    write = upsert(tenant, "location", "Paris", 0.8, source=LLM)
    assert (write.outcome, write.replaced) == (Outcome.REPLACED, "Berlin")
    assert facts(tenant, "location") == {"Paris": (Status.ACTIVE, 0.8)}
    assert history(tenant, "location")[-1] == ("replaced", "llm", "Berlin", "Paris")


@pytest.mark.parametrize(("first", "again", "key"), [
    ("Anna", "Анна", "name"), ("Игорь", "Igor", "name"), ("Berlin", "Берлин", "location"),
])
def test_one_value_in_latin_and_cyrillic_letters_is_confirmed_not_replaced(tenant, first: str, again: str,
                                                                            key: str) -> None:
    """QA (`make run`, the demo user): "My name is Anna", then "Меня зовут Анна", replaced "Anna" with "Анна", and
    the context showed her introduction as a value since changed, beside the turn that "corrected" it."""
    upsert(tenant, key, first, 0.9, source=RULES)
    write = upsert(tenant, key, again, 0.9, source=RULES)
    assert write.outcome == Outcome.CONFIRMED and write.replaced is None
    assert list(facts(tenant, key)) == [first]
    assert [a for a, *_ in history(tenant, key)] == ["created", "confirmed"]
    # Another value in the other script competes with it, as any other value does.
    other = upsert(tenant, key, "Мария" if key == "name" else "Москва", 0.9, source=RULES)
    assert other.outcome == Outcome.PENDING and len(facts(tenant, key)) == 2


@pytest.mark.parametrize(("before", "said", "after"), [
    ("I live in Boston.", "I moved to Seattle last week.", ("Boston", "Seattle")),
    ("Я живу в Москве.", "Я переехал в Казань.", ("Москва", "Казань")),
    ("我住在北京。", "我搬到杭州了。", ("北京", "杭州")),
])
def test_a_stated_change_replaces_a_more_confident_value_which_stays_in_the_history(
    tenant, say, before: str, said: str, after: tuple[str, str]
) -> None:
    old, new = after
    replaced = upsert(tenant, "location", old, 0.9, source=RULES, source_message=say(tenant, before)).fact
    write = upsert(tenant, "location", new, 0.8, source=RULES, source_message=say(tenant, said), change=True)
    assert (write.outcome, write.replaced) == (Outcome.REPLACED, old)
    assert facts(tenant, "location") == {new: (Status.ACTIVE, 0.8)}
    event = FactEvent.objects.filter(key="location").latest("id")
    assert (event.action, event.old_value, event.old_confidence, event.new_value) == ("replaced", old, 0.9, new)
    assert event.reason == f"stated as a change: {said}"
    assert event.meta == {"change": True, "displaced_fact": replaced.pk}


def test_a_stated_change_still_needs_the_threshold_and_must_be_newer_than_the_current_value(tenant, say) -> None:
    below = upsert(tenant, "location", "Seattle", 0.6, source=RULES, user_id="u2",
                   source_message=say(tenant, "I moved to Seattle.", user_id="u2"), change=True)
    assert below.outcome == Outcome.PENDING
    moved = say(tenant, "I moved to Seattle.")
    settled = say(tenant, "I live in Boston now.")  # said after the move
    upsert(tenant, "location", "Boston", 1.0, source_message=settled)
    # Reading the older message again (a re-extraction) does not move the user back.
    write = upsert(tenant, "location", "Seattle", 0.8, source=RULES, source_message=moved, change=True)
    assert write.outcome == Outcome.PENDING
    assert facts(tenant, "location") == {"Boston": (Status.ACTIVE, 1.0), "Seattle": (Status.PENDING, 0.8)}


def end(tenant, key: str, value: str, confidence: float = 0.8, user_id: str = "u1", **kw) -> list[str]:
    return services.fact_end(tenant=tenant, user_id=user_id, key=key, value=value, confidence=confidence,
                             source=RULES, **kw)


@pytest.mark.parametrize(("held", "said", "named"), [
    ("Google", "I quit Google.", "Google"),
    ("Mass General Hospital", "I quit the hospital.", "hospital"),
    ("Mass General Hospital", "I quit my job.", ""),
    ("Городская больница", "Я уволилась из больницы.", "больница"),
    ("Сбербанк", "Я уволился.", ""),
    ("协和医院", "我从医院辞职了。", "医院"),
    ("腾讯", "我辞职了。", ""),
])
def test_an_employer_stated_as_left_leaves_the_profile_and_stays_in_the_history(
    tenant, say, held: str, said: str, named: str
) -> None:
    """"I quit the hospital" left "Mass General Hospital" the user's employer: nothing could end a value."""
    fact = upsert(tenant, "employer", held, 0.9, source=RULES, source_message=say(tenant, "earlier")).fact
    message = say(tenant, said)
    assert end(tenant, "employer", named, source_message=message) == [held]
    assert facts(tenant, "employer") == {}
    event = FactEvent.objects.filter(key="employer").latest("id")
    assert (event.action, event.actor, event.old_value, event.old_confidence, event.fact_ref) == (
        "deleted", "rules", held, 0.9, fact.pk)
    assert (event.reason, event.meta, event.source_message_id) == (f"stated as ended: {said}", {"ended": True},
                                                                   message.pk)


def test_an_ending_leaves_other_values_the_same_message_and_newer_ones_alone(tenant, say, settings) -> None:
    upsert(tenant, "employer", "Amazon", 0.9, source=RULES, source_message=say(tenant, "I work at Amazon."))
    assert end(tenant, "employer", "hospital", source_message=say(tenant, "I quit the hospital.")) == []
    assert end(tenant, "employer", "Google") == []
    assert end(tenant, "employer", "", 0.6) == []  # below the threshold
    # "I work at Amazon now, I quit my old job": the job it names is the new one.
    both = say(tenant, "I work at Amazon now, I quit my old job.")
    upsert(tenant, "employer", "Amazon", 0.85, source=RULES, source_message=both)
    assert end(tenant, "employer", "", source_message=both) == []
    # A re-run of an older message ends nothing said since.
    old = say(tenant, "I quit my job.")
    upsert(tenant, "employer", "Stripe", 0.9, source=RULES, source_message=say(tenant, "I work at Stripe now."),
           change=True)
    assert end(tenant, "employer", "", source_message=old) == []
    assert facts(tenant, "employer") == {"Stripe": (Status.ACTIVE, 0.9)}
    assert end(tenant, "likes", "") == []  # "whatever it holds" of a set is nothing in particular
    settings.PROFILE_CONFIDENCE_THRESHOLD = 0.5
    assert end(tenant, "employer", "", 0.6) == ["Stripe"]


def test_fact_below_the_threshold_waits_for_review(tenant, settings) -> None:
    assert upsert(tenant, "occupation", "pilot", 0.69).outcome == Outcome.PENDING
    settings.PROFILE_CONFIDENCE_THRESHOLD = 0.5
    assert upsert(tenant, "hometown", "Oslo", 0.6).outcome == Outcome.CREATED


def test_multi_valued_key_holds_a_set_of_values(tenant) -> None:
    upsert(tenant, "likes", "jazz")
    upsert(tenant, "likes", "tea", 0.8, source=RULES)
    upsert(tenant, "likes", "Jazz ")
    assert facts(tenant, "likes") == {"Jazz": (Status.ACTIVE, 1.0), "tea": (Status.ACTIVE, 0.8)}


def test_a_restatement_from_another_message_raises_confidence_and_can_make_a_pending_fact_active(
    tenant, say
) -> None:
    first, second = say(tenant, "I'm Tom."), say(tenant, "Tom here again.")
    assert upsert(tenant, "name", "Tom", 0.6, source=RULES, source_message=first).outcome == Outcome.PENDING
    write = upsert(tenant, "name", "Tom", 0.6, source=RULES, source_message=second)
    assert write.outcome == Outcome.CONFIRMED
    assert write.fact.status == Status.ACTIVE and write.fact.confidence == pytest.approx(0.84)
    assert write.fact.source_message == second


def test_the_same_message_never_counts_twice(tenant, say) -> None:
    message = say(tenant, "I live in Lisbon.")
    upsert(tenant, "location", "Lisbon", 0.6, source=RULES, source_message=message)
    assert upsert(tenant, "location", "Lisbon", 0.6, source=RULES, source_message=message).outcome == Outcome.UNCHANGED
    assert facts(tenant, "location") == {"Lisbon": (Status.PENDING, 0.6)}
    assert len(history(tenant, "location")) == 1


def test_machine_confirmations_never_reach_reviewed_confidence(tenant, say) -> None:
    for i in range(5):
        upsert(tenant, "location", "Lisbon", 0.9, source=LLM, source_message=say(tenant, f"Lisbon {i}"))
    assert facts(tenant, "location")["Lisbon"][1] == services.MACHINE_MAX_CONFIDENCE


def test_a_rejected_value_is_not_proposed_again_by_extraction_but_the_api_can_restore_it(tenant, reviewer) -> None:
    write = upsert(tenant, "occupation", "astronaut", 0.8, source=LLM)
    services.fact_reject(fact=write.fact, reviewer=reviewer, reason="joke")
    assert upsert(tenant, "occupation", "astronaut", 0.9, source=LLM).outcome == Outcome.IGNORED
    assert facts(tenant, "occupation") == {"astronaut": (Status.REJECTED, 0.8)}
    assert upsert(tenant, "occupation", "astronaut").outcome == Outcome.CONFIRMED
    assert facts(tenant, "occupation") == {"astronaut": (Status.ACTIVE, 1.0)}


def test_api_lowering_the_confidence_of_an_active_fact_below_the_threshold_sends_it_to_review(tenant) -> None:
    upsert(tenant, "name", "Anna")
    write = upsert(tenant, "name", "Anna", 0.4)
    assert (write.outcome, write.fact.status) == (Outcome.PENDING, Status.PENDING)
    assert history(tenant, "name")[-1][0] == "updated"


def test_invalid_confidence_and_foreign_source_message_are_refused(tenant, say) -> None:
    with pytest.raises(ApplicationError) as exc:
        upsert(tenant, "name", "Anna", 1.5)
    assert exc.value.field == "confidence"
    other_users_message = say(tenant, "hello", user_id="u2")
    with pytest.raises(ApplicationError) as exc:
        upsert(tenant, "name", "Anna", source_message=other_users_message)
    assert exc.value.field == "source_message_id"


def test_users_and_tenants_do_not_share_facts(tenant) -> None:
    other_tenant, _ = make_tenant("tenant-other")
    upsert(tenant, "name", "Anna")
    upsert(tenant, "name", "Boris", user_id="u2")
    upsert(other_tenant, "name", "Chen")
    assert facts(tenant, "name") == {"Anna": (Status.ACTIVE, 1.0)}
    assert facts(other_tenant, "name") == {"Chen": (Status.ACTIVE, 1.0)}


# --- review ----------------------------------------------------------------------------------
def test_approving_a_competing_value_replaces_the_current_one_and_records_the_reviewer(tenant, reviewer) -> None:
    upsert(tenant, "location", "Berlin", 0.9, source=RULES)
    pending = upsert(tenant, "location", "Paris", 0.75, source=LLM).fact
    services.fact_approve(fact=pending, reviewer=reviewer, reason="user moved")
    assert facts(tenant, "location") == {"Paris": (Status.ACTIVE, 1.0)}
    event = FactEvent.objects.filter(key="location").latest("id")
    assert (event.action, event.actor, event.reviewer, event.who) == ("approved", "admin", reviewer, "admin:alice")
    assert (event.old_value, event.new_value, event.old_status, event.new_status) == ("Berlin", "Paris", "pending",
                                                                                      "active")
    assert event.reason == "user moved"


def test_edit_and_approve_corrects_the_value_and_keeps_the_proposal_in_the_history(tenant, reviewer) -> None:
    pending = upsert(tenant, "hometown", "Kiev", 0.5, source=RULES).fact
    services.fact_edit_approve(fact=pending, reviewer=reviewer, value="Kyiv")
    assert facts(tenant, "hometown") == {"Kyiv": (Status.ACTIVE, 1.0)}
    event = FactEvent.objects.filter(key="hometown").latest("id")
    assert (event.action, event.old_value, event.new_value, event.meta) == ("edited", "Kiev", "Kyiv",
                                                                            {"proposed": "Kiev"})


def test_edit_and_approve_into_a_value_already_held_merges_the_two(tenant, reviewer) -> None:
    upsert(tenant, "location", "Berlin", 0.9, source=RULES)
    pending = upsert(tenant, "location", "berlin, germany", 0.5, source=LLM).fact
    services.fact_edit_approve(fact=pending, reviewer=reviewer, value="BERLIN")
    assert facts(tenant, "location") == {"BERLIN": (Status.ACTIVE, 1.0)}
    event = FactEvent.objects.filter(key="location").latest("id")
    assert (event.old_value, event.new_value, event.meta["proposed"]) == ("Berlin", "BERLIN", "berlin, germany")


def test_edit_and_approve_refuses_a_sensitive_value(tenant, reviewer) -> None:
    pending = upsert(tenant, "note", "call back", 0.5, source=RULES).fact
    with pytest.raises(ApplicationError) as exc:
        services.fact_edit_approve(fact=pending, reviewer=reviewer, value="card 4111 1111 1111 1111")
    assert (exc.value.code, exc.value.field) == ("sensitive_value", "value")
    assert facts(tenant, "note") == {"call back": (Status.PENDING, 0.5)}


def test_deleting_a_key_records_the_deletion_and_unknown_keys_are_not_found(tenant) -> None:
    upsert(tenant, "likes", "jazz")
    upsert(tenant, "likes", "tea")
    assert services.fact_delete(tenant=tenant, user_id="u1", key="likes", value="TEA") == 1
    assert facts(tenant, "likes") == {"jazz": (Status.ACTIVE, 1.0)}
    with pytest.raises(NotFound) as exc:  # the key has facts, not this one: the value is at fault
        services.fact_delete(tenant=tenant, user_id="u1", key="likes", value="tea")
    assert (exc.value.field, exc.value.message) == ("value", "No value 'tea' under 'likes'; it holds: 'jazz'.")
    assert services.fact_delete(tenant=tenant, user_id="u1", key="likes") == 1
    assert history(tenant, "likes")[-2:] == [("deleted", "api", "tea", ""), ("deleted", "api", "jazz", "")]
    with pytest.raises(NotFound):
        services.fact_delete(tenant=tenant, user_id="u1", key="likes")


# --- decay -----------------------------------------------------------------------------------
def _age_fact(fact: UserProfile, days: int) -> None:
    UserProfile.objects.filter(pk=fact.pk).update(confirmed_at=timezone.now() - timedelta(days=days))


def test_decay_lowers_only_active_facts_not_confirmed_for_the_configured_time(tenant, settings) -> None:
    settings.PROFILE_DECAY_AFTER_DAYS = 100
    settings.PROFILE_DECAY_FACTOR = 0.5
    stale = upsert(tenant, "location", "Berlin", 0.9).fact
    fresh = upsert(tenant, "name", "Anna", 0.9).fact
    stale_pending = upsert(tenant, "age", "30", 0.5).fact
    _age_fact(stale, 101)
    _age_fact(fresh, 99)
    _age_fact(stale_pending, 500)
    assert services.facts_decay() == 1
    assert facts(tenant, "location") == {"Berlin": (Status.ACTIVE, 0.45)}
    assert facts(tenant, "name") == {"Anna": (Status.ACTIVE, 0.9)}
    assert facts(tenant, "age") == {"30": (Status.PENDING, 0.5)}
    event = FactEvent.objects.filter(key="location").latest("id")
    assert (event.action, event.actor, event.old_confidence, event.new_confidence) == ("decayed", "system", 0.9, 0.45)


def test_decay_runs_at_most_once_per_interval_so_a_second_run_changes_nothing(tenant, settings) -> None:
    settings.PROFILE_DECAY_INTERVAL_DAYS = 30
    fact = upsert(tenant, "location", "Berlin", 0.9).fact
    _age_fact(fact, 400)
    assert services.facts_decay() == 1
    assert services.facts_decay() == 0
    assert services.facts_decay(now=timezone.now() + timedelta(days=31)) == 1
    assert facts(tenant, "location")["Berlin"][1] == pytest.approx(0.729)


def test_a_decayed_fact_can_be_replaced_by_a_fresh_statement(tenant, settings) -> None:
    settings.PROFILE_DECAY_FACTOR = 0.5
    fact = upsert(tenant, "location", "Berlin", 0.9, source=RULES).fact
    _age_fact(fact, 365)
    services.facts_decay()
    assert upsert(tenant, "location", "Paris", 0.8, source=RULES).outcome == Outcome.REPLACED
