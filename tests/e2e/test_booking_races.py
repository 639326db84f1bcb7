"""Races over real HTTP, on SQLite and PostgreSQL: many clients at the same moment for one
crew member's slot, or for one quote, make exactly one booking; every loser gets a clean
refusal (409 ``conflict``, or 422 for a quote already converted), never a 500.

Each client is a thread with its own connection and its own ``Idempotency-Key``; a
barrier releases them together. The outcome is read back through the API and, straight
from the stack's database, by an overlap self-join on ``booking_assignments``.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
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

BOOKERS = 50
CONVERTERS = 20
NYC = ("10001", "10003")


def together(stack: Stack, key: str, count: int, request: Any) -> list[tuple[int, dict[str, Any]]]:
    """Run ``request(client, n)`` in ``count`` threads released at once; (status, body).

    The threads share one client (httpx pools a connection per request in flight, so each
    still has its own connection): making fifty clients would take longer than the race.
    """
    barrier = threading.Barrier(count)

    with stack.client(key) as client:

        def one(n: int) -> tuple[int, dict[str, Any]]:
            barrier.wait(timeout=30)
            response: httpx.Response = request(client, n)
            body: dict[str, Any] = response.json()
            return response.status_code, body

        with ThreadPoolExecutor(max_workers=count) as pool:
            return list(pool.map(one, range(count)))


def error_codes(outcomes: list[tuple[int, dict[str, Any]]]) -> Counter[tuple[int, str]]:
    return Counter((status, body["error"]["code"]) for status, body in outcomes if status >= 400)


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
