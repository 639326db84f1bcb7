"""The SMTP mailer (standard library ``smtplib``), configured by ``BOOKING_SMTP_URL``.

``smtp://[user:password@]host[:port]`` (port 25 by default), ``smtps://...`` for TLS from
the first byte (port 465), ``?starttls=1`` to upgrade a plain connection with STARTTLS
(as port 587 wants). Certificates are verified against the system's authorities.

Each email is multipart/alternative (the plain-text part, then the HTML part) with
``Message-ID: <msg_...@domain of the sender>``: the same on every try of one message, so
that a copy sent again after a worker died mid-send is recognisable as the same email.
One connection per message; the reply to the data is what counts: once the server took
it (250), a failure to say goodbye is not a failure to send.

Refusals are sorted: a 5xx answer to the recipient or to the data is permanent (the
message fails at once); anything else (4xx, a refused connection, a timeout, a login
the server refused) is retried after the next delay of ``RETRY_DELAYS``.
"""

from __future__ import annotations

import smtplib
import ssl
from email.header import decode_header, make_header
from email.headerregistry import Address
from email.message import EmailMessage
from email.policy import SMTP
from email.utils import format_datetime, parseaddr
from urllib.parse import parse_qs, unquote, urlsplit

from attrs import field, frozen

from booking_core.notifications import MailRejected, Message

POLICY = SMTP.clone(max_line_length=998)
"""CRLF lines of at most 998 characters (RFC 5322's limit): the standard library's fold
at 78 moves a long subject whole onto a continuation line, which readers show with a
leading space."""
DEFAULT_TIMEOUT = 30.0
"""Seconds to wait for the mail server at each step."""


class SmtpUrlError(ValueError):
    """``BOOKING_SMTP_URL`` is not an SMTP address this mailer understands."""


@frozen
class SmtpSettings:
    """Where and how to connect; ``password`` is never shown."""

    host: str
    port: int
    implicit_tls: bool = False
    starttls: bool = False
    username: str | None = None
    password: str | None = field(default=None, repr=False)


def parse_smtp_url(url: str) -> SmtpSettings:
    """The settings ``url`` names; ``SmtpUrlError`` saying what is wrong otherwise."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("smtp", "smtps"):
        raise SmtpUrlError("BOOKING_SMTP_URL must start with smtp:// or smtps://")
    if not parts.hostname:
        raise SmtpUrlError("BOOKING_SMTP_URL names no host (smtp://host:port)")
    try:
        port = parts.port
    except ValueError:
        raise SmtpUrlError("BOOKING_SMTP_URL has a port that is not a number") from None
    query = parse_qs(parts.query)
    unknown = set(query) - {"starttls"}
    if unknown:
        raise SmtpUrlError(f"BOOKING_SMTP_URL has an unknown option {sorted(unknown)[0]!r}")
    starttls = query.get("starttls", ["0"])[-1] in ("1", "true", "yes")
    implicit = parts.scheme == "smtps"
    if implicit and starttls:
        raise SmtpUrlError("smtps:// is TLS already; starttls=1 goes with smtp://")
    return SmtpSettings(
        host=parts.hostname,
        port=port or (465 if implicit else 25),
        implicit_tls=implicit,
        starttls=starttls,
        username=unquote(parts.username) if parts.username else None,
        password=unquote(parts.password) if parts.password else None,
    )


def email_of(message: Message, sender: str) -> EmailMessage:
    """The email as sent: headers, the plain-text part, then the HTML part. ``ValueError``
    for a header value with a line break (the message validates that already)."""
    email = EmailMessage(policy=POLICY)
    email["From"] = from_header(sender)
    email["To"] = message.to
    if message.reply_to:
        email["Reply-To"] = message.reply_to
    email["Subject"] = message.subject
    email["Date"] = format_datetime(message.created_at)
    email["Message-ID"] = message_id_header(message, sender)
    email["Auto-Submitted"] = "auto-generated"  # RFC 3834: no auto-replies, please
    email.set_content(message.text)
    email.add_alternative(message.html, subtype="html")
    return email


def from_header(sender: str) -> Address:
    """The sender (``Name <address>``, the name RFC 2047-encoded or quoted) as a header
    object: given as text, the policy decodes the name and writes it back with its
    comma, quotes or angle brackets bare, and a reader then finds another address."""
    name, address = parseaddr(sender)
    display = str(make_header(decode_header(name))) if name else ""
    return Address(display_name=display, addr_spec=address)


def message_id_header(message: Message, sender: str) -> str:
    """``<msg_...@domain>``, the domain the sender's address is at."""
    address = parseaddr(sender)[1]
    domain = address.rpartition("@")[2] or "localhost"
    return f"<{message.id}@{domain}>"


class SmtpMailer:
    """The ``Mailer`` port over SMTP; see the module."""

    def __init__(
        self,
        settings: SmtpSettings,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        tls: ssl.SSLContext | None = None,
    ) -> None:
        self.settings = settings
        self._timeout = timeout
        self._tls = tls

    def _context(self) -> ssl.SSLContext:
        return self._tls if self._tls is not None else ssl.create_default_context()

    def _connect(self) -> smtplib.SMTP:
        s = self.settings
        smtp: smtplib.SMTP
        if s.implicit_tls:
            smtp = smtplib.SMTP_SSL(s.host, s.port, timeout=self._timeout, context=self._context())
        else:
            smtp = smtplib.SMTP(s.host, s.port, timeout=self._timeout)
        try:
            if s.starttls:
                smtp.starttls(context=self._context())
            if s.username:
                smtp.login(s.username, s.password or "")
        except BaseException:
            smtp.close()
            raise
        return smtp

    def send(self, message: Message, sender: str) -> None:
        try:
            email = email_of(message, sender)
        except ValueError as error:
            raise MailRejected(True, f"Cannot be written as an email: {error}") from None
        envelope_from = parseaddr(sender)[1]
        try:
            smtp = self._connect()
        except smtplib.SMTPException as error:
            raise MailRejected(False, _reason(error)) from None
        except OSError as error:
            raise MailRejected(False, f"Cannot reach the mail server: {error}") from None
        try:
            smtp.ehlo_or_helo_if_needed()
            # The parts are 8bit UTF-8 where their text is not ASCII: say so (RFC 6152).
            # For an address that is not ASCII the library says it itself (SMTPUTF8).
            plain = envelope_from.isascii() and message.to.isascii()
            if plain and not (message.reply_to or "").isascii():
                # Only the Reply-To (a customer's address, on the office's mail) is not
                # ASCII: the library would write it as an encoded word, which no reader
                # can reply to (RFC 2047, 5). Sent in UTF-8 where the server takes it
                # (RFC 6531); else without it, replies then going to the sender.
                if smtp.has_extn("smtputf8"):
                    smtp.sendmail(
                        envelope_from,
                        [message.to],
                        email.as_bytes(policy=POLICY.clone(utf8=True)),
                        mail_options=["SMTPUTF8", "BODY=8BITMIME"],
                    )
                    return
                del email["Reply-To"]
            options = ["BODY=8BITMIME"] if plain and smtp.has_extn("8bitmime") else []
            smtp.send_message(
                email, from_addr=envelope_from, to_addrs=[message.to], mail_options=options
            )
        except smtplib.SMTPRecipientsRefused as error:
            codes = [code for code, _ in error.recipients.values()]
            raise MailRejected(all(c >= 500 for c in codes), _reason(error)) from None
        except smtplib.SMTPResponseException as error:
            permanent = error.smtp_code >= 500 and isinstance(error, smtplib.SMTPDataError)
            raise MailRejected(permanent, _reason(error)) from None
        except (smtplib.SMTPException, OSError) as error:
            raise MailRejected(False, _reason(error)) from None
        finally:
            _goodbye(smtp)


def _goodbye(smtp: smtplib.SMTP) -> None:
    try:
        smtp.quit()
    except (smtplib.SMTPException, OSError):
        smtp.close()


def _reason(error: Exception) -> str:
    """One line saying why, with the server's code and words when it answered."""
    if isinstance(error, smtplib.SMTPRecipientsRefused):
        code, words = next(iter(error.recipients.values()))
        return f"The mail server refused the recipient: {code} {_text(words)}"
    if isinstance(error, smtplib.SMTPResponseException):
        return f"The mail server answered {error.smtp_code} {_text(error.smtp_error)}"
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def _text(words: bytes | str) -> str:
    text = words.decode("utf-8", "replace") if isinstance(words, bytes) else words
    return " ".join(text.split())
