"""The waitlist: a customer asks for a date, or a range of dates, that has no opening.

An entry names the job (service, frequency, zip) and the dates wanted, from ``date_from``
to ``date_to`` inclusive (the same date for a single day), and how to reach the person.
The company works it by hand (books it, or tells the person no) and then deletes it.

The ceilings are SPEC.md section 8's (name 200, email 254, phone 40, a note 2,000 like
access notes). The dates are local dates of the company: the first is today or later in
its timezone, the last not before the first, and a range covers at most
``MAX_RANGE_DAYS`` dates. The service must be an active service of the company's catalog
and the frequency one of its frequencies.
"""

from __future__ import annotations

from datetime import date, datetime

from attrs import frozen

from booking_core.catalog import Catalog
from booking_core.customers import (
    ACCESS_NOTES_MAX,
    NAME_MAX,
    PHONE_MAX,
    ZIP_PATTERN,
    email_errors,
)
from booking_core.errors import ValidationFailed
from booking_core.plain_text import person_name_problem

NOTE_MAX = ACCESS_NOTES_MAX
MAX_RANGE_DAYS = 62
"""The most dates one entry covers, first and last included (two months of a calendar,
as ``GET /api/public/{slug}/days`` lists at most)."""
ID_PREFIX = "wl"


@frozen(kw_only=True)
class WaitlistRequest:
    """What a person asked for, as typed (the phone already E.164 or None); ``date_to``
    None is the single date ``date_from``."""

    service_id: str
    zip: str
    date_from: date
    name: str
    email: str
    date_to: date | None = None
    frequency_slug: str = "one_time"
    phone: str | None = None
    note: str = ""


@frozen(kw_only=True)
class WaitlistEntry:
    """A stored request for dates with no opening; ``date_to == date_from`` for one date."""

    id: str
    company_id: str
    service_id: str
    zip: str
    date_from: date
    date_to: date
    frequency_slug: str
    name: str
    email: str
    created_at: datetime
    phone: str | None = None
    note: str = ""

    @property
    def days(self) -> int:
        """How many dates the entry covers, first and last included."""
        return (self.date_to - self.date_from).days + 1


def request_errors(request: WaitlistRequest, *, today: date, catalog: Catalog) -> dict[str, str]:
    """Every field error of ``request``, for a company whose local date is ``today``."""
    errors: dict[str, str] = {}
    if len(request.name) > NAME_MAX:
        errors["name"] = f"At most {NAME_MAX} characters."
    elif not request.name.strip():
        errors["name"] = "Required."
    elif problem := person_name_problem(request.name.strip()):
        errors["name"] = problem
    errors.update(email_errors(request.email))
    if request.phone is not None and len(request.phone) > PHONE_MAX:
        errors["phone"] = f"At most {PHONE_MAX} characters."
    if len(request.note) > NOTE_MAX:
        errors["note"] = f"At most {NOTE_MAX} characters."
    if not ZIP_PATTERN.match(request.zip):
        errors["zip"] = "A 5-digit US zip code."
    service = catalog.services_by_id.get(request.service_id)
    if service is None or not service.active:
        errors["service_id"] = f"No service with id {request.service_id!r}."
    if request.frequency_slug not in catalog.frequencies_by_slug:
        errors["frequency_slug"] = f"No frequency {request.frequency_slug!r}."
    last = request.date_to if request.date_to is not None else request.date_from
    if request.date_from < today:
        errors["date_from"] = f"Today ({today.isoformat()}) or later, in the company's timezone."
    if last < request.date_from:
        errors["date_to"] = "On or after the first date."
    elif (last - request.date_from).days + 1 > MAX_RANGE_DAYS:
        errors["date_to"] = f"A range of at most {MAX_RANGE_DAYS} days, both ends included."
    return errors


def new_entry(
    request: WaitlistRequest,
    *,
    entry_id: str,
    company_id: str,
    today: date,
    catalog: Catalog,
    at: datetime,
) -> WaitlistEntry:
    """The entry ``request`` makes, or ``ValidationFailed`` naming every bad field."""
    errors = request_errors(request, today=today, catalog=catalog)
    if errors:
        raise ValidationFailed(errors)
    return WaitlistEntry(
        id=entry_id,
        company_id=company_id,
        service_id=request.service_id,
        zip=request.zip,
        date_from=request.date_from,
        date_to=request.date_to if request.date_to is not None else request.date_from,
        frequency_slug=request.frequency_slug,
        name=request.name.strip(),
        email=request.email.strip(),
        created_at=at,
        phone=request.phone,
        note=request.note,
    )
