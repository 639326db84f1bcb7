"""The API reference (``/docs``) in a browser, under its own content security policy:
Swagger UI starts from its own file and lists the operations; nothing is refused."""

from __future__ import annotations

from playwright.sync_api import BrowserContext, expect

from tests.browser.support import Site


def test_the_reference_draws_every_section_under_its_policy(site: Site, context: BrowserContext):
    page = context.new_page()
    refused: list[str] = []
    page.on(
        "console",
        lambda message: refused.append(message.text) if message.type == "error" else None,
    )
    page.goto(f"{site.base_url}/docs")
    expect(page.get_by_role("heading", name="Booking").first).to_be_visible()
    expect(page.locator(".opblock-summary-path", has_text="/api/v1/bookings").first).to_be_visible()
    assert not [text for text in refused if "Content Security Policy" in text], refused
    page.close()
