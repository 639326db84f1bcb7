"""Helpers of the end-to-end suite: a live uvicorn server, clients, the stack."""

from __future__ import annotations

import os
import secrets
import socket
import threading
import time
from typing import Any

import attrs
import httpx
import pytest
import uvicorn
from starlette.applications import Starlette

from adapters.http.app import HttpDeps, create_app
from adapters.http.ratelimit import RateLimiter
from adapters.http.routes import all_endpoints
from booking_core import auth
from booking_core.catalog import Catalog
from booking_core.companies import Company
from booking_core.demo import demo_catalog
from booking_core.services import companies as company_cases
from entrypoints.bootstrap import Container
from entrypoints.demo_data import DemoCompany
from entrypoints.web import http_deps

API = "/api/v1"
FULL_SCOPES = frozenset(auth.SCOPES)


def required_service(variable: str, what: str) -> str:
    """The URL in ``variable``, or skip (fail under ``BOOKING_REQUIRE_SERVICES=1``)."""
    url = os.environ.get(variable)
    if not url:
        if os.environ.get("BOOKING_REQUIRE_SERVICES") == "1":
            pytest.fail(f"{variable} is not set but services are required ({what})")
        pytest.skip(f"{variable} is not set ({what})")
    return url


def free_socket() -> socket.socket:
    """A listening-ready TCP socket bound to a free loopback port."""
    # IPPROTO_TCP said explicitly: asyncio sets TCP_NODELAY only on sockets whose proto is
    # TCP, and with proto 0 every reused connection waits ~40 ms on Nagle's algorithm.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class LiveServer:
    """An ASGI app under uvicorn in a background thread, on a socket bound beforehand."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        host, port = sock.getsockname()[:2]
        self.base_url = f"http://{host}:{port}"
        self.server: uvicorn.Server | None = None
        self.thread: threading.Thread | None = None

    def start(self, app: Starlette) -> LiveServer:
        """Serve ``app`` and return once uvicorn accepts connections."""
        config = uvicorn.Config(
            app,
            log_level="warning",
            access_log=False,
            lifespan="off",
            http="h11",
            ws="none",
            timeout_graceful_shutdown=5,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(
            target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True
        )
        self.thread.start()
        deadline = time.monotonic() + 15
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def stop(self) -> None:
        """Ask uvicorn to finish and wait for its thread."""
        if self.server is not None:
            self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout=15)
            assert not self.thread.is_alive(), "uvicorn did not stop"
        self.sock.close()


def client(base_url: str, key: str | None = None, **headers: str) -> httpx.Client:
    """An httpx client for ``base_url``, sending ``key`` as a Bearer token if given.

    ``trust_env=False``: a proxy configured in the environment must not see loopback calls.
    """
    if key is not None:
        headers.setdefault("authorization", f"Bearer {key}")
    return httpx.Client(base_url=base_url, headers=headers, timeout=30, trust_env=False)


@attrs.define
class Stack:
    """One backend's database, demo data and live server."""

    backend: str
    container: Container
    server: LiveServer
    demo: list[DemoCompany]
    deps: HttpDeps

    @property
    def base_url(self) -> str:
        """Where the server listens, e.g. ``http://127.0.0.1:54321``."""
        return self.server.base_url

    @property
    def key(self) -> str:
        """A full-access key of the first demo company (sparkle-cleaning)."""
        return self.demo[0].api_key

    @property
    def other_key(self) -> str:
        """A full-access key of the second demo company (handy-helpers)."""
        return self.demo[1].api_key

    @property
    def company(self) -> Company:
        """The first demo company."""
        return self.demo[0].company

    def client(self, key: str | None = None, **headers: str) -> httpx.Client:
        """A client of this server (anonymous unless ``key`` is given)."""
        return client(self.base_url, key, **headers)

    def issue_key(
        self,
        scopes: frozenset[str] | set[str] = FULL_SCOPES,
        rate_limit: int = auth.MAX_RATE_LIMIT,
        company_id: str | None = None,
    ) -> auth.IssuedKey:
        """A fresh key (its own rate-limit counter) of the first demo company by default."""
        return company_cases.create_key(
            company_cases.CreateKey(
                company_id=company_id or self.company.id,
                name=f"e2e {secrets.token_hex(3)}",
                scopes=frozenset(scopes),
                rate_limit=rate_limit,
            ),
            uow=self.container.uow(),
            clock=self.container.clock,
        )

    def new_key(self, *scopes: str, rate_limit: int = auth.MAX_RATE_LIMIT) -> str:
        """The secret of a fresh key with ``scopes`` (all when none are named)."""
        return self.issue_key(frozenset(scopes) or FULL_SCOPES, rate_limit).secret

    def new_company(self, catalog: Catalog | None = None) -> tuple[Company, str]:
        """A company of its own (demo catalog) and a full-access key: an empty slate."""
        slug = f"e2e-{secrets.token_hex(4)}"
        company = company_cases.create_company(
            company_cases.CreateCompany(
                slug=slug,
                name=f"E2E {slug}",
                timezone="America/New_York",
                tax_rate_bps=887,
                code_prefix="EE",
                catalog=catalog or demo_catalog(),
            ),
            uow=self.container.uow(),
            clock=self.container.clock,
        )
        return company, self.issue_key(company_id=company.id).secret

    def app(self, base_url: str, rate_limiter: RateLimiter | None = None) -> Starlette:
        """Another instance of the application over the same database."""
        return create_app(
            attrs.evolve(
                http_deps(self.container, rate_limiter or RateLimiter()), base_url=base_url
            ),
            all_endpoints(),
        )


def idem() -> dict[str, str]:
    """A fresh ``Idempotency-Key`` header."""
    return {"Idempotency-Key": f"e2e-{secrets.token_hex(8)}"}


def error_of(response: httpx.Response, status: int, code: str) -> dict[str, Any]:
    """The ``error`` object of a failure answer, after checking status, code and shape."""
    assert response.status_code == status, response.text
    assert response.headers["content-type"].startswith("application/json")
    error: dict[str, Any] = response.json()["error"]
    assert error["code"] == code, error
    assert isinstance(error["message"], str)
    assert error["message"]
    assert error["requestId"] == response.headers["x-request-id"]
    return error


def unique_email(name: str = "e2e") -> str:
    """An address no other test uses."""
    return f"{name}-{secrets.token_hex(5)}@example.com"
