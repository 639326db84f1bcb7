"""A mailer that keeps what it was given, for tests."""

from __future__ import annotations

from booking_core.notifications import MailRejected, Message


class MemoryMailer:
    """The ``Mailer`` port in memory: ``sent`` holds ``(message, sender)`` in order;
    ``failures`` queued up are raised by the next sends, one each."""

    def __init__(self) -> None:
        self.sent: list[tuple[Message, str]] = []
        self.failures: list[MailRejected] = []

    def send(self, message: Message, sender: str) -> None:
        if self.failures:
            raise self.failures.pop(0)
        self.sent.append((message, sender))
