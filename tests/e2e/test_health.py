"""The probes: ``/healthz`` answers while the process is up; ``/readyz`` answers 200 only
when the database (and Redis, when configured) can serve, and 503 naming what cannot,
without a word of why. Neither needs a key, and neither is rate limited."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx
import pytest
from starlette.applications import Starlette

from adapters.http.ratelimit import RateLimiter
from entrypoints.bootstrap import bootstrap
from entrypoints.settings import Settings
from entrypoints.web import http_deps, web_app
from tests.e2e.support import API, LiveServer, Stack, client, free_socket
from tests.services import free_port

RATE_HEADERS = ("x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset")


@contextmanager
def serving(app: Starlette) -> Iterator[httpx.Client]:
    """A client of ``app`` served on a port of its own."""
    server = LiveServer(free_socket()).start(app)
    try:
        with client(server.base_url) as c:
            yield c
    finally:
        server.stop()


def probe(c: httpx.Client, path: str) -> tuple[int, Any]:
    response = c.get(path)
    assert response.headers["content-type"].startswith("application/json")
    assert response.headers["cache-control"] == "no-store"
    assert not any(h in response.headers for h in RATE_HEADERS)
    return response.status_code, response.json()


def test_healthz_says_the_process_is_up(stack: Stack, anon: httpx.Client):
    assert probe(anon, "/healthz") == (200, {"status": "ok"})


def test_readyz_checks_the_database(stack: Stack, anon: httpx.Client):
    assert probe(anon, "/readyz") == (200, {"status": "ok", "checks": {"database": "ok"}})


def test_probes_need_no_key_and_ignore_one(stack: Stack):
    with stack.client("bsk_not_a_key") as c:
        assert probe(c, "/healthz")[0] == 200
        assert probe(c, "/readyz")[0] == 200


def test_probes_live_outside_the_api(stack: Stack, api: httpx.Client):
    assert api.get(f"{API}/healthz").status_code == 404


def test_readyz_checks_redis_too_when_it_is_configured(stack: Stack, redis_url: str):
    deps = http_deps(stack.container, RateLimiter(redis_url))
    with serving(web_app(stack.container, deps)) as c:
        status, body = probe(c, "/readyz")
    assert (status, body) == (200, {"status": "ok", "checks": {"database": "ok", "redis": "ok"}})


def test_with_redis_down_readyz_names_it_and_the_api_still_answers(stack: Stack):
    down = RateLimiter(f"redis://127.0.0.1:{free_port()}/0")
    app = web_app(stack.container, http_deps(stack.container, down))
    with serving(app) as c:
        status, body = probe(c, "/readyz")
        served = c.get(f"{API}/services", headers={"authorization": f"Bearer {stack.key}"})
        assert probe(c, "/healthz") == (200, {"status": "ok"})
    assert status == 503
    assert body == {"status": "unavailable", "checks": {"database": "ok", "redis": "unavailable"}}
    assert served.status_code == 200
    assert "x-ratelimit-remaining" in served.headers


@pytest.fixture
def unreachable_database() -> Iterator[Starlette]:
    """The application over a PostgreSQL URL whose port nobody listens on."""
    settings = Settings(
        database_url=f"postgresql://postgres@127.0.0.1:{free_port()}/booking",
        redis_url=None,
        base_url="http://127.0.0.1",
    )
    container = bootstrap(settings)
    try:
        yield web_app(container)
    finally:
        container.close()


def test_readyz_is_503_naming_the_database_when_it_cannot_be_reached(
    unreachable_database: Starlette,
):
    with serving(unreachable_database) as c:
        ready = c.get("/readyz")
        assert probe(c, "/healthz") == (200, {"status": "ok"})
    assert ready.status_code == 503
    # Exactly this: no driver text, host, port or SQL.
    assert ready.json() == {"status": "unavailable", "checks": {"database": "unavailable"}}
