"""Stripe events read into the core's ingest commands (``adapters.processor.stripe``):
the signature check, and what each event type reports."""

from __future__ import annotations

import time
from typing import Any

import pytest

from adapters.processor.stripe import StripeWebhook
from booking_core.errors import ValidationFailed
from booking_core.services.processor import (
    ChargeNotice,
    DeauthorizedNotice,
    DisputeNotice,
    DisputeWonNotice,
    IgnoredNotice,
    IngestProcessorEvent,
    RefundNotice,
)
from tests import stripe_payloads as stripe

ACCOUNT = "acct_1Test"


def read(event: dict[str, Any]) -> IngestProcessorEvent:
    body = stripe.encode(event)
    return StripeWebhook(stripe.SECRET).read(body, stripe.sign(body))


def refused(body: bytes, signature: str | None) -> ValidationFailed:
    with pytest.raises(ValidationFailed) as caught:
        StripeWebhook(stripe.SECRET).read(body, signature)
    return caught.value


def test_a_signed_event_is_read_with_its_id_type_and_account():
    paid = stripe.charge(ACCOUNT, "bkg_1", 12_000)
    read_back = read(paid)
    assert (read_back.event_id, read_back.event_type, read_back.account_id) == (
        paid["id"],
        "charge.succeeded",
        ACCOUNT,
    )


@pytest.mark.parametrize(
    "signature_of",
    [
        lambda body: None,
        lambda body: "",
        lambda body: "garbage",
        lambda body: "t=1,v1=00",
        lambda body: stripe.sign(body + b" "),  # the body changed after signing
        lambda body: stripe.sign(body, secret="whsec_another_endpoint"),
        lambda body: stripe.sign(body, at=int(time.time()) - 3600),  # replayed an hour late
    ],
    ids=["missing", "empty", "garbage", "wrong", "tampered", "other-secret", "stale"],
)
def test_a_body_whose_signature_does_not_verify_is_refused(signature_of):
    body = stripe.encode(stripe.charge(ACCOUNT, "bkg_1", 100))
    error = refused(body, signature_of(body))
    assert list(error.field_errors) == ["Stripe-Signature"]


def test_a_signed_body_that_is_no_event_is_refused():
    for body in (b"[1, 2]", b"not json", b"\xff\xfe"):
        error = refused(body, stripe.sign(body))
        assert "body" in error.field_errors
    body = b'{"object": "event", "type": "charge.succeeded"}'  # no id to remember it by
    assert "body" in refused(body, stripe.sign(body)).field_errors


def test_a_charge_names_its_booking_and_payment_intent():
    paid = stripe.charge(ACCOUNT, "bkg_1", 12_000)
    assert read(paid).notice == ChargeNotice(
        booking_id="bkg_1",
        payment_ref=paid["data"]["object"]["payment_intent"],
        amount_cents=12_000,
    )


def test_a_charge_without_payment_intent_is_known_by_its_charge_id_and_a_tip_is_a_tip():
    paid = stripe.charge(ACCOUNT, "bkg_1", 1_500, tip=True, payment_intent=None)
    assert read(paid).notice == ChargeNotice(
        booking_id="bkg_1", payment_ref=paid["data"]["object"]["id"], amount_cents=1_500, tip=True
    )


def test_a_charge_captured_later_lands_on_capture_only():
    held = stripe.charge(ACCOUNT, "bkg_1", 9_000, captured=False)
    assert isinstance(read(held).notice, IgnoredNotice)
    captured = stripe.charge(ACCOUNT, "bkg_1", 9_000, event_type="charge.captured")
    assert read(captured).notice == ChargeNotice(
        booking_id="bkg_1",
        payment_ref=captured["data"]["object"]["payment_intent"],
        amount_cents=9_000,
    )


def test_a_charge_outside_the_metadata_contract_is_ignored_with_the_reason():
    no_booking = read(stripe.charge(ACCOUNT, None, 100)).notice
    assert no_booking == IgnoredNotice("The charge's metadata names no booking_id.")
    odd = stripe.charge(ACCOUNT, "bkg_1", 100)
    odd["data"]["object"]["metadata"]["kind"] = "Tip"
    assert "neither payment nor tip" in read(odd).notice.reason  # type: ignore[union-attr]


def test_a_refund_reports_its_own_amount_and_a_dashboard_refund_says_so():
    paid = stripe.charge(ACCOUNT, "bkg_1", 10_000)
    charge = paid["data"]["object"]
    refs = (charge["payment_intent"], charge["id"])
    assert read(stripe.refund(ACCOUNT, paid, 2_500)).notice == RefundNotice(
        card_refs=refs, amount_cents=2_500, from_dashboard=True
    )
    ours = read(stripe.refund(ACCOUNT, paid, 1_000, through_service=True)).notice
    assert ours == RefundNotice(card_refs=refs, amount_cents=1_000, from_dashboard=False)


def test_refunds_land_from_refund_created_only_so_each_lands_once():
    paid = stripe.charge(ACCOUNT, "bkg_1", 10_000)
    again = read(stripe.charge_refunded(ACCOUNT, paid, refunded=3_500)).notice
    assert again == IgnoredNotice("Refunds land once each, from refund.created.")
    updated = stripe.refund(ACCOUNT, paid, 500)
    updated["type"] = "charge.refund.updated"
    assert isinstance(read(updated).notice, IgnoredNotice)
    failed = read(stripe.refund(ACCOUNT, paid, 500, status="failed")).notice
    assert failed == IgnoredNotice("The refund is failed: no money went back.")


def test_disputes_open_and_close():
    paid = stripe.charge(ACCOUNT, "bkg_1", 10_000)
    charge = paid["data"]["object"]
    refs = (charge["payment_intent"], charge["id"])
    assert read(stripe.dispute(ACCOUNT, paid, 10_000)).notice == DisputeNotice(
        card_refs=refs, amount_cents=10_000
    )
    inquiry = stripe.dispute(ACCOUNT, paid, 10_000, status="warning_needs_response")
    assert isinstance(read(inquiry).notice, IgnoredNotice)
    won = stripe.dispute(ACCOUNT, paid, 10_000, status="won", event_type="charge.dispute.closed")
    assert read(won).notice == DisputeWonNotice(card_refs=refs, returned_cents=10_000)
    lost = stripe.dispute(ACCOUNT, paid, 10_000, status="lost", event_type="charge.dispute.closed")
    assert "lost" in read(lost).notice.reason  # type: ignore[union-attr]


def test_deauthorisation_other_types_and_platform_events():
    assert read(stripe.deauthorized(ACCOUNT)).notice == DeauthorizedNotice()
    other = stripe.event("customer.created", {"id": "cus_1", "object": "customer"}, ACCOUNT)
    assert read(other).notice == IgnoredNotice("Events of type customer.created are not ingested.")
    assert read(stripe.charge(None, "bkg_1", 100)).account_id is None


def test_an_event_lacking_an_amount_is_ignored_not_refused():
    paid = stripe.charge(ACCOUNT, "bkg_1", 100)
    del paid["data"]["object"]["amount_captured"]
    paid["data"]["object"]["amount"] = "100"
    assert read(paid).notice == IgnoredNotice("The charge has no positive amount.")


@pytest.mark.parametrize("amount", [100_000_001, 2**63 - 1, 10**20])
def test_an_amount_over_the_ledger_ceiling_makes_the_body_no_event(amount: int):
    """Above what one ledger entry carries (and what Stripe takes): refused as a body that
    is no Stripe event, naming the amount, never read into a notice that would land."""
    paid = stripe.charge(ACCOUNT, "bkg_1", 100)
    paid["data"]["object"]["amount_captured"] = amount
    body = stripe.encode(paid)
    error = refused(body, stripe.sign(body))
    assert error.field_errors == {
        "body": "data.object.amount_captured is over 100000000 cents, the most one ledger "
        "entry carries (and more than Stripe takes)."
    }
    for event in (stripe.refund(ACCOUNT, paid, amount), stripe.dispute(ACCOUNT, paid, amount)):
        body = stripe.encode(event)
        assert "data.object.amount is over" in refused(body, stripe.sign(body)).field_errors["body"]


def test_an_amount_of_exactly_the_ceiling_is_read():
    notice = read(stripe.charge(ACCOUNT, "bkg_1", 100_000_000)).notice
    assert isinstance(notice, ChargeNotice)
    assert notice.amount_cents == 100_000_000
