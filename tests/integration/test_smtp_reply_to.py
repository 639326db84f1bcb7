"""A Reply-To that is not ASCII (a customer's address, on the office's email) reaches the
reader as an address it can reply to: in UTF-8 where the server offers SMTPUTF8, else
left out (an encoded word in an address is no address, RFC 2047 section 5)."""

from __future__ import annotations

import pytest

from adapters.notifications import SmtpMailer, parse_smtp_url
from booking_core.notifications import Message, MessageKind
from tests import factories
from tests.mail_server import MailServer


def office_message(reply_to: str) -> Message:
    return factories.message(
        kind=MessageKind.OFFICE_CUSTOMER_CHANGE,
        to="office@example.com",
        subject="José cancelled AM-1234",
        text="José cancelled a visit.",
        html="<p>José cancelled a visit.</p>",
        reply_to=reply_to,
    )


@pytest.mark.parametrize("utf8", [True, False])
def test_a_reply_to_that_is_not_ascii_is_a_real_address_or_none(utf8: bool):
    server = MailServer(utf8=utf8).start()
    try:
        mailer = SmtpMailer(parse_smtp_url(server.url), timeout=5)
        mailer.send(office_message("josé@cust.example"), "Acme <bookings@example.com>")
        mailer.send(office_message("ada@cust.example"), "Acme <bookings@example.com>")
    finally:
        server.stop()
    first, second = server.received
    if utf8:
        assert first["Reply-To"] == "josé@cust.example"
        assert "SMTPUTF8" in server.mail_options[0]
    else:
        assert first["Reply-To"] is None  # replies go to the sender, never nowhere
    assert "José cancelled a visit." in first.get_body(("plain",)).get_content()
    assert second["Reply-To"] == "ada@cust.example"  # an ASCII one as ever
