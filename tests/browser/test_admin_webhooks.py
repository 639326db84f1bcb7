"""The webhooks pages in Chromium: an owner registers an endpoint (a refused URL is
explained beside the field), sees its signing secret once, sends a test event and reads
the delivery log, rotates the secret and deletes the endpoint through confirmations,
turns it off and on; another company's endpoint is the 404 page."""

from __future__ import annotations

import re

from attrs import frozen
from playwright.sync_api import expect

from booking_core.services import webhooks as cases
from booking_core.services.webhook_delivery import deliver_due
from booking_core.users import Role
from tests.browser.support import Site, sign_in

SECRET = re.compile(r"whsec_[A-Za-z0-9+/=]+")
HOOK = "https://1.1.1.1/hook"
"""A public address as an IP literal: accepted by the URL policy without DNS."""


@frozen
class Answered:
    """What a stub sender says of one attempt."""

    outcome: str
    status_code: int | None
    duration_ms: int
    error: str | None
    retry_after: int | None = None


def owner_page(site: Site, context):
    company, _ = site.new_company()
    page = context.new_page()
    sign_in(page, site.user(company, Role.OWNER).email)
    return company, page


def shown_secret(page) -> str:
    expect(page.get_by_role("link", name="Done: go to the endpoint")).to_be_visible()
    value = page.get_by_role("textbox", name="Signing secret").input_value()
    assert SECRET.fullmatch(value), value
    return value


def register(page, url: str = HOOK, events: tuple[str, ...] = ()) -> None:
    page.goto("/admin/webhooks")
    page.get_by_label("URL").fill(url)
    if events:
        page.get_by_role("radio", name="Only the events ticked below").check()
        for name in events:
            page.get_by_role("checkbox", name=name).check()
    page.get_by_role("button", name="Register endpoint").click()


def test_an_owner_registers_an_endpoint_and_reads_its_log(site: Site, context, screenshots):
    company, page = owner_page(site, context)
    page.get_by_role("navigation").get_by_role("link", name="Webhooks").click()
    expect(page.get_by_text("No endpoints yet.")).to_be_visible()

    register(page, "http://1.1.1.1/hook", events=("booking.created",))
    expect(page.locator("#url-error")).to_have_text(
        "Webhook URLs must use https.", use_inner_text=True
    )
    expect(page.get_by_label("URL")).to_have_value("http://1.1.1.1/hook")  # kept
    expect(page.get_by_role("checkbox", name="booking.created")).to_be_checked()
    register(page, "https://127.0.0.1/hook")
    expect(page.locator("#url-error")).to_contain_text("loopback", use_inner_text=True)
    page.get_by_label("URL").fill(HOOK)
    page.get_by_role("radio", name="Only the events ticked below").check()
    page.get_by_role("button", name="Register endpoint").click()
    expect(page.locator("#events-error")).to_have_text(
        "Tick at least one event, or choose All events.", use_inner_text=True
    )

    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        register(page, HOOK, events=("booking.created", "payment.refunded"))
    assert answer.value.headers["cache-control"] == "no-store"
    secret = shown_secret(page)
    assert page.url == f"{site.base_url}/admin/webhooks"
    page.get_by_role("link", name="Done: go to the endpoint").click()
    expect(page.get_by_role("button", name="Send test event")).to_be_visible()
    assert secret not in page.content()
    endpoint_path = page.url
    page.goto("/admin/webhooks")
    assert secret not in page.content()
    row = page.locator("tr", has_text=HOOK)
    expect(row).to_contain_text("booking.created", use_inner_text=True)
    expect(row).to_contain_text("Active", use_inner_text=True)
    page.screenshot(path=str(screenshots / "admin-webhooks.png"), full_page=True)

    page.goto(endpoint_path)
    expect(page.get_by_text("No attempts yet.")).to_be_visible()
    page.get_by_role("button", name="Send test event").click()
    flash = page.get_by_role("status")
    expect(flash).to_contain_text("queued", use_inner_text=True)
    expect(flash).to_contain_text("after its first attempt", use_inner_text=True)
    expect(page.get_by_text("No attempts yet.")).to_be_visible()  # queued, not yet tried

    # The delivery worker's step, with a receiver that answers 503.
    def send(url, headers, body):
        assert url == HOOK
        assert b'"webhook.test"' in body
        return Answered("failed", 503, 42, "HTTP 503 Service Unavailable")

    clock = site.container.clock
    deliver_due(uow_factory=site.container.uow, send=send, clock=clock, random=lambda: 0.5)
    page.reload()
    log = page.locator(".log-table tbody tr")
    expect(log).to_have_count(1)
    cells = log.first.locator("td").all_inner_texts()
    assert "webhook.test" in cells[1]
    assert cells[2:6] == ["1", "503", "42 ms", "HTTP 503 Service Unavailable"]
    assert cells[6] != "—"  # the next retry
    page.screenshot(path=str(screenshots / "admin-webhook.png"), full_page=True)

    page.get_by_role("link", name="Rotate secret…").click()
    expect(page.get_by_role("heading", name="Rotate the signing secret?")).to_be_visible()
    page.get_by_role("button", name="Rotate secret").click()
    rotated = shown_secret(page)
    assert rotated != secret
    assert rotated not in page.url
    expect(page.get_by_text("Previous secret signs until")).to_be_visible()

    page.goto(endpoint_path)
    page.get_by_role("button", name="Turn off").click()
    expect(page.get_by_role("status")).to_contain_text("Turned off", use_inner_text=True)
    expect(page.get_by_role("button", name="Send test event")).to_have_count(0)
    # Turning it off gave up the delivery that waited: no next retry shown for it.
    expect(log.first.locator("td").nth(6)).to_have_text("—")
    assert not cases.get_endpoint(
        company.id, endpoint_path.rsplit("/", 1)[1], uow=site.container.reader()
    ).active
    page.get_by_role("button", name="Turn on").click()
    expect(page.get_by_role("button", name="Send test event")).to_be_visible()

    page.get_by_role("link", name="Delete…").click()
    expect(page.get_by_role("heading", name="Delete this endpoint?")).to_be_visible()
    page.get_by_role("button", name="Delete endpoint").click()
    expect(page).to_have_url(f"{site.base_url}/admin/webhooks")
    expect(page.get_by_text("No endpoints yet.")).to_be_visible()


def test_another_companys_endpoint_is_not_found_and_dispatchers_are_refused(site: Site, context):
    _, page = owner_page(site, context)
    other, _ = site.new_company()
    theirs, _ = cases.create_endpoint(
        cases.CreateEndpoint(company_id=other.id, url=HOOK, events=("*",)),
        uow=site.container.uow(),
        clock=site.container.clock,
        urls=cases.UrlPolicy(resolver=site.container.resolver),
    )
    base = f"/admin/webhooks/{theirs.id}"
    for path in (base, f"{base}/rotate", f"{base}/delete", "/admin/webhooks/whk_made_up"):
        assert page.goto(path).status == 404, path
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    csrf = page.locator("input[name=csrf_token]").first.get_attribute("value")
    for action in ("test", "active", "rotate", "delete"):
        answer = context.request.post(f"{base}/{action}", form={"csrf_token": csrf})
        assert answer.status == 404, action
        assert not SECRET.search(answer.text())
    assert cases.get_endpoint(other.id, theirs.id, uow=site.container.reader()) == theirs

    dispatcher = site.user(other, Role.DISPATCHER)
    second = context.browser.new_context(base_url=site.base_url)
    try:
        tab = second.new_page()
        sign_in(tab, dispatcher.email)
        expect(tab).to_have_url(f"{site.base_url}/admin")
        expect(tab.get_by_role("link", name="Webhooks")).to_have_count(0)
        assert tab.goto("/admin/webhooks").status == 403
    finally:
        second.close()
