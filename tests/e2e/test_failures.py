"""Genuine faults: ``500 internal_error`` with a generic message, and never a word of SQL,
ORM, file path or stack in the reply. Forced two ways: a database whose tables were
dropped under the running server, and a unit of work that raises the driver's error."""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from typing import Any

import attrs
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from adapters.http.app import create_app
from adapters.http.errors import INTERNAL_MESSAGE
from adapters.http.ratelimit import RateLimiter
from adapters.http.routes import all_endpoints
from entrypoints.bootstrap import bootstrap
from entrypoints.demo_data import load_demo
from entrypoints.web import http_deps
from tests.e2e.support import API, LiveServer, Stack, add_booking, error_of, free_socket, idem

LEAKS = (
    "select",
    "insert",
    "from ",
    "sql",
    "psycopg",
    "postgres",
    "relation",
    "no such table",
    "operationalerror",
    "traceback",
    'file "',
    ".py",
    "/var/",
    "/tmp/",
    "payments",
    "api_keys",
    "10.0.0.5",
)

SECRET_SQL = (
    "SELECT secret_hash FROM api_keys WHERE lookup_prefix = %(prefix)s AND company_id = 'cmp_leak'"
)


def assert_generic_500(response: httpx.Response) -> None:
    error = error_of(response, 500, "internal_error")
    assert error["message"] == INTERNAL_MESSAGE
    assert set(error) == {"code", "message", "requestId"}
    body = response.text.lower()
    leaked = [word for word in LEAKS if word in body]
    assert not leaked, f"the reply leaks {leaked}: {response.text}"


def driver_error() -> OperationalError:
    """What SQLAlchemy raises when the server is gone, with SQL and a path inside."""
    return OperationalError(
        SECRET_SQL,
        {"prefix": "bsk_leak"},
        Exception(
            'connection to server at "10.0.0.5", port 5432 failed: '
            "/var/run/postgresql/.s.PGSQL.5432"
        ),
    )


@pytest.fixture(scope="module")
def dropped(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str, str]]:
    """A server over a throwaway database of the same backend whose ``payments`` table was
    dropped after start-up; yields its address, a demo key and a booking of that company."""
    settings = stack.container.settings
    if stack.backend == "sqlite":
        path = tmp_path_factory.mktemp("broken") / "broken.sqlite3"
        settings = attrs.evolve(settings, database_url=f"sqlite:///{path}")
    else:
        schema = f"e2e_broken_{secrets.token_hex(4)}"
        settings = attrs.evolve(settings, database_schema=schema)
    container = bootstrap(settings)
    container.database.migrate()
    demo = load_demo(container)[0]
    booking_id = add_booking(container, demo.company.id)
    with container.database.engine.begin() as connection:
        connection.execute(text("DROP TABLE payments"))
    server = LiveServer(free_socket())
    server.start(create_app(http_deps(container, RateLimiter()), all_endpoints()))
    try:
        yield server.base_url, demo.api_key, booking_id
    finally:
        server.stop()
        if stack.backend == "postgres":
            container.database.drop_schema()
        container.close()


def test_a_missing_table_is_a_generic_500(dropped: tuple[str, str, str]):
    base_url, key, _ = dropped
    with httpx.Client(base_url=base_url, trust_env=False, timeout=30) as c:
        response = c.get(f"{API}/payments", headers={"Authorization": f"Bearer {key}"})
        assert_generic_500(response)
        assert "x-ratelimit-limit" in response.headers  # a known key is still counted
        # Everything else keeps working.
        ok = c.get(f"{API}/services", headers={"Authorization": f"Bearer {key}"})
        assert ok.status_code == 200


def test_a_5xx_answer_is_not_stored_for_idempotent_replay(dropped: tuple[str, str, str]):
    base_url, key, booking_id = dropped
    body = {"bookingId": booking_id, "kind": "PAYMENT", "amountCents": 500, "method": "CASH"}
    headers = {"Authorization": f"Bearer {key}", **idem()}
    with httpx.Client(base_url=base_url, trust_env=False, timeout=30) as c:
        first = c.post(f"{API}/payments", json=body, headers=headers)
        second = c.post(f"{API}/payments", json=body, headers=headers)
    assert_generic_500(first)
    assert_generic_500(second)
    assert "idempotent-replayed" not in second.headers


class RaisingUnitOfWork:
    """A unit of work whose database went away: every use raises the driver's error."""

    def __enter__(self) -> Any:
        raise driver_error()

    def __exit__(self, *exc: object) -> None:
        return None


@pytest.fixture(scope="module")
def unreachable(stack: Stack) -> Iterator[str]:
    """A server whose handlers' units of work raise ``OperationalError`` (authentication
    still works); yields its address."""
    server = LiveServer(free_socket())
    deps = attrs.evolve(
        http_deps(stack.container, RateLimiter()),
        uow=RaisingUnitOfWork,
        reader=RaisingUnitOfWork,
        base_url=server.base_url,
    )
    server.start(create_app(deps, all_endpoints()))
    yield server.base_url
    server.stop()


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("GET", "/services", None),
        ("GET", "/customers", None),
        ("POST", "/customers", {"name": "Ada", "email": "ada@example.com"}),
        ("POST", "/quotes", {"customerId": "cus_x", "manualLines": []}),
        ("PATCH", "/payments", {"id": "pay_x", "note": "oops"}),
    ],
)
def test_a_database_error_with_sql_inside_is_a_generic_500(
    unreachable: str, stack: Stack, method: str, path: str, body: Any
):
    with stack.client(stack.key) as c:
        response = c.request(method, unreachable + API + path, json=body, headers=idem())
    assert_generic_500(response)


@pytest.mark.parametrize("slug", ["sparkle-cleaning", "no-such-company"])
def test_a_database_error_on_a_public_route_is_a_500_in_the_public_shape(
    unreachable: str, stack: Stack, slug: str
):
    # The company is looked up by its slug first; that lookup failing is a fault too.
    response = httpx.get(f"{unreachable}/api/public/{slug}/catalog")
    assert response.status_code == 500
    assert response.json() == {"error": INTERNAL_MESSAGE}
    assert response.headers["access-control-allow-origin"] == "*"
    assert "x-ratelimit-limit" in response.headers
    leaked = [word for word in LEAKS if word in response.text.lower()]
    assert not leaked, response.text


def test_a_failing_key_lookup_is_a_generic_500_without_rate_headers(stack: Stack):
    def authenticate(secret: str) -> Any:
        raise driver_error()

    server = LiveServer(free_socket())
    deps = attrs.evolve(http_deps(stack.container, RateLimiter()), authenticate=authenticate)
    server.start(create_app(deps, all_endpoints()))
    try:
        with stack.client(stack.key) as c:
            for path in ("/services", "/no-such-route"):
                response = c.get(server.base_url + API + path)
                assert_generic_500(response)
                assert "x-ratelimit-limit" not in response.headers
    finally:
        server.stop()
