"""The admin booking page's answers a person must be able to read (docs/web.md, "The admin
calendar"): a reschedule or cancel refused because the job started, finished or was
cancelled meanwhile says so at the top (its form is gone); a booking paid more than its
total says by how much; a move that only changes the crew says who has the job now. And
the crew portal's refusal names the job it refuses."""

from __future__ import annotations

import html
from datetime import timedelta

from booking_core.bookings import BookingStatus
from booking_core.ledger import Kind, Method
from booking_core.services.payments import RecordPayment, record_payment
from booking_core.services.scheduling import start_booking
from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_customer_pages_http import fetch, signing_in


def text(answer) -> str:
    return html.unescape(answer.text)


def test_a_move_or_cancel_refused_because_the_job_started_meanwhile_says_why_at_the_top(
    site: Site,
):
    job = site.crew_job()
    booking, owner = job.booking, site.user(job.company, Role.OWNER)
    path = f"/admin/bookings/{booking.id}"
    local = booking.local_start
    move = {"date": local.date().isoformat(), "time": "15:00", "scope": "this"}
    opened = fetch(site, booking.start, *signing_in(owner.email), ("GET", path, {}))[-1]
    assert "Reschedule" in opened.text
    start_booking(  # in another tab
        job.company.id,
        booking.id,
        crew_member_id=None,
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    answers = fetch(
        site,
        booking.start,
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.code}", {}),
        ("POST", f"{path}/reschedule", move),
        ("POST", f"{path}/reschedule", {**move, "time": "00:00"}),  # now past, off-hours
        ("POST", f"{path}/cancel", {"cancel_scope": "this", "reason": "Ill"}),
    )
    moved, past, cancelled = answers[-3:]
    for answer, verb in ((moved, "rescheduled"), (past, "rescheduled"), (cancelled, "cancelled")):
        assert answer.status_code == 409
        assert f"This booking could not be {verb}: the job has already started." in text(answer)
        assert 'role="alert"' in answer.text
    assert site.booking(job).local_start == local  # nothing moved


def test_a_booking_paid_more_than_its_total_says_by_how_much(site: Site):
    job = site.crew_job()
    booking, owner = job.booking, site.user(job.company, Role.OWNER)
    total = booking.price.total_cents
    record_payment(
        RecordPayment(
            company_id=job.company.id,
            booking_id=booking.id,
            kind=Kind.PAYMENT,
            amount_cents=total + 5_303,
            method=Method.CASH,
        ),
        uow=site.container.uow(),
        clock=site.container.clock,
    )
    page = fetch(
        site,
        booking.start - timedelta(days=1),
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.id}", {}),
    )[-1]
    assert "Paid $53.03 more than the total." in page.text
    assert "Still to pay" not in page.text
    site.cancel(job)
    page = fetch(
        site,
        booking.start - timedelta(days=1),
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.id}", {}),
    )[-1]
    paid = total + 5_303
    assert f"Cancelled with ${paid // 100:,}.{paid % 100:02d} paid" in page.text
    assert "more than the total" not in page.text


def test_a_move_that_only_changes_the_crew_says_who_has_the_job_now(site: Site):
    job = site.crew_job()
    booking, owner = job.booking, site.user(job.company, Role.OWNER)
    sam = site.add_member(job.company, "Sam Lee")
    path = f"/admin/bookings/{booking.id}"
    local = booking.local_start
    same_time = {"date": local.date().isoformat(), "time": f"{local:%H:%M}", "scope": "this"}
    later = {**same_time, "time": f"{local + timedelta(hours=1):%H:%M}"}
    answers = fetch(
        site,
        booking.start - timedelta(days=1),
        *signing_in(owner.email),
        ("GET", path, {}),
        ("POST", f"{path}/reschedule", {**same_time, "crew": sam}),
        ("GET", path, {}),
        ("POST", f"{path}/reschedule", {**later, "crew": job.member_id}),
        ("GET", path, {}),
    )
    given, moved = text(answers[4]), text(answers[6])
    assert f"Booking {booking.code} given to Sam Lee, at the same time." in given
    assert f"Booking {booking.code} moved to " in moved
    assert ", with Rosa Diaz." in moved


def test_the_crew_portal_names_the_job_it_refuses(site: Site):
    job = site.crew_job()
    crew = site.user(job.company, Role.CREW, crew_member_id=job.member_id)
    site.cancel(job)
    answers = fetch(
        site,
        job.booking.start,
        *signing_in(crew.email),
        ("GET", "/crew", {}),
        ("POST", "/crew/complete", {"booking": job.booking.id}),
        ("GET", "/crew", {}),
    )
    refused, after = answers[-2:]
    assert refused.status_code == 303
    assert refused.headers["location"] == f"/crew#job-{job.booking.id}"
    assert f"Job {job.booking.code} could not be completed: it is already cancelled." in text(after)


def test_the_office_is_asked_before_starting_a_job_more_than_an_hour_away(site: Site):
    """As the crew portal asks: a tap on tomorrow's Start job is more often a slip."""
    job = site.crew_job()
    booking, owner = job.booking, site.user(job.company, Role.OWNER)
    path = f"/admin/bookings/{booking.id}"
    answers = fetch(
        site,
        booking.start - timedelta(hours=3),
        *signing_in(owner.email),
        ("GET", path, {}),
        ("POST", f"{path}/start", {}),
    )
    asked = text(answers[-1])
    assert answers[-1].status_code == 200
    assert "Start it now?" in asked
    assert 'name="confirmed" value="yes"' in answers[-1].text
    assert site.booking(job).status is BookingStatus.SCHEDULED  # asked, not started
    answers = fetch(
        site,
        booking.start - timedelta(hours=3),
        *signing_in(owner.email),
        ("GET", path, {}),
        ("POST", f"{path}/start", {"confirmed": "yes"}),
    )
    assert answers[-1].status_code == 303
    assert site.booking(job).status is BookingStatus.IN_PROGRESS
    soon = site.crew_job()
    soon_owner = site.user(soon.company, Role.OWNER)
    soon_path = f"/admin/bookings/{soon.booking.id}"
    answers = fetch(  # within the hour: started at once
        site,
        soon.booking.start - timedelta(minutes=30),
        *signing_in(soon_owner.email),
        ("GET", soon_path, {}),
        ("POST", f"{soon_path}/start", {}),
    )
    assert answers[-1].status_code == 303
    assert site.booking(soon).status is BookingStatus.IN_PROGRESS
