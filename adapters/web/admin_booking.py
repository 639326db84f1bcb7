"""One booking for the owner and dispatchers: ``/admin/bookings/{id}`` (an id or a human
code) shows the customer, address, selection, price, what was paid (the ledger's paid
total and tips), crew, status and activity log, with the admin's actions as POST forms:
start, complete, cancel (with the API's scopes), reschedule (a new local date and
time, a scope, optionally another crew member) and record a payment or tip received by
hand (cash, check, bank transfer, other: ``POST /payments``'s rules, its
``payment.recorded`` event; a random token in the form is the write's idempotency key,
so a double submit records once).

Every action goes through the domain's use cases with the admin-grade rules of the API
(``crew_member_id=None``; a reschedule is checked against real availability with the
same drive times). A refusal is shown on the page, beside the field it concerns. The
booking is looked up in the signed-in user's company only: another company's id answers
the 404 page, as an id that never existed.
"""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable, Sequence
from datetime import date, datetime, time
from zoneinfo import ZoneInfo

from attrs import frozen
from starlette.responses import Response
from starlette.routing import BaseRoute

from adapters.http import idempotency
from adapters.http.errors import ApiError
from adapters.web.calendar import calendar_href, read_date, service_name
from adapters.web.crew import ASK_BEFORE_START, STATUS_LABELS, start_question
from adapters.web.deps import WebDeps
from adapters.web.nav import ADMINS
from adapters.web.pages import Visit, crew_named, page, roster_names
from adapters.web.setup_forms import FieldErrors
from adapters.web.setup_forms import money as read_money
from adapters.web.time_text import clock_range, clock_time, moment
from booking_core import plans
from booking_core.bookings import (
    ActivityEntry,
    ActivityKind,
    Booking,
    BookingStatus,
    completion_problem,
    local_wall,
    require_scheduled,
    wall_clock_instant,
)
from booking_core.catalog import FeeKind
from booking_core.crew import CrewMember
from booking_core.errors import (
    ConflictError,
    DomainError,
    InvalidTransition,
    PriceNotConfirmed,
    RuleViolation,
    SlotTaken,
    SlotUnavailable,
    ValidationFailed,
)
from booking_core.ledger import MAX_NOTE_CHARS, Kind, Method, PaymentEntry
from booking_core.pricing import LineKind, PriceBreakdown
from booking_core.services.payments import RecordPayment, booking_totals, record_payment
from booking_core.services.scheduling import (
    active_crew,
    cancel_booking,
    cancelled_by,
    complete_booking,
    find_booking,
    reschedule_booking,
    start_booking,
    undo_start_booking,
)

CANCEL_SCOPES = {
    plans.CancelScope.THIS: "This visit only",
    plans.CancelScope.THIS_AND_FUTURE: "This visit and the later visits of its plan",
    plans.CancelScope.PLAN_AFTER: "End the plan after a date (cancels the visits after it)",
}
RESCHEDULE_SCOPES = {
    plans.RescheduleScope.THIS: "This visit only",
    plans.RescheduleScope.THIS_AND_FUTURE: "This visit and the later visits (same shift)",
}
ENTRY_LABELS = {
    Kind.PAYMENT: "Payment",
    Kind.TIP: "Tip",
    Kind.REFUND: "Refund",
    Kind.TIP_REFUND: "Tip refund",
    Kind.DISPUTE: "Disputed",
    Kind.REVERSAL: "Correction",
}
METHOD_LABELS = {
    Method.CARD: "Card",
    Method.CASH: "Cash",
    Method.CHECK: "Check",
    Method.BANK_TRANSFER: "Bank transfer",
    Method.OTHER: "Other",
    Method.OFFLINE: "Offline",
}
"""Each ledger entry's kind and method as the pages name them (here and the portal)."""
PAYMENT_KINDS = {Kind.PAYMENT: "Payment", Kind.TIP: "Tip"}
PAYMENT_METHODS = {
    Method.CASH: "Cash",
    Method.CHECK: "Check",
    Method.BANK_TRANSFER: "Bank transfer",
    Method.OTHER: "Other",
}
"""What the payment form records: money received by hand (``ledger.HAND_METHODS``)."""
CHANGED_MEANWHILE = "The booking changed meanwhile; here it is as it is now. Try again."


def money(cents: int) -> str:
    """``$1,234.50``; ``-$5.00`` below zero."""
    sign = "-" if cents < 0 else ""
    whole, part = divmod(abs(cents), 100)
    return f"{sign}${whole:,}.{part:02d}"


def price_change(before: PriceBreakdown, after: PriceBreakdown) -> str:
    """The sentence a page shows before a move changes a visit's price, naming the date
    fees it gains or loses: "The new date's price: $174.19 (was $146.97), with the Holiday
    surcharge ($25.00)." """
    old = {f.id: f for f in before.fees if f.kind is FeeKind.DATE}
    new = {f.id: f for f in after.fees if f.kind is FeeKind.DATE}
    parts = [
        f"with the {f.name} ({money(f.amount_cents)})"
        for f in new.values()
        if f not in old.values()
    ]
    parts += [
        f"without the {f.name} ({money(f.amount_cents)})" for i, f in old.items() if i not in new
    ]
    named = f", {' and '.join(parts)}" if parts else ""
    was = money(before.total_cents)
    return f"The new date's price: {money(after.total_cents)} (was {was}){named}."


def long_date(day: date) -> str:
    """``Tuesday, March 10, 2026``."""
    return f"{day:%A}, {day:%B} {day.day}, {day.year}"


def _iso_moment(text: object, zone: ZoneInfo) -> str:
    try:
        return moment(datetime.fromisoformat(str(text)), zone)
    except ValueError:
        return str(text)


def activity_line(entry: ActivityEntry, zone: ZoneInfo) -> tuple[str, str, str]:
    """(when, what, details) of one activity entry, in words."""
    data = entry.details
    when = moment(entry.at, zone)
    scope = {"this": "this visit", "this_and_future": "this and later visits"}.get(
        str(data.get("scope", "")), "the plan after a date"
    )
    if entry.kind is ActivityKind.CREATED:
        return when, "Booked", ""
    if entry.kind is ActivityKind.STARTED:
        return when, "Started", ""
    if entry.kind is ActivityKind.START_UNDONE:
        return when, "Start undone", "scheduled again"
    if entry.kind is ActivityKind.COMPLETED:
        return when, "Completed", "without being started first" if data.get("skippedStart") else ""
    if entry.kind is ActivityKind.CANCELLED:
        via = " (through another visit of the plan)" if "targetId" in data else ""
        reason = f" · reason: {data['reason']}" if data.get("reason") else ""
        return when, "Cancelled", f"Scope: {scope}{via}{reason}"
    if entry.kind is ActivityKind.RESCHEDULED:
        parts = [
            f"From {_iso_moment(data.get('from'), zone)} to {_iso_moment(data.get('to'), zone)}"
        ]
        if data.get("by") == "customer":
            parts.append("by the customer on their page")
        if "crewIds" in data:
            parts.append("crew changed")
        if data.get("insideCutoff"):
            parts.append("inside the self-service cutoff")
        old, new = data.get("fromTotalCents"), data.get("toTotalCents")
        if isinstance(old, int) and isinstance(new, int):
            parts.append(f"price {money(old)} \u2192 {money(new)}")
        return when, "Rescheduled", " · ".join(parts)
    if entry.kind is ActivityKind.PLAN_ENDED:
        return when, "Plan ended", f"The plan ends on {data.get('endsOn')}"
    return when, entry.kind.value.replace("_", " ").capitalize(), ""


@frozen
class PriceRow:
    """One line of the price table."""

    label: str
    amount: str
    kind: str = ""


def price_rows(booking: Booking) -> list[PriceRow]:
    """The booking's price, line by line, to the total."""
    return breakdown_rows(booking.price)


def breakdown_rows(price: PriceBreakdown) -> list[PriceRow]:
    """A priced visit (a booking's, a quote's), line by line, to the total: the amounts
    of the breakdown as the core computed them, none added here."""
    rows = []
    for line in price.lines:
        label = line.name
        if line.kind is LineKind.PARAMETER:
            label = f"{line.name}: {line.quantity}"
        elif line.quantity != 1:
            label = f"{line.name} \u00d7 {line.quantity}"
        rows.append(PriceRow(label, money(line.amount_cents), line.kind.value))
    rows.append(PriceRow("Subtotal", money(price.subtotal_cents), "subtotal"))
    rows.extend(PriceRow(d.name, money(-d.amount_cents), "discount") for d in price.discounts)
    if price.referral_discount_cents and not any(
        d.kind.value == "referral" for d in price.discounts
    ):
        rows.append(PriceRow("Referral", money(-price.referral_discount_cents), "discount"))
    rows.extend(PriceRow(f.name, money(f.amount_cents), "fee") for f in price.fees)
    rate = f"{price.tax_rate_bps / 100:g}%"
    rows.append(PriceRow(f"Tax ({rate})", money(price.tax_cents), "tax"))
    rows.append(PriceRow("Total", money(price.total_cents), "total"))
    return rows


NAMES_WHAT_IT_UNDOES = frozenset({Kind.REVERSAL, Kind.REFUND, Kind.TIP_REFUND})
"""Entries listed with the entry they undo (``reverses``): "Correction of the $20.00 tip
of ...", "Refund of the $120.00 payment of ..."."""


@frozen
class LedgerRow:
    """One ledger entry of the booking as its page lists it."""

    when: str
    what: str
    method: str
    note: str
    amount: str
    negative: bool


def ledger_rows(entries: Sequence[PaymentEntry], zone: ZoneInfo) -> list[LedgerRow]:
    """The booking's ledger entries, oldest first, in words; a correction or a refund
    names the entry it undoes (its amount, kind and when it was recorded)."""
    by_id = {entry.id: entry for entry in entries}

    def what(entry: PaymentEntry) -> str:
        label = ENTRY_LABELS.get(entry.kind, entry.kind.value.capitalize())
        reversed_entry = by_id.get(entry.reverses or "")
        if reversed_entry is None or entry.kind not in NAMES_WHAT_IT_UNDOES:
            return label
        of = ENTRY_LABELS.get(reversed_entry.kind, reversed_entry.kind.value).lower()
        amount = money(abs(reversed_entry.amount_cents))
        return f"{label} of the {amount} {of} of {moment(reversed_entry.created_at, zone)}"

    return [
        LedgerRow(
            when=moment(entry.created_at, zone),
            what=what(entry),
            method=METHOD_LABELS.get(entry.method, entry.method.value.capitalize()),
            note=entry.note,
            amount=money(entry.amount_cents),
            negative=entry.amount_cents < 0,
        )
        for entry in sorted(entries, key=lambda e: (e.created_at, e.id))
    ]


@frozen
class Forms:
    """What the action forms show: submitted values and the problems found."""

    values: dict[str, str]
    errors: dict[str, str]
    alert: str | None = None
    """A refusal of the whole action (start, complete, a transition), shown at the top."""
    cancel_alert: str | None = None
    reschedule_alert: str | None = None
    reschedule_price: str | None = None
    """A move's price change (``price_change``), shown for the admin to confirm first."""
    cancel_confirm: str | None = None
    """What a cancel of several visits takes away, shown for the admin to confirm first."""
    start_question: str | None = None
    """"This job starts on ... Start it now?": a start more than an hour ahead, asked first."""
    payment_alert: str | None = None


RESCHEDULE_FIELDS = frozenset({"date", "time", "when", "fold", "scope", "crew"})
CANCEL_FIELDS = frozenset({"cancel_scope", "after", "reason"})


def _answered(forms: Forms) -> str:
    """The action form that came back with a refusal or a question ("reschedule",
    "cancel", "payment"), or "": its box takes the focus, so a form far down the page is
    scrolled to rather than answered out of sight."""
    names = set(forms.errors)
    if forms.payment_alert or any(name.startswith("pay_") for name in names):
        return "payment"
    if forms.cancel_alert or forms.cancel_confirm or names & CANCEL_FIELDS:
        return "cancel"
    if forms.reschedule_alert or forms.reschedule_price or names & RESCHEDULE_FIELDS:
        return "reschedule"
    return ""


def _load(visit: Visit) -> Booking:
    """The booking of the address, in the signed-in user's company only."""
    with visit.deps.reader() as uow:
        return find_booking(uow, visit.signed_in_company.id, visit.request.path_params["ref"])


def render_booking(visit: Visit, booking: Booking, forms: Forms, status: int = 200) -> Response:
    """The booking's page, with ``forms`` in its action forms."""
    company = visit.signed_in_company
    zone = ZoneInfo(company.timezone)  # a booking made before a change of zone: shown on it
    with visit.deps.reader() as uow:
        customer = uow.customers.get(company.id, booking.customer_id)
        totals = booking_totals(uow, company.id, [booking.id])[booking.id]
        entries = uow.payments.for_booking(company.id, booking.id)
        roster = active_crew(uow, company.id)
        crew: list[tuple[CrewMember, bool]] = []
        active = {m.id: m for m in roster}
        for member_id in booking.crew_ids:
            if member_id in active:
                crew.append((active[member_id], True))
            else:
                crew.append((uow.crew.get(company.id, member_id), False))
    now = visit.deps.clock.now()
    local = booking.start.astimezone(zone)
    blocks = []
    for start, end in booking.day_blocks():
        first = start.astimezone(zone)
        blocks.append((long_date(first.date()), *clock_range(first, end.astimezone(zone))))
    scheduled = booking.status is BookingStatus.SCHEDULED
    values = {
        "date": local.date().isoformat(),
        "time": f"{local:%H:%M}",
        "scope": "this",
        "crew": "",
        "price": "",
        "cancel_scope": "this",
        "after": "",
        "reason": "",
        "confirm": "",
        "fold": "",
        "pay_kind": Kind.PAYMENT.value,
        "pay_amount": "",
        "pay_method": Method.CASH.value,
        "pay_note": "",
        **forms.values,
    }
    # A fresh token per form shown: the payment's idempotency key (a resubmit replays).
    values["pay_token"] = forms.values.get("pay_token") or secrets.token_urlsafe(18)
    due = booking.price.total_cents - totals.paid_cents
    # Refunds still standing: "Still to pay" after one says so, or a goodwill refund
    # reads as money owed.
    undone = {e.reverses for e in entries if e.kind is Kind.REVERSAL}
    refunded = -sum(e.amount_cents for e in entries if e.kind is Kind.REFUND and e.id not in undone)
    cancelled = booking.status is BookingStatus.CANCELLED
    # A refused reschedule or cancel whose form is gone (the booking started, finished or
    # was cancelled meanwhile) is said at the top, where the forms' own boxes were.
    alert = forms.alert
    if not scheduled:
        alert = alert or forms.reschedule_alert or forms.cancel_alert
    # A time the clocks show twice that night: the form asks which (kept once chosen).
    folds = _start_of(values, booking, zone, {})[1] if "date" in forms.values else []
    return visit.render(
        "admin_booking.html",
        status=status,
        booking=booking,
        service=service_name(booking),
        status_label=STATUS_LABELS[booking.status],
        blocks=blocks,
        customer=customer,
        crew=crew,
        roster=sorted(roster, key=lambda m: m.name.casefold()),
        address=booking.address,
        price=price_rows(booking),
        paid=money(totals.paid_cents),
        tips=money(totals.tips_cents),
        ledger=ledger_rows(entries, zone),
        due=money(due) if due > 0 and not cancelled else "",
        due_after_refunds=(
            f"paid {money(totals.paid_cents + refunded)}, refunded {money(refunded)}"
            if refunded > 0
            else ""
        ),
        overpaid=money(-due) if due < 0 and not cancelled else "",
        paid_when_cancelled=money(totals.paid_cents) if cancelled and totals.paid_cents > 0 else "",
        payment_kinds=PAYMENT_KINDS,
        payment_methods=PAYMENT_METHODS,
        note_limit=MAX_NOTE_CHARS,
        payment_alert=forms.payment_alert,
        answered=_answered(forms),
        activity=[activity_line(entry, zone) for entry in reversed(booking.activity)],
        can_start=scheduled,
        can_complete=completion_problem(booking, now) is None,
        complete_from=long_date(local.date())
        if booking.status is BookingStatus.IN_PROGRESS and completion_problem(booking, now)
        else "",
        can_undo_start=booking.status is BookingStatus.IN_PROGRESS,
        can_change=scheduled,
        in_plan=booking.plan_id is not None,
        plan_ends_on=long_date(booking.plan_ends_on) if booking.plan_ends_on else "",
        cancel_scopes=CANCEL_SCOPES,
        reschedule_scopes=RESCHEDULE_SCOPES,
        calendar=calendar_href("day", local.date(), booking.status is BookingStatus.CANCELLED),
        cancelled_at=moment(booking.cancelled_at, zone) if booking.cancelled_at else "",
        completed_at=moment(booking.completed_at, zone) if booking.completed_at else "",
        values=values,
        folds=folds,
        errors=forms.errors,
        alert=alert,
        cancel_alert=forms.cancel_alert,
        reschedule_alert=forms.reschedule_alert,
        reschedule_price=forms.reschedule_price,
        cancel_confirm=forms.cancel_confirm,
        start_question=forms.start_question,
    )


def booking_page(visit: Visit) -> Response:
    """``GET /admin/bookings/{ref}``."""
    return render_booking(visit, _load(visit), Forms({}, {}))


Move = Callable[..., Booking]


def _move(visit: Visit, move: Move, verb: str) -> Response:
    booking = _load(visit)
    deps = visit.deps
    try:
        moved = move(
            booking.company_id, booking.id, crew_member_id=None, uow=deps.uow(), clock=deps.clock
        )
    except InvalidTransition as refused:
        alert = f"This job could not be {verb}: {refused.reason}."
        return render_booking(visit, _load(visit), Forms({}, {}, alert=alert), status=409)
    except ConflictError:
        return render_booking(visit, _load(visit), Forms({}, {}, alert=CHANGED_MEANWHILE), 409)
    except RuleViolation as refused:
        return render_booking(visit, _load(visit), Forms({}, {}, alert=str(refused)), 409)
    return visit.redirect(f"/admin/bookings/{moved.id}", flash=f"Job {moved.code} {verb}.")


def start(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/start``: scheduled -> in progress. A job whose start is
    more than an hour away is started only once confirmed (``confirmed=yes``), as in the
    crew portal: a tap on tomorrow's job is more often a slip than a start."""
    if visit.field("confirmed") != "yes":
        booking = _load(visit)
        if (
            booking.status is BookingStatus.SCHEDULED
            and booking.start - visit.deps.clock.now() > ASK_BEFORE_START
        ):
            question = start_question(booking.start, ZoneInfo(visit.signed_in_company.timezone))
            return render_booking(visit, booking, Forms({}, {}, start_question=question))
    return _move(visit, start_booking, "started")


def undo_start(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/undo-start``: a start made by mistake taken back (in
    progress -> scheduled), so the job can be moved or cancelled again."""
    return _move(visit, undo_start_booking, "set back to scheduled")


def complete(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/complete``: in progress (or a scheduled job whose start
    has come) -> completed."""
    return _move(visit, complete_booking, "completed")


def _no_longer_scheduled(visit: Visit, booking: Booking, action: str, verb: str) -> Response | None:
    """The page refusing a reschedule or cancel sent from a page opened before the job
    was started, completed or cancelled: said at the top (409), before anything typed
    is read, since the form it came from is no longer on the page; None while the
    booking is scheduled."""
    try:
        require_scheduled(booking, action)
    except InvalidTransition as refused:
        alert = f"This booking could not be {verb}: {refused.reason}."
        return render_booking(visit, booking, Forms({}, {}, alert=alert), status=409)
    return None


def cancel(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/cancel``: with a scope, an optional date and reason."""
    booking = _load(visit)
    if (stale := _no_longer_scheduled(visit, booking, "cancel", "cancelled")) is not None:
        return stale
    deps = visit.deps
    values = {
        "cancel_scope": visit.field("cancel_scope") or "this",
        "after": visit.field("after").strip(),
        "reason": visit.field("reason").strip(),
        "confirm": visit.field("confirm"),
    }
    errors: dict[str, str] = {}
    try:
        scope = plans.CancelScope(values["cancel_scope"])
    except ValueError:
        errors["cancel_scope"] = "Choose which visits to cancel."
        scope = plans.CancelScope.THIS
    after = None
    if scope is plans.CancelScope.PLAN_AFTER:
        after = read_date(values["after"])
        if after is None:
            errors["after"] = "Enter the plan's last date, e.g. 2026-03-14."
    if not errors:
        try:
            # A cancel of several visits (or of none) says what it takes first.
            several = scope is not plans.CancelScope.THIS
            note = _cancel_to_confirm(visit, booking, scope, after, values) if several else None
            if note is not None:
                return render_booking(visit, booking, Forms(values, {}, cancel_confirm=note))
            changed = cancel_booking(
                booking.company_id,
                booking.id,
                scope,
                after=after,
                reason=values["reason"] or None,
                uow=deps.uow(),
                clock=deps.clock,
            )
        except ValidationFailed as refused:
            errors = dict(refused.field_errors)
        except InvalidTransition as refused:
            alert = f"This booking could not be cancelled: {refused.reason}."
            forms = Forms(values, {}, cancel_alert=alert)
            return render_booking(visit, _load(visit), forms, status=409)
        except ConflictError:
            forms = Forms(values, {}, cancel_alert=CHANGED_MEANWHILE)
            return render_booking(visit, _load(visit), forms, status=409)
        else:
            gone = sum(1 for b in changed if b.status is BookingStatus.CANCELLED)
            more = f" ({gone} visits)" if gone > 1 else ""
            return visit.redirect(
                f"/admin/bookings/{booking.id}", flash=f"Booking {booking.code} cancelled{more}."
            )
    if booking.plan_id is None and errors.keys() - {"reason"}:
        # a one-time booking's form has neither scopes nor a date to show the error beside
        alert = "This booking is not part of a plan: only this visit can be cancelled."
        return render_booking(visit, booking, Forms(values, errors, cancel_alert=alert), status=422)
    return render_booking(visit, booking, Forms(values, errors), status=422)


def _cancel_to_confirm(
    visit: Visit,
    booking: Booking,
    scope: plans.CancelScope,
    after: date | None,
    values: dict[str, str],
) -> str | None:
    """What a cancel of several visits (or of none) would take away, for the admin to see
    before it is made (then ``values["confirm"]`` holds the visits' ids to send back), or
    None when the form sent back the very visits the cancel takes now. A mistyped date
    ending a plan (2020 for 2026) then shows "every visit" instead of cancelling it."""
    deps = visit.deps
    gone = cancelled_by(
        booking.company_id, booking.id, scope, after=after, uow=deps.reader(), clock=deps.clock
    )
    ids = ",".join(b.id for b in gone)
    if ids and values["confirm"] == ids:
        return None
    values["confirm"] = ids
    if not gone:
        return "No visit would be cancelled: none is scheduled after that date."
    zone = ZoneInfo(visit.signed_in_company.timezone)
    dates = [long_date(b.start.astimezone(zone).date()) for b in gone]
    listed = ", ".join(dates[:6]) + (f" and {len(dates) - 6} more" if len(dates) > 6 else "")
    count = "1 visit" if len(gone) == 1 else f"{len(gone)} visits"
    return f"This cancels {count}: {listed}. Press Cancel booking again to cancel them."


def _start_of(
    values: dict[str, str], booking: Booking, zone: ZoneInfo, errors: dict[str, str]
) -> tuple[datetime | None, list[tuple[str, str]]]:
    """The instant the date and time fields name in ``zone`` (the company's timezone);
    and, for a time the clocks show twice that night (they go back), the two to choose
    from, as ``(fold, label)``, until the form says which (``values["fold"]``). The
    booking's own date and time, left as the form showed them, are its own instant. A
    time the clocks skip that night (they go forward) is refused, naming the time the
    clocks show instead: nothing moves to an hour nobody typed."""
    day = read_date(values["date"])
    if day is None:
        errors["date"] = "Enter a date, e.g. 2026-03-14."
    try:
        wall = time.fromisoformat(values["time"])
    except ValueError:
        errors["time"] = "Enter a time, e.g. 09:30."
    if errors or day is None:
        return None, []
    first, second = (wall_clock_instant(day, wall, zone, fold=f) for f in (0, 1))
    if local_wall(booking.start, zone) == local_wall(first, zone):
        return booking.start, []  # the time the form showed, left as it was
    if first == second:
        if local_wall(first, zone) != datetime.combine(day, wall.replace(tzinfo=None)):
            errors["time"] = (
                f"{values['time']} does not come that night: the clocks go forward. "
                f"Did you mean {clock_time(first.astimezone(zone))}?"
            )
            return None, []
        return first, []
    choices = [
        (str(fold), f"{clock_time(instant.astimezone(zone))}, {when} the clocks go back")
        for fold, instant, when in ((0, first, "before"), (1, second, "after"))
    ]
    if values["fold"] not in ("0", "1"):
        errors["fold"] = f"{values['time']} comes twice that night: choose which."
        return None, choices
    return (second if values["fold"] == "1" else first), choices


def _confirmed_totals(text: str) -> dict[str, int]:
    """The totals a confirm step showed (``values["price"]``: ``id:cents,...``); what is
    not in that form confirms nothing."""
    pairs = (part.partition(":") for part in text.split(",")) if text else ()
    return {
        booking_id: int(cents)
        for booking_id, _, cents in pairs
        if booking_id and re.fullmatch(r"[0-9]{1,18}", cents)
    }


def _price_to_confirm(
    booking: Booking,
    moves: Sequence[tuple[Booking, Booking]],
    values: dict[str, str],
    zone: ZoneInfo,
) -> str:
    """The price change the admin must see before the move (``PriceNotConfirmed``'s
    ``moves``); ``values["price"]`` then holds the new totals to send back."""
    values["price"] = ",".join(f"{after.id}:{after.price.total_cents}" for _, after in moves)
    before, after = moves[0]
    note = price_change(before.price, after.price)
    if before.id != booking.id:
        note = f"{long_date(after.start.astimezone(zone).date())}: {note}"
    if len(moves) > 1:
        note += f" {len(moves) - 1} more moved visits change price too, each for its own date."
    return f"{note} Press Reschedule again to move it at this price."


def _moved_flash(
    before: Booking, after: Booking, count: int, names: dict[str, str], zone: ZoneInfo
) -> str:
    """What a done reschedule says: the new time, the new crew, or both."""
    more = f" and {count - 1} later visits" if count > 1 else ""
    local = after.start.astimezone(zone)
    when = f"moved to {long_date(local.date())}, {clock_time(local)}"
    crew = ""
    if set(after.crew_ids) != set(before.crew_ids):
        crew = " and ".join(names.get(i, i) for i in after.crew_ids)
    if crew and after.start == before.start:
        return f"Booking {before.code}{more} given to {crew}, at the same time."
    return f"Booking {before.code}{more} {when}{f', with {crew}' if crew else ''}."


def reschedule(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/reschedule``: a new local date and time, a scope and
    optionally another crew member, checked against availability."""
    booking = _load(visit)
    stale = _no_longer_scheduled(visit, booking, "reschedule", "rescheduled")
    if stale is not None:
        return stale
    deps = visit.deps
    values = {
        "date": visit.field("date").strip(),
        "time": visit.field("time").strip(),
        "scope": visit.field("scope") or "this",
        "crew": visit.field("crew").strip(),
        "price": visit.field("price").strip(),
        "fold": visit.field("fold").strip(),
    }
    errors: dict[str, str] = {}
    try:
        scope = plans.RescheduleScope(values["scope"])
    except ValueError:
        errors["scope"] = "Choose which visits to move."
        scope = plans.RescheduleScope.THIS
    zone = ZoneInfo(visit.signed_in_company.timezone)
    new_start, _ = _start_of(values, booking, zone, errors)  # its choices: render_booking
    crew_ids = None
    if values["crew"]:
        with deps.reader() as uow:
            if values["crew"] not in {m.id for m in active_crew(uow, booking.company_id)}:
                errors["crew"] = "Choose a crew member from the list."
        crew_ids = (values["crew"],)
    if errors or new_start is None:
        return render_booking(visit, booking, Forms(values, errors), status=422)
    try:
        changed = reschedule_booking(
            booking.company_id,
            booking.id,
            new_start,
            scope,
            crew_ids=crew_ids,
            confirmed_totals=_confirmed_totals(values["price"]),
            uow=deps.uow(),
            clock=deps.clock,
            drive=deps.drive,
        )
    except PriceNotConfirmed as unconfirmed:
        note = _price_to_confirm(booking, unconfirmed.moves, values, zone)
        return render_booking(visit, booking, Forms(values, {}, reschedule_price=note))
    except SlotTaken:
        errors["when"] = "That time is taken: the crew already has a job then. Pick another time."
    except SlotUnavailable as refused:
        names = roster_names(deps, booking.company_id, services=True)
        errors["when"] = f"That time is not open: {crew_named(refused.reason, names)}."
    except ValidationFailed as refused:
        for name, text in refused.field_errors.items():
            field = "when" if name == "start_iso" else "crew" if name.startswith("crew") else name
            errors.setdefault(field, text)
    except InvalidTransition as refused:
        alert = f"This booking could not be rescheduled: {refused.reason}."
        forms = Forms(values, {}, reschedule_alert=alert)
        return render_booking(visit, _load(visit), forms, status=409)
    except ConflictError:
        forms = Forms(values, {}, reschedule_alert=CHANGED_MEANWHILE)
        return render_booking(visit, _load(visit), forms, status=409)
    else:
        if not changed:
            flash = "Nothing changed: that is already the booking's time and crew."
        else:
            moved = next((b for b in changed if b.id == booking.id), changed[0])
            names = roster_names(deps, moved.company_id)
            flash = _moved_flash(booking, moved, len(changed), names, zone)
        return visit.redirect(f"/admin/bookings/{booking.id}", flash=flash)
    return render_booking(visit, booking, Forms(values, errors), status=422)


def record(visit: Visit) -> Response:
    """``POST /admin/bookings/{ref}/payment``: a payment or tip received by hand."""
    booking = _load(visit)
    values = {
        "pay_kind": visit.field("pay_kind"),
        "pay_amount": visit.field("pay_amount").strip(),
        "pay_method": visit.field("pay_method"),
        "pay_note": visit.field("pay_note").strip(),
        "pay_token": visit.field("pay_token").strip(),
    }
    errors = FieldErrors()
    kinds = {kind.value: kind for kind in PAYMENT_KINDS}
    methods = {method.value: method for method in PAYMENT_METHODS}
    kind = kinds.get(values["pay_kind"])
    if kind is None:
        errors.add("pay_kind", "Choose a payment or a tip.")
    method = methods.get(values["pay_method"])
    if method is None:
        errors.add("pay_method", "Choose how the money came in.")
    cents = read_money(errors, "pay_amount", values["pay_amount"], low=1)
    if len(values["pay_note"]) > MAX_NOTE_CHARS:
        errors.add("pay_note", f"At most {MAX_NOTE_CHARS:,} characters.")
    if not values["pay_token"] or len(values["pay_token"]) > 64:
        values["pay_token"] = ""  # a form not from this page: a fresh one is shown
        errors.add("pay_amount", "The form was out of date; check it and record again.")
    if errors or kind is None or method is None:
        return render_booking(visit, booking, Forms(values, dict(errors)), status=422)
    company = visit.signed_in_company
    deps = visit.deps
    body = {"kind": kind.value, "amountCents": cents, "method": method.value,
            "note": values["pay_note"]}  # fmt: skip
    gate = idempotency.Gate.of(
        company.id,
        f"admin-payment:{values['pay_token']}",
        "POST",
        f"/admin/bookings/{booking.id}/payment",
        body,
        deps.clock.now(),
    )

    def work(unit: object) -> idempotency.Answer:
        entry = record_payment(
            RecordPayment(
                company_id=company.id,
                booking_id=booking.id,
                kind=kind,
                amount_cents=cents,
                method=method,
                note=values["pay_note"],
            ),
            uow=unit,  # type: ignore[arg-type]
            clock=deps.clock,
        )
        return idempotency.Answer(201, entry.id.encode())

    def refused(error: Exception) -> idempotency.Answer:
        if isinstance(error, DomainError) and not isinstance(error, ConflictError):
            return idempotency.Answer(422, str(error).encode())
        raise error

    try:
        answer = idempotency.run_once(deps.uow, gate, work, refused)
    except ApiError as busy:  # the form's token: still in use, or used for another payment
        alert = (
            "This form already recorded another payment; record this one in the fresh form below."
            if busy.code == "idempotency_key_reused"
            else "This payment is being recorded; reload the page in a moment."
        )
        fresh = {**values, "pay_token": ""}
        return render_booking(visit, _load(visit), Forms(fresh, {}, payment_alert=alert), 409)
    except ConflictError:
        forms = Forms(values, {}, payment_alert=CHANGED_MEANWHILE)
        return render_booking(visit, _load(visit), forms, status=409)
    if answer.status != 201:
        alert = f"Not recorded: {answer.body.decode()}"
        return render_booking(visit, booking, Forms(values, {}, payment_alert=alert), 422)
    what = "Tip" if kind is Kind.TIP else "Payment"
    flash = f"{what} of {money(cents)} ({PAYMENT_METHODS[method].lower()}) recorded."
    return visit.redirect(f"/admin/bookings/{booking.id}", flash=flash)


def routes(deps: WebDeps) -> list[BaseRoute]:
    """The booking's page and its actions."""
    post = ("POST",)
    return [
        page("/admin/bookings/{ref}", deps, booking_page, roles=ADMINS),
        page("/admin/bookings/{ref}/start", deps, start, methods=post, roles=ADMINS),
        page("/admin/bookings/{ref}/complete", deps, complete, methods=post, roles=ADMINS),
        page("/admin/bookings/{ref}/undo-start", deps, undo_start, methods=post, roles=ADMINS),
        page("/admin/bookings/{ref}/cancel", deps, cancel, methods=post, roles=ADMINS),
        page("/admin/bookings/{ref}/reschedule", deps, reschedule, methods=post, roles=ADMINS),
        page("/admin/bookings/{ref}/payment", deps, record, methods=post, roles=ADMINS),
    ]
