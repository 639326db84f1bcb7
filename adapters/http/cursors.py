"""Opaque, tamper-evident pagination cursors.

A cursor carries the position of the last row of a page (its instant, id and, when
storage orders changes by a sequence number, that number), which order it belongs to
(newest first, or by change for ``updatedSince``) and a fingerprint of the filters, and
is signed with HMAC-SHA256. A cursor without a sequence (every cursor made before there
was one) reads back as a position without it. A cursor that was altered, belongs to another order or
filter set, or is not ours is ``invalid_request`` on ``cursor``.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping
from datetime import UTC, datetime

from booking_core.errors import ValidationFailed
from booking_core.paging import Position

_BAD = {"cursor": "Not a cursor from this list; pass the nextCursor of the previous page."}


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


_URLSAFE = re.compile(r"[A-Za-z0-9_-]*")


def _unb64(text: str) -> bytes:
    """The bytes ``_b64`` spells as ``text``: the urlsafe alphabet only, no padding, and
    the one spelling of those bytes (no spare bits set), else ``ValueError``. The lenient
    decoder would take ``+/``, ``=`` and other spellings of the same bytes, so an altered
    cursor would read as the page it came from."""
    if not _URLSAFE.fullmatch(text):
        raise ValueError("not unpadded urlsafe base64")
    data = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    if _b64(data) != text:
        raise ValueError("not the canonical spelling")
    return data


def _checked(secret: bytes) -> bytes:
    if len(secret) < 16:
        raise ValueError("the cursor secret must be at least 16 bytes")
    return secret


class CursorCodec:
    """Signs and checks cursors with one secret shared by every worker: ``secret``, or
    what ``secret()`` gives the first time a cursor is made or read (a secret kept in the
    database is read then, not when the app is built)."""

    def __init__(self, secret: bytes | Callable[[], bytes]) -> None:
        self._source = secret if callable(secret) else None
        self._secret = None if callable(secret) else _checked(secret)

    def _sign(self, payload: bytes) -> bytes:
        if self._secret is None:
            assert self._source is not None
            self._secret = _checked(self._source())
        return hmac.new(self._secret, payload, hashlib.sha256).digest()[:16]

    @staticmethod
    def scope_of(list_name: str, by_change: bool, filters: Mapping[str, object]) -> str:
        """A short fingerprint of what a cursor may continue: list, order and filters. An
        instant counts as the instant it is, whatever offset it was written with."""
        named = sorted(
            (name, value.astimezone(UTC) if isinstance(value, datetime) else value)
            for name, value in filters.items()
        )
        text = json.dumps([list_name, by_change, named], default=str)
        return _b64(hashlib.sha256(text.encode()).digest()[:9])

    def encode(self, position: Position, scope: str) -> str:
        """The cursor continuing after ``position`` within ``scope``."""
        fields: dict[str, object] = {"t": position.at.isoformat(), "i": position.id}
        if position.seq is not None:
            fields["q"] = position.seq
        payload = json.dumps({**fields, "s": scope}, separators=(",", ":")).encode()
        return f"{_b64(payload)}.{_b64(self._sign(payload))}"

    def decode(self, cursor: str, scope: str) -> Position:
        """The position a cursor continues after; ``ValidationFailed`` if it is not valid here."""
        try:
            body, signature = cursor.split(".")
            payload = _unb64(body)
            if not hmac.compare_digest(_unb64(signature), self._sign(payload)):
                raise ValueError("bad signature")
            data = json.loads(payload)
            if data["s"] != scope:
                raise ValueError("another list")
            at = datetime.fromisoformat(data["t"])
            seq = data.get("q")
            if at.utcoffset() is None or not isinstance(data["i"], str):
                raise ValueError("bad position")
            if seq is not None and type(seq) is not int:
                raise ValueError("bad sequence")
            return Position(at, data["i"], seq)
        except (ValueError, KeyError, TypeError, json.JSONDecodeError):
            raise ValidationFailed(_BAD) from None
