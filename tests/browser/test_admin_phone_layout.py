"""The admin's tables of records on a phone, in Chromium: the crew, catalog, keys and
webhook tables (and a webhook's delivery log) stack each row into a block, so every Edit,
Remove and Retire control is on screen at 390 px without scrolling inside the table; at
1280 px they stay tables (docs/web.md, "Setting the company up")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from booking_core.services import webhooks as cases
from booking_core.services.webhook_delivery import deliver_due
from tests.browser.support import Site
from tests.browser.test_admin_webhooks import HOOK, Answered, owner_page

PHONE = {"width": 390, "height": 844}
DESK = {"width": 1280, "height": 900}
OFF_SCREEN = """() => [...document.querySelectorAll('main table a, main table button')]
  .filter(e => e.getClientRects().length)
  .map(e => [e.textContent.trim(), Math.round(e.getBoundingClientRect().right)])
  .filter(([_, right]) => right > window.innerWidth)"""
"""The table links and buttons whose right edge is past the screen's."""
WIDER = """() => [...document.querySelectorAll('main table')]
  .filter(t => t.scrollWidth > t.parentElement.clientWidth + 1).length"""
"""How many tables are wider than the box that holds them."""


def pages(site: Site, context: Any) -> tuple[Any, list[str]]:
    """An owner's page, and the admin pages with tables of a company set up to fill them:
    two crew members and a team, the demo catalog, a key, a webhook endpoint with a
    failed delivery in its log."""
    company, page = owner_page(site, context)
    for name in ("Rosa Diaz", "Sam Lee"):
        site.add_member(company, name)
    endpoint, _ = cases.create_endpoint(
        cases.CreateEndpoint(company_id=company.id, url=HOOK, events=("*",)),
        uow=site.container.uow(),
        clock=site.container.clock,
        urls=cases.UrlPolicy(resolver=site.container.resolver),
    )
    page.goto(f"/admin/webhooks/{endpoint.id}")
    page.get_by_role("button", name="Send test event").click()
    expect(page.get_by_role("status")).to_contain_text("queued", use_inner_text=True)
    deliver_due(
        uow_factory=site.container.uow,
        send=lambda url, headers, body: Answered("failed", 503, 42, "HTTP 503 Unavailable"),
        clock=site.container.clock,
        random=lambda: 0.5,
    )
    paths = ["/admin/crew", "/admin/catalog", "/admin/keys", "/admin/webhooks"]
    return page, [*paths, f"/admin/webhooks/{endpoint.id}"]


def test_every_control_of_the_admin_tables_is_on_screen_on_a_phone(
    site: Site, context: Any, screenshots: Path
):
    page, paths = pages(site, context)
    page.set_viewport_size(PHONE)
    for path in paths:
        page.goto(path)
        name = path.strip("/").replace("/", "-")[:40]
        page.screenshot(path=str(screenshots / f"{name}-phone.png"), full_page=True)
        assert page.evaluate(OFF_SCREEN) == [], path
        assert page.evaluate(WIDER) == 0, path
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"], path

    page.goto("/admin/crew")
    row = page.locator(".crew-table tbody tr").first
    label = row.locator("td[data-label='Works in']")
    assert label.evaluate("td => getComputedStyle(td, '::before').content") == '"Works in: "'
    expect(row.get_by_role("link", name="Edit Rosa Diaz")).to_be_in_viewport()
    page.goto("/admin/catalog")
    fees = page.locator("#fees")
    fees.screenshot(path=str(screenshots / "admin-catalog-fees-phone.png"))
    page.locator("article.service").first.screenshot(
        path=str(screenshots / "admin-catalog-service-phone.png")
    )
    retire = fees.get_by_role("button", name="Retire").first
    retire.scroll_into_view_if_needed()
    expect(retire).to_be_in_viewport(ratio=1)


def test_the_admin_tables_stay_tables_on_a_wide_screen(site: Site, context: Any, screenshots: Path):
    page, paths = pages(site, context)
    page.set_viewport_size(DESK)
    for path in paths:
        page.goto(path)
        name = path.strip("/").replace("/", "-")[:40]
        page.screenshot(path=str(screenshots / f"{name}-wide.png"), full_page=True)
        header = page.locator("main table thead th").first
        assert header.evaluate("th => getComputedStyle(th).display") == "table-cell", path
        assert page.evaluate(OFF_SCREEN) == [], path


def test_the_admin_pages_fit_a_320_pixel_screen(site: Site, context: Any):
    """docs/web.md, "Accessibility": nothing scrolls sideways at 320 px (WCAG 1.4.10), not
    a card, a heading's button, nor a long value beside its label."""
    page, paths = pages(site, context)
    page.set_viewport_size({"width": 320, "height": 640})
    for path in ("/admin", "/account", *paths):
        page.goto(path)
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= 320, (path, width)
