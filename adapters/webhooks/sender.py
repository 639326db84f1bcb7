"""``WebhookSender``: one delivery attempt of a signed webhook over HTTP (httpx).

``deliver`` POSTs the body to a ``CheckedUrl`` and says what came of it in an
``AttemptResult``; retrying, logging and disabling endpoints are the caller's (the worker's).

- It connects to an address ``check_url`` checked, never to the answer of a second DNS
  lookup (no DNS rebinding): the request goes to the IP literal, carries the URL's
  ``Host`` header, and over https passes the real host name as the TLS server name
  (httpcore's ``sni_hostname``), so the certificate is still verified against that name.
  When the host has several addresses, a failed connection tries the next one.
- Timeouts: ``DEFAULT_CONNECT_TIMEOUT`` (5 s) to connect (the TLS handshake included) and
  ``DEFAULT_READ_TIMEOUT`` (15 s) for each wait on the receiver (reading the answer, and
  writing the request) bound each wait; ``DEFAULT_TOTAL_TIMEOUT`` (25 s) bounds the whole
  attempt: connecting (every address; none is tried once it has passed), sending, and
  reading the status, headers and capped body. So a receiver trickling its answer a byte
  at a time cannot hold the worker. Connecting waits at most until the deadline; past it,
  a ``threading.Timer`` shuts down the connection's socket (found through httpcore's
  ``trace`` extension), which ends the read or write blocked on it. An answer whose status
  and headers arrived in time counts even if its body is cut off by the deadline.
- Redirects are not followed (a 3xx is a failure); no proxy or ``.netrc`` from the
  environment is used; no connection is reused from one delivery to the next (two hosts on
  one address must not share a TLS connection verified for one of them).
- Of the answer only the status and, on 429 and 503, ``Retry-After`` (seconds or an HTTP
  date) count; at most ``MAX_RESPONSE_BYTES`` of the body are read, then it is dropped.
- Outcomes: 2xx is ``delivered``, 410 is ``gone`` (the endpoint should be disabled),
  anything else, a timeout (the deadline included) or a refused connection is
  ``failed``. ``error`` is one short line for the delivery log; it never holds the
  request's headers or body.
"""

from __future__ import annotations

import contextlib
import math
import socket
import ssl
import threading
import time
from collections.abc import Callable, Collection, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from enum import StrEnum
from types import TracebackType
from typing import Any, Self

import httpx
from attrs import frozen

from booking_core.errors import ValidationFailed
from booking_core.ports import Resolver
from booking_core.webhooks import CheckedUrl, check_url

DEFAULT_CONNECT_TIMEOUT = 5.0
"""Seconds to open the connection, TLS handshake included."""
DEFAULT_READ_TIMEOUT = 15.0
"""Seconds the receiver may take to answer (each wait for its bytes), or to take the body."""
DEFAULT_TOTAL_TIMEOUT = 25.0
"""Seconds one attempt may take in all: connecting (every address), sending, and reading
the status, headers and capped body."""
MAX_RESPONSE_BYTES = 1024
"""How much of the receiver's answer is read before it is dropped."""
MAX_ERROR_LENGTH = 200
USER_AGENT = "booking-webhooks/1"
RETRY_AFTER_STATUSES = frozenset({429, 503})
_DROPPED_HEADERS = frozenset({"host", "content-length", "connection", "transfer-encoding"})


class Outcome(StrEnum):
    """What one attempt came to."""

    DELIVERED = "delivered"
    """The receiver answered 2xx."""
    FAILED = "failed"
    """Any other answer, no answer in time, or no connection: try again later."""
    GONE = "gone"
    """The receiver answered 410: it wants no more deliveries (disable the endpoint)."""


@frozen(kw_only=True)
class AttemptResult:
    """One attempt's result, as the delivery log keeps it."""

    outcome: Outcome
    status_code: int | None = None
    """The receiver's HTTP status; None when it gave none (timeout, no connection)."""
    duration_ms: int = 0
    """From the first connection try to the end of the (capped) answer."""
    error: str | None = None
    """Why it was not delivered, in one short line; None when delivered."""
    retry_after: int | None = None
    """Seconds the receiver asked to wait (``Retry-After`` on a 429 or 503), or None."""


class WebhookSender:
    """Sends one webhook attempt at a time; see the module. Close it (or use ``with``)."""

    def __init__(
        self,
        *,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        read_timeout: float = DEFAULT_READ_TIMEOUT,
        total_timeout: float = DEFAULT_TOTAL_TIMEOUT,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        verify: ssl.SSLContext | bool = True,
        transport: httpx.BaseTransport | None = None,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        """``verify`` is the TLS trust (httpx's default, the ``certifi`` authorities; an
        ``ssl.SSLContext`` for a test's own authority); ``transport`` replaces the network
        (tests); ``now`` reads a ``Retry-After`` given as a date."""
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.total_timeout = total_timeout
        self.max_response_bytes = max_response_bytes
        self._now = now
        self._client = httpx.Client(
            timeout=httpx.Timeout(read_timeout, connect=connect_timeout),
            follow_redirects=False,
            trust_env=False,
            verify=verify,
            limits=httpx.Limits(max_keepalive_connections=0),
            transport=transport,
        )

    def close(self) -> None:
        """Close the HTTP client."""
        self._client.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def check_and_deliver(
        self,
        url: str,
        resolver: Resolver,
        allow_hosts: Collection[str],
        headers: Mapping[str, str],
        body: bytes,
    ) -> AttemptResult:
        """Check ``url`` again (``check_url``: what its host resolves to now), then
        ``deliver``; a refused URL is a ``failed`` attempt whose error is the refusal."""
        try:
            checked = check_url(url, resolver, allow_hosts)
        except ValidationFailed as refused:
            return AttemptResult(outcome=Outcome.FAILED, error=refused.field_errors["url"])
        return self.deliver(checked, headers, body)

    def deliver(
        self, checked: CheckedUrl, headers: Mapping[str, str], body: bytes
    ) -> AttemptResult:
        """POST ``body`` with ``headers`` (``booking_core.webhooks.headers``) to one of
        ``checked.addresses``, and say how it went."""
        started = time.monotonic()
        sent = {k: v for k, v in headers.items() if k.lower() not in _DROPPED_HEADERS}
        sent["host"] = checked.host_header
        if not any(k.lower() == "user-agent" for k in sent):
            sent["user-agent"] = USER_AGENT
        with _Deadline(started + self.total_timeout) as deadline:
            extensions: dict[str, Any] = {"trace": deadline.trace}
            if checked.scheme == "https":
                extensions["sni_hostname"] = checked.host
            too_late = f"no complete answer within {self.total_timeout:g} s"
            error = "the host has no address to connect to"
            for address in checked.addresses:
                left = deadline.left()
                if left <= 0:
                    return self._failed(started, too_late)
                connect = min(self.connect_timeout, left)
                request = self._client.build_request(
                    "POST",
                    checked.url_for(address),
                    headers=sent,
                    content=body,
                    timeout=httpx.Timeout(self.read_timeout, connect=connect),
                    extensions=extensions,
                )
                try:
                    response = self._client.send(request, stream=True)
                except httpx.ConnectTimeout:
                    if connect < self.connect_timeout:  # cut short by the deadline
                        return self._failed(started, too_late)
                    error = f"could not connect to {address} within {self.connect_timeout:g} s"
                    continue
                except httpx.ConnectError as exc:
                    error = f"could not connect to {address}: {_text(exc)}"
                    continue
                except httpx.HTTPError as exc:
                    if deadline.passed():
                        return self._failed(started, too_late)
                    return self._failed(started, _transfer_error(exc, self.read_timeout))
                try:
                    self._read_some(response)
                except (httpx.HTTPError, httpx.StreamError):
                    pass  # the status is what counts; the rest of the answer is dropped anyway
                finally:
                    response.close()
                return self._answered(started, response)
            if deadline.passed():
                return self._failed(started, too_late)
            return self._failed(started, error)

    def _read_some(self, response: httpx.Response) -> None:
        read = 0
        for chunk in response.iter_raw():
            read += len(chunk)
            if read >= self.max_response_bytes:
                return

    def _answered(self, started: float, response: httpx.Response) -> AttemptResult:
        status = response.status_code
        retry_after = None
        if status in RETRY_AFTER_STATUSES:
            retry_after = retry_after_seconds(response.headers.get("retry-after"), self._now())
        if 200 <= status < 300:
            outcome, error = Outcome.DELIVERED, None
        elif status == 410:
            outcome, error = Outcome.GONE, "HTTP 410 Gone: the receiver wants no more deliveries"
        elif 300 <= status < 400:
            outcome = Outcome.FAILED
            error = f"HTTP {status} redirect: redirects are not followed; register the final URL"
        else:
            outcome = Outcome.FAILED
            error = f"HTTP {status} {httpx.codes.get_reason_phrase(status)}".rstrip()
        return AttemptResult(
            outcome=outcome,
            status_code=status,
            duration_ms=_elapsed_ms(started),
            error=error,
            retry_after=retry_after,
        )

    def _failed(self, started: float, error: str) -> AttemptResult:
        return AttemptResult(outcome=Outcome.FAILED, duration_ms=_elapsed_ms(started), error=error)


class _Deadline:
    """One attempt's overall deadline (a ``time.monotonic`` instant). Used as the request's
    httpcore ``trace`` extension, it learns the socket of each connection made; a timer
    shuts that socket down at the deadline, so whatever read or write is blocked on it
    returns at once and httpx raises. Leaving the ``with`` stops the timer thread."""

    _WATCHED = frozenset({"connection.connect_tcp.complete", "connection.start_tls.complete"})
    _RELEASED = "http11.response_closed.started"

    def __init__(self, at: float) -> None:
        self.at = at
        self._fired = False
        self._socket: socket.socket | None = None
        self._lock = threading.Lock()
        self._timer = threading.Timer(max(0.0, at - time.monotonic()), self._fire)
        self._timer.name = "webhook-deadline"
        self._timer.daemon = True

    def __enter__(self) -> Self:
        self._timer.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._timer.cancel()
        self._timer.join()
        with self._lock:
            self._socket = None

    def left(self) -> float:
        """Seconds until the deadline (0 or less once it has passed)."""
        return self.at - time.monotonic()

    def passed(self) -> bool:
        """Whether the deadline has passed (the timer fired, or the clock says so)."""
        return self._fired or self.left() <= 0

    def trace(self, event: str, info: dict[str, Any]) -> None:
        """httpcore's ``trace`` callback: keep the socket of the connection in use."""
        if event in self._WATCHED:
            # After start_tls the plain socket is detached (its file descriptor moved into
            # the TLS socket), so the TLS socket replaces it.
            self._watch(info["return_value"].get_extra_info("socket"))
        elif event == self._RELEASED:
            self._watch(None)  # about to be closed: never touch it again

    def _watch(self, sock: socket.socket | None) -> None:
        with self._lock:
            self._socket = sock
            if self._fired and sock is not None:
                _shut_down(sock)

    def _fire(self) -> None:
        with self._lock:
            self._fired = True
            if self._socket is not None:
                _shut_down(self._socket)


def _shut_down(sock: socket.socket) -> None:
    # The plain socket's shutdown even for a TLS socket: ``SSLSocket.shutdown`` also drops
    # its TLS state under the feet of the thread reading through it. A socket already
    # closed (or detached) raises OSError, and is no longer in use anyway.
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)


def retry_after_seconds(value: str | None, now: datetime) -> int | None:
    """A ``Retry-After`` header as whole seconds from ``now`` (it holds seconds or an HTTP
    date; a date already past is 0); None when absent or unreadable."""
    if value is None:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return int(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322
        when = when.replace(tzinfo=UTC)
    return max(0, math.ceil((when - now).total_seconds()))


def _transfer_error(exc: httpx.HTTPError, read_timeout: float) -> str:
    if isinstance(exc, httpx.ReadTimeout):
        return f"no answer within {read_timeout:g} s"
    if isinstance(exc, httpx.WriteTimeout):
        return f"the receiver did not take the request within {read_timeout:g} s"
    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the receiver broke HTTP: {_text(exc)}"
    return f"the request failed: {_text(exc)}"


def _text(exc: Exception) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    if len(text) > MAX_ERROR_LENGTH:
        return text[: MAX_ERROR_LENGTH - 1] + "…"
    return text


def _elapsed_ms(started: float) -> int:
    return round((time.monotonic() - started) * 1000)
