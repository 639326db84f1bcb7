"""The booking record at its edges (DECISIONS.md, scheduling): the invariants it refuses
to break, word for word, its day blocks around a DST change, and wall-clock instants."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

import pytest

from booking_core.bookings import MAX_DURATION_MINUTES, local_wall, wall_clock_instant
from tests.unit.bookings_support import NY, booked, local, order, single


def test_a_job_of_one_minute_and_one_of_23_hours_are_records() -> None:
    made = single()

    for minutes in (1, MAX_DURATION_MINUTES):
        record = single(duration_minutes=minutes, end=made.start + timedelta(minutes=minutes))
        assert record.end - record.start == timedelta(minutes=minutes)


@pytest.mark.parametrize("minutes", [0, MAX_DURATION_MINUTES + 1])
def test_a_job_of_no_minutes_or_over_23_hours_is_refused(minutes: int) -> None:
    made = single()

    with pytest.raises(ValueError, match=r"^duration_minutes must be 1\.\.1380$"):
        single(duration_minutes=minutes, end=made.start + timedelta(minutes=minutes))


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"end": datetime(2026, 3, 3, 15, tzinfo=UTC)}, "end must be start + duration_minutes"),
        ({"days": 0}, "days must be 1..14"),
        ({"days": 15}, "days must be 1..14"),
        ({"crew_ids": ()}, "a booking has at least one crew member"),
        ({"visit_index": -1}, "visit_index must be >= 0 and version >= 1"),
        ({"version": 0}, "visit_index must be >= 0 and version >= 1"),
        (
            {"completed_at": datetime(2026, 3, 3, 16, tzinfo=UTC)},
            "completed_at is set exactly when the booking is completed",
        ),
        (
            {"cancelled_at": datetime(2026, 3, 3, 16, tzinfo=UTC)},
            "cancelled_at is set exactly when the booking is cancelled",
        ),
    ],
)
def test_an_inconsistent_record_is_refused_naming_the_broken_rule(
    changes: dict[str, object], message: str
) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        single(**changes)


def test_a_multi_day_job_starting_at_the_repeated_hour_keeps_its_start_as_first_block() -> None:
    """New York falls back on 2026-11-01: 01:30 comes twice; the job starts at the second."""
    second_half_past_one = local(2026, 11, 1, 1, 30, fold=1)
    week_before = datetime(2026, 10, 25, tzinfo=UTC)
    made = booked(order(days=2), start=second_half_past_one, at=week_before)[0]

    blocks = made.day_blocks()

    assert blocks[0][0] == made.start == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    assert blocks[1][0] == datetime(2026, 11, 2, 6, 30, tzinfo=UTC)


def test_a_repeated_wall_clock_time_is_the_first_unless_fold_says_otherwise() -> None:
    night = date(2026, 11, 1)

    first = wall_clock_instant(night, time(1, 30), NY)
    second = wall_clock_instant(night, time(1, 30), NY, fold=1)

    assert first == datetime(2026, 11, 1, 5, 30, tzinfo=UTC)
    assert second == datetime(2026, 11, 1, 6, 30, tzinfo=UTC)
    assert first.tzinfo is UTC
    assert second.tzinfo is UTC


def test_a_wall_clock_time_skipped_by_dst_moves_forward_whatever_the_fold() -> None:
    night = date(2026, 3, 8)

    for fold in (0, 1):
        instant = wall_clock_instant(night, time(2, 30), NY, fold=fold)
        assert instant == datetime(2026, 3, 8, 7, 30, tzinfo=UTC)
        assert instant.tzinfo is UTC
        assert local_wall(instant, NY) == datetime(2026, 3, 8, 3, 30)
