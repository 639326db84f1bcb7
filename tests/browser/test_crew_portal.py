"""The crew portal in Chromium: a crew user made with ``booking user create`` signs in with
the printed link, sees their job, starts and completes it, and the customer's lifetime
statistics over ``/api/v1`` move; a crew user can never act on another's job."""

from __future__ import annotations

import re
from datetime import timedelta

from playwright.sync_api import expect

from booking_core.bookings import BookingStatus
from booking_core.crew import new_crew_member
from booking_core.ids import new_id
from booking_core.pricing import SelectedItem
from booking_core.users import Role
from tests.browser.support import Job, Site, session_cookie, sign_in

QUESTION = re.compile(r"^This job starts on \w+day, \w+ \d+ at \d+:\d\d [AP]M\. Start it now\?$")


def lifetime_completed(site: Site, job: Job) -> int:
    with site.api(job.api_key) as api:
        found = api.get("/api/v1/customers", params={"search": job.customer_email})
    assert found.status_code == 200, found.text
    (customer,) = found.json()["data"]
    completed: int = customer["lifetime"]["completed"]
    return completed


def test_crew_signs_in_with_a_cli_link_then_starts_and_completes_a_job(site: Site, page):
    job = site.crew_job()
    status, out, _ = site.cli(
        "user", "create", "--company", job.company.slug, "--email", "rosa@brightside.example",
        "--role", "crew", "--name", "Rosa Diaz", "--crew-member", job.member_id,
    )  # fmt: skip
    assert status == 0, out
    link = re.search(r"https?://\S+/sign-in/link/\S+", out)
    assert link is not None, out
    assert lifetime_completed(site, job) == 0

    page.goto(link.group(0))
    assert page.url == f"{site.base_url}/crew"  # the token left the address bar
    card = page.locator(f"#job-{job.booking.id}")
    expect(card.get_by_text("Scheduled")).to_be_visible()
    text = card.inner_text()
    assert "Grace" in text
    assert "Hopper" not in text  # the customer's first name only
    for shown in (
        "Standard clean",
        "Inside the oven",
        "Interior windows \u00d7 4",
        "9 Compiler Ct",
    ):
        assert shown in text
    assert "Key in the lockbox by the door, code 4711" in text

    card.get_by_role("button", name="Start job").click()
    # Tomorrow's job: one tap asks first, and nothing starts until the answer.
    expect(page.get_by_text(QUESTION)).to_be_visible()
    assert site.booking(job).status is BookingStatus.SCHEDULED
    page.get_by_role("button", name="Yes, start it now").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Job {job.booking.code} started.", use_inner_text=True
    )
    expect(card.get_by_text("In progress")).to_be_visible()
    assert site.booking(job).status is BookingStatus.IN_PROGRESS
    expect(card.get_by_role("button", name="Start job")).to_have_count(0)
    # Started a day early, it is completed on its own date, and the card says when.
    expect(card.get_by_role("button", name="Complete job")).to_have_count(0)
    local = job.booking.local_start
    expect(card.get_by_text(f"Complete it on {local:%A}, {local:%B} {local.day}.")).to_be_visible()

    with site.later(timedelta(days=1)):  # the job's day
        # A day on, the first sign-in's 12 hours are over: Rosa signs in with a password.
        rosa = site.user(job.company, Role.CREW, crew_member_id=job.member_id, name="Rosa")
        sign_in(page, rosa.email)
        card.get_by_role("button", name="Complete job").click()
        expect(card.get_by_text("Completed")).to_be_visible()
    expect(card.get_by_role("button")).to_have_count(0)
    stored = site.booking(job)
    assert stored.status is BookingStatus.COMPLETED
    assert stored.completed_at is not None
    assert lifetime_completed(site, job) == 1

    page.goto(link.group(0))  # a link works once
    assert page.url == f"{site.base_url}/sign-in"
    expect(page.get_by_role("status")).to_contain_text(
        "expired or was already used", use_inner_text=True
    )


def test_the_portal_lists_the_coming_days_jobs_in_order(site: Site, context, screenshots):
    job = site.crew_job()
    later = site.book(
        job.company, "alan@example.com", "Alan Turing", days_ahead=1, latest=True,
        street=("1 Enigma Rd", ""), access_notes="",
        extras=(SelectedItem("ext_fridge"),), parameters=(SelectedItem("par_bedrooms", 1),),
    )  # fmt: skip
    after = site.book(
        job.company, "ada@example.com", "Ada Lovelace", days_ahead=2,
        street=("12 Analytical Way", ""), access_notes="Doorman building: ask for Luis.",
        extras=(),
    )  # fmt: skip
    crew = site.user(job.company, Role.CREW, crew_member_id=job.member_id, name="Rosa Diaz")
    page = context.new_page()
    sign_in(page, crew.email)
    page.locator(f"#job-{job.booking.id}").get_by_role("button", name="Start job").click()
    page.get_by_role("button", name="Yes, start it now").click()
    expect(page.get_by_role("status")).to_have_text(
        f"Job {job.booking.code} started.", use_inner_text=True
    )
    page.goto("/crew")
    headings = page.locator(".day-heading").all_inner_texts()
    assert len(headings) == 2
    assert headings[0].startswith("TOMORROW") or headings[0].startswith("Tomorrow")
    ids = [card.get_attribute("id") for card in page.locator("li.job").all()]
    assert ids == [f"job-{b.id}" for b in (job.booking, later, after)]
    expect(page.locator(f"#job-{later.id}")).to_contain_text("Alan", use_inner_text=True)
    page.screenshot(path=str(screenshots / "crew-portal.png"), full_page=True)
    page.set_viewport_size({"width": 390, "height": 844})  # a phone, where crews read it
    with site.later(timedelta(days=1)):  # the day of the job begun early
        sign_in(page, crew.email)  # a day on: the first sign-in's 12 hours are over
        expect(page.get_by_role("button", name="Complete job")).to_be_visible()
        page.screenshot(path=str(screenshots / "crew-portal-phone.png"))


def test_a_crew_user_cannot_act_on_a_job_of_another_company_or_crew_member(site: Site, browser):
    mine, theirs = site.crew_job(), site.crew_job("Sam Lee")
    crew = site.user(mine.company, Role.CREW, crew_member_id=mine.member_id, password=None)
    context = browser.new_context(base_url=site.base_url, bypass_csp=True)
    try:
        page = context.new_page()
        status, out, _ = site.cli("user", "link", "--email", crew.email)
        assert status == 0
        page.goto(out.split(": ")[-1].strip())
        assert page.url.endswith("/crew")

        # The id in the form edited to another company's job: the same 404 as a made-up id.
        for other in (theirs.booking.id, theirs.booking.code, "bkg_made_up"):
            page.goto("/crew")
            field = page.locator(f"#job-{mine.booking.id} input[name=booking]").first
            field.evaluate("(input, value) => { input.value = value; }", other)
            with page.expect_response(lambda r: r.url.endswith("/crew/start")) as answer:
                page.locator(f"#job-{mine.booking.id}").get_by_role(
                    "button", name="Start job"
                ).click()
            assert answer.value.status == 404
            expect(page.get_by_role("heading", name="Not found")).to_be_visible()
        assert site.booking(theirs).status is BookingStatus.SCHEDULED
        assert site.booking(mine).status is BookingStatus.SCHEDULED
        assert theirs.booking.id not in page.content()
    finally:
        context.close()


def test_another_crew_member_of_the_same_company_gets_404_for_my_job(site: Site, context):
    job = site.crew_job()
    with site.container.uow() as uow:
        other = new_crew_member(
            member_id=new_id("crew"),
            company_id=job.company.id,
            name="Ana Kim",
            home_zip="10001",
            at=site.container.clock.now(),
        )
        uow.crew.add(other)
        uow.commit()
    ana = site.user(job.company, Role.CREW, crew_member_id=other.id, name="Ana Kim")
    page = context.new_page()
    sign_in(page, ana.email)
    expect(page).to_have_url(re.compile(r"/crew$"))
    expect(page.get_by_role("heading", name="No jobs this week")).to_be_visible()
    token = page.locator("form[action='/sign-out'] input[name=csrf_token]").get_attribute("value")
    answer = context.request.post(
        "/crew/complete", form={"csrf_token": token, "booking": job.booking.id}
    )
    assert answer.status == 404
    assert site.booking(job).status is BookingStatus.SCHEDULED
    assert session_cookie(context)["httpOnly"]
