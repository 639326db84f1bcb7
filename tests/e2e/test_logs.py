"""What the server logs, as rendered (JSON lines, tracebacks included, the way
``entrypoints/logs.py`` writes them): never a customer's details from a body, never a
value bound to SQL, never an exception's text, never the token of a tracking or quote
page; but enough to find a fault again (its class, SQLSTATE and place)."""

from __future__ import annotations

import json
import secrets
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from adapters.http.app import create_app
from adapters.http.ratelimit import RateLimiter
from adapters.http.redaction import masked_path
from adapters.http.routes import all_endpoints
from entrypoints.bootstrap import bootstrap
from entrypoints.demo_data import load_demo
from entrypoints.web import http_deps
from tests.e2e.support import API, LiveServer, Stack, free_socket, idem

EMAIL = "ada.confidential-7f3a@example.com"
NAME = "Ada Confidential"
PHONE = "+1 212 555 0147"
TOKEN = "trk_Zq8SECRETtoken9Xw"


def lines_since(log: Path, offset: int, requests: int) -> list[str]:
    """The rendered log lines written after byte ``offset``, once ``requests`` request
    lines are among them (the server writes a request's line after its answer is sent)."""
    deadline = time.monotonic() + 10
    while True:
        with log.open("rb") as sink:
            sink.seek(offset)
            lines = [line.decode() for line in sink if line.endswith(b"\n")]
        done = sum('"event":"request"' in line for line in lines) >= requests
        if done or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)


def customer_body() -> dict[str, Any]:
    return {"name": NAME, "email": EMAIL, "phone": PHONE}


def assert_nothing_private(lines: list[str]) -> None:
    text_of_log = "\n".join(lines)
    for secret in (EMAIL, "ada.confidential", NAME, PHONE, "555 0147", TOKEN):
        assert secret not in text_of_log, f"{secret!r} was logged:\n{text_of_log}"


@pytest.mark.parametrize(
    ("path", "logged"),
    [
        ("/sparkle-cleaning/track/trk_abc", "/sparkle-cleaning/track/***"),
        ("/sparkle-cleaning/q/quo_tok/accept", "/sparkle-cleaning/q/***/***"),
        ("/track/trk_abc/", "/track/***/"),
        ("/sign-in/link/Zt0kEn", "/sign-in/link/***"),
        ("/sparkle-cleaning/portal/link/Zt0kEn", "/sparkle-cleaning/portal/link/***"),
    ],
)
def test_tokens_after_track_q_or_a_sign_in_link_are_masked_in_logged_paths(path: str, logged: str):
    assert masked_path(path) == logged


def test_other_paths_are_logged_as_they_are():
    assert masked_path("/api/v1/quotes/quo_123") == "/api/v1/quotes/quo_123"
    assert masked_path("/sparkle/track") == "/sparkle/track"
    assert masked_path("/admin/link/abc") == "/admin/link/abc"
    assert masked_path("/sparkle/portal/details") == "/sparkle/portal/details"


@pytest.fixture(scope="module")
def customers_gone(
    stack: Stack, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[str, str]]:
    """A server over a throwaway database of the stack's backend whose ``customers`` table
    was dropped after start-up: every customer query fails with its SQL and values."""
    settings = stack.container.settings
    if stack.backend == "sqlite":
        path = tmp_path_factory.mktemp("no-customers") / "db.sqlite3"
        settings = attrs.evolve(settings, database_url=f"sqlite:///{path}")
    else:
        settings = attrs.evolve(settings, database_schema=f"e2e_logs_{secrets.token_hex(4)}")
    container = bootstrap(settings)
    container.database.migrate()
    demo = load_demo(container)[0]
    with container.database.engine.begin() as connection:
        connection.execute(text("DROP TABLE customers"))
    server = LiveServer(free_socket())
    server.start(create_app(http_deps(container, RateLimiter()), all_endpoints()))
    try:
        yield server.base_url, demo.api_key
    finally:
        server.stop()
        if stack.backend == "postgres":
            container.database.drop_schema()
        container.close()


def test_a_database_error_logs_its_class_and_place_but_no_customer_data_or_sql_values(
    customers_gone: tuple[str, str], server_logs: Path
):
    base_url, key = customers_gone
    offset = server_logs.stat().st_size
    headers = {"authorization": f"Bearer {key}", "x-request-id": "req-logs-db", **idem()}
    with httpx.Client(base_url=base_url, trust_env=False, timeout=30) as c:
        response = c.post(f"{API}/customers", json=customer_body(), headers=headers)
        lookup = c.get(f"{API}/customers", params={"search": EMAIL}, headers=headers)
    assert response.status_code == 500
    assert lookup.status_code == 500
    lines = lines_since(server_logs, offset, requests=2)
    assert_nothing_private(lines)
    assert "[SQL parameters hidden" not in "".join(lines)  # not even the statement's text
    faults = [json.loads(line) for line in lines if '"unexpected_error"' in line]
    assert len(faults) == 2, lines
    assert faults[0]["request_id"] == "req-logs-db"
    assert faults[0]["error_type"].startswith("sqlalchemy.exc.")
    assert any(frame.startswith("adapters/") for frame in faults[0]["stack"])
    assert "exception" not in faults[0]  # no rendered traceback, so no message in it


class LeakyUnitOfWork:
    """A unit of work whose driver refuses with the customer's details in its message
    and in the statement's parameters."""

    def __enter__(self) -> Any:
        raise IntegrityError(
            "INSERT INTO customers (email_key, name) VALUES (%(email_key)s, %(name)s)",
            {"email_key": EMAIL, "name": NAME},
            Exception(f"duplicate key: Key (email_key)=({EMAIL}) already exists. {NAME}"),
        )

    def __exit__(self, *exc: object) -> None:
        return None


def test_an_exception_quoting_customer_data_is_logged_without_its_text(
    stack: Stack, server_logs: Path
):
    server = LiveServer(free_socket())
    deps = attrs.evolve(
        http_deps(stack.container, RateLimiter()),
        uow=LeakyUnitOfWork,
        reader=LeakyUnitOfWork,
        base_url=server.base_url,
    )
    server.start(create_app(deps, all_endpoints()))
    offset = server_logs.stat().st_size
    try:
        with stack.client(stack.key) as c:
            response = c.post(
                server.base_url + f"{API}/customers", json=customer_body(), headers=idem()
            )
    finally:
        server.stop()
    assert response.status_code == 500
    lines = lines_since(server_logs, offset, requests=1)
    assert_nothing_private(lines)
    assert "email_key" not in "".join(lines)
    (fault,) = [json.loads(line) for line in lines if '"unexpected_error"' in line]
    assert fault["error_type"] == "sqlalchemy.exc.IntegrityError"


def test_tracking_and_quote_tokens_in_paths_are_logged_as_stars(stack: Stack, server_logs: Path):
    offset = server_logs.stat().st_size
    with stack.client() as c:
        for path in (f"/{stack.company.slug}/track/{TOKEN}", f"/{stack.company.slug}/q/{TOKEN}"):
            assert c.get(path).status_code == 404
    lines = lines_since(server_logs, offset, requests=2)
    assert_nothing_private(lines)
    routes = [json.loads(line)["route"] for line in lines if '"request"' in line]
    assert routes == ["/{slug}/track/***", "/{slug}/q/***"]  # the route, its token starred


def test_a_request_line_names_the_route_not_the_body_or_query(stack: Stack, server_logs: Path):
    offset = server_logs.stat().st_size
    with stack.client(stack.key) as c:
        c.get(f"{API}/customers", params={"search": EMAIL})
        c.post(f"{API}/customers", json={**customer_body(), "name": 5})  # 400
    lines = lines_since(server_logs, offset, requests=2)
    assert_nothing_private(lines)
    requests = [json.loads(line) for line in lines if '"request"' in line]
    assert [(r["method"], r["route"], r["status"]) for r in requests] == [
        ("GET", "/api/v1/customers", 200),
        ("POST", "/api/v1/customers", 400),
    ]


def _rows(stack: Stack, table: str) -> int:
    with stack.container.database.engine.connect() as connection:
        return int(connection.execute(text(f"SELECT count(*) FROM {table}")).scalar_one())


def _hang_up_mid_body(stack: Stack, request_id: str, path: str, *, chunked: bool) -> None:
    """Send the head of a POST and the start of its body, then go away without the rest."""
    url = httpx.URL(stack.base_url)
    length = "Transfer-Encoding: chunked" if chunked else "Content-Length: 100"
    start = b'{"serviceId":'
    with socket.create_connection((url.host, url.port), timeout=10) as sock:
        sock.sendall(
            f"POST {path} HTTP/1.1\r\nHost: {url.host}\r\nx-request-id: {request_id}\r\n"
            f"Authorization: Bearer {stack.key}\r\nContent-Type: application/json\r\n"
            f"{length}\r\n\r\n".encode()
            + (b"%x\r\n%s\r\n" % (len(start), start) if chunked else start)
        )
        time.sleep(0.3)


def test_a_client_gone_mid_body_is_logged_as_gone_not_as_a_fault(stack: Stack, server_logs: Path):
    """A hang-up while the body is read is the client's doing: an info line and status 499
    (nginx's "client closed request") in the request line, no error, no 500, no write."""
    before = _rows(stack, "bookings")
    offset = server_logs.stat().st_size
    run = secrets.token_hex(4)
    sent = {
        f"req-gone-{run}-public": f"/api/public/{stack.company.slug}/quote",
        f"req-gone-{run}-quote": f"{API}/quote",
        f"req-gone-{run}-booking": f"{API}/bookings",
    }
    for request_id, path in sent.items():
        _hang_up_mid_body(stack, request_id, path, chunked=request_id.endswith("booking"))
    deadline = time.monotonic() + 10
    while True:
        with server_logs.open("rb") as sink:
            sink.seek(offset)
            lines = [json.loads(line) for line in sink if line.endswith(b"\n")]
        ours = [line for line in lines if line.get("request_id") in sent]
        requests = {line["request_id"]: line for line in ours if line["event"] == "request"}
        if len(requests) == len(sent) or time.monotonic() > deadline:
            break
        time.sleep(0.02)
    assert {r: line["status"] for r, line in requests.items()} == dict.fromkeys(sent, 499), ours
    assert all(line["level"] == "info" for line in ours), ours
    gone = [line for line in ours if line["event"] == "client_disconnected"]
    assert {line["request_id"] for line in gone} == set(sent), ours
    assert _rows(stack, "bookings") == before


def test_a_public_request_line_names_its_company_and_whole_route(stack: Stack, server_logs: Path):
    """The slug settles the company: its line says which, and the route is the public
    API's (``/api/public/{slug}/catalog``), not to be mistaken for a page's."""
    offset = server_logs.stat().st_size
    with stack.client() as c:
        assert c.get(f"/api/public/{stack.company.slug}/catalog").status_code == 200
        assert c.get("/api/public/no-such-company-here/catalog").status_code == 404
        assert c.get("/api/public/nowhere").status_code == 404  # no route: the path
        assert c.get("/api/v1/nowhere").status_code in (401, 404)
    lines = lines_since(server_logs, offset, requests=4)
    requests = [json.loads(line) for line in lines if '"request"' in line]
    assert [(r["route"], r["company_id"], r["key_id"]) for r in requests] == [
        ("/api/public/{slug}/catalog", stack.company.id, None),
        ("/api/public/{slug}/catalog", None, None),
        ("/api/public/nowhere", None, None),
        ("/api/v1/nowhere", None, None),
    ]
