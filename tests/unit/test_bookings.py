"""Bookings: human codes, the record and its multi-day blocks, creating single and
multi-date bookings, status transitions, tracking, and the customer statistics bridge."""

from __future__ import annotations

import base64
import random
from datetime import UTC, datetime, time, timedelta

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from booking_core import booking_orders
from booking_core.booking_orders import (
    MAX_ADDITIONAL_STARTS,
    distinct_codes,
    fixed_pricer,
    new_booking,
    new_multi_date,
    redraw_codes,
)
from booking_core.bookings import (
    CROCKFORD,
    ActivityKind,
    BookingStatus,
    cancel,
    complete_job,
    customer_visits,
    human_code,
    is_human_code,
    normalize_human_code,
    start_job,
    tracking_active,
    tracking_ends_at,
    tracking_url,
)
from booking_core.customers import Address, VisitStatus, lifetime
from booking_core.errors import InvalidTransition, RuleViolation, ValidationFailed
from booking_core.plans import book
from booking_core.pricing import Selection, Visit, price
from booking_core.quotes import AWARE_TEXT
from tests.strategies import code_prefixes
from tests.unit.bookings_support import (
    AT,
    CATALOG,
    NY,
    Scripted,
    booked,
    local,
    order,
    pricer,
    single,
)

# --- Human codes -----------------------------------------------------------------------


@given(prefix=code_prefixes, rng=st.randoms(use_true_random=False))
def test_human_codes_always_match_the_pattern_and_never_use_i_l_o_u(prefix, rng):
    code = human_code(prefix, rng)
    assert is_human_code(code)
    assert code.startswith(f"{prefix}-")
    body = code[3:]
    assert len(body) == 5
    assert not set(body) & set("ILOU")
    assert set(body) <= set(CROCKFORD)


def test_crockford_alphabet_is_32_characters_without_i_l_o_u():
    assert len(set(CROCKFORD)) == 32
    assert not set(CROCKFORD) & set("ILOU")


def test_human_code_with_a_seeded_rng_is_repeatable():
    assert human_code("SC", random.Random(7)) == human_code("SC", random.Random(7))


def test_human_code_without_an_rng_uses_system_randomness():
    codes = {human_code("SC") for _ in range(50)}
    assert len(codes) > 45
    assert all(is_human_code(code) for code in codes)


@pytest.mark.parametrize("prefix", ["sc", "S", "SCX", "S1", ""])
def test_human_code_refuses_a_prefix_that_is_not_two_capitals(prefix):
    with pytest.raises(ValueError, match="two capital letters"):
        human_code(prefix)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("SC-7K3QX", True),
        ("SC-00000", True),
        ("sc-7k3qx", False),
        ("SC-7K3QO", False),
        ("SC-7K3QI", False),
        ("SC-7K3QL", False),
        ("SC-7K3QU", False),
        ("SC-7K3Q", False),
        ("SC-7K3QXX", False),
        ("SC7K3QX", False),
        ("S1-7K3QX", False),
        ("SC-7K3QX\n", False),
        ("bkg_0123456789abcdef01234567", False),
    ],
)
def test_is_human_code_accepts_only_the_canonical_form(text, expected):
    assert is_human_code(text) is expected


@pytest.mark.parametrize(
    ("typed", "canonical"),
    [
        ("SC-7K3QX", "SC-7K3QX"),
        (" sc-7k3qx ", "SC-7K3QX"),
        ("SC-7K3Q0", "SC-7K3Q0"),
        ("sc-7k3qo", "SC-7K3Q0"),
        ("SC-IL000", "SC-11000"),
        ("OL-A0000", "OL-A0000"),
        ("SC-7K3QU", None),
        ("SC-7K3Q", None),
        ("bkg_1234", None),
    ],
)
def test_normalize_human_code_forgives_case_spaces_and_crockford_lookalikes(typed, canonical):
    assert normalize_human_code(typed) == canonical


def test_redraw_codes_gives_fresh_codes_distinct_from_each_other_and_from_taken_ones():
    first, second = booked(), booked()
    taken = {first[0].code, second[0].code}
    fresh = redraw_codes([*first, *second], rng=Scripted("AAAAAAAAAABBBBB"), avoid=taken)
    codes = [b.code for b in fresh]
    assert codes[0] == "SC-AAAAA"
    assert codes[1] not in {"SC-AAAAA", *taken}
    assert all(is_human_code(code) for code in codes)
    assert [b.id for b in fresh] == [first[0].id, second[0].id]


def test_bookings_made_together_never_share_a_code():
    visits = booked(order("weekly"), rng=Scripted("ZZZZZ" * 8))
    codes = [v.code for v in visits]
    assert len(visits) == 8
    assert len(set(codes)) == len(codes)
    assert codes[0] == "SC-ZZZZZ"


def test_distinct_codes_keeps_the_first_of_a_repeated_code():
    visits = booked(order("weekly"))
    same = [attrs.evolve(v, code="SC-AAAAA") for v in visits[:3]]
    kept = distinct_codes(same)
    assert kept[0].code == "SC-AAAAA"
    assert len({b.code for b in kept}) == 3


# --- The record ------------------------------------------------------------------------


def test_a_new_booking_is_scheduled_with_code_token_and_a_created_entry():
    made = booked()[0]
    assert made.status is BookingStatus.SCHEDULED
    assert made.id.startswith("bkg_")
    assert is_human_code(made.code)
    assert made.code.startswith("SC-")
    assert made.version == 1
    assert made.created_at == made.updated_at == AT
    assert [e.kind for e in made.activity] == [ActivityKind.CREATED]
    assert made.plan_id is made.group_id is made.planned_start is None
    assert made.visit_index == 0


def test_the_tracking_token_carries_256_random_bits():
    made = booked()[0]
    assert len(base64.urlsafe_b64decode(made.tracking_token + "=")) == 32
    assert booked()[0].tracking_token != made.tracking_token


def test_instants_are_stored_in_utc_and_end_is_start_plus_the_priced_duration():
    made = booked(start=local(2026, 3, 3, 9))[0]
    assert made.start == datetime(2026, 3, 3, 14, 0, tzinfo=UTC)
    assert made.start.tzinfo is UTC
    assert made.local_start == local(2026, 3, 3, 9)
    assert made.duration_minutes == made.price.duration_minutes == 150
    assert made.end == made.start + timedelta(minutes=150)


def test_end_is_reckoned_in_elapsed_time_across_a_dst_change():
    made = booked(start=local(2026, 3, 8, 1, 0))[0]
    assert made.end - made.start == timedelta(minutes=150)
    assert made.end.astimezone(NY).time() == time(4, 30)  # an hour of wall clock was skipped


def test_the_selection_is_kept_with_the_visit_start_and_address_zip():
    made = booked()[0]
    assert made.selection.start == made.start
    assert made.selection.zip_code == "10001"
    assert price(CATALOG, made.selection, at=AT) == made.price


@pytest.mark.parametrize(
    "changes",
    [
        {"end": datetime(2026, 3, 3, 15, tzinfo=UTC)},
        {"days": 0},
        {"days": 15},
        {"crew_ids": ()},
        {"status": BookingStatus.COMPLETED},
        {"cancelled_at": AT},
        {"version": 0},
        {"visit_index": -1},
        {"timezone": "Mars/Olympus"},
    ],
)
def test_a_booking_refuses_inconsistent_fields(changes):
    with pytest.raises((ValueError, KeyError)):  # an unknown zone is a KeyError
        single(**changes)


def test_a_naive_instant_is_refused_by_the_record():
    with pytest.raises(ValueError, match="UTC offset"):
        single(created_at=datetime(2026, 3, 1, 12))


def test_a_one_day_job_has_one_block_from_start_to_end():
    made = booked()[0]
    assert made.day_blocks() == ((made.start, made.end),)
    assert made.last_end == made.end


def test_a_multi_day_job_occupies_the_same_wall_clock_hours_on_consecutive_local_dates():
    made = booked(order(days=3), start=local(2026, 3, 7, 9))[0]
    blocks = made.day_blocks()
    assert [s.astimezone(NY) for s, _ in blocks] == [
        local(2026, 3, 7, 9),
        local(2026, 3, 8, 9),
        local(2026, 3, 9, 9),
    ]
    assert all(e - s == timedelta(minutes=150) for s, e in blocks)
    assert made.end == blocks[0][1]
    assert made.last_end == blocks[2][1]


def test_a_day_block_at_a_wall_time_skipped_by_dst_moves_forward_by_the_gap():
    made = booked(order(days=2), start=local(2026, 3, 7, 2, 30), at=AT)[0]
    assert made.day_blocks()[1][0].astimezone(NY) == local(2026, 3, 8, 3, 30)


# --- Creating one booking --------------------------------------------------------------


@pytest.mark.parametrize(
    ("changes", "start", "path", "text"),
    [
        ({}, datetime(2026, 3, 3, 9), "start_iso", "UTC offset"),
        ({}, local(2026, 3, 3, 9, 10), "start_iso", "quarter hour"),
        ({}, local(2026, 3, 3, 9, 15, 30), "start_iso", "quarter hour"),
        ({}, local(2026, 2, 28, 9), "start_iso", "past"),
        ({"days": 0}, None, "days", "1 to 14"),
        ({"days": 15}, None, "days", "1 to 14"),
        ({"notes": "x" * 2001}, None, "notes", "2000"),
        ({"address": Address("1 Main St", "NYC", "NY", "1000")}, None, "address.zip", "5-digit"),
        ({"crew_ids": ()}, None, "crew_ids", "At least one"),
        ({"crew_ids": ("crew_a", "crew_b", "crew_a")}, None, "crew_ids.2", "twice"),
    ],
)
def test_new_booking_names_each_bad_field_by_its_dotted_path(changes, start, path, text):
    with pytest.raises(ValidationFailed) as caught:
        booked(order(**changes), start=start)
    assert set(caught.value.field_errors) == {path}
    assert text in caught.value.field_errors[path]


def test_new_booking_reports_every_bad_field_at_once():
    with pytest.raises(ValidationFailed) as caught:
        booked(order(days=20, notes="x" * 2001), start=local(2026, 3, 3, 9, 5))
    assert set(caught.value.field_errors) == {"days", "notes", "start_iso"}


def test_notes_of_exactly_2000_characters_and_14_days_are_accepted():
    made = booked(order(days=14, notes="x" * 2000))[0]
    assert len(made.notes) == 2000
    assert made.days == 14


def test_a_start_at_now_is_not_in_the_past():
    assert booked(start=AT.replace(minute=0), at=AT)[0].start == AT


def test_new_booking_refuses_a_recurring_frequency():
    made = order("weekly")
    with pytest.raises(ValueError, match="new_plan"):
        new_booking(made, start=local(2026, 3, 3, 9), price=pricer(made)(AT, Visit.FIRST), at=AT)


def test_a_service_that_gives_no_duration_cannot_be_booked():
    made = order(selection=Selection("svc_quick"))
    with pytest.raises(RuleViolation, match="0 minutes"):
        booked(made)


def test_a_booking_from_a_quote_records_the_quote_in_its_created_entry():
    made = booked(order(quote_id="quo_1"))[0]
    assert made.quote_id == "quo_1"
    assert made.activity[0].details == {"quoteId": "quo_1"}


def test_a_team_job_lists_every_member():
    made = booked(order(crew_ids=("crew_a", "crew_b")))[0]
    assert made.crew_ids == ("crew_a", "crew_b")


# --- Several dates at once -------------------------------------------------------------


def _dates(*days: int) -> list[datetime]:
    return [local(2026, 3, day, 9) for day in days]


def test_several_dates_are_booked_together_in_one_group_in_request_order():
    visits = booked(additional_starts=_dates(12, 5))
    assert [v.local_start for v in visits] == _dates(3, 12, 5)
    assert [v.visit_index for v in visits] == [0, 1, 2]
    assert len({v.group_id for v in visits}) == 1
    assert visits[0].group_id is not None
    assert visits[0].group_id.startswith("grp_")
    assert all(v.plan_id is None for v in visits)
    assert len({v.id for v in visits}) == len({v.code for v in visits}) == 3


def test_each_date_is_a_one_time_job_but_the_referral_is_taken_once():
    first, later = booked(additional_starts=_dates(12))
    assert first.price.referral_discount_cents == 500
    assert later.price.referral_discount_cents == 0
    assert {line.id for line in later.price.lines} >= {"ext_oven"}
    assert later.duration_minutes == first.duration_minutes


def test_a_multi_date_request_is_all_or_nothing():
    with pytest.raises(ValidationFailed) as caught:
        booked(additional_starts=[*_dates(12), local(2026, 2, 1, 9)])
    assert caught.value.field_errors == {"additional_start_isos.1": "Must not be in the past."}


@pytest.mark.parametrize(
    ("additional", "errors"),
    [
        (_dates(3), {"additional_start_isos.0": "Same as startIso."}),
        (_dates(5, 6, 5), {"additional_start_isos.2": "Listed twice."}),
        (
            [local(2026, 3, 5, 9, 7), datetime(2026, 3, 6, 9)],
            {
                "additional_start_isos.0": "Must be on the quarter hour (:00, :15, :30 or :45).",
                "additional_start_isos.1": AWARE_TEXT,
            },
        ),
    ],
)
def test_additional_starts_are_checked_one_by_one(additional, errors):
    with pytest.raises(ValidationFailed) as caught:
        booked(additional_starts=additional)
    assert caught.value.field_errors == errors


def test_the_same_instant_written_in_another_offset_is_still_a_duplicate():
    again = local(2026, 3, 3, 9).astimezone(UTC)
    with pytest.raises(ValidationFailed) as caught:
        booked(additional_starts=[again])
    assert caught.value.field_errors == {"additional_start_isos.0": "Same as startIso."}


def test_at_most_twenty_additional_dates():
    starts = [local(2026, 3, 4, 9) + timedelta(days=d) for d in range(MAX_ADDITIONAL_STARTS + 1)]
    assert len(booked(additional_starts=starts[:MAX_ADDITIONAL_STARTS])) == 21
    with pytest.raises(ValidationFailed) as caught:
        booked(additional_starts=starts)
    assert caught.value.field_errors == {"additional_start_isos": "At most 20 dates."}


def test_additional_dates_are_for_one_time_bookings_only():
    with pytest.raises(ValidationFailed) as caught:
        booked(order("weekly"), additional_starts=_dates(5))
    assert set(caught.value.field_errors) == {"additional_start_isos"}
    made = order("weekly")
    with pytest.raises(ValidationFailed):
        new_multi_date(
            made,
            start=local(2026, 3, 3, 9),
            additional_starts=_dates(5),
            price_visit=pricer(made),
            at=AT,
        )


def test_dates_whose_days_overlap_are_refused_on_the_later_date():
    with pytest.raises(ValidationFailed) as caught:
        booked(order(days=3), additional_starts=_dates(10, 4))
    assert set(caught.value.field_errors) == {"additional_start_isos.1"}
    assert "overlap" in caught.value.field_errors["additional_start_isos.1"]


def test_multi_day_dates_that_do_not_overlap_are_accepted():
    visits = booked(order(days=3), additional_starts=_dates(6, 9))
    assert [len(v.day_blocks()) for v in visits] == [3, 3, 3]


def test_two_jobs_on_one_day_are_fine_when_they_do_not_overlap():
    visits = booked(additional_starts=[local(2026, 3, 3, 13)])
    assert len(visits) == 2


def test_new_multi_date_needs_additional_starts():
    made = order()
    with pytest.raises(ValueError, match="new_booking"):
        new_multi_date(
            made, start=local(2026, 3, 3, 9), additional_starts=[], price_visit=pricer(made), at=AT
        )


def test_a_fixed_pricer_ignores_the_date():
    first = pricer(order())(local(2026, 3, 3, 9), Visit.FIRST)
    later = attrs.evolve(first, visit=Visit.LATER)
    price_visit = fixed_pricer(first, later)
    assert price_visit(AT, Visit.FIRST) is first
    assert price_visit(AT, Visit.LATER) is later
    assert fixed_pricer(first)(AT, Visit.LATER) is first


def test_book_refuses_an_interval_that_does_not_match_the_frequency():
    with pytest.raises(ValueError, match="recurring"):
        book(
            order(), start=local(2026, 3, 3, 9), price_visit=pricer(order()), at=AT, interval_days=7
        )


# --- Transitions -----------------------------------------------------------------------


def test_start_moves_a_scheduled_job_to_in_progress_even_early():
    made = single()
    started = start_job(made, AT)
    assert started.status is BookingStatus.IN_PROGRESS
    assert started.activity[-1].kind is ActivityKind.STARTED


def test_complete_moves_a_job_in_progress_to_completed():
    done = complete_job(start_job(single(), AT), AT + timedelta(days=2))
    assert done.status is BookingStatus.COMPLETED
    assert done.completed_at == AT + timedelta(days=2)
    assert done.activity[-1].details == {}


def test_a_scheduled_job_whose_start_has_come_may_be_completed_directly():
    made = single()
    done = complete_job(made, made.start)
    assert done.status is BookingStatus.COMPLETED
    assert done.activity[-1].details == {"skippedStart": True}


def test_a_scheduled_job_cannot_be_completed_before_its_start():
    made = single()
    with pytest.raises(InvalidTransition, match="has not started yet"):
        complete_job(made, made.start - timedelta(minutes=1))


def test_a_job_started_early_is_completed_from_its_own_date_on_not_before():
    made = single()  # 3 March 2026, 09:00 New York
    started = start_job(made, made.start - timedelta(days=3))
    day_before = made.start.astimezone(made.zone).replace(hour=23, minute=59)
    day_before -= timedelta(days=1)
    with pytest.raises(InvalidTransition, match="not until Tuesday, March 3"):
        complete_job(started, day_before)
    early_that_day = made.start - timedelta(hours=2)  # 07:00: before its start time
    assert complete_job(started, early_that_day).status is BookingStatus.COMPLETED


def test_cancel_moves_a_scheduled_job_to_cancelled_with_its_reason():
    gone = cancel(single(), AT, "Customer away")
    assert gone.status is BookingStatus.CANCELLED
    assert gone.cancelled_at == AT
    assert gone.cancel_reason == "Customer away"
    assert gone.activity[-1].kind is ActivityKind.CANCELLED
    assert gone.activity[-1].details == {"reason": "Customer away"}


def test_an_empty_reason_is_no_reason():
    assert cancel(single(), AT, "").cancel_reason is None


def test_a_reason_over_500_characters_is_a_field_error():
    with pytest.raises(ValidationFailed) as caught:
        cancel(single(), AT, "x" * 501)
    assert set(caught.value.field_errors) == {"reason"}


def _in_status(status: BookingStatus):  # type: ignore[no-untyped-def]
    made = single()
    if status is BookingStatus.IN_PROGRESS:
        return start_job(made, AT)
    if status is BookingStatus.COMPLETED:
        return complete_job(start_job(made, AT), made.start)
    if status is BookingStatus.CANCELLED:
        return cancel(made, AT)
    return made


@pytest.mark.parametrize(
    ("status", "reason"),
    [
        (BookingStatus.IN_PROGRESS, "the job has already started"),
        (BookingStatus.COMPLETED, "the job is already completed"),
        (BookingStatus.CANCELLED, "it is already cancelled"),
    ],
)
def test_only_a_scheduled_job_can_be_cancelled_or_started(status, reason):
    made = _in_status(status)
    for action in (cancel, start_job):
        with pytest.raises(InvalidTransition) as caught:
            action(made, AT)
        assert caught.value.reason == reason
        assert caught.value.status == status.value


@pytest.mark.parametrize("status", [BookingStatus.COMPLETED, BookingStatus.CANCELLED])
def test_nothing_leaves_completed_or_cancelled(status):
    with pytest.raises(InvalidTransition):
        complete_job(_in_status(status), AT + timedelta(days=9))


def test_every_change_raises_the_version_by_one_and_stamps_updated_at():
    made = single()
    later = made.start - timedelta(minutes=10)
    started = start_job(made, later)
    done = complete_job(started, later + timedelta(hours=3))
    assert (made.version, started.version, done.version) == (1, 2, 3)
    assert started.updated_at == later
    assert done.updated_at == later + timedelta(hours=3)
    assert len(done.activity) == 3


def test_a_transition_refuses_a_naive_instant():
    with pytest.raises(ValueError, match="UTC offset"):
        start_job(single(), datetime(2026, 3, 3, 9))


# --- Tracking --------------------------------------------------------------------------


def test_tracking_works_while_the_job_is_open():
    made = single()
    far = AT + timedelta(days=3650)
    assert tracking_active(made, far)
    assert tracking_active(start_job(made, AT), far)
    assert tracking_ends_at(made) is None


@pytest.mark.parametrize("end", [complete_job, cancel])
def test_tracking_stops_exactly_90_days_after_completion_or_cancellation(end):
    made = single()
    finished_at = made.start + timedelta(hours=3)
    ended = end(made, finished_at)
    assert tracking_ends_at(ended) == finished_at + timedelta(days=90)
    assert tracking_active(ended, finished_at + timedelta(days=90, microseconds=-1))
    assert not tracking_active(ended, finished_at + timedelta(days=90))


@pytest.mark.parametrize("base", ["https://book.example.com", "https://book.example.com/"])
def test_tracking_url_is_base_slug_track_token(base):
    assert tracking_url(base, "sparkle", "tok") == "https://book.example.com/sparkle/track/tok"


# --- Customer statistics ---------------------------------------------------------------


def test_bookings_become_customer_visits_for_lifetime_statistics():
    first, second, third = booked(additional_starts=_dates(10, 17))
    history = [
        complete_job(first, first.start),
        cancel(second, AT),
        third,
    ]
    visits = customer_visits(history)
    assert [v.status for v in visits] == [
        VisitStatus.COMPLETED,
        VisitStatus.CANCELLED,
        VisitStatus.SCHEDULED,
    ]
    assert [v.start for v in visits] == [first.start, second.start, third.start]
    stats = lifetime(visits, paid_cents=0, at=AT)
    assert (stats.bookings, stats.completed, stats.cancelled) == (3, 1, 1)
    assert stats.next_visit_at == third.start


def test_every_status_maps_onto_a_customer_visit_status():
    assert {s.value for s in BookingStatus} == {s.value for s in VisitStatus}


def test_the_order_of_a_booking_repeats_what_was_booked():
    made = booked(order(days=2, notes="Gate code 12", quote_id="quo_9"))[0]
    again = booking_orders.order_of(made)
    assert again.days == 2
    assert again.notes == "Gate code 12"
    assert again.quote_id == "quo_9"
    assert again.code_prefix == "SC"
    assert again.selection.service_id == "svc_clean"
