"""Pagination cursors: a position's sequence number goes into the signed cursor and comes
back, and a cursor made before positions had one still reads as it did."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
from datetime import UTC, datetime

import pytest

from adapters.http.cursors import CursorCodec
from booking_core.errors import ValidationFailed
from booking_core.paging import Position

SECRET = b"a cursor secret of this test only"
AT = datetime(2026, 11, 23, 9, 30, 0, 123456, tzinfo=UTC)


def _signed(fields: dict[str, object]) -> str:
    """A cursor signed as the codec signs, around any payload."""
    payload = json.dumps(fields, separators=(",", ":")).encode()
    signature = hmac.new(SECRET, payload, hashlib.sha256).digest()[:16]
    return ".".join(
        base64.urlsafe_b64encode(part).rstrip(b"=").decode() for part in (payload, signature)
    )


def test_a_position_comes_back_from_its_cursor_with_its_sequence_or_without():
    codec = CursorCodec(SECRET)
    for position in (Position(AT, "cus_1", 7411), Position(AT, "cus_1"), Position(AT, "c", 0)):
        assert codec.decode(codec.encode(position, "scope"), "scope") == position


def test_a_cursor_made_before_positions_had_a_sequence_still_reads():
    old = _signed({"t": AT.isoformat(), "i": "cus_1", "s": "scope"})
    assert CursorCodec(SECRET).decode(old, "scope") == Position(AT, "cus_1")


@pytest.mark.parametrize("seq", ["7411", 1.5, True, [1]])
def test_a_sequence_that_is_not_a_whole_number_is_not_a_cursor(seq: object):
    bad = _signed({"t": AT.isoformat(), "i": "cus_1", "q": seq, "s": "scope"})
    with pytest.raises(ValidationFailed):
        CursorCodec(SECRET).decode(bad, "scope")
