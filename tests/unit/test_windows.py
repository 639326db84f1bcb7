"""Windows at their exact edges: a gap, a run or a drive that fits to the second, which
job is the previous stop, and which jobs and time off belong to a date
(booking_core.windows, docs/scheduling.md)."""

from __future__ import annotations

from datetime import time, timedelta

import pytest

from booking_core.crew import TimeOff, WorkingHours
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotUnavailable
from tests.unit.test_availability import (
    DAY,
    FAR,
    HERE,
    NEAR,
    at,
    check,
    hours,
    job,
    local_starts,
    member,
    quarter_hours,
    query,
    slots,
)

HALF = "10005"
"""Exactly 30 minutes from HERE, so a drive ends on a quarter hour."""
EXACT = TableDriveTime(
    {(HERE, NEAR): 20, (HERE, FAR): 45, (NEAR, FAR): 30, (HERE, HALF): 30}, same_zip=0
)
TUESDAY = DAY + timedelta(days=1)


def test_a_gap_exactly_as_long_as_the_job_is_offered():
    busy = {"crew_a": [job(at(9), at(10), HERE), job(at(11), at(12), HERE, "bkg_2")]}
    found = local_starts(slots(query(), [member()], busy))
    assert time(10) in found
    assert time(9, 45) not in found
    assert time(10, 15) not in found


def test_working_hours_exactly_as_long_as_the_job_give_one_start():
    short = member(working_hours=hours(time(9), time(10)))
    assert local_starts(slots(query(), [short])) == [time(9)]


def test_a_drive_from_home_ending_on_a_quarter_hour_allows_that_start():
    found = slots(query(), [member(home=HALF)], drive=EXACT)
    assert local_starts(found)[0] == time(9, 30)
    assert found[0].drive_minutes == 30


def test_a_drive_to_the_next_job_ending_as_it_starts_is_enough():
    busy = {"crew_a": [job(at(14), at(15), HALF)]}
    found = local_starts(slots(query(), [member()], busy, EXACT))
    assert time(12, 30) in found  # 12:30-13:30, then 30 minutes: 14:00
    assert time(12, 45) not in found


def test_listing_starts_exactly_at_now_plus_the_notice():
    assert local_starts(slots(query(now=at(10), min_notice_minutes=120), [member()]))[0] == time(12)


def test_when_two_jobs_end_together_the_later_starting_one_is_the_previous_stop():
    busy = {"crew_a": [job(at(9), at(11), FAR), job(at(10), at(11), NEAR, "bkg_2")]}
    found = {s.start: s.drive_minutes for s in slots(query(), [member()], busy)}
    assert found[at(11, 30)] == 20  # from NEAR, not the 45 minutes from FAR
    assert at(11, 15) not in found


def test_a_job_ending_at_midnight_is_where_the_day_starts():
    night = {"crew_a": [job(at(23, day=DAY - timedelta(days=1)), at(0), FAR)]}
    found = slots(query(), [member()], night)
    assert local_starts(found)[0] == time(9, 45)
    assert min(found, key=lambda s: s.start).drive_minutes == 45


def test_a_split_day_still_offers_the_afternoon_after_an_afternoon_job():
    split = member(working_hours=hours(time(9), time(12), (time(13), time(17))))
    busy = {"crew_a": [job(at(13), at(14), HERE)]}
    found = local_starts(slots(query(), [split], busy))
    assert found == quarter_hours(time(9), time(11)) + quarter_hours(time(14), time(16))


def test_a_job_just_after_midnight_is_not_the_first_day_next_stop():
    busy = {"crew_a": [job(at(0, day=TUESDAY), at(1, day=TUESDAY), FAR)]}
    assert time(16) in local_starts(slots(query(days=2), [member()], busy))


def test_time_off_on_a_day_without_hours_gives_the_day_reason():
    off = member(
        working_hours=(WorkingHours(2, time(9), time(17)),),
        time_off=(TimeOff(at(10), at(11)),),
    )
    assert slots(query(), [off]) == []
    with pytest.raises(SlotUnavailable) as refused:
        check(query(), at(10), [off])
    assert refused.value.reason == "no working hours on Monday"


def test_a_rescheduled_booking_on_the_next_day_does_not_block_it():
    busy = {"crew_a": [job(at(10, day=TUESDAY), at(11, day=TUESDAY), HERE, "bkg_moving")]}
    q = query(days=2, ignore_booking_ids={"bkg_moving"})
    assert at(10) in {s.start for s in slots(q, [member()], busy)}
    assert at(10) not in {s.start for s in slots(query(days=2), [member()], busy)}


def test_a_job_running_past_midnight_is_the_next_stop_of_its_first_date():
    busy = {"crew_a": [job(at(16), at(0, day=TUESDAY) + timedelta(minutes=30), FAR)]}
    found = local_starts(slots(query(), [member()], busy))
    assert found[-1] == time(14, 15)  # 14:15-15:15, then 45 minutes to FAR: 16:00


def test_time_off_running_past_the_end_of_the_day_still_closes_its_end():
    away = member(time_off=(TimeOff(at(16), at(10, day=TUESDAY)),))
    assert local_starts(slots(query(), [away]))[-1] == time(15)
