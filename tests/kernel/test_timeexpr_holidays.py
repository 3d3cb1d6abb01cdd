"""A holiday named without "last" or "next" is read as a month is: by its clause's tense. Found trying the product
as a chat app: "Jess's mom Linda is coming to visit for Thanksgiving", said in September, was dated to the
Thanksgiving before in Linda's bio (the coming one was more than two months ahead, so the last one was taken)."""

from __future__ import annotations

from datetime import date

import pytest

from memoryhub import timeexpr
from memoryhub.dates import anchor_relative_dates

SEPTEMBER = date(2026, 9, 14)


@pytest.mark.parametrize(("text", "day"), [
    # Of the future, an intention or an arrangement: the coming one, however far.
    ("Jess's mom Linda is coming to visit for Thanksgiving.", "2026-11-26"),
    ("We will fly to my parents for Christmas.", "2026-12-25"),
    ("I booked flights for Christmas.", "2026-12-25"),
    ("На Новый год едем к родителям.", "2027-01-01"),
    ("Мы купили билеты на Новый год.", "2027-01-01"),
    ("春节我们要回老家。", "2027-02-06"),
    # Told in the past: the last one.
    ("Linda visited for Thanksgiving.", "2025-11-27"),
    ("We celebrated Christmas with my parents.", "2025-12-25"),
    ("На Новый год ездили к родителям.", "2026-01-01"),
    ("春节我们回了老家。", "2026-02-17"),
])
def test_a_holiday_is_read_by_its_tense(text: str, day: str) -> None:
    assert f"({day})" in anchor_relative_dates(text, SEPTEMBER)


def test_a_holiday_told_in_the_past_is_the_last_one_even_when_the_next_is_near() -> None:
    """Said on 10 December, "We celebrated Christmas" is the Christmas before; "Christmas dinner at my parents" (no
    tense) the one a fortnight on, as before."""
    december = date(2026, 12, 10)
    assert "(2025-12-25)" in anchor_relative_dates("We celebrated Christmas with my parents.", december)
    assert "(2026-12-25)" in anchor_relative_dates("Christmas dinner at my parents.", december)


def test_a_question_still_asks_for_any_years_holiday() -> None:
    """A question's holiday is a date term of any year's (its month), whatever its tense."""
    spans = timeexpr.mentions("What will we do for Christmas?", SEPTEMBER, query=True)
    assert spans and spans[0].month_only == 12
