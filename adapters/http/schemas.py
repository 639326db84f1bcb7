"""JSON Schemas (2020-12, as OpenAPI 3.1 uses) of what ``render.Renderer`` returns.

One constant per render method (``CATALOG_SCHEMA`` for ``Renderer.catalog``, and so on),
named by endpoints as their ``response``; the OpenAPI generator hoists every schema with a
``title`` into ``components/schemas`` and refers to it there.

Every object is closed (``additionalProperties: false``) and lists every property as
required: the renderer always writes every key, using null for an absent value. Shared
pieces are the same Python objects (the breakdown inside a quote, the address inside a
customer), so one change reaches every place they appear. Enumerations are taken from the
domain's enums so they cannot drift.
"""

from __future__ import annotations

import enum
from typing import Any

from booking_core.catalog import FeeKind
from booking_core.customers import ChurnLevel
from booking_core.leads import LeadStage, TimelineKind
from booking_core.ledger import Kind, Method
from booking_core.pricing import DiscountKind, LineKind, Visit
from booking_core.quotes import FollowUpStatus, QuoteStatus

Schema = dict[str, Any]

STRING: Schema = {"type": "string"}
BOOLEAN: Schema = {"type": "boolean"}
INTEGER: Schema = {"type": "integer"}
COUNT: Schema = {"type": "integer", "minimum": 0}
CENTS: Schema = {"type": "integer", "description": "US cents."}
BPS: Schema = {"type": "integer", "minimum": 0, "maximum": 10_000, "description": "Basis points."}
MINUTES: Schema = {"type": "integer", "minimum": 0}
INSTANT: Schema = {
    "type": "string",
    "format": "date-time",
    "description": "ISO 8601 in the company's timezone, with offset.",
}
DAY: Schema = {"type": "string", "format": "date"}
STRINGS: Schema = {"type": "array", "items": STRING}


def array(items: Schema) -> Schema:
    """An array of ``items``."""
    return {"type": "array", "items": items}


def one_of(values: type[enum.Enum]) -> Schema:
    """A string taken from a domain enum."""
    return {"type": "string", "enum": [member.value for member in values]}


def nullable(schema: Schema) -> Schema:
    """``schema`` or null: a type list for a plain type, ``anyOf`` for a named schema."""
    if "title" in schema or not isinstance(schema.get("type"), str):
        return {"anyOf": [schema, {"type": "null"}]}
    return {**schema, "type": [schema["type"], "null"]}


def closed(title: str | None, description: str, properties: dict[str, Schema]) -> Schema:
    """An object with exactly ``properties``, every one of them required."""
    schema: Schema = {
        "type": "object",
        "description": description,
        "properties": properties,
        "required": list(properties),
        "additionalProperties": False,
    }
    return {"title": title, **schema} if title else schema


def extend(base: Schema, title: str, description: str, properties: dict[str, Schema]) -> Schema:
    """``base`` with more properties: a closed object of its own, named ``title``."""
    return closed(title, description, {**base["properties"], **properties})


# -- catalog and prices ----------------------------------------------------------------

PARAMETER_SCHEMA = closed(
    "Parameter",
    "A counted property of a job (e.g. bedrooms): each unit adds price and minutes.",
    {
        "id": STRING,
        "name": STRING,
        "priceCents": {**CENTS, "minimum": 0},
        "durationMinutes": MINUTES,
        "minQuantity": COUNT,
        "maxQuantity": COUNT,
    },
)

EXTRA_SCHEMA = closed(
    "Extra",
    "An add-on; frequencySlugs empty means every frequency.",
    {
        "id": STRING,
        "name": STRING,
        "priceCents": {**CENTS, "minimum": 0},
        "durationMinutes": MINUTES,
        "maxQuantity": {"type": "integer", "minimum": 1},
        "frequencySlugs": STRINGS,
        "discountExempt": BOOLEAN,
        "firstVisitOnly": BOOLEAN,
    },
)

SERVICE_SCHEMA = closed(
    "Service",
    "A bookable service with its parameters and extras.",
    {
        "id": STRING,
        "name": STRING,
        "description": STRING,
        "basePriceCents": {**CENTS, "minimum": 0},
        "baseDurationMinutes": MINUTES,
        "taxable": BOOLEAN,
        "parameters": array(PARAMETER_SCHEMA),
        "extras": array(EXTRA_SCHEMA),
    },
)

FEE_SCHEMA = closed(
    "FeeDefinition",
    "A surcharge: exactly one of amountCents (fixed) and amountBps (percentage of the "
    "post-discount subtotal) is set.",
    {
        "id": STRING,
        "name": STRING,
        "kind": one_of(FeeKind),
        "amountCents": nullable({"type": "integer", "minimum": 0}),
        "amountBps": nullable({"type": "integer", "minimum": 0, "maximum": 100_000}),
        "taxable": BOOLEAN,
        "weekdays": array({"type": "integer", "minimum": 1, "maximum": 7}),
        "dates": array(DAY),
        "zips": STRINGS,
        "serviceIds": STRINGS,
    },
)

FREQUENCY_SCHEMA = closed(
    "Frequency",
    "A plan: one_time (no interval) or recurring every intervalDays.",
    {
        "slug": STRING,
        "name": STRING,
        "intervalDays": nullable({"type": "integer", "minimum": 1}),
        "discountBps": BPS,
    },
)

INDUSTRY_SCHEMA = closed(
    "Industry",
    "A line of business and its active services.",
    {"id": STRING, "name": STRING, "services": array(SERVICE_SCHEMA)},
)

CATALOG_SCHEMA = closed(
    "Catalog",
    "The company's catalog and the fee definitions in force.",
    {
        "industries": array(INDUSTRY_SCHEMA),
        "frequencies": array(FREQUENCY_SCHEMA),
        "fees": array(FEE_SCHEMA),
        "taxRateBps": BPS,
        "timezone": {"type": "string", "description": "IANA zone name."},
    },
)

PRICE_LINE_SCHEMA = closed(
    "PriceLine",
    "One charged line: quantity x unitPriceCents = amountCents.",
    {
        "kind": one_of(LineKind),
        "id": STRING,
        "name": STRING,
        "quantity": INTEGER,
        "unitPriceCents": CENTS,
        "amountCents": CENTS,
        "discountable": BOOLEAN,
        "durationMinutes": MINUTES,
    },
)

DISCOUNT_LINE_SCHEMA = closed(
    "DiscountLine",
    "One discount, positive, taken off the subtotal.",
    {"kind": one_of(DiscountKind), "name": STRING, "code": nullable(STRING), "amountCents": CENTS},
)

FEE_LINE_SCHEMA = closed(
    "FeeLine",
    "One fee added after discounts.",
    {
        "id": STRING,
        "name": STRING,
        "kind": one_of(FeeKind),
        "amountCents": CENTS,
        "taxable": BOOLEAN,
    },
)

BREAKDOWN_SCHEMA = closed(
    "PriceBreakdown",
    "A priced visit: subtotal - discounts + fees + tax = total, to the cent.",
    {
        "visit": one_of(Visit),
        "lines": array(PRICE_LINE_SCHEMA),
        "subtotalCents": CENTS,
        "discounts": array(DISCOUNT_LINE_SCHEMA),
        "discountCents": CENTS,
        "referralDiscountCents": CENTS,
        "discountedSubtotalCents": CENTS,
        "fees": array(FEE_LINE_SCHEMA),
        "feesCents": CENTS,
        "taxableCents": CENTS,
        "taxRateBps": BPS,
        "taxCents": CENTS,
        "totalCents": CENTS,
        "durationMinutes": MINUTES,
    },
)

PLAN_PRICE_SCHEMA = closed(
    "PlanPrice",
    "The first visit and, for a recurring frequency, each later visit.",
    {
        "currency": {"type": "string", "const": "usd"},
        "firstVisit": BREAKDOWN_SCHEMA,
        "laterVisits": nullable(BREAKDOWN_SCHEMA),
    },
)

# -- customers, leads --------------------------------------------------------------------

ADDRESS_SCHEMA = closed(
    "Address",
    "A US street address.",
    {
        "line1": STRING,
        "line2": STRING,
        "city": STRING,
        "state": STRING,
        "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
        "accessNotes": STRING,
    },
)

SAVED_ADDRESS_SCHEMA = extend(
    ADDRESS_SCHEMA,
    "SavedAddress",
    "An address kept on a customer's record.",
    {"id": STRING, "default": BOOLEAN},
)

CHURN_RISK_SCHEMA = closed(
    "ChurnRisk",
    "Churn risk: a score of 0..100 and its level.",
    {"level": one_of(ChurnLevel), "score": {"type": "integer", "minimum": 0, "maximum": 100}},
)

LIFETIME_SCHEMA = closed(
    "Lifetime",
    "Lifetime statistics over every visit.",
    {
        "bookings": COUNT,
        "completed": COUNT,
        "cancelled": COUNT,
        "paidCents": CENTS,
        "firstVisitAt": nullable(INSTANT),
        "lastVisitAt": nullable(INSTANT),
        "nextVisitAt": nullable(INSTANT),
    },
)

CUSTOMER_SCHEMA = closed(
    "Customer",
    "A customer with churn risk and lifetime statistics.",
    {
        "id": STRING,
        "name": STRING,
        "email": STRING,
        "phone": nullable(STRING),
        "addresses": array(SAVED_ADDRESS_SCHEMA),
        "defaultAddressId": nullable(STRING),
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
        "churnRisk": CHURN_RISK_SCHEMA,
        "lifetime": LIFETIME_SCHEMA,
    },
)

LEAD_SCHEMA = closed(
    "Lead",
    "An enquiry being worked.",
    {
        "id": STRING,
        "name": STRING,
        "email": nullable(STRING),
        "phone": nullable({"type": "string", "description": "E.164."}),
        "stage": one_of(LeadStage),
        "open": BOOLEAN,
        "owner": nullable(STRING),
        "followUpOn": nullable(DAY),
        "source": STRING,
        "message": STRING,
        "serviceId": nullable(STRING),
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
    },
)

TIMELINE_ENTRY_SCHEMA = closed(
    "TimelineEntry",
    "One event in a lead's history.",
    {
        "at": INSTANT,
        "kind": one_of(TimelineKind),
        "details": {"type": "object", "additionalProperties": STRING},
    },
)

LEAD_WITH_TIMELINE_SCHEMA = extend(
    LEAD_SCHEMA,
    "LeadWithTimeline",
    "A lead with its full timeline, oldest event first.",
    {"timeline": array(TIMELINE_ENTRY_SCHEMA)},
)

CAPTURED_LEAD_SCHEMA = extend(
    LEAD_WITH_TIMELINE_SCHEMA,
    "CapturedLead",
    "The lead an enquiry started (201) or folded into (200).",
    {"folded": {"type": "boolean", "description": "True when folded into an open lead."}},
)
"""``POST /leads``: ``Renderer.lead(..., timeline=True)`` plus ``folded``."""

# -- quotes, payments --------------------------------------------------------------------

MANUAL_LINE_SCHEMA = closed(
    "ManualLine", "A hand-priced line.", {"description": STRING, "amountCents": CENTS}
)

FOLLOW_UP_SCHEMA = closed(
    "FollowUp",
    "A reminder to the customer.",
    {"dueAt": INSTANT, "status": one_of(FollowUpStatus)},
)

QUOTE_SCHEMA = closed(
    "Quote",
    "A quote as of now (a sent quote past expiry reads as expired).",
    {
        "id": STRING,
        "status": one_of(QuoteStatus),
        "customerId": nullable(STRING),
        "leadId": nullable(STRING),
        "serviceId": nullable(STRING),
        "handPriced": BOOLEAN,
        "frequencySlug": nullable(STRING),
        "manualLines": array(MANUAL_LINE_SCHEMA),
        "price": nullable(BREAKDOWN_SCHEMA),
        "totalCents": CENTS,
        "expiresAt": nullable(INSTANT),
        "publicUrl": {"type": "string", "format": "uri"},
        "followUpsPaused": BOOLEAN,
        "bookingId": nullable(STRING),
        "message": STRING,
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
        "sentAt": nullable(INSTANT),
        "acceptedAt": nullable(INSTANT),
        "declinedAt": nullable(INSTANT),
        "convertedAt": nullable(INSTANT),
    },
)

QUOTE_WITH_FOLLOW_UPS_SCHEMA = extend(
    QUOTE_SCHEMA,
    "QuoteWithFollowUps",
    "A quote and its follow-ups.",
    {"followUps": array(FOLLOW_UP_SCHEMA)},
)

PAYMENT_SCHEMA = closed(
    "PaymentEntry",
    "One ledger entry; never changed once written.",
    {
        "id": STRING,
        "kind": one_of(Kind),
        "method": one_of(Method),
        "offline": BOOLEAN,
        "amountCents": {**CENTS, "description": "US cents; negative for money given back."},
        "note": STRING,
        "reverses": nullable(STRING),
        "externalRef": nullable(STRING),
        "bookingId": nullable(STRING),
        "customerId": nullable(STRING),
        "dispute": BOOLEAN,
        "createdAt": INSTANT,
    },
)
