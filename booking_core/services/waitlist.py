"""Waitlist use cases: a customer joins (``waitlist.created``), the company reads its
entries and deletes the ones it has dealt with."""

from __future__ import annotations

from datetime import date
from zoneinfo import ZoneInfo

from attrs import frozen

from booking_core import waitlist
from booking_core.customers import PHONE_MAX
from booking_core.errors import ValidationFailed
from booking_core.events import EventType, event
from booking_core.ids import new_id
from booking_core.paging import Page, PageRequest
from booking_core.ports import Clock, PhoneNormalizer, UnitOfWork
from booking_core.services.customers import normalized_phone
from booking_core.waitlist import WaitlistEntry, WaitlistRequest


@frozen(kw_only=True)
class JoinWaitlist:
    """``POST /api/public/{slug}/waitlist``: dates wanted with no opening, as typed."""

    company_id: str
    service_id: str
    zip: str
    date_from: date
    name: str
    email: str
    date_to: date | None = None
    frequency_slug: str = "one_time"
    phone: str | None = None
    note: str = ""


def join_waitlist(
    cmd: JoinWaitlist, *, uow: UnitOfWork, clock: Clock, phones: PhoneNormalizer
) -> WaitlistEntry:
    """Store the entry and record ``waitlist.created`` in the same transaction; every bad
    field is named at once (``ValidationFailed``), and nothing is stored then."""
    errors: dict[str, str] = {}
    phone = None
    if cmd.phone is not None and len(cmd.phone) > PHONE_MAX:
        phone = cmd.phone  # over its ceiling: the entry's own check names it
    else:
        try:
            phone = normalized_phone(cmd.phone, phones)
        except ValidationFailed as failed:
            errors.update(failed.field_errors)
    request = WaitlistRequest(
        service_id=cmd.service_id,
        zip=cmd.zip,
        date_from=cmd.date_from,
        date_to=cmd.date_to,
        frequency_slug=cmd.frequency_slug,
        name=cmd.name,
        email=cmd.email,
        phone=phone,
        note=cmd.note,
    )
    with uow:
        company = uow.companies.get(cmd.company_id)
        catalog = uow.catalogs.get(cmd.company_id)
        at = clock.now()
        today = at.astimezone(ZoneInfo(company.timezone)).date()
        errors = {**errors, **waitlist.request_errors(request, today=today, catalog=catalog)}
        if errors:
            raise ValidationFailed(errors)
        entry = waitlist.new_entry(
            request,
            entry_id=new_id(waitlist.ID_PREFIX),
            company_id=cmd.company_id,
            today=today,
            catalog=catalog,
            at=at,
        )
        uow.waitlist.add(entry)
        uow.outbox.add_all(
            [event(EventType.WAITLIST_CREATED, entry, company_id=entry.company_id, at=at)]
        )
        uow.commit()
    return entry


def get_entry(company_id: str, entry_id: str, *, uow: UnitOfWork) -> WaitlistEntry:
    """One entry of the company's waitlist."""
    with uow:
        return uow.waitlist.get(company_id, entry_id)


def list_entries(company_id: str, page: PageRequest, *, uow: UnitOfWork) -> Page[WaitlistEntry]:
    """A page of the company's waitlist, newest first."""
    with uow:
        return uow.waitlist.list(company_id, page)


def delete_entry(company_id: str, entry_id: str, *, uow: UnitOfWork) -> None:
    """Remove an entry the company has dealt with (booked, or told no)."""
    with uow:
        uow.waitlist.delete(company_id, entry_id)
        uow.commit()
