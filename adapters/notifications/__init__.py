"""Email: the Jinja2 composer (templates per message kind, per company when overridden),
the SMTP mailer (``BOOKING_SMTP_URL``), the log mailer (the default without it) and a
memory mailer for tests. See docs/notifications.md."""

from adapters.notifications.composer import JinjaComposer
from adapters.notifications.log import LogMailer
from adapters.notifications.memory import MemoryMailer
from adapters.notifications.smtp import SmtpMailer, SmtpSettings, parse_smtp_url

__all__ = [
    "JinjaComposer",
    "LogMailer",
    "MemoryMailer",
    "SmtpMailer",
    "SmtpSettings",
    "parse_smtp_url",
]
