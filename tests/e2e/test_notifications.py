"""Email end to end, on SQLite and PostgreSQL, to a real SMTP server on loopback
(aiosmtpd, ``tests/mail_server.py``): a booking made over HTTP mails exactly one
confirmation; reschedule and cancel mail their notices; a reminder goes out at its time
(the worker's clock is moved by the test); a worker killed mid-send loses nothing and the
copy sent again carries the same ``Message-ID``; a transient refusal is retried on the
schedule and shows in ``GET /api/v1/messages``; a refused recipient fails at once; a
sent quote is mailed with its link, its follow-up skipped while paused and the next one
mailed after resuming.

The stack here is this module's own (a database and a server of its own): the worker
mails every unmailed event of its database, and the shared e2e stack's events belong to
other tests."""

from __future__ import annotations

import json
import os
import secrets
import signal
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import attrs
import pytest

from adapters.http.ratelimit import RateLimiter
from adapters.notifications import JinjaComposer, SmtpMailer, parse_smtp_url
from adapters.webhooks.render import EventRenderer
from booking_core.clock import FixedClock
from booking_core.notifications import RETRY_DELAYS, SEND_LEASE, Message
from booking_core.ports import Mailer
from entrypoints.bootstrap import bootstrap
from entrypoints.settings import Settings
from entrypoints.web import http_deps, web_app
from entrypoints.worker import Mail, Worker
from tests.e2e.support import (
    API,
    CrewSpec,
    LiveServer,
    Shop,
    Stack,
    at_local,
    booking_body,
    crewed_company,
    free_socket,
    idem,
    weekday_ahead,
)
from tests.mail_server import MailServer
from tests.services import required_service

MAIL_FROM = "bookings@mail.example.com"


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def mail_stack(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Stack]:
    backend = str(request.param)
    if backend == "sqlite":
        tmp: Path = tmp_path_factory.mktemp("mail")
        settings = Settings(
            database_url=f"sqlite:///{tmp / 'mail.sqlite3'}", redis_url=None, base_url="http://x"
        )
    else:
        url = required_service("BOOKING_TEST_POSTGRES_URL", "PostgreSQL")
        schema = f"mail_{os.getpid()}_{secrets.token_hex(3)}"
        settings = Settings(
            database_url=url, redis_url=None, base_url="http://x", database_schema=schema
        )
    sock = free_socket()
    host, port = sock.getsockname()[:2]
    settings = attrs.evolve(settings, base_url=f"http://{host}:{port}")
    container = bootstrap(settings)
    try:
        container.database.migrate()
        deps = http_deps(container, RateLimiter())
        server = LiveServer(sock).start(web_app(container, deps))
        try:
            yield Stack(backend, container, server, [], deps)
        finally:
            server.stop()
    finally:
        if backend == "postgres":
            container.database.drop_schema()
        container.close()


@pytest.fixture
def inbox() -> Iterator[MailServer]:
    server = MailServer().start()
    yield server
    server.stop()


@pytest.fixture
def clock() -> FixedClock:
    return FixedClock(datetime.now(UTC).replace(microsecond=0))


def worker(stack: Stack, mailer: Mailer, clock: FixedClock) -> Worker:
    """An in-process worker whose clock the test moves, mailing through ``mailer``."""

    def no_webhooks(*_: Any) -> Any:
        raise AssertionError("no webhook endpoint is registered in these tests")

    return Worker(
        uow=stack.container.uow,
        render=EventRenderer(stack.base_url),
        send=no_webhooks,
        clock=clock,
        mail=Mail(JinjaComposer(), mailer, MAIL_FROM, stack.base_url),
    )


def smtp(inbox: MailServer) -> SmtpMailer:
    return SmtpMailer(parse_smtp_url(inbox.url), timeout=5)


def shop_of(stack: Stack) -> Shop:
    shop = crewed_company(stack, (CrewSpec("Rosa Diaz", "10003", ("10001",)),), code_prefix="ML")
    company = attrs.evolve(shop.company, notify_email="office@shop.example.com")
    with stack.container.uow() as uow:
        uow.companies.save(company)
        uow.commit()
    return attrs.evolve(shop, company=company)


def book(stack: Stack, shop: Shop, days: int = 8, name: str = "Pat <b>Doe</b>") -> dict[str, Any]:
    """A booking made over HTTP ``days`` ahead at 10:00 local, for a new customer."""
    day = weekday_ahead(shop.zone, days, weekday=2)
    email = f"pat-{secrets.token_hex(4)}@example.com"
    body = booking_body(at_local(day, "10:00", shop.zone))
    body["customer"] = {"name": name, "email": email}
    with stack.client(shop.key) as client:
        made = client.post(f"{API}/bookings", json=body, headers=idem())
        assert made.status_code == 201, made.text
        booking = client.get(f"{API}/bookings/{made.json()['id']}").json()
    return {**booking, "email": email}


def messages_about(stack: Stack, shop: Shop, subject_id: str) -> list[dict[str, Any]]:
    with stack.client(shop.key) as client:
        answer = client.get(f"{API}/messages", params={"subjectId": subject_id})
    assert answer.status_code == 200, answer.text
    return list(answer.json()["data"])


def test_a_booking_made_over_http_mails_exactly_one_confirmation(mail_stack, inbox, clock):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    sending = worker(mail_stack, smtp(inbox), clock)
    done = sending.run_once()
    assert done.mails_sent >= 1
    sending.run_once()  # nothing new: the event is mailed, the message sent
    (mail,) = inbox.wait_for(booking["email"])
    assert mail["Subject"].startswith("Booked: Standard clean on ")
    assert mail["From"] == f"{shop.company.name} <{MAIL_FROM}>"
    assert mail["Reply-To"] == "office@shop.example.com"
    (listed,) = messages_about(mail_stack, shop, booking["id"])
    assert mail["Message-ID"] == f"<{listed['id']}@mail.example.com>"
    assert listed | {"createdAt": None, "sentAt": None} == {
        "id": listed["id"],
        "kind": "booking.confirmed",
        "to": booking["email"],
        "subject": mail["Subject"],
        "subjectId": booking["id"],
        "status": "sent",
        "attempts": 1,
        "nextAttemptAt": None,
        "lastError": None,
        "sentAt": None,
        "createdAt": None,
    }
    text = mail.get_body(("plain",)).get_content()
    html = mail.get_body(("html",)).get_content()
    assert booking["trackingUrl"] in text
    assert f'href="{booking["trackingUrl"]}"' in html
    portal = booking["trackingUrl"].split("/track/")[0] + "/portal"  # {base}/{slug}/portal
    assert portal in text
    assert f'href="{portal}"' in html
    assert "Hello Pat <b>Doe</b>," in text  # plain text is not HTML: shown as typed
    assert "Hello Pat &lt;b&gt;Doe&lt;/b&gt;," in html  # the HTML part escapes it
    assert "<b>Doe" not in html


def test_reschedule_and_cancel_mail_their_notices(mail_stack, inbox, clock):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    sending = worker(mail_stack, smtp(inbox), clock)
    sending.run_once()
    new_day = weekday_ahead(shop.zone, 15, weekday=3)
    with mail_stack.client(shop.key) as client:
        moved = client.post(
            f"{API}/bookings/{booking['id']}/reschedule",
            json={"startIso": at_local(new_day, "13:00", shop.zone)},
            headers=idem(),
        )
        assert moved.status_code == 200, moved.text
        clock.advance(timedelta(minutes=1))
        sending.run_once()
        cancelled = client.post(
            f"{API}/bookings/{booking['id']}/cancel", json={"reason": "Moving"}, headers=idem()
        )
        assert cancelled.status_code == 200, cancelled.text
    clock.advance(timedelta(minutes=1))
    sending.run_once()
    _, rescheduled, cancel = inbox.wait_for(booking["email"], 3)
    assert rescheduled["Subject"].startswith("Rescheduled: Standard clean is now on ")
    assert "1:00 PM" in rescheduled["Subject"]
    assert "10:00 AM EST to:" in rescheduled.get_body(("plain",)).get_content()
    assert cancel["Subject"].startswith("Cancelled: Standard clean on ")
    cancel_text = cancel.get_body(("plain",)).get_content()
    assert "Reason: Moving" in cancel_text
    # Like every booking email: the service, the address, the code and the tracking link.
    for detail in ("Service: Standard clean", "Where:   ", booking["code"], booking["trackingUrl"]):
        assert detail in cancel_text
    assert f'href="{booking["trackingUrl"]}"' in cancel.get_body(("html",)).get_content()
    kinds = [m["kind"] for m in messages_about(mail_stack, shop, booking["id"])]
    assert kinds == ["booking.cancelled", "booking.rescheduled", "booking.confirmed"]


def test_a_reminder_is_sent_at_its_time_once(mail_stack, inbox, clock):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop, days=4)
    start = datetime.fromisoformat(booking["startIso"])
    sending = worker(mail_stack, smtp(inbox), clock)
    sending.run_once()
    assert len(inbox.wait_for(booking["email"])) == 1  # the confirmation only
    clock.current = start - timedelta(hours=24, minutes=1)
    sending.run_once()
    assert len(inbox.to(booking["email"])) == 1  # not yet
    clock.current = start - timedelta(hours=23, minutes=59)
    assert sending.run_once().messages >= 1
    _, reminder = inbox.wait_for(booking["email"], 2)
    assert reminder["Subject"].startswith("Reminder: Standard clean on ")
    assert booking["trackingUrl"] in reminder.get_body(("plain",)).get_content()
    clock.current = start - timedelta(hours=2)
    sending.run_once()
    assert len(inbox.to(booking["email"])) == 2  # each visit once


class Killed(BaseException):
    """The worker process dying (SIGKILL) right after the server took the email."""


@attrs.define
class DiesAfterSending:
    inner: Mailer

    def send(self, message: Message, sender: str) -> None:
        self.inner.send(message, sender)
        raise Killed


def test_a_worker_killed_mid_send_loses_nothing_and_the_copy_is_recognisable(
    mail_stack, inbox, clock
):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    with pytest.raises(Killed):
        worker(mail_stack, DiesAfterSending(smtp(inbox)), clock).run_once()
    assert len(inbox.wait_for(booking["email"])) == 1
    (pending,) = messages_about(mail_stack, shop, booking["id"])
    assert (pending["status"], pending["attempts"]) == ("pending", 0)
    restarted = worker(mail_stack, smtp(inbox), clock)
    restarted.run_once()  # the dead worker's lease holds: nothing is sent twice meanwhile
    assert len(inbox.to(booking["email"])) == 1
    clock.advance(SEND_LEASE)
    restarted.run_once()
    first, again = inbox.wait_for(booking["email"], 2)
    assert first["Message-ID"] == again["Message-ID"] == f"<{pending['id']}@mail.example.com>"
    (sent,) = messages_about(mail_stack, shop, booking["id"])
    assert (sent["status"], sent["attempts"]) == ("sent", 1)


def test_a_transient_refusal_is_retried_on_the_schedule_and_shows(mail_stack, inbox, clock):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    inbox.fail_next(2)
    sending = worker(mail_stack, smtp(inbox), clock)
    done = sending.run_once()
    assert (done.mail_attempts, done.mails_sent) == (1, 0)
    (failed,) = messages_about(mail_stack, shop, booking["id"])
    assert failed["status"] == "pending"
    assert failed["attempts"] == 1
    assert failed["lastError"] == "The mail server answered 451 4.3.0 Try again later"
    assert datetime.fromisoformat(failed["nextAttemptAt"]) == clock.now() + RETRY_DELAYS[0]
    clock.advance(RETRY_DELAYS[0] - timedelta(seconds=1))
    assert sending.run_once().mail_attempts == 0  # not due yet
    clock.advance(timedelta(seconds=1))
    assert sending.run_once().mail_attempts == 1  # the second try, refused again
    (again,) = messages_about(mail_stack, shop, booking["id"])
    assert again["attempts"] == 2
    assert datetime.fromisoformat(again["nextAttemptAt"]) == clock.now() + RETRY_DELAYS[1]
    clock.advance(RETRY_DELAYS[1])
    sending.run_once()
    (sent,) = messages_about(mail_stack, shop, booking["id"])
    assert (sent["status"], sent["attempts"], sent["lastError"]) == ("sent", 3, None)
    assert len(inbox.wait_for(booking["email"])) == 1


def test_a_refused_recipient_fails_at_once(mail_stack, inbox, clock):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    inbox.refuse(booking["email"])
    done = worker(mail_stack, smtp(inbox), clock).run_once()
    assert done.mails_failed >= 1
    (failed,) = messages_about(mail_stack, shop, booking["id"])
    assert (failed["status"], failed["attempts"], failed["nextAttemptAt"]) == ("failed", 1, None)
    assert failed["lastError"].startswith("The mail server refused the recipient: 550")


def test_messages_need_the_customers_read_scope(mail_stack):
    shop = shop_of(mail_stack)
    key = mail_stack.issue_key(scopes={"bookings:read"}, company_id=shop.company.id).secret
    with mail_stack.client(key) as client:
        answer = client.get(f"{API}/messages")
    assert answer.status_code == 403


def test_a_quote_is_mailed_and_its_follow_up_skipped_while_paused_then_sent(
    mail_stack, inbox, clock
):
    """The quote mailed with its link; the follow-up due while paused skipped (never sent
    later); the one due after resuming mailed (``booking_core.services.follow_ups``)."""
    shop = shop_of(mail_stack)
    email = f"quinn-{secrets.token_hex(4)}@example.com"
    with mail_stack.client(shop.key) as client:

        def act(action: str) -> None:
            answer = client.post(
                f"{API}/quotes/{quote['id']}", json={"action": action}, headers=idem()
            )
            assert answer.status_code == 200, answer.text

        def follow_ups() -> list[str]:
            answer = client.get(f"{API}/quotes/{quote['id']}")
            assert answer.status_code == 200, answer.text
            return [f["status"] for f in answer.json()["followUps"]]

        made = client.post(f"{API}/customers", json={"name": "Quinn", "email": email})
        assert made.status_code == 201, made.text
        lines = [{"description": "Windows", "amountCents": 12_345}]
        body = {"customerId": made.json()["id"], "manualLines": lines, "send": True}
        created = client.post(f"{API}/quotes", json=body, headers=idem())
        assert created.status_code == 201, created.text
        quote = created.json()
        sent_at = datetime.fromisoformat(quote["sentAt"])
        clock.current = sent_at
        sending = worker(mail_stack, smtp(inbox), clock)
        sending.run_once()
        (mailed,) = inbox.wait_for(email)
        assert mailed["Subject"] == f"Your quote from {shop.company.name}"
        assert quote["publicUrl"] in mailed.get_body(("plain",)).get_content()
        assert f'href="{quote["publicUrl"]}"' in mailed.get_body(("html",)).get_content()
        act("pause")
        clock.current = sent_at + timedelta(days=2)
        sending.run_once()
        assert follow_ups() == ["skipped", "scheduled"]
        assert len(inbox.to(email)) == 1
        act("resume")
        clock.current = sent_at + timedelta(days=3)
        sending.run_once()
        assert len(inbox.to(email)) == 1  # the skipped one stays skipped
        clock.current = sent_at + timedelta(days=5)
        sending.run_once()
        _, follow_up = inbox.wait_for(email, 2)
        assert follow_up["Subject"] == f"A reminder: your quote from {shop.company.name}"
        assert quote["publicUrl"] in follow_up.get_body(("plain",)).get_content()
        assert follow_ups() == ["skipped", "sent"]
    kinds = [m["kind"] for m in messages_about(mail_stack, shop, quote["id"])]
    assert kinds == ["quote.follow_up", "quote.sent"]
    clock.current = sent_at + timedelta(days=6)
    sending.run_once()
    assert len(inbox.to(email)) == 2  # each follow-up once


# --- The `booking worker` command ---------------------------------------------------------

BIN = Path(sys.executable).parent


def command_env(stack: Stack, inbox: MailServer) -> dict[str, str]:
    settings = stack.container.settings
    env = {
        **os.environ,
        "BOOKING_DATABASE_URL": settings.database_url,
        "BOOKING_BASE_URL": stack.base_url,
        "BOOKING_SMTP_URL": inbox.url,
        "BOOKING_MAIL_FROM": MAIL_FROM,
    }
    if settings.database_schema:
        env["BOOKING_DATABASE_SCHEMA"] = settings.database_schema
    return env


def test_the_worker_command_sends_through_booking_smtp_url(mail_stack, inbox):
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    done = subprocess.run(
        [str(BIN / "booking"), "worker", "--once", "--json"],
        env=command_env(mail_stack, inbox),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["mailsSent"] >= 1
    (mail,) = inbox.wait_for(booking["email"])
    assert mail["From"] == f"{shop.company.name} <{MAIL_FROM}>"


def test_a_worker_process_killed_mid_send_loses_nothing(mail_stack, inbox):
    """SIGKILL while the server holds back its answer to the data: the worker never
    learnt that the email arrived, so the message stays pending (leased), and once the
    lease ends it is sent again with the same Message-ID."""
    shop = shop_of(mail_stack)
    booking = book(mail_stack, shop)
    inbox.hold()
    worker_process = subprocess.Popen(
        [str(BIN / "booking"), "worker"],
        env=command_env(mail_stack, inbox),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        inbox.wait_for(booking["email"], seconds=30)
    finally:
        worker_process.send_signal(signal.SIGKILL)
        worker_process.wait(timeout=30)
    inbox.release()
    (pending,) = messages_about(mail_stack, shop, booking["id"])
    assert (pending["status"], pending["attempts"]) == ("pending", 0)
    later = FixedClock(datetime.now(UTC) + SEND_LEASE + timedelta(seconds=1))
    worker(mail_stack, smtp(inbox), later).run_once()
    first, again = inbox.wait_for(booking["email"], 2)
    assert first["Message-ID"] == again["Message-ID"] == f"<{pending['id']}@mail.example.com>"
    (sent,) = messages_about(mail_stack, shop, booking["id"])
    assert (sent["status"], sent["attempts"]) == ("sent", 1)
