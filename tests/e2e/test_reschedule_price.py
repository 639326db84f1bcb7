"""A rescheduled visit's date fees follow it (docs/scheduling.md, "Bookings: reschedule
scopes"): ``POST /bookings/:id/reschedule`` onto a holiday charges its surcharge, and a
move off a weekend drops the weekend surcharge, as ``POST /quote`` prices the new slot;
everything else of the agreed price stays. Both backends, over HTTP."""

from __future__ import annotations

from datetime import date
from typing import Any

import attrs
import httpx
import pytest

from tests.e2e.support import (
    API,
    CrewSpec,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    idem,
    weekday_ahead,
)

NYC = ("10001", "10003")


@pytest.fixture
def shop(stack: Stack) -> Shop:
    """Rosa, Monday to Saturday 08:00-18:00; the demo catalog (weekend surcharge 10 %)."""
    return crewed_company(
        stack, (CrewSpec("Rosa Diaz", "10003", NYC, weekdays=(1, 2, 3, 4, 5, 6)),)
    )


@pytest.fixture
def client(stack: Stack, shop: Shop) -> httpx.Client:
    with stack.client(shop.key) as c:
        yield c  # type: ignore[misc]


def _holiday(stack: Stack, shop: Shop, day: date) -> None:
    """Make ``day`` one of the catalog's holiday-surcharge dates ($25, taxable)."""
    with stack.container.uow() as uow:
        catalog = uow.catalogs.get(shop.company.id)
        fees = tuple(
            attrs.evolve(f, dates=f.dates | {day}) if f.id == "fee_holiday" else f
            for f in catalog.fees
        )
        uow.catalogs.save(attrs.evolve(catalog, fees=fees))
        uow.commit()


def _book(client: httpx.Client, start: str) -> dict[str, Any]:
    answer = client.post(f"{API}/bookings", json=booking_body(start), headers=idem())
    assert answer.status_code == 201, answer.text
    made: dict[str, Any] = answer.json()
    return made


def _move(client: httpx.Client, ref: str, start: str) -> dict[str, Any]:
    answer = client.post(
        f"{API}/bookings/{ref}/reschedule",
        json={"startIso": start, "scope": "this"},
        headers=idem(),
    )
    assert answer.status_code == 200, answer.text
    found = client.get(f"{API}/bookings/{ref}")
    assert found.status_code == 200, found.text
    booking: dict[str, Any] = found.json()
    return booking


def _quote(client: httpx.Client, start: str) -> dict[str, Any]:
    body = {
        "serviceId": "svc_standard_clean",
        "frequencySlug": "one_time",
        "zip": "10001",
        "startIso": start,
    }
    answer = client.post(f"{API}/quote", json=body)
    assert answer.status_code == 200, answer.text
    first: dict[str, Any] = answer.json()["firstVisit"]
    return first


def _fee_names(price: dict[str, Any]) -> list[str]:
    return [f["name"] for f in price["fees"]]


def test_a_visit_moved_onto_a_holiday_costs_the_holiday_surcharge_as_a_quote_for_it_does(
    stack: Stack, shop: Shop, client: httpx.Client
):
    monday = weekday_ahead(shop.zone, 8, weekday=1)
    thursday = weekday_ahead(shop.zone, 8, weekday=4)
    _holiday(stack, shop, thursday)
    made = _book(client, at_local(monday, "10:00", shop.zone))
    assert _fee_names(made["price"]) == []
    new_start = at_local(thursday, "10:00", shop.zone)
    moved = _move(client, made["id"], new_start)
    quoted = _quote(client, new_start)
    assert _fee_names(moved["price"]) == ["Holiday surcharge"]
    assert moved["price"]["totalCents"] == quoted["totalCents"] > made["price"]["totalCents"]
    assert moved["price"]["lines"] == made["price"]["lines"]
    assert moved["durationMinutes"] == made["durationMinutes"]
    entry = moved["activity"][-1]
    assert entry["kind"] == "rescheduled"
    assert entry["details"]["fromTotalCents"] == made["price"]["totalCents"]
    assert entry["details"]["toTotalCents"] == moved["price"]["totalCents"]


def test_a_visit_moved_off_a_saturday_no_longer_pays_the_weekend_surcharge(
    shop: Shop, client: httpx.Client
):
    saturday = weekday_ahead(shop.zone, 8, weekday=6)
    monday = weekday_ahead(shop.zone, 8, weekday=1)
    made = _book(client, at_local(saturday, "10:00", shop.zone))
    assert _fee_names(made["price"]) == ["Weekend surcharge"]
    new_start = at_local(monday, "10:00", shop.zone)
    moved = _move(client, made["id"], new_start)
    assert _fee_names(moved["price"]) == []
    assert moved["price"]["totalCents"] == _quote(client, new_start)["totalCents"]
    assert moved["price"]["totalCents"] < made["price"]["totalCents"]


def test_a_move_within_the_same_date_keeps_the_agreed_price(
    stack: Stack, shop: Shop, client: httpx.Client
):
    """A date fee added to the catalog after booking is not charged on a move that keeps
    the date: the price agreed stays until the visit changes date."""
    tuesday = weekday_ahead(shop.zone, 8, weekday=2)
    made = _book(client, at_local(tuesday, "10:00", shop.zone))
    _holiday(stack, shop, tuesday)
    moved = _move(client, made["id"], at_local(tuesday, "13:00", shop.zone))
    assert moved["price"] == made["price"]
    assert "fromTotalCents" not in moved["activity"][-1]["details"]
