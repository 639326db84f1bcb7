"""The lifecycle of one quote as a hypothesis state machine.

A small model predicts, for every action at the current instant, whether the domain
allows or refuses it; invariants then hold over whole random histories.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta

import attrs
import pytest
from hypothesis import event, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from booking_core import conversion, quotes
from booking_core.catalog import Catalog, Frequency, Industry, Service
from booking_core.conversion import (
    ConvertRequest,
)
from booking_core.errors import DomainError, InvalidTransition, ValidationFailed
from booking_core.pricing import Selection, price
from booking_core.quotes import FollowUpStatus, ManualLine, Quote, QuoteStatus

AT = datetime(2026, 3, 2, 14, 0, tzinfo=UTC)
CATALOG = Catalog(
    company_id="cmp_1",
    timezone="America/Chicago",
    industries=(
        Industry(
            "ind_1",
            "Cleaning",
            (Service("svc_std", "Standard", 10_000, 120), Service("svc_deep", "Deep", 20_000, 240)),
        ),
    ),
    frequencies=(Frequency("one_time", "One time", None),),
)
SELECTION = Selection(service_id="svc_std")
QUARTER = timedelta(minutes=15)


@attrs.define
class Model:
    """What the quote should be: the few facts that decide every action."""

    status: QuoteStatus
    expires_at: datetime | None
    hand_priced: bool
    paused: bool = False
    booking_id: str | None = None

    def effective(self, now: datetime) -> QuoteStatus:
        if (
            self.status is QuoteStatus.SENT
            and self.expires_at is not None
            and self.expires_at <= now
        ):
            return QuoteStatus.EXPIRED
        return self.status

    def answerable(self, now: datetime) -> bool:
        return self.effective(now) is QuoteStatus.SENT

    def convertible(self, now: datetime) -> bool:
        state = self.effective(now)
        return state in (QuoteStatus.SENT, QuoteStatus.ACCEPTED) and self.booking_id is None


class QuoteLifecycle(RuleBasedStateMachine):
    """One quote, driven by random actions at a clock that only moves forward."""

    now: datetime
    quote: Quote
    model: Model
    changes: int
    bookings_seen: set[str]
    next_booking: int
    settled: dict[int, FollowUpStatus]

    @initialize(
        hand_priced=st.booleans(),
        expires_in_hours=st.one_of(st.none(), st.integers(min_value=1, max_value=24 * 14)),
        send_now=st.booleans(),
    )
    def create(self, hand_priced: bool, expires_in_hours: int | None, send_now: bool) -> None:
        self.now = AT
        expires_at = None if expires_in_hours is None else AT + timedelta(hours=expires_in_hours)
        if hand_priced:
            self.quote = quotes.create_quote(
                company_id="cmp_1",
                at=AT,
                lead_id="lead_1",
                manual_lines=(ManualLine("Job", 9_000),),
                expires_at=expires_at,
            )
        else:
            self.quote = quotes.create_quote(
                company_id="cmp_1",
                at=AT,
                customer_id="cus_1",
                selection=SELECTION,
                breakdown=price(CATALOG, SELECTION, at=AT),
                expires_at=expires_at,
            )
        self.model = Model(QuoteStatus.DRAFT, expires_at, hand_priced)
        self.changes = 0
        self.bookings_seen = set()
        self.next_booking = 0
        self.settled = {}
        if send_now:  # half the histories start sent, where most of the moves are
            self.send()

    def attempt(
        self,
        label: str,
        action: Callable[[Quote], Quote],
        *,
        refusal: type[DomainError] | None,
        changes: bool = True,
    ) -> Quote | None:
        """Run ``action``; it must be refused with ``refusal`` if one is predicted."""
        before = self.quote
        snapshot = attrs.evolve(before)
        event(f"{label}: {refusal.__name__ if refusal else 'allowed'}")
        if refusal is not None:
            with pytest.raises(refusal):
                action(before)
            assert before == snapshot  # a refused action leaves the quote unchanged
            return None
        after = action(before)
        if changes:
            assert after.version == before.version + 1
            assert after.updated_at == self.now
            self.changes += 1
        else:
            assert after is before
        self.quote = after
        if after.booking_id is not None:
            self.bookings_seen.add(after.booking_id)
        return after

    @rule(minutes=st.integers(min_value=0, max_value=60 * 24 * 2))
    def advance_clock(self, minutes: int) -> None:
        self.now += timedelta(minutes=minutes)

    @precondition(lambda self: self.model.expires_at is not None)
    @rule(offset=st.sampled_from([-QUARTER, timedelta(0), QUARTER]))
    def advance_to_expiry(self, offset: timedelta) -> None:
        """Land on either side of the expiry instant, or exactly on it."""
        assert self.model.expires_at is not None
        self.now = max(self.now, self.model.expires_at + offset)

    @rule()
    def send(self) -> None:
        model = self.model
        in_date = model.expires_at is None or self.now < model.expires_at
        allowed = model.status is QuoteStatus.DRAFT and in_date
        if self.attempt("send", lambda q: quotes.send(q, self.now), refusal=_unless(allowed)):
            model.status = QuoteStatus.SENT

    @rule()
    def accept(self) -> None:
        allowed = self.model.answerable(self.now)
        if self.attempt("accept", lambda q: quotes.accept(q, self.now), refusal=_unless(allowed)):
            self.model.status = QuoteStatus.ACCEPTED

    @rule()
    def reject(self) -> None:
        allowed = self.model.answerable(self.now)
        if self.attempt("reject", lambda q: quotes.reject(q, self.now), refusal=_unless(allowed)):
            self.model.status = QuoteStatus.DECLINED

    def set_paused(self, paused: bool) -> None:
        action = quotes.pause if paused else quotes.resume
        allowed = self.model.answerable(self.now)
        changes = self.model.paused is not paused
        if self.attempt(
            action.__name__,
            lambda q: action(q, self.now),
            refusal=_unless(allowed),
            changes=changes,
        ):
            self.model.paused = paused

    @rule()
    def pause(self) -> None:
        self.set_paused(True)

    @rule()
    def resume(self) -> None:
        self.set_paused(False)

    @rule()
    def settle_follow_ups(self) -> None:
        """The worker's sweep: due follow-ups sent while running, skipped while paused."""
        before = self.quote
        after, index = quotes.settle_due_follow_ups(before, self.now)
        due = [
            i
            for i, f in enumerate(before.follow_ups)
            if f.status is FollowUpStatus.SCHEDULED and f.due_at <= self.now
        ]
        event(f"settle_follow_ups: {len(due)} due, paused={self.model.paused}")
        if not due or not self.model.answerable(self.now):
            assert (after, index) == (before, None)
            return
        assert index == (None if self.model.paused else due[-1])
        for i, (old, new) in enumerate(zip(before.follow_ups, after.follow_ups, strict=True)):
            if i in due:
                wanted = FollowUpStatus.SENT if i == index else FollowUpStatus.SKIPPED
                assert new.status is wanted
            else:
                assert new == old
        assert after.version == before.version + 1
        self.changes += 1
        self.quote = after

    @rule()
    def expire(self) -> None:
        model = self.model
        already = model.status is QuoteStatus.EXPIRED
        allowed = already or model.effective(self.now) is QuoteStatus.EXPIRED
        if self.attempt(
            "expire",
            lambda q: quotes.expire(q, self.now),
            refusal=_unless(allowed),
            changes=not already,
        ):
            model.status = QuoteStatus.EXPIRED

    @rule(
        quarters_ahead=st.integers(min_value=-2, max_value=40),
        misaligned=st.booleans(),
        with_service=st.booleans(),
    )
    def begin_conversion(self, quarters_ahead: int, misaligned: bool, with_service: bool) -> None:
        model = self.model
        base = self.now.replace(minute=self.now.minute // 15 * 15, second=0, microsecond=0)
        start = (
            base + quarters_ahead * QUARTER + (timedelta(minutes=7) if misaligned else QUARTER * 0)
        )
        request = ConvertRequest(start=start, service_id="svc_deep" if with_service else None)
        if not model.convertible(self.now):
            refusal: type[DomainError] | None = InvalidTransition
        elif model.hand_priced and not with_service:
            refusal = InvalidTransition
        elif misaligned or start < self.now or (with_service and not model.hand_priced):
            refusal = ValidationFailed  # a catalog-priced quote is filed under its own service
        else:
            refusal = None
        if self.attempt(
            "begin_conversion",
            # A quote for a lead alone is converted for the customer found for the lead.
            lambda q: conversion.begin_conversion(
                conversion.for_customer(q, "cus_lead"), request, catalog=CATALOG, at=self.now
            )[0],
            refusal=refusal,
        ):
            model.status = QuoteStatus.CONVERTED

    @rule()
    def complete_conversion(self) -> None:
        booking_id = f"bkg_{self.next_booking}"
        self.next_booking += 1
        allowed = self.model.status is QuoteStatus.CONVERTED and self.model.booking_id is None
        if self.attempt(
            "complete_conversion",
            lambda q: conversion.complete_conversion(q, booking_id, self.now),
            refusal=_unless(allowed),
        ):
            self.model.booking_id = booking_id

    @rule()
    def link_booking(self) -> None:
        booking_id = f"bkg_{self.next_booking}"
        self.next_booking += 1
        allowed = self.model.convertible(self.now)
        if self.attempt(
            "link_booking",
            lambda q: conversion.link_booking(q, booking_id, self.now),
            refusal=_unless(allowed),
        ):
            self.model.status = QuoteStatus.CONVERTED
            self.model.booking_id = booking_id

    def allowed_actions(self) -> list[Callable[[], None]]:
        """The actions the model allows now, so histories also reach the rarer moves."""
        model, now = self.model, self.now
        actions: list[Callable[[], None]] = []
        if model.status is QuoteStatus.DRAFT and (
            model.expires_at is None or now < model.expires_at
        ):
            actions.append(self.send)
        if model.answerable(now):
            actions += [self.accept, self.reject, self.pause, self.resume, self.settle_follow_ups]
        if model.effective(now) is QuoteStatus.EXPIRED:
            actions.append(self.expire)
        if model.convertible(now):
            actions += [
                lambda: self.begin_conversion(1, misaligned=False, with_service=model.hand_priced),
                self.link_booking,
            ]
        if model.status is QuoteStatus.CONVERTED and model.booking_id is None:
            actions.append(self.complete_conversion)
        return actions

    @precondition(lambda self: bool(self.allowed_actions()))
    @rule(data=st.data())
    def take_an_allowed_action(self, data: st.DataObject) -> None:
        data.draw(st.sampled_from(self.allowed_actions()), label="action")()

    @invariant()
    def matches_the_model(self) -> None:
        assert self.quote.status is self.model.status
        assert self.quote.follow_ups_paused is self.model.paused
        assert self.quote.booking_id == self.model.booking_id
        assert quotes.effective_status(self.quote, self.now) is self.model.effective(self.now)

    @invariant()
    def a_settled_follow_up_never_changes_again(self) -> None:
        for i, f in enumerate(self.quote.follow_ups):
            if i in self.settled:
                assert f.status is self.settled[i]
            elif f.status is not FollowUpStatus.SCHEDULED:
                self.settled[i] = f.status

    @invariant()
    def version_counts_every_change(self) -> None:
        assert self.quote.version == 1 + self.changes

    @invariant()
    def converted_means_accepted_and_at_most_one_booking(self) -> None:
        if self.quote.status is QuoteStatus.CONVERTED:
            assert self.quote.accepted_at is not None
            assert self.quote.converted_at is not None
            assert self.quote.accepted_at <= self.quote.converted_at
        assert len(self.bookings_seen) <= 1

    @invariant()
    def never_answered_past_expiry(self) -> None:
        expires_at = self.quote.expires_at
        if expires_at is None:
            return
        # Converting a sent quote accepts it at that instant, so this covers conversion too.
        for answered_at in (self.quote.accepted_at, self.quote.declined_at):
            assert answered_at is None or answered_at < expires_at


def _unless(allowed: bool) -> type[DomainError] | None:
    return None if allowed else InvalidTransition


QuoteLifecycle.TestCase.settings = settings(max_examples=100, stateful_step_count=40, deadline=None)
TestQuoteLifecycle = QuoteLifecycle.TestCase
