"""The booking check at its edges: the exact boundaries of notice and the quarter hour, the
start every refusal names, and which crew member's reason a refusal gives when several
cannot take the start (docs/scheduling.md, "Why a start is unavailable")."""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta

import pytest

from booking_core.availability import Block, Slot, SlotQuery, available_slots, check_slot
from booking_core.crew import CrewMember, TimeOff, WorkingHours
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotTaken, SlotUnavailable
from tests.unit.test_availability import (
    DAY,
    DRIVE,
    FAR,
    HERE,
    NEAR,
    NY,
    at,
    hours,
    job,
    member,
    quarter_hours,
    query,
)

TUESDAY = DAY + timedelta(days=1)
KNOWN = TableDriveTime(DRIVE.table, same_zip=0, default=10, known={HERE, NEAR, FAR, "10004"})
"""Drive times where a home at zip 99999 has none."""


def check(q: SlotQuery, start: datetime, crew: list[CrewMember], busy=None, drive=KNOWN) -> Slot:
    return check_slot(q, start, crew=crew, busy=busy or {}, drive=drive)


def refusal(q: SlotQuery, start: datetime, crew: list[CrewMember], busy=None) -> SlotUnavailable:
    with pytest.raises(SlotUnavailable) as refused:
        check(q, start, crew, busy)
    return refused.value


def monday_only(start: time = time(9), end: time = time(17)) -> tuple[WorkingHours, ...]:
    return (WorkingHours(1, start, end),)


# --- Boundaries of the check ------------------------------------------------------------


def test_a_start_exactly_now_is_bookable_without_notice():
    found = check(query(now=at(10), min_notice_minutes=0), at(10), [member()])
    assert found.start == at(10)


def test_a_start_exactly_at_the_minimum_notice_is_bookable():
    found = check(query(now=at(8), min_notice_minutes=120), at(10), [member()])
    assert found.start == at(10)


def test_a_start_a_few_seconds_past_the_quarter_hour_is_refused():
    for start in (at(10) + timedelta(seconds=30), at(10) + timedelta(microseconds=1)):
        refused = refusal(query(), start, [member()])
        assert refused.reason == "not on the quarter hour"
        assert refused.start == start.astimezone(NY).isoformat()


@pytest.mark.parametrize(
    ("start", "changes", "reason"),
    [
        (at(10, day=TUESDAY), {}, "not on 2026-11-02"),
        (at(10, 5), {}, "not on the quarter hour"),
        (at(10), {"now": at(11)}, "in the past"),
        (at(10), {"now": at(9)}, "less than 120 minutes' notice"),
        (at(10), {"zip_code": "10004"}, "no crew member serves zip 10004"),
        (at(8), {}, "outside working hours"),
    ],
)
def test_every_refusal_names_the_start_in_the_company_zone(start, changes, reason):
    refused = refusal(query(**changes), start.astimezone(UTC), [member()])
    assert refused.reason == reason
    assert refused.start == start.astimezone(NY).isoformat()
    assert str(refused) == f"{refused.start} is not an open slot: {reason}"


def test_a_taken_slot_names_its_start():
    busy = {"crew_a": [job(at(10), at(11), HERE)]}
    with pytest.raises(SlotTaken) as taken:
        check(query(), at(10, 30).astimezone(UTC), [member()], busy)
    assert taken.value.start == "2026-11-02T10:30:00-05:00"


def test_a_start_without_an_offset_is_refused_by_name():
    with pytest.raises(ValueError, match=r"^start must carry a UTC offset$"):
        check(query(), datetime(2026, 11, 2, 10), [member()])


def test_a_busy_block_needs_offsets_and_a_positive_length_by_name():
    with pytest.raises(ValueError, match=r"^a busy block's start and end must carry a UTC offset$"):
        Block(datetime(2026, 11, 2, 10), at(11), HERE)
    with pytest.raises(ValueError, match=r"^a busy block ends after it starts$"):
        Block(at(11), at(10), HERE)


@pytest.mark.usefixtures("server_far_east")
def test_a_busy_block_is_kept_in_utc_whatever_the_server_zone():
    block = Block(at(10), at(11), HERE)
    assert (block.start.utcoffset(), block.end.utcoffset()) == (timedelta(0), timedelta(0))
    assert block.start == at(10)


# --- Whose reason: the member closest to fitting ------------------------------------------

NO_MONDAY = {"working_hours": tuple(WorkingHours(d, time(9), time(17)) for d in (6, 7))}
LATE = {"working_hours": hours(time(12), time(17))}
OFF = {"time_off": (TimeOff(at(10), at(11)),)}
NO_ROOM = {"home": NEAR, "working_hours": hours(time(9, 45), time(17))}
NO_DRIVE = {"home": "99999"}


@pytest.mark.parametrize(
    ("crew_a", "crew_b", "reason"),
    [
        (NO_MONDAY, LATE, "outside working hours"),
        (LATE, OFF, "time off"),
        (OFF, NO_ROOM, "no room for the 20-minute drive from home (10002)"),
        (NO_DRIVE, NO_ROOM, "no known drive time from home (99999)"),
        (NO_ROOM, NO_DRIVE, "no room for the 20-minute drive from home (10002)"),
        (NO_MONDAY, NO_MONDAY, "no working hours on Monday"),
    ],
)
def test_the_reason_is_that_of_the_member_closest_to_fitting_ties_by_id(crew_a, crew_b, reason):
    crew = [member("crew_a", **crew_a), member("crew_b", **crew_b)]
    assert refusal(query(), at(10), crew).reason == reason


def test_named_crew_report_the_first_member_asked_for_that_cannot():
    crew = [member("crew_a", **LATE), member("crew_b", **NO_MONDAY)]
    refused = refusal(query(crew_ids=("crew_b", "crew_a")), at(10), crew)
    assert refused.reason == "crew member crew_b: no working hours on Monday"


def test_a_crew_of_two_with_one_free_says_so_and_why_the_other_cannot():
    crew = [member("crew_a"), member("crew_b", **LATE)]
    refused = refusal(query(crew_size=2), at(10), crew)
    assert refused.reason == "needs 2 crew members, 1 free; outside working hours"


def test_time_off_during_the_drive_from_home_leaves_no_room_for_it():
    off = member(home=NEAR, time_off=(TimeOff(at(9, 30), at(9, 50)),))
    assert refusal(query(), at(10), [off]).reason == (
        "no room for the 20-minute drive from home (10002)"
    )


# --- A multi-day job: day one fits exactly, the second day has no hours -----------------


@pytest.mark.parametrize(
    ("changes", "start"),
    [
        ({"home": NEAR, "working_hours": monday_only(time(8, 40))}, at(9)),
        ({"home": NEAR, "time_off": (TimeOff(at(9, 20), at(9, 40)),)}, at(10)),
        ({"time_off": (TimeOff(at(11), at(12)),)}, at(10)),
        ({"time_off": (TimeOff(at(9), at(10)),)}, at(10)),
        ({}, at(16)),
    ],
    ids=[
        "drive-from-run-start",
        "drive-after-time-off",
        "time-off-after",
        "time-off-before",
        "run-end",
    ],
)
def test_a_first_day_that_fits_exactly_gives_the_later_day_reason(changes, start):
    only_monday = member(**{"working_hours": monday_only(), **changes})
    refused = refusal(query(days=2), start, [only_monday])
    assert refused.reason == "on 2026-11-03: no working hours on Tuesday"


def test_a_later_day_reason_names_its_date():
    crew = [
        member(
            working_hours=(WorkingHours(1, time(9), time(17)), WorkingHours(2, time(12), time(17)))
        )
    ]
    refused = refusal(query(days=2), at(10), crew)
    assert refused.reason == "on 2026-11-03: outside working hours"
    assert date.fromisoformat(refused.reason[3:13]) == TUESDAY


# --- Multi-day and named crews ----------------------------------------------------------


def test_check_slot_returns_each_listed_multi_day_slot():
    crew = [member("crew_a"), member("crew_b", home=NEAR)]
    busy = {"crew_a": [job(at(12, day=TUESDAY), at(13, day=TUESDAY), FAR)]}
    listed = available_slots(query(days=2), crew=crew, busy=busy, drive=KNOWN)
    assert len(listed) == len(quarter_hours(time(9), time(16)))
    for found in listed:
        assert check(query(days=2), found.start, crew, busy) == found


@pytest.mark.parametrize("named", [("crew_a", "crew_b"), ("crew_b", "crew_a")])
def test_a_taken_slot_of_named_crew_names_the_lowest_busy_id_whatever_the_order(named):
    busy = {m: [job(at(10), at(11), HERE)] for m in ("crew_a", "crew_b")}
    with pytest.raises(SlotTaken) as taken:
        check(query(crew_ids=named), at(10), [member("crew_b"), member("crew_a")], busy)
    assert taken.value.crew_id == "crew_a"


# --- The query ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"duration_minutes": 0}, "duration_minutes >= 1 and min_notice_minutes >= 0"),
        ({"min_notice_minutes": -1}, "duration_minutes >= 1 and min_notice_minutes >= 0"),
        ({"crew_size": 0}, "crew_size and days are at least 1"),
        ({"days": 0}, "crew_size and days are at least 1"),
        ({"crew_ids": ()}, "crew_ids names at least one member when given"),
        ({"now": datetime(2026, 1, 1)}, "now must carry a UTC offset"),
    ],
)
def test_a_query_out_of_range_is_refused_with_its_exact_message(changes, message):
    with pytest.raises(ValueError, match=re.escape(message)) as refused:
        query(**changes)
    assert str(refused.value) == message


def test_the_smallest_valid_query_is_accepted():
    smallest = query(duration_minutes=1, min_notice_minutes=0, crew_size=1, days=1)
    assert (smallest.needed, smallest.crew_ids) == (1, None)
    named = query(crew_ids=["crew_b", "crew_a", "crew_b"])
    assert (named.crew_ids, named.needed) == (("crew_b", "crew_a"), 2)


def test_a_crew_of_three_takes_the_longest_of_the_three_drives():
    crew = [member("crew_a"), member("crew_b", home=NEAR), member("crew_c", home=FAR)]
    found = check(query(crew_size=3), at(10), crew)
    assert found.crew_ids == ("crew_a", "crew_b", "crew_c")
    assert found.drive_minutes == 45


@pytest.mark.parametrize(
    ("changes", "reason"),
    [
        (
            {"excluded_service_ids": frozenset({"svc_clean"})},
            "crew member crew_a does not do service svc_clean",
        ),
        ({"service_areas": (NEAR,)}, "crew member crew_a does not serve zip 10001"),
    ],
)
def test_a_named_member_who_may_not_take_the_job_is_named(changes, reason):
    refused = refusal(query(crew_ids=("crew_a",)), at(10), [member(**changes)])
    assert refused.reason == reason


def test_a_multi_day_job_taken_on_a_later_day_names_that_day():
    """The start itself is free: the refusal points at the day another job takes."""
    third = DAY + timedelta(days=2)
    busy = {"crew_a": [job(at(10, day=third), at(11, day=third), HERE)]}
    crew = [member("crew_a")]
    for crew_ids, named in ((("crew_a",), "crew_a"), (None, None)):
        with pytest.raises(SlotTaken) as taken:
            check(query(days=3, crew_ids=crew_ids), at(10), crew, busy)
        assert (taken.value.start, taken.value.crew_id) == (at(10, day=third).isoformat(), named)
        assert third.isoformat() in str(taken.value)


def test_a_multi_day_job_taken_on_different_days_for_each_member_names_the_earliest():
    busy = {
        "crew_a": [job(at(10, day=TUESDAY), at(11, day=TUESDAY), HERE)],
        "crew_b": [job(at(10, day=DAY + timedelta(days=2)), at(11, day=DAY + timedelta(2)), HERE)],
    }
    crew = [member("crew_a"), member("crew_b")]
    with pytest.raises(SlotTaken) as taken:
        check(query(days=3), at(10), crew, busy)
    assert taken.value.start == at(10, day=TUESDAY).astimezone(NY).isoformat()
    with pytest.raises(SlotTaken) as taken:
        check(query(days=3, crew_ids=("crew_b",)), at(10), crew, busy)
    assert taken.value.start == at(10, day=DAY + timedelta(2)).astimezone(NY).isoformat()
