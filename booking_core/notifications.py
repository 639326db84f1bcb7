"""Email messages to customers and staff, as the core decides them.

A ``Message`` (``msg_...``) is one email queued in the unit of work of its cause (a
booking made, a quote sent, a reminder come due) and sent later by the worker through a
``Mailer``; what it says comes from a ``Composer`` (templates are an adapter concern).
``dedupe_key`` names the cause, unique per company, so the same cause never queues two
messages ("booking.created:<event id>", "reminder:<booking id>:<start iso>",
"quote.follow_up:<quote id>:<index>", "portal.sign_in:<link id>").

Sending is at least once: a message is leased while it is sent, and a worker that dies
mid-send leaves it to be sent again when the lease ends. The mailer stamps each email
``Message-ID: <msg_...@host>``, the same on every try, so a duplicate after a crash is
recognisable. A failed try is retried after ``RETRY_DELAYS``; after the last the message
is ``failed``.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any

from attrs import evolve, field, frozen

from booking_core.companies import Company
from booking_core.ids import new_id

RETRY_DELAYS: tuple[timedelta, ...] = (
    timedelta(minutes=1),
    timedelta(minutes=5),
    timedelta(minutes=30),
    timedelta(hours=2),
    timedelta(hours=6),
)
"""Waits before the 2nd to 6th try; a message whose 6th try fails is ``failed``."""
SEND_LEASE = timedelta(minutes=5)
"""How long a claimed message is left to its worker before another may send it."""
MAX_SUBJECT_LENGTH = 200


class MessageKind(StrEnum):
    """What a message is about (its template's name)."""

    BOOKING_CONFIRMED = "booking.confirmed"
    BOOKING_RESCHEDULED = "booking.rescheduled"
    BOOKING_CANCELLED = "booking.cancelled"
    BOOKING_REMINDER = "booking.reminder"
    QUOTE_SENT = "quote.sent"
    QUOTE_FOLLOW_UP = "quote.follow_up"
    LEAD_FOLLOW_UP = "lead.follow_up"
    PORTAL_SIGN_IN = "portal.sign_in"
    OFFICE_CUSTOMER_CHANGE = "office.customer_change"
    """To the company: a customer moved or cancelled a visit on their own page."""
    OFFICE_NEW_LEAD = "office.new_lead"
    """To the company: a new enquiry (lead)."""
    OFFICE_QUOTE_ANSWERED = "office.quote_answered"
    """To the company: a sent quote was accepted or declined."""


class MessageStatus(StrEnum):
    """Where a message stands."""

    PENDING = "pending"
    """Waiting for its next try (``next_attempt_at``)."""
    SENT = "sent"
    """The mail server accepted it."""
    FAILED = "failed"
    """Gave up: rejected for good, or every retry of ``RETRY_DELAYS`` failed."""


class MailRejected(Exception):
    """A mailer could not hand a message on. ``permanent``: trying again cannot help (the
    server refused the recipient); else it is retried after ``RETRY_DELAYS``."""

    def __init__(self, permanent: bool, reason: str) -> None:
        super().__init__(reason)
        self.permanent = permanent
        self.reason = reason


def _aware(_: object, attribute: Any, value: Any) -> None:
    if value is not None and value.tzinfo is None:
        raise ValueError(f"{attribute.name} must be timezone-aware")


def _one_line(_: object, attribute: Any, value: Any) -> None:
    # Header fields: a line break would start a header of the sender's choosing.
    if value is not None and ("\r" in value or "\n" in value):
        raise ValueError(f"{attribute.name} must be a single line")


@frozen(kw_only=True)
class Message:
    """One email, queued with its cause and sent by the worker."""

    id: str
    company_id: str
    kind: MessageKind
    to: str = field(validator=_one_line)
    """One address."""
    subject: str = field(validator=_one_line)
    text: str
    """The plain-text part."""
    html: str
    """The HTML part."""
    dedupe_key: str
    """The cause; unique per company, so the same cause never queues twice."""
    reply_to: str | None = field(default=None, validator=_one_line)
    subject_id: str | None = None
    """The booking, quote, lead or customer the message concerns."""
    status: MessageStatus = MessageStatus.PENDING
    attempts: int = 0
    """Tries made so far."""
    next_attempt_at: datetime = field(validator=_aware)
    """When it is (next) due; while a worker holds it, the end of its lease."""
    last_error: str | None = None
    sent_at: datetime | None = field(default=None, validator=_aware)
    created_at: datetime = field(validator=_aware)


def new_message(
    company: Company,
    kind: MessageKind,
    *,
    to: str,
    composed: tuple[str, str, str],
    dedupe_key: str,
    subject_id: str | None,
    at: datetime,
    order: int = 0,
    reply_to: str | None = None,
    to_office: bool = False,
) -> Message:
    """A pending message of ``company``, due at ``at``, from its composed ``(subject, text,
    html)``; replies go to ``reply_to``, else (unless the message is ``to_office``: the
    company's own people, who would reply to themselves) the company's ``notify_email``.
    Every queued message is made here.
    ``order``: its place among messages queued at the same instant, kept as that many
    microseconds on its ``created_at``, which orders messages due together."""
    subject, text, html = composed
    return Message(
        id=new_id("msg"),
        company_id=company.id,
        kind=kind,
        to=to.strip(),
        subject=subject,
        text=text,
        html=html,
        dedupe_key=dedupe_key,
        reply_to=reply_to or (None if to_office else company.notify_email) or None,
        subject_id=subject_id,
        next_attempt_at=at,
        created_at=at + timedelta(microseconds=order),
    )


def one_line(text: str) -> str:
    """``text`` with every run of whitespace (line breaks included) as one space, stripped:
    what a name or title may become in a header."""
    return " ".join(text.split())


def retry_delay(attempts: int) -> timedelta | None:
    """The wait after the ``attempts``-th failed try, or None when that was the last."""
    if 1 <= attempts <= len(RETRY_DELAYS):
        return RETRY_DELAYS[attempts - 1]
    return None


def after_success(message: Message, now: datetime) -> Message:
    """``message`` once the mail server accepted it."""
    return evolve(
        message,
        status=MessageStatus.SENT,
        attempts=message.attempts + 1,
        sent_at=now,
        next_attempt_at=now,
        last_error=None,
    )


def after_failure(message: Message, now: datetime, reason: str, *, permanent: bool) -> Message:
    """``message`` after a failed try: due again after the next delay of ``RETRY_DELAYS``,
    or ``failed`` when the failure is permanent or that was the last try."""
    attempts = message.attempts + 1
    delay = None if permanent else retry_delay(attempts)
    if delay is None:
        return evolve(
            message,
            status=MessageStatus.FAILED,
            attempts=attempts,
            last_error=reason[:500],
            next_attempt_at=now,
        )
    return evolve(
        message,
        attempts=attempts,
        last_error=reason[:500],
        next_attempt_at=now + delay,
    )
