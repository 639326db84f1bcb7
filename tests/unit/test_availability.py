"""Availability by example: one behaviour per test (docs/scheduling.md)."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from booking_core.availability import Block, Slot, SlotQuery, available_slots, check_slot
from booking_core.crew import CrewMember, TimeOff, WorkingHours
from booking_core.drive import TableDriveTime
from booking_core.errors import SlotTaken, SlotUnavailable, UnknownZip

NY = ZoneInfo("America/New_York")
DAY = date(2026, 11, 2)  # a Monday
EARLY = datetime(2026, 1, 1, tzinfo=UTC)
HERE, NEAR, FAR = "10001", "10002", "10003"
DRIVE = TableDriveTime({(HERE, NEAR): 20, (HERE, FAR): 45, (NEAR, FAR): 30}, same_zip=0)


def at(hour: int, minute: int = 0, day: date = DAY, zone: ZoneInfo = NY) -> datetime:
    return datetime.combine(day, time(hour, minute), tzinfo=zone)


def hours(start: time, end: time, *extra: tuple[time, time]) -> tuple[WorkingHours, ...]:
    return tuple(
        WorkingHours(weekday, s, e) for weekday in range(1, 8) for s, e in ((start, end), *extra)
    )


def member(member_id: str = "crew_a", home: str = HERE, **changes: object) -> CrewMember:
    values: dict[str, object] = {
        "id": member_id,
        "company_id": "cmp_1",
        "name": member_id,
        "home_zip": home,
        "created_at": EARLY,
        "updated_at": EARLY,
        "service_areas": (HERE, NEAR, FAR),
        "working_hours": hours(time(9), time(17)),
    }
    values.update(changes)
    return CrewMember(**values)  # type: ignore[arg-type]


def query(**changes: object) -> SlotQuery:
    values: dict[str, object] = {
        "service_id": "svc_clean",
        "zip_code": HERE,
        "local_date": DAY,
        "zone": "America/New_York",
        "duration_minutes": 60,
        "now": EARLY,
        "min_notice_minutes": 120,
    }
    values.update(changes)
    return SlotQuery(**values)  # type: ignore[arg-type]


def slots(q: SlotQuery, crew: list[CrewMember], busy=None, drive=DRIVE) -> list[Slot]:
    return available_slots(q, crew=crew, busy=busy or {}, drive=drive)


def check(q: SlotQuery, start: datetime, crew: list[CrewMember], busy=None, drive=DRIVE) -> Slot:
    return check_slot(q, start, crew=crew, busy=busy or {}, drive=drive)


def local_starts(found: list[Slot]) -> list[time]:
    return sorted(s.start.astimezone(NY).time() for s in found)


def quarter_hours(first: time, last: time) -> list[time]:
    start = datetime.combine(DAY, first)
    count = (datetime.combine(DAY, last) - start) // timedelta(minutes=15) + 1
    return [(start + timedelta(minutes=15 * i)).time() for i in range(count)]


def job(start: datetime, end: datetime, zip_code: str, booking_id: str = "bkg_1") -> Block:
    return Block(start, end, zip_code, booking_id)


# --- The grid, notice and working hours -------------------------------------------------


def test_starts_fall_on_every_quarter_hour_that_fits_the_working_day():
    found = slots(query(), [member()])
    assert local_starts(found) == quarter_hours(time(9), time(16))
    assert all(s.end - s.start == timedelta(hours=1) for s in found)
    assert all(s.start.tzinfo == NY for s in found)


def test_slots_start_no_earlier_than_now_plus_the_minimum_notice():
    found = slots(query(now=at(10, 5), min_notice_minutes=120), [member()])
    assert local_starts(found)[0] == time(12, 15)


def test_whole_job_fits_inside_one_working_stretch():
    split = member(working_hours=hours(time(9), time(12), (time(13), time(17))))
    found = slots(query(duration_minutes=120), [split])
    assert local_starts(found) == quarter_hours(time(9), time(10)) + quarter_hours(
        time(13), time(15)
    )


def test_touching_stretches_form_one_run():
    touching = member(working_hours=hours(time(9), time(12), (time(12), time(17))))
    assert time(11) in local_starts(slots(query(duration_minutes=120), [touching]))


def test_no_slots_on_a_weekday_without_working_hours():
    weekend_off = member(working_hours=tuple(WorkingHours(d, time(9), time(17)) for d in (6, 7)))
    assert slots(query(), [weekend_off]) == []


# --- Drive time ---------------------------------------------------------------------------


def test_drive_from_home_is_counted_inside_working_hours():
    found = slots(query(), [member(home=NEAR)])  # 20 minutes from home
    assert local_starts(found)[0] == time(9, 30)
    assert {s.drive_minutes for s in found} == {20}


def test_drive_from_the_previous_job_is_counted():
    busy = {"crew_a": [job(at(10), at(11), FAR)]}  # 45 minutes from FAR
    found = local_starts(slots(query(), [member()], busy))
    assert time(11, 45) in found
    assert time(11, 30) not in found


def test_drive_to_the_next_job_is_counted():
    busy = {"crew_a": [job(at(14), at(15), NEAR)]}  # 20 minutes to NEAR
    found = local_starts(slots(query(), [member()], busy))
    assert time(12, 30) in found  # 12:30-13:30, then 20 minutes: 13:50
    assert time(12, 45) not in found


def test_previous_stop_is_home_at_the_start_of_the_day():
    yesterday = {
        "crew_a": [
            job(at(16, day=DAY - timedelta(days=1)), at(17, day=DAY - timedelta(days=1)), FAR)
        ]
    }
    found = slots(query(), [member()], yesterday)
    assert local_starts(found)[0] == time(9)
    assert found[0].drive_minutes == 0


def test_slot_drive_minutes_are_from_the_previous_stop():
    busy = {"crew_a": [job(at(9), at(10), NEAR)]}
    found = {
        s.start.astimezone(NY).time(): s.drive_minutes for s in slots(query(), [member()], busy)
    }
    assert found[time(10, 30)] == 20


def test_a_gap_next_to_a_place_of_unknown_drive_time_is_not_offered():
    drive = TableDriveTime({}, default=10, known={HERE, NEAR})
    busy = {"crew_a": [job(at(12), at(13), "99999")]}
    assert slots(query(), [member()], busy, drive) == []
    assert slots(query(local_date=DAY + timedelta(days=1)), [member()], busy, drive) != []


# --- Time off, areas and services ------------------------------------------------------


def test_time_off_is_excluded_with_its_drive_time():
    off = member(home=NEAR, time_off=(TimeOff(at(12), at(13)),))
    found = local_starts(slots(query(), [off]))
    assert time(11) in found
    assert time(11, 15) not in found
    assert time(13) not in found  # the 20-minute drive would fall in the time off
    assert time(13, 30) in found


def test_member_excluded_from_the_service_is_not_offered():
    excluded = member(excluded_service_ids=frozenset({"svc_clean"}))
    assert slots(query(), [excluded]) == []
    assert slots(query(service_id="svc_windows"), [excluded]) != []


def test_member_outside_the_service_area_is_not_offered():
    assert slots(query(zip_code="10004"), [member()], drive=TableDriveTime(default=5)) == []


def test_inactive_member_is_not_offered():
    assert slots(query(), [member(active=False)]) == []


# --- Ranking and crews ---------------------------------------------------------------------


def test_slots_are_ranked_by_drive_minutes_then_start():
    busy = {"crew_a": [job(at(9), at(12), NEAR)]}
    found = slots(query(), [member()], busy)
    keys = [(s.drive_minutes, s.start) for s in found]
    assert keys == sorted(keys)
    assert found[0].drive_minutes == 20
    assert found[0].start == at(12, 30)


def test_one_slot_per_start_with_the_nearest_member():
    found = slots(query(), [member("crew_far", home=FAR), member("crew_here")])
    assert len({s.start for s in found}) == len(found)
    assert {s.crew_ids for s in found} == {("crew_here",)}


def test_equal_drives_pick_the_lower_crew_id():
    found = slots(query(), [member("crew_b"), member("crew_a")])
    assert {s.crew_ids for s in found} == {("crew_a",)}


def test_crew_size_two_needs_two_free_members_and_takes_the_longer_drive():
    crew = [member("crew_a"), member("crew_b", home=NEAR), member("crew_c", home=FAR)]
    found = slots(query(crew_size=2), crew)
    first = min(found, key=lambda s: s.start)
    assert first.start == at(9, 30)
    assert first.crew_ids == ("crew_a", "crew_b")
    assert first.drive_minutes == 20


def test_crew_ids_must_all_be_free_together():
    busy = {"crew_b": [job(at(11), at(15), HERE)]}
    crew = [member("crew_a"), member("crew_b")]
    found = local_starts(slots(query(crew_ids=("crew_b", "crew_a")), crew, busy))
    assert found == quarter_hours(time(9), time(10)) + quarter_hours(time(15), time(16))
    assert all(
        s.crew_ids == ("crew_a", "crew_b")
        for s in slots(query(crew_ids=["crew_a", "crew_b"]), crew, busy)
    )


def test_crew_size_larger_than_the_eligible_crew_lists_nothing():
    assert slots(query(crew_size=2), [member()]) == []


# --- Multi-day --------------------------------------------------------------------------


def test_multi_day_needs_the_same_start_free_on_every_day():
    second = DAY + timedelta(days=1)
    busy = {"crew_a": [job(at(12, day=second), at(13, day=second), HERE)]}
    found = slots(query(days=2), [member()], busy)
    starts = local_starts(found)
    assert time(11) in starts
    assert time(11, 15) not in starts
    eleven = next(s for s in found if s.start == at(11))
    assert eleven.spans == ((at(11), at(12)), (at(11, day=second), at(12, day=second)))


def test_multi_day_takes_the_longest_drive_of_its_days():
    second = DAY + timedelta(days=1)
    busy = {"crew_a": [job(at(9, day=second), at(10, day=second), FAR)]}
    found = {s.start: s for s in slots(query(days=2), [member()], busy)}
    assert found[at(11)].drive_minutes == 45


# --- DST -------------------------------------------------------------------------------


def test_spring_forward_hours_skip_the_missing_hour():
    sunday = date(2026, 3, 8)
    night = member(working_hours=hours(time(1), time(4)))
    found = slots(query(local_date=sunday, duration_minutes=90), [night])
    offsets = [
        (s.start.astimezone(NY).time(), s.start.utcoffset())
        for s in sorted(found, key=lambda s: s.start)
    ]
    # 01:00-04:00 on the wall is two real hours: 01:00-02:00 EST then 03:00-04:00 EDT.
    assert [t for t, _ in offsets] == [time(1), time(1, 15), time(1, 30)]
    # Python subtracts datetimes of one zone on the wall clock: measure in UTC.
    assert found[0].end.astimezone(UTC) - found[0].start.astimezone(UTC) == timedelta(minutes=90)
    assert found[0].end.astimezone(NY).time() == time(3, 30)


def test_hours_starting_inside_the_dst_gap_start_when_the_clock_jumps():
    sunday = date(2026, 3, 8)
    found = slots(query(local_date=sunday), [member(working_hours=hours(time(2, 30), time(6)))])
    assert min(s.start for s in found).astimezone(NY).time() == time(3)


def test_fall_back_hours_include_the_repeated_hour_twice():
    sunday = date(2026, 11, 1)
    night = member(working_hours=hours(time(1), time(3)))
    found = sorted(
        slots(query(local_date=sunday, duration_minutes=180), [night]), key=lambda s: s.start
    )
    assert len(found) == 1  # 01:00 EDT to 03:00 EST is three real hours
    assert found[0].start.utcoffset() == timedelta(hours=-4)
    repeated = slots(query(local_date=sunday, duration_minutes=15), [night])
    one_fifteens = [s for s in repeated if s.start.astimezone(NY).time() == time(1, 15)]
    assert sorted(s.start.utcoffset() for s in one_fifteens) == [
        timedelta(hours=-5),
        timedelta(hours=-4),
    ]


# --- Booking check ------------------------------------------------------------------------


def test_check_slot_returns_each_listed_slot():
    crew = [member("crew_a"), member("crew_b", home=NEAR)]
    busy = {"crew_a": [job(at(10), at(11), NEAR)]}
    for found in slots(query(), crew, busy):
        assert check(query(), found.start, crew, busy) == found


def test_check_slot_says_taken_when_only_another_job_is_in_the_way():
    busy = {"crew_a": [job(at(10), at(11), HERE)]}
    with pytest.raises(SlotTaken) as taken:
        check(query(), at(10, 30), [member()], busy)
    assert taken.value.crew_id is None
    with pytest.raises(SlotTaken) as named:
        check(query(crew_ids=("crew_a",)), at(10, 30), [member()], busy)
    assert named.value.crew_id == "crew_a"


def test_a_rescheduled_booking_does_not_block_its_own_slot():
    busy = {"crew_a": [job(at(10), at(11), HERE, "bkg_moving")]}
    q = query(ignore_booking_ids={"bkg_moving"})
    assert check(q, at(10, 30), [member()], busy).crew_ids == ("crew_a",)


@pytest.mark.parametrize(
    ("start", "changes", "crew", "reason"),
    [
        (at(10, 5), {}, None, "not on the quarter hour"),
        (at(10, day=DAY + timedelta(days=1)), {}, None, "not on 2026-11-02"),
        (at(10), {"now": at(11)}, None, "in the past"),
        (at(10), {"now": at(9)}, None, "less than 120 minutes' notice"),
        (at(8), {}, None, "outside working hours"),
        (at(16, 30), {}, None, "outside working hours"),
        (at(9), {}, [member(home=NEAR)], "no room for the 20-minute drive from home (10002)"),
        (at(12), {}, [member(time_off=(TimeOff(at(12), at(13)),))], "time off"),
        (at(10), {"zip_code": "10004"}, None, "no crew member serves zip 10004"),
        (
            at(10),
            {},
            [member(excluded_service_ids=frozenset({"svc_clean"}))],
            "no crew member serving zip 10001 does service svc_clean",
        ),
        (at(10), {"crew_ids": ("crew_x",)}, None, "crew member crew_x is not on the active roster"),
        (at(10), {"crew_size": 2}, None, "needs 2 crew members; 1 can do it in 10001"),
    ],
)
def test_check_slot_says_why_a_start_is_unavailable(start, changes, crew, reason):
    drive = TableDriveTime(DRIVE.table, same_zip=0, default=10)
    with pytest.raises(SlotUnavailable) as refused:
        check(query(**changes), start, crew or [member()], drive=drive)
    assert refused.value.reason == reason


def test_unknown_zip_is_reported_on_the_field_the_caller_names():
    drive = TableDriveTime(known={HERE, NEAR, FAR})
    with pytest.raises(UnknownZip) as listing:
        slots(query(zip_code="00000"), [member()], drive=drive)
    assert listing.value.field_errors == {"zip": "Unknown US zip code '00000'."}
    with pytest.raises(UnknownZip) as booking:
        check(query(zip_code="00000", zip_field="address.zip"), at(10), [member()], drive=drive)
    assert set(booking.value.field_errors) == {"address.zip"}


def test_query_and_block_refuse_nonsense():
    with pytest.raises(ValueError, match="duration"):
        query(duration_minutes=0)
    with pytest.raises(ValueError, match="offset"):
        query(now=datetime(2026, 1, 1))
    with pytest.raises(ValueError, match="ends after"):
        Block(at(10), at(10), HERE)
    assert attrs.evolve(query(), zone=NY).zone is NY


def test_multi_day_later_day_may_end_at_a_clock_jump():
    """Found by hypothesis: Lord Howe springs forward 02:00 -> 03:00 on 1981-10-25."""
    lord_howe = ZoneInfo("Australia/Lord_Howe")
    saturday, sunday = date(1981, 10, 24), date(1981, 10, 25)
    night = member(
        working_hours=(*hours(time(0), time(23, 59))[:6], WorkingHours(7, time(0), time(2)))
    )
    q = query(
        local_date=saturday,
        zone=lord_howe,
        days=2,
        duration_minutes=15,
        now=datetime(1981, 1, 1, tzinfo=UTC),
    )
    found = {s.start.astimezone(lord_howe).time(): s for s in slots(q, [night])}
    (_, (second_start, second_end)) = found[time(1, 45)].spans
    assert second_start.astimezone(lord_howe) == datetime.combine(
        sunday, time(1, 45), tzinfo=lord_howe
    )
    assert second_end.astimezone(lord_howe).time() == time(3)  # the wall clock jumped
    assert time(2) not in found  # 02:00 does not exist on the Sunday
