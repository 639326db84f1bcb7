"""``POST /api/v1/customers/{id}/merge`` (docs/api.md, "Merging customers"): the merged
record's bookings, payments, quotes and coupon redemptions are re-filed under the
survivor, so its lifetime statistics, its per-customer coupon limits and its portal see
one customer; refusals are 404 and 422 and change nothing."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from datetime import date
from functools import partial
from typing import Any

import httpx
import pytest

from booking_core.services.portal import portal_overview
from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    error_of,
    idem,
    unique_email,
    weekday_ahead,
)


@pytest.fixture
def shop(stack: Stack) -> Shop:
    return crewed_company(stack, (CrewSpec("Rosa", "10001", ("10001", "10002")),))


@pytest.fixture
def client(stack: Stack, shop: Shop) -> Iterator[httpx.Client]:
    with stack.client(shop.key) as c:
        yield c


@pytest.fixture
def day(shop: Shop) -> date:
    return weekday_ahead(shop.zone, 3)


def customer(client: httpx.Client, name: str) -> dict[str, Any]:
    made = client.post(f"{API}/customers", json={"name": name, "email": unique_email("mrg")})
    assert made.status_code == 201, made.text
    return dict(made.json())


def merge(
    client: httpx.Client, survivor_id: str, merged_id: str, headers: dict[str, str] | None = None
) -> httpx.Response:
    return client.post(
        f"{API}/customers/{survivor_id}/merge",
        json={"mergedId": merged_id},
        headers=idem() if headers is None else headers,
    )


def listed(client: httpx.Client, email: str) -> list[dict[str, Any]]:
    found = client.get(f"{API}/customers", params={"search": email})
    assert found.status_code == 200, found.text
    return list(found.json()["data"])


def test_a_merge_re_files_the_merged_records_booking_payment_and_coupon_under_the_survivor(
    stack: Stack, client: httpx.Client, shop: Shop, day: date, settled: Callable[[], None]
):
    survivor, merged = customer(client, "Survivor"), customer(client, "Merged")
    body = booking_body(at_local(day, "10:00", shop.zone), couponCode="FIRSTCLEAN")
    body["customer"] = {"name": "Merged", "email": merged["email"]}
    booked = client.post(f"{API}/bookings", json=body, headers=idem())
    assert booked.status_code == 201, booked.text
    booking = booked.json()
    paid = client.post(
        f"{API}/payments",
        json={"bookingId": booking["id"], "kind": "PAYMENT", "amountCents": 4200, "method": "CASH"},
        headers=idem(),
    )
    assert paid.status_code == 201, paid.text
    since = stack.container.clock.now().isoformat()

    merged_now = merge(client, survivor["id"], merged["id"])

    assert merged_now.status_code == 200, merged_now.text
    assert "x-ratelimit-limit" in merged_now.headers
    answer = merged_now.json()
    assert answer["id"] == survivor["id"]
    assert (answer["lifetime"]["bookings"], answer["lifetime"]["paidCents"]) == (1, 4200)
    # The list shows one customer, the survivor, with the merged record's history.
    assert listed(client, merged["email"]) == []
    (row,) = listed(client, survivor["email"])
    assert (row["lifetime"]["bookings"], row["lifetime"]["paidCents"]) == (1, 4200)
    # The booking and the entry are the survivor's now, and a poller by change sees both.
    refiled = client.get(f"{API}/bookings/{booking['id']}").json()
    assert refiled["customerId"] == survivor["id"]
    assert refiled["updatedAt"] > booking["updatedAt"]
    settled()
    for path, item in (("bookings", booking), ("payments", paid.json())):
        polled = client.get(f"{API}/{path}", params={"updatedSince": since}).json()["data"]
        assert [(i["id"], i["customerId"]) for i in polled] == [(item["id"], survivor["id"])]
    assert refiled["activity"][-1]["kind"] == "customer_merged"
    assert refiled["activity"][-1]["details"] == {
        "fromCustomerId": merged["id"],
        "toCustomerId": survivor["id"],
    }
    entries = client.get(f"{API}/payments", params={"customerId": survivor["id"]}).json()
    assert [e["id"] for e in entries["data"]] == [paid.json()["id"]]
    # Creating with the merged email returns the survivor.
    again = client.post(f"{API}/customers", json={"name": "Merged", "email": merged["email"]})
    assert (again.status_code, again.json()["id"]) == (200, survivor["id"])
    # The per-customer coupon limit (FIRSTCLEAN: once per customer) holds across the merge,
    # by either record and by either email.
    for customer_id in (survivor["id"], merged["id"]):
        quote = client.post(
            f"{API}/quote",
            json={
                "serviceId": "svc_standard_clean",
                "couponCode": "FIRSTCLEAN",
                "customerId": customer_id,
            },
        )
        assert error_of(quote, 422, "unprocessable")
    for email in (survivor["email"], merged["email"]):
        second = booking_body(at_local(day, "14:00", shop.zone), couponCode="FIRSTCLEAN")
        second["customer"] = {"name": "Survivor", "email": email}
        refused = client.post(f"{API}/bookings", json=second, headers=idem())
        assert "FIRSTCLEAN" in error_of(refused, 422, "unprocessable")["message"]
    # The survivor's portal lists the merged record's booking and receipt.
    portal = portal_overview(
        shop.company.id,
        survivor["id"],
        uow=stack.container.uow(),
        at=stack.container.clock.now(),
    )
    assert [b.id for b in portal.upcoming] == [booking["id"]]
    assert [entry.id for entry, _ in portal.receipts] == [paid.json()["id"]]


def test_a_merge_is_replayed_for_its_key_and_refused_with_another_body(
    client: httpx.Client,
):
    survivor, merged, third = (customer(client, n) for n in ("Survivor", "Merged", "Third"))
    headers = idem()
    first = merge(client, survivor["id"], merged["id"], headers)
    replay = merge(client, survivor["id"], merged["id"], headers)
    assert first.status_code == replay.status_code == 200, replay.text
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == first.json()
    error_of(merge(client, survivor["id"], third["id"], headers), 409, "idempotency_key_reused")
    missing = client.post(f"{API}/customers/{survivor['id']}/merge", json={"mergedId": third["id"]})
    assert "Idempotency-Key" in error_of(missing, 400, "invalid_request")["fieldErrors"]


def test_refused_merges_change_nothing(stack: Stack, client: httpx.Client):
    survivor, merged, other = (customer(client, n) for n in ("Survivor", "Merged", "Other"))
    assert merge(client, survivor["id"], merged["id"]).status_code == 200

    itself = merge(client, other["id"], other["id"])
    assert "itself" in error_of(itself, 422, "unprocessable")["message"]
    into_merged = merge(client, merged["id"], other["id"])
    assert "already merged" in error_of(into_merged, 422, "unprocessable")["message"]
    of_merged = merge(client, other["id"], merged["id"])
    assert "already merged" in error_of(of_merged, 422, "unprocessable")["message"]
    # Another company's customer is not found, exactly like an id that names nothing.
    with stack.client(stack.key) as demo:
        elsewhere = customer(demo, "Elsewhere")
    theirs = error_of(merge(client, other["id"], elsewhere["id"]), 404, "not_found")
    nothing = error_of(merge(client, other["id"], "cus_nothing"), 404, "not_found")
    assert theirs["message"].replace(elsewhere["id"], "X") == nothing["message"].replace(
        "cus_nothing", "X"
    )
    error_of(merge(client, elsewhere["id"], other["id"]), 404, "not_found")
    assert [c["id"] for c in listed(client, other["email"])] == [other["id"]]


def test_a_merge_needs_customers_write(stack: Stack, shop: Shop, client: httpx.Client):
    survivor, merged = customer(client, "Survivor"), customer(client, "Merged")
    reader = stack.issue_key(company_id=shop.company.id, scopes={"customers:read"}).secret
    with stack.client(reader) as c:
        refused = error_of(merge(c, survivor["id"], merged["id"]), 403, "insufficient_scope")
    assert refused["requiredScope"] == "customers:write"
    assert len(listed(client, merged["email"])) == 1


def test_a_quote_for_a_merged_record_is_its_survivors_and_books_for_it(
    client: httpx.Client, shop: Shop, day: date
):
    survivor, merged = customer(client, "Survivor"), customer(client, "Merged")
    assert merge(client, survivor["id"], merged["id"]).status_code == 200
    made = client.post(
        f"{API}/quotes",
        json={
            "customerId": merged["id"],
            "manualLines": [{"description": "Deep clean", "amountCents": 15_000}],
            "send": True,
        },
        headers=idem(),
    )
    assert made.status_code == 201, made.text
    quote = made.json()
    assert quote["customerId"] == survivor["id"]
    listed_quotes = client.get(f"{API}/quotes", params={"customerId": survivor["id"]}).json()
    assert [q["id"] for q in listed_quotes["data"]] == [quote["id"]]
    # The survivor has an address to be booked at once a booking has given it one.
    body = booking_body(at_local(day, "10:00", shop.zone))
    body["customer"] = {"name": "Survivor", "email": survivor["email"]}
    assert client.post(f"{API}/bookings", json=body, headers=idem()).status_code == 201
    converted = client.post(
        f"{API}/quotes/{quote['id']}",
        json={
            "action": "convert",
            "startIso": at_local(day, "14:00", shop.zone),
            "serviceId": "svc_standard_clean",
        },
        headers=idem(),
    )
    assert converted.status_code == 200, converted.text
    booking = client.get(f"{API}/bookings/{converted.json()['bookingId']}").json()
    assert booking["customerId"] == survivor["id"]
    answer = client.get(f"{API}/customers", params={"search": survivor["email"]}).json()
    assert answer["data"][0]["lifetime"]["bookings"] == 2


def at_once(*calls: Callable[[], httpx.Response]) -> list[httpx.Response]:
    """Each call on a thread of its own, released together; their answers in order."""
    answers: list[httpx.Response | None] = [None] * len(calls)
    barrier = threading.Barrier(len(calls))

    def run(index: int) -> None:
        barrier.wait(timeout=30)
        answers[index] = calls[index]()

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert all(answer is not None for answer in answers), "a call hung or raised"
    return [answer for answer in answers if answer is not None]


def test_a_booking_racing_a_merge_of_its_customer_is_filed_under_the_survivor(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    """Whichever commits first, the booking ends under the survivor (it used to stay with
    the merged record for good when the merge read its bookings first)."""
    with stack.client(shop.key) as one, stack.client(shop.key) as other:
        for round_ in range(6):
            survivor, merged = customer(client, "Survivor"), customer(client, "Merged")
            body = booking_body(at_local(day, "10:00", shop.zone))
            body["customer"] = {"name": "Merged", "email": merged["email"].upper()}
            merged_now, booked = at_once(
                partial(merge, one, survivor["id"], merged["id"]),
                partial(other.post, f"{API}/bookings", json=body, headers=idem()),
            )
            assert merged_now.status_code == 200, merged_now.text
            assert booked.status_code == 201, booked.text
            stored = client.get(f"{API}/bookings/{booked.json()['id']}").json()
            assert stored["customerId"] == survivor["id"], round_
            (row,) = listed(client, survivor["email"])
            assert row["lifetime"]["bookings"] == 1, round_
            cancelled = client.post(
                f"{API}/bookings/{stored['id']}/cancel", json={"scope": "this"}, headers=idem()
            )
            assert cancelled.status_code == 200, cancelled.text  # the slot is free again


def test_two_bookings_of_one_customer_at_new_addresses_at_once_both_book(
    stack: Stack, client: httpx.Client, shop: Shop, day: date
):
    """Each holds the customer, then saves its new address on it: one waits for the
    other, neither is refused (two share-holders upgrading at once would deadlock)."""
    returning = customer(client, "Returning")
    with stack.client(shop.key) as one, stack.client(shop.key) as other:
        for round_ in range(4):
            bodies = []
            for n, hour in enumerate(("09:00", "13:00")):
                body = booking_body(at_local(day, hour, shop.zone))
                body["customer"] = {"name": "Returning", "email": returning["email"]}
                body["address"]["line1"] = f"{round_ * 2 + n + 1} New Address Rd"
                bodies.append(body)
            answers = at_once(
                partial(one.post, f"{API}/bookings", json=bodies[0], headers=idem()),
                partial(other.post, f"{API}/bookings", json=bodies[1], headers=idem()),
            )
            for answer in answers:
                assert answer.status_code == 201, answer.text
                assert answer.json()["customerId"] == returning["id"]
                cancelled = client.post(
                    f"{API}/bookings/{answer.json()['id']}/cancel",
                    json={"scope": "this"},
                    headers=idem(),
                )
                assert cancelled.status_code == 200, cancelled.text
