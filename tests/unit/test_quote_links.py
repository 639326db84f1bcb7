"""The deprecated ``bookingId`` form of convert links only a live booking of the quote's
own customer that no other quote holds, and marks the booking with its quote."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from booking_core import conversion, quotes
from booking_core.bookings import ActivityKind, Booking, cancel, complete_job, start_job
from booking_core.clock import FixedClock
from booking_core.conversion import ConvertRequest
from booking_core.drive import TableDriveTime
from booking_core.errors import ConflictError, InvalidTransition, RuleViolation
from booking_core.quotes import ManualLine, Quote, QuoteStatus
from booking_core.services import conversions
from tests import factories
from tests.unit.bookings_support import booked, order

COMPANY = "cmp_acme"
AT = datetime(2026, 6, 1, 13, tzinfo=UTC)
IN_DATE = AT + timedelta(days=1)


def accepted(customer_id: str | None = "cus_1", lead_id: str | None = None) -> Quote:
    made = quotes.create_quote(
        company_id=COMPANY,
        at=AT,
        customer_id=customer_id,
        lead_id=lead_id,
        manual_lines=(ManualLine("Post-renovation clean", 40_000),),
        expires_at=AT + timedelta(days=14),
    )
    return quotes.accept(quotes.send(made, AT), AT + timedelta(hours=1))


def booking_of(customer_id: str, **changes: object) -> Booking:
    (made,) = booked(order(company_id=COMPANY, customer_id=customer_id))
    return attrs.evolve(made, **changes)  # type: ignore[arg-type]


# --- The rule ----------------------------------------------------------------------------


def test_a_booking_of_the_quotes_customer_is_linked_and_marked_with_the_quote():
    quote, booking = accepted(), booking_of("cus_1")
    marked = conversion.linked_booking(quote, booking, IN_DATE)
    assert marked.quote_id == quote.id
    assert marked.version == booking.version + 1
    assert marked.activity[-1].kind is ActivityKind.QUOTE_LINKED
    assert marked.activity[-1].details == {"quoteId": quote.id}
    assert (marked.start, marked.price, marked.status) == (
        booking.start,
        booking.price,
        booking.status,
    )


def test_a_booking_of_another_customer_is_refused_naming_both():
    quote, booking = accepted(), booking_of("cus_2")
    with pytest.raises(RuleViolation) as refused:
        conversion.linked_booking(quote, booking, IN_DATE)
    assert not isinstance(refused.value, InvalidTransition)
    for named in (booking.id, quote.id, "cus_1", "cus_2"):
        assert named in refused.value.message


def test_a_quote_for_a_lead_alone_links_no_booking():
    quote = accepted(customer_id=None, lead_id="lead_1")
    booking = booking_of("cus_1")
    with pytest.raises(RuleViolation) as refused:
        conversion.linked_booking(quote, booking, IN_DATE)
    assert refused.value.message == (
        f"Booking {booking.id} cannot be linked to quote {quote.id}: the quote is for lead "
        "lead_1 and no customer has its email or phone yet."
    )
    # Once a customer stands for the lead, a booking of theirs is linked.
    marked = conversion.linked_booking(conversion.for_customer(quote, "cus_1"), booking, IN_DATE)
    assert marked.quote_id == quote.id


def test_a_cancelled_booking_is_refused_and_a_completed_one_linked():
    quote = accepted()
    cancelled = cancel(booking_of("cus_1"), IN_DATE)
    with pytest.raises(RuleViolation) as refused:
        conversion.linked_booking(quote, cancelled, IN_DATE)
    assert refused.value.message == (
        f"Booking {cancelled.id} cannot be linked to quote {quote.id}: it was cancelled; "
        "book the quote with startIso instead."
    )
    completed = complete_job(start_job(booking_of("cus_1"), AT), IN_DATE)
    assert conversion.linked_booking(quote, completed, IN_DATE).quote_id == quote.id


def test_a_booking_converted_from_another_quote_is_refused():
    quote = accepted()
    booking = booking_of("cus_1", quote_id="quo_other")
    with pytest.raises(RuleViolation, match="already linked to quote quo_other"):
        conversion.linked_booking(quote, booking, IN_DATE)


def test_a_booking_another_quote_names_is_refused():
    quote, booking = accepted(), booking_of("cus_1")
    holder = attrs.evolve(accepted(), id="quo_holder", booking_id=booking.id)
    unrelated = attrs.evolve(accepted(), id="quo_unrelated", booking_id="bkg_else")
    with pytest.raises(RuleViolation, match="already linked to quote quo_holder"):
        conversion.linked_booking(quote, booking, IN_DATE, quotes_naming_it=[unrelated, holder])
    assert conversion.linked_booking(quote, booking, IN_DATE, quotes_naming_it=[unrelated])


def test_a_booking_both_marked_and_named_by_other_quotes_is_refused_naming_its_mark() -> None:
    """The booking's own ``quoteId`` comes first: it is the link the booking shows."""
    quote = accepted()
    booking = booking_of("cus_1", quote_id="quo_marked")
    holder = attrs.evolve(accepted(), id="quo_holder", booking_id=booking.id)
    with pytest.raises(RuleViolation) as refused:
        conversion.linked_booking(quote, booking, IN_DATE, quotes_naming_it=[holder])
    assert refused.value.message == (
        f"Booking {booking.id} cannot be linked to quote {quote.id}: "
        "it is already linked to quote quo_marked."
    )


def test_a_booking_of_another_customer_is_refused_with_the_full_text() -> None:
    quote, booking = accepted(), booking_of("cus_2")
    with pytest.raises(RuleViolation) as refused:
        conversion.linked_booking(quote, booking, IN_DATE)
    assert refused.value.message == (
        f"Booking {booking.id} cannot be linked to quote {quote.id}: "
        "it is for customer cus_2, the quote for customer cus_1."
    )


def test_linking_refuses_a_naive_instant_naming_at() -> None:
    with pytest.raises(ValueError, match=r"^at must carry a UTC offset$"):
        conversion.linked_booking(accepted(), booking_of("cus_1"), datetime(2026, 6, 2, 9, 0))


# --- Through the use case ----------------------------------------------------------------


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def stored(store: MemoryStore, *quotes_and_bookings: Quote | Booking) -> None:
    with MemoryUnitOfWork(store) as uow:
        for item in quotes_and_bookings:
            if isinstance(item, Quote):
                factories.ensure_customer(uow, item.company_id, item.customer_id)
                uow.quotes.add(item)
            else:
                uow.bookings.add_all([item])
        uow.commit()


def link(store: MemoryStore, quote: Quote, booking_id: str) -> Quote:
    claimed, booking = conversions.convert_quote(
        COMPANY,
        quote.id,
        ConvertRequest(booking_id=booking_id),
        uow=MemoryUnitOfWork(store),
        clock=FixedClock(IN_DATE),
        drive=TableDriveTime(default=10),
    )
    assert booking is None
    return claimed


def test_linking_another_customers_booking_is_refused_and_changes_nothing(store):
    quote, booking = accepted(), booking_of("cus_2")
    stored(store, quote, booking)
    with pytest.raises(RuleViolation, match="for customer cus_2"):
        link(store, quote, booking.id)
    assert store.values("quotes")[(COMPANY, quote.id)] == quote
    assert store.values("bookings")[(COMPANY, booking.id)] == booking


def test_a_booking_linked_once_cannot_be_linked_to_a_second_quote(store):
    first, second = accepted(), attrs.evolve(accepted(), id="quo_second")
    booking = booking_of("cus_1")
    stored(store, first, second, booking)

    linked = link(store, first, booking.id)

    assert (linked.status, linked.booking_id) == (QuoteStatus.CONVERTED, booking.id)
    assert store.values("bookings")[(COMPANY, booking.id)].quote_id == first.id
    with pytest.raises(RuleViolation, match=f"already linked to quote {first.id}"):
        link(store, second, booking.id)
    assert store.values("quotes")[(COMPANY, second.id)] == second


def test_a_link_made_before_bookings_were_marked_still_holds_the_booking(store):
    """An older link left the booking unmarked: the quote holding it is found instead."""
    booking = booking_of("cus_1")
    holder = conversion.link_booking(accepted(), booking.id, IN_DATE)
    newcomer = attrs.evolve(accepted(), id="quo_newcomer")
    stored(store, holder, newcomer, booking)
    with pytest.raises(RuleViolation, match=f"already linked to quote {holder.id}"):
        link(store, newcomer, booking.id)


def test_two_links_of_one_booking_at_the_same_moment_cannot_both_win(store):
    """Each saves the booking against the version it read: the later save conflicts."""
    first, second = accepted(), attrs.evolve(accepted(), id="quo_second")
    booking = booking_of("cus_1")
    stored(store, first, second, booking)
    with MemoryUnitOfWork(store) as uow:
        uow.bookings.save_all([conversion.linked_booking(first, booking, IN_DATE)])
        uow.commit()
    with MemoryUnitOfWork(store) as uow, pytest.raises(ConflictError):
        uow.bookings.save_all([conversion.linked_booking(second, booking, IN_DATE)])
