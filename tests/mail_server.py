"""A real SMTP server on loopback for the email tests (aiosmtpd in a thread).

``MailServer().start()`` listens on a free port of 127.0.0.1; ``url`` is the
``BOOKING_SMTP_URL`` that reaches it. Every email it accepts is kept, parsed, in
``received`` (and by recipient with ``to(address)``); ``fail_next(n)`` makes it answer
the next ``n`` emails' data with ``451`` (a transient refusal), ``refuse(address)``
answers ``550`` to that recipient (a permanent one), and ``hold()`` keeps the answer to
each email's data back (the email is already in ``received``) until ``release()``: a
sender killed meanwhile never learns that the email arrived.
"""

from __future__ import annotations

import asyncio
import email
import socket
import threading
import time
from email.message import EmailMessage
from email.policy import default
from typing import Any

from aiosmtpd.controller import Controller


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class _Handler:
    def __init__(self, server: MailServer) -> None:
        self.server = server

    async def handle_RCPT(
        self, server: Any, session: Any, envelope: Any, address: str, options: list[str]
    ) -> str:
        if address.lower() in self.server.refused:
            return "550 5.1.1 No such mailbox here"
        envelope.rcpt_tos.append(address)
        return "250 OK"

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
        with self.server.lock:
            if self.server.failures > 0:
                self.server.failures -= 1
                return "451 4.3.0 Try again later"
            parsed = email.message_from_bytes(envelope.content, policy=default)
            assert isinstance(parsed, EmailMessage)
            self.server.received.append(parsed)
            self.server.envelopes.append((envelope.mail_from, list(envelope.rcpt_tos)))
            self.server.mail_options.append(list(envelope.mail_options))
        while self.server.held.is_set():
            await asyncio.sleep(0.02)
        return "250 OK"


class MailServer:
    """See the module."""

    def __init__(self, *, utf8: bool = False) -> None:
        """``utf8``: the server offers SMTPUTF8 (RFC 6531)."""
        self.port = _free_port()
        self.received: list[EmailMessage] = []
        self.envelopes: list[tuple[str, list[str]]] = []
        self.mail_options: list[list[str]] = []
        """Each accepted email's ``MAIL FROM`` parameters (``BODY=8BITMIME``, ...)."""
        self.failures = 0
        self.refused: set[str] = set()
        self.held = threading.Event()
        self.lock = threading.Lock()
        self._controller = Controller(
            _Handler(self), hostname="127.0.0.1", port=self.port, enable_SMTPUTF8=utf8
        )

    @property
    def url(self) -> str:
        return f"smtp://127.0.0.1:{self.port}"

    def start(self) -> MailServer:
        self._controller.start()
        return self

    def stop(self) -> None:
        self.release()
        self._controller.stop()

    def hold(self) -> None:
        """Keep back the answer to each email's data until ``release()``."""
        self.held.set()

    def release(self) -> None:
        self.held.clear()

    def fail_next(self, count: int) -> None:
        """Answer the data of the next ``count`` emails with 451."""
        with self.lock:
            self.failures = count

    def refuse(self, address: str) -> None:
        """Answer 550 to this recipient from now on."""
        self.refused.add(address.lower())

    def to(self, address: str) -> list[EmailMessage]:
        """The emails accepted for ``address``, in the order they came."""
        with self.lock:
            return [m for m in self.received if m["To"].addresses[0].addr_spec == address]

    def wait_for(self, address: str, count: int = 1, seconds: float = 10) -> list[EmailMessage]:
        """The emails for ``address`` once there are ``count`` (or fail after ``seconds``)."""
        deadline = time.monotonic() + seconds
        while len(found := self.to(address)) < count:
            assert time.monotonic() < deadline, f"{len(found)} emails for {address}, not {count}"
            time.sleep(0.05)
        return found
