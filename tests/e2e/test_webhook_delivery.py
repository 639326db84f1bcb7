"""Webhook delivery end to end, on SQLite and PostgreSQL, to a real HTTP receiver on
loopback (allowed through the allow list): events from the outbox reach the endpoints
subscribed to them, signed as Standard Webhooks and in the documented envelope; retries
keep the ``webhook-id``; a 410 or five days of failures turn an endpoint off; an endpoint
deleted on the way is skipped; a worker killed mid-batch loses nothing; two workers never
send one delivery at once; a booking made over HTTP arrives as ``booking.created``.

The worker runs in-process (``entrypoints.worker.Worker``) with a clock the test moves,
so that each retry comes due, or as the ``booking worker`` command in a subprocess."""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import secrets
import signal
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import attrs
import pytest
import structlog
from sqlalchemy import select
from standardwebhooks import Webhook

from adapters.sql import Database
from adapters.sql.tables import webhook_deliveries
from adapters.webhooks import StaticResolver, WebhookSender
from adapters.webhooks.render import EventRenderer
from booking_core.clock import FixedClock
from booking_core.companies import Company
from booking_core.events import Event, EventType, event, payment_event
from booking_core.ids import new_id
from booking_core.ledger import Kind, Method, Origin, PaymentEntry
from booking_core.paging import PageRequest
from booking_core.services import companies as company_cases
from booking_core.services.webhook_delivery import LEASE
from booking_core.webhook_endpoints import DISABLE_AFTER, Secret, WebhookEndpoint
from booking_core.webhooks import RETRY_DELAYS, allowed_hosts, new_secret
from entrypoints.worker import Worker, checked_send
from tests.e2e.support import (
    API,
    CrewSpec,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    idem,
    weekday_ahead,
)
from tests.services import postgres_url
from tests.webhook_receiver import Receiver, Script, Seen, fails

BIN = Path(sys.executable).parent
BASE_URL = "https://book.example.com"
ALLOW = allowed_hosts("127.0.0.1")
ZONE = "America/Chicago"


# --- Fixtures ---------------------------------------------------------------------------


@attrs.frozen
class Backend:
    """A migrated, empty database and how a ``booking`` subprocess reaches it."""

    db: Database
    url: str
    schema: str | None

    def env(self) -> dict[str, str]:
        env = {
            **os.environ,
            "BOOKING_DATABASE_URL": self.url,
            "BOOKING_WEBHOOK_ALLOW_HOSTS": "127.0.0.1",
            "BOOKING_BASE_URL": BASE_URL,
        }
        if self.schema:
            env["BOOKING_DATABASE_SCHEMA"] = self.schema
        return env


@pytest.fixture(scope="module")
def postgres_backend() -> Iterator[Backend]:
    schema = f"whd_{os.getpid()}"
    db = Database.from_url(postgres_url(), schema=schema)
    db.drop_schema()  # left over from a run that was killed
    db.migrate()
    try:
        yield Backend(db, postgres_url(), schema)
    finally:
        db.drop_schema()
        db.dispose()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "postgres":
        pg: Backend = request.getfixturevalue("postgres_backend")
        pg.db.truncate_all()
        yield pg
        return
    url = f"sqlite:///{tmp_path / 'hooks.sqlite3'}"
    db = Database.from_url(url)
    db.migrate()
    try:
        yield Backend(db, url, None)
    finally:
        db.dispose()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def sender() -> Iterator[WebhookSender]:
    with WebhookSender(connect_timeout=2, read_timeout=5) as made:
        yield made


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime.now(UTC).replace(microsecond=0))


@attrs.define
class Shop:
    """One company on the backend, with helpers to register endpoints and record events."""

    backend: Backend
    company: Company
    clock: FixedClock

    @property
    def db(self) -> Database:
        return self.backend.db

    def endpoint(self, url: str, *events: str) -> tuple[WebhookEndpoint, str]:
        """A new active endpoint subscribed to ``events`` (all by default), and its secret."""
        secret = new_secret()
        made = WebhookEndpoint(
            id=new_id("whk"),
            company_id=self.company.id,
            url=url,
            events=events or ("*",),
            secrets=(Secret(value=secret),),
            created_at=self.clock.now(),
        )
        with self.db.uow() as uow:
            uow.webhooks.add(made)
            uow.commit()
        return made, secret

    def entry(self, kind: Kind = Kind.PAYMENT, amount: int = 10_000, **fields: Any) -> PaymentEntry:
        values: dict[str, Any] = {
            "id": new_id("pay"),
            "company_id": self.company.id,
            "booking_id": "bkg_webhooks",
            "customer_id": "cus_webhooks",
            "kind": kind,
            "method": Method.CARD,
            "amount_cents": amount,
            "offline": False,
            "origin": Origin.PROCESSOR,
            "created_at": self.clock.now(),
            **fields,
        }
        return PaymentEntry(**values)

    def record(self, *events: Event) -> list[Event]:
        with self.db.uow() as uow:
            for one in events:
                uow.outbox.add(one)
            uow.commit()
        return list(events)

    def fired(self, entry: PaymentEntry) -> Event:
        """The event writing ``entry`` fires."""
        made = payment_event(entry, at=self.clock.now())
        assert made is not None
        return made

    def payments(self, count: int) -> list[Event]:
        """``count`` payment.recorded events in the outbox."""
        return self.record(*[self.fired(self.entry()) for _ in range(count)])

    def worker(self, sender: WebhookSender, **changes: Any) -> Worker:
        made = Worker(
            uow=self.db.uow,
            render=EventRenderer(BASE_URL),
            send=checked_send(sender, StaticResolver(), ALLOW),
            clock=self.clock,
            random=lambda: 0.5,
        )
        return attrs.evolve(made, **changes)

    def get(self, endpoint: WebhookEndpoint) -> WebhookEndpoint:
        with self.db.uow() as uow:
            return uow.webhooks.get(self.company.id, endpoint.id)

    def log(self, endpoint: WebhookEndpoint) -> list[tuple[int, int | None]]:
        """(attempt number, status) of the endpoint's log, oldest first."""
        with self.db.uow() as uow:
            page = uow.webhooks.attempts(self.company.id, endpoint.id, PageRequest(limit=100))
        return sorted((a.attempt, a.status_code) for a in page.items)

    def retries_shown(self, endpoint: WebhookEndpoint) -> dict[str, datetime | None]:
        """The ``next_retry_at`` of each delivery's last attempt in the endpoint's log."""
        with self.db.uow() as uow:
            page = uow.webhooks.attempts(self.company.id, endpoint.id, PageRequest(limit=100))
        last: dict[str, datetime | None] = {}
        for attempt in sorted(page.items, key=lambda a: a.attempt):
            last[attempt.delivery_id] = attempt.next_retry_at
        return last

    def states(self, endpoint: WebhookEndpoint) -> Counter[str]:
        """How many of the endpoint's deliveries are in each state."""
        d = webhook_deliveries.c
        query = select(d.state).where(d.endpoint_id == endpoint.id)
        with self.db.engine.connect() as connection:
            return Counter(row.state for row in connection.execute(query))


@pytest.fixture
def shop(backend: Backend, clock: FixedClock) -> Shop:
    company = company_cases.create_company(
        company_cases.CreateCompany(
            slug=f"hooks-{secrets.token_hex(3)}", name="Hooks & Co", timezone=ZONE
        ),
        uow=backend.db.uow(),
        clock=clock,
    )
    return Shop(backend, company, clock)


# --- Delivered as documented ------------------------------------------------------------


def test_a_refund_reaches_its_subscriber_signed_and_in_the_documented_envelope(
    shop, receiver, sender
):
    refunds, secret = shop.endpoint(receiver.url("/refunds"), "payment.refunded")
    shop.endpoint(receiver.url("/bookings"), "booking.created")
    dashboard = shop.entry(
        Kind.REFUND, -2_500, note="Refunded in the Stripe dashboard", external_ref="re_1"
    )
    tip_back = shop.entry(Kind.TIP_REFUND, -500, note="Tip refunded", reverses="pay_tip1")
    recorded = shop.record(
        shop.fired(dashboard),
        shop.fired(tip_back),
        event(EventType.BOOKING_CANCELLED, None, company_id=shop.company.id, at=shop.clock.now()),
    )
    done = shop.worker(sender).run_once()
    assert (done.events, done.deliveries, done.delivered) == (3, 2, 2)
    assert receiver.on("/bookings") == []  # subscribed to another type
    got = {seen.webhook_id: seen for seen in receiver.on("/refunds")}
    assert set(got) == {recorded[0].id, recorded[1].id}
    created = shop.clock.now().astimezone(ZoneInfo(ZONE)).isoformat()
    for entry, sent in ((dashboard, recorded[0]), (tip_back, recorded[1])):
        seen = got[sent.id]
        payload = Webhook(secret).verify(seen.body, seen.headers)  # raises if forged
        assert payload == json.loads(seen.body)
        assert payload == {
            "id": sent.id,
            "type": "payment.refunded",
            "createdAt": created,
            "data": {
                "id": entry.id,
                "kind": entry.kind.value,
                "method": "CARD",
                "offline": False,
                "amountCents": entry.amount_cents,
                "note": entry.note,
                "reverses": entry.reverses,
                "externalRef": entry.external_ref,
                "bookingId": "bkg_webhooks",
                "customerId": "cus_webhooks",
                "dispute": False,
                "createdAt": created,
            },
        }
        assert seen.headers["content-type"] == "application/json"
    tip = json.loads(got[recorded[1].id].body)["data"]
    assert (tip["kind"], tip["reverses"]) == ("TIP_REFUND", "pay_tip1")
    assert shop.log(refunds) == [(1, 204), (1, 204)]


def test_a_receiver_failing_three_times_gets_the_same_webhook_id_four_times(shop, receiver, sender):
    receiver.scripts["/flaky"] = fails(3)
    endpoint, _ = shop.endpoint(receiver.url("/flaky"))
    (sent,) = shop.payments(1)
    worker = shop.worker(sender)
    assert worker.run_once().attempts == 1
    for delay in RETRY_DELAYS[:3]:
        assert worker.run_once().attempts == 0  # the retry is not due yet
        shop.clock.advance(delay * 1.2)  # the most the jitter stretches a wait
        assert worker.run_once().attempts == 1
    assert worker.run_once().attempts == 0  # delivered: nothing more to send
    assert [seen.webhook_id for seen in receiver.on("/flaky")] == [sent.id] * 4
    assert shop.log(endpoint) == [(1, 500), (2, 500), (3, 500), (4, 200)]
    assert shop.states(endpoint) == {"delivered": 1}
    assert shop.get(endpoint).failing_since is None


def test_410_turns_the_endpoint_off_gives_up_its_deliveries_and_is_logged(shop, receiver, sender):
    receiver.scripts["/gone"] = Script(lambda n: 410)
    gone, _ = shop.endpoint(receiver.url("/gone"))
    fine, _ = shop.endpoint(receiver.url("/fine"))
    shop.payments(3)
    with structlog.testing.capture_logs() as logs:
        done = shop.worker(sender, delivery_batch=1).run_once()
    assert len(receiver.on("/gone")) == 1  # the other two were given up unsent
    assert len(receiver.on("/fine")) == 3
    assert (done.disabled, done.dropped) == (1, 0)  # dropped as pending, not when claimed
    off = shop.get(gone)
    assert not off.active
    assert off.disabled_reason is not None
    assert "410 Gone" in off.disabled_reason
    # Its time is in the company's timezone, as every time the company reads.
    local = shop.clock.now().astimezone(ZoneInfo(ZONE)).isoformat()
    assert f"410 Gone at {local}:" in off.disabled_reason
    assert shop.states(gone) == {"failed": 3}
    assert shop.get(fine).active
    (disabled,) = [line for line in logs if line["event"] == "webhook.disabled"]
    assert (disabled["endpoint_id"], disabled["dropped_deliveries"]) == (gone.id, 2)
    assert disabled["log_level"] == "warning"
    shop.payments(1)
    shop.worker(sender).run_once()
    assert len(receiver.on("/gone")) == 1  # an endpoint turned off gets no new event
    assert len(receiver.on("/fine")) == 4


def test_an_endpoint_failing_for_five_days_is_turned_off(shop, receiver, sender):
    receiver.scripts["/down"] = Script(lambda n: 503)
    endpoint, _ = shop.endpoint(receiver.url("/down"))
    started = shop.clock.now()
    worker = shop.worker(sender)
    with structlog.testing.capture_logs() as logs:
        while shop.get(endpoint).active:
            assert shop.clock.now() - started <= DISABLE_AFTER + timedelta(hours=12)
            shop.payments(1)  # a new event twice a day; the old ones retried meanwhile
            worker.run_once()
            shop.clock.advance(timedelta(hours=12))
    assert shop.clock.now() - timedelta(hours=12) - started >= DISABLE_AFTER
    off = shop.get(endpoint)
    assert off.disabled_reason is not None
    assert "5 days" in off.disabled_reason
    assert f"since {started.astimezone(ZoneInfo(ZONE)).isoformat()} failed" in off.disabled_reason
    assert shop.states(endpoint)["pending"] == 0
    # What was waiting for a retry was given up: the log promises no retry for it.
    shown = shop.retries_shown(endpoint)
    assert len(shown) > 1
    assert set(shown.values()) == {None}
    assert [line["endpoint_id"] for line in logs if line["event"] == "webhook.disabled"] == [
        endpoint.id
    ]
    assert all(status == 503 for _, status in shop.log(endpoint))


def test_an_endpoint_deleted_while_its_delivery_is_on_the_way_is_skipped(shop, receiver, sender):
    endpoint, _ = shop.endpoint(receiver.url("/deleted"))

    def delete_endpoint(seen: Seen) -> None:
        with shop.db.uow() as uow:
            uow.webhooks.delete(shop.company.id, endpoint.id)
            uow.commit()

    receiver.scripts["/deleted"] = Script(arrived=delete_endpoint)
    shop.payments(2)
    done = shop.worker(sender).run_once()
    assert len(receiver.on("/deleted")) == 1  # the second delivery went with the endpoint
    assert (done.claimed, done.attempts, done.delivered, done.failed) == (2, 0, 0, 0)
    with shop.db.uow() as uow:
        assert uow.webhooks.active(shop.company.id) == []


# --- Crashes and concurrency ------------------------------------------------------------


def test_a_worker_killed_mid_batch_loses_nothing(shop, receiver, tmp_path):
    """``booking worker`` is killed (SIGKILL) while the receiver holds its first request;
    once the lease ends a restarted worker sends everything, the first again with the
    same ``webhook-id``: delivered at least once, the duplicate recognisable."""
    first = threading.Event()
    receiver.scripts["/slow"] = Script(pause=3.0, arrived=lambda seen: first.set())
    shop.endpoint(receiver.url("/slow"))
    shop.clock.current = datetime.now(UTC)
    events = shop.payments(4)
    worker = subprocess.Popen(
        [str(BIN / "booking"), "worker"],
        env=shop.backend.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert first.wait(timeout=60), "the worker sent nothing"
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=10)
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
    assert len(receiver.on("/slow")) == 1
    receiver.scripts["/slow"] = Script()
    shop.clock.current = datetime.now(UTC) + LEASE + timedelta(seconds=1)
    with WebhookSender(read_timeout=5) as sender:
        done = shop.worker(sender).run_once()
    assert done.delivered == 4
    ids = [seen.webhook_id for seen in receiver.on("/slow")]
    assert set(ids) == {e.id for e in events}
    assert ids.count(ids[0]) == 2  # the one in flight when the worker died, once more


def test_two_workers_at_once_deliver_everything_once_in_order_and_never_concurrently(
    shop, receiver, sender
):
    """Eight endpoints, 15 events each, two workers claiming 4 at a time, each sending on
    one thread (it claims again only once what it claimed is sent, so neither can hold
    every endpoint and leave the other nothing to claim before it ends): they share the
    work, yet each endpoint gets its events in the order they were recorded, since a
    worker takes no delivery while an earlier one of its endpoint awaits its attempt."""
    paths = [f"/busy{n}" for n in range(8)]
    # The first request waits (up to 30 s) for the second: each worker sends one at a
    # time, so that one is the other worker's, and neither can have sent everything
    # before the other started, however slow the machine is to start a thread.
    meet, arrivals = threading.Barrier(2), itertools.count()

    def first_two_meet(seen: Seen) -> None:
        if next(arrivals) < 2:
            with contextlib.suppress(threading.BrokenBarrierError):
                meet.wait(timeout=30)

    for path in paths:
        receiver.scripts[path] = Script(pause=0.005, arrived=first_two_meet)
        shop.endpoint(receiver.url(path))
    events = []
    for _ in range(15):
        events += shop.payments(1)
        shop.clock.advance(timedelta(microseconds=1))  # each its own change
    shop.worker(sender).dispatch()
    totals: list[int] = []

    def work() -> None:
        with WebhookSender(read_timeout=60) as own:  # the first answer may wait 30 s
            totals.append(shop.worker(own, delivery_batch=4, senders=1).run_once().delivered)

    threads = [threading.Thread(target=work) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    recorded = [e.id for e in events]
    for path in paths:
        assert [seen.webhook_id for seen in receiver.on(path)] == recorded, path
    assert receiver.overlaps == []
    assert sum(totals) == 15 * 8
    assert min(totals) > 0, totals  # both took part


def test_two_worker_processes_deliver_every_event_exactly_once(shop, receiver):
    receiver.scripts["/procs"] = Script(pause=0.01)
    shop.endpoint(receiver.url("/procs"))
    shop.clock.current = datetime.now(UTC)
    events = shop.payments(40)
    runs = [
        subprocess.Popen(
            [str(BIN / "booking"), "worker", "--once", "--json"],
            env=shop.backend.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], [err for _, err in outputs]
    totals = [json.loads(out) for out, _ in outputs]
    assert sum(t["events"] for t in totals) == 40
    assert sum(t["delivered"] for t in totals) == 40
    assert sorted(seen.webhook_id for seen in receiver.on("/procs")) == sorted(e.id for e in events)
    assert receiver.overlaps == []


# --- From the API -----------------------------------------------------------------------


def test_a_booking_made_over_http_arrives_as_booking_created_as_the_api_renders_it(
    stack: Stack, receiver, sender
):
    shop = crewed_company(stack, (CrewSpec("Rosa Diaz", "10003", ("10001",)),), code_prefix="WH")
    secret = new_secret()
    with stack.container.uow() as uow:
        uow.webhooks.add(
            WebhookEndpoint(
                id=new_id("whk"),
                company_id=shop.company.id,
                url=receiver.url("/crm"),
                events=("booking.created",),
                secrets=(Secret(value=secret),),
                created_at=stack.container.clock.now(),
            )
        )
        uow.commit()
    day = weekday_ahead(shop.zone, 8, weekday=2)
    with stack.client(shop.key) as client:
        made = client.post(
            f"{API}/bookings", json=booking_body(at_local(day, "10:00", shop.zone)), headers=idem()
        )
        assert made.status_code == 201, made.text
        fetched = client.get(f"{API}/bookings/{made.json()['id']}")
    worker = Worker(
        uow=stack.container.uow,
        render=EventRenderer(stack.container.settings.base_url),
        send=checked_send(sender, StaticResolver(), ALLOW),
        clock=stack.container.clock,
    )
    worker.run_once()
    (seen,) = receiver.on("/crm")
    payload = Webhook(secret).verify(seen.body, seen.headers)
    assert payload["type"] == "booking.created"
    assert payload["id"] == seen.webhook_id
    assert payload["data"] == fetched.json()


def test_the_running_worker_sends_a_booking_made_rescheduled_and_cancelled_in_that_order(
    stack: Stack, receiver, sender
):
    """``booking worker``'s loop (``Worker.run``), not ``run_once``: three bookings each
    made, moved and cancelled in quick succession over HTTP, so that one step of the
    loop dispatches several events of one booking. The receiver gets every booking's
    events in the order they happened, and the last body it gets says cancelled."""
    shop = crewed_company(stack, (CrewSpec("Rosa Diaz", "10003", ("10001",)),), code_prefix="WO")
    with stack.container.uow() as uow:
        uow.webhooks.add(
            WebhookEndpoint(
                id=new_id("whk"),
                company_id=shop.company.id,
                url=receiver.url("/ordered"),
                events=("booking.created", "booking.rescheduled", "booking.cancelled"),
                secrets=(Secret(value=new_secret()),),
                created_at=stack.container.clock.now(),
            )
        )
        uow.commit()
    worker = Worker(
        uow=stack.container.uow,
        render=EventRenderer(stack.container.settings.base_url),
        send=checked_send(sender, StaticResolver(), ALLOW),
        clock=stack.container.clock,
    )
    stop = threading.Event()
    running = threading.Thread(target=worker.run, args=(stop,), daemon=True)
    running.start()
    made: list[str] = []
    try:
        with stack.client(shop.key) as client:
            for n in range(3):
                day = weekday_ahead(shop.zone, 8 + 7 * n, weekday=2)
                body = booking_body(at_local(day, "09:00", shop.zone))
                booking = client.post(f"{API}/bookings", json=body, headers=idem())
                assert booking.status_code == 201, booking.text
                ref = booking.json()["id"]
                moved = client.post(
                    f"{API}/bookings/{ref}/reschedule",
                    json={"startIso": at_local(day, "13:00", shop.zone)},
                    headers=idem(),
                )
                assert moved.status_code == 200, moved.text
                cancelled = client.post(
                    f"{API}/bookings/{ref}/cancel", json={"scope": "this"}, headers=idem()
                )
                assert cancelled.status_code == 200, cancelled.text
                made.append(ref)
        deadline = time.monotonic() + 60
        while len(receiver.on("/ordered")) < 9 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        stop.set()
        running.join(timeout=60)
    arrived = [json.loads(seen.body) for seen in receiver.on("/ordered")]
    assert len(arrived) == 9
    for ref in made:
        of_booking = [
            (one["type"], one["data"]["status"]) for one in arrived if one["data"]["id"] == ref
        ]
        assert of_booking == [
            ("booking.created", "scheduled"),
            ("booking.rescheduled", "scheduled"),
            ("booking.cancelled", "cancelled"),
        ], ref
    instants = [datetime.fromisoformat(one["createdAt"]) for one in arrived]
    assert instants == sorted(instants)


def another_shop(backend, clock, name: str) -> Shop:
    """A second company on the same database and clock, named ``name``."""
    slug = f"{name.split(maxsplit=1)[0].lower()}-{secrets.token_hex(3)}"
    made = company_cases.create_company(
        company_cases.CreateCompany(slug=slug, name=name), uow=backend.db.uow(), clock=clock
    )
    return Shop(backend, made, clock)


def test_a_companys_slow_receivers_hold_back_no_other_companys_delivery(
    shop, backend, receiver, clock
):
    # Another company's six endpoints answer 204 only once this company's delivery has
    # arrived (waiting up to 30 s for it, then 500): sent one after another, each of them
    # fails first; sent at once, all seven are delivered in one run. The sender waits a
    # minute for an answer, so a slow machine is no reason for a failure here.
    slow = another_shop(backend, clock, "Slow Co")
    arrived = threading.Event()
    receiver.scripts["/fast"] = Script(arrived=lambda seen: arrived.set())
    for index in range(6):
        receiver.scripts[f"/slow/{index}"] = Script(
            status=lambda n: 204 if arrived.is_set() else 500,
            arrived=lambda seen: arrived.wait(30),
        )
        slow.endpoint(receiver.url(f"/slow/{index}"))
    slow.payments(1)  # the older event: claimed first
    clock.current = clock.now() + timedelta(seconds=1)
    fast, _ = shop.endpoint(receiver.url("/fast"))
    shop.payments(1)

    with WebhookSender(connect_timeout=10, read_timeout=60) as patient:
        done = shop.worker(patient).run_once()

    assert (done.deliveries, done.delivered) == (7, 7)
    assert shop.log(fast) == [(1, 204)]
    assert sorted(seen.path for seen in receiver.seen) == [
        "/fast",
        *(f"/slow/{index}" for index in range(6)),
    ]


def test_a_stalled_receiver_holds_back_no_event_recorded_while_it_stalls(
    shop, backend, receiver, clock
):
    """The running loop (``Worker.run``): endpoint A of one company holds its first
    request until the test lets it go. Another company's event, recorded while A's
    request is held, reaches endpoint B before that (the loop claims again while A's
    share is in flight); A's own second event waits for its first, and A's attempt
    finished as a 204 (so B arrived during it, not after a timeout)."""
    other = another_shop(backend, clock, "Other Co")
    stalled, let_go, b_arrived = threading.Event(), threading.Event(), threading.Event()
    seen_by_b: list[tuple[bool, int]] = []

    def stall(seen: Seen) -> None:
        if len(receiver.on("/a")) == 1:  # its first request only
            stalled.set()
            let_go.wait(120)

    def arrive(seen: Seen) -> None:
        seen_by_b.append((let_go.is_set(), len(receiver.on("/a"))))
        b_arrived.set()

    receiver.scripts["/a"] = Script(arrived=stall)
    receiver.scripts["/b"] = Script(arrived=arrive)
    a, _ = shop.endpoint(receiver.url("/a"))
    b, _ = other.endpoint(receiver.url("/b"))
    stop = threading.Event()
    with WebhookSender(read_timeout=120, total_timeout=120) as patient:
        worker = shop.worker(patient, poll_interval=0.05)
        loop = threading.Thread(target=worker.run, args=(stop,), daemon=True)
        loop.start()
        try:
            first_a = shop.payments(1)
            assert stalled.wait(60), "A's delivery was never sent"
            clock.advance(timedelta(seconds=1))
            second_a = shop.payments(1)
            (to_b,) = other.payments(1)
            arrived_in_time = b_arrived.wait(60)
        finally:
            let_go.set()
            deadline = time.monotonic() + 60
            while len(receiver.on("/a")) < 2 and time.monotonic() < deadline:
                time.sleep(0.05)
            stop.set()
            loop.join(timeout=60)
    assert arrived_in_time, "B's delivery waited for A's stalled one"
    assert seen_by_b == [(False, 1)]  # A still held, and its second event not yet sent
    assert [seen.webhook_id for seen in receiver.on("/b")] == [to_b.id]
    assert [seen.webhook_id for seen in receiver.on("/a")] == [e.id for e in first_a + second_a]
    assert shop.log(a) == [(1, 204), (1, 204)]
    assert other.log(b) == [(1, 204)]
    assert receiver.overlaps == []
