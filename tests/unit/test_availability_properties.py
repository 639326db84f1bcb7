"""Availability properties: order, soundness against the rules, agreement with the booking
check, and wall-clock working hours across every timezone and DST change."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from itertools import pairwise
from zoneinfo import ZoneInfo

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from booking_core.availability import Slot, SlotQuery, available_slots, check_slot
from booking_core.crew import CrewMember, WorkingHours
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotTaken, SlotUnavailable
from booking_core.timeline import local_day
from tests.strategies import AvailabilityCase, availability_cases, zone_days

EARLY = datetime(1960, 1, 1, tzinfo=UTC)
STEP = timedelta(minutes=5)


def listing(case: AvailabilityCase) -> list[Slot]:
    return available_slots(case.query, crew=case.crew, busy=case.busy, drive=case.drive)


def utc(value: datetime) -> datetime:
    """Python compares datetimes of one zone on the wall clock, ignoring ``fold``: compare
    instants in UTC so that the two readings of a repeated hour stay apart."""
    return value.astimezone(UTC)


def rank(slot: Slot) -> tuple[int, datetime, tuple[str, ...]]:
    return slot.drive_minutes, utc(slot.start), slot.crew_ids


def instants(lo: datetime, hi: datetime) -> list[datetime]:
    """``lo``, every five minutes after it, and the last second before ``hi`` (stepping in
    UTC: Python adds to a zone's datetime on the wall clock)."""
    lo, hi = utc(lo), utc(hi)
    found = []
    at = lo
    while at < hi:
        found.append(at)
        at += STEP
    return [*found, hi - timedelta(seconds=1)]


def is_working(member: CrewMember, zone: ZoneInfo, day: date, instant: datetime) -> bool:
    local = instant.astimezone(zone)
    wall = local.time().replace(tzinfo=None, fold=0)
    return local.date() == day and any(
        h.weekday == day.isoweekday() and h.start <= wall < h.end for h in member.working_hours
    )


def assert_keeps_the_rules(case: AvailabilityCase, slot: Slot) -> None:
    """An independent reading of the rules in docs/scheduling.md, on datetimes."""
    q, zone = case.query, case.query.zone
    roster = {m.id: m for m in case.crew}
    length = timedelta(minutes=q.duration_minutes)
    assert len(slot.spans) == q.days
    assert slot.spans[0] == (slot.start, slot.end)
    assert utc(slot.spans[0][0]) == utc(slot.start)
    assert slot.crew_ids == tuple(sorted(set(slot.crew_ids)))
    assert len(slot.crew_ids) == q.needed
    if q.crew_ids is not None:
        assert set(slot.crew_ids) == set(q.crew_ids)
    local = slot.start.astimezone(zone)
    assert (local.minute % 15, local.second, local.microsecond) == (0, 0, 0)
    assert local.date() == q.local_date
    assert utc(slot.start) >= q.now + timedelta(minutes=q.min_notice_minutes)
    longest = 0
    for offset, (start, end) in enumerate(slot.spans):
        day = q.local_date + timedelta(days=offset)
        assert end.astimezone(UTC) - start.astimezone(UTC) == length
        for member_id in slot.crew_ids:
            member = roster[member_id]
            assert member.active
            assert member.serves(q.zip_code)
            assert member.may_do(q.service_id)
            jobs = [
                b for b in case.busy.get(member_id, ()) if b.booking_id not in q.ignore_booking_ids
            ]
            before = [b for b in jobs if b.end <= start and b.end.astimezone(zone).date() == day]
            after = [b for b in jobs if b.start >= end and b.start.astimezone(zone).date() == day]
            previous = max(before, key=lambda b: (b.end, b.start, b.zip_code), default=None)
            following = min(after, key=lambda b: (b.start, b.end, b.zip_code), default=None)
            origin = previous.zip_code if previous else member.home_zip
            into = case.drive.minutes(origin, q.zip_code)
            out = case.drive.minutes(q.zip_code, following.zip_code) if following else 0
            lo, hi = utc(start) - timedelta(minutes=into), utc(end) + timedelta(minutes=out)
            assert not any(b.start < hi and lo < b.end for b in jobs), "overlaps a job"
            assert not any(t.start < hi and lo < t.end for t in member.time_off), "time off"
            assert all(is_working(member, zone, day, at) for at in instants(lo, hi)), "hours"
            longest = max(longest, into)
    assert slot.drive_minutes == longest


@given(availability_cases())
def test_listing_is_deterministic_and_totally_ordered(case):
    found = listing(case)
    shuffled = AvailabilityCase(
        case.query,
        tuple(reversed(case.crew)),
        {k: tuple(reversed(v)) for k, v in reversed(case.busy.items())},
        case.drive,
    )
    assert listing(shuffled) == found
    keys = [rank(s) for s in found]
    assert all(a < b for a, b in pairwise(keys))
    assert len({utc(s.start) for s in found}) == len(found)


@given(availability_cases())
def test_no_slot_overlaps_a_job_time_off_or_the_edge_of_working_hours(case):
    for slot in listing(case):
        assert_keeps_the_rules(case, slot)


@given(availability_cases())
def test_every_listed_slot_passes_check_slot(case):
    for slot in listing(case):
        kwargs = {"crew": case.crew, "busy": case.busy, "drive": case.drive}
        checked = check_slot(case.query, slot.start, **kwargs)
        assert checked == slot
        assert [utc(s) for s, _ in checked.spans] == [utc(s) for s, _ in slot.spans]


@given(availability_cases(max_days=1))
def test_check_slot_agrees_with_listing_at_every_quarter_hour(case):
    q = case.query
    listed = {utc(s.start): s for s in listing(case)}
    for instant in local_day(q.zone, q.local_date).grid:
        start = datetime.fromtimestamp(instant, q.zone)
        try:
            found = check_slot(q, start, crew=case.crew, busy=case.busy, drive=case.drive)
        except (SlotTaken, SlotUnavailable):
            assert utc(start) not in listed
        else:
            assert listed[utc(start)] == found
            assert listed[utc(start)].start.utcoffset() == found.start.utcoffset()


# --- Wall-clock working hours across every timezone and DST change -----------------------


def wall_clock_crew(first: time, last: time) -> list[CrewMember]:
    hours = tuple(WorkingHours(weekday, first, last) for weekday in range(1, 8))
    return [
        CrewMember(
            id="crew_a",
            company_id="cmp_1",
            name="A",
            home_zip="10001",
            created_at=EARLY,
            updated_at=EARLY,
            service_areas=("10001",),
            working_hours=hours,
        )
    ]


WORKING_DAYS = st.sampled_from([(time(9), time(17)), (time(13), time(21))])


@given(zone_days(), WORKING_DAYS, st.sampled_from([15, 60, 240]))
@example((ZoneInfo("America/New_York"), date(2026, 3, 8)), (time(9), time(17)), 60)
@example((ZoneInfo("America/New_York"), date(2026, 11, 1)), (time(13), time(21)), 240)
@example((ZoneInfo("Australia/Lord_Howe"), date(2026, 4, 5)), (time(9), time(17)), 15)
@example((ZoneInfo("America/Santiago"), date(2026, 9, 6)), (time(9), time(17)), 60)
@example((ZoneInfo("Asia/Kathmandu"), date(1986, 1, 1)), (time(9), time(17)), 15)
@example((ZoneInfo("Pacific/Apia"), date(2011, 12, 30)), (time(9), time(17)), 60)
@example((ZoneInfo("Pacific/Kiritimati"), date(1994, 12, 31)), (time(13), time(21)), 60)
@example((ZoneInfo("America/Caracas"), date(2016, 5, 1)), (time(9), time(17)), 15)
@settings(max_examples=300)
def test_wall_clock_working_day_yields_slots_at_those_local_times(zone_day, hours, minutes):
    zone, day = zone_day
    first, last = hours
    crew = wall_clock_crew(first, last)
    query_args = {
        "service_id": "svc_clean",
        "zip_code": "10001",
        "local_date": day,
        "zone": zone,
        "duration_minutes": minutes,
        "now": EARLY,
        "min_notice_minutes": 0,
    }

    found = available_slots(
        SlotQuery(**query_args), crew=crew, busy={}, drive=TableDriveTime(same_zip=0)
    )
    for slot in found:
        for at in instants(slot.start, slot.end):
            local = at.astimezone(zone)
            assert local.date() == day
            assert first <= local.time().replace(tzinfo=None) < last
    start = datetime.combine(day, first, tzinfo=zone)
    end = datetime.combine(day, last, tzinfo=zone)
    steady = (
        start.utcoffset() == end.utcoffset()
        and start.astimezone(UTC).astimezone(zone).replace(tzinfo=None)
        == start.replace(tzinfo=None)
        and all(at.astimezone(zone).utcoffset() == start.utcoffset() for at in instants(start, end))
    )
    if steady:  # no clock change during the working day: every quarter hour that fits
        expected = (last.hour - first.hour) * 4 - minutes // 15 + 1
        assert len(found) == expected
        assert min(s.start for s in found).astimezone(zone).time() == first


@pytest.mark.parametrize("zone_name", ["America/New_York", "Europe/Berlin", "Asia/Tokyo"])
def test_a_plain_day_lists_every_quarter_hour_of_the_working_day(zone_name):

    q = SlotQuery("svc_clean", "10001", date(2026, 6, 1), zone_name, 60, EARLY, 0)
    found = available_slots(
        q, crew=wall_clock_crew(time(9), time(17)), busy={}, drive=TableDriveTime(same_zip=0)
    )
    assert [s.start.time() for s in found] == [
        (datetime(2026, 6, 1, 9) + timedelta(minutes=15 * i)).time() for i in range(29)
    ]
