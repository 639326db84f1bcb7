"""The admin calendar in Chromium: an owner sees a company's bookings by crew member in the
day and week views, opens one, reschedules it (it moves in the calendar), cancels
another, starts and completes a third; a move into a taken slot is refused beside the
fields; another company's booking answers 404, by address and by an edited form."""

from __future__ import annotations

import re
import secrets
from datetime import date, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
from playwright.sync_api import expect

from booking_core.bookings import Booking, BookingStatus, wall_clock_instant
from booking_core.companies import Company
from booking_core.customers import Address
from booking_core.pricing import SelectedItem
from booking_core.services import scheduling
from booking_core.users import Role
from tests.browser.support import Site, sign_in

DASH = "\u2013"
ONE_BEDROOM = (SelectedItem("par_bedrooms", 1),)
"""A standard clean of 2 h 25 min."""


@attrs.frozen
class Board:
    """A company with two crew members and their jobs on ``day`` (tomorrow)."""

    company: Company
    day: date
    rosa: str
    sam: str
    jobs: dict[str, Booking]


def _member(site: Site, company: Company, name: str) -> str:
    return site.add_member(company, name, (time(7), time(19)))


def _book(
    site: Site,
    company: Company,
    crew_id: str,
    day: date,
    hour: int,
    customer: str,
    *,
    frequency: str = "one_time",
    days: int = 1,
) -> Booking:
    container = site.container
    start = wall_clock_instant(day, time(hour), ZoneInfo(company.timezone))
    email = f"{customer.split(maxsplit=1)[0].lower()}-{secrets.token_hex(3)}@example.com"
    made = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=company.id,
            service_id="svc_standard_clean",
            frequency_slug=frequency,
            start=start,
            customer=scheduling.CustomerDetails(name=customer, email=email),
            address=Address("9 Compiler Ct", "New York", "NY", "10001", access_notes="Lockbox"),
            parameters=ONE_BEDROOM,
            crew_ids=(crew_id,),
            days=days,
        ),
        uow=container.uow(),
        clock=container.clock,
        drive=container.drive,
        phones=container.phones,
    )
    return made[0]


def _board(site: Site) -> Board:
    company, _ = site.new_company()
    rosa, sam = _member(site, company, "Rosa Diaz"), _member(site, company, "Sam Lee")
    day = site.container.clock.now().astimezone(ZoneInfo(company.timezone)).date()
    day += timedelta(days=1)
    jobs = {
        "move": _book(site, company, rosa, day, 8, "Grace Hopper"),
        "cancel": _book(site, company, rosa, day, 11, "Alan Turing"),
        "work": _book(site, company, sam, day, 9, "Ada Lovelace"),
        "blocked": _book(site, company, sam, day, 13, "Edsger Dijkstra"),
        "plan": _book(site, company, sam, day + timedelta(days=1), 10, "Barbara Liskov",
                      frequency="weekly"),
    }  # fmt: skip
    return Board(company, day, rosa, sam, jobs)


def _stored(site: Site, board: Board, key: str) -> Booking:
    with site.container.uow() as uow:
        return uow.bookings.get(board.company.id, board.jobs[key].id)


def _lane(page: Any, member_id: str) -> Any:
    return page.locator(f".cal-lane[data-crew='{member_id}']")


def _owner(site: Site, board: Board, page: Any) -> None:
    owner = site.user(board.company, Role.OWNER)
    sign_in(page, owner.email)
    expect(page).to_have_url(re.compile(r"/admin$"))


def test_owner_sees_the_day_and_week_and_moves_cancels_starts_and_completes_jobs(
    site: Site, page, screenshots
):
    board = _board(site)
    jobs = board.jobs
    _owner(site, board, page)
    page.get_by_role("link", name="Calendar").first.click()
    expect(page.get_by_role("heading", name="Calendar")).to_be_visible()
    page.get_by_label("Go to date").fill(board.day.isoformat())
    page.get_by_role("button", name="Show").click()

    rosa, sam = _lane(page, board.rosa), _lane(page, board.sam)
    for shown in (f"8:00 AM {DASH} 10:25 AM", "Grace", jobs["move"].code, "11:00 AM", "Alan"):
        expect(rosa).to_contain_text(shown, use_inner_text=True)
    for shown in ("9:00 AM", "Ada", "1:00 PM", "Edsger", "Standard clean", "Scheduled"):
        expect(sam).to_contain_text(shown, use_inner_text=True)
    # First names only in the grid.
    expect(rosa).not_to_contain_text("Hopper", use_inner_text=True)
    expect(sam).not_to_contain_text("Grace", use_inner_text=True)
    # The plan's first visit is the day after.
    expect(sam).not_to_contain_text("Barbara", use_inner_text=True)
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(screenshots / "admin-calendar-day.png"), full_page=True)

    page.get_by_role("link", name="Week").click()
    week_row = page.locator(f"tr[data-crew='{board.sam}']")
    plan_day = (board.day + timedelta(days=1)).isoformat()
    if board.day.weekday() < 6:  # the plan's first visit falls in the same week
        expect(week_row.locator(f"td[data-day='{plan_day}']")).to_contain_text(
            "Barbara", use_inner_text=True
        )
    day_cell = week_row.locator(f"td[data-day='{board.day.isoformat()}']")
    expect(day_cell).to_contain_text("Ada", use_inner_text=True)
    expect(week_row).not_to_contain_text("Grace", use_inner_text=True)
    page.screenshot(path=str(screenshots / "admin-calendar-week.png"), full_page=True)

    # Reschedule Rosa's 8:00 job to 3:00 PM: it moves down her lane.
    page.get_by_role("link", name="Day", exact=True).click()
    rosa.locator(f"a[data-booking='{jobs['move'].id}']").click()
    expect(page.get_by_role("heading", name=f"Standard clean {jobs['move'].code}")).to_be_visible()
    # The admin sees the full name.
    expect(page.locator("main")).to_contain_text("Grace Hopper", use_inner_text=True)
    page.get_by_label("Start time").fill("15:00")
    page.get_by_role("button", name="Reschedule").click()
    expect(page.get_by_role("status")).to_contain_text("moved to", use_inner_text=True)
    assert _stored(site, board, "move").local_start.hour == 15
    expect(page.locator(".bk-activity")).to_contain_text("Rescheduled", use_inner_text=True)
    page.locator(".crumbs a").click()
    expect(rosa.locator(".cal-time")).to_have_text(
        [f"11:00 AM {DASH} 1:25 PM", f"3:00 PM {DASH} 5:25 PM"], use_inner_text=True
    )

    # Cancel Alan's job: hidden, then shown muted with the toggle.
    rosa.locator(f"a[data-booking='{jobs['cancel'].id}']").click()
    page.get_by_label("Reason").fill("Customer is travelling")
    page.get_by_role("button", name="Cancel booking").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Booking {jobs['cancel'].code} cancelled.", use_inner_text=True
    )
    expect(page.locator(".bk-status")).to_have_text("Cancelled", use_inner_text=True)
    assert _stored(site, board, "cancel").status is BookingStatus.CANCELLED
    expect(page.get_by_role("button", name="Start job")).to_have_count(0)
    page.locator(".crumbs a").click()
    expect(page.locator(f"a[data-booking='{jobs['cancel'].id}'].cal-cancelled")).to_be_visible()
    page.get_by_role("link", name="Hide cancelled").click()
    expect(page.get_by_role("link", name="Show cancelled (1)")).to_be_visible()
    expect(page.locator(f"a[data-booking='{jobs['cancel'].id}']")).to_have_count(0)

    # Start, then complete Ada's job.
    sam.locator(f"a[data-booking='{jobs['work'].id}']").click()
    page.get_by_role("button", name="Start job").click()
    # Tomorrow's job: asked first, as the crew portal asks; "No" starts nothing.
    expect(page.locator("#start-question")).to_contain_text("Start it now?")
    page.get_by_role("link", name="No", exact=True).click()
    expect(page.locator(".bk-status")).to_have_text("Scheduled", use_inner_text=True)
    page.get_by_role("button", name="Start job").click()
    expect(page.locator("#start-question")).to_be_visible()  # loaded before it is shot
    page.screenshot(path=str(screenshots / "admin-start-question.png"))
    page.get_by_role("button", name="Yes, start it now").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Job {jobs['work'].code} started.", use_inner_text=True
    )
    expect(page.locator(".bk-status")).to_have_text("In progress", use_inner_text=True)
    # Started by mistake? Undo start sets it back to scheduled, then start it again.
    page.get_by_role("button", name="Undo start").click()
    expect(page.locator(".bk-status")).to_have_text("Scheduled", use_inner_text=True)
    expect(page.locator(".bk-activity")).to_contain_text("Start undone", use_inner_text=True)
    assert _stored(site, board, "work").status is BookingStatus.SCHEDULED
    page.get_by_role("button", name="Start job").click()
    page.get_by_role("button", name="Yes, start it now").click()
    expect(page.locator(".bk-status")).to_have_text("In progress", use_inner_text=True)
    # Started the day before: it is completed on its own date, and the page says so.
    expect(page.get_by_role("button", name="Complete job")).to_have_count(0)
    expect(page.get_by_text("Started before its day: it can be completed from")).to_be_visible()
    with site.later(timedelta(days=1)):  # the job's day; a new sign-in (12-hour sessions)
        sign_in(page, site.user(board.company, Role.OWNER).email)
        page.goto(f"/admin/bookings/{jobs['work'].id}")
        page.get_by_role("button", name="Complete job").click()
        expect(page.locator(".bk-status")).to_have_text("Completed", use_inner_text=True)
        stored = _stored(site, board, "work")
        assert stored.status is BookingStatus.COMPLETED
        assert stored.completed_at is not None
        page.locator(".crumbs a").click()
        expect(sam.locator(f"a[data-booking='{jobs['work'].id}']")).to_contain_text(
            "Completed", use_inner_text=True
        )


def test_a_move_into_a_taken_slot_is_refused_beside_the_fields(site: Site, page, screenshots):
    board = _board(site)
    _owner(site, board, page)
    blocked = board.jobs["blocked"]
    page.goto(f"/admin/bookings/{blocked.id}")
    page.get_by_label("Start time").fill("09:00")  # Sam's job with Ada
    page.get_by_role("button", name="Reschedule").click()
    error = page.locator("#when-error")
    expect(error).to_have_text(
        re.compile("^" + re.escape("That time is taken")), use_inner_text=True
    )
    expect(page.get_by_label("Start time")).to_have_value("09:00")  # the value is kept
    assert _stored(site, board, "blocked").local_start.hour == 13

    token = page.locator("input[name=csrf_token]").first.get_attribute("value")
    answer = page.request.post(
        f"/admin/bookings/{blocked.id}/reschedule",
        form={"csrf_token": str(token), "date": "0001-01-01", "time": "9 o'clock"},
    )
    assert answer.status == 422
    assert "Enter a date" in answer.text()
    assert "Enter a time" in answer.text()
    # A one-time job's form offers no scopes: a hand-made "end the plan" is refused with
    # a message the page shows, not a bare 422.
    answer = page.request.post(
        f"/admin/bookings/{blocked.id}/cancel",
        form={"csrf_token": str(token), "cancel_scope": "plan_after"},
    )
    assert answer.status == 422
    assert "not part of a plan" in answer.text()
    assert _stored(site, board, "blocked").status is BookingStatus.SCHEDULED

    page.get_by_label("Start time").fill("21:00")  # outside Sam's hours
    page.get_by_role("button", name="Reschedule").click()
    expect(page.locator("#when-error")).to_have_text(
        re.compile("^" + re.escape("That time is not open")), use_inner_text=True
    )
    # The crew member is named as the dispatcher knows them, not by an id.
    expect(page.locator("#when-error")).to_contain_text("Sam", use_inner_text=True)
    expect(page.locator("#when-error")).not_to_contain_text("crew_", use_inner_text=True)
    # So is the service, when the chosen member may not be given it.
    kim = _member(site, board.company, "Kim Park")
    with site.container.uow() as uow:
        member = uow.crew.get(board.company.id, kim)
        uow.crew.save(attrs.evolve(member, excluded_service_ids={"svc_standard_clean"}))
        uow.commit()
    page.reload()
    page.get_by_label("Start time").fill("14:00")
    page.get_by_label("Crew").select_option(label="Kim Park")
    page.get_by_role("button", name="Reschedule").click()
    expect(page.locator("#when-error")).to_contain_text(
        "Kim Park does not do service Standard clean", use_inner_text=True
    )
    expect(page.locator("#when-error")).not_to_contain_text("svc_", use_inner_text=True)

    # Given to Rosa at 2:00 PM it is open: the move and the crew change together.
    page.get_by_label("Start time").fill("14:00")
    page.get_by_label("Crew").select_option(label="Rosa Diaz")
    page.get_by_role("button", name="Reschedule").click()
    expect(page.get_by_role("status")).to_contain_text("moved to", use_inner_text=True)
    assert _stored(site, board, "blocked").crew_ids == (board.rosa,)

    # A plan's visit offers the API's scopes; "end the plan after" needs its date.
    page.goto(f"/admin/bookings/{board.jobs['plan'].id}")
    page.get_by_role("radio", name="End the plan after a date").check()
    page.get_by_role("button", name="Cancel booking").click()
    expect(page.locator("#after-error")).to_be_visible()
    page.set_viewport_size({"width": 1280, "height": 800})
    page.screenshot(path=str(screenshots / "admin-booking.png"), full_page=True)
    assert _stored(site, board, "plan").status is BookingStatus.SCHEDULED
    # A mistyped year ends the plan at once no more: first the page says what goes.
    page.get_by_label("Plan's last date").fill("2020-01-01")
    page.get_by_role("button", name="Cancel booking").click()
    expect(page.locator("#cancel-confirm")).to_contain_text(
        re.compile(r"This cancels \d+ visits: "), use_inner_text=True
    )
    assert _stored(site, board, "plan").status is BookingStatus.SCHEDULED
    page.get_by_role("button", name="Cancel booking").click()  # confirmed
    expect(page.get_by_role("status")).to_contain_text("cancelled", use_inner_text=True)
    assert _stored(site, board, "plan").status is BookingStatus.CANCELLED


def _in_sight(page: Any, selector: str) -> None:
    """The element at ``selector`` has the focus (autofocus acts once the page is in) and
    lies wholly within the window."""
    box = page.locator(selector)
    expect(box).to_be_focused()
    expect(box).to_be_in_viewport(ratio=1)


def test_a_refused_form_far_down_the_page_comes_back_in_sight(site: Site, page, screenshots):
    """A payment, reschedule or cancel refused on a phone: the answer does not open at the
    top of a long page with its one message out of sight; the form's box has the focus
    and is scrolled to, and says nothing was done."""
    board = _board(site)
    _owner(site, board, page)
    page.set_viewport_size({"width": 390, "height": 844})
    blocked = board.jobs["blocked"]
    page.goto(f"/admin/bookings/{blocked.id}")
    page.get_by_label("Amount ($)").fill("abc")
    page.get_by_role("button", name="Record payment").click()
    box = page.locator("#payment-answer")
    expect(box).to_have_text("Nothing was recorded. Fix the fields marked below.")
    expect(page.locator("#pay_amount-error")).to_be_visible()
    _in_sight(page, "#payment-answer")
    page.screenshot(path=str(screenshots / "admin-booking-payment-refused-phone.png"))

    page.get_by_label("Start time").fill("09:00")  # Sam's job with Ada
    page.get_by_role("button", name="Reschedule").click()
    expect(page.locator("#reschedule-answer")).to_contain_text("Not moved.")
    expect(page.locator("#when-error")).to_contain_text("That time is taken")
    _in_sight(page, "#reschedule-answer")
    expect(page.locator("#payment-answer")).to_have_count(0)  # the old answer is gone

    page.goto(f"/admin/bookings/{board.jobs['plan'].id}")
    page.get_by_role("radio", name="End the plan after a date").check()
    page.get_by_role("button", name="Cancel booking").click()
    expect(page.locator("#after-error")).to_be_visible()
    _in_sight(page, "#cancel-answer")
    # A question rather than a refusal (what a cancel of several visits takes) is
    # scrolled to the same way.
    page.get_by_label("Plan's last date").fill("2020-01-01")
    page.get_by_role("button", name="Cancel booking").click()
    expect(page.locator("#cancel-confirm")).to_be_visible()
    _in_sight(page, "#cancel-confirm")
    assert _stored(site, board, "plan").status is BookingStatus.SCHEDULED


def test_another_companys_booking_is_not_found(site: Site, browser):
    mine, theirs = _board(site), _board(site)
    context = browser.new_context(base_url=site.base_url, bypass_csp=True)
    try:
        page = context.new_page()
        _owner(site, mine, page)
        other = theirs.jobs["move"]
        for ref in (other.id, other.code, "bkg_made_up"):
            answer = page.goto(f"/admin/bookings/{ref}")
            assert answer is not None
            assert answer.status == 404
            expect(page.get_by_role("heading", name="Not found")).to_be_visible()

        # The action of a form edited to the other company's booking: 404, nothing moves.
        for button in ("Start job", "Cancel booking"):
            page.goto(f"/admin/bookings/{mine.jobs['move'].id}")
            form = page.locator("form", has=page.get_by_role("button", name=button))
            form.evaluate(
                "(form, id) => { form.action = form.action.replace(/bkg_[^/]+/, id); }", other.id
            )
            with page.expect_response(lambda r: other.id in r.url) as answer:
                page.get_by_role("button", name=button).click()
            assert answer.value.status == 404
        assert _stored(site, theirs, "move").status is BookingStatus.SCHEDULED

        # Their bookings never show in my calendar.
        page.goto(f"/admin/calendar?view=week&date={theirs.day.isoformat()}")
        assert other.code not in page.content()
    finally:
        context.close()


def test_the_calendar_on_a_phone_and_a_bad_date(site: Site, context, screenshots):
    board = _board(site)
    page = context.new_page()
    _owner(site, board, page)
    page.set_viewport_size({"width": 390, "height": 844})
    page.goto(f"/admin/calendar?view=week&date={board.day.isoformat()}")
    cell = page.locator(f"tr[data-crew='{board.rosa}'] td[data-day='{board.day.isoformat()}']")
    expect(cell.locator(".cal-cell-day")).to_be_visible()  # stacked: each day names itself
    box = cell.bounding_box()
    assert box is not None
    assert box["width"] > 300
    page.screenshot(path=str(screenshots / "admin-calendar-phone.png"))
    monday = board.day - timedelta(days=board.day.weekday())
    page.get_by_role("link", name="Next").click()  # "Next week" on a wide screen
    expect(page).to_have_url(
        re.compile(re.escape(f"view=week&date={monday + timedelta(days=7)}") + "$")
    )

    for bad in ("2026-13-45", "0001-01-01", "9999-12-31", "20261125", "2026-W48-2"):
        answer = page.goto(f"/admin/calendar?view=week&date={bad}")
        assert answer is not None
        assert answer.status == 422
        expect(page.locator(".cal-pick")).to_contain_text(
            "Enter a date as YYYY-MM-DD", use_inner_text=True
        )
        assert page.get_by_label("Go to date").get_attribute("value") == bad  # kept
    # At the ends of the dates it reads, the calendar offers no step past them.
    page.goto("/admin/calendar?view=day&date=2999-12-31")
    expect(page.get_by_role("link", name="Previous")).to_be_visible()
    expect(page.get_by_role("link", name="Next")).to_have_count(0)
    page.goto("/admin/calendar?view=day&date=1970-01-01")
    expect(page.get_by_role("link", name="Previous")).to_have_count(0)


def test_the_crew_cannot_open_the_calendar_or_a_booking(site: Site, context):
    board = _board(site)
    crew = site.user(board.company, Role.CREW, crew_member_id=board.rosa, name="Rosa Diaz")
    page = context.new_page()
    sign_in(page, crew.email)
    for path in ("/admin/calendar", f"/admin/bookings/{board.jobs['move'].id}"):
        answer = page.goto(path)
        assert answer is not None
        assert answer.status == 403
