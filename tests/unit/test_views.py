"""The response views: each view's derived JSON Schema accepts what the converter writes
for it, refuses an answer with a field more or less, and times are written in the
company's timezone with its offset."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any, cast
from zoneinfo import ZoneInfo

import attrs
import pytest
from openapi_schema_validator import OAS31Validator

import adapters.http.views
from adapters.http.views import PageView, RenderContext, to_json, view_schema
from adapters.http.views.bookings import (
    availability_view,
    cancelled_bookings_view,
    created_booking_view,
    rescheduled_bookings_view,
)
from adapters.http.views.catalog import catalog_view
from adapters.http.views.crew import crew_member_view
from adapters.http.views.customers import customer_merge_view, customer_view
from adapters.http.views.leads import captured_lead_view, lead_view, lead_with_timeline_view
from adapters.http.views.payments import PaymentView, payment_view
from adapters.http.views.prices import plan_price_view
from adapters.http.views.quotes import quote_view, quote_with_follow_ups_view
from adapters.http.views.webhooks import (
    DeletedWebhookEndpointView,
    attempt_view,
    endpoint_view,
    endpoint_with_secret_view,
    queued_delivery_view,
)
from booking_core import leads, quotes
from booking_core.availability import Slot
from booking_core.bookings import Booking
from booking_core.catalog import FeeDefinition, FeeKind
from booking_core.crew import new_crew_member
from booking_core.customers import (
    Address,
    ChurnLevel,
    ChurnRisk,
    CustomerMerge,
    Lifetime,
    SavedAddress,
    new_customer,
)
from booking_core.demo import DEMO_SELECTION, demo_catalog
from booking_core.ledger import BookingLedger, Kind, LedgerTotals, Method, record_by_hand
from booking_core.pricing import price, price_plan
from booking_core.quotes import ManualLine
from booking_core.webhook_endpoints import Attempt, Delivery, Secret, WebhookEndpoint
from booking_core.webhooks import new_secret
from tests.unit.bookings_support import booked, local, order

AT = datetime(2026, 3, 1, 17, 30, tzinfo=UTC)
CONTEXT = RenderContext(
    zone=ZoneInfo("America/New_York"),
    base_url="https://book.example.com",
    slug="acme",
    custom_domain=None,
)


def top_level_samples() -> list[attrs.AttrsInstance]:
    """One answer of every endpoint's shape, built from domain values as handlers do."""
    catalog = demo_catalog()
    holiday = FeeDefinition(
        "fee_eve", "Eve", FeeKind.DATE, amount_bps=1_500, dates=frozenset({date(2026, 12, 24)})
    )
    catalog = attrs.evolve(catalog, fees=(*catalog.fees, holiday))
    plan = price_plan(catalog, DEMO_SELECTION, at=AT)
    saved = SavedAddress("adr_1", Address("1 Main St", "Boston", "MA", "02101", "Apt 2", "Ring"))
    customer = new_customer(
        customer_id="cus_1",
        company_id="cmp_acme",
        name="Ada",
        email="ada@example.com",
        phone=None,
        at=AT,
        address=saved,
    )
    lifetime = Lifetime(3, 2, 1, 45_000, AT, AT, None)
    lead, _ = leads.capture(
        leads.Enquiry("Cy", email="cy@example.com", message="Hi"),
        company_id="cmp_acme",
        candidates=(),
        new_lead_id="lead_1",
        at=AT,
    )
    lead = leads.update(lead, at=AT, owner="sam", follow_up_on=date(2026, 3, 4), actor="key:1")
    quote = quotes.send(
        quotes.create_quote(
            company_id="cmp_acme",
            at=AT,
            customer_id="cus_1",
            selection=DEMO_SELECTION,
            breakdown=price(catalog, DEMO_SELECTION, at=AT),
        ),
        AT,
    )
    hand = quotes.create_quote(
        company_id="cmp_acme", at=AT, lead_id="lead_1", manual_lines=[ManualLine("Attic", 900)]
    )
    plan_visits = booked(order("weekly"))
    entry = record_by_hand(
        BookingLedger("cmp_acme", "bkg_1"),
        entry_id="pay_1",
        kind=Kind.PAYMENT,
        amount_cents=5_000,
        method=Method.CASH,
        at=AT,
    )
    member = new_crew_member(
        member_id="crew_1",
        company_id="cmp_acme",
        name="Rosa",
        home_zip="10001",
        at=AT,
        service_areas=("10001",),
        excluded_service_ids=("svc_deep_clean",),
    )
    slot = Slot(local(2026, 3, 3, 9), local(2026, 3, 3, 11), ("crew_1",), 12)
    secret = new_secret()
    hook = WebhookEndpoint(
        id="whk_1",
        company_id="cmp_acme",
        url="https://hooks.example.com/in",
        events=("booking.created",),
        secrets=(Secret(value=secret), Secret(value=new_secret(), expires_at=AT)),
        created_at=AT,
        disabled_reason="HTTP 410 Gone",
        failing_since=AT,
        active=False,
    )
    delivery = Delivery(
        id="dlv_1",
        company_id="cmp_acme",
        endpoint_id="whk_1",
        event_id="evt_1",
        event_type="webhook.test",
        body=b"{}",
        next_attempt_at=AT,
        created_at=AT,
    )
    attempt = Attempt(
        id="att_1",
        company_id="cmp_acme",
        endpoint_id="whk_1",
        delivery_id="dlv_1",
        event_id="evt_1",
        event_type="webhook.test",
        attempt=1,
        status_code=None,
        duration_ms=15_000,
        error="no answer within 15 s",
        next_retry_at=AT,
        at=AT,
    )
    return [
        catalog_view(catalog),
        plan_price_view(plan),
        customer_view(customer, lifetime, ChurnRisk(ChurnLevel.LOW, 10), CONTEXT),
        customer_merge_view(
            CustomerMerge(company_id="cmp_1", survivor_id="cus_1", merged_id="cus_2")
        ),
        lead_view(lead, CONTEXT),
        lead_with_timeline_view(lead, CONTEXT),
        captured_lead_view(lead, CONTEXT, folded=False),
        quote_view(quote, AT, CONTEXT),
        quote_with_follow_ups_view(quote, AT, CONTEXT),
        quote_with_follow_ups_view(hand, AT, CONTEXT),
        payment_view(entry, CONTEXT),
        crew_member_view(member, catalog, CONTEXT),
        availability_view([slot], CONTEXT),
        created_booking_view(plan_visits, CONTEXT),
        cancelled_bookings_view(plan_visits, CONTEXT, paid_on(plan_visits)),
        rescheduled_bookings_view(plan_visits, CONTEXT, paid_on(plan_visits)),
        endpoint_view(hook, CONTEXT, previous_secret_expires_at=None),
        endpoint_with_secret_view(hook, secret, CONTEXT, previous_secret_expires_at=AT),
        DeletedWebhookEndpointView(id="whk_1", deleted=True),
        attempt_view(attempt, CONTEXT),
        queued_delivery_view(delivery, CONTEXT),
        *booking_form_samples(catalog, plan_visits[0]),
        *waitlist_samples(),
        *message_samples(),
    ]


def paid_on(bookings: list[Booking]) -> dict[str, LedgerTotals]:
    """Ledger totals for each booking: paid, and a refunded tip (negative tips)."""
    return {b.id: LedgerTotals(paid_cents=12_500, tips_cents=-500) for b in bookings}


def message_samples() -> list[attrs.AttrsInstance]:
    """Messages as ``/api/v1/messages`` lists them: one waiting for a retry, one sent."""
    from adapters.http.views.messages import message_view
    from booking_core.notifications import Message, MessageKind, MessageStatus

    pending = Message(
        id="msg_1",
        company_id="cmp_acme",
        kind=MessageKind.BOOKING_CONFIRMED,
        to="ada@example.com",
        subject="Booked: Standard clean",
        text="Hello",
        html="<p>Hello</p>",
        dedupe_key="booking.confirmed:bkg_1",
        subject_id="bkg_1",
        attempts=1,
        last_error="The mail server answered 451 4.3.0 Try again later",
        next_attempt_at=AT,
        created_at=AT,
    )
    sent = attrs.evolve(pending, status=MessageStatus.SENT, last_error=None, sent_at=AT)
    return [message_view(pending, CONTEXT), message_view(sent, CONTEXT)]


def waitlist_samples() -> list[attrs.AttrsInstance]:
    """A waitlist entry as ``/api/v1/waitlist`` and the public ``waitlist`` show it."""
    from adapters.http.views.waitlist import DeletedWaitlistEntryView, waitlist_entry_view
    from booking_core.waitlist import WaitlistEntry

    entry = WaitlistEntry(
        id="wl_1",
        company_id="cmp_acme",
        service_id="svc_standard_clean",
        zip="10001",
        date_from=AT.date(),
        date_to=AT.date(),
        frequency_slug="one_time",
        name="Ada Lovelace",
        email="ada@example.com",
        created_at=AT,
        phone="+12125550123",
        note="Any morning",
    )
    return [
        waitlist_entry_view(entry, CONTEXT),
        DeletedWaitlistEntryView(id="wl_1", deleted=True),
    ]


def booking_form_samples(catalog: Any, visit: Any) -> list[attrs.AttrsInstance]:
    """A booking form as ``/api/v1`` and the public API show it, and a booking made
    through it with its answers."""
    from adapters.http.views.booking_forms import (
        DeletedBookingFormView,
        booking_form_view,
        public_booking_form_view,
    )
    from booking_core.booking_forms import Answer, BookingForm, Question, QuestionKind

    form = BookingForm(
        id="bf_1",
        company_id="cmp_acme",
        name="Spring clean",
        service_ids=("svc_standard_clean",),
        extra_ids=("ext_oven",),
        questions=(
            Question(id="gate-code", label="Gate code?", required=True),
            Question(id="pets", label="Pets?", kind=QuestionKind.CHOICE, choices=("Cat", "Dog")),
        ),
        created_at=AT,
        updated_at=AT,
    )
    answered = attrs.evolve(
        visit, form_id=form.id, answers=(Answer("gate-code", "Gate code?", "#4521"),)
    )
    return [
        booking_form_view(form, CONTEXT),
        public_booking_form_view(form, catalog),
        DeletedBookingFormView(id="bf_1", deleted=True),
        created_booking_view([answered], CONTEXT),
    ]


def nested(view: object) -> Iterator[attrs.AttrsInstance]:
    """``view`` and every view inside it, at any depth."""
    if isinstance(view, tuple | list):
        for item in view:
            yield from nested(item)
    elif attrs.has(type(view)):
        found = cast(attrs.AttrsInstance, view)
        yield found
        for field in attrs.fields(type(found)):
            yield from nested(getattr(found, field.name))


def samples() -> dict[type, attrs.AttrsInstance]:
    """The first sample of every view class reached from the top-level answers."""
    found: dict[type, attrs.AttrsInstance] = {}
    for top in top_level_samples():
        for view in nested(top):
            found.setdefault(type(view), view)
    return found


def view_classes() -> set[type]:
    """Every view class the package declares (the generic page aside)."""
    package = adapters.http.views
    classes: set[type] = set()
    for module_info in pkgutil.iter_modules(package.__path__, f"{package.__name__}."):
        module = importlib.import_module(module_info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ == module.__name__ and cls.__name__.endswith("View"):
                classes.add(cls)
    return classes - {PageView}


SAMPLES = samples()
CLASSES = sorted(SAMPLES, key=lambda cls: cls.__name__)


def problems(cls: type, body: Any) -> list[str]:
    validator = OAS31Validator(view_schema(cls), format_checker=OAS31Validator.FORMAT_CHECKER)
    return [error.message for error in validator.iter_errors(body)]


def test_the_samples_reach_every_view_class():
    assert set(SAMPLES) == view_classes()


@pytest.mark.parametrize("cls", CLASSES, ids=[cls.__name__ for cls in CLASSES])
def test_each_view_schema_accepts_its_output_and_refuses_a_field_more_or_less(cls: type):
    body = to_json(SAMPLES[cls])
    assert problems(cls, body) == []

    assert problems(cls, {**body, "surprise": 1}), "an extra field passed"
    missing = dict(body)
    missing.pop(next(iter(body)))
    assert problems(cls, missing), "a missing field passed"


def test_a_payment_is_written_camel_case_with_values_nulls_and_a_local_time():
    entry = SAMPLES[PaymentView]
    assert to_json(entry) == {
        "id": "pay_1",
        "kind": "PAYMENT",
        "method": "CASH",
        "offline": True,
        "amountCents": 5_000,
        "note": "",
        "reverses": None,
        "externalRef": None,
        "bookingId": "bkg_1",
        "customerId": None,
        "dispute": False,
        "createdAt": "2026-03-01T12:30:00-05:00",
    }


def test_dates_enums_and_tuples_are_written_as_json_values():
    fees: list[dict[str, Any]] = to_json(top_level_samples()[0])["fees"]  # type: ignore[assignment]
    eve = next(f for f in fees if f["id"] == "fee_eve")
    assert eve["dates"] == ["2026-12-24"]
    assert eve["kind"] == "date"
    assert eve["amountCents"] is None
    weekend = next(f for f in fees if f["weekdays"])
    assert weekend["weekdays"] == sorted(weekend["weekdays"])
    assert isinstance(weekend["zips"], list)


def test_a_derived_schema_names_its_view_and_keeps_the_field_keywords():
    schema = view_schema(PaymentView)
    assert schema["title"] == "PaymentEntry"
    assert schema["additionalProperties"] is False
    properties: dict[str, Any] = schema["properties"]  # type: ignore[assignment]
    assert properties["kind"]["enum"] == [k.value for k in Kind]
    assert properties["reverses"] == {"type": ["string", "null"]}
    assert properties["createdAt"]["format"] == "date-time"
    assert "negative" in properties["amountCents"]["description"]
