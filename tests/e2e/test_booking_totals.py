"""A booking's ``paidCents`` and ``tipsCents`` wherever ``/api/v1`` shows a booking: made,
fetched, listed, cancelled, moved, and in the body of its webhook events, read from its
ledger (docs/ledger.md, "A booking's totals")."""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from datetime import timedelta
from typing import Any

import httpx
import pytest

from adapters.webhooks.render import EventRenderer
from booking_core.events import Event, EventType
from booking_core.services.payments import (
    CardMoneyReceived,
    CardMoneyRefunded,
    apply_processor_event,
)
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
from tests.e2e.test_round_trips import counted

NYC = ("10001", "10002", "10003", "11201")


@pytest.fixture
def shop(stack: Stack) -> Shop:
    return crewed_company(stack, (CrewSpec("Rosa Diaz", "10003", NYC),), code_prefix="TT")


@pytest.fixture
def api(stack: Stack, shop: Shop) -> Iterator[httpx.Client]:
    with stack.client(shop.key) as c:
        yield c


def book(api: httpx.Client, shop: Shop, days: int, hhmm: str = "10:00") -> dict[str, Any]:
    start = at_local(weekday_ahead(shop.zone, days, weekday=2), hhmm, shop.zone)
    made = api.post(f"{API}/bookings", json=booking_body(start), headers=idem())
    assert made.status_code == 201, made.text
    answer: dict[str, Any] = made.json()
    return answer


def pay(api: httpx.Client, booking_id: str, kind: str, cents: int, **more: Any) -> str:
    body = {"bookingId": booking_id, "kind": kind, "amountCents": cents, **more}
    if kind != "REFUND":
        body.setdefault("method", "CASH")
    answer = api.post(f"{API}/payments", json=body, headers=idem())
    assert answer.status_code == 201, answer.text
    entry_id: str = answer.json()["id"]
    return entry_id


def by_card(stack: Stack, shop: Shop, booking_id: str, cents: int, *, tip: bool = False) -> str:
    entry = apply_processor_event(
        CardMoneyReceived(
            company_id=shop.company.id,
            booking_id=booking_id,
            customer_id=None,
            payment_ref=f"pi_{secrets.token_hex(6)}",
            amount_cents=cents,
            tip=tip,
        ),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    return str(entry.external_ref)


def totals(shown: dict[str, Any]) -> tuple[int, int]:
    return shown["paidCents"], shown["tipsCents"]


def money_on(stack: Stack, shop: Shop, api: httpx.Client, booking_id: str) -> None:
    """Cash 10000, a hand tip 1500 reversed, a hand refund 2500, a card charge 5000 and a
    card tip 700 of which 200 refunded: paid 12500, tips 500."""
    pay(api, booking_id, "PAYMENT", 10_000)
    tip = pay(api, booking_id, "TIP", 1_500)
    reversed_tip = api.patch(
        f"{API}/payments", json={"id": tip, "note": "Wrong booking."}, headers=idem()
    )
    assert reversed_tip.status_code == 201, reversed_tip.text
    pay(api, booking_id, "REFUND", 2_500)
    by_card(stack, shop, booking_id, 5_000)
    card_tip = by_card(stack, shop, booking_id, 700, tip=True)
    apply_processor_event(
        CardMoneyRefunded(
            company_id=shop.company.id,
            booking_id=booking_id,
            payment_ref=card_tip,
            amount_cents=200,
            tip=True,
        ),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )


def test_a_new_booking_answers_nothing_paid(api: httpx.Client, shop: Shop):
    made = book(api, shop, 8)
    assert totals(made) == (0, 0)
    assert [totals(b) for b in made["bookings"]] == [(0, 0)]


def test_a_fetched_booking_shows_its_paid_total_and_tips_from_its_ledger(
    stack: Stack, api: httpx.Client, shop: Shop
):
    made = book(api, shop, 8)
    money_on(stack, shop, api, made["id"])

    for ref in (made["id"], made["code"]):
        assert totals(api.get(f"{API}/bookings/{ref}").json()) == (12_500, 500)
    # The same sums as the ledger the company would otherwise add up itself.
    entries = api.get(f"{API}/payments", params={"bookingId": made["id"]}).json()["data"]
    assert sum(e["amountCents"] for e in entries) == 12_500 + 500


def test_a_list_shows_each_bookings_totals_reading_the_ledger_once_per_page(
    stack: Stack, api: httpx.Client, shop: Shop
):
    first, second, third = (book(api, shop, 9, hhmm) for hhmm in ("09:00", "12:00", "15:00"))
    money_on(stack, shop, api, first["id"])
    pay(api, second["id"], "PAYMENT", 4_000)
    pay(api, second["id"], "TIP", 300)

    params = {"limit": 3}  # the shop's own company: these three only
    with counted(stack.container.database.engine) as trips:
        listed = api.get(f"{API}/bookings", params=params)
    assert listed.status_code == 200, listed.text
    shown = {b["id"]: totals(b) for b in listed.json()["data"]}
    assert shown == {first["id"]: (12_500, 500), second["id"]: (4_000, 300), third["id"]: (0, 0)}
    ledger_reads = [s for s in trips.statements if s.startswith("SELECT payments.")]
    assert len(ledger_reads) == 1, trips.statements


def test_cancel_and_reschedule_answers_show_the_totals(stack: Stack, api: httpx.Client, shop: Shop):
    moved, cancelled = book(api, shop, 10, "09:00"), book(api, shop, 10, "13:00")
    pay(api, moved["id"], "PAYMENT", 2_000)
    pay(api, cancelled["id"], "PAYMENT", 3_000)
    pay(api, cancelled["id"], "TIP", 400)

    start = at_local(weekday_ahead(shop.zone, 12, weekday=4), "10:00", shop.zone)
    answer = api.post(
        f"{API}/bookings/{moved['id']}/reschedule", json={"startIso": start}, headers=idem()
    )
    assert answer.status_code == 200, answer.text
    assert [totals(b) for b in answer.json()["data"]] == [(2_000, 0)]

    answer = api.post(
        f"{API}/bookings/{cancelled['id']}/cancel", json={"scope": "this"}, headers=idem()
    )
    assert answer.status_code == 200, answer.text
    assert [totals(b) for b in answer.json()["data"]] == [(3_000, 400)]


def test_a_booking_event_carries_the_totals_as_of_the_event(
    stack: Stack, api: httpx.Client, shop: Shop
):
    """As ``GET /bookings/:id`` answers, counting the entries recorded up to the event: an
    event from before the money came in shows none of it."""
    made = book(api, shop, 11)
    money_on(stack, shop, api, made["id"])
    render = EventRenderer(stack.container.settings.base_url)
    now = stack.container.clock.now()
    with stack.container.uow() as uow:
        booking = uow.bookings.get(shop.company.id, made["id"])
        bodies = [
            json.loads(
                render(
                    Event(
                        id=f"evt_{secrets.token_hex(12)}",
                        company_id=shop.company.id,
                        type=EventType.BOOKING_CANCELLED,
                        created_at=at,
                        subject=booking,
                    ),
                    uow,
                )
            )
            for at in (now, now - timedelta(days=1))
        ]
    assert totals(bodies[0]["data"]) == (12_500, 500)
    assert bodies[0]["data"] == api.get(f"{API}/bookings/{made['id']}").json()
    assert totals(bodies[1]["data"]) == (0, 0)
