"""The pages in a real browser: Debian's Chromium (``/usr/bin/chromium``, installed by
``make test``'s ``chromium`` step) driven by Playwright, against the real application
under uvicorn on a free loopback port, on SQLite with the demo loaded.

Without Chromium these tests are skipped, except under ``BOOKING_REQUIRE_SERVICES=1``
(CI), where they fail. One browser serves every test here; each test gets a fresh
browser context (no cookies), so tests never share a session.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

import attrs
import pytest
import structlog
from playwright.sync_api import expect

from booking_core.companies import Company
from entrypoints.bootstrap import bootstrap
from entrypoints.demo_data import load_demo
from entrypoints.settings import Settings
from entrypoints.web import web_app
from tests.browser.support import CHROMIUM, ShiftedClock, Site
from tests.e2e.support import LiveServer, free_socket

# Web-first assertions wait for the page: generously, since CI shares two cores.
expect.set_options(timeout=20_000)


@pytest.fixture(scope="session")
def server_log_file(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TextIO]:
    """The file the server's log lines go to, open for the session; structlog's
    configuration is put back when the session ends."""
    saved = structlog.get_config()
    path = tmp_path_factory.mktemp("browser-logs") / "server.log"
    with path.open("w", encoding="utf-8") as sink:
        yield sink
        structlog.configure(**saved)


@pytest.fixture(autouse=True)
def quiet_server_logs(server_log_file: TextIO) -> None:
    """The server's log lines go to a file, not the terminal: configured for every test,
    since under pytest-xdist ``tests/e2e`` may point structlog at its own file between
    two of these."""
    structlog.configure(
        processors=[structlog.processors.JSONRenderer()],
        logger_factory=structlog.PrintLoggerFactory(server_log_file),
        cache_logger_on_first_use=False,
    )


@pytest.fixture(scope="session")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    """The application on SQLite with the demo companies, served for the session."""
    folder = tmp_path_factory.mktemp("browser")
    sock = free_socket()
    host, port = sock.getsockname()[:2]
    settings = Settings(
        database_url=f"sqlite:///{folder / 'browser.sqlite3'}",
        redis_url=None,
        base_url=f"http://{host}:{port}",
        session_secret=secrets.token_hex(32),
    )
    container = bootstrap(settings)
    # Cheap hashes: the argon2id parameters are the adapter's own test; here, speed.
    from adapters.passwords import Argon2Hasher

    container = attrs.evolve(
        container,
        hasher=Argon2Hasher(time_cost=1, memory_cost=1024, parallelism=1),
        clock=ShiftedClock(),  # the system's time, which a test may move on a while
    )
    try:
        container.database.migrate()
        demo = load_demo(container)
        server = LiveServer(sock).start(web_app(container))
        try:
            yield Site(container, server, demo, settings)
        finally:
            server.stop()
    finally:
        container.close()


@pytest.fixture(scope="package")
def browser() -> Iterator[Any]:
    """One headless Chromium for the browser tests, closed after the last of them:
    Playwright's sync API keeps an event loop running on the test thread while open."""
    if not os.access(CHROMIUM, os.X_OK):
        message = f"{CHROMIUM} is missing: `make test` installs Debian's chromium"
        if os.environ.get("BOOKING_REQUIRE_SERVICES") == "1":
            pytest.fail(message)
        pytest.skip(message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=CHROMIUM, args=["--headless", "--no-sandbox", "--disable-gpu"]
        )
        try:
            yield launched
        finally:
            launched.close()


@pytest.fixture
def context(browser: Any, site: Site) -> Iterator[Any]:
    """A fresh browser context (its own cookies) on the site."""
    made = browser.new_context(base_url=site.base_url, viewport={"width": 1200, "height": 860})
    made.set_default_timeout(30_000)
    try:
        yield made
    finally:
        made.close()


@pytest.fixture
def page(context: Any) -> Any:
    """A tab of the fresh context."""
    return context.new_page()


@pytest.fixture(scope="session")
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where pages are photographed: ``docs/screenshots`` when ``BOOKING_SCREENSHOTS=1``
    (to refresh the pictures the docs show), else a temporary folder."""
    if os.environ.get("BOOKING_SCREENSHOTS") == "1":
        return DOCS_SCREENSHOTS
    return tmp_path_factory.mktemp("screenshots")


DOCS_SCREENSHOTS = Path(__file__).resolve().parents[2] / "docs" / "screenshots"


@pytest.fixture
def shop(site: Site) -> Company:
    """A company of its own (the demo catalog, no crew) for one test."""
    company, _ = site.new_company()
    return company
