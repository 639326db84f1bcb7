"""Plans, pinned where a user or a caller would notice: exact messages and field errors,
the coupon and service terms a plan keeps, reproducible codes, and results that do not
depend on the time zone of the server the core runs on."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import attrs
import pytest

from booking_core.booking_orders import catalog_pricer, fixed_pricer
from booking_core.bookings import Booking, cancel, wall_clock_instant
from booking_core.catalog import FeeDefinition, FeeKind
from booking_core.catalog import Service as CatalogService
from booking_core.coupons import Coupon
from booking_core.errors import InvalidTransition, NotFoundError, ValidationFailed
from booking_core.plans import (
    PLAN_HORIZON_DAYS,
    CancelScope,
    RescheduleScope,
    book,
    cancel_visits,
    extend_plan,
    kept_coupon_terms,
    kept_plan_terms,
    new_plan,
    plan_horizon_end,
    plan_visits,
    reschedule,
)
from booking_core.pricing import Selection, Visit
from tests.unit.bookings_support import AT, CATALOG, NY, Scripted, booked, local, order, pricer

THIS = CancelScope.THIS
FUTURE = CancelScope.THIS_AND_FUTURE
AFTER = CancelScope.PLAN_AFTER
NAIVE = datetime(2026, 3, 1, 12)
AT_TEXT = r"^at must carry a UTC offset$"


def weekly(**changes: object) -> list[Booking]:
    """A weekly plan from Tuesday 2026-03-03 09:00 New York: eight visits to 2026-04-21."""
    return booked(order("weekly", **changes))


def _extend(visits: list[Booking], until: datetime, **kwargs: object) -> list[Booking]:
    kwargs.setdefault("price_visit", pricer(order("weekly")))
    return extend_plan(visits, until, interval_days=7, at=AT, **kwargs)  # type: ignore[arg-type]


def _move(visits, index, new_start, scope=RescheduleScope.THIS, **kwargs):  # type: ignore[no-untyped-def]
    kwargs.setdefault("at", AT)
    kwargs.setdefault("cutoff_hours", 24)
    return reschedule(visits, visits[index].id, new_start, scope, **kwargs)


def test_a_horizon_from_a_repeated_hour_ends_at_the_same_reading_when_that_hour_repeats():
    """Gaza's predicted rules repeat 01:00-02:00 on 2040-09-01 and again 56 days later."""
    gaza = ZoneInfo("Asia/Gaza")
    first_day, last_day = date(2040, 9, 1), date(2040, 9, 1) + timedelta(days=PLAN_HORIZON_DAYS)
    repeated = [
        wall_clock_instant(d, time(1, 30), gaza, fold=0)
        != wall_clock_instant(d, time(1, 30), gaza, fold=1)
        for d in (first_day, last_day)
    ]
    if not all(repeated):  # pragma: no cover - depends on the tz database installed
        pytest.skip("this tz database does not repeat 01:30 on both dates in Asia/Gaza")
    first = wall_clock_instant(first_day, time(1, 30), gaza, fold=1)
    end = plan_horizon_end(first, datetime(2040, 1, 1, tzinfo=UTC), gaza)
    assert end == wall_clock_instant(last_day, time(1, 30), gaza, fold=1)


# --- Messages --------------------------------------------------------------------------


def test_every_plan_operation_names_at_when_it_has_no_offset():
    visits = weekly()
    with pytest.raises(ValueError, match=AT_TEXT):
        new_plan(
            order("weekly"),
            start=local(2026, 3, 3, 9),
            interval_days=7,
            price_visit=pricer(order("weekly")),
            at=NAIVE,
        )
    with pytest.raises(ValueError, match=AT_TEXT):
        extend_plan(
            visits, local(2026, 5, 1), interval_days=7, price_visit=pricer(order()), at=NAIVE
        )
    with pytest.raises(ValueError, match=AT_TEXT):
        cancel_visits(visits, visits[0].id, THIS, at=NAIVE)
    with pytest.raises(ValueError, match=AT_TEXT):
        reschedule(
            visits,
            visits[0].id,
            local(2026, 3, 4, 9),
            RescheduleScope.THIS,
            at=NAIVE,
            cutoff_hours=24,
        )


def test_misuse_of_the_plan_functions_is_refused_with_its_exact_message():
    with pytest.raises(ValueError, match=r"^interval_days must be >= 1$"):
        plan_visits(local(2026, 3, 3, 9), 0, local(2026, 5, 1), NY)
    with pytest.raises(ValueError, match=r"^a one-time frequency is booked with new_booking$"):
        new_plan(
            order(), start=local(2026, 3, 3, 9), interval_days=7, price_visit=pricer(order()), at=AT
        )
    with pytest.raises(
        ValueError, match=r"^interval_days is given exactly for a recurring frequency$"
    ):
        book(
            order(), start=local(2026, 3, 3, 9), price_visit=pricer(order()), at=AT, interval_days=7
        )
    for wrong in (booked(), [*weekly(), *weekly()]):
        with pytest.raises(ValueError, match=r"^extend_plan takes the visits of one plan$"):
            _extend(wrong, local(2026, 5, 1))


def test_a_plan_start_off_the_quarter_hour_is_reported_on_start_iso():
    with pytest.raises(ValidationFailed) as caught:
        booked(order("weekly"), start=local(2026, 3, 3, 9, 10))
    assert caught.value.field_errors == {
        "start_iso": "Must be on the quarter hour (:00, :15, :30 or :45)."
    }


def test_an_invalid_day_count_is_reported_once_not_as_outlasting_the_interval():
    with pytest.raises(ValidationFailed) as caught:
        booked(order("weekly", days=99))
    assert caught.value.field_errors["days"].startswith("A whole number of days from 1 to ")


def test_a_plan_with_other_dates_is_refused_on_additional_start_isos():
    with pytest.raises(ValidationFailed) as caught:
        booked(order("weekly"), additional_starts=(local(2026, 3, 4, 9),))
    assert caught.value.field_errors == {
        "additional_start_isos": "Only for one-time bookings: a plan books its own dates."
    }


def test_book_passes_the_horizon_to_the_plan():
    visits = booked(order("weekly"), horizon_end=local(2026, 3, 20))
    assert [v.local_start.date() for v in visits] == [
        date(2026, 3, 3),
        date(2026, 3, 10),
        date(2026, 3, 17),
    ]


def test_a_target_not_given_is_not_found_by_its_id():
    with pytest.raises(NotFoundError) as caught:
        cancel_visits(weekly(), "bkg_nope", THIS, at=AT)
    assert (caught.value.kind, caught.value.id) == ("booking", "bkg_nope")
    assert str(caught.value) == "No such booking: 'bkg_nope'."


def test_a_reschedule_off_the_quarter_hour_is_reported_on_start_iso():
    visits = weekly()
    with pytest.raises(ValidationFailed) as caught:
        _move(visits, 1, local(2026, 3, 11, 9, 5))
    assert caught.value.field_errors == {
        "start_iso": "Must be on the quarter hour (:00, :15, :30 or :45)."
    }


# --- Coupon and service terms a plan keeps ---------------------------------------------


def test_kept_coupon_terms_lift_every_rule_of_the_plan_coupon_and_only_of_it():
    strict = Coupon(
        "cpn_strict",
        "STRICT",
        percent_bps=1_000,
        valid_from=AT - timedelta(days=9),
        valid_until=AT - timedelta(days=1),
        max_redemptions=3,
        per_customer_limit=1,
        min_subtotal_cents=50_000,
        service_ids=frozenset({"svc_quick"}),
        frequency_slugs=frozenset({"biweekly"}),
        active=False,
    )
    other = attrs.evolve(strict, id="cpn_other", code="OTHER")
    catalog = attrs.evolve(CATALOG, coupons=(strict, other))
    kept = kept_coupon_terms(catalog, Selection("svc_clean", "weekly", coupon_code=" strict "))
    assert kept.coupons == (
        attrs.evolve(
            strict,
            active=True,
            valid_from=None,
            valid_until=None,
            max_redemptions=None,
            per_customer_limit=None,
            min_subtotal_cents=0,
            service_ids=frozenset(),
            frequency_slugs=frozenset(),
        ),
        other,
    )
    assert kept_coupon_terms(catalog, Selection("svc_clean", "weekly")) is catalog


def test_kept_plan_terms_revive_the_plan_service_and_no_other_retired_one():
    (industry,) = CATALOG.industries
    retired = tuple(attrs.evolve(s, active=False) for s in industry.services)
    catalog = attrs.evolve(CATALOG, industries=(attrs.evolve(industry, services=retired),))
    kept = kept_plan_terms(catalog, Selection("svc_clean", "weekly"))
    services: dict[str, CatalogService] = kept.services_by_id
    assert services["svc_clean"].active is True
    assert services["svc_quick"].active is False


# --- Codes drawn from the caller's rng -------------------------------------------------


def test_a_plan_redraws_a_repeated_code_from_the_given_rng():
    visits = booked(order("weekly"), rng=Scripted("ZZZZZ" * 8))
    again = booked(order("weekly"), rng=Scripted("ZZZZZ" * 8))
    assert [v.code for v in visits] == [v.code for v in again]
    assert len({v.code for v in visits}) == 8


def test_an_extension_redraws_a_repeated_code_from_the_given_rng():
    visits = weekly()
    added = _extend(visits, local(2026, 6, 1), rng=Scripted("YYYYY" * 5))
    again = _extend(visits, local(2026, 6, 1), rng=Scripted("YYYYY" * 5))
    assert [v.code for v in added] == [v.code for v in again]
    assert len({v.code for v in added}) == len(added) == 5


def test_a_single_booking_and_several_dates_draw_their_codes_from_the_given_rng():
    (one,) = booked(rng=Scripted("ABCDE"))
    assert one.code == "SC-ABCDE"
    dates = booked(additional_starts=(local(2026, 3, 5, 9),), rng=Scripted("FGHJKMNPQR"))
    assert [v.code for v in dates] == ["SC-FGHJK", "SC-MNPQR"]


def test_a_single_booking_is_priced_as_a_first_visit_at_its_own_date():
    (one,) = booked(start=local(2026, 3, 24, 9))
    assert one.price.visit is Visit.FIRST
    assert [fee.id for fee in one.price.fees] == ["fee_holiday"]


def test_a_single_booking_asks_its_pricer_for_the_first_visit_price():
    start = local(2026, 3, 5, 9)
    first = pricer(order())(start, Visit.FIRST)
    later = pricer(order("weekly"))(start, Visit.LATER)
    (one,) = book(order(), start=start, price_visit=fixed_pricer(first, later), at=AT)
    assert one.price == first


# --- Extending -------------------------------------------------------------------------


def test_each_added_visit_is_priced_at_its_own_date():
    fee = FeeDefinition(
        "fee_may",
        "May holiday",
        FeeKind.DATE,
        amount_cents=2_500,
        dates=frozenset({date(2026, 5, 5)}),
    )
    catalog = attrs.evolve(CATALOG, fees=(fee,))
    added = _extend(
        weekly(), local(2026, 5, 13), price_visit=catalog_pricer(catalog, order("weekly"), at=AT)
    )
    assert [[f.id for f in v.price.fees] for v in added] == [[], ["fee_may"], []]


def test_a_plan_of_a_single_visit_extends():
    (first,) = booked(order("weekly"), horizon_end=local(2026, 3, 4))
    added = _extend([first], local(2026, 3, 18))
    assert [v.local_start for v in added] == [local(2026, 3, 10, 9), local(2026, 3, 17, 9)]


def test_extend_follows_the_last_visit_not_cancelled_even_after_a_later_one_moved():
    visits = weekly()
    moved = _move(visits, 7, local(2026, 4, 22, 11), RescheduleScope.THIS_AND_FUTURE)
    gone = cancel_visits([*visits[:7], *moved], visits[7].id, THIS, at=AT)
    added = _extend([*visits[:7], *gone], local(2026, 5, 6))
    assert [v.local_start for v in added] == [local(2026, 4, 28, 9), local(2026, 5, 5, 9)]


def test_extend_keeps_the_wall_clock_hour_across_the_autumn_dst_change():
    visits = booked(order("weekly"), start=local(2026, 10, 13, 9))
    added = _extend(visits, local(2026, 12, 20))
    assert [v.local_start.hour for v in added] == [9] * len(added)
    assert added[0].local_start.date() == date(2026, 12, 8)


# --- Cancel ----------------------------------------------------------------------------


def test_plan_after_reports_the_reason_and_the_missing_date_together():
    visits = weekly()
    with pytest.raises(ValidationFailed) as caught:
        cancel_visits(visits, visits[0].id, AFTER, at=AT, reason="x" * 501)
    assert set(caught.value.field_errors) == {"reason", "after"}


def test_ending_a_plan_again_on_a_later_date_changes_nothing():
    """A plan ended after its third visit (the rest cancelled) ends no later when asked
    again with a later date: no visit is changed, so none is noted or listed."""
    visits = weekly()
    changed = {v.id: v for v in cancel_visits(visits, visits[0].id, AFTER, at=AT,
                                              after=date(2026, 3, 17))}  # fmt: skip
    assert [v.visit_index for v in changed.values()] == [3, 4, 5, 6, 7]
    now = [changed.get(v.id, v) for v in visits]
    for later in (date(2026, 3, 17), date(2026, 6, 1)):
        assert cancel_visits(now, now[0].id, AFTER, at=AT, after=later) == []
    # An earlier end still moves it: the visit after the new end is cancelled with it.
    earlier = cancel_visits(now, now[0].id, AFTER, at=AT, after=date(2026, 3, 10))
    assert [(v.visit_index, v.status.value, v.plan_ends_on) for v in earlier] == [
        (2, "cancelled", date(2026, 3, 10))
    ]


def test_cancel_this_and_future_writes_the_reason_on_every_cancelled_visit():
    visits = weekly()
    changed = cancel_visits(visits, visits[5].id, FUTURE, at=AT, reason="Moving away")
    assert [v.cancel_reason for v in changed] == ["Moving away"] * 3


def test_cancel_this_and_future_refuses_a_cancelled_target_naming_the_cancel():
    visits = weekly()
    visits[3] = cancel(visits[3], AT)
    with pytest.raises(InvalidTransition) as caught:
        cancel_visits(visits, visits[3].id, FUTURE, at=AT)
    assert str(caught.value) == (
        f"Cannot cancel booking {visits[3].id} (cancelled): it is already cancelled"
    )


def test_plan_after_of_a_single_booking_is_refused_with_the_exact_message():
    made = booked()
    with pytest.raises(InvalidTransition) as caught:
        cancel_visits(made, made[0].id, AFTER, at=AT, after=date(2026, 3, 1))
    assert str(caught.value) == (
        f"Cannot end the plan of booking {made[0].id} (scheduled): "
        "it is not part of a recurring plan"
    )


def test_cancel_this_and_future_of_a_visit_moved_alone_ends_the_plan_before_its_planned_date():
    visits = weekly()
    (moved,) = _move(visits, 3, local(2026, 3, 26, 9))
    changed = cancel_visits([*visits[:3], moved, *visits[4:]], moved.id, FUTURE, at=AT)
    assert {v.plan_ends_on for v in changed} == {date(2026, 3, 23)}


# --- Reschedule ------------------------------------------------------------------------


def test_a_move_to_the_repeated_hour_keeps_the_second_occurrence():
    visits = booked(order("weekly"), start=local(2026, 10, 13, 9))
    second = local(2026, 11, 1, 1, 30, fold=1)
    (moved,) = _move(visits, 2, second)
    assert moved.start == second.astimezone(UTC)


def test_a_this_and_future_move_across_dst_shifts_the_planned_starts_on_the_wall_clock():
    visits = weekly()
    moved = _move(visits, 0, local(2026, 3, 10, 9), RescheduleScope.THIS_AND_FUTURE)
    assert moved[0].planned_start == local(2026, 3, 10, 9)
    assert all(v.planned_start == v.start for v in moved)


def test_a_this_and_future_reassignment_skips_a_target_already_so_staffed():
    visits = weekly(crew_ids=("crew_a",))
    later = [attrs.evolve(v, crew_ids=("crew_b",)) for v in visits[4:]]
    moved = _move(
        [*visits[:4], *later],
        3,
        visits[3].start,
        RescheduleScope.THIS_AND_FUTURE,
        crew_ids=("crew_a",),
    )
    assert [v.visit_index for v in moved] == [4, 5, 6, 7]
    assert all(v.crew_ids == ("crew_a",) for v in moved)


def test_re_dating_a_later_visit_keeps_it_a_later_visit():
    visits = weekly()
    (moved,) = _move(visits, 2, local(2026, 3, 24, 9), catalog=CATALOG)
    assert moved.price.visit is Visit.LATER
    assert moved.duration_minutes == 120


def test_re_dating_never_changes_the_duration():
    visits = weekly()
    (moved,) = _move(visits, 0, local(2026, 3, 24, 9), catalog=CATALOG)
    assert moved.duration_minutes == visits[0].duration_minutes == 150
    assert moved.end - moved.start == timedelta(minutes=150)


# --- Whatever the server's own time zone -----------------------------------------------


@pytest.mark.usefixtures("server_far_east")
def test_a_plan_is_booked_on_the_company_quarter_hour_whatever_the_server_zone():
    visits = weekly()
    assert len(visits) == 8
    (moved,) = _move(visits, 1, local(2026, 3, 11, 10))
    assert moved.local_start == local(2026, 3, 11, 10)


@pytest.mark.usefixtures("server_far_east")
def test_plan_end_dates_are_company_dates_whatever_the_server_zone():
    visits = weekly()
    changed = cancel_visits(visits, visits[5].id, FUTURE, at=AT)
    assert {v.plan_ends_on for v in changed} == {date(2026, 4, 6)}
    ended = cancel_visits(visits, visits[0].id, AFTER, at=AT, after=date(2026, 5, 12))
    rest = [v for v in visits if v.id != ended[0].id]
    added = _extend([*rest, *ended], local(2026, 8, 1))
    assert [v.local_start.date() for v in added][-1] == date(2026, 5, 12)


@pytest.mark.usefixtures("server_in_new_york")
def test_a_first_visit_in_the_repeated_hour_keeps_its_fold_whatever_the_server_zone():
    first = local(2026, 11, 1, 1, 30, fold=1)
    starts = plan_visits(first, 7, local(2026, 11, 20), NY)
    assert starts[0] == first.astimezone(UTC)
