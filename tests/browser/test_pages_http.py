"""The pages over HTTP without a browser: sign-in throttling (in memory and on Redis),
cookie flags, security headers, the stylesheet, and what the logs say of a link."""

from __future__ import annotations

import asyncio
import re
import secrets
from collections.abc import Callable, Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import attrs
import httpx
import pytest
import structlog

from adapters.web import SignInThrottle
from booking_core.services import users as user_cases
from booking_core.users import Role
from entrypoints.web import web_app, web_deps
from tests.browser.support import PASSWORD, Site
from tests.services import required_service

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')
T = TypeVar("T")


def run_async(scenario: Callable[[], Coroutine[Any, Any, T]]) -> T:
    """``asyncio.run(scenario())`` on a thread of its own: Playwright's sync API keeps an
    event loop running on the test thread while the browser is open."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(scenario())).result()


def app_with(site: Site, **changes: object):
    return web_app(site.container, pages=attrs.evolve(web_deps(site.container), **changes))


def client(app, address: str = "198.51.100.7", base: str = "http://testserver"):
    transport = httpx.ASGITransport(app=app, client=(address, 40000))
    return httpx.AsyncClient(transport=transport, base_url=base)


async def attempt(browser: httpx.AsyncClient, email: str, password: str) -> httpx.Response:
    form = await browser.get("/sign-in")
    token = CSRF.search(form.text)
    assert token is not None, form.text
    return await browser.post(
        "/sign-in", data={"csrf_token": token.group(1), "email": email, "password": password}
    )


def test_refused_sign_ins_are_throttled_per_email_with_a_clear_message(site: Site):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    app = app_with(site, throttle=SignInThrottle(per_email=3, per_address=100))

    async def scenario() -> None:
        async with client(app) as browser:
            for _ in range(3):
                assert (await attempt(browser, owner.email, "wrong password!")).status_code == 401
            held = await attempt(browser, owner.email.upper(), PASSWORD)  # right, but held
            assert held.status_code == 429
            assert "Too many refused passwords" in held.text
            assert 0 < int(held.headers["retry-after"]) <= 15 * 60
            other = await attempt(browser, "someone-else@example.com", "wrong password!")
            assert other.status_code == 401  # another email from the same address still may
        async with client(app, address="203.0.113.50") as elsewhere:
            assert (await attempt(elsewhere, owner.email, PASSWORD)).status_code == 429

    run_async(scenario)


def test_refused_sign_ins_are_throttled_per_client_address(site: Site):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    app = app_with(site, throttle=SignInThrottle(per_email=100, per_address=4))

    async def scenario() -> None:
        async with client(app, address="192.0.2.44") as browser:
            for n in range(4):
                refused = await attempt(browser, f"guess{n}@example.com", "wrong password!")
                assert refused.status_code == 401
            assert (await attempt(browser, owner.email, PASSWORD)).status_code == 429
        async with client(app, address="192.0.2.45") as neighbour:
            signed_in = await attempt(neighbour, owner.email, PASSWORD)
            assert signed_in.status_code == 303
            assert signed_in.headers["location"] == "/admin"

    run_async(scenario)


def test_throttle_counts_are_shared_through_redis():
    url = required_service("BOOKING_TEST_REDIS_URL", "Redis")
    email = f"shared-{secrets.token_hex(4)}@example.com"
    one, two = SignInThrottle(url, per_email=2), SignInThrottle(url, per_email=2)
    one.refused(email, "192.0.2.1")
    assert two.wait_seconds(email, "192.0.2.2") == 0
    two.refused(email, "192.0.2.2")
    assert 0 < one.wait_seconds(email, "192.0.2.3") <= 15 * 60


def test_throttle_counts_in_memory_while_redis_is_unreachable():
    throttle = SignInThrottle("redis://127.0.0.1:1/0", per_email=1)
    throttle.refused("down@example.com", "192.0.2.1")
    assert throttle.wait_seconds("down@example.com", "192.0.2.9") > 0
    assert throttle.wait_seconds("up@example.com", "192.0.2.9") == 0


@pytest.mark.parametrize(
    ("base", "secure"), [("https://book.example.com", True), ("http://x", False)]
)
def test_the_session_cookie_is_signed_httponly_lax_and_secure_over_https(
    site: Site, base: str, secure: bool
):
    app = app_with(site, base_url=base)

    async def scenario() -> httpx.Response:
        async with client(app) as browser:
            return await browser.get("/sign-in")

    answer = run_async(scenario)
    cookie = answer.headers["set-cookie"]
    assert cookie.startswith("booking_session=")
    flags = [part.strip().lower() for part in cookie.split(";")[1:]]
    assert "httponly" in flags
    assert "samesite=lax" in flags
    assert "path=/" in flags
    assert ("secure" in flags) is secure
    assert "max-age=43200" in flags


def test_pages_are_never_cached_framed_or_scripted_and_the_stylesheet_is_served(site: Site):
    with httpx.Client(base_url=site.base_url, trust_env=False) as browser:
        page = browser.get("/sign-in")
        assert page.headers["cache-control"] == "no-store"
        assert page.headers["x-frame-options"] == "DENY"
        assert "frame-ancestors 'none'" in page.headers["content-security-policy"]
        assert "script-src" not in page.headers["content-security-policy"]  # default 'none'
        stylesheet = re.search(r'href="(/assets/app\.css\?v=\w+)"', page.text)
        assert stylesheet is not None
        css = browser.get(stylesheet.group(1))
        assert css.status_code == 200
        assert css.headers["content-type"].startswith("text/css")
        assert "immutable" in css.headers["cache-control"]
        assert browser.put("/sign-in").status_code == 405
        huge = browser.post("/sign-in", data={"email": "x" * 70_000, "password": "y"})
        assert huge.status_code == 413
        assert "larger than 64 KB" in huge.text
        many = browser.post(
            "/sign-in",
            content="&".join(f"f{n}=1" for n in range(300)),
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert many.status_code == 400
        assert "text/html" in browser.delete("/crew").headers["content-type"]


def test_a_redeemed_link_redirects_and_the_log_names_the_route_not_the_token(site: Site):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER, password=None)
    _, issued = user_cases.issue_sign_in_link(
        owner.email, uow=site.container.uow(), clock=site.container.clock
    )
    app = app_with(site)

    async def scenario() -> httpx.Response:
        async with client(app) as browser:
            return await browser.get(f"/sign-in/link/{issued.token}")

    with structlog.testing.capture_logs() as lines:
        answer = run_async(scenario)
    assert answer.status_code == 303
    assert answer.headers["location"] == "/admin"
    assert answer.headers["referrer-policy"] == "no-referrer"
    assert issued.token not in repr(lines)
    assert any(line.get("route") == "/sign-in/link/***" for line in lines)


def test_signing_in_from_a_deep_link_comes_back_to_that_page(site: Site):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    app = app_with(site)

    async def sign_in_from(browser: httpx.AsyncClient, wanted: str) -> httpx.Response:
        sent = await browser.get(wanted)
        assert sent.status_code == 303
        form = await browser.get(sent.headers["location"])
        token = CSRF.search(form.text)
        assert token is not None
        field = re.search(r'name="next" value="([^"]*)"', form.text)
        data = {"csrf_token": token.group(1), "email": owner.email, "password": PASSWORD}
        if field is not None:
            data["next"] = field.group(1).replace("&amp;", "&")
        return await browser.post("/sign-in", data=data)

    async def scenario() -> None:
        wanted = "/admin/calendar?view=week&date=2026-11-24"
        async with client(app) as browser:
            back = await sign_in_from(browser, wanted)
            assert back.headers["location"] == wanted
        async with client(app) as browser:  # the home itself needs no way back
            assert (await browser.get("/admin")).headers["location"] == "/sign-in"
        # Only a page of the service comes back: never another site, nor the crew's side
        # for an owner, nor a way out of /admin that a browser reads in a percent-encoded
        # dot segment (%2e%2e is "..": it led to any page, another account's sign-in link
        # among them).
        forgeries = (
            "//elsewhere.example/admin",
            "https://elsewhere.example",
            "/crew/x",
            "/admin/%2e%2e/sign-in/link/token",
            "/admin/%2E./x",
            "/admin/%2fx",
        )
        for forged in forgeries:
            async with client(app) as browser:
                form = await browser.get("/sign-in", params={"next": forged})
                assert 'name="next"' not in form.text or forged == "/crew/x"
                token = CSRF.search(form.text)
                assert token is not None
                answer = await browser.post(
                    "/sign-in",
                    data={"csrf_token": token.group(1), "email": owner.email,
                          "password": PASSWORD, "next": forged},
                )  # fmt: skip
                assert answer.headers["location"] == "/admin", forged

    run_async(scenario)


async def change_password(
    browser: httpx.AsyncClient, new: str, current: str | None = None
) -> httpx.Response:
    form = await browser.get("/account")
    token = CSRF.search(form.text)
    assert token is not None, form.text
    fields = {"csrf_token": token.group(1), "password": new, "confirm": new}
    return await browser.post(
        "/account", data={**fields, **({"current": current} if current is not None else {})}
    )


def test_a_password_is_changed_only_by_whoever_types_the_current_one(site: Site):
    """A session left open is not enough to change the password (and lock its owner out):
    the page asks for the current one, and wrong guesses count against the sign-in
    throttle."""
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)
    app = app_with(site, throttle=SignInThrottle(per_email=3, per_address=100))
    new = "an even longer passphrase"

    async def scenario() -> None:
        async with client(app) as browser:
            assert (await attempt(browser, owner.email, PASSWORD)).status_code == 303
            assert 'autocomplete="current-password"' in (await browser.get("/account")).text
            missing = await change_password(browser, new)
            assert missing.status_code == 422
            assert "Type your current password" in missing.text
            for _ in range(2):
                wrong = await change_password(browser, new, "not my password!")
                assert wrong.status_code == 422
                assert "That is not your current password." in wrong.text
            assert (await change_password(browser, new, PASSWORD)).status_code == 303
            async with client(app) as another:  # the old one no longer signs in
                assert (await attempt(another, owner.email, PASSWORD)).status_code == 401
            # Two wrong guesses and one refused sign-in used up the three: held, even
            # with the right password.
            held = await change_password(browser, "yet another passphrase", new)
            assert held.status_code == 429
            assert "Too many refused passwords" in held.text
        async with client(app, address="203.0.113.9") as elsewhere:
            assert (await attempt(elsewhere, owner.email, new)).status_code == 429

    run_async(scenario)


def test_a_sign_in_link_lets_a_forgotten_password_be_replaced_without_it(site: Site):
    company, _ = site.new_company()
    owner = site.user(company, Role.OWNER)  # has a password, forgotten
    _, issued = user_cases.issue_sign_in_link(
        owner.email, uow=site.container.uow(), clock=site.container.clock
    )
    app = app_with(site)
    new = "remembered this time, surely"

    async def scenario() -> None:
        async with client(app) as browser:
            assert (await browser.get(f"/sign-in/link/{issued.token}")).status_code == 303
            page = await browser.get("/account")
            assert 'name="current"' not in page.text
            assert "signed in with a sign-in link a moment ago" in page.text
            assert (await change_password(browser, new)).status_code == 303
            # The new session is a password-holder's like any other: the next change asks.
            assert 'name="current"' in (await browser.get("/account")).text
            assert (await change_password(browser, "and yet another one")).status_code == 422
        async with client(app) as another:
            assert (await attempt(another, owner.email, new)).status_code == 303

    run_async(scenario)
