"""Scheduling use cases: list availability, book (single, plan, multi-day, several dates),
cancel and reschedule with scopes, start and complete a job, and a crew member's jobs.

Availability and booking are decided by the same function (``availability.check_slot``
over the same busy blocks ``available_slots`` lists from), so a listed slot is bookable
until it is taken; the store's own guard (an exclusion constraint on PostgreSQL,
serialised writes on SQLite) turns a lost race into ``SlotTaken``, never a double booking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, date, datetime, time, timedelta
from typing import ParamSpec
from zoneinfo import ZoneInfo

import attrs
from attrs import frozen

from booking_core import plans
from booking_core.availability import (
    Block,
    Slot,
    SlotQuery,
    available_slots,
    check_slot,
    open_crews_at,
    rank_key,
)
from booking_core.booking_forms import answers_errors_without_form, check_answers
from booking_core.booking_orders import (
    LAST_JOB_DATE,
    LAST_START,
    BookingOrder,
    agreed_first,
    catalog_pricer,
    crew_errors,
    redraw_codes,
)
from booking_core.bookings import (
    MAX_DAYS,
    Booking,
    BookingStatus,
    complete_job,
    normalize_human_code,
    require_scheduled,
    start_job,
    undo_start,
    wall_clock_instant,
)
from booking_core.catalog import Catalog, Frequency
from booking_core.companies import Company
from booking_core.coupons import Coupon, CouponUsage, normalize_code
from booking_core.crew import CrewMember
from booking_core.customers import (
    Address,
    Customer,
    SavedAddress,
    add_address,
    new_customer,
)
from booking_core.errors import (
    ConflictError,
    CouponRejected,
    NotFoundError,
    PriceNotConfirmed,
    RuleViolation,
    SlotTaken,
    SlotUnavailable,
    ValidationFailed,
)
from booking_core.events import EventType, events_for
from booking_core.ids import new_id
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, DriveTime, PhoneNormalizer, UnitOfWork
from booking_core.pricing import (
    PriceBreakdown,
    SelectedItem,
    Selection,
    Visit,
    price,
)
from booking_core.services.customers import add_new_customer, held_survivor, normalized_phone
from booking_core.services.pricing import coupon_usage, referral_for
from booking_core.timeline import local_day

BUSY_LEAD = 1
"""Seconds before the first asked date that jobs are read from: the core places a job on
a date by its end rounded up to the second (``windows._facts``: a job ending in the
last second before midnight touches the date), so one more second is read."""


def active_crew(uow: UnitOfWork, company_id: str) -> list[CrewMember]:
    """Every active crew member of the company."""
    crew: list[CrewMember] = []
    after = None
    while True:
        page = uow.crew.list_active(company_id, PageRequest(limit=MAX_LIMIT, after=after))
        crew.extend(page.items)
        if not page.has_more:
            return crew
        after = page.next_after


def _duration(
    catalog: Catalog, selection: Selection, at: datetime, visit: Visit = Visit.FIRST
) -> int:
    """Minutes of the job a selection describes (its first visit, or a plan's later one)."""
    bare = attrs.evolve(selection, coupon_code=None, referral_discount_cents=0, manual_fee_ids=())
    return price(catalog, bare, at=at, visit=visit).duration_minutes


def _busy_window(day: date, days: int, company: Company) -> tuple[datetime, datetime]:
    """The instants whose jobs can shape the local dates ``day`` .. ``day + days - 1``:
    exactly those the core looks at (the previous stop is a job of the same date, else
    home), so no day either side is read and sifted for nothing."""
    zone = ZoneInfo(company.timezone)
    first = local_day(zone, day)
    last = local_day(zone, day + timedelta(days=days - 1)) if days > 1 else first
    return _utc(first.start - BUSY_LEAD), _utc(last.end)


def _utc(epoch_seconds: int) -> datetime:
    return datetime.fromtimestamp(epoch_seconds, UTC)


@frozen(kw_only=True)
class AvailabilityRequest:
    """``GET /availability``: open starts for a service at a zip on a local date."""

    company_id: str
    service_id: str
    local_date: date
    zip_code: str
    frequency_slug: str = "one_time"
    parameters: tuple[SelectedItem, ...] = ()
    extras: tuple[SelectedItem, ...] = ()
    crew_ids: tuple[str, ...] | None = None
    days: int = 1
    ignore_booking_ids: frozenset[str] = frozenset()
    """Jobs that do not block (a booking offered new times blocks none of them itself)."""
    duration_minutes: int | None = None
    """An existing visit's own length; by default the selection's first-visit length."""
    every_visit: bool = True
    """For a recurring frequency, list a start only when a crew member free at it (the
    one booking would give it) is free at every visit of the plan up to the horizon too,
    as booking requires; False when one existing visit is being moved."""


def list_availability(
    request: AvailabilityRequest, *, uow: UnitOfWork, clock: Clock, drive: DriveTime
) -> list[Slot]:
    """Open starts on the date, ranked by drive minutes from the previous stop, then time."""
    reads = _availability_reads(request, 1, uow=uow, at=clock.now(), drive=drive)
    return reads.slots(request.local_date)


def open_days(
    request: AvailabilityRequest, count: int, *, uow: UnitOfWork, clock: Clock, drive: DriveTime
) -> list[tuple[date, bool]]:
    """For each of ``count`` local dates from ``request.local_date``, whether any start is
    open: the jobs of the whole range are read once, then each date is decided by the
    same ``available_slots`` as ``list_availability``."""
    reads = _availability_reads(request, count, uow=uow, at=clock.now(), drive=drive)
    return [
        (day, bool(reads.slots(day)))
        for day in (request.local_date + timedelta(days=i) for i in range(count))
    ]


@frozen
class _AvailabilityReads:
    """What availability on a range of dates is decided from, read in one transaction."""

    request: AvailabilityRequest
    company: Company
    duration: int
    crew: list[CrewMember]
    busy: dict[str, list[Block]]
    at: datetime
    drive: DriveTime
    interval_days: int | None = None
    """A plan's interval when every visit of it must be open (``every_visit``)."""
    later_duration: int = 0
    """A plan's later visits' length (no first-visit extras)."""

    def query(
        self, day: date, crew_ids: tuple[str, ...] | None, duration: int | None = None
    ) -> SlotQuery:
        """The question availability answers for ``day``."""
        request = self.request
        return SlotQuery(
            service_id=request.service_id,
            zip_code=request.zip_code,
            local_date=day,
            zone=self.company.timezone,
            duration_minutes=duration or self.duration,
            now=self.at,
            min_notice_minutes=self.company.min_notice_minutes,
            crew_ids=crew_ids,
            days=request.days,
            ignore_booking_ids=request.ignore_booking_ids,
        )

    def slots(self, day: date) -> list[Slot]:
        """Open starts on ``day``, best first (none for a job whose last day would fall
        after ``LAST_JOB_DATE``: it could not be booked)."""
        request = self.request
        if day + timedelta(days=request.days - 1) > LAST_JOB_DATE:
            return []
        query = self.query(day, request.crew_ids)
        found = available_slots(query, crew=self.crew, busy=self.busy, drive=self.drive)
        found = [s for s in found if s.start < LAST_START]  # 2200 in UTC: not bookable
        if self.interval_days is None:
            return found
        interval = self.interval_days
        kept = [s for s in (self._for_every_visit(s, interval) for s in found) if s is not None]
        return sorted(kept, key=rank_key)

    def _for_every_visit(self, slot: Slot, interval: int) -> Slot | None:
        """``slot`` as booking a plan at its start would give it: its crew when they are
        free at every later visit; else (no crew named) the best-ranked member free at the
        start who is; None when nobody is."""
        if self._free_for_later_visits(slot, interval):
            return slot
        if self.request.crew_ids is not None:
            return None
        query = self.query(slot.start.astimezone(ZoneInfo(self.company.timezone)).date(), None)
        for other in open_crews_at(query, slot.start, crew=self.crew, busy=self.busy,
                                   drive=self.drive):  # fmt: skip
            if other.crew_ids != slot.crew_ids and self._free_for_later_visits(other, interval):
                return other
        return None

    def _free_for_later_visits(self, slot: Slot, interval: int) -> bool:
        """Whether ``slot``'s crew are free at each later visit of a plan starting then,
        for a later visit's length, as booking checks them."""
        zone = ZoneInfo(self.company.timezone)
        horizon = plans.plan_horizon_end(slot.start, self.at, zone)
        for start in plans.plan_visits(slot.start, interval, horizon, zone)[1:]:
            query = self.query(start.astimezone(zone).date(), slot.crew_ids, self.later_duration)
            try:
                check_slot(query, start, crew=self.crew, busy=self.busy, drive=self.drive)
            except (SlotTaken, SlotUnavailable):
                return False
        return True


def _availability_reads(
    request: AvailabilityRequest,
    count: int,
    *,
    uow: UnitOfWork,
    at: datetime,
    drive: DriveTime,
) -> _AvailabilityReads:
    """The company, job length, crew and the jobs that can shape ``count`` dates from
    ``request.local_date``."""
    with uow:
        company = uow.companies.get(request.company_id)
        catalog = uow.catalogs.get(request.company_id)
        selection = Selection(
            service_id=request.service_id,
            frequency_slug=request.frequency_slug,
            parameters=request.parameters,
            extras=request.extras,
        )
        duration = request.duration_minutes or _duration(catalog, selection, at)
        crew = active_crew(uow, request.company_id)
        frequency = catalog.frequencies_by_slug.get(request.frequency_slug)
        if frequency is not None and (
            too_long := plans.days_past_interval(request.days, frequency.interval_days)
        ):
            # Booking refuses such a plan whatever the calendar holds: list no start for it.
            raise ValidationFailed({"days": too_long})
        interval = frequency.interval_days if frequency and request.every_visit else None
        # A plan's later visits fall up to the horizon after the last date asked about.
        span = count + request.days - 1 + (plans.PLAN_HORIZON_DAYS if interval else 0)
        lo, hi = _busy_window(request.local_date, span, company)
        # Only these members' jobs can matter; naming them lets the store seek each one's
        # few jobs in the window instead of sifting the company's whole history.
        wanted = request.crew_ids if request.crew_ids is not None else [m.id for m in crew]
        busy = uow.bookings.busy(request.company_id, lo, hi, crew_ids=wanted)
    later = _duration(catalog, selection, at, Visit.LATER) if interval else 0
    return _AvailabilityReads(
        request, company, duration, crew, busy, at, drive, interval_days=interval,
        later_duration=later,
    )  # fmt: skip


@frozen(kw_only=True)
class CustomerDetails:
    """Who the job is for, as typed on a booking."""

    name: str
    email: str
    phone: str | None = None


@frozen(kw_only=True)
class CreateBooking:
    """``POST /bookings``: one job, a plan, a multi-day job, or several dates at once."""

    company_id: str
    service_id: str
    frequency_slug: str
    start: datetime
    customer: CustomerDetails
    address: Address
    parameters: tuple[SelectedItem, ...] = ()
    extras: tuple[SelectedItem, ...] = ()
    coupon_code: str | None = None
    referral_code: str | None = None
    """Another customer's referral code: the company's referral discount off the first
    visit of a new customer's first booking (``booking_core.referrals``)."""
    notes: str = ""
    crew_ids: tuple[str, ...] | None = None
    days: int = 1
    additional_starts: tuple[datetime, ...] = ()
    form_id: str | None = None
    answers: tuple[tuple[str, str], ...] = ()
    """Intake answers as ``(question id, answer)``, to the questions of ``form_id``."""


def _through_form(uow: UnitOfWork, cmd: CreateBooking, selection: Selection) -> dict[str, object]:
    """The order fields of a booking made through a booking form (none without one):
    the form read in the caller's unit, the booking checked against it."""
    if cmd.form_id is None:
        return {}
    try:
        form = uow.booking_forms.get(cmd.company_id, cmd.form_id)
    except NotFoundError:
        raise ValidationFailed({"form_id": "No booking form with this id."}) from None
    return {"form_id": form.id, "answers": check_answers(form, selection, cmd.answers)}


def _customer_for(
    uow: UnitOfWork,
    company_id: str,
    details: CustomerDetails,
    address: Address,
    phones: PhoneNormalizer,
    at: datetime,
) -> tuple[Customer, EventType | None]:
    """The customer of the email (the survivor of a merge), created or given the address,
    and the event that records it: ``customer.created`` when it was created now,
    ``customer.updated`` when the address was saved on it now, else None.

    Two first bookings racing with one new email share one customer: the one that adds it
    first wins and the others take its record (``add_unless_email_taken``), so no booking
    is refused because its customer was being created at the same moment. Only the winner
    says it created the customer (so ``customer.created`` is recorded once).
    """
    # Checked whether or not the email is known: a bad phone is refused for both alike.
    phone = normalized_phone(details.phone, phones, "customer.phone")
    # Held: a merge of this record at the same moment either waits for this booking (and
    # re-files it) or is waited for (and the booking follows it to the survivor).
    existing = uow.customers.by_email(company_id, details.email, held=True)
    if existing is None:
        customer = new_customer(
            customer_id=new_id("cus"),
            company_id=company_id,
            name=details.name,
            email=details.email,
            phone=phone,
            at=at,
            address=SavedAddress(new_id("adr"), address),
        )
        existing, created = add_new_customer(uow, customer)
        if created:
            return existing, EventType.CUSTOMER_CREATED
    existing = held_survivor(uow, company_id, existing)
    if all(saved.address != address for saved in existing.addresses):
        # Read again, held, before writing back: a change committed since the first read
        # (a new name, another booking's address) is kept (the usual booking, at an
        # address already saved, costs no second read).
        existing = uow.customers.get_for_update(company_id, existing.id)
        if all(saved.address != address for saved in existing.addresses):
            new = SavedAddress(new_id("adr"), address)
            existing = add_address(existing, new, at=at, default=False)
            uow.customers.save(existing)
            return existing, EventType.CUSTOMER_UPDATED
    return existing, None


def slot_for(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    selection: Selection,
    start: datetime,
    *,
    zip_code: str,
    crew_ids: tuple[str, ...] | None,
    days: int,
    at: datetime,
    drive: DriveTime,
    ignore: frozenset[str] = frozenset(),
    duration_minutes: int | None = None,
    crew: Sequence[CrewMember] | None = None,
    busy: Mapping[str, Sequence[Block]] | None = None,
) -> Slot:
    """The open slot at ``start``, decided as availability lists it. ``duration_minutes``
    is an existing visit's own length; by default the selection's first-visit length.
    ``crew`` is the company's active crew when the caller already read it; ``busy`` the
    jobs of the crew asked for, when the caller already read them (over this visit's
    window or more)."""
    if duration_minutes is None:
        duration_minutes = _duration(catalog, selection, at)
    query = _slot_query(company, selection, start, zip_code, duration_minutes, at,
                        crew_ids=crew_ids, days=days, ignore=ignore)  # fmt: skip
    if busy is None:
        # Only the named members' jobs matter when the caller chose the crew.
        lo, hi = _busy_window(query.local_date, days, company)
        busy = uow.bookings.busy(company.id, lo, hi, crew_ids=crew_ids)
    roster = active_crew(uow, company.id) if crew is None else crew
    return check_slot(query, start, crew=roster, busy=busy, drive=drive)


def _slot_query(
    company: Company,
    selection: Selection,
    start: datetime,
    zip_code: str,
    duration_minutes: int,
    at: datetime,
    *,
    crew_ids: tuple[str, ...] | None,
    days: int,
    ignore: frozenset[str] = frozenset(),
) -> SlotQuery:
    """What ``slot_for`` asks availability about a job at ``start``."""
    return SlotQuery(
        service_id=selection.service_id,
        zip_code=zip_code,
        local_date=start.astimezone(ZoneInfo(company.timezone)).date(),
        zone=company.timezone,
        duration_minutes=duration_minutes,
        now=at,
        min_notice_minutes=company.min_notice_minutes,
        crew_ids=crew_ids,
        days=days,
        ignore_booking_ids=ignore,
        zip_field="address.zip",
    )


def _check_every_visit(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    made: Sequence[Booking],
    *,
    drive: DriveTime,
    at: datetime,
    crew: Sequence[CrewMember],
) -> None:
    """Every visit after the first must be open for the chosen crew too (all or nothing),
    for as long as that visit lasts (a plan's later visits skip first-visit extras)."""
    for visit in made[1:]:
        try:
            check_visit(uow, company, catalog, visit, drive=drive, at=at, crew=crew)
        except SlotTaken as taken:
            if visit.group_id is None:
                raise
            field = f"additional_start_isos.{visit.visit_index - 1}"
            raise taken.naming(field, SAME_CREW_HINT) from None
        except SlotUnavailable as refused:
            if visit.group_id is None:
                raise
            raise refused.naming(f"additional_start_isos.{visit.visit_index - 1}") from None


SAME_CREW_HINT = "every date of a booking goes to the crew of startIso: book this date on its own"


def check_visit(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    visit: Booking,
    *,
    drive: DriveTime,
    at: datetime,
    ignore: frozenset[str] = frozenset(),
    crew: Sequence[CrewMember] | None = None,
    busy: Mapping[str, Sequence[Block]] | None = None,
) -> Slot:
    """The slot a visit (new or moved) takes, for its own crew and length, as availability
    decides; ``SlotTaken`` or ``SlotUnavailable`` when it is not open."""
    return slot_for(
        uow,
        company,
        catalog,
        visit.selection,
        visit.start,
        zip_code=visit.address.zip,
        crew_ids=visit.crew_ids,
        days=visit.days,
        at=at,
        drive=drive,
        ignore=ignore,
        duration_minutes=visit.duration_minutes,
        crew=crew,
        busy=busy,
    )


CODE_DRAWS = 5
"""How often new human codes are drawn when a code is already taken in the company."""


def store_new(uow: UnitOfWork, made: list[Booking]) -> list[Booking]:
    """Add the bookings; on a human-code collision draw new codes and try again (a refused
    batch writes nothing). ``SlotTaken`` is never retried: the slot is gone."""
    for _ in range(CODE_DRAWS):
        try:
            uow.bookings.add_all(made)
        except SlotTaken:
            raise
        except ConflictError:
            made = redraw_codes(made)
            continue
        return made
    raise ConflictError("Could not draw a free booking code; try again.")


P = ParamSpec("P")


def _naming_only_named_crew(
    book: Callable[P, list[Booking]],
) -> Callable[P, list[Booking]]:
    """``book``, whose slot lost to a racing request names no crew member unless the
    request named its crew (``SlotTaken.crew_id``): the caller chose none, so the member
    chosen for it means nothing to it (and is not an anonymous booker's to see)."""

    @functools.wraps(book)
    def run(*args: P.args, **kwargs: P.kwargs) -> list[Booking]:
        try:
            return book(*args, **kwargs)
        except SlotTaken as taken:
            if kwargs.get("crew_ids") is not None or taken.crew_id is None:
                raise
            raise SlotTaken(taken.start, None, taken.field, taken.hint) from None

    return run


@_naming_only_named_crew
def book_in_unit(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    order_fields: dict[str, object],
    selection: Selection,
    start: datetime,
    *,
    crew_ids: tuple[str, ...] | None,
    additional_starts: Sequence[datetime],
    customer_id: str,
    at: datetime,
    drive: DriveTime,
    first_price: PriceBreakdown | None = None,
) -> list[Booking]:
    """Check, make and store the bookings of one create request (all or nothing); the
    caller records their ``booking.created`` events with its own (one outbox write).

    ``first_price`` is a price already agreed (a converted quote's) for the first visit,
    which it takes and lasts as long as; a plan's later visits are then priced from the
    catalog at their own dates with the selection's coupon as already accepted
    (``plans.kept_coupon_terms``: no rule of it judged again). Without it every visit is
    priced from the catalog, the coupon judged against its redemptions so far. Either way
    the coupon's redemption is recorded."""
    frequency = catalog.frequencies_by_slug.get(selection.frequency_slug)
    if frequency is None:
        raise ValidationFailed({"frequency_slug": f"No frequency {selection.frequency_slug!r}."})
    address: Address = order_fields["address"]  # type: ignore[assignment]
    days: int = order_fields.get("days", 1)  # type: ignore[assignment]
    if errors := _request_errors(company, frequency, start, days, additional_starts, at):
        raise ValidationFailed(errors)
    crew = active_crew(uow, company.id)  # read once for every visit checked below
    if crew_ids is not None:  # named: held before their jobs are read, until the commit
        uow.bookings.hold_crew(company.id, crew_ids)
    slot = slot_for(
        uow,
        company,
        catalog,
        selection,
        start,
        zip_code=address.zip,
        crew_ids=crew_ids,
        days=days,
        at=at,
        drive=drive,
        crew=crew,
        duration_minutes=None if first_price is None else first_price.duration_minutes,
    )
    order = BookingOrder(
        company_id=company.id,
        code_prefix=company.code_prefix,
        timezone=company.timezone,
        customer_id=customer_id,
        selection=selection,
        crew_ids=slot.crew_ids,
        **order_fields,  # type: ignore[arg-type]
    )
    code = selection.coupon_code
    coupon = catalog.coupons_by_code.get(normalize_code(code)) if code else None
    if first_price is None:
        usage = coupon_usage(uow, catalog, selection, customer_id)
        if coupon is not None and additional_starts:
            _room_for_every_date(coupon, usage, 1 + len(additional_starts))
        pricer = catalog_pricer(catalog, order, at=at, coupon_usage=usage)
    else:
        pricer = agreed_first(
            first_price, catalog_pricer(plans.kept_coupon_terms(catalog, selection), order, at=at)
        )

    def booked(crew_ids: tuple[str, ...]) -> list[Booking]:
        return plans.book(
            attrs.evolve(order, crew_ids=crew_ids),
            start=start,
            price_visit=pricer,
            at=at,
            interval_days=frequency.interval_days,
            additional_starts=additional_starts,
        )

    made = booked(slot.crew_ids)
    lost = False  # whether the chosen crew's first visit went to a racing request
    try:
        if crew_ids is None:  # chosen from jobs read unheld: hold the crew, read theirs again
            try:
                made = _held(uow, company, catalog, made, drive=drive, at=at, crew=crew, first=True)
            except (SlotTaken, SlotUnavailable):
                lost = True
                raise
        _check_every_visit(uow, company, catalog, made, drive=drive, at=at, crew=crew)
    except (SlotTaken, SlotUnavailable) as refused:
        if crew_ids is not None:
            raise
        # The best-ranked crew at the start lost it to a racing request, or cannot do
        # every visit: the next one free who can (the request named none), as
        # availability would list it now. Read after the hold, so the racer's job counts.
        # After a lost race only members held after the lost one (by id, the order holds
        # are taken in): two bookings that each lost a member never wait on each other's.
        after = max(made[0].crew_ids) if lost else None
        other = _crew_for_every_visit(uow, company, catalog, made, booked, at=at, drive=drive,
                                      crew=crew, after=after)  # fmt: skip
        if other is None:
            raise (refused if lost else _for_every_visit(refused)) from None
        made = _held(uow, company, catalog, other, drive=drive, at=at, crew=crew, first=False)
    made = store_new(uow, made)
    if coupon is not None:
        # One redemption per job: a plan is one, each date of a several-dates request one.
        for job in made if additional_starts else made[:1]:
            uow.coupon_redemptions.add(company.id, coupon.id, customer_id, job.id)
    return made


def _held(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    made: list[Booking],
    *,
    drive: DriveTime,
    at: datetime,
    crew: Sequence[CrewMember],
    first: bool,
) -> list[Booking]:
    """``made``, its crew held (``BookingRepository.hold_crew``) and its visits checked
    again on their jobs read since: the crew was chosen from jobs read before the hold, and
    another request may have booked them meanwhile (a lost race is ``SlotTaken``, 409).
    ``first``: the first visit only (``_check_every_visit`` checks the others next)."""
    uow.bookings.hold_crew(company.id, made[0].crew_ids)
    for visit in made[:1] if first else made:
        check_visit(uow, company, catalog, visit, drive=drive, at=at, crew=crew)
    return made


def _request_errors(
    company: Company,
    frequency: Frequency,
    start: datetime,
    days: int,
    additional_starts: Sequence[datetime],
    at: datetime,
) -> dict[str, str]:
    """``plans.request_errors`` for a frequency of the company's catalog."""
    return plans.request_errors(
        start,
        zone=ZoneInfo(company.timezone),
        at=at,
        days=days,
        interval_days=frequency.interval_days,
        additional_starts=additional_starts,
    )


def _room_for_every_date(coupon: Coupon, usage: CouponUsage, dates: int) -> None:
    """A coupon with a redemption limit covers every date of a several-dates request
    (each date is a job of its own, one redemption each) or the request is refused."""
    limits = (
        (coupon.max_redemptions, usage.total, "max_redemptions", "it"),
        (coupon.per_customer_limit, usage.by_customer, "per_customer_limit", "this customer"),
    )
    for limit, used, rule, who in limits:
        if limit is not None and used + dates > limit:
            left = max(limit - used, 0)
            raise CouponRejected(
                coupon.code,
                rule,
                f"{who} may redeem it {left} more time{'s' if left != 1 else ''}, "
                f"and each of this booking's {dates} dates is one redemption.",
            )


def _crew_for_every_visit(
    uow: UnitOfWork,
    company: Company,
    catalog: Catalog,
    made: Sequence[Booking],
    booked: Callable[[tuple[str, ...]], list[Booking]],
    *,
    at: datetime,
    drive: DriveTime,
    crew: Sequence[CrewMember],
    after: str | None = None,
) -> list[Booking] | None:
    """The visits booked for the best-ranked member free at the first visit's start who
    is free for every visit too (the jobs of the whole span read once, after ``made``'s
    crew was held: a racer that took them is seen); None when nobody other than
    ``made``'s crew is. ``after``: only a crew whose ids all sort after it (holds are
    taken in id order, so a unit already holding ``after`` never waits in a circle)."""
    first = made[0]
    zone = ZoneInfo(company.timezone)
    # Several dates need not be in order: an extra date may come before startIso's.
    days = [visit.start.astimezone(zone).date() for visit in made]
    lo, _ = _busy_window(min(days), first.days, company)
    _, hi = _busy_window(max(days), first.days, company)
    busy = uow.bookings.busy(company.id, lo, hi, crew_ids=None)
    query = _slot_query(company, first.selection, first.start, first.address.zip,
                        first.duration_minutes, at, crew_ids=None, days=first.days)  # fmt: skip
    for choice in open_crews_at(query, first.start, crew=crew, busy=busy, drive=drive):
        if choice.crew_ids == first.crew_ids:
            continue  # the crew that was refused
        if after is not None and min(choice.crew_ids) <= after:
            continue  # held out of order after a lost race
        visits = booked(choice.crew_ids)
        try:
            for visit in visits[1:]:
                check_visit(uow, company, catalog, visit, drive=drive, at=at, crew=crew, busy=busy)
        except (SlotTaken, SlotUnavailable):
            continue
        return visits
    return None


def _for_every_visit(refused: SlotTaken | SlotUnavailable) -> SlotTaken | SlotUnavailable:
    """The refusal of the best-ranked crew's visit when no crew free at the start is free
    for every visit: a plan's later visit taken says to choose another start (listing
    availability again would list the same start)."""
    if isinstance(refused, SlotTaken) and refused.field is None:
        return SlotTaken(refused.start, refused.crew_id, None, EVERY_VISIT_HINT)
    return refused


EVERY_VISIT_HINT = (
    "no crew member free at startIso is free for every visit of the plan: choose another start"
)


def create_booking(
    cmd: CreateBooking,
    *,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
    phones: PhoneNormalizer,
) -> list[Booking]:
    """Book: the first visit's slot is checked by availability (crew chosen as the best
    ranked unless given), every other visit must be open for the same crew; all or nothing."""
    at = clock.now()
    errors = cmd.address.errors()
    # Checked before the slot is looked up, which needs a sane day count and crew list.
    if not 1 <= cmd.days <= MAX_DAYS:
        errors["days"] = f"A whole number of days from 1 to {MAX_DAYS}."
    if cmd.crew_ids is not None:
        errors.update(crew_errors(cmd.crew_ids))
    if cmd.form_id is None:
        errors.update(answers_errors_without_form(cmd.answers))
    with uow:
        company = uow.companies.get(cmd.company_id)
        catalog = uow.catalogs.get(cmd.company_id)
        # The problems of the dates and the day count (``book_in_unit`` checks them too)
        # named with the others, before a referral code is looked up: a past start is
        # said whether the code is known or not, as with a coupon.
        frequency = catalog.frequencies_by_slug.get(cmd.frequency_slug)
        if frequency is not None and (errors or cmd.referral_code is not None):
            errors.update(
                _request_errors(company, frequency, cmd.start, cmd.days, cmd.additional_starts, at)
            )
        if errors:
            raise ValidationFailed(errors)
        selection = Selection(
            service_id=cmd.service_id,
            frequency_slug=cmd.frequency_slug,
            parameters=cmd.parameters,
            extras=cmd.extras,
            coupon_code=cmd.coupon_code,
        )
        order_fields = {"address": cmd.address, "days": cmd.days, "notes": cmd.notes,
                        **_through_form(uow, cmd, selection)}  # fmt: skip
        customer, change = _customer_for(uow, cmd.company_id, cmd.customer, cmd.address, phones, at)
        new = change is EventType.CUSTOMER_CREATED
        if cmd.referral_code is not None:
            selection, order_fields["referred_by"] = _referred(
                uow, company, cmd.referral_code, customer, new, selection
            )
        made = book_in_unit(
            uow,
            company,
            catalog,
            order_fields,
            selection,
            cmd.start,
            crew_ids=cmd.crew_ids,
            additional_starts=cmd.additional_starts,
            customer_id=customer.id,
            at=at,
            drive=drive,
        )
        uow.outbox.add_all(
            (events_for(change, [customer], at=at) if change is not None else [])
            + events_for(EventType.BOOKING_CREATED, made, at=at)
        )
        uow.commit()
    return made


def _referred(
    uow: UnitOfWork,
    company: Company,
    code: str,
    customer: Customer,
    new: bool,
    selection: Selection,
) -> tuple[Selection, str]:
    """The selection with the referral discount of ``code`` for the booking's customer,
    and the referrer's id; ``ReferralRejected`` by ``booking_core.referrals``' rules (a
    customer created by this booking has no booking yet)."""
    discount, referrer = referral_for(uow, company, code, None if new else customer)
    return attrs.evolve(selection, referral_discount_cents=discount), referrer.id


def find_booking(uow: UnitOfWork, company_id: str, id_or_code: str) -> Booking:
    """A booking by id or by human code (forgiving case and look-alikes); else not found."""
    code = normalize_human_code(id_or_code)
    if code is not None:
        found = uow.bookings.by_code(company_id, code)
        if found is None:
            raise NotFoundError("booking", id_or_code)
        return found
    return uow.bookings.get(company_id, id_or_code)


def booking_id_of(uow: UnitOfWork, company_id: str, id_or_code: str) -> str:
    """The id of the booking ``id_or_code`` names, read in an open ``uow``, where a booking
    is named without being read (a ledger entry's, a filter's): a human code, as
    ``find_booking`` reads it, is its booking's id; an id, or a code no booking of the
    company has, stays as it came (it then names none)."""
    code = normalize_human_code(id_or_code)
    if code is None:
        return id_or_code
    found = uow.bookings.by_code(company_id, code)
    return found.id if found is not None else id_or_code


def _visits(uow: UnitOfWork, target: Booking) -> list[Booking]:
    if target.plan_id is not None:
        return uow.bookings.of_plan(target.company_id, target.plan_id)
    return [target]


def cancel_booking(
    company_id: str,
    id_or_code: str,
    scope: plans.CancelScope,
    *,
    after: date | None = None,
    reason: str | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> list[Booking]:
    """Cancel one visit, this and the future ones, or end a plan after a date; one
    ``booking.cancelled`` per booking cancelled (a plan's last visit that only notes the
    plan's end is changed but not cancelled, and records none)."""
    at = clock.now()
    with uow:
        target = find_booking(uow, company_id, id_or_code)
        changed = cancel_in_unit(uow, target, scope, at=at, reason=reason, after=after)
        uow.commit()
    return changed


def cancelled_by(
    company_id: str,
    id_or_code: str,
    scope: plans.CancelScope,
    *,
    after: date | None = None,
    uow: UnitOfWork,
    clock: Clock,
) -> list[Booking]:
    """The visits ``cancel_booking`` with these arguments would cancel, oldest first;
    nothing is saved. For a page to say what a cancel of several visits takes away before
    it is made; a refusal is raised as the cancel itself would raise it."""
    with uow:
        target = find_booking(uow, company_id, id_or_code)
        changed = plans.cancel_visits(_visits(uow, target), target.id, scope, at=clock.now(),
                                      after=after)  # fmt: skip
    gone = [b for b in changed if b.status is BookingStatus.CANCELLED]
    return sorted(gone, key=lambda b: (b.start, b.id))


def cancel_in_unit(
    uow: UnitOfWork,
    target: Booking,
    scope: plans.CancelScope,
    *,
    at: datetime,
    reason: str | None = None,
    after: date | None = None,
    by_customer: bool = False,
) -> list[Booking]:
    """``cancel_booking``'s work inside the caller's open unit (which commits): cancel,
    save, and record one ``booking.cancelled`` per booking cancelled. ``by_customer``:
    the customer cancels on their own page (``plans.cancel_visits``)."""
    changed = plans.cancel_visits(
        _visits(uow, target),
        target.id,
        scope,
        at=at,
        reason=reason,
        after=after,
        by_customer=by_customer,
    )
    uow.bookings.save_all(changed)
    cancelled = [b for b in changed if b.status is BookingStatus.CANCELLED]
    uow.outbox.add_all(events_for(EventType.BOOKING_CANCELLED, cancelled, at=at))
    return changed


def reschedule_booking(
    company_id: str,
    id_or_code: str,
    new_start: datetime,
    scope: plans.RescheduleScope,
    *,
    crew_ids: tuple[str, ...] | None = None,
    confirmed_totals: Mapping[str, int] | None = None,
    uow: UnitOfWork,
    clock: Clock,
    drive: DriveTime,
) -> list[Booking]:
    """Move a visit (or it and the later ones of its plan), checked against real
    availability; the booking's own slot does not block it. Never refused for the
    self-service cutoff; a move inside it is noted in the activity log. One
    ``booking.rescheduled`` per booking moved (or given another crew).
    ``confirmed_totals``: see ``reschedule_in_unit``."""
    at = clock.now()
    with uow:
        company = uow.companies.get(company_id)
        target = find_booking(uow, company_id, id_or_code)
        changed = reschedule_in_unit(
            uow,
            company,
            target,
            new_start,
            scope,
            crew_ids=crew_ids,
            confirmed_totals=confirmed_totals,
            at=at,
            drive=drive,
        )
        uow.commit()
    return changed


def reschedule_in_unit(
    uow: UnitOfWork,
    company: Company,
    target: Booking,
    new_start: datetime,
    scope: plans.RescheduleScope,
    *,
    crew_ids: tuple[str, ...] | None = None,
    confirmed_totals: Mapping[str, int] | None = None,
    by_customer: bool = False,
    at: datetime,
    drive: DriveTime,
) -> list[Booking]:
    """``reschedule_booking``'s work inside the caller's open unit (which commits): refuse
    a target no longer scheduled (``InvalidTransition``), check availability, move, save,
    and record one ``booking.rescheduled`` per booking moved.
    ``crew_ids`` (None: every moved visit keeps its own crew) and the new start are
    checked as ``create_booking`` checks them (``plans.reschedule_errors``), before the
    slot is looked up, which reads the crew as a set.
    ``confirmed_totals`` (booking id to the total a page showed for it after the move):
    when given, a moved visit whose price changes to a total not confirmed there refuses
    the whole move with ``PriceNotConfirmed``; None (the API) takes the new prices.
    ``by_customer``: the customer moves it on their own page (``plans.reschedule``)."""
    if errors := plans.reschedule_errors(new_start, crew_ids, zone=target.zone, at=at):
        raise ValidationFailed(errors)
    # A job begun, done or cancelled cannot move to any time: said before any slot is.
    require_scheduled(target, "reschedule")
    catalog = uow.catalogs.get(company.id)
    visits = _visits(uow, target)
    together = scope is plans.RescheduleScope.THIS_AND_FUTURE
    moving = frozenset(v.id for v in visits) if together else frozenset({target.id})
    # Every member a moved visit will have, held before their jobs are read.
    uow.bookings.hold_crew(
        company.id,
        {*(target.crew_ids if crew_ids is None else crew_ids)}
        | {c for v in visits if v.id in moving for c in v.crew_ids},
    )
    crew = active_crew(uow, company.id)
    slot = slot_for(
        uow,
        company,
        catalog,
        target.selection,
        new_start,
        zip_code=target.address.zip,
        crew_ids=target.crew_ids if crew_ids is None else crew_ids,
        days=target.days,
        at=at,
        drive=drive,
        ignore=moving,
        duration_minutes=target.duration_minutes,
        crew=crew,
    )
    changed = plans.reschedule(
        visits,
        target.id,
        new_start,
        scope,
        at=at,
        cutoff_hours=company.self_service_cutoff_hours,
        crew_ids=None if crew_ids is None else slot.crew_ids,  # None: each keeps its own
        catalog=catalog,  # date fees follow each moved visit
        by_customer=by_customer,
    )
    for visit in changed:  # the later visits moved along must be open too
        if visit.id != target.id:
            check_visit(uow, company, catalog, visit, drive=drive, at=at, ignore=moving, crew=crew)
    if confirmed_totals is not None:
        moves = _price_moves(visits, changed, target.id)
        if any(confirmed_totals.get(after.id) != after.price.total_cents for _, after in moves):
            raise PriceNotConfirmed(moves)
    uow.bookings.save_all(changed)
    uow.outbox.add_all(events_for(EventType.BOOKING_RESCHEDULED, changed, at=at))
    return changed


def priced_moves(
    company_id: str,
    id_or_code: str,
    new_start: datetime,
    scope: plans.RescheduleScope,
    *,
    uow: UnitOfWork,
    clock: Clock,
) -> list[tuple[Booking, Booking]]:
    """(before, after) of each visit whose price a reschedule to ``new_start`` would
    change (its date fees re-dated, ``plans.moved_price``), the target first; nothing is
    saved. For a page to show the new price before the move; empty when no price would
    change or the move would be refused (the move itself then says why)."""
    with uow:
        target = find_booking(uow, company_id, id_or_code)
        visits = _visits(uow, target)
        try:
            moved = plans.reschedule(
                visits,
                target.id,
                new_start,
                scope,
                at=clock.now(),
                cutoff_hours=0,
                catalog=uow.catalogs.get(company_id),
            )
        except (ValidationFailed, RuleViolation):
            return []
    return _price_moves(visits, moved, target.id)


def _price_moves(
    visits: Sequence[Booking], moved: Sequence[Booking], target_id: str
) -> list[tuple[Booking, Booking]]:
    """(before, after) of each of ``moved`` whose total differs from its visit's before,
    the target first."""
    before = {v.id: v for v in visits}
    changed = [
        (before[v.id], v) for v in moved if v.price.total_cents != before[v.id].price.total_cents
    ]
    return sorted(changed, key=lambda pair: pair[0].id != target_id)


def _crew_booking(
    uow: UnitOfWork, company_id: str, id_or_code: str, crew_member_id: str | None
) -> Booking:
    """``find_booking``, and for a crew member only a booking they are on: another's is
    not found, exactly like an unknown one (a crew member never learns it exists)."""
    booking = find_booking(uow, company_id, id_or_code)
    if crew_member_id is not None and crew_member_id not in booking.crew_ids:
        raise NotFoundError("booking", id_or_code)
    return booking


def undo_start_booking(
    company_id: str,
    id_or_code: str,
    *,
    crew_member_id: str | None,
    uow: UnitOfWork,
    clock: Clock,
) -> Booking:
    """Take back a start made by mistake: ``in_progress`` -> ``scheduled``, recorded in the
    activity log (``start_undone``) and as ``booking.start_undone``. ``crew_member_id`` as
    for ``start_booking`` (the admin workspace passes None); anything but a job in progress
    is refused with ``InvalidTransition``."""
    return _move_job(
        company_id,
        id_or_code,
        crew_member_id,
        undo_start,
        EventType.BOOKING_START_UNDONE,
        uow,
        clock,
    )


def start_booking(
    company_id: str,
    id_or_code: str,
    *,
    crew_member_id: str | None,
    uow: UnitOfWork,
    clock: Clock,
) -> Booking:
    """The crew starts a job: ``scheduled`` -> ``in_progress``, the time in the activity
    log; records ``booking.started``. ``crew_member_id`` is the crew member acting (the
    booking must be theirs, else ``NotFoundError``); None is an admin. Only this booking
    changes (a plan's other visits do not). Anything but a scheduled job is refused with
    ``InvalidTransition`` saying why."""
    return _move_job(
        company_id, id_or_code, crew_member_id, start_job, EventType.BOOKING_STARTED, uow, clock
    )


def complete_booking(
    company_id: str,
    id_or_code: str,
    *,
    crew_member_id: str | None,
    uow: UnitOfWork,
    clock: Clock,
) -> Booking:
    """The crew completes a job: ``in_progress`` -> ``completed`` with ``completed_at``;
    records ``booking.completed``. A scheduled job may be completed directly once its
    start has come (a crew that never pressed start, or an admin marking a past job done;
    ``skippedStart`` in the activity); before its start, or when completed or cancelled,
    ``InvalidTransition``. ``crew_member_id`` as for ``start_booking``."""
    return _move_job(
        company_id,
        id_or_code,
        crew_member_id,
        complete_job,
        EventType.BOOKING_COMPLETED,
        uow,
        clock,
    )


def _move_job(
    company_id: str,
    id_or_code: str,
    crew_member_id: str | None,
    move: Callable[[Booking, datetime], Booking],
    recorded: EventType,
    uow: UnitOfWork,
    clock: Clock,
) -> Booking:
    """Start or complete one booking (``move``) and record its event, in one unit."""
    at = clock.now()
    with uow:
        booking = _crew_booking(uow, company_id, id_or_code, crew_member_id)
        moved = move(booking, at)
        uow.bookings.save_all([moved])
        uow.outbox.add_all(events_for(recorded, [moved], at=at))
        uow.commit()
    return moved


CREW_JOBS_MAX_DAYS = 31
"""The most local days one ``crew_jobs`` call covers."""


def crew_jobs(
    company_id: str,
    crew_member_id: str | None,
    start: date,
    days: int,
    *,
    uow: UnitOfWork,
    cancelled: bool = False,
) -> list[Booking]:
    """A crew member's jobs (any status but cancelled) with a visit on the local dates
    ``start`` .. ``start + days - 1`` in the company's timezone, each once, by (start, id).
    ``crew_member_id`` None: every crew member's (the admin calendar, in one query);
    ``cancelled``: cancelled jobs too.

    A day's visit belongs to the local date it starts on (a job at 23:30 is that day's
    job, even when it runs past midnight); a multi-day job is listed when any of its days
    falls in the range (``Booking.day_blocks()`` gives its day-by-day times).
    """
    if not 1 <= days <= CREW_JOBS_MAX_DAYS:
        raise ValidationFailed({"days": f"A whole number of days from 1 to {CREW_JOBS_MAX_DAYS}."})
    last = start + timedelta(days=days)
    with uow:
        zone = ZoneInfo(uow.companies.get(company_id).timezone)
        # A multi-day job that covers ``start`` began at most MAX_DAYS - 1 dates before it.
        lo = wall_clock_instant(start - timedelta(days=MAX_DAYS - 1), time(0), zone)
        hi = wall_clock_instant(last, time(0), zone)
        found: list[Booking] = []
        after = None
        while True:
            page = uow.bookings.list(
                company_id,
                PageRequest(limit=MAX_LIMIT, after=after),
                crew_id=crew_member_id,
                starts_from=lo,
                starts_until=hi,
            )
            found.extend(page.items)
            if not page.has_more:
                break
            after = page.next_after

    def on_the_days(booking: Booking) -> bool:
        return (cancelled or booking.status is not BookingStatus.CANCELLED) and any(
            start <= block.astimezone(zone).date() < last for block, _ in booking.day_blocks()
        )

    return sorted(filter(on_the_days, found), key=lambda b: (b.start, b.id))
