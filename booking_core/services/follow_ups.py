"""Messages about quotes and leads: the quote itself when it is sent, its follow-ups at
their times, and a lead's follow-up reminder to its owner on the follow-up date.

``queue_due_follow_ups`` is the worker's sweep (every minute, and once in ``booking
worker --once``). For each company it

- settles every scheduled follow-up of a sent, in-date quote whose ``due_at`` has come
  (``quotes.settle_due_follow_ups``): sent while the quote runs, skipped while it is
  paused (never sent later), the latest sent and earlier ones skipped when several came
  due at once; the quote is saved against the version read and the message queued
  (dedupe ``quote.follow_up:<quote id>:<index>``) in one unit of work per quote, so a
  follow-up is marked sent exactly when its message is queued. Answering, converting and
  expiring cancel what is still scheduled (``booking_core.quotes``).
- queues, from ``LEAD_REMINDER_HOUR`` in the company's timezone on a lead's
  ``follow_up_on`` date, one reminder to the lead's owner for each open lead (dedupe
  ``lead.follow_up:<lead id>:<date>``): to the owner when the owner is an email address,
  else to the company's notification address; with neither nothing is queued.

``quote_sent_message`` makes the ``quote.sent`` message (the quote's page link) for the
consumer of ``quote.sent`` events. A quote is mailed to its customer (a merged customer's
survivor), else to its lead's email; a follow-up with nowhere to go is skipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import date, datetime
from zoneinfo import ZoneInfo

from attrs import evolve, frozen

from booking_core import quotes
from booking_core.companies import Company
from booking_core.customers import is_email_address, merge_survivor
from booking_core.errors import ConflictError, NotFoundError
from booking_core.leads import OPEN_STAGES, Lead
from booking_core.notifications import Message, MessageKind, new_message
from booking_core.paging import MAX_LIMIT, PageRequest
from booking_core.ports import Clock, Composer, UnitOfWork
from booking_core.quotes import FollowUpStatus, Quote, QuoteStatus

LEAD_REMINDER_HOUR = 8
"""The hour (company time) from which a lead's follow-up reminder goes out on its date."""


@frozen
class FollowUpsQueued:
    """What one sweep did."""

    quote_follow_ups: int = 0
    """Quote follow-ups sent (their messages queued)."""
    skipped: int = 0
    """Quote follow-ups skipped (paused, superseded, or no address to mail)."""
    lead_reminders: int = 0
    """Lead follow-up reminders queued."""
    failures: tuple[tuple[str, str], ...] = ()
    """``(quote or lead id, why)`` for each one that could not be composed; it is tried
    again by the next sweep and nothing of it was stored."""

    def plus(self, other: FollowUpsQueued) -> FollowUpsQueued:
        """Both added up."""
        return FollowUpsQueued(
            self.quote_follow_ups + other.quote_follow_ups,
            self.skipped + other.skipped,
            self.lead_reminders + other.lead_reminders,
            self.failures + other.failures,
        )


def queue_due_follow_ups(
    company_id: str | None,
    *,
    uow_factory: Callable[[], UnitOfWork],
    clock: Clock,
    composer: Composer,
    base_url: str,
) -> FollowUpsQueued:
    """Settle the due quote follow-ups and queue the lead reminders of one company or
    (``None``) every company, as of ``clock.now()``; see the module. Calling it again at
    the same instant queues nothing twice."""
    at = clock.now()
    with uow_factory() as uow:
        if company_id is None:
            companies = list(uow.companies.list_all())
        else:
            companies = [uow.companies.get(company_id)]
    total = FollowUpsQueued()
    for company in companies:
        total = total.plus(_quote_follow_ups(company, uow_factory, at, composer, base_url))
        total = total.plus(_lead_reminders(company, uow_factory, at, composer))
    return total


def quote_message(
    uow: UnitOfWork,
    company: Company,
    quote: Quote,
    *,
    kind: MessageKind,
    dedupe_key: str,
    at: datetime,
    composer: Composer,
    base_url: str,
    follow_up: int | None = None,
) -> Message | None:
    """The message (``quote.sent`` or ``quote.follow_up``) that mails ``quote`` with its
    page link to its customer, or None when it has no address to go to. Context:
    ``customer_name``, ``quote_url``, ``total_cents``, ``expires`` (the last day, in
    company time, or ""), ``note`` (the quote's message) and ``follow_up`` (1 for the
    first follow-up, 0 for the quote itself)."""
    recipient = quote_recipient(uow, quote)
    if recipient is None:
        return None
    to, name = recipient
    url = quotes.public_url(
        base_url=base_url,
        company_slug=company.slug,
        custom_domain=company.custom_domain,
        token=quote.public_token,
    )
    context: Mapping[str, object] = {
        "customer_name": name,
        "quote_url": url,
        "total_cents": quote.total_cents,
        "expires": _last_day(quote, company),
        "note": quote.message,
        "follow_up": follow_up or 0,
    }
    composed = composer.compose(kind, company, context)
    return new_message(
        company, kind, to=to, composed=composed, dedupe_key=dedupe_key, subject_id=quote.id, at=at
    )


def quote_sent_message(
    uow: UnitOfWork,
    company: Company,
    quote: Quote,
    *,
    at: datetime,
    composer: Composer,
    base_url: str,
) -> Message | None:
    """The ``quote.sent`` email for a ``quote.sent`` event's quote (dedupe
    ``quote.sent:<quote id>``: a quote is sent once), or None with no address to mail."""
    return quote_message(
        uow,
        company,
        quote,
        kind=MessageKind.QUOTE_SENT,
        dedupe_key=f"quote.sent:{quote.id}",
        at=at,
        composer=composer,
        base_url=base_url,
    )


def _last_day(quote: Quote, company: Company) -> str:
    """The quote's last day (``quotes.last_day``) in the company's timezone, as
    ``Tuesday, March 3, 2026``; "" with no expiry."""
    day = quotes.last_day(quote, ZoneInfo(company.timezone))
    return "" if day is None else f"{day:%A}, {day:%B} {day.day}, {day.year}"


def quote_recipient(uow: UnitOfWork, quote: Quote) -> tuple[str, str] | None:
    """``(address, name)`` a quote is mailed to: its customer's, else its lead's."""
    if quote.customer_id is not None:
        try:
            customer = uow.customers.get(quote.company_id, quote.customer_id)
            customer = merge_survivor(
                customer, lambda other: uow.customers.get(quote.company_id, other)
            )
        except NotFoundError:
            customer = None
        if customer is not None and customer.email:
            return customer.email, customer.name
    if quote.lead_id is not None:
        try:
            lead = uow.leads.get(quote.company_id, quote.lead_id)
        except NotFoundError:
            return None
        if lead.email:
            return lead.email, lead.name
    return None


def _has_due(quote: Quote, at: datetime) -> bool:
    return any(f.status is FollowUpStatus.SCHEDULED and f.due_at <= at for f in quote.follow_ups)


def _quote_follow_ups(
    company: Company,
    uow_factory: Callable[[], UnitOfWork],
    at: datetime,
    composer: Composer,
    base_url: str,
) -> FollowUpsQueued:
    due: list[str] = []
    with uow_factory() as uow:
        after = None
        while True:
            page = uow.quotes.list(
                company.id, PageRequest(limit=MAX_LIMIT, after=after), status=QuoteStatus.SENT
            )
            due += [quote.id for quote in page.items if _has_due(quote, at)]
            if not page.has_more:
                break
            after = page.next_after
    total = FollowUpsQueued()
    for quote_id in due:  # one unit of work each: a quote that fails stops no other
        total = total.plus(_settle_one(company, quote_id, uow_factory(), at, composer, base_url))
    return total


def _settle_one(
    company: Company,
    quote_id: str,
    uow: UnitOfWork,
    at: datetime,
    composer: Composer,
    base_url: str,
) -> FollowUpsQueued:
    with uow:
        quote = uow.quotes.get(company.id, quote_id)
        settled, index = quotes.settle_due_follow_ups(quote, at)
        if settled is quote:
            return FollowUpsQueued()
        message = None
        if index is not None:
            try:
                message = quote_message(
                    uow,
                    company,
                    settled,
                    kind=MessageKind.QUOTE_FOLLOW_UP,
                    dedupe_key=f"quote.follow_up:{quote.id}:{index}",
                    at=at,
                    composer=composer,
                    base_url=base_url,
                    follow_up=index + 1,
                )
            except Exception as error:  # a template that fails: try again next sweep
                return FollowUpsQueued(failures=((quote.id, _why(error)),))
            if message is None:  # nowhere to mail it: skipped, not sent
                follow_ups = list(settled.follow_ups)
                follow_ups[index] = evolve(follow_ups[index], status=FollowUpStatus.SKIPPED)
                settled = evolve(settled, follow_ups=tuple(follow_ups))
        try:
            uow.quotes.save(settled, expected_version=quote.version)
        except ConflictError:
            return FollowUpsQueued()  # changed meanwhile: the next sweep looks again
        if message is not None:
            uow.messages.add(message)
        uow.commit()
    newly = [
        after.status
        for before, after in zip(quote.follow_ups, settled.follow_ups, strict=True)
        if before.status is not after.status
    ]
    return FollowUpsQueued(
        quote_follow_ups=newly.count(FollowUpStatus.SENT),
        skipped=newly.count(FollowUpStatus.SKIPPED),
    )


def _lead_reminders(
    company: Company,
    uow_factory: Callable[[], UnitOfWork],
    at: datetime,
    composer: Composer,
) -> FollowUpsQueued:
    local = at.astimezone(ZoneInfo(company.timezone))
    if local.hour < LEAD_REMINDER_HOUR:
        return FollowUpsQueued()
    today = local.date()
    queued = 0
    failures: list[tuple[str, str]] = []
    with uow_factory() as uow:
        after = None
        while True:
            page = uow.leads.list(
                company.id, PageRequest(limit=MAX_LIMIT, after=after), follow_up_on=today
            )
            for lead in page.items:
                if lead.stage not in OPEN_STAGES:
                    continue
                key = f"lead.follow_up:{lead.id}:{today.isoformat()}"
                if any(m.dedupe_key == key for m in uow.messages.for_subject(company.id, lead.id)):
                    continue
                try:
                    message = _lead_message(company, lead, today, key, at, composer)
                except Exception as error:
                    failures.append((lead.id, _why(error)))
                    continue
                if message is not None and uow.messages.add(message):
                    queued += 1
            if not page.has_more:
                break
            after = page.next_after
        uow.commit()
    return FollowUpsQueued(lead_reminders=queued, failures=tuple(failures))


def _lead_message(
    company: Company, lead: Lead, on: date, key: str, at: datetime, composer: Composer
) -> Message | None:
    """The reminder about ``lead`` to its owner, or None with no address to mail.
    Context: ``lead_name``, ``lead_email``, ``lead_phone``, ``lead_stage``,
    ``lead_message``, ``lead_id``, ``owner`` ("" for none), ``follow_up_on``, and
    ``to_office`` (true); replies go to the lead's email, else the company's address."""
    owner = (lead.owner or "").strip()
    to = owner if is_email_address(owner) else staff_address(company)
    if to is None:
        return None
    context: Mapping[str, object] = {
        "lead_name": lead.name,
        "lead_email": lead.email or "",
        "lead_phone": lead.phone_e164 or "",
        "lead_stage": lead.stage.value,
        "lead_message": lead.message,
        "lead_id": lead.id,
        "owner": lead.owner or "",
        "follow_up_on": f"{on:%A}, {on:%B} {on.day}, {on.year}",
        # To the office: a reply writes to the lead (when it gave an email).
        "to_office": True,
        "reply_to": lead.email or None,
    }
    composed = composer.compose(MessageKind.LEAD_FOLLOW_UP, company, context)
    return new_message(
        company,
        MessageKind.LEAD_FOLLOW_UP,
        to=to,
        composed=composed,
        dedupe_key=key,
        subject_id=lead.id,
        at=at,
        reply_to=lead.email or None,
        to_office=True,
    )


def staff_address(company: Company) -> str | None:
    """Where the company's own reminders go when no person is named: its notification
    address, else None."""
    return company.notify_email or None


def _why(error: Exception) -> str:
    return f"{type(error).__name__}: {error}"[:300]
