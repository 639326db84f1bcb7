"""Converting a quote into a booking (SPEC.md section 3).

The quote is checked and claimed before any booking exists: ``begin_conversion`` checks
state first, then fields, and returns the claimed (converted, not yet booked) quote with
the ``BookingRequest`` to book; storing the claim against the read version keeps two
converts from both proceeding. ``complete_conversion`` records the booking made from it.
``link_booking`` and ``linked_booking`` are the deprecated ``bookingId`` form, which
links only a live booking of the quote's own customer that no other quote holds.

A quote made for a lead alone is converted for the customer the caller finds for its lead
(``for_customer``); with none found it books and links nothing (``no_customer``).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import attrs
from attrs import frozen

from booking_core.booking_orders import start_problem
from booking_core.bookings import ActivityKind, Booking, BookingStatus, record
from booking_core.catalog import Catalog
from booking_core.clock import require_aware
from booking_core.errors import RuleViolation, UnknownCatalogItem, ValidationFailed
from booking_core.pricing import PriceBreakdown, SelectedItem, check_manual_fees
from booking_core.quotes import (
    HAND_PRICED_FREQUENCY,
    ManualLine,
    Quote,
    QuoteStatus,
    answered,
    effective_status,
    evolved,
    refusal,
)


@frozen(kw_only=True)
class ConvertRequest:
    """The body of a convert action. ``booking_id`` alone is the deprecated form."""

    start: datetime | None = None
    service_id: str | None = None
    manual_fee_ids: tuple[str, ...] = ()
    booking_id: str | None = None

    @property
    def deprecated_form(self) -> bool:
        """True for the deprecated form that links a booking made separately."""
        return self.booking_id is not None and self.start is None


@frozen(kw_only=True)
class BookingRequest:
    """The booking a convert asks for; the caller resolves the customer's default address.

    ``quoted`` (a catalog-priced quote's breakdown) or ``manual_lines`` (a hand-priced
    quote's) is what the customer was quoted: the booking's price, honoured as quoted,
    plus the manual fees ``added_fee_ids`` that the quote did not carry. ``manual_fee_ids``
    are every manual fee of the booking's selection (the quote's and the added ones).
    """

    quote_id: str
    company_id: str
    customer_id: str
    lead_id: str | None
    service_id: str
    frequency_slug: str
    parameters: tuple[SelectedItem, ...] = ()
    extras: tuple[SelectedItem, ...] = ()
    coupon_code: str | None = None
    start: datetime
    manual_fee_ids: tuple[str, ...] = ()
    added_fee_ids: tuple[str, ...] = ()
    quoted: PriceBreakdown | None = None
    quoted_total_cents: int
    manual_lines: tuple[ManualLine, ...] = ()


_CONVERT_REFUSALS = {
    QuoteStatus.DRAFT: "it has not been sent yet",
    QuoteStatus.DECLINED: "it was declined",
    QuoteStatus.EXPIRED: "its expiry date has passed",
    QuoteStatus.CONVERTED: "it has already been booked",
}


def begin_conversion(
    quote: Quote, request: ConvertRequest, *, catalog: Catalog, at: datetime
) -> tuple[Quote, BookingRequest]:
    """Check a convert (state first, then fields, then that the quote has a customer:
    ``for_customer``) and claim the quote for its booking.

    The claimed quote is converted (and accepted, if it was only sent) in one step,
    with no ``booking_id`` yet; the ``BookingRequest`` says what to book.
    """
    _require_convertible(quote, at)
    if quote.hand_priced and request.service_id is None:
        raise refusal(
            quote, at, "convert", "a hand-priced quote needs a serviceId to file the booking under"
        )
    service_id = _booking_service(quote, request, catalog)
    start = request.start
    errors: dict[str, str] = {}
    problem = "Required." if start is None else start_problem(start, catalog.zone, at)
    if problem:
        errors["start_iso"] = problem
    if start is not None and request.booking_id is not None:
        errors["booking_id"] = "The deprecated bookingId form cannot be combined with startIso."
    if errors or start is None:
        raise ValidationFailed(errors)
    quoted_fees = quote.selection.manual_fee_ids if quote.selection is not None else ()
    # Fees already on the quote stay; adding one again is not a second charge.
    added_fees = tuple(
        f for f in check_manual_fees(catalog, request.manual_fee_ids) if f not in quoted_fees
    )
    if quote.customer_id is None:
        raise no_customer(quote)
    selection = quote.selection
    booking = BookingRequest(
        quote_id=quote.id,
        company_id=quote.company_id,
        customer_id=quote.customer_id,
        lead_id=quote.lead_id,
        service_id=service_id,
        frequency_slug=selection.frequency_slug if selection else HAND_PRICED_FREQUENCY,
        parameters=selection.parameters if selection else (),
        extras=selection.extras if selection else (),
        coupon_code=selection.coupon_code if selection else None,
        start=start,
        manual_fee_ids=quoted_fees + added_fees,
        added_fee_ids=added_fees,
        quoted=quote.breakdown,
        quoted_total_cents=quote.total_cents,
        manual_lines=quote.manual_lines,
    )
    return _claimed(quote, at), booking


def for_customer(quote: Quote, customer_id: str | None) -> Quote:
    """The quote as converted for ``customer_id``: a quote made for a lead alone records
    the customer the caller found for its lead (None: none yet, the quote unchanged); a
    quote that names its customer keeps it. Saved with the claim, as one change."""
    if quote.customer_id is not None or customer_id is None:
        return quote
    return attrs.evolve(quote, customer_id=customer_id)


def no_customer(quote: Quote) -> RuleViolation:
    """The refusal of a convert of a quote for a lead that no customer stands for yet."""
    return RuleViolation(
        f"Quote {quote.id} is for lead {quote.lead_id} and no customer has its email or "
        "phone yet; create the customer (with a default address) first."
    )


def complete_conversion(quote: Quote, booking_id: str, at: datetime) -> Quote:
    """Record the booking made for a claimed quote; a quote never gets a second booking."""
    require_aware(at, "at")
    if quote.status is not QuoteStatus.CONVERTED:
        raise refusal(quote, at, "complete conversion of", "it has not been claimed for booking")
    if quote.booking_id is not None:
        raise refusal(quote, at, "complete conversion of", "it has already been booked")
    return evolved(quote, at, booking_id=booking_id)


def link_booking(quote: Quote, booking_id: str, at: datetime) -> Quote:
    """Deprecated ``bookingId`` form: link a booking made separately and convert the quote
    (the quote's side; ``linked_booking`` checks and marks the booking)."""
    _require_convertible(quote, at)
    if not booking_id.strip():
        raise ValidationFailed({"booking_id": "Required."})
    return attrs.evolve(_claimed(quote, at), booking_id=booking_id)


def linked_booking(
    quote: Quote, booking: Booking, at: datetime, *, quotes_naming_it: Iterable[Quote] = ()
) -> Booking:
    """The booking a deprecated-form convert links to ``quote``, marked with the quote.

    Refused with ``RuleViolation`` when the booking is not for the quote's customer (a
    quote for a lead that no customer stands for yet has none: ``for_customer``), was
    cancelled (a completed one is a real job, made separately, and is linked), or is
    already linked to another quote: its own ``quote_id``, or one of ``quotes_naming_it``
    (quotes whose ``booking_id`` is this booking, as the caller found them).
    """
    require_aware(at, "at")
    cannot = f"Booking {booking.id} cannot be linked to quote {quote.id}"
    if quote.customer_id is None:
        raise RuleViolation(
            f"{cannot}: the quote is for lead {quote.lead_id} and no customer has its email "
            "or phone yet."
        )
    if booking.customer_id != quote.customer_id:
        raise RuleViolation(
            f"{cannot}: it is for customer {booking.customer_id}, "
            f"the quote for customer {quote.customer_id}."
        )
    if booking.status is BookingStatus.CANCELLED:
        raise RuleViolation(f"{cannot}: it was cancelled; book the quote with startIso instead.")
    others = [q.id for q in quotes_naming_it if q.id != quote.id and q.booking_id == booking.id]
    if booking.quote_id is not None and booking.quote_id != quote.id:
        others.insert(0, booking.quote_id)
    if others:
        raise RuleViolation(f"{cannot}: it is already linked to quote {others[0]}.")
    return record(booking, at, ActivityKind.QUOTE_LINKED, {"quoteId": quote.id}, quote_id=quote.id)


def convert_quote(
    quote: Quote, request: ConvertRequest, *, catalog: Catalog | None, at: datetime
) -> tuple[Quote, BookingRequest | None]:
    """Either form of convert: claim for a new booking, or link one (then no request).

    ``catalog`` may be None only for the deprecated form, which books nothing.
    """
    if not request.deprecated_form:
        if catalog is None:
            raise ValueError("converting into a new booking needs the company's catalog")
        return begin_conversion(quote, request, catalog=catalog, at=at)
    _require_convertible(quote, at)
    unused = {
        "service_id": request.service_id is not None,
        "manual_fee_ids": request.manual_fee_ids,
    }
    errors = {name: "Only used with startIso." for name, given in unused.items() if given}
    if errors or request.booking_id is None:
        raise ValidationFailed(errors)
    return link_booking(quote, request.booking_id, at), None


def _require_convertible(quote: Quote, at: datetime) -> None:
    require_aware(at, "at")
    status = effective_status(quote, at)
    if status in (QuoteStatus.SENT, QuoteStatus.ACCEPTED) and quote.booking_id is None:
        return
    raise refusal(quote, at, "convert", _CONVERT_REFUSALS.get(status, "it already has a booking"))


def _claimed(quote: Quote, at: datetime) -> Quote:
    # Marked accepted first (if it was only sent), then converted: one change, one version.
    return answered(
        quote,
        at,
        status=QuoteStatus.CONVERTED,
        accepted_at=quote.accepted_at or at,
        converted_at=at,
    )


def _booking_service(quote: Quote, request: ConvertRequest, catalog: Catalog) -> str:
    if quote.selection is not None:
        if request.service_id is not None and request.service_id != quote.selection.service_id:
            raise ValidationFailed(
                {
                    "service_id": f"This quote is priced for service "
                    f"{quote.selection.service_id!r}; leave serviceId out or give that id."
                }
            )
        return quote.selection.service_id
    # A hand-priced quote without a serviceId was refused before fields are checked.
    service_id = request.service_id or ""
    service = catalog.services_by_id.get(service_id)
    if service is None or not service.active:
        raise UnknownCatalogItem("service_id", "service", service_id)
    return service.id
