"""``/payments``: money recorded by hand, hand refunds, reversals of hand entries, and the
422s for card money and wallet-credit replacements (written straight to the ledger, as
the card processor and the credit migration would)."""

from __future__ import annotations

import secrets
from collections import Counter
from typing import Any

import httpx
import pytest

from booking_core.card_money import replace_credit_entry
from booking_core.ledger import Kind, PaymentEntry
from booking_core.services.payments import (
    CardMoneyReceived,
    CardMoneyRefunded,
    apply_processor_event,
)
from tests.e2e.support import API, Stack, add_booking, demo_customer_id, error_of, idem
from tests.e2e.test_booking_races import together


@pytest.fixture
def booking(stack: Stack) -> str:
    """A booking of the first demo company of its own (an empty ledger) for Ada Lovelace."""
    return add_booking(stack.container, stack.company.id)


def record(api: httpx.Client, booking_id: str, **fields: Any) -> httpx.Response:
    return api.post(f"{API}/payments", json={"bookingId": booking_id, **fields}, headers=idem())


def reverse(api: httpx.Client, entry_id: str, note: str = "Recorded by mistake.") -> httpx.Response:
    return api.patch(f"{API}/payments", json={"id": entry_id, "note": note}, headers=idem())


def ledger(api: httpx.Client, booking_id: str) -> list[dict[str, Any]]:
    page = api.get(f"{API}/payments", params={"bookingId": booking_id, "limit": 200}).json()
    rows: list[dict[str, Any]] = page["data"]
    return rows


def test_a_payment_recorded_by_hand_is_an_offline_entry(
    stack: Stack, api: httpx.Client, booking: str
):
    response = record(
        api, booking, kind="PAYMENT", amountCents=15000, method="CHECK", note="Check #88"
    )
    assert response.status_code == 201, response.text
    entry = response.json()
    assert entry["id"].startswith("pay_")
    assert (entry["kind"], entry["method"], entry["offline"]) == ("PAYMENT", "CHECK", True)
    assert (entry["amountCents"], entry["note"], entry["bookingId"]) == (
        15000,
        "Check #88",
        booking,
    )
    # Without a customerId the entry is the booking's customer's.
    assert entry["customerId"] == demo_customer_id(stack)
    assert [e["id"] for e in ledger(api, booking)] == [entry["id"]]


def new_customer(api: httpx.Client, name: str) -> dict[str, Any]:
    """A new customer of the company, with a default address to book at."""
    body = {
        "name": name,
        "email": f"{name.lower()}-{secrets.token_hex(4)}@example.com",
        "address": {"line1": "4 Wind Tunnel Rd", "city": "Hampton", "state": "VA", "zip": "23681"},
    }
    created = api.post(f"{API}/customers", json=body)
    assert created.status_code == 201, created.text
    customer: dict[str, Any] = created.json()
    return customer


def filed_under(api: httpx.Client, customer: dict[str, Any]) -> list[str]:
    """Ids of the entries ``GET /payments?customerId=`` lists for the customer."""
    params = {"customerId": customer["id"], "limit": 200}
    return [e["id"] for e in api.get(f"{API}/payments", params=params).json()["data"]]


def paid_by(api: httpx.Client, customer: dict[str, Any]) -> int:
    """The customer's ``lifetime.paidCents``, as the customer list shows it."""
    page = api.get(f"{API}/customers", params={"search": customer["email"]}).json()
    (found,) = [c for c in page["data"] if c["id"] == customer["id"]]
    paid: int = found["lifetime"]["paidCents"]
    return paid


def test_a_given_customer_must_be_the_bookings_customer(stack: Stack, api: httpx.Client):
    """Another customer of the company is refused on ``customerId`` and nothing is written:
    filed under them, the entry was listed as theirs while the booking's customer's
    lifetime counted it, and its webhook and reversal carried them too."""
    owner, payer = new_customer(api, "Owner"), new_customer(api, "Payer")
    booking = add_booking(stack.container, stack.company.id, owner["id"])
    pay = {"kind": "PAYMENT", "amountCents": 100, "method": "CASH"}

    refused = record(api, booking, **pay, customerId=payer["id"])
    error = error_of(refused, 400, "invalid_request")
    assert set(error["fieldErrors"]) == {"customerId"}
    assert booking in error["fieldErrors"]["customerId"]
    assert ledger(api, booking) == []
    assert filed_under(api, payer) == []

    named = record(api, booking, **pay, customerId=owner["id"])
    assert named.status_code == 201, named.text
    entry = named.json()
    assert entry["customerId"] == owner["id"]
    assert filed_under(api, owner) == [entry["id"]]
    assert (paid_by(api, owner), paid_by(api, payer)) == (100, 0)
    reversal = reverse(api, entry["id"]).json()
    assert reversal["customerId"] == owner["id"]


def test_after_a_merge_either_record_may_be_named_and_the_entry_is_the_survivors(
    stack: Stack, api: httpx.Client
):
    """A merge re-files the merged record's booking under the survivor; naming the
    survivor or the merged record files the entry under the booking's customer, now the
    survivor, whose lifetime counts it."""
    merged, survivor = new_customer(api, "Merged"), new_customer(api, "Survivor")
    booking = add_booking(stack.container, stack.company.id, merged["id"])
    merging = api.post(
        f"{API}/customers/{survivor['id']}/merge", json={"mergedId": merged["id"]}, headers=idem()
    )
    assert merging.status_code == 200, merging.text

    pay = {"kind": "PAYMENT", "amountCents": 2500, "method": "CASH"}
    by_survivor = record(api, booking, **pay, customerId=survivor["id"])
    by_merged = record(api, booking, **pay, customerId=merged["id"])
    assert by_survivor.status_code == by_merged.status_code == 201, by_merged.text
    assert by_survivor.json()["customerId"] == by_merged.json()["customerId"] == survivor["id"]
    assert sorted(filed_under(api, survivor)) == sorted(
        [by_survivor.json()["id"], by_merged.json()["id"]]
    )
    assert filed_under(api, merged) == []
    assert paid_by(api, survivor) == 5000


def test_a_given_customer_must_be_one_of_the_companys_own(stack: Stack, api: httpx.Client):
    booking = add_booking(stack.container, stack.company.id)
    pay = {"kind": "PAYMENT", "amountCents": 800, "method": "CASH"}
    named = record(api, booking, **pay, customerId=demo_customer_id(stack))
    assert named.status_code == 201, named.text

    theirs = demo_customer_id(stack, stack.demo[1].company.id)
    never = theirs[:-6] + "000000"
    foreign = error_of(record(api, booking, **pay, customerId=theirs), 404, "not_found")
    missing = error_of(record(api, booking, **pay, customerId=never), 404, "not_found")
    assert foreign["message"].replace(theirs, "ID") == missing["message"].replace(never, "ID")
    assert [e["id"] for e in ledger(api, booking)] == [named.json()["id"]]


def test_a_payment_on_another_companys_booking_answers_like_one_that_never_existed(
    stack: Stack, api: httpx.Client
):
    theirs = add_booking(stack.container, stack.demo[1].company.id)
    never = theirs[:-6] + "000000"
    pay = {"kind": "PAYMENT", "amountCents": 2500, "method": "CASH"}
    foreign = error_of(record(api, theirs, **pay), 404, "not_found")
    missing = error_of(record(api, never, **pay), 404, "not_found")
    assert foreign["message"].replace(theirs, "ID") == missing["message"].replace(never, "ID")
    assert set(foreign) == set(missing)
    assert "fieldErrors" not in foreign
    assert ledger(api, theirs) == []
    with stack.client(stack.other_key) as other:
        # The booking is real: its own company records on it, and nothing else landed.
        assert record(other, theirs, **pay).status_code == 201
        assert [e["amountCents"] for e in ledger(other, theirs)] == [2500]


def test_a_booking_is_named_by_its_human_code_as_by_its_id(
    stack: Stack, api: httpx.Client, booking: str
):
    """The code is what owners see (pages, emails): ``GET /payments?bookingId=<code>``
    answered an empty ledger and ``POST /payments`` with it 404, though the fetch takes it."""
    code = api.get(f"{API}/bookings/{booking}").json()["code"]
    made = record(api, code.lower(), kind="PAYMENT", amountCents=4200, method="CASH")
    assert made.status_code == 201, made.text
    assert made.json()["bookingId"] == booking
    assert [e["id"] for e in ledger(api, code)] == [made.json()["id"]]
    assert ledger(api, booking) == ledger(api, code)
    # A code no booking of the company has names none: an empty list, and 404 to record.
    theirs = add_booking(stack.container, stack.demo[1].company.id)
    with stack.client(stack.other_key) as other:
        their_code = other.get(f"{API}/bookings/{theirs}").json()["code"]
    assert ledger(api, their_code) == []
    pay = {"kind": "PAYMENT", "amountCents": 2500, "method": "CASH"}
    error_of(record(api, their_code, **pay), 404, "not_found")


def test_a_hand_refund_is_stored_negative_with_method_offline(api: httpx.Client, booking: str):
    paid = record(api, booking, kind="PAYMENT", amountCents=10000, method="CASH").json()
    refund = record(api, booking, kind="REFUND", amountCents=2500, reverses=paid["id"])
    assert refund.status_code == 201, refund.text
    entry = refund.json()
    assert (entry["kind"], entry["method"], entry["offline"]) == ("REFUND", "OFFLINE", True)
    assert (entry["amountCents"], entry["reverses"]) == (-2500, paid["id"])


def test_a_refund_over_the_paid_total_is_422(api: httpx.Client, booking: str):
    record(api, booking, kind="PAYMENT", amountCents=4000, method="CASH")
    record(api, booking, kind="TIP", amountCents=2000, method="CASH")  # tips are not paid total
    error = error_of(record(api, booking, kind="REFUND", amountCents=4500), 422, "unprocessable")
    assert "4000" in error["message"]
    assert len(ledger(api, booking)) == 2


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"kind": "PAYMENT", "amountCents": 100, "method": "CARD"}, "method"),
        ({"kind": "PAYMENT", "amountCents": 100}, "method"),
        ({"kind": "REFUND", "amountCents": 100, "method": "CASH"}, "method"),
        ({"kind": "DISPUTE", "amountCents": 100, "method": "CASH"}, "kind"),
        ({"kind": "PAYMENT", "amountCents": -100, "method": "CASH"}, "amountCents"),
        ({"kind": "PAYMENT", "amountCents": 0, "method": "CASH"}, "amountCents"),
        ({"kind": "TIP", "amountCents": 100, "method": "CASH", "reverses": "pay_x"}, "reverses"),
    ],
)
def test_entries_a_person_cannot_record_are_field_errors(
    api: httpx.Client, booking: str, fields: dict[str, Any], field: str
):
    response = record(api, booking, **fields)
    assert field in error_of(response, 400, "invalid_request")["fieldErrors"]
    assert ledger(api, booking) == []


def test_reversing_a_hand_entry_writes_a_reversal(api: httpx.Client, booking: str):
    paid = record(api, booking, kind="PAYMENT", amountCents=7000, method="BANK_TRANSFER").json()
    response = reverse(api, paid["id"], "Entered on the wrong booking.")
    assert response.status_code == 201, response.text
    reversal = response.json()
    assert (reversal["kind"], reversal["amountCents"], reversal["reverses"]) == (
        "REVERSAL",
        -7000,
        paid["id"],
    )
    assert reversal["offline"] is True
    kinds = sorted(e["kind"] for e in ledger(api, booking))
    assert kinds == ["PAYMENT", "REVERSAL"]


def test_an_entry_is_never_reversed_twice_nor_a_reversal_reversed(api: httpx.Client, booking: str):
    paid = record(api, booking, kind="TIP", amountCents=500, method="CASH").json()
    reversal = reverse(api, paid["id"]).json()
    error_of(reverse(api, paid["id"]), 422, "unprocessable")
    error_of(reverse(api, reversal["id"]), 422, "unprocessable")


def test_a_payment_with_open_refunds_cannot_be_reversed(api: httpx.Client, booking: str):
    paid = record(api, booking, kind="PAYMENT", amountCents=9000, method="CASH").json()
    refund = record(api, booking, kind="REFUND", amountCents=1000, reverses=paid["id"]).json()
    error = error_of(reverse(api, paid["id"]), 422, "unprocessable")
    assert refund["id"] in error["message"]
    assert reverse(api, refund["id"]).status_code == 201
    assert reverse(api, paid["id"]).status_code == 201


def test_a_reversal_needs_a_note_and_an_existing_entry(api: httpx.Client, booking: str):
    paid = record(api, booking, kind="PAYMENT", amountCents=100, method="CASH").json()
    assert "note" in error_of(reverse(api, paid["id"], " "), 400, "invalid_request")["fieldErrors"]
    error_of(reverse(api, "pay_missing"), 404, "not_found")


def _card_payment(stack: Stack, booking_id: str, amount: int = 20000) -> dict[str, Any]:
    entry = apply_processor_event(
        CardMoneyReceived(
            company_id=stack.company.id,
            booking_id=booking_id,
            customer_id=None,
            payment_ref=f"pi_{secrets.token_hex(6)}",
            amount_cents=amount,
        ),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    return {"id": entry.id, "ref": entry.external_ref}


def test_card_money_cannot_be_reversed_it_is_refunded(
    stack: Stack, api: httpx.Client, booking: str
):
    card = _card_payment(stack, booking)
    listed = ledger(api, booking)
    assert [(e["method"], e["offline"]) for e in listed] == [("CARD", False)]

    error = error_of(reverse(api, card["id"]), 422, "unprocessable")
    assert "card" in error["message"]
    hand_refund = record(api, booking, kind="REFUND", amountCents=100, reverses=card["id"])
    assert "card" in error_of(hand_refund, 422, "unprocessable")["message"]

    # A refund the processor reports lands, and is card money too.
    refunded = apply_processor_event(
        CardMoneyRefunded(
            company_id=stack.company.id,
            booking_id=booking,
            payment_ref=card["ref"],
            amount_cents=5000,
            from_dashboard=True,
        ),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    assert refunded.kind is Kind.REFUND
    error_of(reverse(api, refunded.id), 422, "unprocessable")
    assert len(ledger(api, booking)) == 2


def stored_credit_replacement(stack: Stack, booking: str, cents: int) -> PaymentEntry:
    """A payment of the booking that replaced a former wallet-credit entry, stored as the
    migration left it (method OTHER, offline, a note about the credit)."""
    replacement = replace_credit_entry(
        entry_id=f"pay_credit_{secrets.token_hex(4)}",
        company_id=stack.company.id,
        booking_id=booking,
        customer_id=None,
        kind=Kind.PAYMENT,
        amount_cents=cents,
        created_at=stack.container.clock.now(),
    )
    with stack.container.uow() as uow:
        uow.payments.add(replacement)
        uow.commit()
    return replacement


def test_entries_that_replaced_wallet_credit_cannot_be_reversed(
    stack: Stack, api: httpx.Client, booking: str
):
    replacement = stored_credit_replacement(stack, booking, 3000)
    (listed,) = ledger(api, booking)
    assert (listed["method"], listed["offline"]) == ("OTHER", True)
    assert "credit" in listed["note"].lower()
    assert "credit" in error_of(reverse(api, replacement.id), 422, "unprocessable")["message"]


def test_the_ledger_filters_by_booking_and_stays_within_the_company(
    stack: Stack, api: httpx.Client, booking: str
):
    mine = record(api, booking, kind="PAYMENT", amountCents=1234, method="CASH").json()
    with stack.client(stack.other_key) as other:
        assert other.get(f"{API}/payments", params={"bookingId": booking}).json()["data"] == []
        error_of(
            other.patch(
                f"{API}/payments", json={"id": mine["id"], "note": "not yours"}, headers=idem()
            ),
            404,
            "not_found",
        )
    assert [e["id"] for e in ledger(api, booking)] == [mine["id"]]


def ledger_sum(api: httpx.Client, booking_id: str) -> int:
    """What the booking's entries add up to (its paid total when it has no tip money)."""
    return sum(e["amountCents"] for e in ledger(api, booking_id))


def test_card_money_is_not_refunded_by_hand_when_the_refund_names_no_payment(
    stack: Stack, api: httpx.Client, booking: str
):
    """A booking paid only by card: a hand refund leaving out ``reverses`` was capped by the
    whole paid total, card money included, so the card money went back twice (by hand,
    then in the processor) and the paid totals went to -15000."""
    card = _card_payment(stack, booking, 15_000)

    refused = error_of(
        record(api, booking, kind="REFUND", amountCents=15_000), 422, "unprocessable"
    )
    assert "0 cents that may be refunded by hand" in refused["message"]
    assert "Card money is refunded through the card processor" in refused["message"]
    assert len(ledger(api, booking)) == 1

    apply_processor_event(  # the refund is made where it belongs, on the card
        CardMoneyRefunded(
            company_id=stack.company.id,
            booking_id=booking,
            payment_ref=card["ref"],
            amount_cents=15_000,
            from_dashboard=True,
        ),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    assert ledger_sum(api, booking) == 0
    assert sorted(e["amountCents"] for e in ledger(api, booking)) == [-15_000, 15_000]


def test_a_hand_refund_gives_back_hand_money_only_beside_card_money(
    stack: Stack, api: httpx.Client, booking: str
):
    _card_payment(stack, booking, 15_000)
    cash = record(api, booking, kind="PAYMENT", amountCents=4_000, method="CASH").json()

    over = error_of(record(api, booking, kind="REFUND", amountCents=4_001), 422, "unprocessable")
    assert "4000 cents that may be refunded by hand" in over["message"]
    assert record(api, booking, kind="REFUND", amountCents=4_000).status_code == 201
    assert ledger_sum(api, booking) == 15_000
    # The cash refunded by hand (unnamed) cannot be undone by reversing the cash payment:
    # the hand refund would then be giving back card money.
    refused = error_of(reverse(api, cash["id"]), 422, "unprocessable")
    assert "below zero" in refused["message"]
    assert ledger_sum(api, booking) == 15_000


def test_wallet_credit_is_not_refunded_by_hand_whether_named_or_not(
    stack: Stack, api: httpx.Client, booking: str
):
    replacement = stored_credit_replacement(stack, booking, 4_200)
    named = record(api, booking, kind="REFUND", amountCents=4_200, reverses=replacement.id)
    assert "wallet credit" in error_of(named, 422, "unprocessable")["message"]
    unnamed = record(api, booking, kind="REFUND", amountCents=4_200)
    assert (
        "0 cents that may be refunded by hand" in error_of(unnamed, 422, "unprocessable")["message"]
    )
    assert ledger_sum(api, booking) == 4_200


def test_an_amount_over_the_ceiling_names_the_accepted_range(api: httpx.Client, booking: str):
    for cents in (100_000_001, 0, -100):
        refused = error_of(
            record(api, booking, kind="PAYMENT", amountCents=cents, method="CASH"),
            400,
            "invalid_request",
        )
        assert refused["fieldErrors"] == {"amountCents": "A whole number from 1 to 100000000."}
    biggest = record(api, booking, kind="PAYMENT", amountCents=100_000_000, method="CASH")
    assert biggest.status_code == 201, biggest.text
    assert ledger(api, booking)[0]["amountCents"] == 100_000_000


def test_the_documented_request_says_exactly_what_is_accepted(api: httpx.Client, booking: str):
    """The OpenAPI body of ``POST /payments`` lists the kinds, methods and amounts the server
    takes; every kind and method it leaves out is refused."""
    document = api.get("/api/openapi.json").json()
    body = document["paths"][f"{API}/payments"]["post"]["requestBody"]["content"][
        "application/json"
    ]["schema"]["properties"]
    assert body["kind"]["enum"] == ["PAYMENT", "TIP", "REFUND"]
    assert body["method"]["enum"] == ["CASH", "CHECK", "BANK_TRANSFER", "OTHER", "OFFLINE", None]
    amount = body["amountCents"]
    assert (amount["minimum"], amount["maximum"]) == (1, 100_000_000)

    for kind in ("TIP_REFUND", "DISPUTE", "REVERSAL"):
        refused = record(api, booking, kind=kind, amountCents=100, method="CASH")
        assert "kind" in error_of(refused, 400, "invalid_request")["fieldErrors"]
    refused = record(api, booking, kind="PAYMENT", amountCents=100, method="CARD")
    assert "method" in error_of(refused, 400, "invalid_request")["fieldErrors"]
    for method in body["method"]["enum"]:
        kind = "REFUND" if method in ("OFFLINE", None) else "PAYMENT"
        if kind == "REFUND":
            record(api, booking, kind="PAYMENT", amountCents=1, method="CASH")
        accepted = record(api, booking, kind=kind, amountCents=1, method=method)
        assert accepted.status_code == 201, (method, accepted.text)


def test_hand_refunds_racing_beside_card_money_never_give_back_more_than_came_in_by_hand(
    stack: Stack, api: httpx.Client, booking: str
):
    """Twenty hand refunds of 1000 at once on a booking holding 20000 of card money and
    3000 of cash: the booking's ledger is held while each checks the hand money, so three
    land and the card money stays whole (on SQLite one writer at a time, on PostgreSQL
    the ledger's advisory lock)."""
    _card_payment(stack, booking, 20_000)
    assert record(api, booking, kind="PAYMENT", amountCents=3_000, method="CASH").status_code == 201

    def attempt(client: httpx.Client, n: int) -> httpx.Response:
        body = {"bookingId": booking, "kind": "REFUND", "amountCents": 1_000, "note": f"r{n}"}
        return client.post(f"{API}/payments", json=body, headers=idem())

    outcomes = together(stack, stack.key, 20, attempt)

    assert Counter(status for status, _ in outcomes) == {201: 3, 422: 17}
    assert ledger_sum(api, booking) == 20_000
