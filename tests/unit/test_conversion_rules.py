"""Converting a quote (``booking_core.conversion``): what the booking request keeps from
the quote, and the exact texts of each refusal (SPEC.md section 3, docs/quotes.md)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from zoneinfo import ZoneInfo

import attrs
import pytest

from booking_core import conversion, quotes
from booking_core.conversion import ConvertRequest
from booking_core.errors import (
    InvalidTransition,
    RuleViolation,
    UnknownCatalogItem,
    ValidationFailed,
)
from booking_core.pricing import price
from booking_core.quotes import ManualLine, Quote, QuoteStatus
from tests.unit.test_quotes import (
    AT,
    CATALOG,
    COMPANY,
    EXPIRES,
    IN_DATE,
    SELECTION,
    START,
    accepted,
    convert,
    converted,
    sent,
)

NAIVE = datetime(2026, 6, 2, 9, 0)


def accepted_quote(**fields: object) -> Quote:
    made = quotes.create_quote(company_id=COMPANY, at=AT, expires_at=EXPIRES, **fields)  # type: ignore[arg-type]
    return quotes.accept(quotes.send(made, AT), IN_DATE)


def refused(make: Callable[[], object]) -> str:
    with pytest.raises(InvalidTransition) as caught:
        make()
    return str(caught.value)


def field_errors(make: Callable[[], object]) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        make()
    return caught.value.field_errors


# --- what the booking keeps -------------------------------------------------------------


def test_converting_a_quote_keeps_its_coupon_on_the_booking() -> None:
    selection = attrs.evolve(SELECTION, coupon_code="SPRING")
    quote = accepted_quote(
        customer_id="cus_1", selection=selection, breakdown=price(CATALOG, selection, at=AT)
    )
    _, booking = convert(quote)
    assert booking.coupon_code == "SPRING"


def test_converting_a_quote_keeps_its_lead_and_customer_on_the_booking() -> None:
    quote = accepted_quote(
        customer_id="cus_1",
        lead_id="lead_1",
        selection=SELECTION,
        breakdown=price(CATALOG, SELECTION, at=AT),
    )
    _, booking = convert(quote)
    assert (booking.customer_id, booking.lead_id) == ("cus_1", "lead_1")


def test_converting_a_hand_priced_quote_for_a_lead_keeps_the_lead_and_names_no_coupon() -> None:
    quote = accepted_quote(lead_id="lead_1", manual_lines=(ManualLine("Move-out clean", 30_000),))
    claimed, booking = convert(conversion.for_customer(quote, "cus_9"), service_id="svc_deep")
    assert (booking.customer_id, booking.lead_id) == ("cus_9", "lead_1")
    assert (claimed.customer_id, claimed.lead_id) == ("cus_9", "lead_1")
    assert booking.coupon_code is None
    assert booking.manual_lines == (ManualLine("Move-out clean", 30_000),)


def test_a_quote_for_a_lead_no_customer_stands_for_is_refused_naming_quote_and_lead() -> None:
    quote = accepted_quote(lead_id="lead_1", manual_lines=(ManualLine("Move-out clean", 30_000),))
    assert conversion.for_customer(quote, None) is quote
    with pytest.raises(RuleViolation) as caught:
        convert(quote, service_id="svc_deep")
    assert caught.value.message == (
        f"Quote {quote.id} is for lead lead_1 and no customer has its email or phone yet; "
        "create the customer (with a default address) first."
    )


def test_a_quote_that_names_its_customer_keeps_it_whoever_its_lead_matches() -> None:
    quote = accepted_quote(
        customer_id="cus_1",
        lead_id="lead_1",
        selection=SELECTION,
        breakdown=price(CATALOG, SELECTION, at=AT),
    )
    assert conversion.for_customer(quote, "cus_9") is quote


def test_a_convert_carries_the_quoted_breakdown_and_only_the_fees_it_adds() -> None:
    selection = attrs.evolve(SELECTION, manual_fee_ids=("fee_pets",))
    breakdown = price(CATALOG, selection, at=AT)
    quote = accepted_quote(customer_id="cus_1", selection=selection, breakdown=breakdown)
    _, booking = convert(quote, manual_fee_ids=("fee_stairs", "fee_pets"))
    assert booking.quoted == breakdown
    assert booking.added_fee_ids == ("fee_stairs",)
    assert booking.manual_fee_ids == ("fee_pets", "fee_stairs")


def test_a_start_on_the_companys_quarter_hour_is_allowed_whatever_its_utc_minute() -> None:
    """The quarter hour is judged on the company's wall clock: in 1900 Kolkata was
    +05:21:10, so 10:15 there is 04:53:50 UTC."""
    kolkata = attrs.evolve(CATALOG, timezone="Asia/Kolkata")
    at = datetime(1900, 5, 1, 9, 0, tzinfo=ZoneInfo("Asia/Kolkata"))
    start = datetime(1900, 6, 1, 10, 15, tzinfo=ZoneInfo("Asia/Kolkata"))
    claimed, booking = conversion.begin_conversion(
        accepted(), ConvertRequest(start=start), catalog=kolkata, at=at
    )
    assert claimed.status is QuoteStatus.CONVERTED
    assert booking.start == start


# --- refusals: state --------------------------------------------------------------------


def test_a_hand_priced_quote_without_service_is_refused_with_the_full_text() -> None:
    quote = accepted(hand_priced=True)
    assert refused(lambda: convert(quote)) == (
        f"Cannot convert quote {quote.id} (accepted): "
        "a hand-priced quote needs a serviceId to file the booking under"
    )


@pytest.mark.parametrize("make", [sent, accepted], ids=["sent", "accepted"])
@pytest.mark.parametrize(
    "request_",
    [ConvertRequest(start=START), ConvertRequest(booking_id="bkg_made_separately")],
    ids=["current", "deprecated"],
)
def test_a_sent_or_accepted_quote_that_already_has_a_booking_is_refused(
    make: Callable[[], Quote], request_: ConvertRequest
) -> None:
    """A quote holding a booking is refused whatever its stored status says."""
    quote = attrs.evolve(make(), booking_id="bkg_old")
    text = refused(lambda: conversion.convert_quote(quote, request_, catalog=CATALOG, at=IN_DATE))
    assert text == (
        f"Cannot convert quote {quote.id} ({quote.status.value}): it already has a booking"
    )


def test_completing_an_unclaimed_quote_is_refused_with_the_full_text() -> None:
    quote = accepted()
    assert refused(lambda: conversion.complete_conversion(quote, "bkg_1", IN_DATE)) == (
        f"Cannot complete conversion of quote {quote.id} (accepted): "
        "it has not been claimed for booking"
    )


def test_completing_a_booked_quote_again_is_refused_with_the_full_text() -> None:
    quote = converted()
    assert refused(lambda: conversion.complete_conversion(quote, "bkg_2", IN_DATE)) == (
        f"Cannot complete conversion of quote {quote.id} (converted): it has already been booked"
    )


@pytest.mark.parametrize(
    "act",
    [
        lambda: convert(accepted(), at=NAIVE),
        lambda: conversion.link_booking(accepted(), "bkg_1", NAIVE),
        lambda: conversion.complete_conversion(convert(accepted())[0], "bkg_1", NAIVE),
    ],
    ids=["begin", "link", "complete"],
)
def test_every_conversion_step_refuses_a_naive_instant_naming_at(
    act: Callable[[], object],
) -> None:
    with pytest.raises(ValueError, match=r"^at must carry a UTC offset$"):
        act()


def test_the_current_form_without_a_catalog_is_a_programming_error() -> None:
    text = r"^converting into a new booking needs the company's catalog$"
    with pytest.raises(ValueError, match=text):
        conversion.convert_quote(accepted(), ConvertRequest(start=START), catalog=None, at=IN_DATE)


# --- refusals: fields -------------------------------------------------------------------


def test_a_missing_start_is_required() -> None:
    assert field_errors(lambda: convert(accepted(), start=None)) == {"start_iso": "Required."}


def test_start_with_a_booking_id_is_refused_with_the_reason() -> None:
    assert field_errors(lambda: convert(accepted(), booking_id="bkg_1")) == {
        "booking_id": "The deprecated bookingId form cannot be combined with startIso."
    }


@pytest.mark.parametrize("service_id", ["svc_nope", "svc_retired", ""])
def test_a_hand_priced_quote_under_an_unknown_service_names_the_id(service_id: str) -> None:
    with pytest.raises(UnknownCatalogItem) as caught:
        convert(accepted(hand_priced=True), service_id=service_id)
    assert caught.value.field_errors == {"service_id": f"No service with id {service_id!r}."}
    assert caught.value.message == f"Unknown service {service_id!r}."


def test_a_catalog_priced_quote_under_another_service_names_its_own() -> None:
    assert field_errors(lambda: convert(accepted(), service_id="svc_deep")) == {
        "service_id": "This quote is priced for service 'svc_standard'; "
        "leave serviceId out or give that id."
    }


def test_the_deprecated_form_names_each_field_it_does_not_use() -> None:
    request = ConvertRequest(
        booking_id="bkg_1", service_id="svc_deep", manual_fee_ids=("fee_pets",)
    )
    errors = field_errors(
        lambda: conversion.convert_quote(accepted(), request, catalog=None, at=IN_DATE)
    )
    assert errors == {
        "service_id": "Only used with startIso.",
        "manual_fee_ids": "Only used with startIso.",
    }


def test_linking_a_blank_booking_id_is_required() -> None:
    errors = field_errors(lambda: conversion.link_booking(accepted(), "  ", IN_DATE))
    assert errors == {"booking_id": "Required."}
