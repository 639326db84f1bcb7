"""Which use case records which domain event, over the memory unit of work: each change
records exactly its events, in its own unit of work, with the subject as it stands after
the change (what the webhook worker renders); a refused change records nothing."""

from __future__ import annotations

import json
import secrets
from collections import Counter
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import pytest

from adapters.http.views.base import RenderContext
from adapters.http.views.encoding import to_json
from adapters.http.views.payments import payment_view
from adapters.memory import MemoryStore, MemoryUnitOfWork
from adapters.phone import PhonenumbersNormalizer
from booking_core.bookings import Booking, BookingStatus
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.conversion import ConvertRequest
from booking_core.customers import Address, Customer
from booking_core.demo import demo_catalog
from booking_core.drive import TableDriveTime
from booking_core.errors import (
    DomainError,
    InvalidTransition,
    LedgerRuleViolation,
    SlotTaken,
    ValidationFailed,
)
from booking_core.events import Event, EventType
from booking_core.leads import LeadStage
from booking_core.ledger import DASHBOARD_REFUND_NOTE, Kind, Method, PaymentEntry
from booking_core.plans import CancelScope, RescheduleScope
from booking_core.pricing import Selection
from booking_core.quotes import ManualLine, Quote, QuoteStatus
from booking_core.services import companies, scheduling
from booking_core.services.conversions import convert_quote
from booking_core.services.customers import CreateCustomer, create_customer
from booking_core.services.leads import CaptureLead, UpdateLead, capture_lead, update_lead
from booking_core.services.payments import (
    RecordPayment,
    ReversePayment,
    record_payment,
    reverse_payment,
)
from booking_core.services.plan_upkeep import extend_plans
from booking_core.services.processor import (
    ChargeNotice,
    ConnectAccount,
    DisconnectAccount,
    DisputeNotice,
    DisputeWonNotice,
    IngestProcessorEvent,
    Notice,
    Outcome,
    RefundNotice,
    connect_account,
    disconnect_account,
    ingest,
)
from booking_core.services.quotes import (
    ActOnQuote,
    CreateQuote,
    QuoteAction,
    act_on_quote,
    create_quote,
    expire_due_quotes,
)
from booking_core.webhook_endpoints import Secret, WebhookEndpoint
from booking_core.webhooks import new_secret
from entrypoints.worker import Worker
from tests import factories

NOW = datetime(2026, 11, 23, 12, tzinfo=UTC)  # a Monday
DRIVE = TableDriveTime(default=20)
PHONES = PhonenumbersNormalizer()
HOME = Address("1 Main St", "New York", "NY", "10001")
ACCOUNT = "acct_1Events"


class World:
    """One company with the demo catalog and Rosa working every day, over one store."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(NOW)
        self.company = self.add_company("acme")

    def uow(self) -> MemoryUnitOfWork:
        return MemoryUnitOfWork(self.store)

    def add_company(self, slug: str) -> Company:
        made = companies.create_company(
            companies.CreateCompany(slug=slug, name="Acme Maids", catalog=demo_catalog()),
            uow=self.uow(),
            clock=self.clock,
        )
        with self.uow() as unit:
            unit.crew.add(factories.all_week_crew(made.id, NOW))
            unit.commit()
        return made

    def recorded(self) -> list[Event]:
        """The events recorded since the last call, claimed and marked as the worker does."""
        with self.uow() as unit:
            events = list(unit.outbox.claim_undispatched(10_000))
            unit.outbox.mark_dispatched([e.id for e in events], self.clock.now())
            unit.commit()
        return events

    def book(
        self,
        start: datetime,
        frequency: str = "one_time",
        email: str = "ada@example.com",
        address: Address = HOME,
    ) -> list[Booking]:
        return scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=self.company.id,
                service_id="svc_standard_clean",
                frequency_slug=frequency,
                start=start,
                customer=scheduling.CustomerDetails(name="Ada", email=email),
                address=address,
            ),
            uow=self.uow(),
            clock=self.clock,
            drive=DRIVE,
            phones=PHONES,
        )

    def stored_booking(self, booking_id: str) -> Booking:
        with self.uow() as unit:
            return unit.bookings.get(self.company.id, booking_id)


@pytest.fixture
def world() -> World:
    made = World()
    made.recorded()  # creating the company and its crew records nothing; start clean
    return made


def tuesday_at(hour: int) -> datetime:
    # New York is UTC-5 in November.
    return datetime(2026, 11, 24, tzinfo=UTC) + timedelta(hours=hour + 5)


def losing_the_email_race(unit: MemoryUnitOfWork) -> MemoryUnitOfWork:
    """``unit``, whose first look-up of an email finds nothing, as if another request had
    added that customer just after it (its add then finds the email taken)."""
    real = unit.customers.by_email
    calls: list[str] = []

    def first_misses(company_id: str, email: str, *, held: bool = False) -> Customer | None:
        calls.append(email)
        return None if len(calls) == 1 else real(company_id, email, held=held)

    unit.customers.by_email = first_misses  # type: ignore[method-assign]
    return unit


def types(events: list[Event]) -> Counter[EventType]:
    return Counter(e.type for e in events)


def subjects(events: list[Event], kind: EventType) -> list[Any]:
    return [e.subject for e in events if e.type is kind]


def by_id(items: list[Booking]) -> list[Booking]:
    """Events of one change share their instant, so they come in no particular order."""
    return sorted(items, key=lambda b: b.id)


# --- Bookings and customers -----------------------------------------------------------


def test_a_first_booking_records_its_customer_and_its_booking(world: World):
    (made,) = world.book(tuesday_at(9))
    events = world.recorded()
    assert types(events) == {EventType.CUSTOMER_CREATED: 1, EventType.BOOKING_CREATED: 1}
    assert subjects(events, EventType.BOOKING_CREATED) == [world.stored_booking(made.id)]
    (customer,) = subjects(events, EventType.CUSTOMER_CREATED)
    with world.uow() as unit:
        assert customer == unit.customers.get(world.company.id, made.customer_id)
    assert {(e.company_id, e.created_at) for e in events} == {(world.company.id, NOW)}


def test_a_returning_customer_s_booking_records_no_customer(world: World):
    world.book(tuesday_at(9))
    world.recorded()
    (second,) = world.book(tuesday_at(14))
    events = world.recorded()
    assert [(e.type, e.subject) for e in events] == [(EventType.BOOKING_CREATED, second)]


def test_a_returning_customer_s_booking_at_a_new_address_records_customer_updated(
    world: World,
):
    """The booking saves its new address on the customer's record: a webhook consumer
    mirroring customers hears of it (the record as stored, with both addresses)."""
    (first,) = world.book(tuesday_at(9))
    world.recorded()
    elsewhere = attrs.evolve(HOME, line1="40 W 30th St")
    second = world.book(tuesday_at(14), email="ADA@example.com", address=elsewhere)
    events = world.recorded()
    assert types(events) == {EventType.CUSTOMER_UPDATED: 1, EventType.BOOKING_CREATED: 1}
    assert subjects(events, EventType.BOOKING_CREATED) == second
    (customer,) = subjects(events, EventType.CUSTOMER_UPDATED)
    with world.uow() as unit:
        assert customer == unit.customers.get(world.company.id, first.customer_id)
    assert [a.address for a in customer.addresses] == [HOME, elsewhere]


def test_a_plan_records_one_booking_created_per_visit(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly", email="plan@example.com")
    events = world.recorded()
    assert len(visits) > 2
    assert types(events) == {EventType.CUSTOMER_CREATED: 1, EventType.BOOKING_CREATED: len(visits)}
    assert by_id(subjects(events, EventType.BOOKING_CREATED)) == by_id(visits)


def test_a_customer_lost_to_a_racing_first_booking_is_not_recorded_as_created(world: World):
    """The race: the email was free when looked up, taken when added; the booking takes
    the winner's record and records only itself."""
    (first,) = world.book(tuesday_at(9))
    world.recorded()
    unit = losing_the_email_race(world.uow())
    (made,) = scheduling.create_booking(
        scheduling.CreateBooking(
            company_id=world.company.id,
            service_id="svc_standard_clean",
            frequency_slug="one_time",
            start=tuesday_at(14),
            customer=scheduling.CustomerDetails(name="Ada", email="ada@example.com"),
            address=HOME,
        ),
        uow=unit,
        clock=world.clock,
        drive=DRIVE,
        phones=PHONES,
    )
    assert made.customer_id == first.customer_id
    assert types(world.recorded()) == {EventType.BOOKING_CREATED: 1}


def test_a_refused_booking_records_nothing_not_even_its_new_customer(world: World):
    world.book(tuesday_at(9))
    world.recorded()
    with pytest.raises(SlotTaken):
        world.book(tuesday_at(9), email="grace@example.com")
    with pytest.raises(ValidationFailed):
        scheduling.create_booking(
            scheduling.CreateBooking(
                company_id=world.company.id,
                service_id="svc_standard_clean",
                frequency_slug="one_time",
                start=tuesday_at(11),
                customer=scheduling.CustomerDetails(name="Linus", email="linus@example.com"),
                address=HOME,
                days=0,
            ),
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
            phones=PHONES,
        )
    assert world.recorded() == []


def test_create_customer_records_customer_created_only_when_it_creates_one(world: World):
    cmd = CreateCustomer(company_id=world.company.id, name="Grace", email="grace@example.com")
    customer, created = create_customer(cmd, uow=world.uow(), clock=world.clock, phones=PHONES)
    assert created
    assert [(e.type, e.subject) for e in world.recorded()] == [
        (EventType.CUSTOMER_CREATED, customer)
    ]
    _, again = create_customer(cmd, uow=world.uow(), clock=world.clock, phones=PHONES)
    assert not again
    # Lost race: the email was free when looked up, taken when added.
    unit = losing_the_email_race(world.uow())
    _, raced = create_customer(cmd, uow=unit, clock=world.clock, phones=PHONES)
    assert not raced
    with pytest.raises(ValidationFailed):
        create_customer(
            CreateCustomer(company_id=world.company.id, name="", email="nobody@example.com"),
            uow=world.uow(),
            clock=world.clock,
            phones=PHONES,
        )
    assert world.recorded() == []


def test_cancelling_this_and_future_records_one_cancellation_per_visit_cancelled(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly")
    world.recorded()
    changed = scheduling.cancel_booking(
        world.company.id,
        visits[2].code,
        CancelScope.THIS_AND_FUTURE,
        uow=world.uow(),
        clock=world.clock,
    )
    events = world.recorded()
    assert types(events) == {EventType.BOOKING_CANCELLED: len(visits) - 2}
    cancelled = subjects(events, EventType.BOOKING_CANCELLED)
    assert by_id(cancelled) == by_id(changed)
    assert all(b.status is BookingStatus.CANCELLED for b in changed)
    assert by_id(cancelled) == by_id([world.stored_booking(v.id) for v in visits[2:]])


def test_ending_a_plan_after_its_last_visit_cancels_nothing_and_records_nothing(world: World):
    """The last visit is changed (it notes the plan's end) but not cancelled."""
    visits = world.book(tuesday_at(9), frequency="weekly")
    world.recorded()
    after = visits[-1].local_start.date() + timedelta(days=1)
    changed = scheduling.cancel_booking(
        world.company.id,
        visits[0].id,
        CancelScope.PLAN_AFTER,
        after=after,
        uow=world.uow(),
        clock=world.clock,
    )
    assert [b.status for b in changed] == [BookingStatus.SCHEDULED]
    assert world.recorded() == []


def test_rescheduling_records_one_booking_rescheduled_per_visit_moved(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly")
    world.recorded()
    moved = scheduling.reschedule_booking(
        world.company.id,
        visits[1].id,
        visits[1].start + timedelta(hours=2),
        RescheduleScope.THIS_AND_FUTURE,
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    events = world.recorded()
    assert len(moved) == len(visits) - 1
    assert types(events) == {EventType.BOOKING_RESCHEDULED: len(moved)}
    assert by_id(subjects(events, EventType.BOOKING_RESCHEDULED)) == by_id(
        [world.stored_booking(v.id) for v in visits[1:]]
    )
    (one,) = scheduling.reschedule_booking(
        world.company.id,
        visits[0].id,
        visits[0].start + timedelta(hours=1),
        RescheduleScope.THIS,
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.BOOKING_RESCHEDULED, one)]


def test_a_refused_reschedule_records_nothing(world: World):
    (first,) = world.book(tuesday_at(9))
    (second,) = world.book(tuesday_at(14))
    world.recorded()
    with pytest.raises(SlotTaken):
        scheduling.reschedule_booking(
            world.company.id,
            second.id,
            first.start,
            RescheduleScope.THIS,
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )
    assert world.recorded() == []


def test_extending_a_plan_records_booking_created_for_each_new_visit(world: World):
    visits = world.book(tuesday_at(9), frequency="weekly")
    world.recorded()
    assert (
        extend_plans(world.company.id, uow_factory=world.uow, clock=world.clock, drive=DRIVE)[
            0
        ].added
        == 0
    )
    assert world.recorded() == []
    world.clock.advance(timedelta(days=14))
    (result,) = extend_plans(
        world.company.id, uow_factory=world.uow, clock=world.clock, drive=DRIVE
    )
    events = world.recorded()
    assert result.added == 2
    assert types(events) == {EventType.BOOKING_CREATED: 2}
    with world.uow() as unit:
        plan = unit.bookings.of_plan(world.company.id, visits[0].plan_id or "")
    new_visits = plan[len(visits) :]
    assert by_id(subjects(events, EventType.BOOKING_CREATED)) == by_id(new_visits)


# --- Quotes ---------------------------------------------------------------------------


def a_quote(world: World, *, send_now: bool = False, expires_in: timedelta | None = None) -> Quote:
    customer, _ = create_customer(
        CreateCustomer(
            company_id=world.company.id, name="Quinn", email="quoted@example.com", address=HOME
        ),
        uow=world.uow(),
        clock=world.clock,
        phones=PHONES,
    )
    world.recorded()
    return create_quote(
        CreateQuote(
            company_id=world.company.id,
            customer_id=customer.id,
            selection=Selection(service_id="svc_standard_clean"),
            send_now=send_now,
            expires_at=None if expires_in is None else world.clock.now() + expires_in,
        ),
        uow=world.uow(),
        clock=world.clock,
    )


def act(world: World, quote: Quote, action: QuoteAction) -> Quote:
    return act_on_quote(
        ActOnQuote(company_id=world.company.id, quote_id=quote.id, action=action),
        uow=world.uow(),
        clock=world.clock,
    )


def test_quote_actions_record_sent_accepted_and_declined(world: World):
    draft = a_quote(world)
    assert world.recorded() == []  # a draft is no event
    sent = act(world, draft, QuoteAction.SEND)
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_SENT, sent)]
    act(world, sent, QuoteAction.PAUSE)
    act(world, sent, QuoteAction.RESUME)
    assert world.recorded() == []  # follow-ups held and let go: no event
    accepted = act(world, sent, QuoteAction.ACCEPT)
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_ACCEPTED, accepted)]
    with pytest.raises(InvalidTransition):
        act(world, accepted, QuoteAction.REJECT)
    assert world.recorded() == []
    other = a_quote(world, send_now=True)
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_SENT, other)]
    declined = act(world, other, QuoteAction.REJECT)
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_DECLINED, declined)]
    assert declined.status is QuoteStatus.DECLINED


def test_converting_a_quote_records_its_booking_and_quote_converted(world: World):
    quote = a_quote(world, send_now=True)
    world.recorded()
    done, booking = convert_quote(
        world.company.id,
        quote.id,
        ConvertRequest(start=tuesday_at(14)),
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    assert booking is not None
    events = world.recorded()
    assert types(events) == {EventType.BOOKING_CREATED: 1, EventType.QUOTE_CONVERTED: 1}
    assert subjects(events, EventType.BOOKING_CREATED) == [world.stored_booking(booking.id)]
    (converted,) = subjects(events, EventType.QUOTE_CONVERTED)
    assert converted == done
    assert (done.status, done.booking_id) == (QuoteStatus.CONVERTED, booking.id)


def test_a_refused_convert_records_nothing_and_the_old_form_records_the_quote_only(
    world: World,
):
    quote = a_quote(world, send_now=True)
    (taken,) = world.book(tuesday_at(14), email="other@example.com")
    world.recorded()
    with pytest.raises(SlotTaken):
        convert_quote(
            world.company.id,
            quote.id,
            ConvertRequest(start=taken.start),
            uow=world.uow(),
            clock=world.clock,
            drive=DRIVE,
        )
    assert world.recorded() == []
    (own,) = world.book(tuesday_at(9) + timedelta(days=1), email="quoted@example.com")
    assert own.customer_id == quote.customer_id
    world.recorded()
    linked, none = convert_quote(
        world.company.id,
        quote.id,
        ConvertRequest(booking_id=own.id),
        uow=world.uow(),
        clock=world.clock,
        drive=DRIVE,
    )
    assert none is None
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_CONVERTED, linked)]


def test_expire_due_quotes_stores_each_expiry_once_and_records_quote_expired(world: World):
    due = a_quote(world, send_now=True, expires_in=timedelta(days=1))
    later = create_quote(
        CreateQuote(
            company_id=world.company.id,
            customer_id=due.customer_id,
            manual_lines=(),
            selection=Selection(service_id="svc_standard_clean"),
            send_now=True,
            expires_at=NOW + timedelta(days=10),
        ),
        uow=world.uow(),
        clock=world.clock,
    )
    draft = create_quote(
        CreateQuote(
            company_id=world.company.id,
            customer_id=due.customer_id,
            selection=Selection(service_id="svc_standard_clean"),
            expires_at=NOW + timedelta(days=1),
        ),
        uow=world.uow(),
        clock=world.clock,
    )
    other = world.add_company("other")
    elsewhere = create_quote(
        CreateQuote(
            company_id=other.id,
            lead_id=capture_lead(
                CaptureLead(company_id=other.id, name="Grace", email="grace@example.com"),
                uow=world.uow(),
                clock=world.clock,
                phones=PHONES,
            )[0].id,
            manual_lines=(ManualLine("Windows", 9_000),),
            send_now=True,
            expires_at=NOW + timedelta(hours=1),
        ),
        uow=world.uow(),
        clock=world.clock,
    )
    world.recorded()
    assert expire_due_quotes(None, uow_factory=world.uow, clock=world.clock) == []
    world.clock.advance(timedelta(days=2))
    mine = expire_due_quotes(world.company.id, uow_factory=world.uow, clock=world.clock)
    assert [q.id for q in mine] == [due.id]
    with world.uow() as unit:
        stored = unit.quotes.get(world.company.id, due.id)
        untouched = [unit.quotes.get(world.company.id, q.id) for q in (later, draft)]
    assert stored.status is QuoteStatus.EXPIRED
    assert [q.status for q in untouched] == [QuoteStatus.SENT, QuoteStatus.DRAFT]
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.QUOTE_EXPIRED, stored)]
    # Every company (None): only the other company's quote is still to expire.
    (theirs,) = expire_due_quotes(None, uow_factory=world.uow, clock=world.clock)
    assert (theirs.id, theirs.status) == (elsewhere.id, QuoteStatus.EXPIRED)
    assert [(e.type, e.subject, e.company_id) for e in world.recorded()] == [
        (EventType.QUOTE_EXPIRED, theirs, other.id)
    ]
    assert expire_due_quotes(None, uow_factory=world.uow, clock=world.clock) == []
    assert world.recorded() == []


# --- Leads ----------------------------------------------------------------------------


def test_leads_record_created_then_updated_for_a_folded_enquiry_and_a_change(world: World):
    enquiry = CaptureLead(company_id=world.company.id, name="Grace", email="grace@example.com")
    lead, folded = capture_lead(enquiry, uow=world.uow(), clock=world.clock, phones=PHONES)
    assert not folded
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.LEAD_CREATED, lead)]
    again, folded = capture_lead(enquiry, uow=world.uow(), clock=world.clock, phones=PHONES)
    assert folded
    assert again.id == lead.id
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.LEAD_UPDATED, again)]
    change = UpdateLead(company_id=world.company.id, lead_id=lead.id, stage=LeadStage.CONTACTED)
    changed = update_lead(change, uow=world.uow(), clock=world.clock)
    assert [(e.type, e.subject) for e in world.recorded()] == [(EventType.LEAD_UPDATED, changed)]
    update_lead(change, uow=world.uow(), clock=world.clock)  # the same stage: no change
    assert world.recorded() == []
    won = UpdateLead(company_id=world.company.id, lead_id=lead.id, stage=LeadStage.WON)
    update_lead(won, uow=world.uow(), clock=world.clock)
    world.recorded()
    with pytest.raises(InvalidTransition):  # a won lead is final
        update_lead(change, uow=world.uow(), clock=world.clock)
    assert world.recorded() == []


# --- Payments -------------------------------------------------------------------------


def render(entry: PaymentEntry) -> dict[str, object]:
    """The entry as the API renders it (what a webhook's ``data`` is)."""
    ctx = RenderContext(
        zone=ZoneInfo("America/New_York"),
        base_url="https://book.example",
        slug="acme",
        custom_domain=None,
    )
    return to_json(payment_view(entry, ctx))


def one_payment_event(world: World) -> tuple[EventType, PaymentEntry]:
    (event,) = world.recorded()
    assert isinstance(event.subject, PaymentEntry)
    return event.type, event.subject


def hand(world: World, booking: Booking, kind: Kind, cents: int, **fields: object) -> PaymentEntry:
    return record_payment(
        RecordPayment(
            company_id=world.company.id,
            booking_id=booking.id,
            kind=kind,
            amount_cents=cents,
            **fields,  # type: ignore[arg-type]
        ),
        uow=world.uow(),
        clock=world.clock,
    )


def test_money_by_hand_records_recorded_refunded_and_reversed(world: World):
    (job,) = world.book(tuesday_at(9))
    world.recorded()
    paid = hand(world, job, Kind.PAYMENT, 14_000, method=Method.CASH)
    assert one_payment_event(world) == (EventType.PAYMENT_RECORDED, paid)
    tip = hand(world, job, Kind.TIP, 2_000, method=Method.CASH)
    assert one_payment_event(world) == (EventType.PAYMENT_RECORDED, tip)
    refund = hand(world, job, Kind.REFUND, 4_000, note="Window not cleaned", reverses=paid.id)
    assert one_payment_event(world) == (EventType.PAYMENT_REFUNDED, refund)
    data = render(refund)
    assert (data["bookingId"], data["amountCents"], data["note"]) == (
        job.id,
        -4_000,
        "Window not cleaned",
    )
    with pytest.raises(LedgerRuleViolation):
        hand(world, job, Kind.REFUND, 99_000)
    assert world.recorded() == []
    reversal = reverse_payment(
        ReversePayment(company_id=world.company.id, entry_id=tip.id, note="Typed twice"),
        uow=world.uow(),
        clock=world.clock,
    )
    assert one_payment_event(world) == (EventType.PAYMENT_REVERSED, reversal)
    with pytest.raises(DomainError):
        reverse_payment(
            ReversePayment(company_id=world.company.id, entry_id=tip.id, note="Again"),
            uow=world.uow(),
            clock=world.clock,
        )
    assert world.recorded() == []


def deliver(world: World, notice: Notice, event_id: str | None = None) -> Outcome:
    result = ingest(
        IngestProcessorEvent(
            event_id=event_id or f"evt_{secrets.token_hex(8)}",
            event_type="test",
            account_id=ACCOUNT,
            notice=notice,
        ),
        uow=world.uow(),
        clock=world.clock,
    )
    return result.outcome


def test_card_money_records_per_spec_section_6(world: World):
    connect_account(
        ConnectAccount(company_id=world.company.id, account_id=ACCOUNT),
        uow=world.uow(),
        clock=world.clock,
    )
    (job,) = world.book(tuesday_at(9))
    world.recorded()

    deliver(world, ChargeNotice(booking_id=job.id, payment_ref="pi_job", amount_cents=14_000))
    kind, charge = one_payment_event(world)
    assert (kind, charge.kind) == (EventType.PAYMENT_RECORDED, Kind.PAYMENT)
    deliver(
        world, ChargeNotice(booking_id=job.id, payment_ref="pi_tip", amount_cents=3_000, tip=True)
    )
    kind, tip = one_payment_event(world)
    assert (kind, tip.kind) == (EventType.PAYMENT_RECORDED, Kind.TIP)

    # A refund made in the processor's dashboard: job money, with the dashboard note.
    deliver(world, RefundNotice(card_refs=("pi_job",), amount_cents=2_000, from_dashboard=True))
    kind, dashboard = one_payment_event(world)
    data = render(dashboard)
    assert kind is EventType.PAYMENT_REFUNDED
    assert (data["kind"], data["bookingId"], data["amountCents"], data["note"]) == (
        "REFUND",
        job.id,
        -2_000,
        DASHBOARD_REFUND_NOTE,
    )

    # A card tip refunded: TIP_REFUND naming the tip.
    deliver(world, RefundNotice(card_refs=("pi_tip",), amount_cents=1_000, from_dashboard=False))
    kind, tip_refund = one_payment_event(world)
    data = render(tip_refund)
    assert kind is EventType.PAYMENT_REFUNDED
    assert (data["kind"], data["reverses"], data["bookingId"], data["amountCents"]) == (
        "TIP_REFUND",
        tip.id,
        job.id,
        -1_000,
    )
    assert data["note"] == ""

    # A dispute of job money and of the rest of the tip; the bank returns the job money.
    deliver(world, DisputeNotice(card_refs=("pi_job",), amount_cents=5_000))
    kind, dispute = one_payment_event(world)
    assert (kind, dispute.kind) == (EventType.PAYMENT_DISPUTED, Kind.DISPUTE)
    deliver(world, DisputeNotice(card_refs=("pi_tip",), amount_cents=2_000))
    kind, disputed_tip = one_payment_event(world)
    assert (kind, disputed_tip.kind) == (EventType.PAYMENT_DISPUTED, Kind.TIP_REFUND)
    deliver(world, DisputeWonNotice(card_refs=("pi_job",), returned_cents=5_000))
    kind, won = one_payment_event(world)
    assert (kind, won.kind, won.reverses) == (EventType.PAYMENT_REVERSED, Kind.REVERSAL, dispute.id)

    # After disconnecting, a dashboard refund on the old account still lands and fires.
    disconnect_account(
        DisconnectAccount(company_id=world.company.id), uow=world.uow(), clock=world.clock
    )
    deliver(world, RefundNotice(card_refs=("pi_job",), amount_cents=1_500, from_dashboard=True))
    kind, late = one_payment_event(world)
    data = render(late)
    assert kind is EventType.PAYMENT_REFUNDED
    assert (data["bookingId"], data["amountCents"], data["note"]) == (
        job.id,
        -1_500,
        DASHBOARD_REFUND_NOTE,
    )


def test_a_duplicate_or_ignored_processor_event_records_nothing(world: World):
    connect_account(
        ConnectAccount(company_id=world.company.id, account_id=ACCOUNT),
        uow=world.uow(),
        clock=world.clock,
    )
    (job,) = world.book(tuesday_at(9))
    world.recorded()
    notice = ChargeNotice(booking_id=job.id, payment_ref="pi_1", amount_cents=10_000)
    assert deliver(world, notice, event_id="evt_once") is Outcome.INGESTED
    assert len(world.recorded()) == 1
    assert deliver(world, notice, event_id="evt_once") is Outcome.DUPLICATE
    no_dispute = DisputeWonNotice(card_refs=("pi_1",), returned_cents=1_000)
    assert deliver(world, no_dispute) is Outcome.IGNORED
    assert deliver(
        world, RefundNotice(card_refs=("pi_x",), amount_cents=1, from_dashboard=True)
    ) is (Outcome.IGNORED)
    assert world.recorded() == []


def test_the_worker_sweeps_lapsed_quotes_so_quote_expired_goes_out(world: World):
    """``booking worker`` stores lapsed expiries (once in ``--once``, every
    ``sweep_interval`` in its loop), and the ``quote.expired`` event is dispatched."""
    sent: list[bytes] = []

    @attrs.frozen
    class Answer:
        outcome: str = "delivered"
        status_code: int | None = 200
        duration_ms: int = 1
        error: str | None = None
        retry_after: int | None = None

    def send(url: str, headers: object, body: bytes) -> Answer:
        sent.append(body)
        return Answer()

    with world.uow() as unit:
        unit.webhooks.add(
            WebhookEndpoint(
                id="whk_expiry",
                company_id=world.company.id,
                url="https://hooks.example.com/q",
                events=("quote.expired",),
                secrets=(Secret(value=new_secret()),),
                created_at=NOW,
            )
        )
        unit.commit()
    quote = a_quote(world, send_now=True, expires_in=timedelta(hours=2))
    worker = Worker(
        uow=world.uow,
        render=lambda e, _: json.dumps({"id": e.id, "type": e.type}).encode(),
        send=send,
        clock=world.clock,
        random=lambda: 0.5,
    )
    assert worker.run_once().expired_quotes == 0
    world.clock.advance(timedelta(hours=3))
    done = worker.run_once()
    assert (done.expired_quotes, done.delivered) == (1, 1)
    assert [json.loads(body)["type"] for body in sent] == ["quote.expired"]
    assert worker.run_once().expired_quotes == 0  # stored: never expired twice
    with world.uow() as unit:
        assert unit.quotes.get(world.company.id, quote.id).status is QuoteStatus.EXPIRED


def test_a_merge_records_customer_updated_and_customer_merged_and_re_files_quotes(
    world: World,
):
    from booking_core.customers import CustomerMerge
    from booking_core.errors import RuleViolation
    from booking_core.services.customers import MergeCustomers, merge_customers

    survivor, merged = (
        factories.customer(world.company.id, email=f"{n}@example.com") for n in ("s", "m")
    )
    quote = factories.quote(world.company.id, customer_id=merged.id)
    with world.uow() as unit:
        unit.customers.add(survivor)
        unit.customers.add(merged)
        unit.quotes.add(quote)
        unit.commit()

    kept = merge_customers(
        MergeCustomers(company_id=world.company.id, survivor_id=survivor.id, merged_id=merged.id),
        uow=world.uow(),
        clock=world.clock,
    )

    events = world.recorded()
    assert len(events) == 2
    assert {e.type: e.subject for e in events} == {
        EventType.CUSTOMER_UPDATED: kept,
        EventType.CUSTOMER_MERGED: CustomerMerge(
            company_id=world.company.id, survivor_id=survivor.id, merged_id=merged.id
        ),
    }
    with world.uow() as unit:
        refiled = unit.quotes.get(world.company.id, quote.id)
    assert (refiled.customer_id, refiled.version) == (survivor.id, quote.version + 1)
    assert refiled.updated_at == NOW
    with pytest.raises(RuleViolation):
        merge_customers(
            MergeCustomers(
                company_id=world.company.id, survivor_id=survivor.id, merged_id=merged.id
            ),
            uow=world.uow(),
            clock=world.clock,
        )
    assert world.recorded() == []
