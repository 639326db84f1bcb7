"""``make bench``: webhook deliveries per second on SQLite and PostgreSQL.

Each round puts ``EVENTS`` payment events of one company in the outbox (not timed), then
times the worker's whole path: the events are fanned out into deliveries (rendered with
the API's payment view), then ``WORKERS`` workers deliver them at once, each a process
of its own as ``booking worker`` is (started before the timing, waiting for the go), to
one receiver on loopback (in this test's process) that answers 204 at once. Every attempt
is signed and opens its own connection (the sender never reuses one), and is recorded
in the delivery log. Printed: deliveries per second (events divided by the round's
median time); the figure is never asserted (the machine is shared and noisy). Asserted,
as correctness: every event reached the receiver exactly once.

Under ``make test`` (benchmarks disabled) each case runs once over ``SMOKE_EVENTS``
events as a smoke test. PostgreSQL cases need ``BOOKING_TEST_POSTGRES_URL`` (skipped
without it) and use a schema of their own, dropped afterwards.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import structlog

from adapters.sql import Database
from adapters.system import SystemClock
from adapters.webhooks import StaticResolver, WebhookSender
from adapters.webhooks.render import EventRenderer
from booking_core.events import payment_event
from booking_core.ids import new_id
from booking_core.services import companies as company_cases
from booking_core.webhook_endpoints import Secret, WebhookEndpoint
from booking_core.webhooks import allowed_hosts, new_secret
from entrypoints.worker import Worker, checked_send
from tests import factories as f
from tests.services import postgres_url
from tests.webhook_receiver import Receiver

EVENTS = 1_000
SMOKE_EVENTS = 20
WORKERS = 2
ROUNDS = 3

_rates: dict[str, float] = {}


def _enabled(config: pytest.Config) -> bool:
    """Whether benchmarks really run (the rule pytest-benchmark itself applies)."""
    return not (config.getoption("benchmark_disable") and not config.getoption("benchmark_enable"))


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def database(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Database]:
    if request.param == "sqlite":
        path: Path = tmp_path_factory.mktemp("bench-hooks") / "hooks.sqlite3"
        db = Database.from_url(f"sqlite:///{path}")
    else:
        db = Database.from_url(postgres_url(), schema=f"bench_hooks_{os.getpid()}")
        db.drop_schema()  # left over from a run that was killed
    try:
        db.migrate()
        yield db
    finally:
        db.drop_schema()
        db.dispose()


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture(scope="module", autouse=True)
def _report() -> Iterator[None]:
    yield
    for dialect, rate in _rates.items():
        print(f"\n{dialect}: {rate:.0f} webhook deliveries/s ({WORKERS} workers, loopback)")


def _company_and_endpoint(db: Database, url: str) -> str:
    company = company_cases.create_company(
        company_cases.CreateCompany(slug=f"bench-{new_id('x')[-8:]}", name="Bench"),
        uow=db.uow(),
        clock=SystemClock(),
    )
    with db.uow() as uow:
        uow.webhooks.add(
            WebhookEndpoint(
                id=new_id("whk"),
                company_id=company.id,
                url=url,
                events=("payment.recorded",),
                secrets=(Secret(value=new_secret()),),
                created_at=datetime.now(UTC),
            )
        )
        uow.commit()
    return company.id


def _fill_outbox(db: Database, company_id: str, count: int) -> set[str]:
    ids = set()
    with db.uow() as uow:
        for _ in range(count):
            fired = payment_event(f.payment(company_id), at=datetime.now(UTC))
            assert fired is not None
            uow.outbox.add(fired)
            ids.add(fired.id)
        uow.commit()
    return ids


def _worker(db: Database, sender: WebhookSender) -> Worker:
    """A worker logging warnings only (an INFO line per attempt would be timed too)."""
    quiet = structlog.wrap_logger(
        None, wrapper_class=structlog.make_filtering_bound_logger(logging.WARNING)
    )
    return Worker(
        uow=db.uow,
        render=EventRenderer("https://book.example.com"),
        send=checked_send(sender, StaticResolver(), allowed_hosts("127.0.0.1")),
        clock=SystemClock(),
        log=quiet,
    )


def _worker_process(url: str, schema: str | None, orders: Any, results: Any) -> None:
    """One worker process: ``run_once`` on each ``go``, until ``stop``."""
    db = Database.from_url(url, schema=schema)
    try:
        with WebhookSender() as sender:
            worker = _worker(db, sender)
            results.put("ready")
            while orders.get() == "go":
                results.put(worker.run_once().delivered)
    finally:
        db.dispose()


class Workers:
    """``WORKERS`` worker processes over one database, started and waiting."""

    def __init__(self, db: Database) -> None:
        context = multiprocessing.get_context("spawn")
        self.results = context.Queue()
        self.orders = [context.Queue() for _ in range(WORKERS)]
        url = db.engine.url.render_as_string(hide_password=False)
        self.processes = [
            context.Process(target=_worker_process, args=(url, db.schema, orders, self.results))
            for orders in self.orders
        ]
        for process in self.processes:
            process.start()
        assert [self.results.get(timeout=120) for _ in self.processes] == ["ready"] * WORKERS

    def deliver(self) -> int:
        """Every due delivery, by all the workers at once; how many were delivered."""
        for orders in self.orders:
            orders.put("go")
        return sum(self.results.get(timeout=300) for _ in self.orders)

    def stop(self) -> None:
        for orders in self.orders:
            orders.put("stop")
        for process in self.processes:
            process.join(timeout=30)
            if process.is_alive():
                process.terminate()
                process.join()
            process.close()
        for queue in (self.results, *self.orders):
            queue.close()
            queue.join_thread()


def test_bench_webhook_deliveries(benchmark, database: Database, receiver: Receiver):
    path = f"/{database.dialect}"
    company_id = _company_and_endpoint(database, receiver.url(path))
    count = EVENTS if benchmark.enabled else SMOKE_EVENTS
    sent: set[str] = set()

    def fill() -> tuple[tuple[()], dict[str, object]]:
        sent.update(_fill_outbox(database, company_id, count))
        return (), {}

    def deliver_all() -> None:
        with WebhookSender() as sender:
            dispatched = _worker(database, sender).dispatch()
        assert dispatched.deliveries == count
        assert workers.deliver() == count

    rounds = ROUNDS if benchmark.enabled else 1
    workers = Workers(database)
    try:
        benchmark.pedantic(deliver_all, setup=fill, rounds=rounds, iterations=1)
    finally:
        workers.stop()
    got = [seen.webhook_id for seen in receiver.on(path)]
    assert sorted(got) == sorted(sent)  # every event once
    if benchmark.enabled and benchmark.stats is not None:
        _rates[database.dialect] = count / benchmark.stats.stats.median
