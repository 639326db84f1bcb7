"""Plans: the wall-clock rhythm across DST, the rolling horizon and its extension, and the
scopes of cancel and reschedule."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta, timezone
from itertools import pairwise
from zoneinfo import ZoneInfo

import attrs
import pytest
from hypothesis import assume, example, given
from hypothesis import strategies as st

from booking_core.bookings import (
    ActivityKind,
    Booking,
    BookingStatus,
    cancel,
    complete_job,
    local_wall,
    start_job,
    wall_clock_instant,
)
from booking_core.catalog import FeeDefinition, FeeKind
from booking_core.errors import InvalidTransition, NotFoundError, ValidationFailed
from booking_core.plans import (
    PLAN_HORIZON_DAYS,
    CancelScope,
    RescheduleScope,
    cancel_visits,
    catalog_priced,
    extend_plan,
    new_plan,
    plan_ends_on,
    plan_horizon_end,
    plan_visits,
    request_errors,
    reschedule,
)
from booking_core.pricing import Visit
from tests.strategies import plan_dates, plan_intervals, quarter_hours, zones
from tests.unit.bookings_support import AT, CATALOG, HOLIDAY, NY, booked, local, order, pricer

THIS = CancelScope.THIS
FUTURE = CancelScope.THIS_AND_FUTURE
AFTER = CancelScope.PLAN_AFTER


def weekly(**changes: object) -> list[Booking]:
    """A weekly plan from Tuesday 2026-03-03 09:00 New York: eight visits to 2026-04-21."""
    return booked(order("weekly", **changes))


def _extend(visits: list[Booking], until: datetime) -> list[Booking]:
    return extend_plan(visits, until, interval_days=7, price_visit=pricer(order("weekly")), at=AT)


# --- The rhythm ------------------------------------------------------------------------


def test_plan_visits_keep_the_wall_clock_hour_across_a_dst_change():
    starts = plan_visits(local(2026, 3, 3, 9), 7, local(2026, 3, 25), NY)
    assert [s.astimezone(NY) for s in starts] == [
        local(2026, 3, 3, 9),
        local(2026, 3, 10, 9),
        local(2026, 3, 17, 9),
        local(2026, 3, 24, 9),
    ]
    assert starts[1] - starts[0] == timedelta(days=7, hours=-1)


def test_plan_visits_stop_before_the_horizon_but_always_include_the_first():
    first = local(2026, 3, 3, 9)
    assert len(plan_visits(first, 7, local(2026, 3, 24, 9), NY)) == 3
    assert len(plan_visits(first, 7, local(2026, 3, 24, 9, 15), NY)) == 4
    assert plan_visits(first, 7, first - timedelta(days=1), NY) == [first]


def test_plan_visits_refuse_an_interval_below_one_day():
    with pytest.raises(ValueError, match="interval_days"):
        plan_visits(local(2026, 3, 3, 9), 0, local(2026, 5, 1), NY)


def test_a_plan_wall_time_skipped_by_dst_moves_forward_that_day_only():
    starts = plan_visits(local(2026, 3, 1, 2, 30), 7, local(2026, 3, 16), NY)
    assert [s.astimezone(NY).time() for s in starts] == [time(2, 30), time(3, 30), time(2, 30)]


def test_a_plan_first_visit_in_the_repeated_hour_keeps_its_fold():
    first = local(2026, 11, 1, 1, 30, fold=1)
    starts = plan_visits(first, 1, local(2026, 11, 3), NY)
    assert starts[0] == first.astimezone(UTC)
    assert [s.astimezone(NY).time() for s in starts] == [time(1, 30)] * 2


@given(
    zone=zones,
    first_date=plan_dates,
    wall=quarter_hours,
    interval=plan_intervals,
    fold=st.sampled_from((0, 1)),
)
@example(
    zone=ZoneInfo("America/New_York"),
    first_date=date(2026, 3, 1),
    wall=time(2, 30),
    interval=7,
    fold=0,
)
@example(
    zone=ZoneInfo("Australia/Lord_Howe"),
    first_date=date(2026, 9, 27),
    wall=time(2),
    interval=14,
    fold=0,
)
@example(
    zone=ZoneInfo("America/Adak"),
    first_date=date(2026, 3, 1),
    wall=time(0),
    interval=1,
    fold=0,
)
@example(
    zone=ZoneInfo("Europe/London"),
    first_date=date(2026, 10, 25),
    wall=time(1, 30),
    interval=1,
    fold=1,
)
def test_plan_visits_keep_the_local_wall_clock_time_in_any_zone(
    zone, first_date, wall, interval, fold
):
    first = wall_clock_instant(first_date, wall, zone, fold=fold)
    horizon = first + timedelta(days=400)
    starts = plan_visits(first, interval, horizon, zone)
    first_wall = local_wall(first, zone).time().replace(fold=0)
    assert starts[0] == first
    # Every visit before the horizon instant, and the next one would not be: across a DST
    # change one more (or one fewer) local day can fit in 400 days of instants.
    assert all(start < horizon for start in starts)
    next_day = first_date + timedelta(days=len(starts) * interval)
    assert wall_clock_instant(next_day, first_wall, zone, fold=fold) >= horizon
    for k, start in enumerate(starts):
        expected = datetime.combine(first_date + timedelta(days=k * interval), first_wall)
        shown = local_wall(start, zone)
        if local_wall(expected.replace(tzinfo=zone).astimezone(UTC), zone) == expected:
            assert shown == expected  # the wall time exists that day: it is kept
        else:  # skipped by a gap: the same instant as the clock before the change reads
            assert shown > expected
            assert shown - expected <= timedelta(hours=2)
            assert start == expected.replace(tzinfo=zone).astimezone(UTC)


# --- A new plan ------------------------------------------------------------------------


def test_a_plan_materialises_eight_weeks_of_visits_sharing_one_plan_id():
    visits = weekly()
    assert len(visits) == 8
    assert [v.visit_index for v in visits] == list(range(8))
    assert len({v.plan_id for v in visits}) == 1
    assert visits[0].plan_id is not None
    assert visits[0].plan_id.startswith("pln_")
    assert all(v.planned_start == v.start for v in visits)
    assert all(v.local_start.time() == time(9) for v in visits)
    assert len({v.id for v in visits}) == len({v.code for v in visits}) == 8
    assert len({v.tracking_token for v in visits}) == 8


def test_the_horizon_counts_from_the_later_of_now_and_the_first_visit():
    assert plan_horizon_end(local(2026, 3, 3, 9), AT, NY) == local(2026, 4, 28, 9)
    later_now = local(2026, 3, 10, 9)
    assert plan_horizon_end(local(2026, 3, 3, 9), later_now, NY) == local(2026, 5, 5, 9)
    visits = booked(order("every_four_weeks"), start=local(2026, 9, 1, 9))
    assert [v.local_start.date() for v in visits] == [date(2026, 9, 1), date(2026, 9, 29)]


def test_no_visit_falls_after_2199_the_last_year_a_request_may_name():
    visits = booked(order("weekly"), start=local(2199, 12, 2, 13))
    assert [v.local_start.date() for v in visits] == [
        date(2199, 12, 2), date(2199, 12, 9), date(2199, 12, 16), date(2199, 12, 23),
        date(2199, 12, 30),
    ]  # fmt: skip
    late = local(2199, 12, 30, 13)
    assert request_errors(late, zone=NY, at=AT, days=2) == {}
    assert request_errors(late, zone=NY, at=AT, days=3) == {
        "days": "The job's last day would fall after 2199-12-31."
    }


def test_the_horizon_is_counted_in_local_days_whatever_offset_the_start_carries():
    """09:00 EST on 3 March and 56 local days later is 09:00 EDT on 28 April: one hour
    sooner than 56 days of UTC, which would let a ninth weekly visit in."""
    for start in (
        local(2026, 3, 3, 9),
        local(2026, 3, 3, 9).astimezone(UTC),
        local(2026, 3, 3, 9).astimezone(timezone(timedelta(hours=-5))),
    ):
        assert plan_horizon_end(start, AT, NY) == local(2026, 4, 28, 9)
        assert len(booked(order("weekly"), start=start)) == 8


DST_ZONES = tuple(
    ZoneInfo(name) for name in ("America/New_York", "Europe/London", "Australia/Sydney")
)


@given(
    zone=st.sampled_from(DST_ZONES),
    first_date=plan_dates,
    wall=quarter_hours,
    form=st.sampled_from(("zone", "utc", "offset")),
    lead_days=st.integers(min_value=0, max_value=60),
)
@example(  # New York springs forward inside the horizon
    zone=ZoneInfo("America/New_York"),
    first_date=date(2026, 3, 3),
    wall=time(9),
    form="offset",
    lead_days=2,
)
@example(  # New York falls back inside the horizon
    zone=ZoneInfo("America/New_York"),
    first_date=date(2026, 10, 6),
    wall=time(9),
    form="utc",
    lead_days=0,
)
@example(  # London springs forward on 29 March, falls back on 25 October
    zone=ZoneInfo("Europe/London"),
    first_date=date(2026, 3, 10),
    wall=time(0, 30),
    form="offset",
    lead_days=1,
)
@example(
    zone=ZoneInfo("Europe/London"),
    first_date=date(2026, 10, 6),
    wall=time(23, 45),
    form="utc",
    lead_days=0,
)
@example(  # Sydney falls back on 5 April and springs forward on 4 October
    zone=ZoneInfo("Australia/Sydney"),
    first_date=date(2026, 3, 10),
    wall=time(9),
    form="utc",
    lead_days=3,
)
@example(
    zone=ZoneInfo("Australia/Sydney"),
    first_date=date(2026, 9, 8),
    wall=time(2, 30),
    form="offset",
    lead_days=0,
)
def test_a_weekly_plan_has_eight_visits_whichever_dst_change_its_horizon_crosses(
    zone, first_date, wall, form, lead_days
):
    first = wall_clock_instant(first_date, wall, zone)
    start = {
        "zone": first.astimezone(zone),
        "utc": first,
        "offset": first.astimezone(timezone(first.astimezone(zone).utcoffset() or timedelta())),
    }[form]
    booked_at = first - timedelta(days=lead_days)
    horizon = plan_horizon_end(start, booked_at, zone)
    starts = plan_visits(start, 7, horizon, zone)
    assert len(starts) == PLAN_HORIZON_DAYS // 7
    assert local_wall(horizon, zone).date() == first_date + timedelta(days=PLAN_HORIZON_DAYS)
    assert {local_wall(s, zone).date().weekday() for s in starts} == {first_date.weekday()}


def test_the_first_visit_is_priced_first_and_the_others_later():
    first, *later = weekly()
    assert first.price.visit is Visit.FIRST
    assert first.price.referral_discount_cents == 500
    assert "ext_oven" in {line.id for line in first.price.lines}
    assert first.duration_minutes == 150
    for visit in later:
        assert visit.price.visit is Visit.LATER
        assert visit.price.referral_discount_cents == 0
        assert "ext_oven" not in {line.id for line in visit.price.lines}
        assert visit.duration_minutes == 120


def test_each_visit_is_priced_at_its_own_date():
    visits = weekly()
    holiday = next(v for v in visits if v.local_start.date() == HOLIDAY)
    assert [fee.id for fee in holiday.price.fees] == ["fee_holiday"]
    assert all(not v.price.fees for v in visits if v is not holiday)


def test_a_multi_day_job_may_not_outlast_its_interval():
    assert len(weekly(days=7)[0].day_blocks()) == 7
    with pytest.raises(ValidationFailed) as caught:
        weekly(days=8)
    assert caught.value.field_errors == {"days": "A job of 8 days cannot repeat every 7 days."}


def test_a_plan_checks_its_fields_like_a_single_booking():
    with pytest.raises(ValidationFailed) as caught:
        booked(order("weekly", notes="x" * 2001), start=local(2026, 3, 3, 9, 20))
    assert set(caught.value.field_errors) == {"notes", "start_iso"}


def test_a_one_time_frequency_is_no_plan():
    with pytest.raises(ValueError, match="new_booking"):
        new_plan(
            order(), start=local(2026, 3, 3, 9), interval_days=7, price_visit=pricer(order()), at=AT
        )


def test_a_plan_from_a_quote_carries_the_quote_on_every_visit():
    assert {v.quote_id for v in weekly(quote_id="quo_1")} == {"quo_1"}


# --- Extending -------------------------------------------------------------------------


def test_extend_adds_the_missing_visits_after_the_last_and_is_idempotent():
    visits = weekly()
    until = local(2026, 5, 20)
    added = _extend(visits, until)
    assert [v.visit_index for v in added] == [8, 9, 10, 11]
    assert [v.local_start for v in added] == [
        local(2026, 4, 28, 9),
        local(2026, 5, 5, 9),
        local(2026, 5, 12, 9),
        local(2026, 5, 19, 9),
    ]
    assert {v.plan_id for v in added} == {visits[0].plan_id}
    assert all(v.price.visit is Visit.LATER for v in added)
    assert all(v.activity[0].details == {"planExtension": True} for v in added)
    assert _extend([*visits, *added], until) == []
    assert _extend(visits, local(2026, 4, 28, 9)) == []


def test_extend_keeps_the_rhythm_when_the_last_visit_was_moved_alone():
    visits = weekly()
    moved = reschedule(
        visits, visits[-1].id, local(2026, 4, 23, 14), RescheduleScope.THIS, at=AT, cutoff_hours=24
    )
    added = _extend([*visits[:-1], *moved], local(2026, 5, 1))
    assert [v.local_start for v in added] == [local(2026, 4, 28, 9)]


def test_extend_continues_the_shifted_rhythm_after_a_this_and_future_move():
    visits = weekly()
    moved = reschedule(
        visits,
        visits[5].id,
        local(2026, 4, 8, 10),
        RescheduleScope.THIS_AND_FUTURE,
        at=AT,
        cutoff_hours=24,
    )
    added = _extend([*visits[:5], *moved], local(2026, 5, 7))
    assert [v.local_start for v in added] == [local(2026, 4, 29, 10), local(2026, 5, 6, 10)]


def test_extend_continues_after_a_last_visit_cancelled_alone():
    visits = weekly()
    gone = cancel_visits(visits, visits[-1].id, THIS, at=AT)
    added = _extend([*visits[:-1], *gone], local(2026, 5, 1))
    assert [v.visit_index for v in added] == [8]


def test_extend_copies_the_last_visit_crew_address_and_notes():
    visits = weekly(notes="Dog in the yard", crew_ids=("crew_a", "crew_b"))
    added = _extend(visits, local(2026, 5, 1))
    assert added[0].crew_ids == ("crew_a", "crew_b")
    assert added[0].notes == "Dog in the yard"
    assert added[0].address == visits[-1].address


def test_extend_adds_nothing_once_the_plan_ended():
    visits = weekly()
    gone = cancel_visits(visits, visits[6].id, FUTURE, at=AT)
    survivors = [v for v in visits if v.id not in {g.id for g in gone}]
    assert _extend([*survivors, *gone], local(2026, 8, 1)) == []


def test_extend_stops_at_a_plan_end_beyond_the_horizon():
    visits = weekly()
    changed = cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 5, 12))
    assert [v.visit_index for v in changed] == [7]
    rest = [v for v in visits if v.id != changed[0].id]
    added = _extend([*rest, *changed], local(2026, 8, 1))
    assert [v.local_start.date() for v in added] == [
        date(2026, 4, 28),
        date(2026, 5, 5),
        date(2026, 5, 12),
    ]
    assert all(v.plan_ends_on == date(2026, 5, 12) for v in added)


def test_extend_takes_the_visits_of_one_plan():
    with pytest.raises(ValueError, match="one plan"):
        _extend(booked(), local(2026, 5, 1))
    with pytest.raises(ValueError, match="one plan"):
        _extend([*weekly(), *weekly()], local(2026, 5, 1))
    with pytest.raises(ValueError, match="one plan"):
        _extend([], local(2026, 5, 1))


# --- Cancel scopes ---------------------------------------------------------------------


def test_cancel_this_cancels_only_the_target_visit():
    visits = weekly()
    changed = cancel_visits(visits, visits[2].id, THIS, at=AT, reason="Away")
    assert [v.id for v in changed] == [visits[2].id]
    assert changed[0].status is BookingStatus.CANCELLED
    assert changed[0].cancel_reason == "Away"
    assert changed[0].activity[-1].details == {"scope": "this", "reason": "Away"}
    assert changed[0].plan_ends_on is None


def test_cancel_this_and_future_cancels_the_target_and_later_scheduled_visits():
    visits = weekly()
    changed = cancel_visits(visits, visits[5].id, FUTURE, at=AT)
    assert [v.visit_index for v in changed] == [5, 6, 7]
    assert all(v.status is BookingStatus.CANCELLED for v in changed)
    assert all(v.plan_ends_on == date(2026, 4, 6) for v in changed)
    # The visit asked for notes only the scope; the later ones name it as their target.
    assert changed[0].activity[-1].details == {"scope": "this_and_future"}
    assert changed[1].activity[-1].details == {
        "scope": "this_and_future",
        "targetId": visits[5].id,
    }
    assert plan_ends_on(changed) == date(2026, 4, 6)


def test_cancel_this_and_future_leaves_started_and_completed_later_visits_alone():
    visits = weekly()
    visits[6] = start_job(visits[6], AT)
    visits[7] = complete_job(start_job(visits[7], AT), visits[7].start)
    changed = cancel_visits(visits, visits[4].id, FUTURE, at=AT)
    # The end is on the visits cancelled; the completed last visit is not changed.
    assert [v.visit_index for v in changed] == [4, 5]
    assert all(v.plan_ends_on == date(2026, 3, 30) for v in changed)


@pytest.mark.parametrize("closed", [BookingStatus.CANCELLED, BookingStatus.COMPLETED])
def test_ending_a_plan_never_changes_a_last_visit_already_closed(closed):
    """The plan's end goes on its last scheduled visit instead, and extension keeps it."""
    visits = weekly()
    visits[7] = _with_status(visits[7], closed)
    # This and future from visit 5: 5 and 6 are cancelled and carry the end.
    changed = cancel_visits(visits, visits[5].id, FUTURE, at=AT)
    assert [v.visit_index for v in changed] == [5, 6]
    assert all(v.status is BookingStatus.CANCELLED for v in changed)
    assert all(v.plan_ends_on == date(2026, 4, 6) for v in changed)

    # Of the same plan, the end after the materialised visits: noted on visit 6.
    ends = date(2026, 5, 12)  # three weeks past the last visit
    changed = cancel_visits(visits, visits[1].id, AFTER, at=AT, after=ends)
    assert [v.visit_index for v in changed] == [6]
    assert changed[0].status is BookingStatus.SCHEDULED
    assert changed[0].plan_ends_on == ends
    assert changed[0].activity[-1].kind is ActivityKind.PLAN_ENDED
    assert changed[0].activity[-1].details["endsOn"] == "2026-05-12"
    ended = [*visits[:6], *changed, visits[7]]
    added = _extend(ended, local(2026, 7, 1))
    assert [v.local_start.date() for v in added] == [date(2026, 4, 28), date(2026, 5, 5), ends]
    assert cancel_visits(ended, visits[1].id, AFTER, at=AT, after=date(2026, 6, 1)) == []


def test_ending_a_plan_with_no_scheduled_visit_left_changes_nothing():
    """Such a plan is never extended again, so there is nothing to end."""
    first, *rest = weekly()
    visits = [
        _with_status(first, BookingStatus.COMPLETED),
        *(_with_status(v, BookingStatus.CANCELLED) for v in rest),
    ]
    assert cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 3, 10)) == []


@given(
    target=st.integers(min_value=0, max_value=7),
    statuses=st.lists(st.sampled_from(BookingStatus), min_size=8, max_size=8),
)
def test_cancel_this_and_future_never_touches_earlier_visits_or_closed_ones(target, statuses):
    visits = [_with_status(v, status) for v, status in zip(weekly(), statuses, strict=True)]
    assume(visits[target].status is BookingStatus.SCHEDULED)
    changed = cancel_visits(visits, visits[target].id, FUTURE, at=AT)
    assert all(v.visit_index >= target for v in changed)
    by_id = {v.id: v for v in visits}
    for after in changed:
        assert by_id[after.id].status is BookingStatus.SCHEDULED
        assert after.status is BookingStatus.CANCELLED


def _with_status(visit: Booking, status: BookingStatus) -> Booking:
    if status is BookingStatus.IN_PROGRESS:
        return start_job(visit, AT)
    if status is BookingStatus.COMPLETED:
        return complete_job(start_job(visit, AT), visit.start)
    if status is BookingStatus.CANCELLED:
        return cancel(visit, AT)
    return visit


@pytest.mark.parametrize("scope", [THIS, FUTURE])
def test_cancel_refuses_a_target_that_is_not_scheduled_naming_why(scope):
    visits = weekly()
    visits[3] = start_job(visits[3], AT)
    with pytest.raises(InvalidTransition) as caught:
        cancel_visits(visits, visits[3].id, scope, at=AT)
    assert caught.value.reason == "the job has already started"


def test_cancel_this_and_future_of_a_single_booking_cancels_just_it():
    made = booked()
    changed = cancel_visits(made, made[0].id, FUTURE, at=AT)
    assert [v.status for v in changed] == [BookingStatus.CANCELLED]
    assert changed[0].plan_ends_on is None


def test_cancel_this_and_future_spares_scheduled_visits_already_under_way():
    visits = weekly()
    now = visits[3].start
    changed = cancel_visits(visits, visits[2].id, FUTURE, at=now)
    assert [v.visit_index for v in changed] == [2, 4, 5, 6, 7]


def test_plan_after_cancels_visits_on_local_dates_after_the_date():
    visits = weekly()
    changed = cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 3, 31))
    assert [v.visit_index for v in changed] == [5, 6, 7]
    assert all(v.plan_ends_on == date(2026, 3, 31) for v in changed)
    assert changed[0].activity[-1].details == {"scope": "plan_after", "targetId": visits[0].id}


def test_plan_after_judges_the_date_in_the_company_zone():
    visits = booked(order("weekly"), start=local(2026, 3, 3, 21))
    assert visits[0].start.date() == date(2026, 3, 4)  # already the next day in UTC
    changed = cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 3, 3))
    assert [v.visit_index for v in changed] == list(range(1, 8))


def test_plan_after_may_be_asked_from_any_visit_even_a_completed_one():
    visits = weekly()
    visits[0] = complete_job(start_job(visits[0], AT), visits[0].start)
    changed = cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 4, 14))
    assert [v.visit_index for v in changed] == [7]


def test_plan_after_leaves_scheduled_visits_already_past_alone():
    visits = weekly()
    now = visits[2].start + timedelta(hours=1)
    changed = cancel_visits(visits, visits[5].id, AFTER, at=now, after=date(2026, 3, 1))
    assert [v.visit_index for v in changed] == [3, 4, 5, 6, 7]


def test_plan_after_beyond_the_materialised_visits_writes_the_end_on_the_last_visit():
    visits = weekly()
    changed = cancel_visits(visits, visits[1].id, AFTER, at=AT, after=date(2026, 6, 30))
    assert [v.visit_index for v in changed] == [7]
    assert changed[0].status is BookingStatus.SCHEDULED
    assert changed[0].plan_ends_on == date(2026, 6, 30)
    assert changed[0].activity[-1].details == {
        "scope": "plan_after",
        "endsOn": "2026-06-30",
        "targetId": visits[1].id,
    }
    again = cancel_visits(
        [*visits[:7], *changed], visits[1].id, AFTER, at=AT, after=date(2026, 7, 30)
    )
    assert again == []  # a plan that ended cannot be prolonged by ending it later


def test_plan_after_needs_a_plan():
    made = booked()
    with pytest.raises(InvalidTransition, match="not part of a recurring plan"):
        cancel_visits(made, made[0].id, AFTER, at=AT, after=date(2026, 3, 1))


@pytest.mark.parametrize(
    ("scope", "after", "error"),
    [
        (AFTER, None, "Required with scope plan_after."),
        (THIS, date(2026, 4, 1), "Only used with scope plan_after."),
        (FUTURE, date(2026, 4, 1), "Only used with scope plan_after."),
    ],
)
def test_after_goes_with_plan_after_only(scope, after, error):
    visits = weekly()
    with pytest.raises(ValidationFailed) as caught:
        cancel_visits(visits, visits[0].id, scope, at=AT, after=after)
    assert caught.value.field_errors == {"after": error}


def test_cancel_of_a_visit_not_given_is_not_found():
    with pytest.raises(NotFoundError):
        cancel_visits(weekly(), "bkg_nope", THIS, at=AT)


def test_cancel_scopes_check_the_reason_length():
    visits = weekly()
    with pytest.raises(ValidationFailed) as caught:
        cancel_visits(visits, visits[0].id, FUTURE, at=AT, reason="x" * 501)
    assert set(caught.value.field_errors) == {"reason"}


# --- Reschedule scopes -----------------------------------------------------------------


def _move(visits, index, new_start, scope=RescheduleScope.THIS, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.setdefault("at", AT)
    kwargs.setdefault("cutoff_hours", 24)
    return reschedule(visits, visits[index].id, new_start, scope, **kwargs)


def test_reschedule_this_moves_only_the_target_and_keeps_its_place_in_the_plan():
    visits = weekly()
    (moved,) = _move(visits, 2, local(2026, 3, 18, 13))
    assert moved.local_start == local(2026, 3, 18, 13)
    assert moved.end == moved.start + timedelta(minutes=120)
    assert moved.planned_start == visits[2].planned_start
    assert moved.selection.start == moved.start
    assert moved.version == 2
    assert moved.activity[-1].kind is ActivityKind.RESCHEDULED
    assert moved.activity[-1].details == {
        "scope": "this",
        "from": "2026-03-17T09:00:00-04:00",
        "to": "2026-03-18T13:00:00-04:00",
        "insideCutoff": False,
    }


@pytest.mark.parametrize(
    ("new_start", "inside"),
    [
        (AT + timedelta(hours=23, minutes=45), True),
        (AT + timedelta(hours=24), False),
        (AT + timedelta(days=5), False),
    ],
)
def test_a_move_to_a_start_inside_the_cutoff_is_noted_but_not_refused(new_start, inside):
    (moved,) = _move(booked(), 0, new_start)
    assert moved.activity[-1].details["insideCutoff"] is inside


def test_a_move_of_a_visit_that_was_due_inside_the_cutoff_is_noted():
    made = booked(start=AT + timedelta(hours=20))
    (moved,) = _move(made, 0, AT + timedelta(days=4))
    assert moved.activity[-1].details["insideCutoff"] is True
    (free,) = _move(made, 0, AT + timedelta(days=4), cutoff_hours=0)
    assert free.activity[-1].details["insideCutoff"] is False


def test_reschedule_this_and_future_shifts_later_visits_by_the_same_wall_clock_shift():
    visits = weekly()
    moved = _move(visits, 0, local(2026, 3, 4, 10), RescheduleScope.THIS_AND_FUTURE)
    assert [v.visit_index for v in moved] == list(range(8))
    assert [v.local_start for v in moved] == [local(2026, 3, d, 10) for d in (4, 11, 18, 25)] + [
        local(2026, 4, d, 10) for d in (1, 8, 15, 22)
    ]
    assert all(v.planned_start == v.start for v in moved)
    assert moved[3].activity[-1].details["targetId"] == visits[0].id
    assert "targetId" not in moved[0].activity[-1].details


def test_reschedule_this_and_future_leaves_visits_not_scheduled_alone():
    visits = weekly()
    visits[5] = cancel(visits[5], AT)
    visits[6] = start_job(visits[6], AT)
    moved = _move(visits, 3, local(2026, 3, 24, 11), RescheduleScope.THIS_AND_FUTURE)
    assert [v.visit_index for v in moved] == [3, 4, 7]


@given(
    target=st.integers(min_value=0, max_value=7),
    days=st.integers(min_value=-6, max_value=6),
    quarters=st.integers(min_value=-20, max_value=20),
    zone=st.sampled_from(("America/New_York", "Europe/Berlin", "Australia/Sydney", "UTC")),
)
def test_reschedule_this_and_future_preserves_spacing_and_never_moves_earlier_visits(
    target, days, quarters, zone
):
    visits = booked(
        order("weekly", timezone=zone),
        start=datetime(2026, 3, 3, 9, tzinfo=ZoneInfo(zone)),
    )
    tz = ZoneInfo(zone)
    new_start = wall_clock_instant(
        visits[target].local_start.date() + timedelta(days=days), time(9), tz
    ) + timedelta(minutes=15 * quarters)
    assume(new_start >= AT and new_start != visits[target].start)
    moved = _move(visits, target, new_start, RescheduleScope.THIS_AND_FUTURE)
    assert [v.visit_index for v in moved] == list(range(target, 8))
    walls = [local_wall(v.start, tz) for v in moved]
    before = [local_wall(v.start, tz) for v in visits[target:]]
    assert [b - a for a, b in pairwise(walls)] == [b - a for a, b in pairwise(before)]
    assert len({w.time() for w in walls}) == 1


def test_reschedule_with_crew_ids_reassigns_each_moved_visit():
    visits = weekly()
    moved = _move(
        visits,
        6,
        local(2026, 4, 14, 9),
        RescheduleScope.THIS_AND_FUTURE,
        crew_ids=("crew_b", "crew_c"),
    )
    assert [v.visit_index for v in moved] == [6, 7]
    assert all(v.crew_ids == ("crew_b", "crew_c") for v in moved)
    assert all(v.start == visits[v.visit_index].start for v in moved)
    assert moved[0].activity[-1].details["crewIds"] == "crew_b,crew_c"


def test_reschedule_to_the_same_start_with_the_same_crew_changes_nothing():
    visits = weekly()
    assert _move(visits, 1, visits[1].start) == []


def test_reschedule_with_the_catalog_re_dates_the_moved_visit_for_its_new_date():
    visits = weekly()
    (moved,) = _move(visits, 2, local(2026, 3, 24, 14), catalog=CATALOG)
    assert [fee.id for fee in moved.price.fees] == ["fee_holiday"]
    assert moved.price.total_cents == visits[2].price.total_cents + 2_500
    details = moved.activity[-1].details
    assert (details["fromTotalCents"], details["toTotalCents"]) == (
        visits[2].price.total_cents,
        moved.price.total_cents,
    )
    (kept,) = _move(visits, 2, local(2026, 3, 24, 14))
    assert kept.price == visits[2].price
    assert "fromTotalCents" not in kept.activity[-1].details


def test_re_dating_off_the_holiday_drops_its_fee_and_keeps_everything_else():
    visits = weekly()
    (on_holiday,) = _move(visits, 2, local(2026, 3, 24, 14), catalog=CATALOG)
    (back,) = _move(
        [*visits[:2], on_holiday, *visits[3:]], 2, local(2026, 3, 17, 9), catalog=CATALOG
    )
    assert back.price == visits[2].price


def test_re_dating_keeps_the_agreed_lines_even_when_the_catalog_changed_since():
    """The price agreed at booking stays: only the date fees follow the new date."""
    visits = weekly()
    dearer = attrs.evolve(
        CATALOG,
        industries=(
            attrs.evolve(
                CATALOG.industries[0],
                services=tuple(
                    attrs.evolve(s, base_price_cents=99_000) for s in CATALOG.industries[0].services
                ),
            ),
        ),
    )
    (moved,) = _move(visits, 2, local(2026, 3, 24, 14), catalog=dearer)
    assert moved.price.lines == visits[2].price.lines
    assert moved.price.discounts == visits[2].price.discounts
    assert moved.price.total_cents == visits[2].price.total_cents + 2_500


def test_moving_within_the_same_date_keeps_the_price_even_if_a_date_fee_was_added_since():
    visits = weekly()
    fee = FeeDefinition(
        "fee_busy", "Busy day", FeeKind.DATE, amount_cents=900, dates=frozenset({date(2026, 3, 17)})
    )
    later = attrs.evolve(CATALOG, fees=(*CATALOG.fees, fee))
    (moved,) = _move(visits, 2, local(2026, 3, 17, 13), catalog=later)
    assert moved.price == visits[2].price


def test_a_hand_priced_visit_keeps_its_price_when_moved_onto_a_holiday():
    visits = weekly()
    hand_lines = tuple(
        line._replace(id=f"line_{index}", discountable=False)
        for index, line in enumerate(visits[2].price.lines)
    )
    hand = attrs.evolve(visits[2], price=attrs.evolve(visits[2].price, lines=hand_lines))
    assert catalog_priced(visits[2])
    assert not catalog_priced(hand)
    (moved,) = _move([*visits[:2], hand, *visits[3:]], 2, local(2026, 3, 24, 14), catalog=CATALOG)
    assert moved.price == hand.price


def test_re_dating_the_first_visit_keeps_its_longer_duration():
    visits = weekly()
    (moved,) = _move(visits, 0, local(2026, 3, 5, 9), catalog=CATALOG)
    assert moved.duration_minutes == 150
    assert moved.end - moved.start == timedelta(minutes=150)


def test_this_and_future_re_dates_each_moved_visit_for_its_own_date():
    visits = weekly()
    # A week on: visit 2 (03-17) lands on the holiday (03-24), visit 3 leaves it.
    moved = _move(
        visits, 2, local(2026, 3, 24, 9), RescheduleScope.THIS_AND_FUTURE, catalog=CATALOG
    )
    fees = {v.visit_index: [f.id for f in v.price.fees] for v in moved}
    assert fees[2] == ["fee_holiday"]
    assert fees[3] == []  # visit 3 was on the holiday; moved a week on, it pays no fee
    assert moved[1].price.total_cents == visits[3].price.total_cents - 2_500


def test_reschedule_this_and_future_of_a_single_booking_moves_just_it():
    made = booked()
    moved = _move(made, 0, local(2026, 3, 5, 9), RescheduleScope.THIS_AND_FUTURE)
    assert [v.id for v in moved] == [made[0].id]
    assert moved[0].planned_start is None


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (BookingStatus.IN_PROGRESS, "the job has already started"),
        (BookingStatus.COMPLETED, "the job is already completed"),
        (BookingStatus.CANCELLED, "it is already cancelled"),
    ],
)
def test_only_a_scheduled_visit_can_be_rescheduled(status, reason):
    visits = weekly()
    visits[1] = _with_status(visits[1], status)
    with pytest.raises(InvalidTransition) as caught:
        _move(visits, 1, local(2026, 3, 12, 9))
    assert caught.value.reason == reason
    assert caught.value.action == "reschedule"


@pytest.mark.parametrize(
    ("new_start", "crew_ids", "paths"),
    [
        (local(2026, 3, 12, 9, 5), None, {"start_iso"}),
        (datetime(2026, 3, 12, 9), None, {"start_iso"}),
        (local(2026, 2, 12, 9), None, {"start_iso"}),
        (local(2026, 3, 12, 9), (), {"crew_ids"}),
        (local(2026, 3, 12, 9, 1), ("crew_a", "crew_a"), {"start_iso", "crew_ids.1"}),
    ],
)
def test_reschedule_checks_its_fields(new_start, crew_ids, paths):
    visits = weekly()
    with pytest.raises(ValidationFailed) as caught:
        _move(visits, 1, new_start, crew_ids=crew_ids)
    assert set(caught.value.field_errors) == paths


def test_reschedule_of_a_visit_not_given_is_not_found():
    with pytest.raises(NotFoundError):
        reschedule(
            weekly(),
            "bkg_nope",
            local(2026, 3, 12, 9),
            RescheduleScope.THIS,
            at=AT,
            cutoff_hours=24,
        )


def test_a_multi_day_visit_moves_all_its_days():
    made = booked(order(days=2))
    (moved,) = _move(made, 0, local(2026, 3, 7, 9))
    assert [s.astimezone(NY) for s, _ in moved.day_blocks()] == [
        local(2026, 3, 7, 9),
        local(2026, 3, 8, 9),
    ]


def test_changes_of_one_plan_keep_the_plan_id():
    visits = weekly()
    moved = _move(visits, 0, local(2026, 3, 4, 9), RescheduleScope.THIS_AND_FUTURE)
    assert {v.plan_id for v in moved} == {visits[0].plan_id}
    assert all(attrs.evolve(v, version=1) != v for v in moved)


def test_extend_makes_no_second_visit_on_a_date_a_visit_of_the_plan_was_moved_onto():
    visits = weekly()  # Tuesdays 09:00, indexes 0-7, the last on 2026-04-21
    moved = reschedule(
        visits, visits[2].id, local(2026, 5, 5, 14), RescheduleScope.THIS, at=AT, cutoff_hours=24
    )
    kept = [*visits[:2], *moved, *visits[3:]]
    added = _extend(kept, local(2026, 5, 20))
    assert [(v.visit_index, v.local_start) for v in added] == [
        (8, local(2026, 4, 28, 9)),
        (10, local(2026, 5, 12, 9)),  # 2026-05-05 is the moved visit's: index 9 stays unused
        (11, local(2026, 5, 19, 9)),
    ]
    assert _extend([*kept, *added], local(2026, 5, 20)) == []


def test_a_this_and_future_move_takes_a_visit_a_dst_gap_had_pushed_to_the_new_time_too():
    before = AT - timedelta(days=1)
    visits = booked(order("weekly"), start=local(2026, 3, 1, 2, 30), at=before)  # Sundays
    assert visits[1].local_start.time() == time(3, 30)  # 2026-03-08: 02:30 does not exist
    moved = reschedule(
        visits, visits[0].id, local(2026, 3, 2, 3), RescheduleScope.THIS_AND_FUTURE,
        at=before, cutoff_hours=24,
    )  # fmt: skip
    assert len(moved) == len(visits)
    assert {(v.local_start.weekday(), v.local_start.time()) for v in moved} == {(0, time(3))}
    assert {local_wall(v.planned_start, NY).time() for v in moved if v.planned_start} == {time(3)}


def test_a_visit_moved_onto_the_dst_night_keeps_moving_with_the_plan():
    """The plan moved from its second visit to 03:30 puts the spring-forward night's visit
    at a real 03:30; moved on to 04:30, that visit goes along: it is no pushed-on 02:30
    any more, though the first visit (left alone) still keeps 02:30."""
    before = AT - timedelta(days=8)
    visits = booked(order("weekly"), start=local(2026, 2, 22, 2, 30), at=before)  # Sundays
    step = reschedule(
        visits, visits[1].id, local(2026, 3, 1, 3, 30), RescheduleScope.THIS_AND_FUTURE,
        at=before, cutoff_hours=24,
    )  # fmt: skip
    current = list(({v.id: v for v in visits} | {v.id: v for v in step}).values())
    assert [v.local_start.time() for v in current] == [time(2, 30)] + [time(3, 30)] * 7
    again = reschedule(
        current, visits[1].id, local(2026, 3, 1, 4, 30), RescheduleScope.THIS_AND_FUTURE,
        at=before, cutoff_hours=24,
    )  # fmt: skip
    assert len(again) == len(visits) - 1
    assert {v.local_start.time() for v in again} == {time(4, 30)}
