"""The webhook sender against a real HTTP receiver on loopback: outcomes by status,
redirects not followed, ``Retry-After``, timeouts, the overall deadline against trickling
receivers, a capped answer, and the connection made to the checked address (the ``Host``
and TLS server name still the URL's)."""

from __future__ import annotations

import gc
import json
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
import trustme
from attrs import frozen
from standardwebhooks import Webhook

from adapters.webhooks import (
    AttemptResult,
    Outcome,
    StaticResolver,
    WebhookSender,
    retry_after_seconds,
)
from booking_core.webhooks import CheckedUrl, allowed_hosts, check_url, headers, new_secret

HOST = "hooks.example.test"
RESOLVER = StaticResolver({HOST: "127.0.0.1"})
ALLOW = allowed_hosts(HOST)
BODY = json.dumps({"id": "evt_1", "type": "webhook.test", "data": {}}).encode()
SLOW_SECONDS = 1.5
TRICKLE_GAP = 0.3
"""Seconds between two bytes of a trickling receiver: well within any read timeout here."""


@frozen
class Seen:
    """One request as the receiver got it."""

    path: str
    headers: dict[str, str]
    body: bytes


class Receiver(ThreadingHTTPServer):
    """A loopback HTTP(S) server on a free port answering by path, recording every request
    (and over TLS the server name each client asked for)."""

    daemon_threads = True

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.port: int = self.server_address[1]
        self.seen: list[Seen] = []
        self.server_names: list[str | None] = []
        if tls is not None:
            tls.sni_callback = self._sni
            self.socket = tls.wrap_socket(self.socket, server_side=True)
        self._thread = threading.Thread(target=self.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    def _sni(self, _conn: Any, name: str | None, _ctx: Any) -> None:
        self.server_names.append(name)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that hung up on purpose (timeouts, capped answers) is no error here."""

    def stop(self) -> None:
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: Receiver
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("content-length", "0")))
        self.server.seen.append(
            Seen(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
        )
        route = self.path.partition("?")[0]
        if route == "/slow":
            time.sleep(SLOW_SECONDS)
            self._answer(200)
        elif route == "/endless":
            self._endless()
        elif route == "/trickle-head":
            self._trickle(b"HTTP/1.1 200 OK\r\nx-padding: ", b"a")
        elif route == "/trickle-body":
            head = b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n"
            self.wfile.write(head)
            self._trickle(b"", b"x")
        else:
            self._answer(*ROUTES[route](self.server))

    def _answer(self, status: int, extra: dict[str, str] | None = None) -> None:
        self.send_response(status)
        for name, value in (extra or {}).items():
            self.send_header(name, value)
        self.send_header("content-length", "0")
        self.end_headers()

    def _endless(self) -> None:
        """A 200 whose body never ends (until the client hangs up, or 10 s)."""
        self.send_response(200)
        self.send_header("transfer-encoding", "chunked")
        self.end_headers()
        chunk = b"x" * 16_384
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            self.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.wfile.flush()

    def _trickle(self, start: bytes, byte: bytes) -> None:
        """``start`` then ``byte`` forever, one byte every ``TRICKLE_GAP`` (until the client
        hangs up, or 30 s)."""
        deadline = time.monotonic() + 30
        for one in iter(start):
            self._send_slowly(bytes([one]))
        while time.monotonic() < deadline:
            self._send_slowly(byte)

    def _send_slowly(self, one: bytes) -> None:
        self.wfile.write(one)
        self.wfile.flush()
        time.sleep(TRICKLE_GAP)


ROUTES: dict[str, Any] = {
    "/ok": lambda r: (204,),
    "/accepted": lambda r: (202,),
    "/fail": lambda r: (500,),
    "/gone": lambda r: (410,),
    "/redirect": lambda r: (302, {"location": f"http://127.0.0.1:{r.port}/target"}),
    "/target": lambda r: (200,),
    "/busy": lambda r: (429, {"retry-after": "120"}),
    "/busy-until": lambda r: (
        503,
        {"retry-after": format_datetime(datetime.now(UTC) + timedelta(seconds=90), usegmt=True)},
    ),
}


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    yield server
    server.stop()


@pytest.fixture
def sender() -> Iterator[WebhookSender]:
    with WebhookSender(connect_timeout=2, read_timeout=2) as sending:
        yield sending


def checked(receiver: Receiver, path: str, scheme: str = "http") -> CheckedUrl:
    return check_url(f"{scheme}://{HOST}:{receiver.port}{path}", RESOLVER, ALLOW)


def signed(secret: str) -> dict[str, str]:
    return headers([secret], "evt_1", int(time.time()), BODY)


def send(sender: WebhookSender, receiver: Receiver, path: str) -> AttemptResult:
    return sender.deliver(checked(receiver, path), signed(new_secret()), BODY)


def test_2xx_is_delivered_to_the_checked_address_with_the_urls_host(
    sender: WebhookSender, receiver: Receiver
) -> None:
    """``hooks.example.test`` is in no DNS: the request can only have gone to the address
    the resolver port gave."""
    secret = new_secret()
    result = sender.deliver(checked(receiver, "/ok?team=7"), signed(secret), BODY)
    assert result.outcome is Outcome.DELIVERED
    assert (result.status_code, result.error, result.retry_after) == (204, None, None)
    assert result.duration_ms >= 0
    [seen] = receiver.seen
    assert seen.path == "/ok?team=7"
    assert seen.headers["host"] == f"{HOST}:{receiver.port}"
    assert seen.headers["content-type"] == "application/json"
    assert seen.headers["user-agent"].startswith("booking-webhooks/")
    assert Webhook(secret).verify(seen.body, seen.headers) == json.loads(BODY)


def test_any_2xx_counts_as_delivered(sender: WebhookSender, receiver: Receiver) -> None:
    assert send(sender, receiver, "/accepted").outcome is Outcome.DELIVERED


def test_500_is_a_failure_with_its_status(sender: WebhookSender, receiver: Receiver) -> None:
    result = send(sender, receiver, "/fail")
    assert (result.outcome, result.status_code) == (Outcome.FAILED, 500)
    assert result.error == "HTTP 500 Internal Server Error"
    assert result.retry_after is None


def test_410_means_gone(sender: WebhookSender, receiver: Receiver) -> None:
    result = send(sender, receiver, "/gone")
    assert (result.outcome, result.status_code) == (Outcome.GONE, 410)


def test_a_redirect_is_a_failure_and_is_not_followed(
    sender: WebhookSender, receiver: Receiver
) -> None:
    result = send(sender, receiver, "/redirect")
    assert (result.outcome, result.status_code) == (Outcome.FAILED, 302)
    assert result.error is not None
    assert "redirects are not followed" in result.error
    assert [seen.path for seen in receiver.seen] == ["/redirect"]


def test_429_gives_its_retry_after_in_seconds(sender: WebhookSender, receiver: Receiver) -> None:
    result = send(sender, receiver, "/busy")
    assert (result.outcome, result.status_code, result.retry_after) == (Outcome.FAILED, 429, 120)


def test_503_gives_a_retry_after_date_as_seconds_from_now(
    sender: WebhookSender, receiver: Receiver
) -> None:
    result = send(sender, receiver, "/busy-until")
    assert (result.outcome, result.status_code) == (Outcome.FAILED, 503)
    assert result.retry_after is not None
    assert 85 <= result.retry_after <= 91


def test_a_receiver_slower_than_the_read_timeout_is_a_failure(receiver: Receiver) -> None:
    started = time.monotonic()
    with WebhookSender(connect_timeout=2, read_timeout=0.3) as sender:
        result = send(sender, receiver, "/slow")
    assert time.monotonic() - started < SLOW_SECONDS
    assert (result.outcome, result.status_code) == (Outcome.FAILED, None)
    assert result.error == "no answer within 0.3 s"
    assert 250 <= result.duration_ms < SLOW_SECONDS * 1000
    assert len(receiver.seen) == 1


def test_only_a_small_part_of_the_answer_is_read(sender: WebhookSender, receiver: Receiver) -> None:
    started = time.monotonic()
    result = send(sender, receiver, "/endless")
    assert (result.outcome, result.status_code) == (Outcome.DELIVERED, 200)
    assert time.monotonic() - started < 5


def trickled(
    receiver: Receiver, path: str, scheme: str = "http", verify: ssl.SSLContext | bool = True
) -> tuple[AttemptResult, float]:
    """One attempt with a 1.5 s deadline (and 1 s for each wait, more than the receiver's
    gap between bytes); the result and the seconds it took."""
    started = time.monotonic()
    with WebhookSender(
        connect_timeout=2, read_timeout=1, total_timeout=1.5, verify=verify
    ) as sender:
        result = sender.deliver(checked(receiver, path, scheme), signed(new_secret()), BODY)
    gc.collect()  # a socket left open would warn now, and warnings fail the test
    return result, time.monotonic() - started


def test_a_receiver_trickling_its_status_line_fails_at_the_deadline(receiver: Receiver) -> None:
    result, took = trickled(receiver, "/trickle-head")
    assert took < 10  # without the deadline, never
    assert (result.outcome, result.status_code) == (Outcome.FAILED, None)
    assert result.error == "no complete answer within 1.5 s"
    assert 1400 <= result.duration_ms < 10_000
    assert len(receiver.seen) == 1


def test_a_200_whose_body_trickles_past_the_deadline_is_delivered(receiver: Receiver) -> None:
    """The status is what counts: the deadline cuts off the rest of the body, as the cap on
    its size would."""
    result, took = trickled(receiver, "/trickle-body")
    assert took < 10
    assert (result.outcome, result.status_code, result.error) == (Outcome.DELIVERED, 200, None)
    assert 1400 <= result.duration_ms < 10_000


def test_a_fast_receiver_is_unaffected_and_no_deadline_thread_is_left(
    receiver: Receiver,
) -> None:
    """Each attempt's timer is armed for 25 s; one left running would still be there.
    (Timers are counted, not all threads: other tests' threads may end meanwhile.)"""

    def timers() -> int:
        return sum(isinstance(t, threading.Timer) for t in threading.enumerate())

    before = timers()
    with WebhookSender(connect_timeout=2, read_timeout=2) as sender:
        results = [send(sender, receiver, "/ok") for _ in range(5)]
    assert [r.outcome for r in results] == [Outcome.DELIVERED] * 5
    assert all(r.duration_ms < 5_000 for r in results)
    assert timers() == before


def test_no_further_address_is_tried_once_the_deadline_has_passed(receiver: Receiver) -> None:
    """127.0.0.2 takes connections it never completes (its queue is full); the connect
    timeout (5 s) would move on to 127.0.0.1 afterwards, the 1 s deadline ends it first."""
    with socket.socket() as stuck:
        stuck.bind(("127.0.0.2", receiver.port))
        stuck.listen(0)
        queued = [socket.socket() for _ in range(3)]
        for queue in queued:
            queue.setblocking(False)
            queue.connect_ex(("127.0.0.2", receiver.port))
        two = StaticResolver({HOST: ["127.0.0.2", "127.0.0.1"]})
        url = check_url(f"http://{HOST}:{receiver.port}/ok", two, ALLOW)
        try:
            with WebhookSender(connect_timeout=5, total_timeout=1) as sender:
                result = sender.deliver(url, signed(new_secret()), BODY)
        finally:
            for queue in queued:
                queue.close()
    assert (result.outcome, result.error) == (Outcome.FAILED, "no complete answer within 1 s")
    assert 900 <= result.duration_ms < 10_000
    assert receiver.seen == []


def test_no_listener_is_a_failure_without_status(sender: WebhookSender) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = check_url(f"http://{HOST}:{port}/", RESOLVER, ALLOW)
    result = sender.deliver(url, signed(new_secret()), BODY)
    assert (result.outcome, result.status_code) == (Outcome.FAILED, None)
    assert result.error is not None
    assert result.error.startswith("could not connect to 127.0.0.1")


def test_a_second_address_is_tried_when_the_first_refuses(
    sender: WebhookSender, receiver: Receiver
) -> None:
    two = StaticResolver({HOST: ["127.0.0.2", "127.0.0.1"]})
    url = check_url(f"http://{HOST}:{receiver.port}/ok", two, ALLOW)
    assert sender.deliver(url, signed(new_secret()), BODY).outcome is Outcome.DELIVERED
    assert len(receiver.seen) == 1


def test_check_and_deliver_checks_again_and_sends_nothing_when_refused(
    sender: WebhookSender, receiver: Receiver
) -> None:
    url = f"http://{HOST}:{receiver.port}/ok"
    sent = sender.check_and_deliver(url, RESOLVER, ALLOW, signed(new_secret()), BODY)
    assert sent.outcome is Outcome.DELIVERED

    rebound = StaticResolver({HOST: "10.0.0.5"})
    https_url = f"https://{HOST}:{receiver.port}/ok"
    refused = sender.check_and_deliver(https_url, rebound, (), signed(new_secret()), BODY)
    assert (refused.outcome, refused.status_code) == (Outcome.FAILED, None)
    assert refused.error == (
        f"{HOST} resolves to 10.0.0.5, a private address; "
        "webhook URLs must be reachable on the public internet."
    )
    assert len(receiver.seen) == 1


@pytest.fixture(scope="module")
def authority() -> trustme.CA:
    return trustme.CA()


def tls_receiver(authority: trustme.CA, name: str) -> Receiver:
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert(name).configure_cert(context)
    return Receiver(tls=context)


def trusting(authority: trustme.CA) -> ssl.SSLContext:
    context = ssl.create_default_context()
    authority.configure_trust(context)
    return context


def test_https_verifies_the_certificate_against_the_urls_host(authority: trustme.CA) -> None:
    """The connection goes to 127.0.0.1, yet the certificate (issued for the host name
    alone) verifies: the host name was the TLS server name."""
    server = tls_receiver(authority, HOST)
    try:
        with WebhookSender(connect_timeout=2, read_timeout=2, verify=trusting(authority)) as s:
            result = s.deliver(checked(server, "/ok", "https"), signed(new_secret()), BODY)
        assert (result.outcome, result.status_code) == (Outcome.DELIVERED, 204)
        assert server.server_names == [HOST]
        assert server.seen[0].headers["host"] == f"{HOST}:{server.port}"
    finally:
        server.stop()


def test_a_receiver_trickling_its_status_line_over_tls_fails_at_the_deadline(
    authority: trustme.CA,
) -> None:
    server = tls_receiver(authority, HOST)
    try:
        result, took = trickled(server, "/trickle-head", "https", trusting(authority))
        assert took < 10
        assert (result.outcome, result.status_code) == (Outcome.FAILED, None)
        assert result.error == "no complete answer within 1.5 s"
        assert 1400 <= result.duration_ms < 10_000
        assert server.server_names == [HOST]
    finally:
        server.stop()


def test_https_refuses_a_certificate_for_another_name(authority: trustme.CA) -> None:
    server = tls_receiver(authority, "elsewhere.example.test")
    try:
        with WebhookSender(connect_timeout=2, read_timeout=2, verify=trusting(authority)) as s:
            result = s.deliver(checked(server, "/ok", "https"), signed(new_secret()), BODY)
        assert (result.outcome, result.status_code) == (Outcome.FAILED, None)
        assert result.error is not None
        assert "certificate" in result.error.lower()
        assert server.seen == []
    finally:
        server.stop()


def test_request_goes_to_the_ip_literal_with_host_and_server_name() -> None:
    requests: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return httpx.Response(200)

    url = check_url(
        "https://hooks.example.com/in?x=1",
        StaticResolver({"hooks.example.com": "2606:4700:4700::1111"}),
        (),
    )
    given = {**signed(new_secret()), "Host": "evil.example.com", "user-agent": "custom/1"}
    with WebhookSender(transport=httpx.MockTransport(answer)) as sender:
        assert sender.deliver(url, given, BODY).outcome is Outcome.DELIVERED
    [request] = requests
    assert (request.url.scheme, request.url.host, request.url.port) == (
        "https",
        "2606:4700:4700::1111",
        None,  # 443, the scheme's default
    )
    assert request.url.raw_path == b"/in?x=1"
    assert request.headers.get_list("host") == ["hooks.example.com"]
    assert request.headers["user-agent"] == "custom/1"
    assert request.extensions["sni_hostname"] == "hooks.example.com"
    assert request.content == BODY


@pytest.mark.parametrize(
    ("value", "seconds"),
    [
        ("120", 120),
        (" 0 ", 0),
        ("Sun, 01 Mar 2026 12:01:30 GMT", 90),
        ("Sun, 01 Mar 2026 11:00:00 GMT", 0),
        ("soon", None),
        ("-5", None),
        (None, None),
    ],
)
def test_retry_after_reads_seconds_or_an_http_date(value: str | None, seconds: int | None) -> None:
    now = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
    assert retry_after_seconds(value, now) == seconds
