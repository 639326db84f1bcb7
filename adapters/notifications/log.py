"""The mailer when no SMTP server is configured: it logs what would have been sent.

The default of ``booking serve``, ``make run`` and ``booking worker`` without
``BOOKING_SMTP_URL``, so that development needs no mail server. The log line
``mail.logged`` carries the headers and the plain-text part (where a sign-in link shows);
the HTML part is left out. Not for production: nothing reaches the customer.
"""

from __future__ import annotations

from typing import Any

import structlog

from booking_core.notifications import Message


class LogMailer:
    """The ``Mailer`` port over the structured log; every message counts as sent."""

    def __init__(self, log: Any = None) -> None:
        self._log = log if log is not None else structlog.get_logger("booking.mail")

    def send(self, message: Message, sender: str) -> None:
        self._log.info(
            "mail.logged",
            message_id=message.id,
            company_id=message.company_id,
            kind=message.kind.value,
            sender=sender,
            to=message.to,
            reply_to=message.reply_to,
            subject=message.subject,
            text=message.text,
        )
