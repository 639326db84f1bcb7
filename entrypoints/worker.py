"""The webhook worker (``booking worker``): fans new events out into deliveries and sends
the deliveries that are due, until stopped; ``run_once`` does what is due now and returns.

One loop step dispatches every undispatched event, then, while one of its ``SENDERS``
threads is free, claims due deliveries and hands each endpoint's share to a free thread
(``Senders``): it never waits for a share to finish, so a receiver that stalls holds
back only its own endpoint's deliveries, and the next step claims and sends every other
endpoint's. When a step finds nothing to do, the loop sleeps ``POLL_INTERVAL``, or less
when a share finishes meanwhile (a thread is free to claim for). Every
``SWEEP_INTERVAL`` (and once in ``run_once``) it also stores the expiry of sent quotes
whose time has come, which records their ``quote.expired`` events. A stop
(SIGTERM, Ctrl-C) lets the attempts in flight finish and record, hands the rest of what
it claimed back, and returns. Several workers may run at once, on one machine or
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
from collections.abc import Callable, Collection, Mapping
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
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
    Disabled,
    Render,
    Send,
    Sent,
    Share,
    ShareSent,
    claim_shares,
    dispatch_events,
    release,
    send_share,
)
from booking_core.webhook_endpoints import Attempt
from entrypoints.bootstrap import Container

POLL_INTERVAL = 1.0
"""Seconds a worker with nothing to do waits before looking again."""
SENDERS = 8
"""Endpoints a worker sends to at once (each endpoint's deliveries still go one at a time,
in order): a slow receiver holds back its own endpoint, not every company's. A new claim
is made as soon as one of them is free."""
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
        senders = Senders(self, lambda: False)
        try:
            while True:
                done = senders.step()
                total = total.plus(done)
                if done.claimed == 0:
                    if senders.idle:
                        break
                    senders.wait(None)  # until a share finishes: a sender to claim for
        finally:
            total = total.plus(senders.close())
        senders.raise_error()
        while True:
            done = self.send_mail()
            total = total.plus(done)
            if done.mail_claimed == 0:
                return total

    def run(self, stop: threading.Event) -> Totals:
        """Work until ``stop`` is set; a step that fails is logged and the loop goes on."""
        total = Totals()
        next_sweep = time.monotonic()
        senders = Senders(self, stop.is_set)
        try:
            while not stop.is_set():
                try:
                    done = Totals()
                    if time.monotonic() >= next_sweep:
                        next_sweep = time.monotonic() + self.sweep_interval
                        done = self.sweep()
                    done = done.plus(self.dispatch()).plus(senders.step())
                    done = done.plus(self.mail_events()).plus(self.send_mail(stop.is_set))
                except Exception:
                    self.log.exception("worker.error")
                    done = Totals()
                total = total.plus(done)
                if done.events + done.claimed + done.messages + done.mail_claimed == 0:
                    if senders.idle:
                        stop.wait(self.poll_interval)
                    else:
                        senders.wait(self.poll_interval)
        finally:
            total = total.plus(senders.close())
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

    def log_attempt(self, attempt: Attempt, disabled: Disabled | None) -> None:
        """``webhook.attempt`` for one attempt, as soon as it is recorded (on the sender's
        thread), and ``webhook.disabled`` when it turned its endpoint off."""
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
        if disabled is not None:
            self.log.warning(
                "webhook.disabled",
                company_id=disabled.company_id,
                endpoint_id=disabled.endpoint_id,
                reason=disabled.reason,
                dropped_deliveries=disabled.dropped,
            )


EndpointKey = tuple[str, str]
"""An endpoint as deliveries name it: ``(company_id, endpoint_id)``."""


class Senders:
    """A worker's ``SENDERS`` threads, for as long as its loop (or ``run_once``) runs.

    ``step`` never waits for a send: it collects the shares that finished (logging their
    attempts, handing back what they left unsent), starts the shares that wait, then, while
    a thread is free, claims (``claim_shares``) and starts the new shares. A share whose
    endpoint already has one in flight here waits for it to finish, so each endpoint's
    deliveries still go one at a time, in claim order (its first attempts in event
    order: the claim takes none behind one not yet attempted). Once ``stop()`` says so,
    nothing more is claimed or started and what waits is handed back; ``close`` lets the
    shares in flight finish (their attempts recorded) and ends the threads."""

    def __init__(self, worker: Worker, stop: Callable[[], bool]) -> None:
        self._worker = worker
        self._stop = stop
        self._threads = max(1, worker.senders)
        self._pool = ThreadPoolExecutor(self._threads, thread_name_prefix="webhook")
        self._running: dict[EndpointKey, Future[ShareSent]] = {}
        self._waiting: list[Share] = []
        self._error: BaseException | None = None
        """The first exception a share ended with."""

    @property
    def idle(self) -> bool:
        """Nothing in flight and nothing waiting."""
        return not self._running and not self._waiting

    def step(self) -> Totals:
        """Collect, start and claim as the class says; what finished and was claimed."""
        total = self._collect()
        if self._stop():
            self._hand_back()
            return total
        self._start()
        if len(self._running) < self._threads:
            worker = self._worker
            shares = claim_shares(
                uow_factory=worker.uow,
                clock=worker.clock,
                limit=worker.delivery_batch,
                lease=worker.lease,
            )
            total = total.plus(Totals(claimed=sum(len(share.deliveries) for share in shares)))
            self._waiting.extend(shares)
            self._start()
        return total

    def wait(self, timeout: float | None) -> None:
        """Until a share in flight finishes (at most ``timeout`` seconds)."""
        if self._running:
            wait(list(self._running.values()), timeout, return_when=FIRST_COMPLETED)

    def close(self) -> Totals:
        """Hand back what waits, let the shares in flight finish, and end the threads."""
        self._hand_back()
        wait(list(self._running.values()))
        total = self._collect()
        self._pool.shutdown()
        return total

    def raise_error(self) -> None:
        """Raise the first exception a share ended with (``run_once``: the command fails
        as a step that raised would)."""
        if self._error is not None:
            raise self._error

    def _start(self) -> None:
        """Start waiting shares, in claim order, on free threads; one per endpoint."""
        left: list[Share] = []
        for share in self._waiting:
            if len(self._running) >= self._threads or share.endpoint in self._running:
                left.append(share)
                continue
            self._running[share.endpoint] = self._pool.submit(self._send, share)
        self._waiting = left

    def _send(self, share: Share) -> ShareSent:
        worker = self._worker
        return send_share(
            share,
            send=worker.send,
            uow_factory=worker.uow,
            clock=worker.clock,
            random=worker.random,
            stop=self._stop,
            on_attempt=worker.log_attempt,
        )

    def _collect(self) -> Totals:
        """The finished shares (their attempts already logged, one by one, as they were
        made): their unsent deliveries handed back, counted. A
        share that raised (the database unreachable, say) is a ``worker.error``; its
        deliveries stay leased and come back when the lease ends."""
        total = Totals()
        for endpoint, future in list(self._running.items()):
            if not future.done():
                continue
            del self._running[endpoint]
            error = future.exception()
            if error is not None:
                self._error = self._error or error
                self._worker.log.error("worker.error", exc_info=error)
                continue
            done = future.result()  # its attempts were logged as they were made
            if done.unsent:
                release(done.unsent, uow_factory=self._worker.uow, clock=self._worker.clock)
            total = total.plus(
                Totals(
                    attempts=len(done.attempts),
                    delivered=done.delivered,
                    dropped=done.dropped,
                    disabled=len(done.disabled),
                )
            )
        return total

    def _hand_back(self) -> None:
        """Hand the waiting shares' deliveries back, due at once (the worker stops)."""
        unsent = [d for share in self._waiting for d in share.deliveries]
        self._waiting = []
        if unsent:
            release(unsent, uow_factory=self._worker.uow, clock=self._worker.clock)


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
