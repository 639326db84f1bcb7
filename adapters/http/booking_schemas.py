"""JSON Schemas of the scheduling answers (``routes/bookings.py``): open slots and
bookings, built from the shared pieces of ``adapters.http.schemas``."""

from __future__ import annotations

from adapters.http.schemas import (
    ADDRESS_SCHEMA,
    BREAKDOWN_SCHEMA,
    INSTANT,
    MINUTES,
    STRING,
    STRINGS,
    array,
    closed,
    extend,
    nullable,
    one_of,
)
from booking_core.bookings import ActivityKind, BookingStatus

SLOT_SCHEMA = closed(
    "Slot",
    "An open start: the job's first day, the crew that would do it, and the longest of "
    "their drives from the previous stop.",
    {"startIso": INSTANT, "endIso": INSTANT, "crewIds": STRINGS, "driveMinutes": MINUTES},
)

AVAILABILITY_SCHEMA = closed(
    "Availability",
    "Open start times, ranked by drive minutes, then by time.",
    {"data": array(SLOT_SCHEMA)},
)

BOOKING_SCHEMA = closed(
    "Booking",
    "One booking (one visit of a plan, or one job).",
    {
        "id": STRING,
        "code": {"type": "string", "description": "Human code, also accepted as the id."},
        "status": one_of(BookingStatus),
        "customerId": STRING,
        "serviceId": STRING,
        "frequencySlug": STRING,
        "startIso": INSTANT,
        "endIso": INSTANT,
        "durationMinutes": MINUTES,
        "days": {"type": "integer", "minimum": 1},
        "crewIds": STRINGS,
        "address": ADDRESS_SCHEMA,
        "price": BREAKDOWN_SCHEMA,
        "notes": STRING,
        "planId": nullable(STRING),
        "visitIndex": {"type": "integer", "minimum": 0},
        "groupId": nullable(STRING),
        "quoteId": nullable(STRING),
        "trackingUrl": {"type": "string", "format": "uri"},
        "createdAt": INSTANT,
        "updatedAt": INSTANT,
        "completedAt": nullable(INSTANT),
        "cancelledAt": nullable(INSTANT),
        "cancelReason": nullable(STRING),
    },
)

ACTIVITY_ENTRY_SCHEMA = closed(
    "ActivityEntry",
    "One event in a booking's history.",
    {
        "at": INSTANT,
        "kind": one_of(ActivityKind),
        "details": {
            "type": "object",
            "additionalProperties": {"type": ["string", "integer", "boolean"]},
        },
    },
)

BOOKING_WITH_ACTIVITY_SCHEMA = extend(
    BOOKING_SCHEMA,
    "BookingWithActivity",
    "A booking with its activity log, oldest event first.",
    {"activity": array(ACTIVITY_ENTRY_SCHEMA)},
)

CREATED_BOOKING_SCHEMA = extend(
    BOOKING_WITH_ACTIVITY_SCHEMA,
    "CreatedBooking",
    "The first booking made, with every booking made (plan visits, days, dates).",
    {"bookings": array(BOOKING_SCHEMA)},
)

CANCELLED_BOOKINGS_SCHEMA = closed(
    "CancelledBookings",
    "Every booking the cancel changed.",
    {"data": array(BOOKING_SCHEMA)},
)

RESCHEDULED_BOOKINGS_SCHEMA = closed(
    "RescheduledBookings",
    "Every booking the reschedule moved, with its activity log.",
    {"data": array(BOOKING_WITH_ACTIVITY_SCHEMA)},
)
