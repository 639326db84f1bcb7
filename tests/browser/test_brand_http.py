"""A company's brand colour over HTTP (no browser): set on ``/admin/settings`` (a colour
too light for white text is refused beside the field, nothing saved), served as
``/{slug}/brand.css`` and linked by customer pages; set with ``booking company settings
--brand-color``."""

from __future__ import annotations

import re
from collections.abc import Iterator

import httpx
import pytest

from booking_core.companies import Company
from booking_core.users import Role
from tests.browser.support import PASSWORD, Site

CSRF = re.compile(r'name="csrf_token" value="([^"]+)"')


def csrf(page: httpx.Response) -> str:
    found = CSRF.search(page.text)
    assert found is not None, page.text
    return found.group(1)


@pytest.fixture
def owner(site: Site, shop: Company) -> Iterator[httpx.Client]:
    """A browser-like client signed in as an owner of ``shop``."""
    user = site.user(shop, Role.OWNER)
    with httpx.Client(base_url=site.base_url, trust_env=False, timeout=30) as browser:
        form = browser.get("/sign-in")
        signed_in = browser.post(
            "/sign-in",
            data={"csrf_token": csrf(form), "email": user.email, "password": PASSWORD},
        )
        assert signed_in.status_code in (302, 303), signed_in.text
        yield browser


def save_settings(browser: httpx.Client, company: Company, **fields: str) -> httpx.Response:
    """Post the settings form as the page shows it, with ``fields`` changed."""
    page = browser.get("/admin/settings")
    assert page.status_code == 200, page.text
    shown = re.search(r'name="brand_color_pick_shown" value="([^"]*)"', page.text)
    assert shown is not None
    form = {
        "csrf_token": csrf(page),
        "name": company.name,
        "timezone": company.timezone,
        "cutoff_hours": str(company.self_service_cutoff_hours),
        "min_notice_minutes": str(company.min_notice_minutes),
        "code_prefix": company.code_prefix,
        "tax_rate": "8.87",
        "brand_color": company.brand_color or "",
        "brand_color_shown": company.brand_color or "",
        "brand_color_pick": shown.group(1),
        "brand_color_pick_shown": shown.group(1),
        **fields,
    }
    return browser.post("/admin/settings", data=form)


def stored(site: Site, company: Company) -> str | None:
    with site.container.uow() as uow:
        return uow.companies.get(company.id).brand_color


def brand_css(site: Site, slug: str) -> httpx.Response:
    return httpx.get(f"{site.base_url}/{slug}/brand.css", trust_env=False)


def test_a_company_without_a_colour_gets_an_empty_stylesheet(site: Site, shop: Company):
    served = brand_css(site, shop.slug)
    assert served.status_code == 200
    assert served.text == ""
    assert served.headers["content-type"].startswith("text/css")
    for slug in ("no-such-company", "Bad_Slug"):
        missing = brand_css(site, slug)
        assert missing.status_code == 404
        assert missing.headers["content-type"].startswith("text/plain")


def test_the_settings_page_saves_the_colour_and_brand_css_serves_it(
    site: Site, shop: Company, owner: httpx.Client
):
    plain = httpx.get(f"{site.base_url}/{shop.slug}/book", trust_env=False)
    assert "brand.css" not in plain.text  # no colour, nothing to fetch
    saved = save_settings(owner, shop, brand_color=" #1D4ED8 ")
    assert saved.status_code in (302, 303), saved.text
    assert stored(site, shop) == "#1d4ed8"
    served = brand_css(site, shop.slug)
    assert served.status_code == 200
    assert served.headers["content-type"].startswith("text/css")
    assert served.headers["cache-control"] == "public, max-age=300"
    assert served.headers["x-content-type-options"] == "nosniff"
    assert "--primary:#1d4ed8;" in served.text
    assert re.search(r"--primary-hover:#[0-9a-f]{6};", served.text)
    assert "--on-primary:#fff" in served.text
    # A chosen card's fill and the quote's "Open" badge follow the colour too (they kept
    # the default lavender under a brand-coloured border): 10% of it over white.
    assert "--primary-soft:#e8edfb" in served.text
    assert ".quote-state-sent{color:var(--primary-hover);background:var(--primary-soft)}" in (
        served.text
    )
    page = owner.get("/admin/settings")
    assert 'value="#1d4ed8"' in page.text
    # Customer pages link it, after app.css, with the colour in the address.
    booking_page = httpx.get(f"{site.base_url}/{shop.slug}/book", trust_env=False)
    assert booking_page.status_code == 200, booking_page.text
    link = f'href="/{shop.slug}/brand.css?v=1d4ed8"'
    assert link in booking_page.text
    assert booking_page.text.index("/assets/app.css") < booking_page.text.index(link)


def test_the_picker_counts_when_the_text_is_left_as_shown(
    site: Site, shop: Company, owner: httpx.Client
):
    saved = save_settings(owner, shop, brand_color_pick="#7c2d12")
    assert saved.status_code in (302, 303), saved.text
    assert stored(site, shop) == "#7c2d12"
    cleared = save_settings(
        owner,
        shop,
        brand_color="",
        brand_color_shown="#7c2d12",
        brand_color_pick="#7c2d12",
        brand_color_pick_shown="#7c2d12",
    )
    assert cleared.status_code in (302, 303), cleared.text
    assert stored(site, shop) is None
    assert brand_css(site, shop.slug).text == ""


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("#ffd700", "Too light for white text"),
        ("#777777", "Too light for white text"),  # 4.48:1, just under 4.5
        ("blue", "#rrggbb"),
    ],
)
def test_a_colour_too_light_or_not_hex_is_refused_beside_the_field(
    site: Site, shop: Company, owner: httpx.Client, typed: str, message: str
):
    refused = save_settings(owner, shop, brand_color=typed)
    assert refused.status_code == 422
    error = re.search(r'<p class="field-error" id="brand_color-error">([^<]+)</p>', refused.text)
    assert error is not None, refused.text
    assert message in error.group(1)
    assert "Nothing was saved" in refused.text
    assert stored(site, shop) is None


def test_the_cli_sets_and_clears_the_colour(site: Site, shop: Company):
    status, out, err = site.cli(
        "company", "settings", "--company", shop.slug, "--brand-color", "#0F766E"
    )
    assert status == 0, err
    assert "brand colour: #0f766e" in out
    assert "--primary:#0f766e;" in brand_css(site, shop.slug).text
    status, _, err = site.cli(
        "company", "settings", "--company", shop.slug, "--brand-color", "#eeeeee"
    )
    assert status == 2
    assert "--brand-color" in err
    assert "Too light for white text" in err
    assert stored(site, shop) == "#0f766e"
    status, out, err = site.cli("company", "settings", "--company", shop.slug, "--brand-color", "")
    assert status == 0, err
    assert stored(site, shop) is None


def test_every_problem_of_the_settings_form_shows_at_once(
    site: Site, shop: Company, owner: httpx.Client
):
    # A tax rate the form cannot read and a colour and prefix the company cannot take:
    # one save names all three, and nothing is stored.
    refused = save_settings(owner, shop, tax_rate="8.255", brand_color="#ffff00", code_prefix="a1")
    assert refused.status_code == 422
    assert re.search(r'id="tax_rate-error"', refused.text), refused.text
    assert "Too light for white text" in refused.text
    assert re.search(r'id="code_prefix-error"', refused.text)
    assert stored(site, shop) is None


def test_pages_link_a_tab_icon_and_favicon_ico_serves_it(site: Site, shop: Company):
    """Browsers ask for /favicon.ico whatever a page links: it was a 404 on every page."""
    page = httpx.get(f"{site.base_url}/{shop.slug}/book", trust_env=False)
    assert '<link rel="icon" href="/assets/icon.svg"' in page.text
    for path in ("/favicon.ico", "/assets/icon.svg"):
        icon = httpx.get(f"{site.base_url}{path}", trust_env=False)
        assert icon.status_code == 200, path
        assert icon.headers["content-type"] == "image/svg+xml"
        assert icon.text.startswith("<svg")
