"""Converting a quote into a booking, in one transaction (SPEC.md section 3), priced as
quoted; the deprecated ``bookingId`` form links a live booking of the quote's customer
that no other quote holds, and marks it with the quote."""

from __future__ import annotations

from datetime import datetime

import attrs

from booking_core import conversion
from booking_core.bookings import Booking
from booking_core.catalog import Catalog
from booking_core.customers import Customer
from booking_core.errors import RuleViolation
from booking_core.events import EventType, event, events_for
from booking_core.money import apply_bps
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, DriveTime, UnitOfWork
from booking_core.pricing import (
    FeeLine,
    LineKind,
    PriceBreakdown,
    PriceLine,
    Selection,
    Visit,
    check_manual_fees,
    price,
)
from booking_core.quotes import Quote
from booking_core.services.customers import held_survivor
from booking_core.services.scheduling import book_in_unit


def quoted_price(
    wanted: conversion.BookingRequest, catalog: Catalog, at: datetime
) -> PriceBreakdown:
    """The price of the booking a convert makes (the first visit of a plan): the quote's,
    honoured as quoted (its lines, discounts, coupon, fees, tax, total and duration; a
    hand-priced quote's lines, lasting as long as the service's base job), plus the manual
    fees added on convert that the quote did not carry, with the tax on the taxable
    amount worked out again (the quote's tax rate; the company's for a hand-priced quote,
    which was taxed nothing), each amount rounded half-up once, as pricing does."""
    quoted = wanted.quoted or _hand_lines(wanted, catalog, at)
    if not wanted.added_fee_ids:
        return quoted
    fees = list(quoted.fees)
    for fee_id in check_manual_fees(catalog, wanted.added_fee_ids):
        fee = catalog.fees_by_id[fee_id]
        amount = (
            fee.amount_cents
            if fee.amount_cents is not None
            else apply_bps(quoted.discounted_subtotal_cents, fee.amount_bps or 0)
        )
        fees.append(FeeLine(fee.id, fee.name, fee.kind, amount, fee.taxable))
    fees_cents = sum(f.amount_cents for f in fees)
    added_taxable = sum(f.amount_cents for f in fees[len(quoted.fees) :] if f.taxable)
    taxable = quoted.taxable_cents + added_taxable
    tax = apply_bps(taxable, quoted.tax_rate_bps)
    return attrs.evolve(
        quoted,
        fees=tuple(fees),
        fees_cents=fees_cents,
        taxable_cents=taxable,
        tax_cents=tax,
        total_cents=max(0, quoted.discounted_subtotal_cents + fees_cents + tax),
    )


def _hand_lines(
    wanted: conversion.BookingRequest, catalog: Catalog, at: datetime
) -> PriceBreakdown:
    """A hand-priced quote as a breakdown: its lines as quoted, untaxed, the first lasting
    the service's base job."""
    base = price(catalog, Selection(service_id=wanted.service_id), at=at)
    lines = tuple(
        PriceLine(
            LineKind.BASE,
            f"line_{index}",
            line.description,
            1,
            line.amount_cents,
            line.amount_cents,
            False,
            base.duration_minutes if index == 0 else 0,
        )
        for index, line in enumerate(wanted.manual_lines)
    )
    subtotal = sum(line.amount_cents for line in lines)
    return PriceBreakdown(
        visit=Visit.FIRST,
        lines=lines,
        subtotal_cents=subtotal,
        discounts=(),
        discount_cents=0,
        referral_discount_cents=0,
        discounted_subtotal_cents=subtotal,
        fees=(),
        fees_cents=0,
        taxable_cents=0,
        tax_rate_bps=catalog.tax_rate_bps,
        tax_cents=0,
        total_cents=subtotal,
        duration_minutes=base.duration_minutes,
    )


def convert_quote(
    company_id: str,
    quote_id: str,
    request: conversion.ConvertRequest,
    *,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
) -> tuple[Quote, Booking | None]:
    """Convert a quote: claim it, then book it, in one transaction (SPEC.md section 3).

    The claim is the quote saved as converted against the version read, before any
    booking is added; a refusal anywhere rolls everything back, so no stray booking is
    ever left, and of two converts at the same moment one claims and the other is refused.
    A quote for a lead alone is converted for the customer found for its lead
    (``customer_for_lead``), which the claimed quote records. The booking is priced as
    quoted (``quoted_price``); a plan's later visits are priced from the catalog at their
    own dates, as ``POST /bookings`` prices them, its coupon kept as accepted. Records
    ``booking.created`` for each booking made and ``quote.converted``; the deprecated form
    makes no booking and records ``quote.converted`` alone.
    """
    at = clock.now()
    with uow:
        read = uow.quotes.get(company_id, quote_id)
        if read.customer_id is not None:
            # Its customer held, as a booking holds it. A merge of it that committed since
            # the quote was read re-filed the quote (one version on): read it again, so
            # that it is claimed for the survivor instead of refused as changed.
            held = uow.customers.get(company_id, read.customer_id, held=True)
            if held.merged_into is not None:
                read = uow.quotes.get(company_id, quote_id)
        found = None if read.customer_id is not None else customer_for_lead(uow, read)
        quote = conversion.for_customer(read, found.id if found is not None else None)
        catalog = None if request.deprecated_form else uow.catalogs.get(company_id)
        claimed, wanted = conversion.convert_quote(quote, request, catalog=catalog, at=at)
        if wanted is None:  # deprecated form: link a booking made separately
            booking = uow.bookings.get(company_id, request.booking_id or "")
            marked = conversion.linked_booking(
                quote, booking, at, quotes_naming_it=_quotes_naming(uow, booking)
            )
            uow.quotes.save(claimed, expected_version=read.version)
            # Saved against the version read: of two links of one booking racing, one wins.
            uow.bookings.save_all([marked])
            uow.outbox.add(event(EventType.QUOTE_CONVERTED, claimed, company_id=company_id, at=at))
            uow.commit()
            return claimed, None
        assert catalog is not None
        customer = found or uow.customers.get(company_id, wanted.customer_id, held=True)
        address = customer.default_address
        if address is None:
            raise RuleViolation(f"Customer {customer.id} has no default saved address to book.")
        uow.quotes.save(claimed, expected_version=read.version)
        company = uow.companies.get(company_id)
        selection = Selection(
            service_id=wanted.service_id,
            frequency_slug=wanted.frequency_slug,
            parameters=wanted.parameters,
            extras=wanted.extras,
            coupon_code=wanted.coupon_code,
            manual_fee_ids=wanted.manual_fee_ids,
        )
        made = book_in_unit(
            uow,
            company,
            catalog,
            {"address": address, "quote_id": quote.id},
            selection,
            wanted.start,
            crew_ids=None,
            additional_starts=(),
            customer_id=customer.id,
            at=at,
            drive=drive,
            first_price=quoted_price(wanted, catalog, at),
        )
        done = conversion.complete_conversion(claimed, made[0].id, at)
        uow.quotes.save(done, expected_version=claimed.version)
        uow.outbox.add_all(
            events_for(EventType.BOOKING_CREATED, made, at=at)
            + events_for(EventType.QUOTE_CONVERTED, [done], at=at)
        )
        uow.commit()
    return done, made[0]


def customer_for_lead(uow: UnitOfWork, quote: Quote) -> Customer | None:
    """The customer a quote made for a lead alone stands for now: the company's customer
    with the lead's email (compared as customers' emails are, case-insensitive), else the
    oldest with the lead's E.164 phone; the survivor when that record was merged. None
    when there is none yet (or the quote names no lead)."""
    if quote.lead_id is None:
        return None
    lead = uow.leads.get(quote.company_id, quote.lead_id)
    found = uow.customers.by_email(quote.company_id, lead.email, held=True) if lead.email else None
    if found is None and lead.phone_e164:
        by_phone = uow.customers.by_phone(quote.company_id, lead.phone_e164)
        found = None if by_phone is None else held_survivor(uow, quote.company_id, by_phone.id)
    if found is None:
        return None
    return held_survivor(uow, quote.company_id, found)


def _quotes_naming(uow: UnitOfWork, booking: Booking) -> list[Quote]:
    """The quotes of the booking's customer that hold it: links made by the deprecated
    form before bookings were marked with their quote."""
    found: list[Quote] = []
    after = None
    while True:
        page = uow.quotes.list(
            booking.company_id,
            PageRequest(limit=MAX_LIMIT, after=after),
            customer_id=booking.customer_id,
        )
        found.extend(q for q in page.items if q.booking_id == booking.id)
        if not page.has_more:
            return found
        after = page.next_after
