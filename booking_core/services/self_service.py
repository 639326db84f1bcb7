"""A customer's own changes to a booking, through its tracking link: find the booking by
its token, the open times it may move to, reschedule it, cancel it.

The tracking token is its own authority (DECISIONS.md), but only inside the company the
page address names: another company's token is not found, like an unknown one. A customer
may change a scheduled visit only while its start is at least the company's
``self_service_cutoff_hours`` away (the boundary of ``plans.reschedule``'s
``insideCutoff``: exactly the cutoff away is still outside); inside it the change is
refused with ``SelfServiceClosed``, whose message tells them to call or email the
company. The checks run in the same unit of work as the change, so an admin moving the
visit meanwhile cannot slip a change past the cutoff.

The changes are the admin's use cases with fixed customer-grade choices: scope ``this``
(a plan's visit moves or is cancelled alone), the visit's own crew, and the usual
``booking.rescheduled`` / ``booking.cancelled`` events.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from booking_core import plans
from booking_core.availability import Slot
from booking_core.bookings import Booking, BookingStatus, require_scheduled, tracking_active
from booking_core.companies import Company
from booking_core.errors import NotFoundError, SelfServiceClosed, SlotUnavailable
from booking_core.ports import Clock, DriveTime, UnitOfWork
from booking_core.services import scheduling
from booking_core.services.scheduling import (
    AvailabilityRequest,
    cancel_in_unit,
    list_availability,
    open_days,
    reschedule_in_unit,
)

CUSTOMER_CANCEL_REASON = "Cancelled by the customer on the tracking page."
ONLINE_DAYS_AHEAD = 180
"""How far ahead (days after the first date open to them) a customer may move a visit
online; the company moves it further."""
"""The reason a customer's own cancellation records (admins read it in the activity)."""


def tracked_booking(uow: UnitOfWork, company_id: str, token: str) -> Booking:
    """The booking of a tracking token, in ``company_id`` only; ``NotFoundError`` for an
    unknown token and for another company's (one answer for both). Whether tracking still
    works is ``bookings.tracking_active``."""
    booking = uow.bookings.by_tracking_token(token) if token else None
    if booking is None or booking.company_id != company_id:
        raise NotFoundError("booking", "tracking link")
    return booking


def changes_close_at(company: Company, booking: Booking) -> datetime:
    """The instant the customer's own changes to ``booking`` stop being accepted."""
    return changes_close_before(company, booking.start)


def changes_close_before(company: Company, start: datetime) -> datetime:
    """The instant the customer's own changes to a visit starting at ``start`` stop being
    accepted (the company's cutoff before it)."""
    return start - timedelta(hours=company.self_service_cutoff_hours)


def changes_open(company: Company, start: datetime, at: datetime) -> bool:
    """True when, at ``at``, a visit starting at ``start`` is not yet inside the company's
    cutoff: the customer may still change it online (once it is booked and tracked)."""
    return at <= changes_close_before(company, start)


def can_change(company: Company, booking: Booking, at: datetime) -> bool:
    """True when the customer may still reschedule or cancel ``booking`` at ``at``:
    scheduled, tracked, and the start at least the cutoff away."""
    return (
        booking.status is BookingStatus.SCHEDULED
        and tracking_active(booking, at)
        and changes_open(company, booking.start, at)
    )


def closed_message(company: Company) -> str:
    """The sentence shown instead of the change buttons once the cutoff has passed."""
    return SelfServiceClosed("", company.self_service_cutoff_hours, company.name).message


def _require_open(company: Company, booking: Booking, at: datetime, action: str) -> None:
    require_scheduled(booking, action)  # a started, done or cancelled job says so first
    if at > changes_close_at(company, booking):
        raise SelfServiceClosed(booking.id, company.self_service_cutoff_hours, company.name)


def _first_open(company: Company, at: datetime) -> datetime:
    """The earliest start a customer may move a visit to: the cutoff from now."""
    return at + timedelta(hours=company.self_service_cutoff_hours)


def _request(booking: Booking, day: date) -> AvailabilityRequest:
    """Availability for ``booking`` moved to ``day``: its selection, zip, days and crew,
    its own length, and its own slot not blocking it."""
    selection = booking.selection
    return AvailabilityRequest(
        company_id=booking.company_id,
        service_id=booking.service_id,
        local_date=day,
        zip_code=booking.address.zip,
        frequency_slug=booking.frequency_slug,
        parameters=selection.parameters,
        extras=selection.extras,
        crew_ids=booking.crew_ids,
        days=booking.days,
        ignore_booking_ids=frozenset({booking.id}),
        duration_minutes=booking.duration_minutes,
        every_visit=False,  # this visit moves alone
    )


def reschedule_times(
    company: Company,
    booking: Booking,
    day: date,
    *,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
) -> list[Slot]:
    """The open starts ``booking`` may move to on the local ``day``, by time: the same
    ``list_availability`` the API answers, for the visit's own crew and length, its own
    slot not blocking it, and none inside the cutoff."""
    earliest = _first_open(company, clock.now())
    slots = list_availability(_request(booking, day), uow=uow, clock=clock, drive=drive)
    return sorted((s for s in slots if s.start >= earliest), key=lambda s: s.start)


def reschedule_days(
    company: Company,
    booking: Booking,
    count: int,
    *,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
) -> list[tuple[date, bool]]:
    """For ``count`` local dates from the first one outside the cutoff, whether the visit
    could move to it (the first date is checked against the cutoff instant too)."""
    earliest = _first_open(company, clock.now())
    first = earliest.astimezone(ZoneInfo(company.timezone)).date()
    days = open_days(_request(booking, first), count, uow=uow, clock=clock, drive=drive)
    if days and days[0][1]:
        start_ok = reschedule_times(company, booking, first, uow=uow, clock=clock, drive=drive)
        days[0] = (first, bool(start_ok))
    return days


def customer_reschedule(
    company_id: str,
    token: str,
    new_start: datetime,
    *,
    shown_total_cents: int | None,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
) -> list[Booking]:
    """Move the tracked visit alone (scope ``this``, its own crew) to ``new_start``,
    checked against real availability as ``reschedule_booking`` does. Refused with
    ``SelfServiceClosed`` inside the cutoff, and with ``SlotUnavailable`` for a new
    start inside it or more than ``ONLINE_DAYS_AHEAD`` days after the first date open
    to the customer; records ``booking.rescheduled``. A move that changes the visit's
    price to another total than ``shown_total_cents`` (the total the page showed for
    it; None: none shown) is refused with ``PriceNotConfirmed``: the customer sees a
    new price before agreeing to it."""
    at = clock.now()
    with uow:
        company = uow.companies.get(company_id)
        target = tracked_booking(uow, company_id, token)
        _require_open(company, target, at, "reschedule")
        earliest = _first_open(company, at)
        if new_start < earliest:
            hours = company.self_service_cutoff_hours
            raise SlotUnavailable(
                new_start.isoformat(),
                f"online, a visit can move to {hours} hours from now or later",
            )
        zone = ZoneInfo(company.timezone)
        last = earliest.astimezone(zone).date() + timedelta(days=ONLINE_DAYS_AHEAD)
        if new_start.astimezone(zone).date() > last:
            raise SlotUnavailable(
                new_start.isoformat(),
                f"online, a visit can move to {last:%B} {last.day}, {last.year} at the latest",
            )
        shown = {} if shown_total_cents is None else {target.id: shown_total_cents}
        changed = reschedule_in_unit(
            uow,
            company,
            target,
            new_start,
            plans.RescheduleScope.THIS,
            confirmed_totals=shown,
            by_customer=True,
            at=at,
            drive=drive,
        )
        uow.commit()
    return changed


def priced_moves(
    company_id: str, booking_id: str, new_start: datetime, *, uow: UnitOfWork, clock: Clock
) -> list[tuple[Booking, Booking]]:
    """The visit's price (before, after) when moving it alone to ``new_start`` would change
    it (``scheduling.priced_moves``, scope ``this``); empty otherwise. The tracking page
    shows it before the customer confirms the move."""
    return scheduling.priced_moves(
        company_id, booking_id, new_start, plans.RescheduleScope.THIS, uow=uow, clock=clock
    )


def customer_cancel(company_id: str, token: str, *, uow: UnitOfWork, clock: Clock) -> Booking:
    """Cancel the tracked visit alone (scope ``this``: a plan's other visits stay), with
    ``CUSTOMER_CANCEL_REASON``; refused with ``SelfServiceClosed`` inside the cutoff;
    records ``booking.cancelled``. Returns the cancelled booking."""
    at = clock.now()
    with uow:
        company = uow.companies.get(company_id)
        target = tracked_booking(uow, company_id, token)
        _require_open(company, target, at, "cancel")
        changed = cancel_in_unit(
            uow,
            target,
            plans.CancelScope.THIS,
            at=at,
            reason=CUSTOMER_CANCEL_REASON,
            by_customer=True,
        )
        uow.commit()
    return changed[0]
