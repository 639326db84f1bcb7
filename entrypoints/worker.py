"""The webhook worker (``booking worker``): fans new events out into deliveries and sends
the deliveries that are due, until stopped; ``run_once`` does what is due now and returns.

One loop step dispatches every undispatched event, then sends one claimed batch of due
deliveries; when a step finds nothing to do, the loop sleeps ``POLL_INTERVAL``. Every
``SWEEP_INTERVAL`` (and once in ``run_once``) it also stores the expiry of sent quotes
whose time has come, which records their ``quote.expired`` events. A stop
(SIGTERM, Ctrl-C) lets the attempts in flight finish and record, hands the rest of the
claimed batch back, and returns. Several workers may run at once, on one machine or
many (``booking_core.services.webhook_delivery`` says how they share the work).

The same loop sends email (``booking_core.services.notifications``): each step turns new
events into messages (``mail_events``) and sends one claimed batch of due messages; the
sweep also queues the reminders whose time has come, the quote follow-ups that are due
and the lead follow-up reminders of the day (``booking_core.services.follow_ups``;
``mail.follow_up_failed`` when one could not be composed: it is tried at the next
sweep; ``quotes.follow_ups_skipped`` with how many follow-ups a sweep skipped).
``mail.attempt`` is logged for every try (message, company, kind, attempt, outcome,
error, next retry; never an address or a body) and ``mail.compose_failed`` for an event
whose notice could not be composed.

Logged (structlog): ``webhook.attempt`` for every attempt (endpoint, delivery, event,
attempt number, status, duration, error, next retry; never a URL, header or body),
``webhook.disabled`` when an endpoint is turned off (410, or failing for 5 days),
``webhook.render_failed`` for an event whose body could not be made (it is tried again
by the next step; see ``dispatch_events``), ``quotes.expired`` with the number a sweep expired, and
``worker.error`` when a step fails (the database is unreachable, say); the loop then
carries on after the poll interval.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from random import Random
from typing import Any

import structlog
from attrs import define, field, frozen

from adapters.webhooks.render import EventRenderer
from adapters.webhooks.sender import WebhookSender
from booking_core.notifications import Message, MessageStatus
from booking_core.ports import Clock, Composer, Mailer, Resolver, UnitOfWork
from booking_core.services.follow_ups import queue_due_follow_ups
from booking_core.services.notifications import (
    MAIL_BATCH,
    SEND_BATCH,
    mail_events,
    queue_due_notices,
    send_due,
)
from booking_core.services.quotes import expire_due_quotes
from booking_core.services.webhook_delivery import (
    DELIVERY_BATCH,
    DISPATCH_BATCH,
    LEASE,
    Delivered,
    Render,
    Run,
    Send,
    Sent,
    deliver_due,
    dispatch_events,
    in_turn,
)
from entrypoints.bootstrap import Container

POLL_INTERVAL = 1.0
"""Seconds a worker with nothing to do waits before looking again."""
SENDERS = 8
"""Endpoints a worker sends to at once (each endpoint's deliveries still go one at a time,
in order): a slow receiver holds back its own endpoint, not every company's."""
SWEEP_INTERVAL = 60.0
"""Seconds between two sweeps for sent quotes whose expiry has come (``quote.expired``)."""


@frozen
class Totals:
    """What a worker did: events fanned out, deliveries written, attempts and outcomes."""

    events: int = 0
    deliveries: int = 0
    claimed: int = 0
    """Deliveries claimed (each attempted, given up unsent, or handed back)."""
    attempts: int = 0
    delivered: int = 0
    dropped: int = 0
    disabled: int = 0
    expired_quotes: int = 0
    """Sent quotes whose expiry the sweep stored."""
    messages: int = 0
    """Emails queued (notices of events, reminders)."""
    mail_claimed: int = 0
    mail_attempts: int = 0
    mails_sent: int = 0
    mails_failed: int = 0
    """Emails given up (rejected for good, or out of retries)."""

    @property
    def failed(self) -> int:
        """Attempts that did not deliver (retried later, or given up)."""
        return self.attempts - self.delivered

    def plus(self, other: Totals) -> Totals:
        """Both totals added up."""
        return Totals(
            self.events + other.events,
            self.deliveries + other.deliveries,
            self.claimed + other.claimed,
            self.attempts + other.attempts,
            self.delivered + other.delivered,
            self.dropped + other.dropped,
            self.disabled + other.disabled,
            self.expired_quotes + other.expired_quotes,
            self.messages + other.messages,
            self.mail_claimed + other.mail_claimed,
            self.mail_attempts + other.mail_attempts,
            self.mails_sent + other.mails_sent,
            self.mails_failed + other.mails_failed,
        )

    def as_json(self) -> dict[str, int]:
        """The totals as ``booking worker --once --json`` prints them."""
        return {
            "events": self.events,
            "deliveries": self.deliveries,
            "attempts": self.attempts,
            "delivered": self.delivered,
            "failed": self.failed,
            "dropped": self.dropped,
            "disabled": self.disabled,
            "expiredQuotes": self.expired_quotes,
            "messages": self.messages,
            "mailAttempts": self.mail_attempts,
            "mailsSent": self.mails_sent,
            "mailsFailed": self.mail_attempts - self.mails_sent,
            "mailsGivenUp": self.mails_failed,
        }


def checked_send(sender: WebhookSender, resolver: Resolver, allow_hosts: Collection[str]) -> Send:
    """The worker's ``Send``: the URL checked again (what its host resolves to now), then
    one attempt to a checked address."""

    def send(url: str, headers: Mapping[str, str], body: bytes) -> Sent:
        return sender.check_and_deliver(url, resolver, allow_hosts, headers, body)

    return send


@frozen
class Mail:
    """What the worker sends email with: templates, the mailer, the sender address and
    the public address that links start with."""

    composer: Composer
    mailer: Mailer
    mail_from: str
    base_url: str


def at_once(threads: int) -> Run:
    """``Run`` the jobs on up to ``threads`` threads at once (one job: on this thread)."""

    def run(jobs: Sequence[Callable[[], Any]]) -> list[Any]:
        if len(jobs) < 2 or threads < 2:
            return in_turn(jobs)
        with ThreadPoolExecutor(min(threads, len(jobs)), thread_name_prefix="webhook") as pool:
            return list(pool.map(lambda job: job(), jobs))

    return run


@define
class Worker:
    """Dispatch and delivery over one database; see the module."""

    uow: Callable[[], UnitOfWork]
    render: Render
    send: Send
    clock: Clock
    random: Callable[[], float] = field(factory=lambda: Random().random)
    poll_interval: float = POLL_INTERVAL
    dispatch_batch: int = DISPATCH_BATCH
    delivery_batch: int = DELIVERY_BATCH
    lease: timedelta = LEASE
    senders: int = SENDERS
    sweep_interval: float = SWEEP_INTERVAL
    mail: Mail | None = None
    """Email; None: the worker only delivers webhooks."""
    mail_batch: int = MAIL_BATCH
    send_batch: int = SEND_BATCH
    log: Any = field(factory=lambda: structlog.get_logger("booking.worker"))

    def dispatch(self) -> Totals:
        """Fan every undispatched event out into deliveries."""
        total = Totals()
        while True:
            done = dispatch_events(
                uow=self.uow(), render=self.render, clock=self.clock, limit=self.dispatch_batch
            )
            for unrendered, why in done.unrenderable:
                self.log.error(
                    "webhook.render_failed",
                    company_id=unrendered.company_id,
                    event_id=unrendered.id,
                    event_type=unrendered.type.value,
                    error=why,
                )
            total = total.plus(Totals(events=done.events, deliveries=done.deliveries))
            if done.claimed < self.dispatch_batch or done.events == 0:
                return total  # all claimed, or only events that cannot be rendered left

    def deliver(self, stop: Callable[[], bool] = lambda: False) -> Totals:
        """Claim one batch of due deliveries and attempt each (until ``stop()``)."""
        done = deliver_due(
            uow_factory=self.uow,
            send=self.send,
            clock=self.clock,
            random=self.random,
            limit=self.delivery_batch,
            lease=self.lease,
            stop=stop,
            run=at_once(self.senders),
        )
        self._log(done)
        return Totals(
            claimed=done.claimed,
            attempts=len(done.attempts),
            delivered=done.delivered,
            dropped=done.dropped,
            disabled=len(done.disabled),
        )

    def sweep(self) -> Totals:
        """Store the expiry of every sent quote whose time has come, which records
        ``quote.expired`` for each (dispatched by the next ``dispatch``), and queue the
        email that time brings (reminders)."""
        expired = expire_due_quotes(None, uow_factory=self.uow, clock=self.clock)
        if expired:
            self.log.info("quotes.expired", count=len(expired))
        queued = 0
        if self.mail is not None:
            queued = queue_due_notices(
                uow_factory=self.uow,
                composer=self.mail.composer,
                clock=self.clock,
                base_url=self.mail.base_url,
            )
            queued += self.follow_ups(self.mail)
        return Totals(expired_quotes=len(expired), messages=queued)

    def follow_ups(self, mail: Mail) -> int:
        """Send the quote follow-ups that are due (skipping those of paused quotes) and
        queue the lead follow-up reminders of the day; how many messages were queued."""
        done = queue_due_follow_ups(
            None,
            uow_factory=self.uow,
            clock=self.clock,
            composer=mail.composer,
            base_url=mail.base_url,
        )
        for subject_id, why in done.failures:
            self.log.error("mail.follow_up_failed", subject_id=subject_id, error=why)
        if done.skipped:
            self.log.info("quotes.follow_ups_skipped", count=done.skipped)
        return done.quote_follow_ups + done.lead_reminders

    def mail_events(self) -> Totals:
        """Turn every unmailed event into its messages (the outbox's second consumer)."""
        if self.mail is None:
            return Totals()
        total = Totals()
        while True:
            done = mail_events(
                uow=self.uow(),
                composer=self.mail.composer,
                clock=self.clock,
                base_url=self.mail.base_url,
                limit=self.mail_batch,
            )
            for failed, why in done.failed:
                self.log.error(
                    "mail.compose_failed",
                    company_id=failed.company_id,
                    event_id=failed.id,
                    event_type=failed.type.value,
                    error=why,
                )
            total = total.plus(Totals(messages=done.queued))
            if done.claimed < self.mail_batch:
                return total

    def send_mail(self, stop: Callable[[], bool] = lambda: False) -> Totals:
        """Claim one batch of due messages and send each (until ``stop()``)."""
        if self.mail is None:
            return Totals()
        done = send_due(
            uow_factory=self.uow,
            mailer=self.mail.mailer,
            clock=self.clock,
            mail_from=self.mail.mail_from,
            limit=self.send_batch,
            stop=stop,
        )
        for tried in done.tried:
            self._log_mail(tried)
        return Totals(
            mail_claimed=done.claimed,
            mail_attempts=len(done.tried),
            mails_sent=done.sent,
            mails_failed=done.given_up,
        )

    def run_once(self) -> Totals:
        """Expire lapsed quotes and queue due reminders, dispatch every event, turn
        events into messages, then deliver and send until nothing is due (retries whose
        time has come included); return what was done."""
        total = self.sweep().plus(self.dispatch()).plus(self.mail_events())
        while True:
            done = self.deliver()
            total = total.plus(done)
            if done.claimed == 0:
                break
        while True:
            done = self.send_mail()
            total = total.plus(done)
            if done.mail_claimed == 0:
                return total

    def run(self, stop: threading.Event) -> Totals:
        """Work until ``stop`` is set; a step that fails is logged and the loop goes on."""
        total = Totals()
        next_sweep = time.monotonic()
        while not stop.is_set():
            try:
                done = Totals()
                if time.monotonic() >= next_sweep:
                    next_sweep = time.monotonic() + self.sweep_interval
                    done = self.sweep()
                done = done.plus(self.dispatch()).plus(self.deliver(stop.is_set))
                done = done.plus(self.mail_events()).plus(self.send_mail(stop.is_set))
            except Exception:
                self.log.exception("worker.error")
                done = Totals()
            total = total.plus(done)
            if done.events + done.claimed + done.messages + done.mail_claimed == 0:
                stop.wait(self.poll_interval)
        return total

    def _log_mail(self, tried: Message) -> None:
        retry = tried.status is MessageStatus.PENDING
        self.log.info(
            "mail.attempt",
            company_id=tried.company_id,
            message_id=tried.id,
            kind=tried.kind.value,
            attempt=tried.attempts,
            status=tried.status.value,
            error=tried.last_error,
            next_retry_at=tried.next_attempt_at.isoformat() if retry else None,
        )

    def _log(self, done: Delivered) -> None:
        for attempt in done.attempts:
            self.log.info(
                "webhook.attempt",
                company_id=attempt.company_id,
                endpoint_id=attempt.endpoint_id,
                delivery_id=attempt.delivery_id,
                event_id=attempt.event_id,
                event_type=attempt.event_type,
                attempt=attempt.attempt,
                status_code=attempt.status_code,
                duration_ms=attempt.duration_ms,
                error=attempt.error,
                next_retry_at=attempt.next_retry_at.isoformat() if attempt.next_retry_at else None,
            )
        for off in done.disabled:
            self.log.warning(
                "webhook.disabled",
                company_id=off.company_id,
                endpoint_id=off.endpoint_id,
                reason=off.reason,
                dropped_deliveries=off.dropped,
            )


def worker_for(container: Container, sender: WebhookSender) -> Worker:
    """A worker over the container's database, clock, resolver, allow list and mail."""
    settings = container.settings
    return Worker(
        uow=container.uow,
        render=EventRenderer(settings.base_url),
        send=checked_send(sender, container.resolver, container.webhook_allow_hosts),
        clock=container.clock,
        mail=Mail(container.composer, container.mailer, settings.mail_from, settings.base_url),
    )
