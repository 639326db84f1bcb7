"""``POST /api/processor/stripe`` over real HTTP: Stripe Connect events built here and
signed with a test secret land in the ledger, read back through ``/api/v1/payments``.

The stack's own server has no signing secret (the route answers 503 there); these tests
talk to a second server over the same database whose settings carry ``SECRET``.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import attrs
import httpx
import pytest

from booking_core.ledger import DASHBOARD_REFUND_NOTE
from booking_core.services import processor as cases
from entrypoints.web import web_app
from tests import stripe_payloads as stripe
from tests.e2e.support import API, LiveServer, Stack, add_booking, client, error_of, free_socket

PATH = "/api/processor/stripe"


@pytest.fixture(scope="module")
def hooks(stack: Stack) -> Iterator[str]:
    """The base URL of a server whose ``BOOKING_STRIPE_WEBHOOK_SECRET`` is ``SECRET``."""
    settings = attrs.evolve(stack.container.settings, stripe_webhook_secret=stripe.SECRET)
    container = attrs.evolve(stack.container, settings=settings)
    server = LiveServer(free_socket()).start(web_app(container, stack.deps))
    try:
        yield server.base_url
    finally:
        server.stop()


@attrs.frozen
class Shop:
    """A company of the test's own with a connected account, a booking and a key."""

    company_id: str
    account: str
    booking_id: str
    key: str


@pytest.fixture
def shop(stack: Stack) -> Shop:
    company, key = stack.new_company()
    account = f"acct_{secrets.token_hex(8)}"
    cases.connect_account(
        cases.ConnectAccount(company_id=company.id, account_id=account),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    return Shop(company.id, account, add_booking(stack.container, company.id), key)


def deliver(
    base_url: str, event: dict[str, Any], *, signature: str | None = None
) -> httpx.Response:
    body = stripe.encode(event)
    headers = {"content-type": "application/json; charset=utf-8"}
    headers["stripe-signature"] = stripe.sign(body) if signature is None else signature
    with client(base_url) as http:
        return http.post(PATH, content=body, headers=headers)


def outcome(response: httpx.Response) -> dict[str, Any]:
    assert response.status_code == 200, response.text
    answer: dict[str, Any] = response.json()
    return answer


def ledger(stack: Stack, shop: Shop) -> list[dict[str, Any]]:
    """The booking's entries, oldest first, as the API lists them."""
    with stack.client(shop.key) as api:
        page = api.get(f"{API}/payments", params={"bookingId": shop.booking_id, "limit": 200})
    assert page.status_code == 200, page.text
    return list(reversed(page.json()["data"]))


def brief(entry: dict[str, Any]) -> tuple[str, str, int, bool]:
    return entry["kind"], entry["method"], entry["amountCents"], entry["offline"]


def test_a_charge_lands_as_a_card_payment_and_a_tip_as_a_tip(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 12_000)
    tip = stripe.charge(shop.account, shop.booking_id, 2_000, tip=True)
    first = outcome(deliver(hooks, paid))
    assert first["outcome"] == "ingested"
    assert outcome(deliver(hooks, tip))["outcome"] == "ingested"

    charge, tipped = ledger(stack, shop)
    assert charge["id"] == first["paymentId"]
    assert brief(charge) == ("PAYMENT", "CARD", 12_000, False)
    assert charge["externalRef"] == paid["data"]["object"]["payment_intent"]
    assert charge["bookingId"] == shop.booking_id
    assert brief(tipped) == ("TIP", "CARD", 2_000, False)


def test_a_dashboard_refund_carries_the_note_and_a_tip_refund_is_a_tip_refund(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 10_000)
    tip = stripe.charge(shop.account, shop.booking_id, 1_500, tip=True)
    for event in (paid, tip):
        outcome(deliver(hooks, event))
    refunds = [
        stripe.refund(shop.account, paid, 2_500),  # made in Stripe's dashboard
        stripe.refund(shop.account, paid, 1_000),  # a second partial refund
        stripe.refund(shop.account, tip, 1_500, through_service=True),
    ]
    for event in refunds:
        assert outcome(deliver(hooks, event))["outcome"] == "ingested"
    # Stripe also reports the charge's running total; it lands nothing more.
    again = outcome(deliver(hooks, stripe.charge_refunded(shop.account, paid, refunded=3_500)))
    assert again["outcome"] == "ignored"

    charge, tipped, dashboard, second, tip_refund = ledger(stack, shop)
    assert brief(dashboard) == ("REFUND", "CARD", -2_500, False)
    assert (dashboard["note"], dashboard["reverses"]) == (DASHBOARD_REFUND_NOTE, charge["id"])
    assert brief(second) == ("REFUND", "CARD", -1_000, False)
    assert brief(tip_refund) == ("TIP_REFUND", "CARD", -1_500, False)
    assert (tip_refund["note"], tip_refund["reverses"]) == ("", tipped["id"])


def test_a_dispute_opens_and_is_won_back(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 8_000)
    outcome(deliver(hooks, paid))
    assert outcome(deliver(hooks, stripe.dispute(shop.account, paid, 8_000)))["outcome"] == (
        "ingested"
    )
    won = stripe.dispute(
        shop.account, paid, 8_000, status="won", event_type="charge.dispute.closed"
    )
    assert outcome(deliver(hooks, won))["outcome"] == "ingested"

    charge, dispute, returned = ledger(stack, shop)
    assert brief(dispute) == ("DISPUTE", "CARD", -8_000, False)
    assert (dispute["dispute"], dispute["reverses"]) == (True, charge["id"])
    assert brief(returned) == ("REVERSAL", "CARD", 8_000, False)
    assert returned["reverses"] == dispute["id"]


def test_a_lost_dispute_moves_nothing_more(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 8_000)
    outcome(deliver(hooks, paid))
    outcome(deliver(hooks, stripe.dispute(shop.account, paid, 8_000)))
    lost = stripe.dispute(
        shop.account, paid, 8_000, status="lost", event_type="charge.dispute.closed"
    )
    answer = outcome(deliver(hooks, lost))
    assert answer["outcome"] == "ignored"
    assert "lost" in answer["reason"]
    assert [e["kind"] for e in ledger(stack, shop)] == ["PAYMENT", "DISPUTE"]


def test_a_duplicate_delivery_writes_nothing_new(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 5_000)
    assert outcome(deliver(hooks, paid))["outcome"] == "ingested"
    assert outcome(deliver(hooks, paid)) == {"outcome": "duplicate"}
    assert len(ledger(stack, shop)) == 1


def test_deliveries_of_one_event_racing_land_it_once(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 6_000)
    outcome(deliver(hooks, paid))
    refund = stripe.refund(shop.account, paid, 6_000)
    start = threading.Barrier(6)
    answers: list[httpx.Response] = []

    def send() -> None:
        start.wait()
        answers.append(deliver(hooks, refund))

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    outcomes = sorted(outcome(answer)["outcome"] for answer in answers)
    assert outcomes == ["duplicate"] * 5 + ["ingested"]
    assert [e["kind"] for e in ledger(stack, shop)] == ["PAYMENT", "REFUND"]


def test_a_disconnected_account_s_refund_still_lands(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 9_000)
    outcome(deliver(hooks, paid))
    cases.disconnect_account(
        cases.DisconnectAccount(company_id=shop.company_id),
        uow=stack.container.uow(),
        clock=stack.container.clock,
    )
    assert outcome(deliver(hooks, stripe.refund(shop.account, paid, 4_000)))["outcome"] == (
        "ingested"
    )
    refund = ledger(stack, shop)[-1]
    assert brief(refund) == ("REFUND", "CARD", -4_000, False)
    assert refund["note"] == DASHBOARD_REFUND_NOTE


def test_deauthorising_the_platform_disconnects_and_later_money_still_lands(stack, hooks, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 3_000)
    outcome(deliver(hooks, paid))
    assert outcome(deliver(hooks, stripe.deauthorized(shop.account)))["outcome"] == "ingested"
    assert cases.current_account(shop.company_id, uow=stack.container.uow()) is None
    outcome(deliver(hooks, stripe.dispute(shop.account, paid, 3_000)))
    assert [e["kind"] for e in ledger(stack, shop)] == ["PAYMENT", "DISPUTE"]


@pytest.mark.parametrize("signature", ["", "t=1,v1=deadbeef", "tampered"])
def test_a_bad_signature_is_400_and_writes_nothing(stack, hooks, shop, signature):
    paid = stripe.charge(shop.account, shop.booking_id, 7_000)
    if signature == "tampered":
        signature = stripe.sign(stripe.encode({**paid, "id": "evt_other"}))
    error = error_of(deliver(hooks, paid, signature=signature), 400, "invalid_request")
    assert "Stripe-Signature" in error["fieldErrors"]
    assert ledger(stack, shop) == []
    # The same event, signed, still lands: nothing of it was remembered.
    assert outcome(deliver(hooks, paid))["outcome"] == "ingested"


@pytest.mark.parametrize("amount", [10**20, 2**63 - 1, 100_000_001])
def test_an_amount_over_the_ledger_ceiling_is_400_and_writes_nothing(stack, hooks, shop, amount):
    """A signed event with an amount past what one entry carries (and past anything Stripe
    takes) answered 500 (10^20), or landed and pushed the paid totals past 64 bits."""
    paid = stripe.charge(shop.account, shop.booking_id, 100)
    paid["data"]["object"]["amount_captured"] = amount
    error = error_of(deliver(hooks, paid), 400, "invalid_request")
    assert error["fieldErrors"] == {
        "body": "data.object.amount_captured is over 100000000 cents, the most one ledger "
        "entry carries (and more than Stripe takes)."
    }
    assert ledger(stack, shop) == []

    landed = stripe.charge(shop.account, shop.booking_id, 100_000_000)
    assert outcome(deliver(hooks, landed))["outcome"] == "ingested"
    refund = stripe.refund(shop.account, landed, amount)
    assert "body" in error_of(deliver(hooks, refund), 400, "invalid_request")["fieldErrors"]
    assert [entry["amountCents"] for entry in ledger(stack, shop)] == [100_000_000]


def test_a_missing_signature_is_400(hooks):
    with client(hooks) as http:
        response = http.post(PATH, content=b"{}", headers={"content-type": "application/json"})
    error_of(response, 400, "invalid_request")


def test_an_unknown_account_or_booking_is_acknowledged_and_ignored(stack, hooks, shop):
    stranger = stripe.charge(f"acct_{secrets.token_hex(8)}", shop.booking_id, 1_000)
    answer = outcome(deliver(hooks, stranger))
    assert (answer["outcome"], answer["reason"]) == (
        "ignored",
        "No company has this account.",
    )
    unknown = outcome(deliver(hooks, stripe.charge(shop.account, "bkg_never", 1_000)))
    assert (unknown["outcome"], unknown["reason"]) == ("ignored", "No such booking.")
    other_company = add_booking(stack.container, stack.company.id)
    theirs = outcome(deliver(hooks, stripe.charge(shop.account, other_company, 1_000)))
    assert theirs["outcome"] == "ignored"
    assert ledger(stack, shop) == []


def test_an_oversized_body_is_413(hooks):
    body = b"{" + b" " * (300 * 1024) + b"}"
    with client(hooks) as http:
        response = http.post(PATH, content=body, headers={"stripe-signature": stripe.sign(body)})
    error_of(response, 413, "payload_too_large")


def test_only_post_is_served(hooks):
    with client(hooks) as http:
        error_of(http.get(PATH), 405, "method_not_allowed")


def test_without_a_signing_secret_the_route_answers_503(stack, shop):
    paid = stripe.charge(shop.account, shop.booking_id, 1_000)
    error_of(deliver(stack.base_url, paid), 503, "unavailable")


def test_each_event_is_logged_with_its_outcome_never_its_signature(stack, hooks, shop, server_logs):
    offset = server_logs.stat().st_size
    unknown = stripe.charge(shop.account, "bkg_never", 1_000)
    body = stripe.encode(unknown)
    signature = stripe.sign(body)
    with client(hooks) as http:
        assert http.post(PATH, content=body, headers={"stripe-signature": signature}).is_success
        refused = http.post(PATH, content=body, headers={"stripe-signature": signature + "0"})
        assert refused.status_code == 400
    lines = _log_lines(server_logs, offset, requests=2)
    (line,) = [json.loads(x) for x in lines if '"event":"processor_event"' in x]
    assert (line["event_id"], line["account_id"], line["company_id"]) == (
        unknown["id"],
        shop.account,
        shop.company_id,
    )
    assert (line["level"], line["outcome"], line["reason"]) == (
        "warning",
        "ignored",
        "No such booking.",
    )
    written = "\n".join(lines)
    for secret in (stripe.SECRET, signature.split("v1=")[1], '"amount"'):
        assert secret not in written


def _log_lines(log: Path, offset: int, requests: int) -> list[str]:
    """The log lines written after ``offset``, once ``requests`` request lines are there
    (a request's line is written after its answer is sent)."""
    deadline = time.monotonic() + 10
    while True:
        with log.open("rb") as sink:
            sink.seek(offset)
            lines = [line.decode() for line in sink if line.endswith(b"\n")]
        if sum('"event":"request"' in x for x in lines) >= requests or time.monotonic() > deadline:
            return lines
        time.sleep(0.02)
