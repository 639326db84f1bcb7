"""The API keys page in Chromium: an owner creates a key with the default permissions and
sees it in full once, and it works on ``/api/v1``; a key with no permission is refused
with SPEC.md's words, on create and on edit; rotate and revoke go through their
confirmations; a revoked key has no edit form and refuses a forged one; another
company's key is the 404 page; a dispatcher gets the 403 page."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from booking_core.auth import NO_SCOPES_MESSAGE, KeyStatus
from booking_core.services import companies as company_cases
from booking_core.users import Role
from tests.browser.support import Site, sign_in

KEY = re.compile(r"bsk_[0-9A-Za-z]{46}")


def owner_page(site: Site, context):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    page = context.new_page()
    sign_in(page, owner.email)
    return company, page


def shown_key(page) -> str:
    expect(page.get_by_role("link", name="Done: go to the key")).to_be_visible()
    value = page.get_by_role("textbox", name="API key").input_value()
    assert KEY.fullmatch(value), value
    return value


def stored(site: Site, company_id: str, name: str):
    keys = company_cases.list_keys(company_id, uow=site.container.reader())
    (key,) = [k for k in keys if k.name == name]
    return key


def test_an_owner_creates_a_key_and_sees_it_once(site: Site, context, screenshots):
    company, page = owner_page(site, context)
    page.get_by_role("navigation").get_by_role("link", name="API keys").click()
    expect(page.get_by_role("heading", name="API keys")).to_be_visible()
    # New keys start with SPEC.md's three read permissions and 120 per minute.
    for scope in ("catalog:read", "bookings:read", "customers:read"):
        expect(page.get_by_role("checkbox", name=scope)).to_be_checked()
    expect(page.get_by_role("checkbox", name="bookings:write")).not_to_be_checked()
    expect(page.get_by_role("checkbox")).to_have_count(13)
    expect(page.get_by_label("Rate limit (requests per minute)")).to_have_value("120")
    page.screenshot(path=str(screenshots / "admin-keys.png"), full_page=True)

    page.get_by_label("Name").fill("Website booking form")
    with page.expect_response(lambda r: r.request.method == "POST") as answer:
        page.get_by_role("button", name="Create key").click()
    assert answer.value.headers["cache-control"] == "no-store"
    secret = shown_key(page)
    assert page.url == f"{site.base_url}/admin/keys"  # the POST's own answer: no key in it
    assert secret not in page.url
    page.screenshot(path=str(screenshots / "admin-key-created.png"), full_page=True)
    # The developer given the key is told where to send it and where the reference is.
    expect(page.get_by_text(f"{site.base_url}/api/v1", exact=True)).to_be_visible()
    expect(page.get_by_text(f"{site.base_url}/docs", exact=True)).to_be_visible()
    # On a phone the whole key is in sight, wrapped, not cut off inside a one-line field.
    page.set_viewport_size({"width": 390, "height": 844})
    field = page.get_by_role("textbox", name="API key")
    widths = field.evaluate("e => [e.scrollWidth, e.clientWidth, e.scrollHeight, e.clientHeight]")
    assert widths[0] <= widths[1], widths  # no sideways scroll inside the field
    assert widths[2] <= widths[3] + 1, widths  # nor up and down
    box = field.bounding_box()
    assert box is not None
    assert box["x"] >= 0
    assert box["x"] + box["width"] <= 390
    page.screenshot(path=str(screenshots / "admin-key-created-phone.png"), full_page=True)
    page.set_viewport_size({"width": 1280, "height": 900})
    with site.api(secret) as api:
        assert api.get("/api/v1/services").status_code == 200
        assert api.get("/api/v1/payments").json()["error"]["code"] == "insufficient_scope"

    page.get_by_role("link", name="Done: go to the key").click()
    expect(page.get_by_role("button", name="Save changes")).to_be_visible()
    assert secret not in page.content()
    page.goto("/admin/keys")
    assert secret not in page.content()
    row = page.locator("tr", has_text="Website booking form")
    expect(row).to_contain_text("Active", use_inner_text=True)
    # The non-secret prefix identifies it.
    expect(row).to_contain_text(secret[:12], use_inner_text=True)
    key = stored(site, company.id, "Website booking form")
    assert key.scopes == {"catalog:read", "bookings:read", "customers:read"}
    assert key.rate_limit_per_minute == 120


def test_no_permission_is_refused_on_create_and_on_edit(site: Site, context):
    company, page = owner_page(site, context)
    page.goto("/admin/keys")
    page.get_by_label("Name").fill("Zapier")
    for box in page.get_by_role("checkbox").all():
        box.uncheck()
    page.get_by_label("Rate limit (requests per minute)").fill("9")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_text(NO_SCOPES_MESSAGE, exact=True)).to_be_visible()
    expect(page.get_by_text("10 to 6,000 requests per minute.")).to_be_visible()
    expect(page.get_by_label("Name")).to_have_value("Zapier")  # kept
    expect(page.get_by_label("Rate limit (requests per minute)")).to_have_value("9")
    assert not KEY.search(page.content())
    assert all(
        k.name != "Zapier" for k in company_cases.list_keys(company.id, uow=site.container.reader())
    )

    # Name left empty: the name's own error, beside it.
    page.get_by_role("checkbox", name="leads:write").check()
    page.get_by_label("Name").fill("")
    page.get_by_label("Rate limit (requests per minute)").fill("6000")
    page.get_by_role("button", name="Create key").click()
    expect(page.get_by_text("A name is required")).to_be_visible()
    expect(page.get_by_role("checkbox", name="leads:write")).to_be_checked()

    page.get_by_label("Name").fill("Zapier")
    page.get_by_role("button", name="Create key").click()
    shown_key(page)
    page.get_by_role("link", name="Done: go to the key").click()
    expect(page.get_by_role("button", name="Save changes")).to_be_visible()
    expect(page.get_by_role("checkbox", name="leads:write")).to_be_checked()
    for box in page.get_by_role("checkbox").all():
        box.uncheck()
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_text(NO_SCOPES_MESSAGE, exact=True)).to_be_visible()
    assert stored(site, company.id, "Zapier").scopes == {"leads:write"}

    page.get_by_role("checkbox", name="quotes:read").check()
    page.get_by_label("Rate limit (requests per minute)").fill("300")
    page.get_by_role("button", name="Save changes").click()
    expect(page.get_by_role("status")).to_have_text(
        "Saved the changes to Zapier.", use_inner_text=True
    )
    edited = stored(site, company.id, "Zapier")
    assert edited.scopes == {"quotes:read"}
    assert edited.rate_limit_per_minute == 300


def test_rotate_and_revoke_ask_first_and_a_revoked_key_cannot_be_edited(site: Site, context):
    company, page = owner_page(site, context)
    page.goto("/admin/keys")
    page.get_by_label("Name").fill("Spreadsheet")
    page.get_by_role("button", name="Create key").click()
    first = shown_key(page)
    page.get_by_role("link", name="Done: go to the key").click()
    expect(page.get_by_role("button", name="Save changes")).to_be_visible()
    key_path = page.url

    page.get_by_role("link", name="Rotate key…").click()
    expect(page.get_by_role("heading", name="Rotate Spreadsheet?")).to_be_visible()
    page.get_by_role("link", name="Cancel").click()
    expect(page).to_have_url(key_path)
    expect(page.get_by_role("button", name="Save changes")).to_be_visible()
    with site.api(first) as api:
        assert api.get("/api/v1/services").status_code == 200  # nothing happened

    page.get_by_role("link", name="Rotate key…").click()
    page.get_by_role("button", name="Rotate key").click()
    second = shown_key(page)
    assert second != first
    assert second not in page.url
    with site.api(first) as api:
        assert api.get("/api/v1/services").status_code == 401
    with site.api(second) as api:
        assert api.get("/api/v1/services").status_code == 200

    page.goto(key_path)
    csrf = page.locator("input[name=csrf_token]").first.get_attribute("value")
    page.get_by_role("link", name="Revoke key…").click()
    expect(page.get_by_role("heading", name="Revoke Spreadsheet?")).to_be_visible()
    page.get_by_role("button", name="Revoke key").click()
    expect(page).to_have_url(f"{site.base_url}/admin/keys")
    expect(page.locator("tr", has_text="Spreadsheet")).to_contain_text(
        "Revoked", use_inner_text=True
    )
    with site.api(second) as api:
        assert api.get("/api/v1/services").status_code == 401

    page.goto(key_path)
    expect(page.get_by_role("button", name="Save changes")).to_have_count(0)
    expect(page.get_by_role("link", name="Rotate key…")).to_have_count(0)
    expect(page.get_by_role("link", name="Revoke key…")).to_have_count(0)
    # A forged edit of the revoked key: refused with the core's words, nothing changes.
    answer = context.request.post(
        key_path, form={"csrf_token": csrf, "scope.bookings:write": "1", "rate_limit": "500"}
    )
    assert answer.status == 422
    assert "the key is revoked" in answer.text()
    key = stored(site, company.id, "Spreadsheet")
    assert key.status is KeyStatus.REVOKED
    assert "bookings:write" not in key.scopes
    assert key.rate_limit_per_minute == 120
    answer = context.request.post(f"{key_path}/rotate", form={"csrf_token": csrf})
    assert answer.status == 422
    assert not KEY.search(answer.text())


def test_another_companys_key_is_not_found_and_dispatchers_are_refused(site: Site, context):
    _, page = owner_page(site, context)
    other, _ = site.new_company()
    theirs = company_cases.list_keys(other.id, uow=site.container.reader())[0]
    for path in (
        f"/admin/keys/{theirs.id}",
        f"/admin/keys/{theirs.id}/rotate",
        f"/admin/keys/{theirs.id}/revoke",
        "/admin/keys/key_made_up",
    ):
        answer = page.goto(path)
        assert answer.status == 404, path
        expect(page.get_by_role("heading", name="Not found")).to_be_visible()
    assert theirs.name not in page.content()
    page.goto("/admin/keys")
    csrf = page.locator("input[name=csrf_token]").first.get_attribute("value")
    answer = context.request.post(f"/admin/keys/{theirs.id}/revoke", form={"csrf_token": csrf})
    assert answer.status == 404
    assert company_cases.list_keys(other.id, uow=site.container.reader())[0].active

    dispatcher = site.user(other, Role.DISPATCHER)
    second = context.browser.new_context(base_url=site.base_url)
    try:
        tab = second.new_page()
        sign_in(tab, dispatcher.email)
        expect(tab).to_have_url(f"{site.base_url}/admin")
        expect(tab.get_by_role("link", name="API keys")).to_have_count(0)
        assert tab.goto("/admin/keys").status == 403
        expect(tab.get_by_role("heading", name="Not for your role")).to_be_visible()
    finally:
        second.close()
