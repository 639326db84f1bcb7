"""The booking repository's contract, on memory, SQLite and PostgreSQL: exact round trips,
company scoping, unique keys, optimistic saves, and no crew member ever booked twice."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from booking_core.availability import Block
from booking_core.booking_forms import Answer
from booking_core.bookings import (
    ActivityKind,
    Booking,
    BookingStatus,
    cancel,
    complete_job,
    record,
    start_job,
)
from booking_core.errors import ConflictError, NotFoundError, SlotTaken
from booking_core.paging import PageRequest
from booking_core.plans import RescheduleScope, reschedule
from tests.contract.paging import assert_paginates
from tests.unit.bookings_support import AT, booked, local, order

CO = "cmp_acme"


def job(
    start: datetime,
    crew: tuple[str, ...] = ("crew_a",),
    *,
    days: int = 1,
    minutes: int = 0,
    customer: str = "cus_ada",
    company: str = CO,
) -> Booking:
    """One one-time clean of 150 minutes at ``start``, created ``minutes`` after ``AT``."""
    made = order(crew_ids=crew, days=days, customer_id=customer, company_id=company)
    return booked(made, start=start, at=AT + timedelta(minutes=minutes))[0]


def store(uow_factory, *bookings: Booking) -> None:
    with uow_factory() as uow:
        uow.bookings.add_all(list(bookings))
        uow.commit()


def stored_ids(uow_factory, company_id: str = CO) -> set[str]:
    with uow_factory() as uow:
        return {b.id for b in uow.bookings.list(company_id, PageRequest(limit=200)).items}


# --- Round trips and lookups ----------------------------------------------------------


def test_every_shape_of_booking_round_trips_exactly(uow_factory):
    one = job(local(2026, 3, 3, 9))
    noted = record(
        one, AT, ActivityKind.RESCHEDULED, {"from": "x", "insideCutoff": True, "count": 2}
    )
    multi_day = job(local(2026, 3, 4, 9), ("crew_b", "crew_c"), days=3)
    plan = booked(order("weekly", crew_ids=("crew_d",)), start=local(2026, 3, 3, 13))
    group = booked(
        order(crew_ids=("crew_e",)),
        start=local(2026, 3, 3, 9),
        additional_starts=[local(2026, 3, 5, 9), local(2026, 3, 6, 14)],
    )
    everything = [noted, multi_day, *plan, *group]
    store(uow_factory, *everything)
    with uow_factory() as uow:
        for booking in everything:
            assert uow.bookings.get(CO, booking.id) == booking
        loaded = uow.bookings.get(CO, noted.id)
    assert [type(v) for _, v in loaded.activity[-1].data] == [str, bool, int]


def test_a_booking_made_through_a_form_keeps_its_answers(uow_factory):
    answers = (
        Answer("gate-code", "Gate code?", "#4521, côté rue 🚪"),
        Answer("q_pets", "Pets at home?", "Dog"),
    )
    through_form = attrs.evolve(job(local(2026, 3, 3, 9)), form_id="bf_spring", answers=answers)
    plain = job(local(2026, 3, 4, 9))
    store(uow_factory, through_form, plain)
    with uow_factory() as uow:
        assert uow.bookings.get(CO, through_form.id) == through_form
        assert uow.bookings.get(CO, plain.id).answers == ()
        moved = attrs.evolve(through_form, notes="moved", version=2)
        uow.bookings.save_all([moved])
        uow.commit()
    with uow_factory() as uow:
        assert uow.bookings.get(CO, through_form.id) == moved


def test_a_cancelled_and_a_completed_booking_round_trip(uow_factory):
    first, second = job(local(2026, 3, 3, 9)), job(local(2026, 3, 4, 9))
    store(uow_factory, first, second)
    cancelled = cancel(first, AT + timedelta(hours=1), "moving away")
    started = start_job(second, second.start)
    completed = complete_job(started, second.end)
    with uow_factory() as uow:
        uow.bookings.save_all([cancelled, started])
        uow.bookings.save_all([completed])
        uow.commit()
    with uow_factory() as uow:
        assert uow.bookings.get(CO, first.id) == cancelled
        assert uow.bookings.get(CO, second.id) == completed


def test_another_company_finds_nothing(uow_factory):
    booking = job(local(2026, 3, 3, 9))
    store(uow_factory, booking)
    with uow_factory() as uow:
        with pytest.raises(NotFoundError) as caught:
            uow.bookings.get("cmp_other", booking.id)
        assert caught.value.kind == "booking"
        with pytest.raises(NotFoundError):
            uow.bookings.get(CO, "bkg_missing")
        assert uow.bookings.by_code("cmp_other", booking.code) is None
        assert uow.bookings.of_plan("cmp_other", "pln_x") == []
        assert uow.bookings.busy("cmp_other", AT, AT + timedelta(days=9)) == {}
        assert uow.bookings.list("cmp_other", PageRequest()).items == ()


def test_by_code_is_exact_and_by_tracking_token_crosses_companies(uow_factory):
    booking = job(local(2026, 3, 3, 9), company="cmp_zeta")
    store(uow_factory, booking)
    with uow_factory() as uow:
        assert uow.bookings.by_code("cmp_zeta", booking.code) == booking
        assert uow.bookings.by_code("cmp_zeta", booking.code.lower()) is None
        assert uow.bookings.by_code("cmp_zeta", "SC-00000") is None
        assert uow.bookings.by_tracking_token(booking.tracking_token) == booking
        assert uow.bookings.by_tracking_token("not-a-token") is None


def test_of_plan_and_of_group_are_in_visit_order_and_for_customer_by_start(uow_factory):
    plan = booked(order("weekly"), start=local(2026, 3, 3, 9))
    group = booked(
        order(crew_ids=("crew_b",)),
        start=local(2026, 3, 20, 9),
        additional_starts=[local(2026, 3, 18, 9), local(2026, 3, 19, 9)],
    )
    other = job(local(2026, 3, 4, 12), ("crew_c",), customer="cus_bob")
    store(uow_factory, *reversed(plan), *reversed(group), other)
    with uow_factory() as uow:
        assert [v.visit_index for v in uow.bookings.of_plan(CO, plan[0].plan_id)] == list(
            range(len(plan))
        )
        assert uow.bookings.of_plan(CO, plan[0].plan_id) == plan
        assert uow.bookings.of_group(CO, group[0].group_id) == group
        mine = uow.bookings.for_customer(CO, "cus_ada")
        assert mine == sorted([*plan, *group], key=lambda b: (b.start, b.id))
        assert uow.bookings.for_customer(CO, "cus_bob") == [other]


# --- Unique keys ----------------------------------------------------------------------


def test_a_taken_code_token_or_plan_visit_conflicts_and_writes_nothing(uow_factory):
    first = job(local(2026, 3, 3, 9))
    plan = booked(order("weekly", crew_ids=("crew_p",)), start=local(2026, 3, 3, 9))
    store(uow_factory, first, *plan)
    same_code = attrs.evolve(job(local(2026, 3, 4, 9)), code=first.code)
    same_token = attrs.evolve(job(local(2026, 3, 5, 9)), tracking_token=first.tracking_token)
    same_visit = attrs.evolve(
        job(local(2026, 3, 6, 9), ("crew_q",)), plan_id=plan[0].plan_id, visit_index=1
    )
    same_id = cancel(first, AT)  # closed, so only its keys can clash
    for clash in (same_code, same_token, same_visit, same_id):
        with uow_factory() as uow:
            with pytest.raises(ConflictError) as caught:
                uow.bookings.add_all([job(local(2026, 3, 10, 9), ("crew_z",)), clash])
            assert not isinstance(caught.value, SlotTaken)
            uow.commit()
    assert stored_ids(uow_factory) == {first.id, *(v.id for v in plan)}


def test_one_code_twice_in_a_batch_conflicts(uow_factory):
    first = job(local(2026, 3, 3, 9))
    twin = attrs.evolve(job(local(2026, 3, 4, 9)), code=first.code)
    with uow_factory() as uow, pytest.raises(ConflictError):
        uow.bookings.add_all([first, twin])
    assert stored_ids(uow_factory) == set()


def test_the_same_code_in_another_company_is_fine(uow_factory):
    mine = job(local(2026, 3, 3, 9))
    theirs = attrs.evolve(job(local(2026, 3, 3, 9), company="cmp_other"), code=mine.code)
    store(uow_factory, mine, theirs)
    with uow_factory() as uow:
        assert uow.bookings.by_code("cmp_other", mine.code) == theirs


# --- No double booking ----------------------------------------------------------------


def test_an_overlapping_job_of_the_same_member_is_refused_naming_them(uow_factory):
    store(uow_factory, job(local(2026, 3, 3, 9), ("crew_a", "crew_b")))
    late = job(local(2026, 3, 3, 11), ("crew_c", "crew_b"))
    with uow_factory() as uow, pytest.raises(SlotTaken) as caught:
        uow.bookings.add_all([late])
    assert caught.value.crew_id == "crew_b"
    assert caught.value.start == "2026-03-03T11:00:00-05:00"
    assert late.id not in stored_ids(uow_factory)


def test_other_members_adjacent_jobs_and_other_companies_are_free(uow_factory):
    store(uow_factory, job(local(2026, 3, 3, 9)))
    other_member = job(local(2026, 3, 3, 9), ("crew_b",))
    right_after = job(local(2026, 3, 3, 11, 30))  # 09:00-11:30, then 11:30-14:00
    right_before = job(local(2026, 3, 3, 6, 30))  # 06:30-09:00
    other_company = job(local(2026, 3, 3, 9), company="cmp_other")
    store(uow_factory, other_member, right_after, right_before, other_company)
    assert len(stored_ids(uow_factory)) == 4


def test_a_cancelled_or_completed_job_frees_its_time(uow_factory):
    first, second = job(local(2026, 3, 3, 9)), job(local(2026, 3, 4, 9))
    store(uow_factory, first, second)
    with uow_factory() as uow:
        uow.bookings.save_all([cancel(first, AT)])
        uow.bookings.save_all([complete_job(second, second.start)])
        uow.commit()
    store(uow_factory, job(local(2026, 3, 3, 10)), job(local(2026, 3, 4, 10)))
    # ...and a closed job never blocks being stored either.
    store(uow_factory, cancel(job(local(2026, 3, 3, 10)), AT))


def test_every_day_of_a_multi_day_job_is_held(uow_factory):
    store(uow_factory, job(local(2026, 3, 3, 9), days=3))  # 3, 4 and 5 March, 09:00-11:30
    with uow_factory() as uow, pytest.raises(SlotTaken) as caught:
        uow.bookings.add_all([job(local(2026, 3, 5, 11))])
    assert caught.value.start == "2026-03-05T11:00:00-05:00"
    with uow_factory() as uow, pytest.raises(SlotTaken) as caught:
        uow.bookings.add_all([job(local(2026, 3, 1, 10), days=3)])  # its 3 March overlaps
    assert caught.value.start == "2026-03-03T10:00:00-05:00"
    # Between the days the member is free, and a day after the last one too.
    store(uow_factory, job(local(2026, 3, 4, 14)), job(local(2026, 3, 6, 9)))


def test_a_multi_day_job_across_the_dst_change_holds_the_wall_clock_days(uow_factory):
    # New York springs forward on 8 March 2026: 09:00 is 14:00Z before and 13:00Z after.
    store(uow_factory, job(local(2026, 3, 7, 9), days=2))
    with uow_factory() as uow, pytest.raises(SlotTaken) as caught:
        uow.bookings.add_all([job(local(2026, 3, 8, 10))])
    assert caught.value.start == "2026-03-08T10:00:00-04:00"


def test_a_batch_is_all_or_nothing_and_leaves_the_unit_usable(uow_factory):
    store(uow_factory, job(local(2026, 3, 3, 9), ("crew_b",)))
    free = job(local(2026, 3, 10, 9))
    team = job(local(2026, 3, 3, 10), ("crew_a", "crew_b"))  # crew_b is busy then
    kept = job(local(2026, 3, 12, 9))
    with uow_factory() as uow:
        with pytest.raises(SlotTaken) as caught:
            uow.bookings.add_all([free, team])
        assert caught.value.crew_id == "crew_b"
        with pytest.raises(NotFoundError):
            uow.bookings.get(CO, free.id)
        assert uow.bookings.busy(CO, AT, AT + timedelta(days=30), ["crew_a"]) == {"crew_a": []}
        uow.bookings.add_all([kept])
        uow.commit()
    ids = stored_ids(uow_factory)
    assert kept.id in ids
    assert free.id not in ids
    assert team.id not in ids


def test_one_booking_refused_for_a_key_or_its_block_leaves_nothing_and_the_unit_usable(
    uow_factory,
):
    """One booking of one block (on PostgreSQL one statement writes its row and block):
    a taken key is ``ConflictError``, a taken block ``SlotTaken`` naming the member; either
    way neither its row nor its block is left, and the unit can still write and commit."""
    held = job(local(2026, 3, 3, 9))
    store(uow_factory, held)
    same_code = attrs.evolve(job(local(2026, 3, 4, 9)), code=held.code)
    overlapping = job(local(2026, 3, 3, 10))
    kept = job(local(2026, 3, 5, 9))
    with uow_factory() as uow:
        with pytest.raises(ConflictError) as conflict:
            uow.bookings.add_all([same_code])
        assert not isinstance(conflict.value, SlotTaken)
        with pytest.raises(SlotTaken) as taken:
            uow.bookings.add_all([overlapping])
        assert (taken.value.crew_id, taken.value.start) == ("crew_a", "2026-03-03T10:00:00-05:00")
        for refused in (same_code, overlapping):
            with pytest.raises(NotFoundError):
                uow.bookings.get(CO, refused.id)
        uow.bookings.add_all([kept])
        uow.commit()
    assert stored_ids(uow_factory) == {held.id, kept.id}
    with uow_factory() as uow:
        busy = uow.bookings.busy(CO, AT, AT + timedelta(days=30), ["crew_a"])["crew_a"]
    assert sorted(block.booking_id or "" for block in busy) == sorted([held.id, kept.id])


def test_two_jobs_of_one_batch_may_not_overlap_each_other(uow_factory):
    first = job(local(2026, 3, 3, 9))
    second = job(local(2026, 3, 3, 10), ("crew_b", "crew_a"))
    with uow_factory() as uow, pytest.raises(SlotTaken) as caught:
        uow.bookings.add_all([first, second])
    assert caught.value.crew_id == "crew_a"
    assert stored_ids(uow_factory) == set()


def test_a_refused_save_changes_nothing(uow_factory):
    mine, theirs = job(local(2026, 3, 3, 9)), job(local(2026, 3, 3, 13), ("crew_b",))
    store(uow_factory, mine, theirs)
    moved = reschedule(
        [mine],
        mine.id,
        local(2026, 3, 3, 12),
        RescheduleScope.THIS,
        at=AT,
        cutoff_hours=24,
        crew_ids=("crew_a", "crew_b"),
    )
    with uow_factory() as uow:
        with pytest.raises(SlotTaken) as caught:
            uow.bookings.save_all(moved)
        assert caught.value.crew_id == "crew_b"
        uow.commit()
    with uow_factory() as uow:
        assert uow.bookings.get(CO, mine.id) == mine
        busy = uow.bookings.busy(CO, AT, AT + timedelta(days=9), ["crew_a", "crew_b"])
    assert [b.booking_id for b in busy["crew_a"]] == [mine.id]
    assert [b.booking_id for b in busy["crew_b"]] == [theirs.id]


def test_a_booking_never_collides_with_itself(uow_factory):
    plan = booked(order("weekly"), start=local(2026, 3, 3, 9))
    store(uow_factory, *plan)
    # Half an hour later overlaps the visit's own old time, and the whole plan moves.
    moved = reschedule(
        plan,
        plan[0].id,
        local(2026, 3, 3, 9, 30),
        RescheduleScope.THIS_AND_FUTURE,
        at=AT,
        cutoff_hours=24,
    )
    assert len(moved) == len(plan)
    with uow_factory() as uow:
        uow.bookings.save_all(moved)
        uow.bookings.save_all([start_job(moved[0], moved[0].start)])
        uow.commit()
    with uow_factory() as uow:
        assert uow.bookings.of_plan(CO, plan[0].plan_id)[1:] == moved[1:]


# --- Optimistic saves -----------------------------------------------------------------


def test_a_save_against_a_moved_version_conflicts(uow_factory):
    booking = job(local(2026, 3, 3, 9))
    store(uow_factory, booking)
    started = start_job(booking, booking.start)
    with uow_factory() as uow:
        uow.bookings.save_all([started])
        uow.commit()
    stale = cancel(booking, AT)  # made from version 1, but 2 is stored
    with uow_factory() as uow:
        with pytest.raises(ConflictError) as caught:
            uow.bookings.save_all([stale])
        assert not isinstance(caught.value, SlotTaken)
    with uow_factory() as uow:
        with pytest.raises(NotFoundError):
            uow.bookings.save_all([job(local(2026, 3, 9, 9))])
        assert uow.bookings.get(CO, booking.id) == started


def test_a_save_of_several_is_all_or_nothing(uow_factory):
    first, second = job(local(2026, 3, 3, 9)), job(local(2026, 3, 4, 9))
    store(uow_factory, first, second)
    with uow_factory() as uow:
        uow.bookings.save_all([start_job(second, second.start)])
        uow.commit()
    with uow_factory() as uow:
        with pytest.raises(ConflictError):
            uow.bookings.save_all([cancel(first, AT), start_job(second, second.start)])
        uow.commit()
    with uow_factory() as uow:
        assert uow.bookings.get(CO, first.id) == first


# --- Busy blocks ----------------------------------------------------------------------


def test_busy_gives_each_members_open_blocks_in_the_window(uow_factory):
    team = job(local(2026, 3, 3, 9), ("crew_a", "crew_b"), days=2)
    solo = job(local(2026, 3, 3, 13), ("crew_a",))
    far = job(local(2026, 3, 20, 9), ("crew_c",))
    gone = job(local(2026, 3, 3, 15), ("crew_d",))
    store(uow_factory, team, solo, far, gone)
    with uow_factory() as uow:
        uow.bookings.save_all([cancel(gone, AT)])
        uow.commit()
    day = local(2026, 3, 3, 0)
    with uow_factory() as uow:
        window = uow.bookings.busy(CO, day, day + timedelta(days=2))
        named = uow.bookings.busy(CO, day, day + timedelta(days=1), ["crew_b", "crew_d"])
        edge = uow.bookings.busy(CO, team.end, solo.start, ["crew_a"])
        inside = uow.bookings.busy(CO, team.start + timedelta(minutes=5), team.end)
    first, second = team.day_blocks()
    assert window == {
        "crew_a": [
            Block(*first, "10001", team.id),
            Block(solo.start, solo.end, "10001", solo.id),
            Block(*second, "10001", team.id),
        ],
        "crew_b": [Block(*first, "10001", team.id), Block(*second, "10001", team.id)],
    }
    assert named == {"crew_b": [Block(*first, "10001", team.id)], "crew_d": []}
    assert edge == {"crew_a": []}  # half-open: the window touches both jobs, overlaps none
    assert set(inside) == {"crew_a", "crew_b"}
    assert all(b.start == first[0] for blocks in inside.values() for b in blocks)


def test_busy_for_a_whole_roster_gives_exactly_the_named_members(uow_factory):
    """A long list (the roster availability names) answers as a short one does."""
    named = [f"crew_{n:02d}" for n in range(12)]
    jobs = [job(local(2026, 3, 3, 9), (crew_id,)) for crew_id in named[:3]]
    outsider = job(local(2026, 3, 3, 9), ("crew_zz",))
    store(uow_factory, *jobs, outsider)
    day = local(2026, 3, 3, 0)
    with uow_factory() as uow:
        busy = uow.bookings.busy(CO, day, day + timedelta(days=1), named)
    assert busy == {
        crew_id: [Block(j.start, j.end, "10001", j.id) for j in jobs if crew_id in j.crew_ids]
        for crew_id in named
    }


# --- Lists ----------------------------------------------------------------------------


def test_list_filters_by_status_customer_crew_member_and_start_window(uow_factory):
    a = job(local(2026, 3, 3, 9), ("crew_a",), minutes=1)
    b = job(local(2026, 3, 4, 9), ("crew_a", "crew_b"), minutes=2, customer="cus_bob")
    c = job(local(2026, 3, 5, 9), ("crew_c",), minutes=3)
    d = job(local(2026, 3, 6, 9), ("crew_b",), minutes=4)
    store(uow_factory, a, b, c, d, job(local(2026, 3, 3, 9), company="cmp_other"))
    with uow_factory() as uow:
        uow.bookings.save_all([cancel(c, AT)])
        uow.commit()
    with uow_factory() as uow:

        def ids(**filters):
            return [x.id for x in uow.bookings.list(CO, PageRequest(), **filters).items]

        assert ids() == [d.id, c.id, b.id, a.id]
        assert ids(status=BookingStatus.CANCELLED) == [c.id]
        assert ids(status=BookingStatus.SCHEDULED, crew_id="crew_b") == [d.id, b.id]
        assert ids(customer_id="cus_bob") == [b.id]
        assert ids(crew_id="crew_a") == [b.id, a.id]
        assert ids(crew_id="crew_x") == []
        assert ids(starts_from=b.start) == [d.id, c.id, b.id]
        assert ids(starts_until=b.start) == [a.id]
        assert ids(starts_from=a.start, starts_until=c.start, crew_id="crew_b") == [b.id]
        assert_paginates(lambda p: uow.bookings.list(CO, p), [d.id, c.id, b.id, a.id])
        assert_paginates(lambda p: uow.bookings.list(CO, p, crew_id="crew_b"), [d.id, b.id])


def test_list_by_change_shows_a_saved_booking_after_the_others(uow_factory, settle):
    a, b = job(local(2026, 3, 3, 9), minutes=1), job(local(2026, 3, 4, 9), minutes=2)
    store(uow_factory, a, b)
    with uow_factory() as uow:
        uow.bookings.save_all([cancel(a, AT)])
        uow.commit()
    settle()
    since = datetime(2000, 1, 1, tzinfo=UTC)
    with uow_factory() as uow:
        page = uow.bookings.list(CO, PageRequest(updated_since=since))
    assert [x.id for x in page.items] == [b.id, a.id]


def test_bookings_and_their_payments_are_read_for_many_customers_at_once(uow_factory):
    from booking_core.ledger import Kind, Method, Origin, PaymentEntry

    ada, grace = "cus_batch_ada", "cus_batch_grace"
    first = booked(order(customer_id=ada, crew_ids=("crew_x",)), start=local(2026, 3, 3, 9))
    second = booked(order(customer_id=ada, crew_ids=("crew_x",)), start=local(2026, 3, 4, 9))
    paid = PaymentEntry(
        id="pay_batch",
        company_id=first[0].company_id,
        booking_id=first[0].id,
        customer_id=ada,
        kind=Kind.PAYMENT,
        method=Method.CASH,
        amount_cents=5_000,
        offline=True,
        origin=Origin.HAND,
        created_at=AT,
    )
    with uow_factory() as uow:
        uow.bookings.add_all([*first, *second])
        uow.payments.add(paid)
        uow.commit()
    company = first[0].company_id
    with uow_factory() as uow:
        visits = uow.bookings.for_customers(company, [ada, grace])
        entries = uow.payments.for_bookings(company, [first[0].id, second[0].id])
    assert [b.id for b in visits[ada]] == [first[0].id, second[0].id]
    assert visits[grace] == []
    assert entries == {first[0].id: [paid], second[0].id: []}
    with uow_factory() as uow:
        assert uow.bookings.for_customers(company, []) == {}
        assert uow.payments.for_bookings("cmp_someone_else", [first[0].id]) == {first[0].id: []}
