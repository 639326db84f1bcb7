"""Browser sessions in one signed cookie, and the CSRF token of each session.

The cookie holds ``base64url(JSON) "." base64url(HMAC-SHA256(secret, JSON))``; the JSON
carries a random session id, the user's id and the session epoch it began under (None and
0 before sign-in), the instant it was issued, whether it began with a one-time sign-in
link, and at most one message to show on the next page; a customer portal session
(``/{slug}/portal``) carries the customer's company and id instead of a user
(``new_customer_session``). Nothing in it is secret, but nothing in it can be changed
without the server's secret. A session lives 12 hours from its issue; a sign-in always
issues a new one (a new id), so a session planted before sign-in is worth nothing after
it. Signing out everywhere moves the user's epoch on, which refuses every session begun
before.

The CSRF token of a session is the HMAC of its id under the same secret (with its own
label): it changes with every new session and needs no storage.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta

import attrs
from attrs import frozen

COOKIE = "booking_session"
LIFETIME = timedelta(hours=12)
"""How long a session lasts from its issue, signed in or not."""
CLOCK_SKEW = timedelta(minutes=5)
"""How far in the future an issue instant may lie (several servers' clocks)."""
MAX_COOKIE = 4_096
FLASH_MAX = 300


@frozen
class Session:
    """One browser's session: anonymous until ``user_id`` is set by a sign-in."""

    id: str
    issued_at: datetime
    user_id: str | None = None
    epoch: int = 0
    flash: str | None = None
    customer_company_id: str | None = None
    customer_id: str | None = None
    """A customer portal session: the customer it opens the portal of, in that company
    only. Never set together with ``user_id``: staff pages see no user in it."""
    by_link: bool = False
    """True when the user signed in with a one-time link (at ``issued_at``): for a moment
    they may set a new password without the current one (``users.current_password_needed``)."""

    @property
    def link_sign_in_at(self) -> datetime | None:
        """When the user signed in with a one-time link; None for any other session."""
        return self.issued_at if self.by_link and self.user_id is not None else None

    @property
    def signed_in(self) -> bool:
        """True when the session belongs to a user."""
        return self.user_id is not None

    def customer_of(self, company_id: str) -> str | None:
        """The customer this session opens ``company_id``'s portal for, if any."""
        if self.user_id is None and self.customer_company_id == company_id:
            return self.customer_id
        return None


def new_session(
    at: datetime, user_id: str | None = None, epoch: int = 0, *, by_link: bool = False
) -> Session:
    """A session with a fresh random id (every sign-in makes one); ``by_link`` for a
    sign-in with a one-time link."""
    return Session(secrets.token_urlsafe(18), at, user_id, epoch, by_link=by_link)


def new_customer_session(at: datetime, company_id: str, customer_id: str) -> Session:
    """A fresh portal session (a new id) for a customer of ``company_id``."""
    return Session(
        secrets.token_urlsafe(18), at, customer_company_id=company_id, customer_id=customer_id
    )


def with_flash(session: Session, message: str | None) -> Session:
    """The session carrying ``message`` to the next page (None: nothing to show)."""
    return attrs.evolve(session, flash=None if message is None else message[:FLASH_MAX])


def _optional(value: object) -> str | None:
    return None if value is None else str(value)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class SessionCodec:
    """Writes and reads session cookies and derives CSRF tokens, under one secret."""

    def __init__(self, secret: bytes | Callable[[], bytes]) -> None:
        """``secret``, or what ``secret()`` gives the first time a cookie or token is made
        or read (a secret kept in the database is read then, not when the app is built)."""
        self._source = secret if callable(secret) else lambda: secret
        self._keys: tuple[bytes, bytes] | None = None
        if not callable(secret):
            self._derive()

    def _derive(self) -> tuple[bytes, bytes]:
        if self._keys is None:
            secret = self._source()
            if len(secret) < 16:
                raise ValueError("a session secret has at least 16 bytes")
            self._keys = (
                hashlib.sha256(b"booking-session:" + secret).digest(),
                hashlib.sha256(b"booking-csrf:" + secret).digest(),
            )
        return self._keys

    @property
    def _key(self) -> bytes:
        return self._derive()[0]

    @property
    def _csrf_key(self) -> bytes:
        return self._derive()[1]

    def dump(self, session: Session) -> str:
        """The cookie value of ``session``."""
        payload = {
            "sid": session.id,
            "iat": int(session.issued_at.timestamp()),
            "uid": session.user_id,
            "ep": session.epoch,
            "fl": session.flash,
        }
        if session.by_link:
            payload["lk"] = 1
        if session.customer_id is not None:
            payload["cco"] = session.customer_company_id
            payload["cus"] = session.customer_id
        body = json.dumps(payload, separators=(",", ":"), sort_keys=True).encode()
        return f"{_b64(body)}.{_b64(self._sign(body))}"

    def load(self, value: str | None, at: datetime) -> Session | None:
        """The session in a cookie value; None when missing, forged, malformed or expired."""
        if not value or len(value) > MAX_COOKIE or value.count(".") != 1:
            return None
        body_text, signature_text = value.split(".")
        try:
            body, signature = _unb64(body_text), _unb64(signature_text)
        except (binascii.Error, ValueError):
            return None
        if not hmac.compare_digest(signature, self._sign(body)):
            return None
        try:
            payload = json.loads(body)
            issued = datetime.fromtimestamp(int(payload["iat"]), tz=at.tzinfo)
            session = Session(
                id=str(payload["sid"]),
                issued_at=issued,
                user_id=None if payload["uid"] is None else str(payload["uid"]),
                epoch=int(payload["ep"]),
                flash=None if payload["fl"] is None else str(payload["fl"]),
                customer_company_id=_optional(payload.get("cco")),
                customer_id=_optional(payload.get("cus")),
                by_link=payload.get("lk") == 1,
            )
        except (ValueError, KeyError, TypeError, OverflowError):
            return None
        if not at - LIFETIME < session.issued_at <= at + CLOCK_SKEW:
            return None
        return session

    def csrf_token(self, session: Session) -> str:
        """The token every form of this session carries."""
        digest = hmac.new(self._csrf_key, session.id.encode(), hashlib.sha256).digest()
        return _b64(digest)

    def csrf_valid(self, session: Session, token: str | None) -> bool:
        """True when ``token`` is this session's CSRF token (compared in constant time)."""
        if not token:
            return False
        return hmac.compare_digest(token.encode(), self.csrf_token(session).encode())

    def _sign(self, body: bytes) -> bytes:
        return hmac.new(self._key, body, hashlib.sha256).digest()
