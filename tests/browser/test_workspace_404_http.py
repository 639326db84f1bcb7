"""An unknown address of the workspace (``/admin/...``, ``/crew/...``) is the 404 page;
signed in, it keeps the top bar and offers the way home, not sign-in."""

from __future__ import annotations

import httpx

from booking_core.users import Role
from tests.browser.support import Site
from tests.browser.test_admin_people_http import browser, signed_in


def test_a_signed_in_owner_gets_a_404_with_the_top_bar_and_the_way_home(site: Site) -> None:
    company, _ = site.new_company()
    with signed_in(site, site.user(company, Role.OWNER).email) as owner:
        page = owner.get("/admin/no-such-page")
    assert page.status_code == 404
    assert 'href="/admin/calendar"' in page.text  # the top bar
    assert "Back to home" in page.text
    assert "Go to sign-in" not in page.text


def test_signed_out_the_404_offers_sign_in(site: Site) -> None:
    with browser(site) as anonymous:
        page: httpx.Response = anonymous.get("/admin/no-such-page")
    assert page.status_code == 404
    assert "Go to sign-in" in page.text
    assert 'href="/admin/calendar"' not in page.text
