"""Waitlist entries as answers: the same view in a list, alone, as the public
``waitlist`` route creates one, and as ``waitlist.created`` carries it."""

from __future__ import annotations

from datetime import date, datetime
from typing import Literal

from attrs import field, frozen

from adapters.http.jsonschema import schema
from adapters.http.views.base import RenderContext
from booking_core.waitlist import WaitlistEntry


@frozen
class WaitlistEntryView:
    """A customer's request for a date or range of dates with no opening."""

    id: str = field(metadata=schema(description="wl_..."))
    service_id: str
    frequency_slug: str
    zip: str
    date_from: date = field(metadata=schema(description="The first local date wanted."))
    date_to: date = field(
        metadata=schema(description="The last local date wanted; dateFrom for one date.")
    )
    name: str
    email: str
    phone: str | None = field(metadata=schema(description="E.164."))
    note: str
    created_at: datetime


@frozen
class DeletedWaitlistEntryView:
    """A waitlist entry the company dealt with and deleted."""

    id: str
    deleted: Literal[True]


def waitlist_entry_view(entry: WaitlistEntry, ctx: RenderContext) -> WaitlistEntryView:
    """The view of a waitlist entry."""
    return WaitlistEntryView(
        id=entry.id,
        service_id=entry.service_id,
        frequency_slug=entry.frequency_slug,
        zip=entry.zip,
        date_from=entry.date_from,
        date_to=entry.date_to,
        name=entry.name,
        email=entry.email,
        phone=entry.phone,
        note=entry.note,
        created_at=ctx.time(entry.created_at),
    )
