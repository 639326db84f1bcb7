"""The pages over HTTP without a browser on the night the clocks fall back in New York:
a one-hour job from 1:30 AM EDT to 1:30 AM EST shows each end with its abbreviation on
the tracking page, the customer portal, the crew portal, the admin calendar (day and
week) and the booking's page, so that a person can tell the two 1:30s apart."""

from __future__ import annotations

import secrets
from datetime import UTC, datetime, time, timedelta
from zoneinfo import ZoneInfo

import httpx

from booking_core.bookings import Booking
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.pricing import SelectedItem
from booking_core.services import notifications, scheduling, setup
from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_customer_pages_http import fetch, get, signing_in

NEW_YORK = ZoneInfo("America/New_York")
FALL_BACK = datetime(2027, 11, 7, 1, 30, tzinfo=NEW_YORK)  # fold=0: the first 1:30, EDT
BOTH_ENDS = "1:30 AM EDT \u2013 1:30 AM EST"


def _night_job(site: Site, start: datetime = FALL_BACK) -> tuple[Company, str, Booking]:
    """A company whose crew member works 00:00-23:45 every day, and a one-hour job of
    theirs from ``start`` (1:30 AM EDT) on the night the clocks fall back."""
    company, _ = site.new_company()
    container = site.container
    member_id = site.add_member(company, hours=(time(0), time(23, 45)))
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id="svc_handyman_hour",
            frequency_slug="one_time",
            start=start,
            customer=scheduling.CustomerDetails(
                name="Grace Hopper", email=f"grace-{secrets.token_hex(4)}@example.com"
            ),
            address=Address("9 Compiler Ct", "New York", "NY", "10001"),
            parameters=(SelectedItem("par_extra_hours", 0),),
            crew_ids=(member_id,),
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
        phones=container.phones,
    )
    booking = made[0]
    assert booking.end - booking.start == timedelta(hours=1)
    return company, member_id, booking


def _rescheduled_by_owner(
    site: Site, company: Company, booking: Booking, day: str, wall: str, member_id: str
) -> httpx.Response:
    """The owner's answer to the admin reschedule form moving ``booking`` to ``wall`` on
    ``day`` (the booking's page read first, as a person does), three days ahead of it."""
    owner = site.user(company, Role.OWNER)
    answers = fetch(
        site,
        booking.start - timedelta(days=3),
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.id}", {}),
        ("POST", f"/admin/bookings/{booking.id}/reschedule",
         {"date": day, "time": wall, "scope": "this", "crew": member_id}),
    )  # fmt: skip
    answer: httpx.Response = answers[-1]
    return answer


def test_the_tracking_page_shows_each_end_of_the_fall_back_hour_with_its_abbreviation(
    site: Site,
):
    company, _, booking = _night_job(site)
    path = f"/{company.slug}/track/{booking.tracking_token}"
    page = get(site, booking.start - timedelta(days=3), path)
    assert page.status_code == 200
    assert BOTH_ENDS in page.text  # was "1:30 AM \u2013 1:30 AM EDT"
    assert "New York time" in page.text


def test_the_admin_calendar_booking_page_and_crew_portal_tell_the_two_1_30s_apart(
    site: Site,
):
    company, member_id, booking = _night_job(site)
    owner = site.user(company, Role.OWNER)
    crew = site.user(company, Role.CREW, crew_member_id=member_id, name="Rosa Diaz")
    at = booking.start - timedelta(days=3)

    def signed_in(email: str, *paths: str) -> list[str]:
        answers = fetch(
            site,
            at,
            *signing_in(email),
            *(("GET", path, {}) for path in paths),
        )[2:]
        assert [a.status_code for a in answers] == [200] * len(paths)
        return [a.text for a in answers]

    day, week, details = signed_in(
        owner.email,
        "/admin/calendar?view=day&date=2027-11-07",
        "/admin/calendar?view=week&date=2027-11-07",
        f"/admin/bookings/{booking.id}",
    )
    (jobs,) = signed_in(crew.email, "/crew")
    for text in (day, details, jobs):
        assert BOTH_ENDS in text  # was "1:30 AM \u2013 1:30 AM", with no zone
    assert "1:30 AM EDT\u20131:30 AM EST" in week  # the narrow cell keeps both halves


def test_a_reschedule_that_leaves_the_second_1_30_as_it_is_keeps_the_job_where_it_was(
    site: Site,
):
    # The form shows date and time only ("01:30"); sent back unchanged with another
    # scope or crew field, it means the job's own instant, not the first 1:30 (an hour
    # earlier).
    company, member_id, booking = _night_job(site, FALL_BACK.replace(fold=1))
    assert booking.start.astimezone(NEW_YORK).tzname() == "EST"
    answer = _rescheduled_by_owner(site, company, booking, "2027-11-07", "01:30", member_id)
    assert answer.status_code in (200, 303), answer.text
    with site.container.reader() as uow:
        kept = uow.bookings.get(company.id, booking.id)
    assert kept.start == booking.start
    assert kept.start.astimezone(NEW_YORK).tzname() == "EST"


def test_a_move_to_a_time_the_clocks_show_twice_asks_which_and_takes_the_one_chosen(
    site: Site,
):
    """From 10:00 PM the evening before to 1:15 AM on the fall-back night: the form asks
    which 1:15 (before or after the clocks go back) and moves nothing until told; the
    second is then reachable, as availability offers it."""
    company, member_id, booking = _night_job(site, FALL_BACK - timedelta(hours=3, minutes=30))
    owner = site.user(company, Role.OWNER)
    move = {"date": "2027-11-07", "time": "01:15", "scope": "this", "crew": member_id}
    path = f"/admin/bookings/{booking.id}/reschedule"
    answers = fetch(
        site,
        booking.start - timedelta(days=3),
        *signing_in(owner.email),
        ("GET", f"/admin/bookings/{booking.id}", {}),
        ("POST", path, move),
        ("GET", f"/admin/bookings/{booking.id}", {}),
        ("POST", path, {**move, "fold": "1"}),
    )
    asked = answers[3]
    assert asked.status_code == 422, asked.text
    assert "01:15 comes twice that night: choose which." in asked.text
    assert "1:15 AM EDT, before the clocks go back" in asked.text
    assert "1:15 AM EST, after the clocks go back" in asked.text
    assert answers[-1].status_code == 303, answers[-1].text
    with site.container.reader() as uow:
        moved = uow.bookings.get(company.id, booking.id)
    assert moved.start == datetime(2027, 11, 7, 6, 15, tzinfo=UTC)  # 1:15 AM EST
    assert moved.start.astimezone(NEW_YORK).tzname() == "EST"


def test_a_move_to_a_time_the_clocks_skip_is_refused_naming_the_time_they_show(
    site: Site,
):
    """02:30 on the night the clocks go forward does not come: the form says so and
    which time the clocks show instead, and moves nothing (it used to move the job to
    3:30 AM without a word)."""
    company, member_id, booking = _night_job(site, datetime(2027, 3, 13, 22, 0, tzinfo=NEW_YORK))
    refused = _rescheduled_by_owner(site, company, booking, "2027-03-14", "02:30", member_id)
    assert refused.status_code == 422, refused.text
    assert "02:30 does not come that night: the clocks go forward." in refused.text
    assert "Did you mean 3:30 AM?" in refused.text
    with site.container.reader() as uow:
        assert uow.bookings.get(company.id, booking.id).start == booking.start


def test_after_the_company_changes_its_timezone_every_page_and_email_shows_its_bookings_in_it(
    site: Site,
):
    """A job booked at 9:00 AM in New York (13:00 UTC) is 2:00 AM the next day in
    Auckland. Once the company moves to Auckland, the pages put it there, under
    Auckland's name, as the API does (they used to show it at 9:00 AM on its New York
    date while saying "Auckland time")."""
    start = datetime(2027, 10, 1, 9, 0, tzinfo=NEW_YORK)
    company, member_id, booking = _night_job(site, start)
    setup.update_company_settings(
        setup.UpdateCompanySettings(company_id=company.id, timezone="Pacific/Auckland"),
        uow=site.container.uow(),
    )
    owner = site.user(company, Role.OWNER)
    crew = site.user(company, Role.CREW, crew_member_id=member_id, name="Rosa Diaz")
    at = booking.start - timedelta(days=1)
    track = get(site, at, f"/{company.slug}/track/{booking.tracking_token}")
    assert "Saturday, October 2, 2027" in track.text
    assert "2:00 AM \u2013 3:00 AM" in track.text
    assert "Auckland time" in track.text
    assert "9:00 AM" not in track.text

    def signed_in(email: str, *paths: str) -> list[str]:
        answers = fetch(site, at, *signing_in(email), *(("GET", p, {}) for p in paths))[2:]
        assert [a.status_code for a in answers] == [200] * len(paths)
        return [a.text for a in answers]

    new_york_day, auckland_day, details = signed_in(
        owner.email,
        "/admin/calendar?view=day&date=2027-10-01",
        "/admin/calendar?view=day&date=2027-10-02",
        f"/admin/bookings/{booking.id}",
    )
    assert booking.code not in new_york_day
    assert booking.code in auckland_day
    assert "2:00 AM" in auckland_day
    assert "Saturday, October 2, 2027" in details
    assert "9:00 AM" not in details
    assert 'value="02:00"' in details  # the reschedule form starts from the shown time
    (jobs,) = signed_in(crew.email, "/crew")
    assert "2:00 AM" in jobs
    assert "9:00 AM" not in jobs

    with site.container.reader() as uow:
        moved = uow.companies.get(company.id)
        customer = uow.customers.get(company.id, booking.customer_id)
    context = notifications.booking_context(booking, customer, "https://b.example", moved)
    assert context["starts"] == "Saturday, October 2, 2027 at 2:00 AM NZDT"
