"""Signing in and out in Chromium: passwords, links, wrong passwords, CSRF, session
fixation, sign out everywhere, roles, and the admin home."""

from __future__ import annotations

import re

from playwright.sync_api import expect

from booking_core.users import Role
from tests.browser.support import PASSWORD, Site, session_cookie, session_payload, sign_in


def test_an_owner_signs_in_with_a_password_and_lands_on_the_admin_home(
    site: Site, page, screenshots
):
    job = site.crew_job()
    company = job.company
    owner = site.user(company, Role.OWNER, name="Olivia Owner")
    site.user(company, Role.DISPATCHER, name="Dev Dispatcher", password=None)
    site.user(company, Role.CREW, name="Rosa Diaz", crew_member_id=job.member_id)
    page.goto("/sign-in")
    page.get_by_label("Email").fill(owner.email)
    page.screenshot(path=str(screenshots / "sign-in.png"))
    page.get_by_label("Password").fill("a long and careful passphrase")
    page.get_by_role("button", name="Sign in").click()

    expect(page).to_have_url(f"{site.base_url}/admin")
    expect(page.get_by_role("heading", name="Brightside Cleaning")).to_be_visible()
    people = page.locator("table")
    expect(people).to_contain_text(owner.email, use_inner_text=True)
    expect(people).to_contain_text("Dev Dispatcher", use_inner_text=True)
    expect(people).to_contain_text("Link only", use_inner_text=True)
    expect(people).to_contain_text(re.compile("crew rosa diaz", re.I), use_inner_text=True)
    # Where the company's customers book, and the line that embeds it on its own site.
    booking_page = f"{site.base_url}/{company.slug}/book"
    expect(page.get_by_role("link", name=booking_page)).to_have_attribute("href", booking_page)
    embed = f'<script src="{site.base_url}/{company.slug}/embed.js" async></script>'
    expect(page.locator("pre.snippet")).to_have_text(embed)
    assert page.request.get(booking_page).status == 200
    # Only pages that exist are linked, and each of them answers.
    links = page.locator("nav[aria-label=Main] a").all()
    assert [a.inner_text() for a in links if a.is_visible()] == [
        "Home",
        "Calendar",
        "Customers",
        "Leads",
        "Catalog",
        "Crew",
        "Settings",
        "API keys",
        "Webhooks",
    ]
    assert page.get_by_role("link", name="Olivia Owner").get_attribute("href") == "/account"
    for link in links:
        href = str(link.get_attribute("href"))
        answer = page.request.get(href)
        assert answer.status == 200, (href, answer.status, answer.text()[:500])
    page.screenshot(path=str(screenshots / "admin-home.png"), full_page=True)

    page.get_by_role("button", name="Sign out", exact=True).click()
    expect(page).to_have_url(f"{site.base_url}/sign-in")
    expect(page.get_by_role("status")).to_have_text("You are signed out.", use_inner_text=True)
    page.goto("/admin")
    assert page.url == f"{site.base_url}/sign-in"


def test_a_wrong_password_is_refused_with_the_same_words_as_an_unknown_email(site: Site, page):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    messages = []
    for email, password in ((owner.email, "not the passphrase"), ("nobody@example.com", "x" * 12)):
        with page.expect_response(lambda r: r.request.method == "POST") as answer:
            sign_in(page, email, password)
        assert answer.value.status == 401
        expect(page).to_have_url(f"{site.base_url}/sign-in")
        expect(page.get_by_label("Email")).to_have_value(email)
        messages.append(page.get_by_role("alert").inner_text())
    assert messages == ["That email and password do not match an account."] * 2
    page.goto("/admin")
    assert page.url == f"{site.base_url}/sign-in"


def test_a_post_without_its_csrf_token_is_refused(site: Site, context):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    page = context.new_page()
    sign_in(page, owner.email)
    expect(page).to_have_url(re.compile(r"/admin$"))
    token = page.locator("form[action='/sign-out'] input[name=csrf_token]").get_attribute("value")
    for form in ({}, {"csrf_token": ""}, {"csrf_token": token + "x"}):
        answer = context.request.post("/sign-out-everywhere", form=form)
        assert answer.status == 403
        assert "This form could not be accepted" in answer.text()
    # The refused posts changed nothing: still signed in, same epoch.
    page.goto("/admin")
    assert page.url.endswith("/admin")
    anonymous = context.request.post("/sign-in", form={"email": owner.email, "password": "x"})
    assert anonymous.status == 403  # the sign-in form carries a token too


def test_signing_in_issues_a_new_session_and_the_old_one_opens_nothing(site: Site, browser):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    context = browser.new_context(base_url=site.base_url)
    try:
        page = context.new_page()
        page.goto("/sign-in")
        before = session_cookie(context)
        sign_in(page, owner.email)
        expect(page).to_have_url(re.compile(r"/admin$"))
        after = session_cookie(context)
        assert session_payload(after["value"])["sid"] != session_payload(before["value"])["sid"]
        assert session_payload(after["value"])["uid"] == owner.id
        assert after["httpOnly"]
        assert after["sameSite"] == "Lax"
        assert not after["secure"]  # the base URL is http here
        planted = browser.new_context(base_url=site.base_url)
        planted.add_cookies(
            [{"name": before["name"], "value": before["value"], "url": site.base_url}]
        )
        other = planted.new_page()
        other.goto("/admin")
        assert other.url.endswith("/sign-in")
        planted.close()
    finally:
        context.close()


def test_sign_out_everywhere_ends_a_session_copied_elsewhere(site: Site, browser):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    laptop = browser.new_context(base_url=site.base_url)
    phone = browser.new_context(base_url=site.base_url)
    try:
        page = laptop.new_page()
        sign_in(page, owner.email)
        cookie = session_cookie(laptop)
        phone.add_cookies(
            [{"name": cookie["name"], "value": cookie["value"], "url": site.base_url}]
        )
        on_phone = phone.new_page()
        on_phone.goto("/admin")
        assert on_phone.url.endswith("/admin")

        page.goto("/account")
        page.get_by_role("button", name="Sign out everywhere").click()
        expect(page).to_have_url(re.compile(r"/sign-in$"))
        expect(page.get_by_role("status")).to_contain_text(
            "signed out on every device", use_inner_text=True
        )

        on_phone.goto("/admin")
        assert on_phone.url.endswith("/sign-in")
        expect(on_phone.get_by_role("status")).to_contain_text(
            "session has ended", use_inner_text=True
        )
        sign_in(page, owner.email)  # a new sign-in works again
        expect(page).to_have_url(re.compile(r"/admin$"))
    finally:
        laptop.close()
        phone.close()


def test_a_password_set_on_the_account_page_signs_in(site: Site, page):
    company, _ = site.new_company()
    dispatcher = site.user(company, Role.DISPATCHER, password=None)
    status, out, _ = site.cli("user", "link", "--email", dispatcher.email)
    assert status == 0
    page.goto(out.split(": ")[-1].strip())
    assert page.url.endswith("/admin")
    page.goto("/account")
    page.get_by_label("New password").fill("too short")
    page.get_by_label("The same again").fill("too short")
    page.get_by_role("button", name="Save password").click()
    expect(page.get_by_text("At least 12 characters.")).to_be_visible()
    page.get_by_label("New password").fill("twelve chars and then some")
    page.get_by_label("The same again").fill("twelve chars and then some")
    page.get_by_role("button", name="Save password").click()
    expect(page.get_by_role("status")).to_contain_text("Password saved", use_inner_text=True)
    page.get_by_role("button", name="Sign out", exact=True).click()
    expect(page).to_have_url(re.compile(r"/sign-in$"))
    sign_in(page, dispatcher.email, "twelve chars and then some")
    expect(page).to_have_url(re.compile(r"/admin$"))


def test_changing_a_password_asks_for_the_current_one_beside_the_new(site: Site, page, screenshots):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    sign_in(page, owner.email)
    page.goto("/account")
    page.get_by_label("Current password").fill("not the one")
    page.get_by_label("New password").fill("short")
    page.get_by_label("The same again").fill("shorter")
    page.get_by_role("button", name="Save password").click()
    for message in (
        "That is not your current password.",
        "At least 12 characters.",
        "The two passwords differ.",
    ):
        expect(page.get_by_text(message)).to_be_visible()
    page.screenshot(path=str(screenshots / "account-password-errors.png"), full_page=True)
    page.get_by_label("Current password").fill(PASSWORD)
    page.get_by_label("New password").fill("twelve chars and then some")
    page.get_by_label("The same again").fill("twelve chars and then some")
    page.get_by_role("button", name="Save password").click()
    expect(page.get_by_role("status")).to_contain_text("Password saved", use_inner_text=True)


def test_each_role_reaches_only_its_own_pages(site: Site, context):
    job = site.crew_job()
    crew = site.user(job.company, Role.CREW, crew_member_id=job.member_id)
    page = context.new_page()
    sign_in(page, crew.email)
    expect(page).to_have_url(re.compile(r"/crew$"))
    answer = page.goto("/admin")
    assert answer is not None
    assert answer.status == 403
    expect(page.get_by_role("heading", name="Not for your role")).to_be_visible()
    missing = page.goto("/admin/no-such-page")
    assert missing is not None
    assert missing.status == 404
    assert "text/html" in missing.headers["content-type"]
