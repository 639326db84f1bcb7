"""Races over real HTTP, on SQLite and PostgreSQL: many clients at the same moment for one
crew member's slot, or for one quote, make exactly one booking; every loser gets a clean
refusal (409 ``conflict``, or 422 for a quote already converted), never a 500.

Each client is a thread with its own connection and its own ``Idempotency-Key``; a
barrier releases them together. The outcome is read back through the API and, straight
from the stack's database, by an overlap self-join on ``booking_assignments``.

The slot race runs once more with every core kept busy by a spinning process, against the
live server and against ``booking serve --workers 2`` (PostgreSQL): slow, overlapping
transactions and two connection pools must still give one 201 and 49 409s, no 5xx.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest
from sqlalchemy import text

from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    idem,
    overlapping_assignments,
    unique_email,
    weekday_ahead,
)
from tests.e2e.support import client as open_client
from tests.services import free_port, stop_process, wait_for_port

BOOKERS = 50
CONVERTERS = 20
NYC = ("10001", "10003")
BIN = Path(sys.executable).parent


def together(
    stack: Stack, key: str, count: int, request: Any, base_url: str | None = None
) -> list[tuple[int, dict[str, Any]]]:
    """Run ``request(client, n)`` in ``count`` threads released at once; (status, body).

    The threads share one client (httpx pools a connection per request in flight, so each
    still has its own connection): making fifty clients would take longer than the race.
    ``base_url`` sends them to another server over the stack's database.
    """
    barrier = threading.Barrier(count)

    with open_client(base_url or stack.base_url, key) as shared:

        def one(n: int) -> tuple[int, dict[str, Any]]:
            barrier.wait(timeout=30)
            response: httpx.Response = request(shared, n)
            body: dict[str, Any] = response.json()
            return response.status_code, body

        with ThreadPoolExecutor(max_workers=count) as pool:
            return list(pool.map(one, range(count)))


def error_codes(outcomes: list[tuple[int, dict[str, Any]]]) -> Counter[tuple[int, str]]:
    failed = [(status, body) for status, body in outcomes if not 200 <= status < 400]
    return Counter((status, body["error"]["code"]) for status, body in failed)


def solo_shop(stack: Stack) -> Shop:
    return crewed_company(stack, (CrewSpec("Solo Sol", "10003", NYC),), code_prefix="RC")


def test_fifty_clients_racing_for_one_crew_members_slot_make_exactly_one_booking(stack: Stack):
    shop = solo_shop(stack)
    (sol,) = shop.crew_ids
    start = at_local(weekday_ahead(shop.zone, 9, weekday=3), "10:00", shop.zone)

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = booking_body(start, crewIds=[sol], notes=f"racer {n}")
        return client.post(f"{API}/bookings", json=body, headers=idem())

    outcomes = together(stack, shop.key, BOOKERS, attempt)

    statuses = Counter(status for status, _ in outcomes)
    assert statuses == {201: 1, 409: BOOKERS - 1}, error_codes(outcomes)
    assert error_codes(outcomes) == {(409, "conflict"): BOOKERS - 1}
    (winner,) = [body for status, body in outcomes if status == 201]
    assert (winner["startIso"], winner["crewIds"]) == (start, [sol])

    with stack.client(shop.key) as client:
        listed = client.get(f"{API}/bookings", params={"limit": "200"}).json()
        assert [b["id"] for b in listed["data"]] == [winner["id"]]
        assert listed["hasMore"] is False
        mine = client.get(f"{API}/bookings", params={"crewId": sol}).json()["data"]
        assert [b["id"] for b in mine] == [winner["id"]]
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_racers_naming_no_crew_each_get_the_next_free_member_until_none_is_left(stack: Stack):
    """A booking that names no crew takes the best-ranked free member, and one that lost
    that member to a racing request the next one free (the deterministic lost race is
    ``tests/integration/test_booking_races.py``). Three members, twelve racers for one
    start, over HTTP: three bookings, one per member, and nine clean 409s."""
    shop = crewed_company(
        stack,
        tuple(CrewSpec(name, "10003", NYC) for name in ("Ana Kim", "Ben Ode", "Cy Park")),
        code_prefix="RN",
    )
    start = at_local(weekday_ahead(shop.zone, 9, weekday=2), "10:00", shop.zone)

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = booking_body(start, notes=f"racer {n}")
        return client.post(f"{API}/bookings", json=body, headers=idem())

    outcomes = together(stack, shop.key, 12, attempt)

    statuses = Counter(status for status, _ in outcomes)
    assert statuses == {201: 3, 409: 9}, error_codes(outcomes)
    crews = sorted(body["crewIds"][0] for status, body in outcomes if status == 201)
    assert crews == sorted(shop.crew_ids)
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_fifty_clients_of_one_customer_racing_for_overlapping_starts_make_one_booking(
    stack: Stack,
):
    """The same customer (new to the company) from fifty tabs, at starts a quarter hour
    apart that all overlap: one booking, one customer record, the rest conflicts."""
    shop = solo_shop(stack)
    day = weekday_ahead(shop.zone, 10, weekday=4)
    starts = [at_local(day, f"{9 + q // 4:02d}:{q % 4 * 15:02d}", shop.zone) for q in range(5)]
    email = unique_email("racing-customer")

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = booking_body(starts[n % len(starts)])
        body["customer"]["email"] = email
        return client.post(f"{API}/bookings", json=body, headers=idem())

    outcomes = together(stack, shop.key, BOOKERS, attempt)

    assert Counter(status for status, _ in outcomes)[201] == 1, error_codes(outcomes)
    assert error_codes(outcomes) == {(409, "conflict"): BOOKERS - 1}
    with stack.client(shop.key) as client:
        assert len(client.get(f"{API}/bookings").json()["data"]) == 1
        found = client.get(f"{API}/customers", params={"search": email}).json()["data"]
        assert len(found) == 1
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_two_jobs_too_far_apart_to_drive_between_never_both_book_at_once(stack: Stack):
    """Neither job overlaps the other, so no constraint on job times can refuse one; only
    the drive between them (Brooklyn to the Upper West Side) does. Sent at the same
    moment, one books and the other is a 409 conflict, as when sent one after the other:
    the member's calendar is held while a booking reads it."""
    shop = crewed_company(
        stack, (CrewSpec("Far Farah", "10003", ("10003", "11215", "10025")),), code_prefix="FD"
    )
    (farah,) = shop.crew_ids
    for week in range(6):
        day = weekday_ahead(shop.zone, 9 + 7 * week, weekday=2)
        first = booking_body(at_local(day, "09:00", shop.zone), "11215", crewIds=[farah])
        second = booking_body(at_local(day, "11:30", shop.zone), "10025", crewIds=[farah])

        def attempt(client: httpx.Client, n: int, pair=(first, second)) -> httpx.Response:
            return client.post(f"{API}/bookings", json=pair[n], headers=idem())

        outcomes = together(stack, shop.key, 2, attempt)
        assert Counter(status for status, _ in outcomes) == {201: 1, 409: 1}, outcomes
        assert error_codes(outcomes) == {(409, "conflict"): 1}


FIRST_BOOKERS = 10


def test_first_bookings_of_one_new_email_at_different_free_slots_all_succeed_for_one_customer(
    stack: Stack,
):
    """Ten tabs of one new customer book ten different free slots (10:00 on ten weekdays)
    at the same moment: ten bookings, all naming the one customer the first created."""
    shop = solo_shop(stack)
    days = [
        weekday_ahead(shop.zone, 9 + 7 * (n // 5), weekday=1 + n % 5) for n in range(FIRST_BOOKERS)
    ]
    assert len(set(days)) == FIRST_BOOKERS
    email = unique_email("first-bookings")

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = booking_body(at_local(days[n], "10:00", shop.zone), notes=f"tab {n}")
        body["customer"]["email"] = email
        return client.post(f"{API}/bookings", json=body, headers=idem())

    outcomes = together(stack, shop.key, FIRST_BOOKERS, attempt)

    assert [status for status, _ in outcomes] == [201] * FIRST_BOOKERS, error_codes(outcomes)
    customer_ids = {body["customerId"] for _, body in outcomes}
    assert len(customer_ids) == 1
    with stack.client(shop.key) as client:
        found = client.get(f"{API}/customers", params={"search": email}).json()["data"]
        assert [c["id"] for c in found] == list(customer_ids)
        listed = client.get(f"{API}/bookings", params={"limit": "200"}).json()["data"]
        assert len(listed) == FIRST_BOOKERS
        assert {b["customerId"] for b in listed} == customer_ids
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_twenty_simultaneous_converts_of_one_quote_make_exactly_one_booking(stack: Stack):
    shop = solo_shop(stack)
    start = at_local(weekday_ahead(shop.zone, 9, weekday=2), "10:00", shop.zone)
    with stack.client(shop.key) as client:
        address = {"line1": "1 Race Way", "city": "New York", "state": "NY", "zip": "10001"}
        customer = client.post(
            f"{API}/customers",
            json={"name": "Racing Quote", "email": unique_email("rq"), "address": address},
        ).json()
        quote = client.post(
            f"{API}/quotes",
            json={"customerId": customer["id"], "serviceId": "svc_standard_clean", "send": True},
            headers=idem(),
        ).json()
        accepted = client.post(
            f"{API}/quotes/{quote['id']}", json={"action": "accept"}, headers=idem()
        )
        assert accepted.json()["status"] == "accepted", accepted.text

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = {"action": "convert", "startIso": start}
        return client.post(f"{API}/quotes/{quote['id']}", json=body, headers=idem())

    outcomes = together(stack, shop.key, CONVERTERS, attempt)

    statuses = Counter(status for status, _ in outcomes)
    assert statuses[200] == 1, outcomes
    assert set(statuses) <= {200, 409, 422}, outcomes
    assert set(error_codes(outcomes)) <= {(409, "conflict"), (422, "unprocessable")}
    (winner,) = [body for status, body in outcomes if status == 200]
    assert winner["status"] == "converted"

    with stack.client(shop.key) as client:
        bookings = client.get(f"{API}/bookings", params={"limit": "200"}).json()["data"]
        assert [b["id"] for b in bookings] == [winner["bookingId"]]
        assert bookings[0]["quoteId"] == quote["id"]
        assert bookings[0]["startIso"] == start
        final = client.get(f"{API}/quotes/{quote['id']}").json()
        assert (final["status"], final["bookingId"]) == ("converted", winner["bookingId"])

    # Straight from the database: the company (its own, fresh) holds one booking.
    query = text("SELECT count(*) FROM bookings WHERE company_id = :company")
    with stack.container.database.engine.connect() as connection:
        assert connection.execute(query, {"company": shop.company.id}).scalar_one() == 1
    assert overlapping_assignments(stack, shop.company.id) == 0


# --- Under load: a busy machine, two worker processes --------------------------------


@contextmanager
def busy_machine() -> Iterator[None]:
    """Every core spinning in a process of its own for the duration: requests are slow,
    transactions overlap for longer, and locks are held while their holder is descheduled."""
    burners = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for burner in burners:
            burner.kill()
        for burner in burners:
            burner.wait()


@attrs.frozen
class Served:
    """A server of the stack's database: where it listens and where it logs."""

    base_url: str | None
    log: Path


@pytest.fixture(scope="module")
def two_workers(stack: Stack, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    """``booking serve --workers 2`` over the stack's PostgreSQL schema: two processes, two
    connection pools, as in production."""
    if stack.backend != "postgres":
        pytest.skip("several worker processes share one database on PostgreSQL only")
    settings = stack.container.settings
    port = free_port()
    env = {
        **os.environ,
        "BOOKING_DATABASE_URL": settings.database_url,
        "BOOKING_DATABASE_SCHEMA": settings.database_schema or "",
        "BOOKING_BASE_URL": f"http://127.0.0.1:{port}",
    }
    env.pop("BOOKING_REDIS_URL", None)
    log_path = tmp_path_factory.mktemp("two-workers") / "serve.log"
    with log_path.open("w", encoding="utf-8") as log:
        command = [str(BIN / "booking"), "serve", "--workers", "2", "--port", str(port)]
        server = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=log)
        try:
            wait_for_port(port, server, lambda: log_path.read_text(encoding="utf-8"))
            base_url = f"http://127.0.0.1:{port}"
            with open_client(base_url, stack.key) as warm:
                for _ in range(4):  # both workers up and past their first request
                    assert warm.get(f"{API}/services").status_code == 200
            yield Served(base_url, log_path)
        finally:
            stop_process(server)


def bookings_in_database(stack: Stack, company_id: str) -> int:
    """How many bookings the company has, counted straight in the database."""
    query = text("SELECT count(*) FROM bookings WHERE company_id = :company")
    with stack.container.database.engine.connect() as connection:
        return int(connection.execute(query, {"company": company_id}).scalar_one())


def trouble_in(log: Path, since: int) -> list[str]:
    """The server's log lines past byte ``since`` other than its one line per request."""
    with log.open("rb") as lines:
        lines.seek(since)
        return [line.decode(errors="replace")[:500] for line in lines if b'"request"' not in line]


@pytest.mark.parametrize("server", ["live", "two_workers"])
def test_fifty_creates_for_one_slot_on_a_busy_machine_make_one_booking_and_no_5xx(
    stack: Stack, server: str, request: pytest.FixtureRequest, server_logs: Path
):
    served = request.getfixturevalue(server) if server != "live" else Served(None, server_logs)
    shop = solo_shop(stack)
    (sol,) = shop.crew_ids
    start = at_local(weekday_ahead(shop.zone, 11, weekday=2), "13:00", shop.zone)

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = booking_body(start, crewIds=[sol], notes=f"loaded racer {n}")
        try:
            return client.post(f"{API}/bookings", json=body, headers=idem())
        except httpx.HTTPError as error:  # no answer at all: status 0, named in the report
            return httpx.Response(0, json={"error": {"code": type(error).__name__}})

    logged = served.log.stat().st_size
    with busy_machine():
        outcomes = together(stack, shop.key, BOOKERS, attempt, base_url=served.base_url)

    report = (error_codes(outcomes), trouble_in(served.log, logged)[-20:])
    statuses = Counter(status for status, _ in outcomes)
    assert not [s for s in statuses if s >= 500], report
    assert statuses == {201: 1, 409: BOOKERS - 1}, report
    assert error_codes(outcomes) == {(409, "conflict"): BOOKERS - 1}
    assert bookings_in_database(stack, shop.company.id) == 1
    assert overlapping_assignments(stack, shop.company.id) == 0


def test_clients_racing_to_reverse_one_payment_write_one_reversal(stack: Stack):
    """Twenty reversals of one hand payment and twenty refunds of the booking's whole paid
    total, at once: one reversal or one refund lands, never both, and never two reversals
    (the paid total stays at zero or above)."""
    shop = solo_shop(stack)
    with stack.client(shop.key) as client:
        made = client.post(
            f"{API}/bookings",
            json=booking_body(at_local(weekday_ahead(shop.zone, 9, weekday=2), "10:00", shop.zone)),
            headers=idem(),
        ).json()
        paid = client.post(
            f"{API}/payments",
            json={
                "bookingId": made["id"],
                "kind": "PAYMENT",
                "amountCents": 1_002,
                "method": "CASH",
            },
            headers=idem(),
        ).json()

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        if n % 2:
            body = {"id": paid["id"], "note": f"racer {n}"}
            return client.patch(f"{API}/payments", json=body, headers=idem())
        refund = {"bookingId": made["id"], "kind": "REFUND", "amountCents": 1_002, "note": "back"}
        return client.post(f"{API}/payments", json=refund, headers=idem())

    outcomes = together(stack, shop.key, 40, attempt)

    statuses = Counter(status for status, _ in outcomes)
    assert statuses == {201: 1, 422: 39}, error_codes(outcomes)
    with stack.client(shop.key) as client:
        entries = client.get(f"{API}/payments", params={"bookingId": made["id"]}).json()["data"]
    assert sorted(e["amountCents"] for e in entries) == [-1_002, 1_002]
