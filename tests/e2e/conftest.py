"""The real application over real HTTP: uvicorn on a free loopback port, in a thread.

One server per backend for the whole session (SQLite in a temporary file; PostgreSQL in a
schema of this run's own, dropped afterwards), with the demo loaded. PostgreSQL comes from
``BOOKING_TEST_POSTGRES_URL`` and Redis from ``BOOKING_TEST_REDIS_URL``; without them those
cases are skipped, except under ``BOOKING_REQUIRE_SERVICES=1`` (CI), where they fail.

Tests that need a clean slate (exact list contents, low rate limits, narrow scopes) make a
company or a key of their own through ``booking_core.services.companies``.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TextIO

import attrs
import httpx
import pytest
import structlog

from adapters.http.ratelimit import RateLimiter
from entrypoints.bootstrap import bootstrap
from entrypoints.demo_data import load_demo
from entrypoints.logs import json_processors
from entrypoints.settings import Settings
from entrypoints.web import http_deps, web_app
from tests.e2e.support import LiveServer, Stack, free_socket
from tests.polling import settle
from tests.services import required_service


@pytest.fixture(scope="session")
def server_log_sink(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, TextIO]]:
    """The file the servers' structlog lines go to (``server.log`` in pytest's temp dir),
    open for the session; structlog's configuration is put back when the session ends."""
    saved = structlog.get_config()
    path = tmp_path_factory.mktemp("e2e-logs") / "server.log"
    with path.open("w", encoding="utf-8") as sink:
        yield path, sink
        structlog.configure(**saved)


@pytest.fixture(autouse=True)
def server_logs(server_log_sink: tuple[Path, TextIO]) -> Path:
    """The servers' structlog lines go to the session's log file, not the terminal; tests
    that look at log lines read that file or capture them themselves.

    Configured afresh for every test, not once a session: under pytest-xdist one process
    may run another directory's tests (``tests/browser``, which sends them to a file of
    its own) between two of these, and a test reading this file must find its lines."""
    path, sink = server_log_sink
    # As entrypoints/logs.py renders them (JSON, plain tracebacks), minus its logger
    # cache, which would keep structlog.testing.capture_logs from seeing lines.
    structlog.configure(
        processors=json_processors(),
        logger_factory=structlog.PrintLoggerFactory(sink),
        cache_logger_on_first_use=False,
    )
    return path


def _database_settings(backend: str, tmp: Path) -> Settings:
    if backend == "sqlite":
        return Settings(
            database_url=f"sqlite:///{tmp / 'e2e.sqlite3'}", redis_url=None, base_url="http://x"
        )
    url = required_service("BOOKING_TEST_POSTGRES_URL", "PostgreSQL")
    schema = f"e2e_{os.getpid()}_{secrets.token_hex(3)}"
    return Settings(database_url=url, redis_url=None, base_url="http://x", database_schema=schema)


@pytest.fixture(scope="session", params=["sqlite", "postgres"])
def stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    """The application on one backend, served for the whole session."""
    backend = str(request.param)
    settings = _database_settings(backend, tmp_path_factory.mktemp(f"e2e-{backend}"))
    sock = free_socket()
    host, port = sock.getsockname()[:2]
    settings = attrs.evolve(settings, base_url=f"http://{host}:{port}")
    container = bootstrap(settings)
    try:
        container.database.migrate()
        demo = load_demo(container)
        deps = http_deps(container, RateLimiter())
        server = LiveServer(sock).start(web_app(container, deps))
        try:
            yield Stack(backend, container, server, demo, deps)
        finally:
            server.stop()
    finally:
        if backend == "postgres":
            container.database.drop_schema()
        container.close()


@pytest.fixture
def api(stack: Stack) -> Iterator[httpx.Client]:
    """A client holding the first demo company's full-access key."""
    with stack.client(stack.key) as c:
        yield c


@pytest.fixture
def anon(stack: Stack) -> Iterator[httpx.Client]:
    """A client that sends no key."""
    with stack.client() as c:
        yield c


@pytest.fixture
def settled(stack: Stack) -> Callable[[], None]:
    """Call before listing by change (``updatedSince``): on PostgreSQL, waits until every
    transaction that had begun writing has ended. A by-change list shows a row only then
    (docs/storage.md), and another test process on the same server may hold one open a
    moment; waiting first makes the test check order, not timing."""
    return lambda: settle(stack.container.database)


@pytest.fixture(scope="session")
def redis_url() -> str:
    """The Redis server the rate-limit sharing tests use."""
    return required_service("BOOKING_TEST_REDIS_URL", "Redis")
