"""The webhook worker's use cases on the memory adapters, with a fake transport: fan-out by
subscription, signing, retries on the schedule, giving up, turning endpoints off (410,
five days failing), endpoints deleted or turned off on the way, leases and stops."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta

import attrs
import pytest

from adapters.memory import MemoryStore, MemoryUnitOfWork
from booking_core.clock import FixedClock
from booking_core.events import Event, EventType, event
from booking_core.paging import PageRequest
from booking_core.ports import UnitOfWork
from booking_core.services import webhooks as cases
from booking_core.services.webhook_delivery import (
    LEASE,
    SEND_BUDGET,
    claim_shares,
    deliver_due,
    dispatch_events,
    release,
)
from booking_core.webhook_endpoints import (
    DISABLE_AFTER,
    Delivery,
    DeliveryState,
    Secret,
    WebhookEndpoint,
)
from booking_core.webhooks import MAX_ATTEMPTS, RETRY_DELAYS, new_secret
from tests import factories as f
from tests.unit.test_webhook_services import URLS

COMPANY = "cmp_hooks"


@attrs.frozen
class Result:
    outcome: str
    status_code: int | None = None
    duration_ms: int = 7
    error: str | None = None
    retry_after: int | None = None


OK = Result("delivered", 200)
FAIL = Result("failed", 500, error="HTTP 500 Internal Server Error")
GONE = Result("gone", 410, error="HTTP 410 Gone: the receiver wants no more deliveries")


@attrs.define
class Call:
    url: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    """A fake transport answering from a list (the last answer repeats)."""

    def __init__(self, *answers: Result, during: Callable[[], None] | None = None) -> None:
        self.answers = list(answers) or [OK]
        self.calls: list[Call] = []
        self.during = during

    def __call__(self, url: str, headers: Mapping[str, str], body: bytes) -> Result:
        self.calls.append(Call(url, dict(headers), body))
        if self.during is not None:
            self.during()
        return self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]


class World:
    """One memory store, a fixed clock and helpers to fill and read it."""

    def __init__(self) -> None:
        self.store = MemoryStore()
        self.clock = FixedClock(f.T0)
        with self.uow() as uow:
            uow.companies.add(f.company(id=COMPANY))
            uow.commit()

    def uow(self) -> UnitOfWork:
        return MemoryUnitOfWork(self.store)

    def endpoint(self, *events: str, active: bool = True) -> WebhookEndpoint:
        made = WebhookEndpoint(
            id=f"whk_{len(self.store.tables['webhooks'])}",
            company_id=COMPANY,
            url=f"https://hooks.example.com/{len(self.store.tables['webhooks'])}",
            events=events or ("*",),
            active=active,
            secrets=(Secret(value=new_secret()),),
            created_at=self.clock.now(),
        )
        with self.uow() as uow:
            uow.webhooks.add(made)
            uow.commit()
        return made

    def record(self, type: EventType = EventType.PAYMENT_RECORDED) -> Event:
        made = event(type, f.payment(COMPANY), company_id=COMPANY, at=self.clock.now())
        with self.uow() as uow:
            uow.outbox.add(made)
            uow.commit()
        return made

    def dispatch(self) -> int:
        done = dispatch_events(uow=self.uow(), render=render, clock=self.clock)
        return done.deliveries

    def deliver(self, send: Receiver, **kw: object):  # type: ignore[no-untyped-def]
        return deliver_due(
            uow_factory=self.uow, send=send, clock=self.clock, random=lambda: 0.5, **kw
        )

    def get(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        with self.uow() as uow:
            return uow.webhooks.get(COMPANY, endpoint.id)

    def deliveries(self) -> list[Delivery]:
        return list(self.store.values("deliveries").values())

    def log(self, endpoint: WebhookEndpoint) -> list[int | None]:
        """Status codes of the endpoint's attempts, oldest first."""
        with self.uow() as uow:
            page = uow.webhooks.attempts(COMPANY, endpoint.id, PageRequest(limit=100))
        return [a.status_code for a in reversed(page.items)]

    def retries_shown(self, endpoint: WebhookEndpoint) -> dict[str, datetime | None]:
        """The ``next_retry_at`` of each delivery's last attempt in the endpoint's log."""
        with self.uow() as uow:
            page = uow.webhooks.attempts(COMPANY, endpoint.id, PageRequest(limit=100))
        last: dict[str, datetime | None] = {}
        for attempt in sorted(page.items, key=lambda a: a.attempt):
            last[attempt.delivery_id] = attempt.next_retry_at
        return last

    def set_active(self, endpoint: WebhookEndpoint, active: bool) -> WebhookEndpoint:
        """``PATCH /webhooks/:id {"active": ...}``."""
        return cases.update_endpoint(
            cases.UpdateEndpoint(company_id=COMPANY, endpoint_id=endpoint.id, active=active),
            uow=self.uow(),
            urls=URLS,
            clock=self.clock,
        )


def render(e: Event, uow: UnitOfWork) -> bytes:
    return f'{{"id":"{e.id}","type":"{e.type}"}}'.encode()


def signature(secret: str, headers: Mapping[str, str], body: bytes) -> str:
    key = base64.b64decode(secret.removeprefix("whsec_"))
    content = f"{headers['webhook-id']}.{headers['webhook-timestamp']}.".encode() + body
    return "v1," + base64.b64encode(hmac.digest(key, content, hashlib.sha256)).decode()


@pytest.fixture
def world() -> World:
    return World()


def test_an_event_goes_to_each_active_endpoint_subscribed_to_its_type(world):
    payments = world.endpoint("payment.recorded")
    everything = world.endpoint("*")
    bookings = world.endpoint("booking.created")
    world.endpoint("*", active=False)
    recorded = world.record()
    assert world.dispatch() == 2
    assert world.dispatch() == 0  # dispatched once
    send = Receiver()
    done = world.deliver(send)
    assert sorted(c.url for c in send.calls) == sorted([payments.url, everything.url])
    assert bookings.url not in [c.url for c in send.calls]
    assert {c.headers["webhook-id"] for c in send.calls} == {recorded.id}
    assert all(c.body == render(recorded, world.uow()) for c in send.calls)
    assert done.delivered == 2
    assert {d.state for d in world.deliveries()} == {DeliveryState.DELIVERED}


def test_an_event_nobody_subscribes_to_is_marked_dispatched_without_deliveries(world):
    world.endpoint("booking.created")
    world.record(EventType.PAYMENT_RECORDED)
    done = dispatch_events(uow=world.uow(), render=render, clock=world.clock)
    assert (done.events, done.deliveries) == (1, 0)
    assert dispatch_events(uow=world.uow(), render=render, clock=world.clock).events == 0
    assert world.deliveries() == []


def test_an_endpoint_gets_only_events_recorded_while_it_was_on(world):
    before = world.record()  # no worker ran yet: still undispatched when the endpoint comes
    world.clock.advance(timedelta(seconds=1))
    endpoint = world.endpoint("*")
    world.clock.advance(timedelta(seconds=1))
    after = world.record()
    assert world.dispatch() == 1
    assert [d.event_id for d in world.deliveries()] == [after.id]
    assert before.id not in [d.event_id for d in world.deliveries()]

    def set_active(active: bool) -> WebhookEndpoint:
        return cases.update_endpoint(
            cases.UpdateEndpoint(company_id=COMPANY, endpoint_id=endpoint.id, active=active),
            uow=world.uow(),
            urls=URLS,
            clock=world.clock,
        )

    world.clock.advance(timedelta(seconds=1))
    set_active(False)
    world.clock.advance(timedelta(seconds=1))
    while_off = world.record()
    world.clock.advance(timedelta(seconds=1))
    assert set_active(True).active_since == world.clock.now()
    world.clock.advance(timedelta(seconds=1))
    back_on = world.record()
    assert world.dispatch() == 1
    sent = [d.event_id for d in world.deliveries()]
    assert back_on.id in sent
    assert while_off.id not in sent


def test_an_event_that_cannot_be_rendered_holds_up_nothing_and_is_tried_again(world):
    world.endpoint("*")
    broken = world.record()
    world.clock.advance(timedelta(seconds=1))
    fine = world.record()

    def fussy(e: Event, uow: UnitOfWork) -> bytes:
        if e.id == broken.id:
            raise ValueError("stored record no longer decodes")
        return render(e, uow)

    done = dispatch_events(uow=world.uow(), render=fussy, clock=world.clock)
    assert (done.events, done.deliveries, done.claimed) == (1, 1, 2)
    assert [(e.id, why) for e, why in done.unrenderable] == [
        (broken.id, "ValueError: stored record no longer decodes")
    ]
    assert [d.event_id for d in world.deliveries()] == [fine.id]
    # Left undispatched, not lost: once it renders, it goes out.
    again = dispatch_events(uow=world.uow(), render=render, clock=world.clock)
    assert (again.events, again.deliveries, again.unrenderable) == (1, 1, ())
    assert sorted(d.event_id for d in world.deliveries()) == sorted([fine.id, broken.id])


def test_a_delivery_is_signed_with_every_valid_secret_at_the_time_it_is_sent(world):
    endpoint = world.endpoint()
    old = new_secret()
    with world.uow() as uow:
        rotated = attrs.evolve(
            endpoint,
            secrets=(
                *endpoint.secrets,
                Secret(value=old, expires_at=world.clock.now() + timedelta(hours=1)),
            ),
        )
        uow.webhooks.save(rotated)
        uow.commit()
    world.record()
    world.dispatch()
    world.clock.advance(timedelta(minutes=1))
    send = Receiver()
    world.deliver(send)
    (call,) = send.calls
    assert call.headers["webhook-timestamp"] == str(int(world.clock.now().timestamp()))
    assert call.headers["webhook-signature"].split(" ") == [
        signature(endpoint.secrets[0].value, call.headers, call.body),
        signature(old, call.headers, call.body),
    ]


def test_a_failure_is_retried_on_the_schedule_with_the_same_webhook_id(world):
    endpoint = world.endpoint()
    recorded = world.record()
    world.dispatch()
    send = Receiver(FAIL, FAIL, OK)
    world.deliver(send)
    (pending,) = world.deliveries()
    assert pending.state is DeliveryState.PENDING
    assert pending.next_attempt_at == world.clock.now() + RETRY_DELAYS[0]
    assert world.get(endpoint).failing_since == world.clock.now()
    world.clock.advance(RETRY_DELAYS[0] - timedelta(seconds=1))
    assert world.deliver(send).claimed == 0  # not due yet
    world.clock.advance(timedelta(seconds=1))
    world.deliver(send)
    world.clock.advance(RETRY_DELAYS[1])
    world.deliver(send)
    assert [c.headers["webhook-id"] for c in send.calls] == [recorded.id] * 3
    assert world.log(endpoint) == [500, 500, 200]
    (done,) = world.deliveries()
    assert (done.state, done.attempts, done.next_attempt_at) == (DeliveryState.DELIVERED, 3, None)
    assert world.get(endpoint).failing_since is None


def test_retry_after_postpones_the_retry(world):
    world.endpoint()
    world.record()
    world.dispatch()
    world.deliver(Receiver(Result("failed", 429, error="HTTP 429", retry_after=600)))
    (pending,) = world.deliveries()
    assert pending.next_attempt_at == world.clock.now() + timedelta(seconds=600)


def test_a_delivery_is_given_up_after_the_last_attempt(world):
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    send = Receiver(FAIL)
    for _ in range(MAX_ATTEMPTS + 2):
        world.deliver(send)
        world.clock.advance(timedelta(hours=12))
    assert len(send.calls) == MAX_ATTEMPTS
    (given_up,) = world.deliveries()
    assert (given_up.state, given_up.attempts) == (DeliveryState.FAILED, MAX_ATTEMPTS)
    assert world.log(endpoint) == [500] * MAX_ATTEMPTS
    assert world.get(endpoint).active  # 27.6 hours of failures is not five days


def test_410_turns_the_endpoint_off_and_gives_up_its_pending_deliveries(world):
    endpoint = world.endpoint()
    for _ in range(3):
        world.record()
    world.dispatch()
    world.clock.advance(timedelta(minutes=1))
    other = world.endpoint()
    world.record()
    world.dispatch()
    gone_first = Receiver(GONE, OK)
    done = world.deliver(gone_first, limit=1)  # the oldest: one of the first three
    assert [c.url for c in gone_first.calls] == [endpoint.url]
    off = world.get(endpoint)
    assert not off.active
    assert off.disabled_reason is not None
    assert "410" in off.disabled_reason
    (disabled,) = done.disabled
    assert (disabled.endpoint_id, disabled.dropped) == (endpoint.id, 3)
    mine = [d for d in world.deliveries() if d.endpoint_id == endpoint.id]
    assert {d.state for d in mine} == {DeliveryState.FAILED}
    send = Receiver()
    world.deliver(send)
    assert [c.url for c in send.calls] == [other.url]  # the other endpoint carries on
    world.record()
    world.dispatch()
    pending = [d.endpoint_id for d in world.deliveries() if d.state is DeliveryState.PENDING]
    assert pending == [other.id]


def test_an_endpoint_failing_for_five_days_is_turned_off(world):
    endpoint = world.endpoint()
    send = Receiver(FAIL)
    started = world.clock.now()
    while world.get(endpoint).active:
        assert world.clock.now() - started <= DISABLE_AFTER + timedelta(hours=12)
        world.record()
        world.dispatch()
        done = world.deliver(send)
        world.clock.advance(timedelta(hours=11))
    assert world.clock.now() - timedelta(hours=11) - started >= DISABLE_AFTER
    (disabled,) = done.disabled
    assert "5 days" in disabled.reason
    assert not [d for d in world.deliveries() if d.state is DeliveryState.PENDING]
    # What it gave up shows no next retry; earlier attempts keep the times their retries
    # were made at.
    shown = world.retries_shown(endpoint)
    assert len(shown) > 1  # deliveries that were waiting for a retry were given up
    assert set(shown.values()) == {None}
    with world.uow() as uow:
        page = uow.webhooks.attempts(COMPANY, endpoint.id, PageRequest(limit=100))
    assert any(a.next_retry_at is not None for a in page.items)


def test_turning_an_endpoint_off_leaves_no_retry_shown_for_a_delivery_that_waited(world):
    """The log's last attempt kept the retry time of a delivery given up when the endpoint
    was turned off: a time that never comes, beside an endpoint marked off."""
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    world.deliver(Receiver(FAIL))
    (waiting,) = world.deliveries()
    assert world.retries_shown(endpoint) == {waiting.id: world.clock.now() + RETRY_DELAYS[0]}

    world.set_active(endpoint, False)

    assert world.retries_shown(endpoint) == {waiting.id: None}
    (given_up,) = world.deliveries()
    assert (given_up.state, given_up.next_attempt_at) == (DeliveryState.FAILED, None)


def test_a_failure_on_an_endpoint_turned_off_during_the_send_is_not_retried(world):
    endpoint = world.endpoint()
    world.record()
    world.dispatch()

    world.deliver(Receiver(FAIL, during=lambda: world.set_active(endpoint, False)))

    (given_up,) = world.deliveries()
    assert (given_up.state, given_up.attempts) == (DeliveryState.FAILED, 1)
    assert world.retries_shown(endpoint) == {given_up.id: None}
    assert world.log(endpoint) == [500]


def test_a_success_ends_the_failing_streak(world):
    endpoint = world.endpoint()
    send = Receiver(FAIL, OK, FAIL)
    for _ in range(3):
        world.record()
        world.dispatch()
        world.deliver(send, limit=1)
        world.clock.advance(DISABLE_AFTER - timedelta(hours=1))
    assert world.get(endpoint).active
    assert world.get(endpoint).failing_since == f.T0 + 2 * (DISABLE_AFTER - timedelta(hours=1))


def test_a_delivery_to_an_endpoint_turned_off_is_given_up_unsent(world):
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    with world.uow() as uow:
        uow.webhooks.save(attrs.evolve(endpoint, active=False))
        uow.commit()
    send = Receiver()
    done = world.deliver(send)
    assert (send.calls, done.dropped) == ([], 1)
    assert [d.state for d in world.deliveries()] == [DeliveryState.FAILED]


def test_an_endpoint_deleted_before_the_send_gets_nothing(world):
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    with world.uow() as uow:
        uow.webhooks.delete(COMPANY, endpoint.id)
        uow.commit()
    send = Receiver()
    assert world.deliver(send).claimed == 0  # its deliveries went with it
    assert send.calls == []


def test_an_endpoint_deleted_during_the_send_is_skipped_quietly(world):
    endpoint = world.endpoint()
    world.record()
    world.record()
    world.dispatch()

    def delete() -> None:
        with world.uow() as uow:
            if any(e.id == endpoint.id for e in uow.webhooks.active(COMPANY)):
                uow.webhooks.delete(COMPANY, endpoint.id)
                uow.commit()

    send = Receiver(OK, during=delete)
    done = world.deliver(send)
    assert len(send.calls) == 1  # the second delivery went with the endpoint
    assert (done.claimed, done.attempts, done.dropped) == (2, (), 1)
    assert world.deliveries() == []


def test_a_claimed_delivery_is_leased_and_comes_back_after_a_crash(world):
    world.endpoint()
    recorded = world.record()
    world.dispatch()

    def crash(url: str, headers: Mapping[str, str], body: bytes) -> Result:
        raise RuntimeError("the worker died mid-send")

    with pytest.raises(RuntimeError):
        world.deliver(crash)  # type: ignore[arg-type]
    send = Receiver()
    world.clock.advance(LEASE - timedelta(seconds=1))
    assert world.deliver(send).claimed == 0  # still leased to the dead worker
    world.clock.advance(timedelta(seconds=1))
    world.deliver(send)
    assert [c.headers["webhook-id"] for c in send.calls] == [recorded.id]


def test_a_stop_hands_the_unsent_rest_of_the_claim_back_due_at_once(world):
    world.endpoint()
    for _ in range(3):
        world.record()
    world.dispatch()
    send = Receiver()
    stopping = iter([False, True, True])
    done = world.deliver(send, stop=lambda: next(stopping))
    assert (len(send.calls), done.released) == (1, 2)
    assert world.deliver(Receiver()).claimed == 2  # due now, not at the end of the lease


def test_a_delivery_whose_lease_runs_short_is_not_sent(world):
    world.endpoint()
    world.record()
    world.record()
    world.dispatch()
    # The first send takes so long that less than SEND_BUDGET is left of the lease.
    send = Receiver(during=lambda: world.clock.advance(LEASE - SEND_BUDGET + timedelta(seconds=1)))
    done = world.deliver(send)
    assert (len(send.calls), done.released) == (1, 0)
    send.during = None
    assert world.deliver(send).claimed == 0  # still leased
    world.clock.advance(SEND_BUDGET)
    assert world.deliver(send).claimed == 1  # back once its lease ended
    assert len(send.calls) == 2


def test_a_lease_no_longer_than_the_send_budget_is_refused(world):
    with pytest.raises(ValueError, match="send budget"):
        world.deliver(Receiver(), lease=SEND_BUDGET)


def test_a_change_made_by_the_owner_during_the_send_is_kept(world):
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    moved = attrs.evolve(endpoint, url="https://moved.example.com/in")

    def move() -> None:
        with world.uow() as uow:
            uow.webhooks.save(moved)
            uow.commit()

    world.deliver(Receiver(FAIL, during=move))
    assert world.get(endpoint) == attrs.evolve(moved, failing_since=world.clock.now())


def test_a_claim_is_shared_out_by_endpoint_taking_the_companies_in_turn(world):
    # A company with three endpoints whose event came first, then one with one endpoint:
    # its endpoint is sent to second, not behind all three (with the worker's threads,
    # at the same time as theirs).
    many = "cmp_many"
    with world.uow() as uow:
        uow.companies.add(f.company(id=many, slug="many"))
        for index in range(3):
            uow.webhooks.add(
                WebhookEndpoint(
                    id=f"whk_many_{index}",
                    company_id=many,
                    url=f"https://many.example.com/{index}",
                    events=("*",),
                    secrets=(Secret(value=new_secret()),),
                    created_at=world.clock.now(),
                )
            )
        uow.outbox.add(event(EventType.PAYMENT_RECORDED, f.payment(many), company_id=many, at=f.T0))
        uow.commit()
    world.clock.current = f.T0 + timedelta(seconds=1)
    one = world.endpoint()
    world.record()
    assert world.dispatch() == 4
    shares = claim_shares(uow_factory=world.uow, clock=world.clock)
    assert len(shares) == 4  # one share per endpoint
    assert len({share.endpoint for share in shares}) == 4
    release([d for share in shares for d in share.deliveries], uow_factory=world.uow,
            clock=world.clock)  # fmt: skip
    send = Receiver()
    done = world.deliver(send)
    urls = [c.url for c in send.calls]
    assert urls[1] == one.url  # its first share comes second: the companies take turns
    assert sorted(urls[:1] + urls[2:]) == [f"https://many.example.com/{i}" for i in range(3)]
    assert (done.claimed, done.delivered, len(done.attempts)) == (4, 4, 4)


def test_an_attempt_is_logged_at_its_start_the_instant_of_its_webhook_timestamp(world):
    """A receiver that answers 15 s late: the log row's ``at`` and the endpoint's
    ``failing_since`` are when the attempt began (the ``webhook-timestamp`` sent), not
    when it ended; the retry is timed from its end."""
    endpoint = world.endpoint()
    world.record()
    world.dispatch()
    world.clock.advance(timedelta(milliseconds=400))  # inside a second: the header floors it
    started = world.clock.now()
    send = Receiver(FAIL, during=lambda: world.clock.advance(timedelta(seconds=15)))
    world.deliver(send)
    ended = world.clock.now()
    with world.uow() as uow:
        (attempt,) = uow.webhooks.attempts(COMPANY, endpoint.id, PageRequest(limit=10)).items
    assert attempt.at == started
    assert int(send.calls[0].headers["webhook-timestamp"]) == int(started.timestamp())
    assert int(attempt.at.timestamp()) == int(send.calls[0].headers["webhook-timestamp"])
    assert attempt.duration_ms == FAIL.duration_ms
    assert world.get(endpoint).failing_since == started
    assert attempt.next_retry_at is not None
    assert attempt.next_retry_at - ended == RETRY_DELAYS[0]  # jitter 0.5: none


def test_the_worker_claims_and_sends_while_a_share_stalls_one_share_per_endpoint(world):
    """``entrypoints.worker.Senders`` on the memory adapters: endpoint A's retry stalls on
    its thread; the next step still claims, sends B's new event, and claims A's new event
    but starts it only once A's retry is done (one delivery at a time per endpoint)."""
    from entrypoints.worker import Senders, Worker

    a = world.endpoint("payment.recorded")
    b = world.endpoint("booking.created")
    let_go, stalled = threading.Event(), threading.Event()
    calls: list[tuple[str, str, bool]] = []
    lock = threading.Lock()

    def send(url: str, headers: Mapping[str, str], body: bytes) -> Result:
        with lock:
            calls.append((url, headers["webhook-id"], let_go.is_set()))
            number = len([c for c in calls if c[0] == a.url])
        if url == a.url and number == 1:
            return FAIL
        if url == a.url and number == 2:
            stalled.set()
            assert let_go.wait(30)
        return OK

    worker = Worker(uow=world.uow, render=render, send=send, clock=world.clock, random=lambda: 0.5)
    senders = Senders(worker, lambda: False)
    try:
        retried = world.record()
        world.dispatch()
        assert senders.step().claimed == 1
        senders.wait(30)
        assert senders.step().attempts == 1  # failed: its retry comes in about 5 s
        world.clock.advance(RETRY_DELAYS[0] * 1.2)
        assert senders.step().claimed == 1  # the retry, now stalling on its thread
        assert stalled.wait(30)
        later = world.record()
        to_b = world.record(EventType.BOOKING_CREATED)
        world.dispatch()
        assert senders.step().claimed == 2  # A's new event (it waits) and B's
        for _ in range(600):  # B's share runs on its own thread: at most 30 s
            if any(url == b.url for url, _, _ in calls):
                break
            senders.wait(0.05)
        assert [(url, event_id) for url, event_id, _ in calls] == [
            (a.url, retried.id),
            (a.url, retried.id),
            (b.url, to_b.id),
        ]
        let_go.set()
        for _ in range(600):
            if len(calls) == 4:
                break
            senders.step()
            senders.wait(0.05)
    finally:
        let_go.set()
        senders.close()
    assert calls[3][:2] == (a.url, later.id)
    assert calls[2][2] is False  # B was sent while A's retry stalled
    assert {d.state for d in world.deliveries()} == {DeliveryState.DELIVERED}
