"""``booking worker`` as a person runs it, on a real SQLite file and a loopback receiver:
``--once`` delivers what is due and says what it did; the loop delivers events recorded
while it runs, logs each attempt without secrets or bodies, carries on after a step that
failed, and stops cleanly on SIGTERM and Ctrl-C (SIGINT)."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import attrs
import pytest
import structlog

from adapters.webhooks import WebhookSender
from booking_core.events import EventType, event
from booking_core.ids import new_id
from booking_core.services import companies as company_cases
from booking_core.webhook_endpoints import Secret, WebhookEndpoint
from booking_core.webhooks import new_secret
from entrypoints.bootstrap import bootstrap
from entrypoints.cli import Cli
from entrypoints.settings import Settings
from entrypoints.worker import worker_for
from tests import factories as f
from tests.webhook_receiver import Receiver, Script

BIN = Path(sys.executable).parent


class Shop:
    """A migrated SQLite file with one company and an endpoint on the receiver."""

    def __init__(self, path: Path, receiver: Receiver) -> None:
        self.url = f"sqlite:///{path}"
        self.settings = Settings(
            database_url=self.url,
            redis_url=None,
            base_url="https://book.example.com",
            webhook_allow_hosts=frozenset({"127.0.0.1"}),
        )
        container = bootstrap(self.settings)
        try:
            container.database.migrate()
            self.company = company_cases.create_company(
                company_cases.CreateCompany(slug="acme", name="Acme"),
                uow=container.uow(),
                clock=container.clock,
            )
            self.secret = new_secret()
            with container.uow() as uow:
                uow.webhooks.add(
                    WebhookEndpoint(
                        id=new_id("whk"),
                        company_id=self.company.id,
                        url=receiver.url("/hooks?token=t0ps3cret"),
                        events=("*",),
                        secrets=(Secret(value=self.secret),),
                        created_at=container.clock.now(),
                    )
                )
                uow.commit()
        finally:
            container.close()

    def record(self, count: int) -> list[str]:
        """``count`` customer.created events in the outbox; their ids."""
        container = bootstrap(self.settings)
        try:
            made = [
                event(
                    EventType.CUSTOMER_CREATED,
                    f.customer(self.company.id),
                    company_id=self.company.id,
                    at=datetime.now(UTC),
                )
                for _ in range(count)
            ]
            with container.uow() as uow:
                for one in made:
                    uow.outbox.add(one)
                uow.commit()
        finally:
            container.close()
        return [one.id for one in made]

    def run(self, *argv: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        cli = Cli(lambda: bootstrap(self.settings), out=out, err=err, configure_logs=lambda: None)
        status = cli.run(list(argv))
        return status, out.getvalue(), err.getvalue()

    def env(self) -> dict[str, str]:
        return {
            **os.environ,
            "BOOKING_DATABASE_URL": self.url,
            "BOOKING_WEBHOOK_ALLOW_HOSTS": "127.0.0.1",
        }


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def shop(tmp_path: Path, receiver: Receiver) -> Shop:
    return Shop(tmp_path / "worker.sqlite3", receiver)


def wait_for(condition, seconds: float = 30) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + seconds
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.05)


def test_once_delivers_everything_due_and_says_what_it_did(shop, receiver):
    sent = shop.record(3)
    status, out, err = shop.run("worker", "--once")
    assert (status, err) == (0, "")
    assert out == (
        "booking: 3 events dispatched, 3 deliveries queued; 3 attempts: 3 delivered,"
        " 0 failed; 0 given up unsent, 0 endpoints disabled; 0 quotes expired;"
        " 0 emails queued, 0 sent, 0 failed (0 given up)\n"
    )
    assert sorted(seen.webhook_id for seen in receiver.seen) == sorted(sent)
    assert shop.run("worker", "--once", "--json") == (
        0,
        '{"events": 0, "deliveries": 0, "attempts": 0, "delivered": 0, "failed": 0,'
        ' "dropped": 0, "disabled": 0, "expiredQuotes": 0, "messages": 0,'
        ' "mailAttempts": 0, "mailsSent": 0, "mailsFailed": 0, "mailsGivenUp": 0}\n',
        "",
    )


def test_once_counts_a_failed_attempt_and_leaves_its_retry_for_later(shop, receiver):
    receiver.scripts["/hooks?token=t0ps3cret"] = Script(lambda n: 500)
    shop.record(1)
    status, out, _ = shop.run("worker", "--once", "--json")
    assert status == 0
    assert json.loads(out)["failed"] == 1
    assert json.loads(shop.run("worker", "--once", "--json")[1])["attempts"] == 0  # not due


def test_json_without_once_is_a_usage_error(shop):
    status, out, err = shop.run("worker", "--json")
    assert (status, out) == (2, "")
    assert err == "booking: --json goes with --once\n"


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_the_loop_delivers_new_events_logs_them_and_stops_cleanly(shop, receiver, stop):
    worker = subprocess.Popen(
        [str(BIN / "booking"), "worker"],
        env=shop.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert worker.stderr is not None
        first = worker.stderr.readline()
        assert first.startswith("booking: worker delivering webhooks"), first
        sent = shop.record(2)  # while it runs: found on its next poll
        wait_for(lambda: len(receiver.seen) == 2)
        worker.send_signal(stop)
        assert worker.wait(timeout=30) == 0
        rest = worker.stderr.read()
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()
        if worker.stderr is not None:
            worker.stderr.close()
    assert sorted(seen.webhook_id for seen in receiver.seen) == sorted(sent)
    assert rest.endswith("booking: worker stopped\n")
    logged = [json.loads(line) for line in rest.splitlines() if line.startswith("{")]
    attempts = [line for line in logged if line["event"] == "webhook.attempt"]
    assert sorted(line["event_id"] for line in attempts) == sorted(sent)
    assert {line["status_code"] for line in attempts} == {204}
    assert any(line["event"] == "webhook_allow_hosts_set" for line in logged)
    assert shop.secret not in rest
    assert "t0ps3cret" not in rest  # no URL (a query may hold a token), no body
    assert shop.company.id in rest


def test_a_failing_step_is_logged_and_the_loop_carries_on(shop, receiver):
    """A step that raises (here the database, once) is a ``worker.error`` line; the next
    step delivers the event."""
    sent = shop.record(1)
    failures = iter([RuntimeError("database went away")])
    container = bootstrap(shop.settings)

    def flaky_uow():  # type: ignore[no-untyped-def]
        failure = next(failures, None)
        if failure is not None:
            raise failure
        return container.uow()

    stop = threading.Event()
    try:
        with WebhookSender() as sender:
            worker = attrs.evolve(worker_for(container, sender), uow=flaky_uow, poll_interval=0.05)
            with structlog.testing.capture_logs() as logs:
                loop = threading.Thread(target=worker.run, args=(stop,))
                loop.start()
                wait_for(lambda: len(receiver.seen) == 1)
                stop.set()
                loop.join(timeout=30)
    finally:
        stop.set()
        container.close()
    assert [seen.webhook_id for seen in receiver.seen] == sent
    errors = [line for line in logs if line["event"] == "worker.error"]
    assert len(errors) == 1
    assert errors[0]["log_level"] == "error"


def test_each_attempt_is_logged_when_it_is_made_not_when_its_endpoint_s_batch_ends(shop, receiver):
    """A slow receiver holds its endpoint's later deliveries back; the operator still
    sees each attempt's line at once (the lines used to wait for the whole batch)."""
    shop.record(2)
    container = bootstrap(shop.settings)
    second_sent, go_on = threading.Event(), threading.Event()
    stop = threading.Event()
    try:
        with WebhookSender() as sender:
            worker = worker_for(container, sender)
            send = worker.send
            calls: list[str] = []

            def slow_second(url, signed, body):  # type: ignore[no-untyped-def]
                calls.append(url)
                if len(calls) == 2:
                    second_sent.set()
                    assert go_on.wait(30)
                return send(url, signed, body)

            worker = attrs.evolve(worker, send=slow_second, poll_interval=0.05)
            with structlog.testing.capture_logs() as logs:
                loop = threading.Thread(target=worker.run, args=(stop,))
                loop.start()
                try:
                    assert second_sent.wait(30)
                    attempts = [line for line in logs if line["event"] == "webhook.attempt"]
                    assert len(attempts) == 1  # the first, while the second is under way
                    assert attempts[0]["status_code"] == 204
                finally:
                    go_on.set()
                wait_for(lambda: len(receiver.seen) == 2)
                stop.set()
                loop.join(timeout=30)
    finally:
        go_on.set()
        stop.set()
        container.close()
    assert len([line for line in logs if line["event"] == "webhook.attempt"]) == 2
