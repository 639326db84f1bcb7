"""The customer pages' layout in a real browser, where the audit found it wanting: long
unbroken text wraps instead of widening the page, and a brand colour drawn as text stays
readable in the dark scheme."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from booking_core.notifications import MessageKind
from booking_core.services.setup import UpdateCompanySettings, update_company_settings
from booking_core.users import Role
from tests.browser.support import Job, Site, sign_in
from tests.browser.test_portal import LINK

PHONE = {"width": 390, "height": 844}
NAME = "G" * 200
STREET = "S" * 200
NOTES = "N" * 2000


def long_job(site: Site) -> tuple[Job, Any]:
    job = site.crew_job()
    booking = site.book(
        job.company,
        job.customer_email,
        NAME,
        days_ahead=3,
        access_notes=NOTES,
        street=(STREET, "A" * 100),
    )
    return job, booking


def assert_no_sideways_scroll(page: Any, width: int) -> None:
    wide = page.evaluate("document.documentElement.scrollWidth")
    assert wide <= width, f"{page.url} is {wide} px wide on a {width} px screen"


def test_long_unbroken_text_wraps_on_the_tracking_cancel_and_portal_pages(
    site: Site, page: Any, screenshots: Path
):
    job, booking = long_job(site)
    slug = job.company.slug
    page.set_viewport_size(PHONE)
    track = f"/{slug}/track/{booking.tracking_token}"
    for path, name in ((track, "track"), (f"{track}/cancel", "track-cancel")):
        page.goto(path)
        page.screenshot(path=str(screenshots / f"long-{name}-phone.png"), full_page=True)
        assert_no_sideways_scroll(page, PHONE["width"])

    page.goto(f"/{slug}/portal")
    page.get_by_label("Your email").fill(job.customer_email)
    page.get_by_role("button", name="Email me a sign-in link").click()
    page.get_by_role("status").wait_for()
    with site.container.uow() as uow:
        queued = uow.messages.for_subject(job.company.id, booking.customer_id)
    (message,) = [m for m in queued if m.kind is MessageKind.PORTAL_SIGN_IN]
    found = LINK.search(message.text)
    assert found is not None
    for path, name in (
        (found.group(0), "portal"),
        (f"/{slug}/portal/details", "portal-details"),
    ):
        page.goto(path)
        page.screenshot(path=str(screenshots / f"long-{name}-phone.png"), full_page=True)
        assert_no_sideways_scroll(page, PHONE["width"])


def test_long_unbroken_text_wraps_on_the_admin_booking_page(
    site: Site, page: Any, screenshots: Path
):
    job, booking = long_job(site)
    owner = site.user(job.company, Role.OWNER)
    sign_in(page, owner.email)
    for viewport in (PHONE, {"width": 1280, "height": 900}):
        page.set_viewport_size(viewport)
        page.goto(f"/admin/bookings/{booking.id}")
        page.screenshot(
            path=str(screenshots / f"long-admin-booking-{viewport['width']}.png"), full_page=True
        )
        assert_no_sideways_scroll(page, viewport["width"])


def contrast(one: tuple[float, ...], two: tuple[float, ...]) -> float:
    def luminance(rgb: tuple[float, ...]) -> float:
        linear = [
            c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4
            for c in rgb
        ]
        return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]

    lighter, darker = sorted((luminance(one), luminance(two)), reverse=True)
    return (lighter + 0.05) / (darker + 0.05)


RGB = "c => getComputedStyle(c).color.match(/[0-9.]+/g).slice(0, 3).map(Number)"


def test_a_brand_colour_drawn_as_text_stays_readable_in_the_dark_scheme(site: Site, browser: Any):
    for colour in ("#000000", "#1d4ed8"):
        job, booking = long_job(site)
        update_company_settings(
            UpdateCompanySettings(company_id=job.company.id, brand_color=colour),
            uow=site.container.uow(),
        )
        for scheme in ("dark", "light"):
            context = browser.new_context(
                base_url=site.base_url, viewport=PHONE, color_scheme=scheme
            )
            try:
                page = context.new_page()
                page.goto(f"/{job.company.slug}/track/{booking.tracking_token}/reschedule")
                surface = tuple(
                    page.evaluate(
                        "getComputedStyle(document.querySelector('.card')).backgroundColor"
                        ".match(/[0-9.]+/g).slice(0, 3).map(Number)"
                    )
                )
                link = page.locator("a.cust-day, a.bkp-day, main a:not(.button)").first
                text = tuple(link.evaluate(RGB))
                ratio = contrast(text, surface)
                assert ratio >= 4.5, f"{colour} {scheme}: {text} on {surface} is {ratio:.1f}:1"
                button = page.locator(".button-primary").first
                if button.count():
                    on = tuple(button.evaluate(RGB))
                    fill = tuple(
                        button.evaluate(
                            "b => getComputedStyle(b).backgroundColor"
                            ".match(/[0-9.]+/g).slice(0, 3).map(Number)"
                        )
                    )
                    assert contrast(on, fill) >= 4.5, f"{colour} {scheme} button"
            finally:
                context.close()


def test_the_date_step_s_weekday_headings_stay_on_one_line_on_a_phone(site: Site, page: Any):
    """Each heading ("MON" in a seventh of 390 px) is one line: the wrapping of long
    words never breaks the page's own headings inside a word (it did: "M/O/N")."""
    job = site.crew_job()
    page.set_viewport_size(PHONE)
    page.goto(f"/{job.company.slug}/book?service=svc_standard_clean&zip=10001&step=date")
    headings = page.locator(".bkp-cal thead th")
    assert headings.all_inner_texts() == ["MON", "TUE", "WED", "THU", "FRI", "SAT", "SUN"]
    for heading in headings.all():
        lines = heading.evaluate(
            "th => { const r = document.createRange(); r.selectNodeContents(th);"
            " return new Set([...r.getClientRects()].map(x => Math.round(x.top))).size; }"
        )
        assert lines == 1, heading.inner_text()
    assert_no_sideways_scroll(page, PHONE["width"])


def test_a_refusal_page_s_button_wraps_a_long_word_of_the_company_s_name(site: Site, page: Any):
    """The 404 page's one button, "Book a visit with {company}", wraps inside its card on
    a phone however long a word of the company's name."""
    company, _ = site.new_company()
    update_company_settings(
        UpdateCompanySettings(
            company_id=company.id,
            name="Handy Supercalifragilisticexpialidociousanticonstitutionalservices",
        ),
        uow=site.container.uow(),
    )
    page.set_viewport_size(PHONE)
    page.goto(f"/{company.slug}/nothing-here")
    button = page.get_by_role("link", name="Book a visit with Handy")
    card = page.locator(".error-card").bounding_box()
    box = button.bounding_box()
    assert card is not None
    assert box is not None
    assert box["x"] + box["width"] <= card["x"] + card["width"] + 0.5
    assert_no_sideways_scroll(page, PHONE["width"])
